"""`eval_one_file.sh` / `python -m tuner.eval_cli`: CUDA-L2's benchmark flags, plus a grid mode and a timing choice.

  ./eval_one_file.sh --mnk 64_4096_64 --acc_precise fp32 --warmup_seconds 5 --benchmark_seconds 10 \
      --base_dir ./results --gpu_device_id 0 --mode offline
  ./eval_one_file.sh ... --mode server --target_qps 100          # Poisson arrivals, GPU idle in between
  ./eval_one_file.sh --grid ../shared/anchors/grid_1000.txt ...  # one M_N_K per line, instead of --mnk
  --timing kernel|call|both (default both)   --device_type H200 (optional; detected, checked if given)"""
from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from tuner.competitors import BASELINES, knob_suffix, parse_knob_suffix
from tuner.shapes import parse_mnk, read_grid

ACC = {"fp32": "f32", "fp16": "f16"}


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="eval_one_file.sh", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter, allow_abbrev=False)
    # CUDA-L2's flags, same names and meaning
    p.add_argument("--mnk", type=str, help="M_N_K, e.g. 64_4096_64 (or --grid)")
    p.add_argument("--acc_precise", choices=tuple(ACC), required=True)
    p.add_argument("--warmup_seconds", type=float, required=True)
    p.add_argument("--benchmark_seconds", type=float, required=True)
    p.add_argument("--base_dir", type=str, required=True)
    p.add_argument("--gpu_device_id", type=int, required=True)
    p.add_argument("--mode", choices=("offline", "server"), required=True)
    p.add_argument("--target_qps", type=float, help="server mode: Poisson arrival rate (required there)")
    p.add_argument("--device_type", type=str, help="expected GPU (e.g. H200); detected when omitted")
    # ours
    p.add_argument("--grid", type=str, help="file of M_N_K lines (instead of --mnk)")
    p.add_argument("--timing", choices=("kernel", "call", "both"), default="both")
    p.add_argument("--b_layout", choices=("col", "row"), default="col",
                   help="B layout for our kernels: col = N×K (x @ Wᵀ, TN), row = K×N (NN)")
    p.add_argument("--ours", default="dispatcher", help="'dispatcher', 'none', or a variant name")
    p.add_argument("--tables", default=None, metavar="DIR",
                   help="ours (the dispatcher) uses the tables in DIR instead of the committed ones: with --also_tables "
                        "the two roles can be swapped between runs (per call, two dispatchers differ by ~2%% even "
                        "with identical tables)")
    p.add_argument("--also_tables", default="", metavar="NAME=DIR[,NAME=DIR]",
                   help="more dispatchers to compete as ours[NAME], each with the tables in DIR (e.g. a table tuned for "
                        "another objective), timed in the same interleaved run")
    p.add_argument("--also_dispatchers", default="",
                   metavar="NAME=nearest:DIST|NAME=predictor:PATH|NAME=fastpath:reader|attributes|off[,…]",
                   help="more dispatchers (ours' tables: the committed ones or --tables DIR) to compete as "
                        "ours[NAME]: one that borrows the choice of "
                        "the nearest tuned shape within DIST (log2) for shapes the table lacks, one with the "
                        "predictor saved at PATH (python -m tuner.predictor) as its hook, or one whose C fast path "
                        "reads the operands from the at::Tensor (reader), through Python attributes (attributes), "
                        "or is off (the Python dispatch path): the host path's cost, measured in the same run")
    p.add_argument("--also_variants", default="", metavar="NAME[@KNOBS][,NAME]",
                   help="kernel variants to compete as ours:NAME, each on the shapes it supports with this "
                        "--acc_precise and --b_layout (e.g. a pdl twin beside its base); with their default runtime "
                        "knobs, or those of NAME@r<raster>w<swizzle>s<splits> (any of them, e.g. NAME@s2: two K "
                        "splits), competing as ours:NAME@KNOBS")
    p.add_argument("--also_variants_per_shape", default=None, metavar="FILE",
                   help="more ours:NAME variants for some shapes only: lines 'M_N_K NAME[,NAME]' (e.g. python -m "
                        "tuner.twin_sweep: the row twins of the col choices where the row entries run something else)")
    p.add_argument("--baselines", default=",".join(BASELINES), help="comma list (default: all)")
    p.add_argument("--call_burst", type=int, default=1,
                   help="per-call timing: one sample = the median of this many sync-call-sync in a row (1: CUDA-L2's "
                        "single call after other competitors' work; e.g. 16: a caller in a loop, host path warm)")
    p.add_argument("--resume", action="store_true",
                   help="keep the shapes already in base_dir/results.json (same acc, layout, timings, call burst) and "
                        "benchmark only the rest: a grid run can span several device calls")
    p.add_argument("--seed", type=int, default=0)
    return p


def parse_args(argv=None) -> argparse.Namespace:
    p = build_parser()
    args = p.parse_args(argv)
    if (args.mnk is None) == (args.grid is None):
        p.error("give exactly one of --mnk or --grid")
    if args.mode == "server" and args.target_qps is None:
        p.error("--target_qps is required for server mode")
    if args.target_qps is not None and args.target_qps <= 0:
        p.error("--target_qps must be > 0")
    if args.call_burst < 1:
        p.error("--call_burst must be >= 1")
    if args.warmup_seconds < 0 or args.benchmark_seconds <= 0:
        p.error("--warmup_seconds must be >= 0 and --benchmark_seconds > 0")
    try:
        args.shapes = [parse_mnk(args.mnk)] if args.mnk else read_grid(args.grid)
    except (ValueError, OSError) as exc:
        p.error(str(exc))
    args.acc = ACC[args.acc_precise]
    args.timings = ("kernel", "call") if args.timing == "both" else (args.timing,)
    args.baseline_names = tuple(b for b in args.baselines.split(",") if b)
    unknown = set(args.baseline_names) - set(BASELINES)
    if unknown:
        p.error(f"unknown baselines {sorted(unknown)}; known: {', '.join(BASELINES)}")
    try:
        args.also_tables = parse_also_tables(args.also_tables)
        if args.tables is not None and not Path(args.tables).is_dir():
            raise ValueError(f"--tables: {args.tables!r} is not a directory")
        args.also_dispatchers = parse_also_dispatchers(args.also_dispatchers)
        args.also_variants = parse_also_variants(args.also_variants)
        args.variants_per_shape = (read_variants_per_shape(args.also_variants_per_shape)
                                   if args.also_variants_per_shape else {})
    except (ValueError, OSError) as exc:
        p.error(str(exc))
    return args


def parse_also_tables(text: str) -> dict[str, str]:
    """'kernel=/tmp/t_kernel,old=tables_s2' -> {name: directory}; names are unique and directories exist."""
    out = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, directory = item.partition("=")
        if not sep or not name or not directory:
            raise ValueError(f"--also_tables wants NAME=DIR, got {item!r}")
        if name in out:
            raise ValueError(f"--also_tables: {name!r} given twice")
        if not Path(directory).is_dir():
            raise ValueError(f"--also_tables: {directory!r} is not a directory")
        out[name] = directory
    return out


def parse_also_dispatchers(text: str) -> dict[str, tuple[str, object]]:
    """'near=nearest:1.0,model=predictor:m.json,attrs=fastpath:attributes' -> {name: ("nearest", 1.0) |
    ("predictor", path) | ("fastpath", "attributes")}."""
    out: dict[str, tuple[str, object]] = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, sep, spec = item.partition("=")
        kind, _, value = spec.partition(":")
        if not sep or not name or kind not in ("nearest", "predictor", "fastpath") or not value:
            raise ValueError(f"--also_dispatchers wants NAME=nearest:DIST, NAME=predictor:PATH or "
                             f"NAME=fastpath:{'|'.join(FAST_PATHS)}, got {item!r}")
        if name in out:
            raise ValueError(f"--also_dispatchers: {name!r} given twice")
        if kind == "nearest":
            try:
                distance = float(value)
            except ValueError:
                distance = -1.0
            if not distance > 0:
                raise ValueError(f"--also_dispatchers: {name}: the distance must be a number > 0, got {value!r}")
            out[name] = (kind, distance)
        elif kind == "fastpath":
            if value not in FAST_PATHS:
                raise ValueError(f"--also_dispatchers: {name}: fastpath:{value!r} is not one of {FAST_PATHS}")
            out[name] = (kind, value)
        else:
            if not Path(value).is_file():
                raise ValueError(f"--also_dispatchers: {name}: {value!r} is not a file")
            out[name] = (kind, value)
    return out


@dataclass(frozen=True)
class AlsoVariant:
    """A built variant that competes as ours:NAME, with runtime knobs ((knob, value), ...; the non-default ones)."""
    cfg: object
    knobs: tuple = ()

    @property
    def name(self) -> str:
        return self.cfg.name + knob_suffix(dict(self.knobs))


def parse_also_variants(text: str) -> list[AlsoVariant]:
    """'name1,name2@s2' -> [AlsoVariant]; unknown names, and knobs the variant does not honour, raise ValueError."""
    from kernels import space

    out = []
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, at, knob_text = item.partition("@")
        try:
            cfg = space.config_named(name)
        except KeyError as exc:
            raise ValueError(f"--also_variants: {exc.args[0]}") from None
        knobs = parse_knob_suffix(knob_text) if at else {}
        allowed = space.runtime_knobs(cfg)
        wrong = {key: value for key, value in knobs.items() if value not in allowed[key]}
        if wrong:
            raise ValueError(f"--also_variants: {name} honours {allowed}, not {wrong}")
        variant = AlsoVariant(cfg, tuple((key, value) for key, value in knobs.items() if value))
        if variant not in out:
            out.append(variant)
    return out


def read_variants_per_shape(path) -> dict[str, list[AlsoVariant]]:
    """A file of 'M_N_K NAME[@KNOBS][,NAME]' lines ('#' comments, blank lines ignored) -> {mnk: [AlsoVariant]}."""
    out: dict[str, list] = {}
    for number, line in enumerate(Path(path).read_text().splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        mnk, _, names = line.partition(" ")
        try:
            shape = parse_mnk(mnk)
            configs = parse_also_variants(names)
        except ValueError as exc:
            raise ValueError(f"{path}:{number}: {exc}") from None
        if not configs:
            raise ValueError(f"{path}:{number}: no variant names after {mnk}")
        merged = out.setdefault(shape.mnk, [])
        merged += [c for c in configs if c not in merged]
    return out


def write_variants_per_shape(path, found: dict[str, list[str]]) -> None:
    """{mnk: [variant name[@knobs]]} -> the file --also_variants_per_shape reads (what the sweep tools write)."""
    Path(path).write_text("".join(f"{mnk} {','.join(names)}\n" for mnk, names in found.items()))


def variant_competitors(variants: list[AlsoVariant], shape, acc: str, b_layout: str) -> list:
    """ours:NAME competitors of --also_variants for one shape: the variants of this layout that can run it as is (with
    their knobs: K splits that cut this K into whole 16-byte steps) and accumulate in `acc`, or in fp32 (an f16 table
    may run fp32-accumulating variants, so an f16 run times those too: session 18's f16 twin sweep lost 64 of 402
    shapes whose twins were all fp32-accumulating)."""
    from kernels import space
    from tuner import competitors as comp

    return [comp.ours_variant(v.cfg, b_layout, dict(v.knobs)) for v in variants
            if v.cfg.acc in (acc, "f32") and v.cfg.b_layout == b_layout and space.supports(v.cfg, *shape)
            and space.splits_fit(v.cfg, shape[2], dict(v.knobs).get("splits", 0))]


def main(argv=None) -> int:
    args = parse_args(argv)
    import torch

    if not torch.cuda.is_available():
        print("error: no CUDA device", file=sys.stderr)
        return 2
    torch.cuda.set_device(args.gpu_device_id)
    # no autograd while timing, scoped: the GPU suites call main in-process, and a global switch left every later
    # test of the process without grad (session 42: the torch_op backward tests failed after test_gpu_eval)
    with torch.no_grad():
        return _run(args, argv)


def _run(args, argv) -> int:
    import torch

    from tuner import competitors as comp
    from tuner import env_info
    from tuner.evaluate import evaluate_shape
    from tuner.progress import Progress
    from tuner.results import format_table, write_results
    from tuner.timing import host_probe

    meta = env_info.collect(args.gpu_device_id)
    tiny = torch.empty(1, device="cuda")
    meta["host_probe_us"] = host_probe(torch.cuda.synchronize, lambda: tiny.fill_(1.0))
    if args.device_type and args.device_type.lower() not in meta["gpu"].lower():
        print(f"warning: --device_type {args.device_type} but the device is {meta['gpu']}", file=sys.stderr)
    meta.update(mode=args.mode, target_qps=args.target_qps, acc=args.acc, b_layout=args.b_layout,
                warmup_seconds=args.warmup_seconds, benchmark_seconds=args.benchmark_seconds, timings=args.timings,
                argv=sys.argv[1:] if argv is None else list(argv))
    also = also_dispatchers(args.also_tables)
    also.update(rule_dispatchers(args.also_dispatchers, args.tables))
    # one dispatcher for the whole run, like the ours[NAME] ones and a service. Up to session 6 `ours` had a fresh one
    # per shape: the one difference found between `ours` and an ours[NAME] with the same choices, which measured ~2%
    # slower per call (docs/notes.md)
    ours_dispatcher = None
    if args.ours == "dispatcher":
        from kernels.dispatch import Dispatcher

        ours_dispatcher = Dispatcher.default() if args.tables is None else table_dispatcher(args.tables)
    # the GPU overlays `ours` runs with (kernels/tables/gpus/: on a card that has one, the committed tables are not
    # what was measured; tuner.gpu_overlays --merged writes the table that was)
    ours_tables = getattr(ours_dispatcher, "tables", {}).values()
    overlays = sorted({o for table in ours_tables for o in table.meta.get("overlays", [])})
    meta.update(tables=args.tables, table_overlays=overlays, also_tables=args.also_tables,
                also_variants=[c.name for c in args.also_variants],
                also_variants_per_shape={mnk: [c.name for c in configs]
                                         for mnk, configs in args.variants_per_shape.items()},
                also_dispatchers={name: f"{kind}:{value}" for name, (kind, value) in args.also_dispatchers.items()},
                call_burst=args.call_burst)
    records = previous_records(args) if args.resume else []
    done = {r["mnk"] for r in records}
    for shape in Progress([s for s in args.shapes if s.mnk not in done], "eval"):
        rec = evaluate_shape(shape, args.acc, warmup_seconds=args.warmup_seconds,
                             benchmark_seconds=args.benchmark_seconds, timings=args.timings,
                             target_qps=args.target_qps if args.mode == "server" else None,
                             b_layout=args.b_layout, baseline_names=args.baseline_names, ours=args.ours,
                             seed=args.seed, call_burst=args.call_burst, dispatcher=ours_dispatcher,
                             extra=[comp.ours_dispatcher(*shape, args.b_layout, args.acc, d, name=name)
                                    for name, d in also.items()]
                             + variant_competitors(variants_for(args, shape), shape, args.acc, args.b_layout))
        rec["host"] = meta["host"]  # a grid resumed on another machine start: per call moves with the host
        records.append(rec)
        print(format_table(rec), flush=True)
        write_results(args.base_dir, records, meta)  # rewritten after every shape: a stopped grid run keeps its data
    paths = write_results(args.base_dir, records, meta)
    print("wrote " + ", ".join(str(p) for p in paths.values()))
    failed = [(r["mnk"], n) for r in records for n, c in r["competitors"].items() if not c["ok"]]
    for mnk, name in failed:
        print(f"correctness failure: {mnk} {name}", file=sys.stderr)
    return 0


def variants_for(args, shape) -> list:
    """--also_variants, then this shape's --also_variants_per_shape, each once."""
    out = list(args.also_variants)
    out += [c for c in args.variants_per_shape.get(shape.mnk, []) if c not in out]
    return out


RESUME_KEYS = ("acc", "b_layout", "timings", "call_burst", "mode", "target_qps")


def previous_records(args) -> list[dict]:
    """The shape records of an earlier run into the same base_dir, if it measured the same way; else an error."""
    path = Path(args.base_dir) / "results.json"
    if not path.exists():
        return []
    old = json.loads(path.read_text())
    want = {"acc": args.acc, "b_layout": args.b_layout, "timings": list(args.timings), "call_burst": args.call_burst,
            "mode": args.mode, "target_qps": args.target_qps}
    differ = {k: (old["meta"].get(k), want[k]) for k in RESUME_KEYS if old["meta"].get(k, want[k]) != want[k]}
    if differ:
        raise SystemExit(f"--resume: {path} was measured differently: {differ}")
    return list(old["shapes"])


def device_tables(directory: str) -> dict:
    """The tables in `directory` for this GPU's architecture."""
    import torch

    from kernels.tuned_tables import load_tables

    return load_tables("sm%d%d" % torch.cuda.get_device_capability(), directory)


def table_dispatcher(directory: str):
    """A Dispatcher of this GPU whose tables come from `directory` (--tables, --also_tables)."""
    from kernels.dispatch import Dispatcher

    return Dispatcher.default(tables=device_tables(directory))


def also_dispatchers(tables: dict[str, str]) -> dict:
    """{ours[NAME]: a Dispatcher of this GPU whose tables come from DIR} for --also_tables."""
    return {f"ours[{name}]": table_dispatcher(directory) for name, directory in tables.items()}


def rule_dispatchers(specs: dict[str, tuple[str, object]], tables: str | None = None) -> dict:
    """{ours[NAME]: a Dispatcher of this GPU with ours' tables (the committed ones, or --tables DIR) and a rule for
    shapes they lack, or another host path} for --also_dispatchers."""
    if not specs:
        return {}
    from kernels.dispatch import Dispatcher
    from tuner.predictor import Predictor

    same_tables = {} if tables is None else {"tables": device_tables(tables)}
    out = {}
    for name, (kind, value) in specs.items():
        if kind == "nearest":
            extra = {"nearest": value}
        elif kind == "predictor":
            extra = {"predictor": Predictor.load(value), "nearest": 0.0}
        else:
            extra = {"fast_path": fast_path_table(value)}
        out[f"ours[{name}]"] = Dispatcher.default(**extra, **same_tables)
    return out


# --also_dispatchers NAME=fastpath:…: how the dispatcher's C fast path reads the operands, or no fast path
FAST_PATHS = ("reader", "attributes", "off")


def fast_path_table(how: str):
    """The fast_path argument of a Dispatcher for --also_dispatchers NAME=fastpath:HOW. A reader that cannot be built
    here is an error, not a silent second attribute path: the comparison would measure nothing."""
    from kernels import fastpath

    if how == "off":
        return False
    table = fastpath.new_table(tensor_reader=how == "reader")
    if table is None:
        raise RuntimeError(f"fastpath:{how}: the C fast path is unavailable ({fastpath.unavailable_reason() or 'off'})")
    if (how == "reader") != bool(table.tensor_reader):
        raise RuntimeError(f"fastpath:{how}: the tensor reader is unavailable "
                           f"({fastpath.reader_unavailable_reason() or 'HGEMM_TENSOR_READER=0'})")
    return table


if __name__ == "__main__":
    sys.exit(main())
