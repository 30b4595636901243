"""tuner.table_diff: which entries of two table sets run another arm (what an A/B must time), and nothing else."""
import gzip
import json

from tuner.table_diff import changes, family, main


def entry(m, kernel, b_layout="col", us=3.0, graph=None, acc=None, schedule=None):
    e = {"m": m, "n": 64, "k": 4096, "b_layout": b_layout, "kernel": kernel,
         "config": {"kind": "gemmex_tn"} if kernel == "cublas" else {"family": kernel.split("_")[0], "schedule": schedule},
         "runtime": {"raster": 0, "swizzle": 0, "splits": 0}, "us": us, "cublas_us": 6.0}
    if acc:
        e["acc"] = acc
    if graph:
        e["graph"] = graph
    return e


def arm(kernel, splits=0, schedule=None):
    return {"kernel": kernel, "config": {"family": kernel.split("_")[0], "schedule": schedule},
            "runtime": {"raster": 0, "swizzle": 0, "splits": splits}, "us": 3.0}


def write(folder, acc, entries, gz=False):
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps({"meta": {}, "entries": entries})
    if gz:
        with gzip.open(folder / f"sm90_{acc}.json.gz", "wt") as f:
            f.write(text)
    else:
        (folder / f"sm90_{acc}.json").write_text(text)


def test_only_a_different_arm_counts_not_times_or_how_a_choice_is_written():
    cluster = arm("splitk_f32_col_cl", splits=8, schedule="cluster")
    cublas_written_out = {k: v for k, v in entry(0, "cublas", us=4.0).items()
                          if k in ("kernel", "config", "runtime", "us")}
    base = {m: e for m, e in (
        (64, entry(64, "cublas")),                                    # eager cuBLAS -> cluster split-K
        (128, entry(128, "cublas", us=3.0)),                          # only the recorded time moves
        (192, entry(192, "cublas", graph=cublas_written_out)),        # a graph field equal to the eager arm
        (256, entry(256, "sm90_x", graph=arm("sm90_y"))),             # graph choice moves, eager stays
        (320, entry(320, "sm90_x")),                                  # borrowed: the f32-accumulating twin
    )}
    cand = {**base,
            64: {**entry(64, "splitk_f32_col_cl", schedule="cluster"), "runtime": cluster["runtime"]},
            128: entry(128, "cublas", us=2.5),
            192: entry(192, "cublas"),
            256: entry(256, "sm90_x", graph=arm("sm90_z")),
            320: entry(320, "sm90_x", acc="f32")}
    got = changes(base, cand)
    assert set(got) == {64, 256, 320}
    assert set(got[64]) == {"eager", "graph"}  # no graph field: the eager choice is the graph one too
    assert set(got[256]) == {"graph"}
    old, new = got[64]["eager"]
    assert (family(old), family(new)) == ("cublas", "splitk_cluster")
    assert family(got[320]["eager"][1]) == "sm90@f32"


def test_lists_per_accumulator_and_layout_from_plain_or_gzipped_tables(tmp_path, capsys):
    base, cand = tmp_path / "base", tmp_path / "cand"
    for acc in ("f32", "f16"):
        write(base, acc, [entry(64, "cublas"), entry(64, "cublas", b_layout="row")], gz=acc == "f16")
    write(cand, "f32", [entry(64, "sm90_x"), entry(64, "cublas", b_layout="row", us=1.0)])
    write(cand, "f16", [entry(64, "cublas"), entry(64, "sm80_x", b_layout="row")])
    assert main([str(base), str(cand), "--out", str(tmp_path / "lists/ab")]) == 0
    lists = {p.name: p.read_text() for p in (tmp_path / "lists").iterdir()}
    assert lists == {"ab_f32_col.txt": "64_64_4096\n", "ab_f32_row.txt": "", "ab_f16_col.txt": "",
                     "ab_f16_row.txt": "64_64_4096\n"}
    summary = json.loads(capsys.readouterr().out)
    assert summary["f32_col"]["moves"] == {"eager: cublas -> sm90": 1, "graph: cublas -> sm90": 1}
    assert summary["f16_row"]["eager"] == 1 and summary["f32_row"]["entries"] == 0
