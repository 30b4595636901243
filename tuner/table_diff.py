"""`python -m tuner.table_diff BASE_DIR CAND_DIR [--out PREFIX]`: the entries whose choice differs between two sets of
tuned tables (`sm90_<acc>.json` or `.json.gz` in each folder) — what an A/B (`scripts/h200_ab.sh`) should time.

An entry differs when its eager choice or its graph choice (the eager one where it has none, as the dispatcher reads
it: `tuner.confirm.choice`) runs another arm: kernel, config, runtime knobs or accumulator. Recorded times (`us`) and
how a choice is written (a `graph` field equal to the eager choice) do not count. With --out, one M_N_K list per
accumulator and layout is written (PREFIX_<acc>_<layout>.txt, the SHAPES_fp32 / SHAPES_fp16 of h200_ab.sh); the
summary printed says how many entries changed which role and from which arm family to which.
"""
from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from tuner.confirm import choice
from tuner.results import read_json

ACCS = ("f32", "f16")
LAYOUTS = ("col", "row")
ROLES = ("eager", "graph")


def load(folder: str | Path, acc: str) -> dict:
    """(m, n, k, b_layout) -> entry of a folder's table for one accumulator."""
    folder = Path(folder)
    for path in (folder / f"sm90_{acc}.json", folder / f"sm90_{acc}.json.gz"):
        if path.exists():
            return {(e["m"], e["n"], e["k"], e["b_layout"]): e for e in read_json(path)["entries"]}
    raise FileNotFoundError(f"no sm90_{acc}.json(.gz) in {folder}")


def family(arm: dict) -> str:
    """A short name for an arm's kind: cublas, cublaslt, sm80, sm90, splitk, splitk_cluster (+ '@f32' when
    borrowed)."""
    name = arm["kernel"].split("_")[0]
    if name == "splitk" and arm.get("config", {}).get("schedule") == "cluster":
        name = "splitk_cluster"
    return name + (f"@{arm['acc']}" if arm.get("acc") else "")


def changes(base: dict, cand: dict) -> dict[tuple, dict[str, tuple[dict, dict]]]:
    """key -> {role: (base arm, candidate arm)} for the entries of both tables whose choice differs in a role."""
    out = {}
    for key in sorted(base.keys() & cand.keys()):
        roles = {role: (choice(base[key], role), choice(cand[key], role)) for role in ROLES}
        differing = {role: arms for role, arms in roles.items() if arms[0] != arms[1]}
        if differing:
            out[key] = differing
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("base")
    p.add_argument("candidate")
    p.add_argument("--out", default=None, metavar="PREFIX", help="write PREFIX_<acc>_<layout>.txt (M_N_K lines)")
    args = p.parse_args(argv)
    summary = {}
    for acc in ACCS:
        base, cand = load(args.base, acc), load(args.candidate, acc)
        changed = changes(base, cand)
        only = sorted(set(base) ^ set(cand))
        for layout in LAYOUTS:
            keys = [key for key in changed if key[3] == layout]
            moves = Counter(f"{role}: {family(old)} -> {family(new)}"
                            for key in keys for role, (old, new) in changed[key].items())
            summary[f"{acc}_{layout}"] = {
                "entries": len(keys), **{role: sum(role in changed[key] for key in keys) for role in ROLES},
                "moves": dict(moves.most_common()), "in_one_table_only": sum(key[3] == layout for key in only)}
            if args.out:
                path = Path(f"{args.out}_{acc}_{layout}.txt")
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text("".join(f"{m}_{n}_{k}\n" for m, n, k, _ in keys))
    print(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
