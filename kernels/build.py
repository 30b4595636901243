"""Build kernel variants: one generated TU per variant -> one .so, compiled in parallel by ninja, content-hash cached.

Cache key = sha256(generated source + repo headers it includes + flags + gencode + libs + CUTLASS version) plus
`nvcc --version`. Layout under the cache dir (`$HGEMM_CACHE_DIR`, default `<repo>/.cache/hgemm`):
  lib/<name>-<key>.so    the shared object (plain C ABI, cudart static)
  lib/<name>-<key>.json  its manifest (name, keys, nvcc, CUTLASS version, compile seconds, config)
  build/                 generated .cu files, nvcc logs, ninja files (not needed to run; not packed)
Only missing variants compile. `pack()`/`unpack()` move lib/ across machines as a .tar.gz or .tar.xz (objects
stripped of their static symbol tables on the way: HGEMM_PACK_STRIP=0 keeps them whole). A build of the same
source with the same nvcc release but another host compiler counts as cached when it loads here
(`foreign_build`): variant sets can be compiled where CPU time is cheap and run on the GPU host.

CLI: python -m kernels.build --set default [--jobs N] [--arch sm90,sm80] [--list] [--dry-run] [--deadline S]
                            [--pack F] [--unpack F]
"""
from __future__ import annotations

import argparse
import ctypes
import functools
import hashlib
import importlib.util
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from kernels.codegen.generate import CODEGEN_DIR, gencode_for, generate, local_headers
from kernels.config import KernelConfig

REPO = Path(__file__).resolve().parents[1]
BASE_FLAGS = ("-Xcompiler", "-fPIC", "-shared", "-O3", "-std=c++17", "--expt-relaxed-constexpr", "-DNDEBUG",
              "-cudart=static", "-Xcompiler", "-fvisibility=hidden")
NO_NVCC = "nvcc-unavailable"


class BuildError(RuntimeError):
    pass


# --- tools ---------------------------------------------------------------------------------------------------------
def cache_dir() -> Path:
    return Path(os.environ.get("HGEMM_CACHE_DIR") or REPO / ".cache" / "hgemm")


def nvcc_path() -> str | None:
    candidates = [os.environ.get("NVCC")]
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")):
        if home:
            candidates.append(os.path.join(home, "bin", "nvcc"))
    candidates += [shutil.which("nvcc"), "/usr/local/cuda/bin/nvcc"]
    return next((c for c in candidates if c and os.path.isfile(c) and os.access(c, os.X_OK)), None)


@functools.lru_cache(maxsize=None)
def nvcc_version(nvcc: str | None = None) -> str:
    """The toolchain part of the cache key: `nvcc --version` plus the host C++ compiler nvcc drives. The host compiler
    matters: an object built with a newer libstdc++ (e.g. on the H200 image) does not load on an older system."""
    nvcc = nvcc or nvcc_path()
    if not nvcc:
        return NO_NVCC
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    host = os.environ.get("NVCC_CCBIN") or shutil.which("gcc") or shutil.which("c++")
    if host:
        first = subprocess.run([host, "--version"], capture_output=True, text=True).stdout.splitlines()[:1]
        out += "\nhost compiler: " + (first[0] if first else host)
    return out


def ninja_path() -> str | None:
    try:
        import ninja  # the pip package ships the binary

        path = os.path.join(ninja.BIN_DIR, "ninja")
        if os.path.isfile(path):
            return path
    except ImportError:
        pass
    return shutil.which("ninja")


@functools.lru_cache(maxsize=None)
def _cutlass():
    """third_party/cutlass/locate.py, loaded by path (third_party is not a package)."""
    spec = importlib.util.spec_from_file_location("hgemm_cutlass_locate", REPO / "third_party" / "cutlass" / "locate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cutlass_include_dirs() -> list[Path]:
    return _cutlass().include_dirs()


def cutlass_version() -> str:
    return _cutlass().version()


# --- jobs and keys -------------------------------------------------------------------------------------------------
def _sha(*parts: str) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(p.encode())
        h.update(b"\0")
    return h.hexdigest()


@dataclass(frozen=True)
class Job:
    """One translation unit to compile into lib/<name>-<key>.so."""
    name: str
    source: str
    gencode: tuple[str, ...]
    flags: tuple[str, ...] = BASE_FLAGS
    include_dirs: tuple[str, ...] = ()
    libs: tuple[str, ...] = ()
    cutlass: str = ""  # CUTLASS version when the TU uses CUTLASS (part of the key)
    config: dict | None = None
    # Our own header dirs: headers the source includes from here are hashed into the key (CUTLASS is keyed by its
    # version, system headers by the nvcc version).
    hashed_include_dirs: tuple[str, ...] = (str(CODEGEN_DIR),)

    def source_key(self) -> str:
        """Everything that determines the object except the compiler."""
        headers = [f"{p.name}:{p.read_text()}" for p in local_headers(self.source, self.hashed_include_dirs)]
        return _sha(self.source, *headers, *self.flags, *self.gencode, *self.libs, "cutlass=" + self.cutlass)

    def key(self, nvcc_ver: str) -> str:
        return _sha(self.source_key(), nvcc_ver)[:16]


def variant_job(cfg: KernelConfig) -> Job:
    include = (str(CODEGEN_DIR), *(str(d) for d in cutlass_include_dirs()))
    return Job(cfg.name, generate(cfg), tuple(gencode_for(cfg)), include_dirs=include, cutlass=cutlass_version(),
               config=cfg.to_dict())


def _lib_dir() -> Path:
    return cache_dir() / "lib"


def _paths(job: Job, key: str) -> tuple[Path, Path]:
    stem = f"{job.name}-{key}"
    return _lib_dir() / f"{stem}.so", _lib_dir() / f"{stem}.json"


def _nvcc_release(ver: str) -> str:
    """The nvcc part of a toolchain string (without the host compiler line)."""
    return ver.split("\nhost compiler:", 1)[0]


def foreign_build(job: Job, ver: str) -> Path | None:
    """A cached build of the same source, flags and nvcc release made with another host compiler, if it loads here.

    The device code of such an object is what this machine's nvcc would produce; only the host code's compiler
    differs, and an object that dlopens here (its libstdc++/glibc needs are met) runs the same kernel. This lets a
    variant set compiled on one machine (a CI box, a workstation: CPU time is cheap) serve another (the GPU host,
    where time is scarce) with the same CUDA toolkit. The reverse direction (a newer libstdc++) fails to load and is
    skipped. HGEMM_FOREIGN_BUILDS=0 turns this off."""
    if os.environ.get("HGEMM_FOREIGN_BUILDS", "1") == "0" or ver == NO_NVCC:
        return None
    if job.config is None or job.libs:  # variants only: self-contained (CUTLASS + static cudart), no linked library
        return None                      # whose headers could differ between the machines (the cuBLAS wrapper)
    source_key, release = job.source_key(), _nvcc_release(ver)
    for manifest in sorted(_lib_dir().glob(f"{job.name}-*.json")):
        try:
            meta = json.loads(manifest.read_text())
        except (OSError, ValueError):
            continue
        so_path = manifest.with_suffix(".so")
        if (meta.get("source_key") != source_key or _nvcc_release(meta.get("nvcc", "")) != release
                or not so_path.is_file()):
            continue
        try:
            ctypes.CDLL(str(so_path))
        except OSError:
            continue
        return so_path
    return None


# --- results -------------------------------------------------------------------------------------------------------
@dataclass
class VariantBuild:
    name: str
    path: Path | None = None
    cached: bool = False
    seconds: float | None = None
    error: str | None = None
    planned: bool = False  # dry run: would compile

    @property
    def status(self) -> str:
        if self.error:
            return "timeout" if "deadline" in self.error else "FAILED"
        if self.planned:
            return "to build"
        return "cached" if self.cached else "built"


@dataclass
class BuildReport:
    variants: list[VariantBuild] = field(default_factory=list)
    wall_s: float = 0.0
    jobs: int = 1

    @property
    def ok(self) -> bool:
        return all(v.error is None for v in self.variants)

    @property
    def paths(self) -> dict[str, Path]:
        return {v.name: v.path for v in self.variants if v.path}

    @property
    def failed(self) -> list[VariantBuild]:
        return [v for v in self.variants if v.error]

    def table(self) -> str:
        width = max([len(v.name) for v in self.variants] + [7])
        lines = [f"{'variant':<{width}}  {'status':<8}  compile_s"]
        for v in self.variants:
            secs = f"{v.seconds:9.1f}" if v.seconds is not None else "        -"
            lines.append(f"{v.name:<{width}}  {v.status:<8}  {secs}")
        built = sum(1 for v in self.variants if v.status == "built")
        cached = sum(1 for v in self.variants if v.status == "cached")
        lines.append(f"total: {len(self.variants)} variants, {built} built, {cached} cached, {len(self.failed)} failed,"
                     f" wall {self.wall_s:.1f} s with {self.jobs} jobs")
        return "\n".join(lines)


# --- the build -----------------------------------------------------------------------------------------------------
def _ninja_file(jobs_to_build, nvcc: str, build_dir: Path) -> str:
    lines = [f"nvcc = {nvcc}", "rule nvcc",
             "  command = $nvcc $gencode $flags $includes -o $tmp $in $libs > $log 2>&1 && mv -f $tmp $out",
             "  description = nvcc $out", ""]
    for job, key, so_path in jobs_to_build:
        src = build_dir / f"{job.name}-{key}.cu"
        lines += [f"build {so_path}: nvcc {src}",
                  f"  gencode = {' '.join(shlex.quote(g) for g in job.gencode)}",
                  f"  flags = {' '.join(shlex.quote(f) for f in job.flags)}",
                  f"  includes = {' '.join('-I' + shlex.quote(d) for d in job.include_dirs)}",
                  f"  libs = {' '.join('-l' + shlex.quote(lib) for lib in job.libs)}",
                  f"  tmp = {so_path}.tmp{os.getpid()}",
                  f"  log = {build_dir / (job.name + '-' + key + '.log')}", ""]
    return "\n".join(lines)


def _ninja_times(log_path: Path) -> dict[str, float]:
    """Seconds per output from ninja's .ninja_log (start/end in ms)."""
    times = {}
    if log_path.is_file():
        for line in log_path.read_text().splitlines():
            parts = line.split("\t")
            if len(parts) >= 4 and parts[0].isdigit():
                times[parts[3]] = (int(parts[1]) - int(parts[0])) / 1000.0
    return times


def run_jobs(jobs: list[Job], n_jobs: int | None = None, dry_run: bool = False,
             deadline_s: float | None = None) -> BuildReport:
    """Compile the jobs whose .so is not cached yet; return one VariantBuild per job, in order. With deadline_s, the
    build stops after that many seconds: finished objects stay cached, the rest report a timeout."""
    t0 = time.perf_counter()
    n_jobs = n_jobs or os.cpu_count() or 1
    nvcc = nvcc_path()
    ver = nvcc_version(nvcc) if nvcc else NO_NVCC
    report = BuildReport(jobs=n_jobs)
    todo = []
    for job in jobs:
        key = job.key(ver)
        so_path, _ = _paths(job, key)
        result = VariantBuild(job.name)
        foreign = None if so_path.is_file() else foreign_build(job, ver)
        if so_path.is_file() or foreign is not None:
            result.path, result.cached = foreign or so_path, True
            if foreign is None and not _paths(job, key)[1].is_file():
                # ninja's atomic rename made the .so; its manifest is written when that build ends (or never, if it
                # was stopped): write it now, so a pack made meanwhile can serve other machines as a foreign build
                _write_manifest(job, key, ver, None)
        elif dry_run:
            result.planned = True
        elif not nvcc:
            result.error = "nvcc not found (set NVCC or CUDA_HOME, or unpack a prebuilt cache)"
        else:
            todo.append((job, key, so_path, result))
        report.variants.append(result)
    if todo:
        _compile(todo, nvcc, ver, n_jobs, deadline_s)
    report.wall_s = time.perf_counter() - t0
    return report


def _run_ninja(ninja: str, n_jobs: int, cwd: Path, deadline_s: float | None) -> tuple[str, bool]:
    """Run ninja in its own process group so a deadline stops it and every nvcc it started."""
    proc = subprocess.Popen([ninja, "-k", "0", "-j", str(n_jobs)], cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=deadline_s)
        return out, False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            out, _ = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
        return out, True


def _write_manifest(job: Job, key: str, nvcc_ver: str, compile_s: float | None) -> None:
    manifest = {"name": job.name, "key": key, "source_key": job.source_key(), "nvcc": nvcc_ver,
                "cutlass": job.cutlass, "gencode": list(job.gencode), "flags": list(job.flags),
                "libs": list(job.libs), "compile_s": compile_s, "built_at": time.time(), "config": job.config}
    path = _paths(job, key)[1]
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(manifest, indent=1))
    os.replace(tmp, path)  # atomic: a concurrent reader (foreign_build, pack) never sees half a manifest


def _compile(todo, nvcc: str, nvcc_ver: str, n_jobs: int, deadline_s: float | None = None) -> None:
    build_dir = cache_dir() / "build"
    build_dir.mkdir(parents=True, exist_ok=True)
    _lib_dir().mkdir(parents=True, exist_ok=True)
    for job, key, _, _ in todo:
        (build_dir / f"{job.name}-{key}.cu").write_text(job.source)
    work = build_dir / f"ninja-{os.getpid()}-{time.time_ns()}"  # private dir: concurrent builds don't share logs
    work.mkdir()
    (work / "build.ninja").write_text(_ninja_file([(j, k, p) for j, k, p, _ in todo], nvcc, build_dir))
    ninja = ninja_path()
    if ninja is None:
        raise BuildError("ninja not found: pip install ninja")
    ninja_out, timed_out = _run_ninja(ninja, n_jobs, work, deadline_s)
    times = _ninja_times(work / ".ninja_log")
    for job, key, so_path, result in todo:
        result.seconds = times.get(str(so_path))
        if so_path.is_file():
            result.path = so_path
            _write_manifest(job, key, nvcc_ver, result.seconds)
        elif timed_out:
            result.error = f"not built: the {deadline_s:.0f} s build deadline passed"
        else:
            log = build_dir / f"{job.name}-{key}.log"
            tail = log.read_text()[-4000:] if log.is_file() else ninja_out[-4000:]
            result.error = f"compile failed ({log}):\n{tail}"
    shutil.rmtree(work, ignore_errors=True)


def build(configs: list[KernelConfig], jobs: int | None = None, dry_run: bool = False,
          deadline_s: float | None = None) -> BuildReport:
    """Build (or find in the cache) every config's .so. Errors are reported per variant, never raised."""
    return run_jobs([variant_job(c) for c in configs], jobs, dry_run=dry_run, deadline_s=deadline_s)


def compile_tu(source_text: str, name: str, *, gencode: list[str], extra_flags=(), include_dirs=(),
               libs=()) -> Path:
    """Compile any TU into a cached .so with the variants' flags (the cuBLAS wrapper uses this). Raises BuildError."""
    include = (str(CODEGEN_DIR), *(str(d) for d in include_dirs))
    ours = tuple(d for d in include if Path(d).resolve().is_relative_to(REPO))
    job = Job(name, source_text, tuple(gencode), flags=BASE_FLAGS + tuple(extra_flags), include_dirs=include,
              libs=tuple(libs), hashed_include_dirs=ours)
    result = run_jobs([job], 1).variants[0]
    if result.error:
        raise BuildError(f"{name}: {result.error}")
    return result.path


def find_built(cfg: KernelConfig) -> Path | None:
    """The cached .so of cfg for the local nvcc; without nvcc, any cached build of the same source (a restored pack)."""
    job = variant_job(cfg)
    ver = nvcc_version()
    if ver != NO_NVCC:
        so_path = _paths(job, job.key(ver))[0]
        return so_path if so_path.is_file() else foreign_build(job, ver)
    source_key = job.source_key()
    for manifest in sorted(_lib_dir().glob(f"{cfg.name}-*.json")):
        meta = json.loads(manifest.read_text())
        so_path = manifest.with_suffix(".so")
        if meta.get("source_key") == source_key and so_path.is_file():
            return so_path
    return None


# --- moving the cache across machines ------------------------------------------------------------------------------
def pack(path, objects=None) -> Path:
    """Write lib/ (the .so files and manifests) to a .tar.gz, or a .tar.xz by the name; with `objects` (.so paths),
    only those and their manifests (what one build produced or found, e.g. the variants a set adds).
    Why .tar.xz: variants share most of their bytes (CUTLASS's code, the runtime), gzip's 32 KB window sees none of
    that across files and xz's 64 MiB one does — 244 variants are 59 MB as .tar.gz and 3.1 MB as .tar.xz."""
    path = Path(path)
    if objects is None:
        files = [f for f in sorted(_lib_dir().glob("*")) if f.suffix in (".so", ".json")]
    else:
        files = [f for so in sorted(set(map(Path, objects))) for f in (so, so.with_suffix(".json")) if f.is_file()]
    strip = shutil.which("strip") if os.environ.get("HGEMM_PACK_STRIP", "1") != "0" else None
    path.parent.mkdir(parents=True, exist_ok=True)  # e.g. a fresh .carry folder for the device call
    mode, options = ("w:xz", {"preset": 9}) if path.name.endswith(".tar.xz") else ("w:gz", {})
    with tarfile.open(path, mode, **options) as tar, tempfile.TemporaryDirectory() as tmp:
        for f in files:
            tar.add(_stripped(f, Path(tmp), strip) if f.suffix == ".so" else f, arcname=f"lib/{f.name}")
    return path


def _stripped(so: Path, tmp: Path, strip: str | None) -> Path:
    """A copy of `so` without its static symbol table (a third of a pack's size: what the dynamic loader and the
    ABI's exported names need is in .dynsym, which stays); `so` itself if binutils' strip is absent or fails."""
    if strip is None:
        return so
    out = tmp / so.name
    done = subprocess.run([strip, "--strip-unneeded", "-o", str(out), str(so)], capture_output=True)
    return out if done.returncode == 0 and out.is_file() else so


def unpack(path) -> list[Path]:
    """Restore a pack() archive into the cache dir; only plain lib/*.so and lib/*.json members are accepted."""
    out = []
    _lib_dir().mkdir(parents=True, exist_ok=True)
    with tarfile.open(path, "r:*") as tar:  # .tar.gz or .tar.xz
        for member in tar.getmembers():
            parts = Path(member.name).parts
            if not (member.isfile() and len(parts) == 2 and parts[0] == "lib"
                    and Path(parts[1]).suffix in (".so", ".json") and not parts[1].startswith(".")):
                continue
            data = tar.extractfile(member).read()
            target = _lib_dir() / parts[1]
            target.write_bytes(data)
            out.append(target)
    return out


# --- CLI -----------------------------------------------------------------------------------------------------------
def main(argv=None) -> int:
    from kernels import space, tuned_tables

    parser = argparse.ArgumentParser(prog="python -m kernels.build", description=__doc__.split("\n")[0])
    parser.add_argument("--set", default=None,
                        help=f"variant set(s), comma separated, built in that order (default: 'default' unless --tables"
                             f" is given): {sorted(space.VARIANT_SETS)}")
    parser.add_argument("--tables", default="", metavar="DIR[,DIR]",
                        help="the variants the tuned tables in these directories run ('committed': kernels/tables), "
                             "before those of --set: what a deployment of the tables needs, and no more")
    parser.add_argument("--deadline", type=float, default=None, help="stop compiling after this many seconds")
    parser.add_argument("--jobs", type=int, default=None, help="parallel nvcc processes (default: CPU count)")
    parser.add_argument("--arch", default="sm90,sm80",
                        help="GPU architectures to build for, comma separated (sm90: the sm90 and splitk families)")
    parser.add_argument("--exclude", default="", help="variant set(s) whose members to skip, e.g. default")
    parser.add_argument("--list", action="store_true", help="print the variant names and exit")
    parser.add_argument("--dry-run", action="store_true", help="show what is cached and what would compile")
    parser.add_argument("--pack", metavar="TAR_GZ", help="after building, write these variants' objects to this archive")
    parser.add_argument("--unpack", metavar="TAR_GZ", help="restore an archive into the cache before building")
    args = parser.parse_args(argv)

    if args.unpack:
        print(f"unpacked {len(unpack(args.unpack))} files into {_lib_dir()}")
    archs = set(args.arch.split(","))
    configs = []
    set_names = [n for n in (args.set or ("" if args.tables else "default")).split(",") if n]
    try:
        excluded = {c for name in filter(None, args.exclude.split(",")) for c in space.variant_set(name)}
        for d in filter(None, args.tables.split(",")):
            if d != "committed" and not Path(d).is_dir():
                raise ValueError(f"--tables: {d!r} is not a directory (of sm90_<acc>.json tables)")
        wanted = [c for d in filter(None, args.tables.split(","))
                  for c in tuned_tables.table_variants(None if d == "committed" else d)]
        wanted += [c for name in set_names for c in space.variant_set(name)]
    except (KeyError, OSError, ValueError) as error:  # an unknown set, a missing or bad table: say which
        parser.error(error.args[0] if isinstance(error, KeyError) and error.args else str(error))
    for c in wanted:
        if c.arch in archs and c not in configs and c not in excluded:
            configs.append(c)
    if args.list:
        for c in configs:
            print(c.name)
        return 0
    what = " + ".join([f"tables {args.tables}"] * bool(args.tables) + [f"set {','.join(set_names)}"] * bool(set_names))
    print(f"{what}: {len(configs)} variants, cache {cache_dir()}", flush=True)
    report = build(configs, jobs=args.jobs, dry_run=args.dry_run, deadline_s=args.deadline)
    print(report.table())
    for v in report.failed:
        print(f"\n--- {v.name}\n{v.error}", file=sys.stderr)
    if args.pack:  # the objects of this invocation's variants only
        print(f"packed {pack(args.pack, report.paths.values())}")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())
