"""The benchmark CLI accepts exactly CUDA-L2's flags (same names, same required set) plus ours."""
import subprocess
import sys
from pathlib import Path

import pytest

from tuner.eval_cli import build_parser, parse_args
from tuner.shapes import Shape

ROOT = Path(__file__).resolve().parents[2]
CUDA_L2_FLAGS = ["--mnk", "--acc_precise", "--warmup_seconds", "--benchmark_seconds", "--base_dir", "--gpu_device_id",
                 "--mode", "--target_qps"]
BASE = ["--mnk", "64_4096_64", "--acc_precise", "fp32", "--warmup_seconds", "5", "--benchmark_seconds", "10",
        "--base_dir", "./results", "--gpu_device_id", "0", "--mode", "offline"]


def test_cuda_l2_command_line_parses_unchanged():
    args = parse_args(BASE)
    assert args.shapes == [Shape(64, 4096, 64)]
    assert (args.acc, args.warmup_seconds, args.benchmark_seconds) == ("f32", 5.0, 10.0)
    assert (args.base_dir, args.gpu_device_id, args.mode) == ("./results", 0, "offline")
    assert args.timings == ("kernel", "call")


def test_every_cuda_l2_flag_exists_with_its_spelling():
    options = {s for a in build_parser()._actions for s in a.option_strings}
    assert set(CUDA_L2_FLAGS) | {"--device_type", "--grid", "--timing"} <= options


@pytest.mark.parametrize("drop", ["--acc_precise", "--warmup_seconds", "--benchmark_seconds", "--base_dir",
                                  "--gpu_device_id", "--mode"])
def test_required_flags_are_required(drop):
    i = BASE.index(drop)
    with pytest.raises(SystemExit):
        parse_args(BASE[:i] + BASE[i + 2:])


def test_server_mode_needs_target_qps():
    server = BASE[:-1] + ["server"]
    with pytest.raises(SystemExit):
        parse_args(server)
    args = parse_args(server + ["--target_qps", "100"])
    assert args.target_qps == 100.0 and args.mode == "server"


def test_fp16_and_timing_and_device_type():
    args = parse_args(BASE[:3] + ["fp16"] + BASE[4:] + ["--timing", "call", "--device_type", "H200"])
    assert args.acc == "f16" and args.timings == ("call",) and args.device_type == "H200"


@pytest.mark.parametrize("bad", [["--mnk", "64_64"], ["--mnk", "0_64_64"], ["--acc_precise", "bf16"],
                                 ["--mode", "online"], ["--timing", "gpu"], ["--baselines", "nope"]])
def test_bad_values_are_rejected(bad):
    argv = list(BASE)
    if bad[0] in argv:
        i = argv.index(bad[0])
        argv[i + 1] = bad[1]
    else:
        argv += bad
    with pytest.raises(SystemExit):
        parse_args(argv)


def test_grid_mode_reads_m_n_k_lines_and_excludes_mnk(tmp_path):
    grid = tmp_path / "grid.txt"
    grid.write_text("64_64_64\n# comment\n\n128_256_512\n64_64_64\n")
    no_mnk = BASE[2:]
    args = parse_args(no_mnk + ["--grid", str(grid)])
    assert args.shapes == [Shape(64, 64, 64), Shape(128, 256, 512)]
    with pytest.raises(SystemExit):
        parse_args(BASE + ["--grid", str(grid)])
    with pytest.raises(SystemExit):
        parse_args(no_mnk)


def test_shell_script_passes_flags_through(tmp_path):
    bad = subprocess.run([str(ROOT / "eval_one_file.sh"), "--mnk", "1_2"], capture_output=True, text=True,
                         env={"PYTHON": sys.executable, "PATH": "/usr/bin:/bin"})
    assert bad.returncode == 2 and "--acc_precise" in bad.stderr


def test_also_tables_names_other_table_directories(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    args = parse_args(BASE + ["--also_tables", f"kernel={tmp_path / 'a'}, old={tmp_path / 'b'}"])
    assert args.also_tables == {"kernel": str(tmp_path / "a"), "old": str(tmp_path / "b")}
    assert parse_args(BASE).also_tables == {}


@pytest.mark.parametrize("bad", ["kernel", "=x", "kernel=", "k={d},k={d}", "k={d}/missing"])
def test_also_tables_rejects_bad_items(tmp_path, bad):
    with pytest.raises(SystemExit):
        parse_args(BASE + ["--also_tables", bad.format(d=tmp_path)])


def test_tables_gives_ours_another_table_directory(tmp_path):
    assert parse_args(BASE).tables is None
    assert parse_args(BASE + ["--tables", str(tmp_path)]).tables == str(tmp_path)
    with pytest.raises(SystemExit):
        parse_args(BASE + ["--tables", str(tmp_path / "missing")])


def test_also_dispatchers_names_a_nearest_rule_or_a_saved_predictor(tmp_path):
    model = tmp_path / "model.json"
    model.write_text("{}")
    args = parse_args(BASE + ["--also_dispatchers", f"near=nearest:1.0, model=predictor:{model}"])
    assert args.also_dispatchers == {"near": ("nearest", 1.0), "model": ("predictor", str(model))}
    assert parse_args(BASE).also_dispatchers == {}
    args = parse_args(BASE + ["--also_dispatchers", "attrs=fastpath:attributes,py=fastpath:off,r=fastpath:reader"])
    assert args.also_dispatchers == {"attrs": ("fastpath", "attributes"), "py": ("fastpath", "off"),
                                     "r": ("fastpath", "reader")}


@pytest.mark.parametrize("bad", ["near", "near=nearest", "near=nearest:0", "near=nearest:far", "near=closest:1",
                                 "m=predictor:{d}/missing.json", "a=nearest:1,a=nearest:2",
                                 "f=fastpath", "f=fastpath:ctypes"])
def test_also_dispatchers_rejects_bad_items(tmp_path, bad):
    with pytest.raises(SystemExit):
        parse_args(BASE + ["--also_dispatchers", bad.format(d=tmp_path)])


def test_also_variants_resolves_names_including_pdl_twins_and_filters_per_shape(monkeypatch):
    from kernels import space
    from tuner import competitors as comp
    from tuner.eval_cli import AlsoVariant, variant_competitors

    pdl = space.variant_set("pdl")
    base = space.config_named(pdl[0].name.removesuffix("_pdl"))
    args = parse_args(BASE + ["--also_variants", f"{pdl[0].name}, {base.name},{pdl[0].name}"])
    assert args.also_variants == [AlsoVariant(pdl[0]), AlsoVariant(base)] and parse_args(BASE).also_variants == []
    with pytest.raises(SystemExit):
        parse_args(BASE + ["--also_variants", "sm90_nonsense"])
    # no GPU: stand in for loading, keep the filtering real
    monkeypatch.setattr(comp, "ours_variant", lambda cfg, b_layout, knobs=None: cfg.name + comp.knob_suffix(knobs))
    every = [AlsoVariant(c) for c in space.variant_set("wide_pdl")]
    got = variant_competitors(every, Shape(64, 4096, 64), "f16", "col")
    assert got and any(name.endswith("_pdl") for name in got)
    # an f16 run also times the fp32-accumulating variants (an f16 table may run them); an f32 run no f16 ones
    assert {name.split("_")[1] for name in got} == {"f16", "f32"} and all("_col_" in name for name in got)
    assert all("_f32_col_" in name for name in variant_competitors(every, Shape(64, 4096, 64), "f32", "col"))
    assert variant_competitors(every, Shape(64, 4096, 63), "f16", "col") == []  # K not a multiple of 8
    assert variant_competitors(every, Shape(64, 4096, 64), "f16", "row") == []  # wide_pdl is col only


def test_also_variants_take_runtime_knobs_the_variant_honours_and_compete_under_their_own_names(monkeypatch):
    from kernels import space
    from tuner import competitors as comp
    from tuner.eval_cli import variant_competitors

    splitk = next(c for c in space.variant_set("splitk") if c.acc == "f32" and c.b_layout == "col")
    sm90 = space.config_named("sm90_f32_col_t64x128x64_c1x1_sauto_pp_pers_a8")
    args = parse_args(BASE + ["--also_variants", f"{splitk.name}@s2,{splitk.name}@s16,{splitk.name},{sm90.name}@r1w4"])
    assert [v.name for v in args.also_variants] == [f"{splitk.name}@s2", f"{splitk.name}@s16", splitk.name,
                                                    f"{sm90.name}@r1w4"]
    assert dict(args.also_variants[0].knobs) == {"splits": 2} and args.also_variants[2].knobs == ()
    for bad in (f"{splitk.name}@s3", f"{splitk.name}@x2", f"{splitk.name}@", f"{sm90.name}@s2w1", f"{sm90.name}@w3"):
        with pytest.raises(SystemExit):
            parse_args(BASE + ["--also_variants", bad])
    assert comp.parse_knob_suffix("r1w4s2") == {"raster": 1, "swizzle": 4, "splits": 2}
    assert comp.knob_suffix({"raster": 1, "swizzle": 4, "splits": 2}) == "@r1w4s2" and comp.knob_suffix({}) == ""
    monkeypatch.setattr(comp, "ours_variant", lambda cfg, b_layout, knobs=None: cfg.name + comp.knob_suffix(knobs))
    # 16 splits of K = 1024 are 64 columns each, whole 16-byte steps; of K = 64 they are not: that one is left out
    assert variant_competitors(args.also_variants[:3], Shape(256, 4096, 1024), "f32", "col") == \
        [f"{splitk.name}@s2", f"{splitk.name}@s16", splitk.name]
    assert variant_competitors(args.also_variants[:3], Shape(256, 4096, 64), "f32", "col") == \
        [f"{splitk.name}@s2", splitk.name]


def test_resume_keeps_an_earlier_runs_shapes_only_if_it_measured_the_same_way(tmp_path):
    import json

    from tuner.eval_cli import previous_records

    argv = BASE[:-5] + [str(tmp_path), "--gpu_device_id", "0", "--mode", "offline", "--resume"]
    args = parse_args(argv)
    assert args.base_dir == str(tmp_path) and previous_records(args) == []  # nothing yet
    meta = {"acc": "f32", "b_layout": "col", "timings": ["kernel", "call"], "call_burst": 1, "mode": "offline",
            "target_qps": None}
    (tmp_path / "results.json").write_text(json.dumps({"meta": meta, "shapes": [{"mnk": "64_4096_64"}]}))
    assert [r["mnk"] for r in previous_records(args)] == ["64_4096_64"]
    with pytest.raises(SystemExit, match="call_burst"):
        previous_records(parse_args(argv + ["--call_burst", "16"]))
    with pytest.raises(SystemExit, match="acc"):
        previous_records(parse_args([a if a != "fp32" else "fp16" for a in argv]))


def test_fast_path_table_gives_each_host_path_or_refuses(monkeypatch):
    from kernels import fastpath
    from tuner.eval_cli import fast_path_table

    assert fast_path_table("off") is False
    if fastpath.load() is None:
        pytest.skip(f"no C fast path here: {fastpath.unavailable_reason()}")
    assert fast_path_table("attributes").tensor_reader is False
    monkeypatch.setenv("HGEMM_TENSOR_READER", "0")  # a reader that is not there must not pass as one
    with pytest.raises(RuntimeError, match="tensor reader is unavailable"):
        fast_path_table("reader")
