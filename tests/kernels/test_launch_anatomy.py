"""kernels.launch_anatomy: the CLI's parsing and table without a GPU, the probe's compile where nvcc is (slow), and on
the H200 a run of the floors and one of the tables' variants (every piece timed, the variant's launch cache hit and
retargeted, never refused)."""
import pytest

from kernels import build, launch_anatomy


def test_parse_shape_accepts_both_separators_and_rejects_the_rest():
    assert launch_anatomy.parse_shape("512x256x1024") == (512, 256, 1024)
    assert launch_anatomy.parse_shape("64_128_64") == (64, 128, 64)
    for bad in ("512x256", "0x1x1", "ax1x1", "1x1x1x1", "-4x1x1"):
        with pytest.raises(ValueError, match="MxNxK"):
            launch_anatomy.parse_shape(bad)


def test_table_prints_timings_and_counts_each_on_one_row():
    rows = launch_anatomy.parse_lines(
        '{"piece": "cudaGetDevice", "variant": "", "median_us": 0.031, "p10_us": 0.03, "p90_us": 0.04}\n\n'
        '{"piece": "cache stats", "variant": "v", "hits": 7, "retargeted": 3, "prepared": 1, '
        '"retarget_refused": 0}\n')
    text = launch_anatomy.table(rows).splitlines()
    assert len(text) == 3
    assert text[1].startswith("cudaGetDevice") and text[1].split()[-3:] == ["0.03", "0.03", "0.04"]
    assert "hits 7, retargeted 3, prepared 1, retarget_refused 0" in text[2]


def test_cli_rejects_too_few_calls_and_a_bad_shape():
    with pytest.raises(SystemExit):
        launch_anatomy.main(["--calls", "10"])
    with pytest.raises(SystemExit):
        launch_anatomy.main(["--shape", "12x3"])


@pytest.mark.slow
@pytest.mark.skipif(build.nvcc_path() is None or build.ninja_path() is None, reason="nvcc or ninja not found")
def test_probe_compiles_and_exports_its_entry_point():
    import ctypes

    lib = ctypes.CDLL(str(launch_anatomy.compile_probe()))  # loads without a GPU: cudart is static and lazy
    assert lib.launch_anatomy is not None


@pytest.mark.gpu
def test_probe_times_every_piece_of_a_tables_variant(tmp_path):
    from kernels import space

    name = "sm90_f32_col_t64x128x64_c1x1_sauto_pp_pers_a8"
    if build.find_built(space.config_named(name)) is None:
        pytest.skip(f"{name} is not built (kernels.build --tables committed)")
    out = tmp_path / "a.json"
    assert launch_anatomy.main(["--variants", name, "--shape", "256x512x1024", "--calls", "300",
                                "--out", str(out)]) == 0
    import json

    pieces = json.loads(out.read_text())["pieces"]
    timed = {(p["piece"], p["variant"]): p for p in pieces if "median_us" in p}
    for piece in ("cudaGetDevice", "cuTensorMapReplaceAddress x3", "launch <<<1,128>>> empty",
                  "cudaLaunchKernelExC 1KB params, cluster 2, PDL", "cuLaunchKernelEx 1KB params, cluster 2"):
        assert 0 < timed[(piece, "")]["median_us"] < 1000
    for piece in ("hgemm_run, cache hit", "hgemm_run, retargeted", "per call: host", "per call: wait",
                  "per call: host, caches flushed"):
        got = timed[(piece, name)]
        assert 0 < got["p10_us"] <= got["median_us"] <= got["p90_us"]
    stats = next(p for p in pieces if p["piece"] == "cache stats")
    assert stats["hits"] > 300 and stats["retargeted"] > 300 and stats["retarget_refused"] == 0
    assert stats["prepared"] <= 3  # the first call, and the first retarget's check
