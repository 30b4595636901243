"""tuner.skinny_sweep: which cluster variants a skinny shape gets, and the worst-first order."""
from __future__ import annotations

from kernels import space
from sweep_entries import KNOBS, cfg, entry
from tuner.set_sweep import worst_first
from tuner.skinny_sweep import fits, main, sweep


def test_a_cluster_must_span_the_long_side_and_fit_the_shape():
    along_n, along_m, both = cfg((64, 128, 64), (1, 4)), cfg((128, 64, 64), (4, 1)), cfg((128, 64, 64), (2, 2))
    assert fits(along_n, 64, 8192, 256) and not fits(along_m, 64, 8192, 256)      # M short: share A along N
    assert fits(along_m, 8192, 128, 256) and not fits(along_n, 8192, 128, 256)    # N short: share B along M
    assert not fits(along_n, 512, 8192, 256)                                       # neither side short
    assert not fits(along_n, 64, 256, 256)                                         # 4 x 128 columns > 256
    assert not fits(both, 128, 8192, 256)                                          # 2 x 128 rows > 128
    assert fits(both, 256, 8192, 256) and fits(both, 8192, 256, 256)


def test_each_skinny_entry_gets_the_fitting_variants_it_does_not_run():
    a, b, c = cfg((64, 128, 64), (1, 2)), cfg((128, 64, 64), (1, 4)), cfg((128, 64, 64), (2, 1))
    f16 = cfg((64, 128, 64), (1, 2), acc="f16")
    runs_a = {"kernel": a.name, "config": a.to_dict(), "runtime": KNOBS}
    entries = [entry(128, 8192, 8192), entry(64, 8192, 4096, runs_a), entry(8192, 128, 4096),
               entry(4096, 4096, 4096), entry(128, 8192, 8192, layout="row"), entry(128, 128, 64)]
    found = sweep(entries, [a, b, c, f16], "f32", min_flop=1e9)
    assert found == {"128_8192_8192": [a.name, b.name], "8192_128_4096": [c.name]}
    # the graph role's choice counts as run too
    graph_b = dict(entry(128, 8192, 8192), graph={"kernel": b.name, "config": b.to_dict(), "runtime": KNOBS})
    assert sweep([graph_b], [a, b], "f32") == {"128_8192_8192": [a.name]}


def test_worst_first_orders_by_ours_over_torch_and_puts_unmeasured_shapes_last():
    def shape(mnk, ours_us, torch_us):
        return {"mnk": mnk, "competitors": {"ours": {"ok": True, "kernel_us": ours_us},
                                            "torch.matmul": {"ok": True, "kernel_us": torch_us}}}
    found = {"a": ["x"], "b": ["y"], "c": ["z"], "d": ["w"]}
    results = {"shapes": [shape("a", 10.0, 10.0), shape("b", 10.5, 10.0), shape("c", 9.0, 10.0)]}
    assert list(worst_first(found, results)) == ["b", "a", "c", "d"]


def test_the_committed_tables_get_a_list_of_built_skinny_variants(tmp_path):
    out = tmp_path / "list.txt"
    assert main(["--acc", "f32", "--min-flop", "1e9", "--max-flop", "1e11", "--out", str(out)]) == 0
    lines = out.read_text().splitlines()
    names = {c.name for c in space.variant_set("skinny")}
    assert lines and all(set(line.split(" ")[1].split(",")) <= names for line in lines)
    assert "128_8192_8192" in {line.split(" ")[0] for line in lines}
