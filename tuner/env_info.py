"""Where a measurement came from: date, GPU, driver, CUDA, torch, commit, host. Written into every result and table."""
from __future__ import annotations

import datetime as _dt
import os
import platform
import subprocess
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


def git_commit(root: Path = REPO_ROOT) -> str:
    """HEAD (+dirty), or $HGEMM_COMMIT when set: a copied working tree (the GPU host's) may carry stale git metadata
    (session 5's grid results read a commit two behind the tree that ran)."""
    if os.environ.get("HGEMM_COMMIT"):
        return os.environ["HGEMM_COMMIT"]
    try:
        out = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        commit = out.stdout.strip() if out.returncode == 0 else "unknown"
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        return commit + ("+dirty" if dirty and commit != "unknown" else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def driver_version() -> str:
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            v = pynvml.nvmlSystemGetDriverVersion()
            return v.decode() if isinstance(v, bytes) else str(v)
        finally:
            pynvml.nvmlShutdown()
    except Exception:  # noqa: BLE001 - no NVML (CPU machine): report it as unknown, never fail a run on it
        return "unknown"


def host_cpu(cpuinfo: Path = Path("/proc/cpuinfo")) -> str:
    """The host CPU's model: per-call figures move with the machine, and the GPU fields alone cannot tell two
    machines apart (tuner.timing.host_probe says how far)."""
    try:
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name") and ":" in line:
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def arch_of(capability: tuple[int, int]) -> str:
    return f"sm{capability[0]}{capability[1]}"


def collect(device: int | None = None) -> dict:
    meta = {"date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"), "commit": git_commit(),
            "driver": driver_version(), "gpu": "none", "arch": "none", "cuda": "none", "torch": "none",
            "host": platform.node() or "unknown", "host_cpu": host_cpu(), "host_cpus": os.cpu_count() or 0}
    try:
        import torch
    except ImportError:
        return meta
    meta["torch"] = torch.__version__
    meta["cuda"] = torch.version.cuda or "none"
    if torch.cuda.is_available():
        dev = torch.cuda.current_device() if device is None else device
        meta["gpu"] = torch.cuda.get_device_name(dev)
        meta["arch"] = arch_of(torch.cuda.get_device_capability(dev))
    return meta
