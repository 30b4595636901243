"""File a device call's grid outputs into benchmarks/, as every session since 23 has by hand: per grid, the results
(gzipped), the summary, the plots, the logs, and **the table the run measured** — on a card with an overlay of its own
(tuner/gpu_overlays.py) that is the committed table with the overlay laid on it, which is what `tuner.confirm` and
`tuner.gpu_overlays` must read as the run's table (a plain copy of kernels/tables would make every overlay entry look
"changed since the benchmark").

    python -m tuner.file_grid /work/.device/2 benchmarks/h200-2026-12-05-s39/call2 --commit f550313

CALL_DIR is a call's downloaded folder: env.txt, rc.txt and one tarball (scripts/device_prologue.sh `pack_out`) that
holds grid_<layout>_<fp32|fp16>/{summary.txt, eval.tar.gz, perhaps recheck/} (scripts/h200_eval.sh, s24grid.sh) and
perhaps the GPU suites' gpu_*.txt. DEST gets env.txt, rc.txt, gpu_*.txt and grid_<layout>/{summary.txt, fp32|fp16/
(results.json.gz, results.csv.gz, summary.md, plots, recheck/: a floor recheck's rounds and report, which
tuner.gpu_overlays.Rechecked reads), tables/sm90_<acc>.json.gz, eval_logs.tar.gz}. The card comes from the results'
meta; the tables from the commit the call ran (`--commit`, read with git, not from the working tree).
"""
from __future__ import annotations

import argparse
import gzip
import io
import json
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from tuner import gpu_overlays
from tuner.results import read_json

REPO = Path(__file__).resolve().parents[1]
ACC_OF = {"fp32": "f32", "fp16": "f16"}


def _gzip(data: bytes, dest: Path) -> None:
    with open(dest, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0, filename="") as out:
        out.write(data)


def _git_file(commit: str, path: str, repo: Path) -> bytes | None:
    done = subprocess.run(["git", "-C", str(repo), "show", f"{commit}:{path}"], capture_output=True)
    return done.stdout if done.returncode == 0 else None


def measured_table(gpu: str, acc: str, commit: str, repo: Path = REPO) -> bytes:
    """The table of `acc` a dispatcher on `gpu` ran at `commit`: the committed one, with that commit's overlay for the
    card laid on it if it had one."""
    with tempfile.TemporaryDirectory() as tmp:
        tables = Path(tmp)
        base = _git_file(commit, f"kernels/tables/sm90_{acc}.json", repo)
        if base is None:
            raise SystemExit(f"no kernels/tables/sm90_{acc}.json at {commit}")
        (tables / f"sm90_{acc}.json").write_bytes(base)
        overlay = gpu_overlays.overlay_path(gpu, acc, tables)
        text = _git_file(commit, f"kernels/tables/{overlay.relative_to(tables)}", repo)
        if text is None:
            return base
        overlay.parent.mkdir(parents=True)
        overlay.write_bytes(text)
        return gpu_overlays.render(gpu_overlays.merged(gpu, acc, tables)).encode()


def _layout_and_acc_dir(grid: Path) -> tuple[str, str]:
    layout, acc_dir = grid.name.removeprefix("grid_").rsplit("_", 1)
    return layout, acc_dir


def file_grid(grid: Path, dest: Path, commit: str, repo: Path = REPO) -> dict:
    """One grid_<layout>_<fp32|fp16> folder into dest/grid_<layout>/ (its summary and logs added to those of the
    layout's other accumulator, if filed before it); returns what it filed."""
    layout, acc_dir = _layout_and_acc_dir(grid)
    acc = ACC_OF[acc_dir]
    out = dest / f"grid_{layout}"
    (out / acc_dir).mkdir(parents=True, exist_ok=True)
    (out / "tables").mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(grid / "eval.tar.gz") as tar:
            tar.extractall(tmp, filter="data")
        ev = Path(tmp)
        results = ev / f"eval_{acc_dir}" / "results.json"
        meta = read_json(results)["meta"]
        _gzip(results.read_bytes(), out / acc_dir / "results.json.gz")
        _gzip((ev / f"eval_{acc_dir}" / "results.csv").read_bytes(), out / acc_dir / "results.csv.gz")
        for made in sorted((ev / f"summary_{acc_dir}").glob("*")):
            if made.suffix in (".png", ".md"):
                shutil.copyfile(made, out / acc_dir / made.name)
        logs = out / "eval_logs.tar.gz"   # one per layout: a call may grid both accumulators of it
        members = {}
        if logs.is_file():
            with tarfile.open(logs) as tar:
                members = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
        for log in (f"eval_{acc_dir}.log", f"summary_{acc_dir}.log"):
            if (ev / log).is_file():
                members[log] = (ev / log).read_bytes()
        with tarfile.open(logs, "w:gz") as tar:
            for name, data in sorted(members.items()):
                info = tarfile.TarInfo(name)
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
    _gzip(measured_table(meta["gpu"], acc, commit, repo), out / "tables" / f"sm90_{acc}.json.gz")
    if (grid / "recheck").is_dir():   # the floor recheck of this grid (s24grid.sh RECHECK=1)
        shutil.rmtree(out / acc_dir / "recheck", ignore_errors=True)
        shutil.copytree(grid / "recheck", out / acc_dir / "recheck")
    summary = (grid / "summary.txt").read_text()
    with open(out / "summary.txt", "a") as f:
        f.write(summary)
    return {"grid": str(out), "acc": acc, "gpu": meta["gpu"], "overlays": meta.get("table_overlays")}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("call_dir", type=Path, help="the call's downloaded folder (env.txt, rc.txt, one .tgz)")
    p.add_argument("dest", type=Path, help="benchmarks/<gpu>-<date>-s<N>/callN")
    p.add_argument("--commit", required=True, help="the commit the call ran (HGEMM_COMMIT)")
    p.add_argument("--repo", type=Path, default=REPO, help="the git repository of that commit (default: this one)")
    args = p.parse_args(argv)
    packs = sorted(args.call_dir.glob("*.tgz"))
    if len(packs) != 1:
        p.error(f"{args.call_dir}: expected one .tgz (pack_out), found {[x.name for x in packs]}")
    args.dest.mkdir(parents=True, exist_ok=True)
    for name in ("env.txt", "rc.txt"):
        if (args.call_dir / name).is_file():
            shutil.copyfile(args.call_dir / name, args.dest / name)
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(packs[0]) as tar:
            tar.extractall(tmp, filter="data")
        for extra in sorted(Path(tmp).glob("gpu_*.txt")):
            shutil.copyfile(extra, args.dest / extra.name)
        grids = sorted(Path(tmp).glob("grid_*_fp*"))
        for grid in grids:   # filed again: the layout's summary and logs start over, not appended twice
            for made in ("summary.txt", "eval_logs.tar.gz"):
                (args.dest / f"grid_{_layout_and_acc_dir(grid)[0]}" / made).unlink(missing_ok=True)
        for grid in grids:
            print(json.dumps(file_grid(grid, args.dest, args.commit, args.repo)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
