"""Tuned tables (Contract 3): `kernels/tables/<arch>_<acc>.json`, written by the tuner, read by the dispatcher.

Loading validates everything up front and fails with the file, the entry index and the field, so that a bad table is
found when the service starts, not as wrong results later. A missing table is not an error: every shape then falls
back to cuBLAS (`no_tuned_kernel`).
"""
from __future__ import annotations

import json
import logging
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

TABLES_DIR = Path(__file__).resolve().parent / "tables"
# Overlays for one card (`<tables>/gpus/<gpu_slug(name)>/<arch>_<acc>.json`): the entries another GPU of the same arch
# corrects, from its own grid benchmark of the tables (tuner/gpu_overlays.py). Laid over the tables on that card only.
GPU_OVERLAYS = "gpus"
ARM_KERNELS = ("cublas", "cublaslt")  # table entries that choose a cuBLAS arm instead of a built variant
ARM_OPTIONS = {"cublas": {"kind"}, "cublaslt": {"kind", "algo_index", "algo"}}
# What identifies a cuBLASLt algorithm (cublasLtMatmulAlgoConfigAttributes_t): an lt_algo entry may carry the identity
# of the algorithm its index named where it was tuned ("algo"); the dispatcher then runs that algorithm wherever this
# process's heuristic list has it, or none (another GPU or cuBLAS ranks its list its own way). tuner/lt_identity.py.
LT_IDENTITY = ("algo_id", "tile_id", "stages_id", "splitk_num", "reduction_scheme", "cta_swizzling", "custom_option",
               "cluster_shape_id")
ARM_KINDS = {"cublas": ("gemmex", "gemmex_tn", "gemmex_nn"), "cublaslt": ("lt_heuristic", "lt_algo", "lt_implicit")}
LT_TOP_N = 32  # a cublaslt algo_index is a rank in the top-32 heuristic list (kernels.cublas.DEFAULT_TOP_N) for
#                256-byte-aligned operands: the tuner's timing assumption, matched by the dispatcher (docs/dispatch.md)
B_LAYOUTS = ("row", "col")
ACCS = ("f32", "f16")
KNOBS = ("raster", "swizzle", "splits")
META_STRINGS = ("gpu", "arch", "acc", "date", "commit", "driver", "cuda", "torch")
ENTRY_KEYS = {"m", "n", "k", "b_layout", "kernel", "config", "runtime", "us", "cublas_us", "acc", "graph"}
# An entry may run its kernel with a more precise accumulator than the table's (key "acc"): fp32 accumulation answers
# an fp16-accumulation request at least as accurately, and on Hopper it is often the faster kernel.
MORE_PRECISE = {"f16": ("f32",), "f32": ()}
# An entry may name another choice for calls captured into a CUDA graph (key "graph"): replaying a graph costs no host
# time per kernel, so the fastest kernel wins there, while an eager call also pays its launch path (the entry's own
# choice may trade kernel time for a cheaper launch: the tuner's `call` objective).
GRAPH_KEYS = {"kernel", "config", "runtime", "us", "acc"}


class TableError(ValueError):
    """A tuned table that cannot be used; the message names the file, the entry and the field."""


@dataclass(frozen=True)
class TableEntry:
    m: int
    n: int
    k: int
    b_layout: str
    kernel: str                                   # KernelConfig.name, or "cublas" / "cublaslt"
    config: Any = None                            # KernelConfig for built variants; arm options (dict) for arms
    runtime: dict = field(default_factory=dict)   # raster / swizzle / splits
    us: float | None = None
    cublas_us: float | None = None
    acc: str | None = None                        # the accumulator the kernel runs with, if not the table's
    graph: "TableEntry | None" = None             # what calls captured into a CUDA graph run, if not this

    @property
    def is_arm(self) -> bool:
        return self.kernel in ARM_KERNELS


@dataclass
class TunedTable:
    arch: str
    acc: str
    meta: dict
    entries: dict[tuple[int, int, int, str], TableEntry]
    source: str = "<dict>"
    _by_layout: dict | None = field(default=None, init=False, repr=False, compare=False)

    def lookup(self, m: int, n: int, k: int, b_layout: str) -> TableEntry | None:
        return self.entries.get((m, n, k, b_layout))

    def nearest(self, m: int, n: int, k: int, b_layout: str, max_distance: float) -> TableEntry | None:
        """The entry of the tuned shape nearest to (m, n, k) in log2 space (Euclidean; ties to the larger shape),
        if it lies within `max_distance` (1.0: a factor of 2 in one dimension). A shape inside the grid of CUDA-L2
        (powers of two) is always within 0.87 of a grid shape."""
        points = self._points().get(b_layout)
        if not points:
            return None
        here = (math.log2(m), math.log2(n), math.log2(k))
        best = min(points, key=lambda p: (sum((a - b) ** 2 for a, b in zip(p[0], here)), -sum(p[0])))
        distance = math.sqrt(sum((a - b) ** 2 for a, b in zip(best[0], here)))
        return best[1] if distance <= max_distance else None

    def _points(self) -> dict[str, list]:
        """b_layout -> [((log2 m, log2 n, log2 k), entry)], built on first use (entries are not changed after)."""
        if self._by_layout is None:
            by_layout: dict[str, list] = {}
            for (m, n, k, b_layout), entry in sorted(self.entries.items()):
                by_layout.setdefault(b_layout, []).append(((math.log2(m), math.log2(n), math.log2(k)), entry))
            self._by_layout = by_layout
        return self._by_layout

    def __len__(self) -> int:
        return len(self.entries)

    def variants(self) -> list:
        """The built variants (KernelConfigs) this table runs, eager and graph choices alike, each once, in entry
        order: what a deployment of the table must compile (`python -m kernels.build --tables DIR`)."""
        out: dict[str, Any] = {}
        for entry in self.entries.values():
            for choice in (entry, entry.graph):
                if choice is not None and not choice.is_arm:
                    out.setdefault(choice.kernel, choice.config)
        return list(out.values())

    @classmethod
    def from_dict(cls, data: Any, *, source: str = "<dict>", parse_config: Callable[[dict], Any] | None = None,
                  knobs_for: Callable[[Any], dict] | None = None) -> "TunedTable":
        """Validate and build. parse_config turns an entry's config into a KernelConfig (default
        KernelConfig.from_dict); knobs_for(cfg) gives the runtime knob values a variant honours
        (default kernels.space.runtime_knobs)."""
        if parse_config is None or knobs_for is None:
            from kernels import space
            from kernels.config import KernelConfig

            parse_config = parse_config or KernelConfig.from_dict
            knobs_for = knobs_for or space.runtime_knobs
        where = _Where(source)
        if not isinstance(data, dict):
            raise where.error("", f"must be a JSON object with 'meta' and 'entries', got {type(data).__name__}")
        if set(data) != {"meta", "entries"}:
            raise where.error("", f"top-level keys must be exactly ['entries', 'meta'], got {sorted(data)}")
        meta = _check_meta(data["meta"], where)
        if not isinstance(data["entries"], list):
            raise where.error("entries", "must be a list")
        entries: dict[tuple[int, int, int, str], TableEntry] = {}
        for i, raw in enumerate(data["entries"]):
            entry = _check_entry(raw, meta["acc"], where.at(f"entries[{i}]"), parse_config, knobs_for)
            key = (entry.m, entry.n, entry.k, entry.b_layout)
            if key in entries:
                raise where.error(f"entries[{i}]", f"duplicate shape m={key[0]} n={key[1]} k={key[2]} "
                                                   f"b_layout={key[3]}")
            entries[key] = entry
        return cls(meta["arch"], meta["acc"], meta, entries, source)


class _Where:
    def __init__(self, source: str, path: str = ""):
        self.source, self.path = source, path

    def at(self, path: str) -> "_Where":
        return _Where(self.source, path)

    def error(self, fld: str, message: str) -> TableError:
        location = ".".join(p for p in (self.path, fld) if p)
        return TableError(f"{self.source}: {location + ': ' if location else ''}{message}")


def _check_meta(meta: Any, where: _Where) -> dict:
    if not isinstance(meta, dict):
        raise where.error("meta", "must be an object")
    for key in ("arch", "acc"):
        if key not in meta:
            raise where.error("meta", f"missing required key {key!r}")
    for key in META_STRINGS:
        if key in meta and not isinstance(meta[key], str):
            raise where.error(f"meta.{key}", f"must be a string, got {meta[key]!r}")
    if meta["acc"] not in ACCS:
        raise where.error("meta.acc", f"must be one of {ACCS}, got {meta['acc']!r}")
    if not meta["arch"].startswith("sm") or not meta["arch"][2:].isdigit():
        raise where.error("meta.arch", f"must look like 'sm90', got {meta['arch']!r}")
    return meta


def _positive_int(raw: dict, key: str, where: _Where) -> int:
    value = raw.get(key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise where.error(key, f"must be a positive integer, got {value!r}")
    return value


def _optional_time(raw: dict, key: str, where: _Where) -> float | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise where.error(key, f"must be a positive finite number of microseconds, got {value!r}")
    return float(value)


def _check_entry(raw: Any, acc: str, where: _Where, parse_config, knobs_for, keys=ENTRY_KEYS) -> TableEntry:
    if not isinstance(raw, dict):
        raise where.error("", "must be an object")
    unknown = set(raw) - keys
    if unknown:
        raise where.error("", f"unknown keys {sorted(unknown)} (allowed: {sorted(ENTRY_KEYS)})")
    m, n, k = (_positive_int(raw, key, where) for key in ("m", "n", "k"))
    b_layout = raw.get("b_layout")
    if b_layout not in B_LAYOUTS:
        raise where.error("b_layout", f"must be one of {B_LAYOUTS}, got {b_layout!r}")
    kernel = raw.get("kernel")
    if not isinstance(kernel, str) or not kernel:
        raise where.error("kernel", f"must be a non-empty string, got {kernel!r}")
    run_acc = raw.get("acc", acc)
    if run_acc != acc and run_acc not in MORE_PRECISE[acc]:
        raise where.error("acc", f"an acc={acc!r} table may run {(acc, *MORE_PRECISE[acc])} accumulation, "
                                 f"got {run_acc!r}")
    runtime = raw.get("runtime", {})
    if not isinstance(runtime, dict) or set(runtime) - set(KNOBS):
        raise where.error("runtime", f"must be an object with keys among {KNOBS}, got {runtime!r}")
    for knob, value in runtime.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise where.error(f"runtime.{knob}", f"must be a non-negative integer, got {value!r}")
    if kernel in ARM_KERNELS:
        config = _check_arm_options(kernel, raw.get("config", {}), where)
        if any(runtime.values()):
            raise where.error("runtime", f"{kernel} takes no runtime knobs, got {runtime!r}")
    else:
        config = _check_variant(kernel, raw.get("config"), run_acc, b_layout, runtime, where, parse_config,
                                knobs_for)
    graph = None
    if "graph" in raw:  # the same shape, checked as an entry of its own (without a further "graph")
        if not isinstance(raw["graph"], dict):
            raise where.error("graph", f"must be an object with keys among {sorted(GRAPH_KEYS)}, got {raw['graph']!r}")
        unknown = set(raw["graph"]) - GRAPH_KEYS
        if unknown:
            raise where.error("graph", f"unknown keys {sorted(unknown)} (allowed: {sorted(GRAPH_KEYS)})")
        graph = _check_entry({"m": m, "n": n, "k": k, "b_layout": b_layout, **raw["graph"]}, acc,
                             where.at(f"{where.path}.graph"), parse_config, knobs_for, keys=ENTRY_KEYS - {"graph"})
    return TableEntry(m, n, k, b_layout, kernel, config, dict(runtime), _optional_time(raw, "us", where),
                      _optional_time(raw, "cublas_us", where), run_acc if run_acc != acc else None, graph)


def _check_arm_options(kernel: str, options: Any, where: _Where) -> dict:
    if not isinstance(options, dict) or set(options) - ARM_OPTIONS[kernel]:
        raise where.error("config", f"{kernel} options must be an object with keys among "
                                    f"{sorted(ARM_OPTIONS[kernel])}, got {options!r}")
    if "kind" in options and options["kind"] not in ARM_KINDS[kernel]:
        raise where.error("config.kind", f"must be one of {ARM_KINDS[kernel]}, got {options['kind']!r}")
    index = options.get("algo_index", 0)
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < LT_TOP_N:
        raise where.error("config.algo_index", f"must be an integer in [0, {LT_TOP_N}), got {index!r}")
    if "algo_index" in options and options.get("kind", "lt_algo") != "lt_algo":
        raise where.error("config.algo_index", f"only kind 'lt_algo' takes an algo_index, not {options['kind']!r}")
    if "algo" in options:
        algo = options["algo"]
        if "algo_index" not in options:
            raise where.error("config.algo", "an algorithm's identity goes with the algo_index it was tuned as")
        if not isinstance(algo, dict) or set(algo) != set(LT_IDENTITY) or \
                any(isinstance(v, bool) or not isinstance(v, int) for v in algo.values()):
            raise where.error("config.algo", f"must be an object of integers with keys {list(LT_IDENTITY)}, "
                                             f"got {algo!r}")
        return {**options, "algo": dict(algo)}
    return dict(options)


def _check_variant(kernel, raw_config, acc, b_layout, runtime, where, parse_config, knobs_for):
    if not isinstance(raw_config, dict):
        raise where.error("config", f"a built variant needs its KernelConfig as an object, got {raw_config!r}")
    try:
        cfg = parse_config(raw_config)
    except (TypeError, ValueError) as error:
        raise where.error("config", f"not a valid KernelConfig: {error}") from None
    if cfg.name != kernel:
        raise where.error("kernel", f"{kernel!r} does not match its config, whose name is {cfg.name!r}")
    if getattr(cfg, "acc", acc) != acc:
        raise where.error("config.acc", f"{cfg.acc!r} in an entry for acc={acc!r}")
    if getattr(cfg, "b_layout", b_layout) != b_layout:
        raise where.error("config.b_layout", f"{cfg.b_layout!r} in an entry for b_layout={b_layout!r}")
    allowed = knobs_for(cfg)
    for knob, value in runtime.items():
        if value not in allowed.get(knob, (0,)):
            raise where.error(f"runtime.{knob}", f"{value} is not honoured by {kernel} "
                                                 f"(allowed: {allowed.get(knob, (0,))})")
    return cfg


def table_path(arch: str, acc: str, directory: Path | None = None) -> Path:
    return Path(directory or TABLES_DIR) / f"{arch}_{acc}.json"


def load_table(path: Path | str, **kwargs) -> TunedTable:
    """Load and validate one table file; its meta must agree with its name (<arch>_<acc>.json)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as error:
        raise TableError(f"{path}: not valid JSON: {error}") from None
    table = TunedTable.from_dict(data, source=str(path), **kwargs)
    expected = f"{table.arch}_{table.acc}.json"
    if path.name != expected:
        raise TableError(f"{path}: meta says arch={table.arch!r} acc={table.acc!r}, so the file must be named "
                         f"{expected!r}")
    return table


def load_tables(arch: str, directory: Path | str | None = None, **kwargs) -> dict[str, TunedTable]:
    """{acc: table} for every accumulator that has a table for this arch; missing files are simply absent."""
    out = {}
    for acc in ACCS:
        path = table_path(arch, acc, directory)
        if path.is_file():
            out[acc] = load_table(path, **kwargs)
    return out


def dump_table(meta: dict, entries: list[dict], path: Path | str | None = None, **kwargs) -> dict:
    """Validate a table (the tuner's writer uses this) and optionally write it; returns the JSON object."""
    data = {"meta": dict(meta), "entries": list(entries)}
    table = TunedTable.from_dict(data, source=str(path or "<new table>"), **kwargs)
    if path is not None:
        path = Path(path)
        if path.name != f"{table.arch}_{table.acc}.json":
            raise TableError(f"{path}: must be named {table.arch}_{table.acc}.json")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=1) + "\n")
    return data


def overlay(base: dict[str, TunedTable], extra: dict[str, TunedTable]) -> dict[str, TunedTable]:
    """{acc: table} of `base` with the entries of `extra` added; for a shape both hold, `extra`'s entry wins."""
    out = dict(base)
    for acc, table in extra.items():
        under = out.get(acc)
        if under is None:
            out[acc] = table
            continue
        meta = dict(under.meta, overlays=[*under.meta.get("overlays", []), table.source])
        out[acc] = TunedTable(under.arch, acc, meta, {**under.entries, **table.entries},
                              source=f"{under.source} + {table.source}")
    return out


def extra_table_dirs() -> list[Path]:
    """The directories of $HGEMM_EXTRA_TABLES (os.pathsep-separated), in order: later ones win."""
    return [Path(d.strip()) for d in os.environ.get("HGEMM_EXTRA_TABLES", "").split(os.pathsep) if d.strip()]


def gpu_slug(name: str) -> str:
    """A GPU's name as a directory name: 'NVIDIA H100 80GB HBM3' -> 'nvidia-h100-80gb-hbm3'."""
    slug = "-".join("".join(ch if ch.isalnum() else " " for ch in name.lower()).split())
    if not slug:
        raise ValueError(f"no GPU name to make an overlay directory of: {name!r}")
    return slug


def gpu_overlay_dir(gpu: str, directory: Path | str | None = None) -> Path:
    return Path(directory or TABLES_DIR) / GPU_OVERLAYS / gpu_slug(gpu)


def table_variants(directory: Path | str | None = None, arch: str = "sm90") -> list:
    """Every built variant the tables of `directory` (default: the committed ones) and its GPU overlays run, each
    once: what serving them needs compiled (`kernels.build --tables DIR`, variant set "tables")."""
    out: list = []
    overlays = sorted(p for p in (Path(directory or TABLES_DIR) / GPU_OVERLAYS).glob("*") if p.is_dir())
    for where in (directory, *overlays):
        for table in load_tables(arch, where).values():
            out += [c for c in table.variants() if c not in out]
    return out


def load_default_tables(arch: str, gpu: str = "", **kwargs) -> dict[str, TunedTable]:
    """The committed tables of `arch`; on a `gpu` (its name, torch.cuda.get_device_name) that has an overlay of its
    own, with that overlay's entries laid over them; then overlaid with the tables in each directory of
    $HGEMM_EXTRA_TABLES (os.pathsep-separated, later ones win): tables tuned for the shapes a deployment serves
    (`python -m tuner.tune --grid <shapes> --tables-dir DIR`; docs/dispatch.md, "Tuning the shapes you serve")."""
    tables = load_tables(arch, **kwargs)
    own = load_tables(arch, gpu_overlay_dir(gpu), **kwargs) if gpu else {}
    tables = overlay(tables, own)
    # tables measured on another card still run, but their choices there are unchecked: say so once, at load
    foreign = sorted(acc for acc, table in tables.items() if gpu and acc not in own and table.meta.get("gpu") != gpu)
    if foreign:
        logging.getLogger(__name__).warning(
            "tuned tables %s were measured on %s, this is %s, which has no overlay of its own for them "
            "(tuner/gpu_overlays.py): their choices are unchecked here", ", ".join(foreign),
            "/".join(sorted({tables[acc].meta.get("gpu", "?") for acc in foreign})), gpu)
    for directory in extra_table_dirs():
        if not directory.is_dir():
            raise TableError(f"HGEMM_EXTRA_TABLES: {str(directory)!r} is not a directory")
        tables = overlay(tables, load_tables(arch, directory, **kwargs))
    return tables
