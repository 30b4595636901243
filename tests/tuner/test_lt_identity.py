"""tuner/lt_identity.py: a table's cuBLASLt choices get the identity of the algorithm their index named where they were
recorded, and a dispatcher then finds that algorithm wherever another list ranks it."""
from __future__ import annotations

import json

import pytest
import torch

from kernels.dispatch import Dispatcher
from kernels.tuned_tables import LT_IDENTITY, load_table
from tuner import lt_identity


def ident(algo_id: int, tile_id: int = 20) -> dict:
    return dict(dict.fromkeys(LT_IDENTITY, 0), algo_id=algo_id, tile_id=tile_id)


def lt(index: int, **extra) -> dict:
    return {"kernel": "cublaslt", "config": {"kind": "lt_algo", "algo_index": index},
            "runtime": {"raster": 0, "swizzle": 0, "splits": 0}, "us": 5.0, **extra}


def entries() -> list[dict]:
    return [
        {"m": 64, "n": 64, "k": 64, "b_layout": "col", **lt(2), "cublas_us": 6.0},
        # eager cuBLAS, graph cuBLASLt with fp32 accumulation (an f16 table borrowing)
        {"m": 128, "n": 64, "k": 64, "b_layout": "row", "kernel": "cublas", "config": {"kind": "gemmex_nn"},
         "runtime": {"raster": 0, "swizzle": 0, "splits": 0}, "us": 4.0, "cublas_us": 4.0,
         "graph": lt(1, acc="f32")},
        {"m": 256, "n": 64, "k": 64, "b_layout": "col", **lt(9), "cublas_us": 6.0},   # past the list's end
    ]


def listed_on_the_tuning_gpu(m, n, k, b_layout, acc):
    return [ident(100 + m + i, tile_id=len(acc)) for i in range(4)] if acc == "f32" else [ident(1)] * 4


def test_record_takes_each_choice_at_its_index_with_the_accumulator_it_runs():
    ids = lt_identity.identities(entries(), "f16", listed_on_the_tuning_gpu)
    assert ids == {"64_64_64/col/f16/2": ident(1), "128_64_64/row/f32/1": ident(100 + 128 + 1, tile_id=3)}


def test_stamp_writes_them_into_the_table_and_a_dispatcher_finds_the_algorithm_where_its_list_ranks_it(tmp_path):
    from tuner.tables import write_table

    record = {"meta": {"gpu": "NVIDIA H200"}, "identities": lt_identity.identities(
        entries(), "f32", listed_on_the_tuning_gpu)}
    (tmp_path / "ids.json").write_text(json.dumps(record))
    meta = {"gpu": "NVIDIA H200", "arch": "sm90", "acc": "f32", "date": "d", "commit": "c", "driver": "x",
            "cuda": "13.0", "torch": "2.11"}
    write_table(tmp_path / "sm90_f32.json", meta, entries())
    assert lt_identity.main(["stamp", "--table", str(tmp_path / "sm90_f32.json"), "--record",
                             str(tmp_path / "ids.json"), "--out", str(tmp_path / "sm90_f32.json")]) == 0
    table = load_table(tmp_path / "sm90_f32.json")
    tuned = ident(100 + 64 + 2, tile_id=3)
    assert table.lookup(64, 64, 64, "col").config["algo"] == tuned
    assert table.lookup(128, 64, 64, "row").graph.config["algo"] == ident(100 + 128 + 1, tile_id=3)
    assert "algo" not in table.lookup(256, 64, 64, "col").config
    assert table.meta["lt_identities"] == {"gpu": "NVIDIA H200", "stamped": 2}

    # another card ranks the same algorithm first
    made = []
    d = Dispatcher(tables={"f32": table}, load_kernel=lambda cfg: None, arch="sm90",
                   arm_factory=lambda name, options: made.append((name, options)) or (lambda a, b, out, **kw: out),
                   lt_identities=lambda *shape: [tuned, ident(7)], lt_align_bytes=64)
    a, b = torch.randn(64, 64).half(), torch.randn(64, 64).half()
    _, sel = d.run(a, b, "col", "f32", out=torch.empty(64, 64, dtype=torch.float16))
    assert (sel.kernel, sel.fallback, sel.config["algo_index"]) == ("cublaslt", None, 0)
    assert made == [("cublaslt", {"kind": "lt_algo", "algo_index": 0})]   # the arm is made from the index alone


def test_stamp_leaves_choices_the_record_lacks_and_copies_the_rest():
    original = entries()
    out, stamped = lt_identity.stamp(original, "f32", {})
    assert stamped == 0 and out == original and out[0] is not original[0]


@pytest.mark.gpu
def test_gpu_recorded_identities_resolve_to_their_own_index_on_the_card_they_were_recorded_on(tmp_path):
    # record the committed tables' cuBLASLt choices here, stamp them: every stamped choice resolves to the index it had
    from kernels.dispatch import Dispatcher
    from kernels.tuned_tables import TABLES_DIR, TunedTable
    from tuner.results import read_json

    if not torch.cuda.is_available():
        pytest.skip("needs a CUDA GPU")
    assert lt_identity.main(["record", "--tables", str(TABLES_DIR), "--out", str(tmp_path / "ids.json")]) == 0
    record = read_json(tmp_path / "ids.json")["identities"]
    assert record
    table = read_json(TABLES_DIR / "sm90_f32.json")
    entries, stamped = lt_identity.stamp(table["entries"], "f32", record)
    assert stamped > 0
    chosen = [e for e in entries if "algo" in (e.get("config") or {})][:24]
    d = Dispatcher.default(tables={"f32": TunedTable.from_dict({"meta": table["meta"], "entries": chosen})})
    for e in chosen:
        sel = d.select(e["m"], e["n"], e["k"], e["b_layout"], "f32")
        assert (sel.kernel, sel.fallback) == ("cublaslt", None), e
        assert sel.config["algo_index"] == e["config"]["algo_index"], e
    assert d.quarantined() == {}
