"""CPU tests of the config space: names, serialisation, constraints, named sets, shape rules."""
import json
from dataclasses import replace

import pytest

from kernels import space
from kernels.config import KernelConfig


def sm90(**kw):
    base = dict(family="sm90", acc="f32", b_layout="col", tile=(128, 128, 64), schedule="cooperative",
                scheduler="persistent")
    base.update(kw)
    return KernelConfig(**base)


def sm80(**kw):
    base = dict(family="sm80", acc="f32", b_layout="col", tile=(128, 128, 32), warp=(64, 64, 32), stages=4)
    base.update(kw)
    return KernelConfig(**base)


def test_names_are_unique_across_the_whole_space():
    configs = space.enumerate()
    names = [c.name for c in configs]
    assert len(names) == len(set(names))
    assert len(configs) > 100
    assert {c.family for c in configs} == {"sm90", "sm80"}


def test_name_is_stable_and_readable():
    assert sm90().name == "sm90_f32_col_t128x128x64_c1x1_sauto_coop_pers_a8"
    assert sm80(acc="f16", b_layout="row").name == "sm80_f16_row_t128x128x32_w64x64x32_s4_a8"
    assert sm90(cluster=(2, 1), schedule="cooperative", scheduler="streamk", stages=4).name == \
        "sm90_f32_col_t128x128x64_c2x1_s4_coop_sk_a8"


@pytest.mark.parametrize("cfg", space.variant_set("default"), ids=lambda c: c.name)
def test_to_dict_round_trips_through_json(cfg):
    d = json.loads(json.dumps(cfg.to_dict()))
    back = KernelConfig.from_dict(d)
    assert back == cfg and hash(back) == hash(cfg) and back.name == cfg.name


def test_from_dict_rejects_unknown_keys_and_wrong_names():
    d = sm90().to_dict()
    with pytest.raises(ValueError, match="unknown"):
        KernelConfig.from_dict({**d, "bogus": 1})
    with pytest.raises(ValueError, match="does not match"):
        KernelConfig.from_dict({**d, "name": "something_else"})
    assert KernelConfig.from_dict({**d, "name": sm90().name}) == sm90()


@pytest.mark.parametrize("kw, fragment", [
    (dict(family="sm70"), "family"),
    (dict(acc="bf16"), "acc"),
    (dict(b_layout="t"), "b_layout"),
    (dict(schedule="warp"), "schedule"),
    (dict(scheduler=""), "scheduler"),
    (dict(warp=(64, 64, 64)), "warp tile"),
    (dict(alignment=3), "alignment"),
])
def test_structural_errors_raise(kw, fragment):
    with pytest.raises(ValueError, match=fragment):
        sm90(**kw)


def test_sm80_structural_errors_raise():
    with pytest.raises(ValueError, match="clusters"):
        sm80(cluster=(2, 1))
    with pytest.raises(ValueError, match="schedule"):
        sm80(schedule="cooperative")
    with pytest.raises(ValueError, match="stages"):
        sm80(stages=1)


@pytest.mark.parametrize("cfg, fragment", [
    (sm90(tile=(64, 128, 64), schedule="cooperative"), "cooperative needs tile_m >= 128"),
    (sm90(tile=(256, 128, 64), schedule="pingpong"), "pingpong needs tile_m <= 128"),
    (sm90(tile=(64, 128, 64), schedule="pingpong", scheduler="streamk"), "stream-K needs the cooperative"),
    (sm90(scheduler="streamk", pdl=True), "pdl with stream-K"),
    (sm90(alignment=4), "alignment=8"),
    (sm90(tile=(128, 256, 128), stages=6), "shared memory"),
    (sm90(tile=(256, 256, 64)), "registers"),
    (sm90(cluster=(4, 2)), "cluster"),
    (sm90(tile=(128, 100, 64)), "tile_n"),
    (sm80(tile=(256, 128, 64), warp=(64, 64, 64), stages=5), "shared memory"),
    (sm80(tile=(128, 128, 32), warp=(64, 64, 64)), "warp_k"),
    (sm80(tile=(128, 128, 32), warp=(32, 32, 32)), "4 or 8 warps"),
    (sm80(tile=(128, 128, 32), warp=(128, 128, 32)), "4 or 8 warps"),
])
def test_space_constraints_reject(cfg, fragment):
    assert not space.is_valid(cfg)
    assert any(fragment in p for p in space.problems(cfg)), space.problems(cfg)


def test_enumerate_keeps_only_valid_configs_and_filters():
    sm90_f16_row = space.enumerate(arch="sm90", acc="f16", b_layout="row")
    assert sm90_f16_row and all(c.family == "sm90" and c.acc == "f16" and c.b_layout == "row" for c in sm90_f16_row)
    assert all(space.is_valid(c) for c in space.enumerate())
    # f16 accumulators take half the registers: more big-tile configs fit than with f32
    assert len(space.enumerate(arch="sm90", acc="f16")) > len(space.enumerate(arch="sm90", acc="f32"))
    assert all(c.schedule == "cooperative" for c in space.enumerate(arch="sm90") if c.scheduler == "streamk")
    unaligned = space.enumerate(arch="sm80", alignments=(2,))
    assert unaligned and all(c.alignment == 2 for c in unaligned)


def test_smoke_covers_each_family_accumulator_layout_and_is_in_default():
    smoke = space.variant_set("smoke")
    combos = {(c.family, c.acc, c.b_layout) for c in smoke}
    assert combos == {(f, a, b) for f in ("sm90", "sm80") for a in ("f32", "f16") for b in ("row", "col")}
    assert set(smoke) <= set(space.variant_set("default"))
    sm90s = [c for c in smoke if c.family == "sm90"]
    assert {c.schedule for c in sm90s} == {"cooperative", "pingpong"}
    assert {c.scheduler for c in sm90s} == {"persistent", "streamk"}
    assert any(c.cluster != (1, 1) for c in sm90s)


def test_default_set_size_and_coverage():
    default = space.variant_set("default")
    assert 24 <= len(default) <= 40
    assert len(set(default)) == len(default)
    for acc in ("f32", "f16"):
        for bl in ("row", "col"):
            part = [c for c in default if c.acc == acc and c.b_layout == bl]
            assert any(c.family == "sm80" for c in part)
            assert any(c.family == "sm90" and c.tile[0] == 64 for c in part)  # small-M
            assert any(c.family == "sm90" and c.scheduler == "streamk" for c in part)  # long-K


@pytest.mark.parametrize("name, layout", [("wide", "col"), ("wide_row", "row")])
def test_wide_sets_extend_default_for_one_layout(name, layout):
    wide = space.variant_set(name)
    default = {c for c in space.variant_set("default") if c.b_layout == layout}
    assert {c.b_layout for c in wide} == {layout} and default <= set(wide)
    assert len(wide) == len(set(wide)) == len(default) + 30


def test_pdl_twins_differ_from_their_base_only_in_pdl_and_name():
    pdl = space.variant_set("pdl")
    base = {replace(c, pdl=False) for c in pdl}
    wide = set(space.variant_set("wide"))
    assert pdl and all(c.pdl and c.family == "sm90" and c.name.endswith("_pdl") for c in pdl)
    assert base <= wide  # each twin's non-PDL base is already built and tuned: the comparison is like for like
    assert set(space.variant_set("wide_pdl")) == wide | set(pdl)


def test_pdl_mid_variants_are_new_valid_pdl_variants_and_wide_pdl_mid_is_everything_to_tune():
    mid = space.variant_set("pdl_mid")
    before = set(space.variant_set("wide_pdl"))
    assert mid and all(c.pdl and c.family == "sm90" and space.is_valid(c) for c in mid)
    assert not set(mid) & before and len(set(mid)) == len(mid)  # new objects to build, none built twice
    assert set(space.variant_set("wide_pdl_mid")) == before | set(mid)


def test_pdl_field_is_left_out_of_dicts_unless_set():
    assert "pdl" not in sm90().to_dict()  # tables and records written before the field existed stay identical
    on = sm90(pdl=True)
    d = json.loads(json.dumps(on.to_dict()))
    assert d["pdl"] is True and KernelConfig.from_dict(d) == on and on != sm90()
    with pytest.raises(ValueError, match="programmatic dependent launch"):
        sm80(pdl=True)
    with pytest.raises(ValueError, match="pdl must be a bool"):
        sm90(pdl=1)


def test_l2_promotion_is_an_sm90_field_left_out_of_dicts_unless_set():
    assert "l2_promotion" not in sm90().to_dict()  # tables and records written before the field stay identical
    on = sm90(l2_promotion=256)
    d = json.loads(json.dumps(on.to_dict()))
    assert d["l2_promotion"] == 256 and KernelConfig.from_dict(d) == on and on.name == sm90().name + "_l2p256"
    with pytest.raises(ValueError, match="l2_promotion 128 not in"):
        sm90(l2_promotion=128)
    with pytest.raises(ValueError, match="only sm90 variants set l2_promotion"):
        sm80(l2_promotion=256)
    experiment = space.variant_set("l2promo")
    assert experiment and all(c.l2_promotion == 256 and space.is_valid(c) for c in experiment)
    # each one's 128-byte twin is what the tables run: the experiment times like against like
    assert {replace(c, l2_promotion=0) for c in experiment} <= set(space.variant_set("tables"))


def test_l2_prefetch_is_a_pdl_field_left_out_of_dicts_unless_set():
    assert "l2_prefetch" not in sm90(pdl=True).to_dict()  # tables and records written before the field stay identical
    on = sm90(pdl=True, l2_prefetch=True)
    d = json.loads(json.dumps(on.to_dict()))
    assert d["l2_prefetch"] is True and KernelConfig.from_dict(d) == on
    assert on.name == sm90(pdl=True).name + "_l2pf"
    with pytest.raises(ValueError, match="l2_prefetch needs pdl"):
        sm90(l2_prefetch=True)
    splitk = KernelConfig("splitk", "f32", "col", (64, 64, 64), stages=4, schedule="cluster", pdl=True,
                          l2_prefetch=True)
    assert splitk.name == "splitk_f32_col_t64x64x64_s4_cl_a8_pdl_l2pf" and space.is_valid(splitk)
    with pytest.raises(ValueError, match="l2_prefetch needs pdl"):
        replace(splitk, pdl=False)
    with pytest.raises(ValueError, match="sm80 has no l2_prefetch"):
        sm80(l2_prefetch=True)
    capped = sm90(pdl=True, l2_prefetch=True, l2_prefetch_kb=64)
    assert capped.name == on.name + "64k" and "l2_prefetch_kb" not in on.to_dict()
    assert KernelConfig.from_dict(json.loads(json.dumps(capped.to_dict()))) == capped
    for bad in (dict(l2_prefetch_kb=64), dict(l2_prefetch=True, l2_prefetch_kb=40),
                dict(l2_prefetch=True, l2_prefetch_kb=-16)):
        with pytest.raises(ValueError, match="l2_prefetch_kb"):
            sm90(pdl=True, **bad)
    splitk_capped = replace(splitk, l2_prefetch_kb=64)
    assert splitk_capped.name == splitk.name + "64k" and splitk_capped.l2_prefetch_k_tiles == 4  # 16 KB k-tiles
    assert replace(splitk_capped, tile=(128, 128, 64)).l2_prefetch_k_tiles == 2  # 32 KB
    assert replace(splitk_capped, l2_prefetch_kb=16, tile=(128, 128, 64)).l2_prefetch_k_tiles == 1  # at least one
    assert splitk.l2_prefetch_k_tiles == 0  # uncapped: the pipeline's depth
    with pytest.raises(ValueError, match="l2_prefetch_kb caps an l2_prefetch variant"):
        replace(splitk, l2_prefetch=False, l2_prefetch_kb=64)
    with pytest.raises(ValueError, match="l2_prefetch must be a bool"):
        sm90(pdl=True, l2_prefetch=1)
    experiment = space.variant_set("l2_prefetch")
    assert experiment and all(c.l2_prefetch and c.b_layout == "col" and space.is_valid(c) for c in experiment)
    # twins only where the kernel has one: a cooperative split-K kernel (the H100 overlay runs one since session 50)
    # has none, so the twin sets over the tables' variants leave it out
    assert space.l2_prefetch_twin(replace(splitk, l2_prefetch=False)) == replace(splitk, l2_prefetch=True)
    coop = KernelConfig("splitk", "f16", "col", (128, 64, 64), stages=8, schedule="cooperative", pdl=True)
    assert space.is_valid(coop) and space.l2_prefetch_twin(coop) is None
    with pytest.raises(ValueError, match="splitk cooperative has no l2_prefetch twin"):
        replace(coop, l2_prefetch=True)
    # the twins of the pdl variants the tables run (or ran, before their graph choices moved to the twin), and every
    # twin the tables run
    tables = set(space.variant_set("tables"))
    assert all(c in tables or replace(c, l2_prefetch=False) in tables for c in experiment)
    run = {c for c in tables if c.l2_prefetch and c.b_layout == "col" and c.family == "sm90"}
    assert {c for c in run if not c.l2_prefetch_kb} <= set(experiment)
    # the capped twins: one per col twin, the same kernel with the cap; the tables run some (session 32)
    capped_set = space.variant_set("l2_prefetch_capped")
    assert {replace(c, l2_prefetch_kb=0) for c in capped_set} == set(experiment)
    assert {c for c in run if c.l2_prefetch_kb} <= set(capped_set)
    assert all(c.l2_prefetch_kb == space.L2_PREFETCH_CAP_KB for c in capped_set)
    # the splitk twins: both layouts, each the twin of a splitk pdl variant the tables run
    splitk_twins = space.variant_set("l2_prefetch_splitk")
    assert {c.b_layout for c in splitk_twins} == {"col", "row"} and len(set(splitk_twins)) == len(splitk_twins)
    assert all(c.family == "splitk" and c.l2_prefetch and (replace(c, l2_prefetch=False) in tables or c in tables)
               for c in splitk_twins)
    # the capped experiments of session 32: row sm90, both layouts' splitk, one per full twin of the tables' variants
    capped_row = space.variant_set("l2_prefetch_capped_row")
    assert {replace(c, l2_prefetch_kb=0) for c in capped_row} == set(space.variant_set("l2_prefetch_row"))
    splitk_capped = space.variant_set("l2_prefetch_splitk_capped")
    assert {replace(c, l2_prefetch_kb=0) for c in splitk_capped} == set(splitk_twins)
    assert all(c.l2_prefetch_kb == space.L2_PREFETCH_CAP_KB for c in capped_row + splitk_capped)


def test_unknown_set_raises():
    with pytest.raises(KeyError, match="unknown variant set"):
        space.variant_set("nope")


@pytest.mark.parametrize("m, n, k, ok", [
    (4096, 4096, 4096, True), (64, 4096, 64, True), (1, 8, 8, True),
    (127, 256, 512, True),           # M is free: it is never the contiguous extent
    (127, 255, 511, False), (128, 256, 511, False), (128, 250, 512, False),
    (0, 8, 8, False), (8, 8, 2**31, False),
])
def test_supports_alignment8(m, n, k, ok):
    assert space.supports(sm90(), m, n, k) is ok
    assert space.supports(sm80(), m, n, k) is ok


def test_supports_smaller_alignment():
    a2 = sm80(alignment=2)
    assert space.supports(a2, 127, 254, 510)
    assert not space.supports(a2, 127, 255, 511)


def test_runtime_knobs():
    assert space.runtime_knobs(sm90(scheduler="streamk"))["splits"][-1] > 1
    assert space.runtime_knobs(sm90())["splits"] == (0, 1)
    assert space.runtime_knobs(sm80())["swizzle"] == (0,)
    assert 4 in space.runtime_knobs(sm80())["splits"]


def test_splits_fit_whole_16_byte_steps_of_k_and_only_limit_splitk():
    cfg = splitk()
    assert space.splits_fit(cfg, 4096, 32) and space.splits_fit(cfg, 256, 32)
    assert not space.splits_fit(cfg, 64, 32) and not space.splits_fit(cfg, 128, 32)  # the kernel refuses these
    assert space.splits_fit(cfg, 64, 8) and space.splits_fit(cfg, 64, 0) and space.splits_fit(cfg, 64, 1)
    assert space.splits_fit(sm80(), 64, 16)  # sm80's serial split-K takes any K


def test_variant_sets_joins_sets_once_each_in_order():
    default, row = space.variant_set("default"), space.variant_set("tables_row")
    joined = space.variant_sets("default, tables_row,")
    assert [c.name for c in joined[:len(default)]] == [c.name for c in default]
    assert {c.name for c in joined} == {c.name for c in default} | {c.name for c in row}
    assert len(joined) == len({c.name for c in joined})
    with pytest.raises(KeyError, match="unknown variant set"):
        space.variant_sets("default,nope")


def splitk(**kw):
    base = dict(family="splitk", acc="f32", b_layout="col", tile=(128, 128, 64), stages=4, pdl=True)
    base.update(kw)
    return KernelConfig(**base)


def test_splitk_names_structure_and_constraints():
    assert splitk().name == "splitk_f32_col_t128x128x64_s4_a8_pdl"
    assert splitk(stages=0, pdl=False, acc="f16", b_layout="row").name == "splitk_f16_row_t128x128x64_sauto_a8"
    for kw, fragment in [(dict(cluster=(2, 1)), "clusters"), (dict(schedule="pingpong"), "schedule"),
                         (dict(warp=(64, 64, 64)), "warp tile")]:
        with pytest.raises(ValueError, match=fragment):
            splitk(**kw)
    for cfg, fragment in [(splitk(tile=(256, 64, 64)), "tile_m must be 64 or 128"),
                          (splitk(tile=(128, 256, 64)), "registers"),
                          (splitk(stages=2), "stages >= 3"), (splitk(alignment=4), "alignment=8"),
                          (splitk(tile=(64, 64, 32)), "tile_k")]:
        assert any(fragment in p for p in space.problems(cfg)), (cfg, space.problems(cfg))
    d = json.loads(json.dumps(splitk().to_dict()))
    assert KernelConfig.from_dict(d) == splitk()


def test_splitk_cluster_variants_have_their_own_name_template_and_split_counts():
    from kernels.codegen.generate import generate, template_for

    cfg = splitk(schedule="cluster", stages=6)
    assert cfg.name == "splitk_f32_col_t128x128x64_s6_cl_a8_pdl"
    assert template_for(cfg) == "splitk_cluster.cu.tmpl" and template_for(splitk()) == "splitk.cu.tmpl"
    source = generate(cfg)
    assert "splitk_cluster_kernel" in source and "constexpr int kStages = 6;" in source
    assert "CUTLASS_ENABLE_GDC_FOR_SM90" in source  # pdl: the grid dependency hooks are compiled in
    assert "CUTLASS_ENABLE_GDC_FOR_SM90" not in generate(splitk(schedule="cluster", stages=6, pdl=False))
    assert any("explicit stage count" in p for p in space.problems(splitk(schedule="cluster", stages=0)))
    # the fp32 partial tile reuses the pipeline's stages: two stages of 128x128x64 (64 KiB) still hold it (68 KiB)
    assert space.smem_bytes(splitk(schedule="cluster", stages=2)) >= 128 * 136 * 4
    with pytest.raises(ValueError, match="schedule"):
        splitk(schedule="pingpong")
    # splits = the CTAs of one cluster: powers of two up to the largest (non-portable) cluster, 16
    assert space.runtime_knobs(cfg)["splits"] == (0, 2, 4, 8, 16)
    configs = space.variant_set("splitk_cluster")
    assert {(c.acc, c.b_layout) for c in configs} == {(a, b) for a in ("f32", "f16") for b in ("row", "col")}
    assert all(c.schedule == "cluster" and c.pdl and space.is_valid(c) for c in configs)
    assert space.config_named(configs[0].name) == configs[0]
    # one warpgroup up to 128x128 (KernelTma's TiledMma); wider tiles split their rows over two
    assert all(space.splitk_cluster_warpgroups(c) == 1 for c in configs)
    assert "using TiledMma = typename CollectiveMainloop::TiledMma;" in source
    wide = splitk(schedule="cluster", tile=(128, 256, 64), stages=3)
    assert space.splitk_cluster_warpgroups(wide) == 2 and space.acc_regs_per_thread(wide) == 128
    assert space.is_valid(wide)
    assert "constexpr int kThreads = 256;" in generate(wide) and "cute::_2, cute::_1, cute::_1" in generate(wide)
    assert space.splitk_cluster_warpgroups(splitk(schedule="cluster", tile=(64, 256, 64), stages=4)) == 1  # 64 rows
    assert all(space.splitk_cluster_warpgroups(c) == 2 and space.is_valid(c)
               for c in space.variant_set("splitk_cluster_wide"))
    # clusters of 2 or 4 M-tiles multicasting B: named apart, at most 16 CTAs per cluster, the M-tile group in the
    # source; other cluster shapes (N-tiles, 8 M-tiles) are refused; the one-M-tile source says kClusterM = 1
    mc = space.variant_set("splitk_cluster_mc")
    assert all(space.is_valid(c) and c.cluster in ((2, 1), (4, 1)) for c in mc)
    assert {c.name.split("_cl_")[1][:4] for c in mc} == {"c2x1", "c4x1"} and len({c.name for c in mc}) == len(mc)
    assert all(space.config_named(c.name) == c for c in mc)
    assert space.runtime_knobs(replace(configs[0], cluster=(2, 1)))["splits"] == (0, 2, 4, 8)
    assert space.runtime_knobs(replace(configs[0], cluster=(4, 1)))["splits"] == (0, 2, 4)
    for bad in (dict(cluster=(1, 2)), dict(cluster=(8, 1)), dict(schedule="", stages=4, cluster=(2, 1))):
        with pytest.raises(ValueError, match="M-tiles"):
            replace(configs[0], **bad)
    assert "constexpr int kClusterM = 4;" in generate(replace(configs[0], cluster=(4, 1)))
    assert "constexpr int kClusterM = 1;" in generate(configs[0])
    # the twins without PDL, for measured lone-call times: the same tiles, no grid dependency control at all
    lone = space.variant_set("splitk_cluster_lone")
    assert [replace(c, pdl=True) for c in lone] == configs and not any(c.pdl for c in lone)
    assert all(space.config_named(c.name) == c and not c.name.endswith("_pdl") for c in lone)
    assert "constexpr bool kPdl = false;" in generate(lone[0])


def test_splitk_cooperative_variants_are_the_l2_reduction_on_two_consumer_warpgroups():
    from kernels.codegen.generate import template_for

    cfg = splitk(schedule="cooperative", stages=6)
    assert cfg.name == "splitk_f32_col_t128x128x64_s6_coop_a8_pdl" and space.is_valid(cfg)
    assert template_for(cfg) == "splitk.cu.tmpl"                     # KernelTma's template, another mainloop
    assert space.acc_regs_per_thread(cfg) == 64                        # the tile's rows over two warpgroups
    assert space.runtime_knobs(cfg) == space.runtime_knobs(splitk())   # splits as splitk's, no raster or swizzle
    for bad, fragment in [(dict(tile=(64, 128, 64)), "tile_m must be 128 or 256"),
                          (dict(stages=0), "explicit stage count"), (dict(stages=9), "shared memory")]:
        problems = space.problems(splitk(**{"schedule": "cooperative", "stages": 6, **bad}))
        assert any(fragment in p for p in problems), (bad, problems)
    with pytest.raises(ValueError, match="l2_prefetch"):
        splitk(schedule="cooperative", stages=6, l2_prefetch=True)
    configs = space.variant_set("splitk_coop")
    assert {(c.acc, c.b_layout) for c in configs} == {(a, b) for a in ("f32", "f16") for b in ("row", "col")}
    assert all(c.schedule == "cooperative" and c.pdl and space.is_valid(c) for c in configs)
    assert all(space.config_named(c.name) == c for c in configs) and len({c.name for c in configs}) == len(configs)


def test_splitk_set_covers_both_accumulators_and_layouts_and_splits_only():
    configs = space.variant_set("splitk")
    assert {(c.acc, c.b_layout) for c in configs} == {(a, b) for a in ("f32", "f16") for b in ("row", "col")}
    assert all(c.family == "splitk" and c.pdl and space.is_valid(c) for c in configs)
    knobs = space.runtime_knobs(configs[0])
    assert knobs["raster"] == (0,) and knobs["swizzle"] == (0,)
    # every split count a power of two, so that it divides each K of the grid (multiples of 64) into 16-byte steps
    assert all(s == 0 or (s & (s - 1)) == 0 for s in knobs["splits"]) and max(knobs["splits"]) >= 16
    assert space.config_named(configs[0].name) == configs[0]
