"""The device calls' plan (scripts/device_next_calls.sh) routes each card to the right run with the right settings.

A device call costs minutes of a scarce budget, so a wrong route (an H100 grid resuming from the wrong run, an H200
grid against the autotuner) is caught here: the scripts run in a copy of the tree with the GPU-side steps replaced
by stubs that log their environment, and a fake nvidia-smi names the card.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
STUBBED = ("h200_eval.sh", "h200_gpu_suites.sh", "floor_recheck.sh", "h200_ab.sh")
LOGGED = ("OUT", "STATE", "DEADLINE", "B_LAYOUT", "ACCS", "BASELINES", "RESUME_FROM", "SHAPES_fp16", "BASE", "CAND",
          "FIRST", "ACC")

pytestmark = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")


@pytest.fixture()
def tree(tmp_path):
    shutil.copytree(REPO / "scripts", tmp_path / "scripts")
    (tmp_path / "tuner/grids").mkdir(parents=True)
    shutil.copy(REPO / "tuner/grids/grid_1000.txt", tmp_path / "tuner/grids")
    log = tmp_path / "stubs.log"
    (tmp_path / "scripts/device_prologue.sh").write_text(
        'mkdir -p $OUT; : > $OUT/env.txt; : > $OUT/rc.txt\n'
        't0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }\npack_out() { echo "pack_out $1" >> ' f'{log}; }}\n')
    fields = " ".join(f"{k}=${{{k}:-}}" for k in LOGGED)
    for name in STUBBED:
        (tmp_path / "scripts" / name).write_text(f'#!/bin/sh\necho "{name} {fields}" >> {log}\n')
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, body in (("nvidia-smi", 'echo "$FAKE_GPU"'), ("python3", f'echo "python3 $*" >> {log}')):
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    return tmp_path


def plan(tree: Path, gpu: str, script: str = "scripts/device_next_calls.sh", **env: str) -> list[dict[str, str]]:
    """Run the plan on a fake `gpu`; one dict per stubbed step (its name under "step", then its settings)."""
    full = {"PATH": f"{tree / 'bin'}:{os.environ['PATH']}", "FAKE_GPU": gpu, "OUT": str(tree / "out"),
            "HOME": str(tree), **env}
    run = subprocess.run(["bash", script], cwd=tree, env=full, capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    steps = []
    for line in (tree / "stubs.log").read_text().splitlines():
        name, *fields = line.split(" ")
        if name in STUBBED or name == "pack_out":
            steps.append({"step": name, **dict(f.split("=", 1) for f in fields if "=" in f),
                          **({"call": fields[0]} if name == "pack_out" else {})})
    return steps


def newest_first_call() -> Path:
    """The first_call.sh the next session runs: that of the latest session that wrote one."""
    calls = [(re.search(r"(\d{4}-\d{2}-\d{2})-s(\d+)$", p.parent.name), p)
             for p in REPO.glob("benchmarks/*/first_call.sh")]
    return max(((m.group(1), int(m.group(2))), p) for m, p in calls if m)[1]


SESSION = {"H200_TAG": "s61", "H100_TAG": "s61h", "H100_RUNS": "row:fp32",
           "H100_RESUME_FROM": "benchmarks/x/call6/grid_row", "END": "570"}


def test_an_h100_resumes_its_grid_against_the_autotuner_and_keeps_time_for_the_recheck(tree):
    steps = plan(tree, "NVIDIA H100 80GB HBM3", **SESSION)
    grids = [s for s in steps if s["step"] == "h200_eval.sh"]
    assert [(g["B_LAYOUT"], g["ACCS"]) for g in grids] == [("row", "fp32")]
    assert grids[0]["BASELINES"] == "torch.matmul,cuBLASLt-auto-tuning-nn"
    assert grids[0]["RESUME_FROM"] == "benchmarks/x/call6/grid_row"
    assert grids[0]["STATE"] == "/tmp/s24_s61h_row"
    assert int(grids[0]["DEADLINE"]) <= 570 - 25 - 150   # RECHECK defaults on: 150 s kept for the floor recheck
    assert steps[-1] == {"step": "pack_out", "call": "call1"}


def test_an_h100_call_that_cannot_finish_its_grid_keeps_no_recheck_time(tree):
    steps = plan(tree, "NVIDIA H100 80GB HBM3", **SESSION, RECHECK="", CALL="call2")
    grid = next(s for s in steps if s["step"] == "h200_eval.sh")
    assert 570 - 25 - 150 < int(grid["DEADLINE"]) <= 570 - 25
    assert steps[-1]["call"] == "call2"


def test_an_h200_runs_the_suites_then_both_grids_against_cublas_never_resuming_the_h100_run(tree):
    steps = plan(tree, "NVIDIA H200", **SESSION)
    assert steps[0]["step"] == "h200_gpu_suites.sh"
    grids = [s for s in steps if s["step"] == "h200_eval.sh"]
    assert [(g["B_LAYOUT"], g["ACCS"], g["BASELINES"]) for g in grids] == [
        ("row", "fp32", "torch.matmul,cuBLAS-nn"), ("col", "fp16", "torch.matmul,cuBLAS-tn")]
    assert all(g["RESUME_FROM"] == "" and g["STATE"].startswith("/tmp/s24_s61_") for g in grids)


def test_a_later_h200_call_resumes_the_grids_without_the_suites(tree):
    steps = plan(tree, "NVIDIA H200", **SESSION, CALL="call2")
    assert [s["step"] for s in steps] == ["h200_eval.sh", "h200_eval.sh", "pack_out"]


def test_an_h100_first_call_with_an_ab_waiting_runs_it_on_the_merged_overlays(tree):
    (tree / "shapes").mkdir()
    (tree / "shapes/changed_f16_row.txt").write_text("64 64 64\n")
    steps = plan(tree, "NVIDIA H100 80GB HBM3", **SESSION, SHAPES="shapes/changed", OLD="s61ab/old_tables",
                 LAYOUT="row")
    assert [s["step"] for s in steps] == ["h200_ab.sh", "pack_out"]
    ab = steps[0]
    assert (ab["B_LAYOUT"], ab["ACCS"], ab["SHAPES_fp16"]) == ("row", "fp16", "shapes/changed_f16_row.txt")
    assert (ab["BASE"], ab["CAND"]) == ("/tmp/ab_base", "/tmp/ab_cand")
    merged = (tree / "stubs.log").read_text()
    assert "tuner.gpu_overlays --merged /tmp/ab_base" in merged and "--tables s61ab/old_tables" in merged


def test_an_ab_with_its_grid_named_rechecks_that_grids_floor_on_the_new_tables_after_it(tree):
    (tree / "shapes").mkdir()
    (tree / "shapes/changed_f32_row.txt").write_text("64 64 64\n")
    grid = "benchmarks/x/call2/grid_row/fp32/results.json.gz"
    steps = plan(tree, "NVIDIA H100 80GB HBM3", **SESSION, SHAPES="shapes/changed", OLD="s62ab/old_tables",
                 LAYOUT="row", FLOOR=grid, FLOOR_S="90")
    assert [s["step"] for s in steps] == ["h200_ab.sh", "floor_recheck.sh", "pack_out"]
    floor = steps[1]
    assert (floor["FIRST"], floor["B_LAYOUT"], floor["ACC"]) == (grid, "row", "fp32")
    assert floor["BASELINES"] == ""   # floor_recheck.sh reads them from the grid (the test below)
    assert floor["DEADLINE"] == "90" and floor["OUT"].endswith("/floor_row_fp32")


def test_a_floor_recheck_times_its_grids_shapes_against_the_baselines_that_grid_timed(tmp_path):
    """scripts/floor_recheck.sh itself (real python, the eval step stubbed): a grid against the autotuner has its
    below-floor shape rechecked against the autotuner, named by nobody but the grid."""
    shutil.copytree(REPO / "scripts", tmp_path / "scripts")
    log = tmp_path / "eval.log"
    (tmp_path / "scripts/h200_eval.sh").write_text(
        f'#!/bin/sh\necho "GRID=$(cat $GRID) BASELINES=$BASELINES RESUME_FROM=$RESUME_FROM" >> {log}\n')
    rec = {"competitors": {"ours": {}, "torch.matmul": {}, "cuBLASLt-auto-tuning-nn": {}}}
    grid = {"meta": {}, "shapes": [
        {**rec, "mnk": "64_64_64", "speedup": {"kernel": {"torch.matmul": 1.2, "cuBLASLt-auto-tuning-nn": 0.9}}},
        {**rec, "mnk": "128_64_64", "speedup": {"kernel": {"torch.matmul": 1.1, "cuBLASLt-auto-tuning-nn": 1.0}}}]}
    (tmp_path / "grid.json").write_text(json.dumps(grid))
    env = {"PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}", "PYTHONPATH": str(REPO),
           "OUT": str(tmp_path / "out"), "FIRST": str(tmp_path / "grid.json"), "B_LAYOUT": "row", "ACC": "fp32",
           "ROUNDS": "1", "DEADLINE": "30", "RESUME_FROM": "benchmarks/x/call1/grid_row"}   # a resumed grid's call
    run = subprocess.run(["bash", "scripts/floor_recheck.sh"], cwd=tmp_path, env=env, capture_output=True, text=True,
                         timeout=60)
    # a round seeded from the grid it rechecks would time nothing and repeat the grid's readings
    assert log.read_text() == "GRID=64_64_64 BASELINES=torch.matmul,cuBLASLt-auto-tuning-nn RESUME_FROM=\n"
    assert run.returncode == 1 and "no round finished" in (tmp_path / "out/summary.txt").read_text()


def test_the_next_sessions_first_call_resumes_only_from_a_committed_grid_and_never_on_an_h200(tree):
    first_call = newest_first_call()
    shutil.copy(first_call, tree / "first_call.sh")
    h100 = plan(tree, "NVIDIA H100 80GB HBM3", script="first_call.sh", END="570")
    grids = [s for s in h100 if s["step"] == "h200_eval.sh"]
    assert grids and all(g["BASELINES"].startswith("torch.matmul,cuBLASLt-auto-tuning-") for g in grids)
    for g in grids:   # h200_eval.sh reads <acc>/results.json(.gz) under RESUME_FROM
        acc = g["ACCS"]
        assert not g["RESUME_FROM"] or (REPO / g["RESUME_FROM"] / acc / "results.json.gz").is_file(), g
    (tree / "stubs.log").unlink()
    h200 = plan(tree, "NVIDIA H200", script="first_call.sh", END="570")
    assert h200[0]["step"] == "h200_gpu_suites.sh"
    assert all(s["RESUME_FROM"] == "" for s in h200 if s["step"] == "h200_eval.sh")
