"""tuner.file_grid: a call's grid outputs filed with the table the run measured, the card's overlay laid on it."""
from __future__ import annotations

import gzip
import io
import json
import shutil
import subprocess
import tarfile

from kernels import tuned_tables
from tuner import file_grid, gpu_overlays

H100, H200 = "NVIDIA H100 80GB HBM3", "NVIDIA H200"


def _repo(tmp_path):
    """A git repository holding the committed f32 table and the H100's overlay of it: (path, commit)."""
    repo = tmp_path / "repo"
    tables = repo / "kernels" / "tables"
    overlay = gpu_overlays.overlay_path(H100, "f32")
    (tables / overlay.parent.relative_to(tuned_tables.TABLES_DIR)).mkdir(parents=True)
    shutil.copyfile(tuned_tables.TABLES_DIR / "sm90_f32.json", tables / "sm90_f32.json")
    shutil.copyfile(overlay, tables / overlay.relative_to(tuned_tables.TABLES_DIR))
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "tables"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    # a later edit of the working tree is not what the commit's run measured
    (tables / "sm90_f32.json").write_text("{}")
    return repo, commit


def _tar(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _call_dir(tmp_path, gpu, recheck: dict[str, bytes] | None = None):
    results = json.dumps({"meta": {"gpu": gpu, "acc": "f32", "b_layout": "row"}, "shapes": []}).encode()
    evaluation = _tar({"eval_fp32/results.json": results, "eval_fp32/results.csv": b"mnk,competitor\n",
                       "summary_fp32/summary.md": b"# summary\n", "summary_fp32/speedup_by_bucket.png": b"png",
                       "summary_fp32/summary.json": b"{}", "eval_fp32.log": b"log\n", "summary_fp32.log": b"s\n"})
    call = tmp_path / "call"
    call.mkdir(parents=True)
    (call / "env.txt").write_text(f"{gpu}\n")
    (call / "rc.txt").write_text("grid row fp32 rc=0\n")
    (call / "call1.tgz").write_bytes(_tar({"grid_row_fp32/summary.txt": b"== fp32\n",
                                           "grid_row_fp32/eval.tar.gz": evaluation,
                                           "gpu_kernels.txt": b"4115 passed\n",
                                           **{f"grid_row_fp32/recheck/{k}": v for k, v in (recheck or {}).items()}}))
    return call


def test_a_grid_on_a_card_with_an_overlay_files_the_merged_table(tmp_path):
    repo, commit = _repo(tmp_path)
    dest = tmp_path / "out" / "call1"
    assert file_grid.main([str(_call_dir(tmp_path, H100)), str(dest), "--commit", commit, "--repo", str(repo)]) == 0
    grid = dest / "grid_row"
    assert sorted(p.name for p in (grid / "fp32").iterdir()) == ["results.csv.gz", "results.json.gz",
                                                                   "speedup_by_bucket.png", "summary.md"]
    assert json.loads(gzip.open(grid / "fp32" / "results.json.gz").read())["meta"]["gpu"] == H100
    measured = json.loads(gzip.open(grid / "tables" / "sm90_f32.json.gz").read())
    assert measured == gpu_overlays.merged(H100, "f32")   # the commit's table, not the edited working tree
    assert measured["meta"]["overlays"] and measured != json.loads((tuned_tables.TABLES_DIR / "sm90_f32.json").read_text())
    with tarfile.open(grid / "eval_logs.tar.gz") as tar:
        assert sorted(tar.getnames()) == ["eval_fp32.log", "summary_fp32.log"]
    assert (dest / "gpu_kernels.txt").read_text() == "4115 passed\n" and (grid / "summary.txt").read_text() == "== fp32\n"
    assert (dest / "rc.txt").is_file() and (dest / "env.txt").is_file()
    # filed again: the same files, not the summary twice
    assert file_grid.main([str(_call_dir(tmp_path / "again", H100)), str(dest), "--commit", commit,
                           "--repo", str(repo)]) == 0
    assert (grid / "summary.txt").read_text() == "== fp32\n"


def test_a_grid_on_the_tables_own_card_files_the_committed_table_byte_for_byte(tmp_path):
    repo, commit = _repo(tmp_path)
    dest = tmp_path / "out" / "call1"
    assert file_grid.main([str(_call_dir(tmp_path, H200)), str(dest), "--commit", commit, "--repo", str(repo)]) == 0
    filed = gzip.open(dest / "grid_row" / "tables" / "sm90_f32.json.gz").read()
    assert filed == (tuned_tables.TABLES_DIR / "sm90_f32.json").read_bytes()


def test_a_grids_floor_recheck_is_filed_beside_its_results_where_the_overlays_read_it(tmp_path):
    repo, commit = _repo(tmp_path)
    dest = tmp_path / "out" / "call2"
    rounds = {"round1.json": b'{"r": 1}', "round2.json": b'{"r": 2}', "summary.txt": b"2 shapes below 0.97x\n"}
    assert file_grid.main([str(_call_dir(tmp_path, H100, rounds)), str(dest), "--commit", commit,
                           "--repo", str(repo)]) == 0
    recheck = dest / "grid_row" / "fp32" / "recheck"
    assert {p.name: p.read_bytes() for p in recheck.iterdir()} == rounds
    spec = gpu_overlays.Rechecked.filed(str(dest.parent.relative_to(tmp_path)), "call2", "row", "f32")
    assert spec.folder == f"{spec.grid[0].rsplit('/', 1)[0]}/recheck"
    assert [r["r"] for r in spec.rounds(tmp_path)] == [1, 2]
    # filed again with another recheck: its rounds, not a mix of both
    assert file_grid.main([str(_call_dir(tmp_path / "again", H100, {"round1.json": b'{"r": 3}'})), str(dest),
                           "--commit", commit, "--repo", str(repo)]) == 0
    assert [p.name for p in recheck.iterdir()] == ["round1.json"]
