"""The dispatcher's decisions and guards, on the CPU.

The real Dispatcher, tables (KernelConfig, space.supports, space.runtime_knobs) and padding run as they do on the
GPU; only the two GPU-side parts are replaced by launchers that compute with torch on the CPU: the kernel loader
(FakeKernel: correct, raising, or wrong on purpose) and the cuBLAS arm (TorchArm). They record every call, so the
tests can see which launcher ran on which (possibly padded) shape.
"""
from __future__ import annotations

import logging
import random

import pytest
import torch

import kernels
from kernels import space
from kernels.config import KernelConfig
from kernels.dispatch import FALLBACK_REASONS, Dispatcher, canary_tolerance, torch_gemm, validate_operands
from kernels.padding import PadBufferPool, PaddedLauncher, pad_targets
from kernels.runtime import KernelLaunchError, KernelNotBuilt
from kernels.tuned_tables import TableError, TunedTable

from gemm_operands import operands, rel_err

SM90_ROW = KernelConfig("sm90", "f32", "row", (128, 128, 64), schedule="cooperative", scheduler="persistent")
SM90_COL = KernelConfig("sm90", "f32", "col", (64, 128, 64), schedule="pingpong", scheduler="persistent")
SM80_COL_A2 = KernelConfig("sm80", "f32", "col", (64, 64, 64), warp=(32, 32, 64), stages=5, alignment=2)
SM80_F16 = KernelConfig("sm80", "f16", "row", (64, 64, 64), warp=(32, 32, 64), stages=5)


class FakeKernel:
    """A built variant stand-in: `ok` computes C = A @ B, `raises` fails its launch, `wrong` returns a wrong C.
    Like the real one it rejects bad operands (TypeError / ValueError) before launching; it also refuses shapes the
    real variant could not run, so a dispatcher bug shows up as a kernel error."""

    def __init__(self, cfg: KernelConfig, mode: str = "ok"):
        self.cfg, self.mode, self.calls = cfg, mode, []

    def __call__(self, a, b, out, *, raster=0, swizzle=0, splits=0):
        m, k = a.shape
        n = b.shape[1] if self.cfg.b_layout == "row" else b.shape[0]
        validate_operands(a, b, out, m, n)  # like CompiledKernel: bad operands raise before any launch
        self.calls.append(((m, n, k), (raster, swizzle, splits)))
        assert space.supports(self.cfg, m, n, k), f"dispatcher launched {self.cfg.name} on unsupported {m}x{n}x{k}"
        if self.mode == "raises":
            raise KernelLaunchError(self.cfg.name, 7, " (fake launch failure)")
        torch_gemm(a, b, out, b_layout=self.cfg.b_layout)
        if self.mode == "wrong":
            out[: max(1, m // 4)] = 0  # a lost tile: plausible, finite, wrong
        return out


class FakeLoader:
    """runtime.load stand-in. modes[name]: 'ok' | 'raises' | 'wrong' | 'not_built' | 'load_error'."""

    def __init__(self, modes: dict[str, str] | None = None):
        self.modes, self.loaded, self.load_calls = modes or {}, {}, 0

    def __call__(self, cfg):
        self.load_calls += 1
        mode = self.modes.get(cfg.name, "ok")
        if mode == "not_built":
            raise KernelNotBuilt(f"{cfg.name}: not built")
        if mode == "load_error":
            raise OSError(f"{cfg.name}: invalid ELF header")
        return self.loaded.setdefault(cfg.name, FakeKernel(cfg, mode))


class TorchArm:
    """cuBLAS arm stand-in with the arm call signature; `fails` mimics a CublasError status."""

    def __init__(self, kernel: str, options: dict, fails: bool = False):
        self.kernel, self.options, self.calls, self.fails, self.accs = kernel, options, 0, fails, []

    def __call__(self, a, b, out, *, b_layout, acc):
        validate_operands(a, b, out, a.shape[0], b.shape[1] if b_layout == "row" else b.shape[0])
        self.calls += 1
        self.accs.append(acc)
        if self.fails:
            raise RuntimeError("cublasLtMatmul failed with status 15 (fake)")
        return torch_gemm(a, b, out, b_layout=b_layout, acc=acc)


class Arms:
    def __init__(self, failing=()):
        self.made: dict[tuple, TorchArm] = {}
        self.failing = set(failing)

    def __call__(self, kernel, options):
        arm = TorchArm(kernel, options, fails=kernel in self.failing)
        self.made[(kernel, tuple(sorted(options.items())))] = arm
        return arm

    def calls(self, kernel="cublas", **options) -> int:
        arm = self.made.get((kernel, tuple(sorted(options.items()))))
        return arm.calls if arm else 0


def table(acc: str, *entries: dict) -> TunedTable:
    return TunedTable.from_dict({"meta": {"arch": "sm90", "acc": acc, "gpu": "test"}, "entries": list(entries)})


def entry(cfg: KernelConfig, m: int, n: int, k: int, **runtime) -> dict:
    return {"m": m, "n": n, "k": k, "b_layout": cfg.b_layout, "kernel": cfg.name, "config": cfg.to_dict(),
            "runtime": runtime}


def make(tables=(), modes=None, failing_arms=(), **kwargs):
    loader, arms = FakeLoader(modes), Arms(failing_arms)
    by_acc = {t.acc: t for t in tables}
    kwargs.setdefault("lt_align_bytes", 64)  # torch's CPU allocations are 64-byte aligned (CUDA ones 256+)
    d = Dispatcher(tables=by_acc, load_kernel=loader, arm_factory=arms, arch="sm90", **kwargs)
    return d, loader, arms


def poisoned(m, n):
    return torch.full((m, n), float("nan"), dtype=torch.float16)


def run_checked(d, m, n, k, b_layout="row", acc="f32", seed=0):
    a, b = operands(m, n, k, b_layout, seed)
    out, sel = d.run(a, b, b_layout, acc, out=poisoned(m, n))
    assert rel_err(out, a, b, b_layout) < 1e-2, sel
    return sel


# ---- the chain --------------------------------------------------------------------------------------------------
def test_exact_table_entry_runs_the_variant_with_its_runtime_knobs():
    d, loader, arms = make([table("f32", entry(SM90_ROW, 256, 512, 128, raster=2, swizzle=4))])
    sel = run_checked(d, 256, 512, 128)
    assert (sel.kernel, sel.fallback, sel.padded) == (SM90_ROW.name, None, None)
    assert loader.loaded[SM90_ROW.name].calls == [((256, 512, 128), (2, 4, 0))]
    assert arms.calls() == 0


def test_no_table_and_no_predictor_falls_back_to_cublas():
    d, loader, arms = make()
    sel = run_checked(d, 64, 64, 64)
    assert (sel.kernel, sel.fallback) == ("cublas", "no_tuned_kernel")
    assert arms.calls() == 1 and loader.load_calls == 0


def test_an_untuned_f16_request_runs_cublas_with_f32_accumulation_unless_told_otherwise():
    d, _, arms = make()
    sel = run_checked(d, 64, 64, 64, acc="f16")
    assert (sel.kernel, sel.fallback, sel.acc) == ("cublas", "no_tuned_kernel", "f32")
    assert run_checked(d, 64, 64, 64, acc="f32").acc is None
    assert arms.made[("cublas", ())].accs == ["f32", "f32"]
    d, _, arms = make(fallback_f16_acc="f16")
    assert run_checked(d, 64, 64, 64, acc="f16").acc is None
    assert arms.made[("cublas", ())].accs == ["f16"]
    with pytest.raises(ValueError, match="fallback_f16_acc"):
        make(fallback_f16_acc="f64")


def test_new_tables_take_over_every_cached_decision():
    d, _, arms = make()
    assert run_checked(d, 256, 512, 128).fallback == "no_tuned_kernel"       # decided and cached
    d.set_tables({"f32": table("f32", entry(SM90_ROW, 256, 512, 128))})
    sel = run_checked(d, 256, 512, 128)
    assert (sel.kernel, sel.fallback) == (SM90_ROW.name, None)
    d.set_tables({})
    assert run_checked(d, 256, 512, 128).fallback == "no_tuned_kernel"
    assert arms.calls() == 2


def test_table_for_other_accumulator_is_not_used():
    d, _, _ = make([table("f32", entry(SM90_ROW, 64, 64, 64))])
    assert d.select(64, 64, 64, "row", "f16").fallback == "no_tuned_kernel"
    assert d.select(64, 64, 64, "col", "f32").fallback == "no_tuned_kernel"


def test_table_may_choose_a_cublas_arm_which_is_not_a_fallback():
    t = table("f32", {"m": 64, "n": 4096, "k": 64, "b_layout": "col", "kernel": "cublaslt",
                      "config": {"algo_index": 3}})
    d, _, arms = make([t])
    sel = run_checked(d, 64, 4096, 64, "col")
    assert (sel.kernel, sel.fallback) == ("cublaslt", None)
    assert arms.calls("cublaslt", algo_index=3) == 1


def test_an_f16_table_may_run_an_f32_accumulating_arm_or_variant():
    t = table("f16", {"m": 64, "n": 4096, "k": 64, "b_layout": "col", "kernel": "cublaslt", "acc": "f32",
                      "config": {"algo_index": 3}},
              {**entry(SM90_COL, 128, 256, 64), "acc": "f32"})
    d, loader, arms = make([t])
    sel = run_checked(d, 64, 4096, 64, "col", acc="f16")
    assert (sel.kernel, sel.fallback, sel.acc) == ("cublaslt", None, "f32")
    assert arms.made[("cublaslt", (("algo_index", 3),))].accs == ["f32"]
    sel = run_checked(d, 128, 256, 64, "col", acc="f16")
    assert (sel.kernel, sel.fallback, sel.acc) == (SM90_COL.name, None, "f32")
    assert loader.loaded[SM90_COL.name].calls == [((128, 256, 64), (0, 0, 0))]
    # without the key the entry runs the table's own accumulator
    plain = table("f16", {"m": 64, "n": 64, "k": 64, "b_layout": "row", "kernel": "cublas"})
    d, _, arms = make([plain])
    assert run_checked(d, 64, 64, 64, acc="f16").acc is None
    assert arms.made[("cublas", ())].accs == ["f16"]


def test_calls_captured_into_a_cuda_graph_run_the_entrys_graph_choice(monkeypatch):
    # eagerly the entry's cheap-launch sm80 variant, under graph capture the faster-kernel cuBLASLt algorithm
    t = table("f16", {**entry(SM80_F16, 64, 64, 64), "graph": {"kernel": "cublaslt", "acc": "f32",
                                                               "config": {"algo_index": 2}}})
    d, loader, arms = make([t])
    monkeypatch.setattr(kernels.dispatch, "_capturing", lambda a: False)
    assert run_checked(d, 64, 64, 64, acc="f16").kernel == SM80_F16.name
    lt = arms.made[("cublaslt", (("algo_index", 2),))]
    assert lt.accs == ["f32"]  # the first eager call ran the graph choice once too: nothing is first used in capture
    run_checked(d, 64, 64, 64, acc="f16")
    assert lt.accs == ["f32"] and len(loader.loaded[SM80_F16.name].calls) == 2
    monkeypatch.setattr(kernels.dispatch, "_capturing", lambda a: True)
    sel = run_checked(d, 64, 64, 64, acc="f16")
    assert (sel.kernel, sel.fallback, sel.acc) == ("cublaslt", None, "f32")
    assert lt.accs == ["f32", "f32"]
    assert d.select(64, 64, 64, "row", "f16", captured=True) is sel
    assert d.select(64, 64, 64, "row", "f16").kernel == SM80_F16.name  # both stay cached side by side
    assert len(loader.loaded[SM80_F16.name].calls) == 2


def test_the_graph_choice_is_warmed_on_the_first_eager_call_even_when_the_shape_was_selected_before(monkeypatch):
    # select() fills the selection cache without operands; the benchmark selects `ours` before calling it. The first
    # eager call must still run the graph choice once, or its first use (a cuBLAS handle's creation) lands in a
    # capture, which refuses it (session 26: `ours` fell back to event timing beside cuBLASLt autotuning)
    t = table("f16", {**entry(SM80_F16, 64, 64, 64), "graph": {"kernel": "cublaslt", "acc": "f32",
                                                               "config": {"algo_index": 2}}})
    d, loader, arms = make([t])
    monkeypatch.setattr(kernels.dispatch, "_capturing", lambda a: False)
    assert d.select(64, 64, 64, "row", "f16").kernel == SM80_F16.name
    assert ("cublaslt", (("algo_index", 2),)) not in arms.made
    run_checked(d, 64, 64, 64, acc="f16")
    lt = arms.made[("cublaslt", (("algo_index", 2),))]
    assert lt.accs == ["f32"]
    run_checked(d, 64, 64, 64, acc="f16")
    assert lt.accs == ["f32"]  # once per shape
    d.clear_cache()  # decisions remade: warmed again on the next eager call
    run_checked(d, 64, 64, 64, acc="f16")
    assert lt.accs == ["f32", "f32"]


def test_the_benchmarks_ours_names_the_eager_and_the_graph_choice():
    # kernel-only figures come from graph replay, i.e. the graph choice: a record naming only the eager kernel
    # attributes the time to the wrong kernel
    from tuner.competitors import ours_dispatcher

    t = table("f16", {**entry(SM80_F16, 64, 64, 64), "graph": {"kernel": "cublaslt", "acc": "f32",
                                                               "config": {"algo_index": 2}}})
    d, _, _ = make([t])
    info = ours_dispatcher(64, 64, 64, "row", "f16", dispatcher=d).info
    assert (info["kernel"], info["graph_kernel"]) == (SM80_F16.name, "cublaslt")
    assert (info["run_acc"], info["graph_run_acc"]) == ("f16", "f32")  # the graph entry chose fp32 accumulation
    info = ours_dispatcher(64, 64, 128, "row", "f16", dispatcher=d).info  # not in the table: cuBLAS both ways
    assert (info["kernel"], info["graph_kernel"]) == ("cublas", "cublas")
    fallback_acc = kernels.dispatch.FALLBACK_F16_ACC   # cuBLAS's f16 fallback accumulates as the dispatcher says
    assert (info["run_acc"], info["graph_run_acc"]) == (fallback_acc, fallback_acc)


def test_the_benchmarks_ours_names_the_cublaslt_algorithm_each_choice_runs():
    # what a grid stamps into a cuBLASLt choice tuned before identities were recorded (tuner.confirm)
    from tuner.competitors import ours_dispatcher

    tuned = identity(66, tile_id=31)
    listed = [identity(1), identity(2), identity(3), tuned]
    graph = {key: value for key, value in lt_entry(64, 64, 64, "row", 2).items()
             if key in ("kernel", "config", "runtime")}
    t = table("f32", {**entry(SM90_ROW, 64, 64, 64), "graph": graph},
              lt_identity_entry(64, 128, 64, "row", 1, tuned))   # tuned at 1, ranked 3 here
    d, _, _ = make([t], lt_identities=lambda *shape: listed)
    info = ours_dispatcher(64, 64, 64, "row", "f32", dispatcher=d).info
    assert info["lt_algo"] is None   # the eager choice is a variant
    assert info["graph_lt_algo"] == {"algo_index": 2, "algo": identity(3)}
    info = ours_dispatcher(64, 128, 64, "row", "f32", dispatcher=d).info
    assert info["lt_algo"] == info["graph_lt_algo"] == {"algo_index": 3, "algo": tuned}   # where it runs here
    d, _, _ = make([t])   # no heuristic list to read: nothing named
    assert ours_dispatcher(64, 64, 64, "row", "f32", dispatcher=d).info["graph_lt_algo"] is None
    assert d.lt_identity(64, 64, 64, "row", "f32", 0) is None


def test_a_graph_choice_that_fails_on_its_eager_try_is_quarantined_before_any_capture(monkeypatch):
    monkeypatch.setattr(kernels.dispatch, "_capturing", lambda a: False)
    with pytest.raises(kernels.tuned_tables.TableError, match=r"graph\.config\.b_layout"):  # checked on loading
        table("f32", {**entry(SM90_ROW, 64, 64, 64), "graph": {"kernel": SM90_COL.name, "config": SM90_COL.to_dict()}})
    t = table("f32", {**entry(SM90_ROW, 64, 64, 64), "graph": {"kernel": "cublaslt", "config": {"algo_index": 1}}})
    d, loader, arms = make([t], failing_arms=("cublaslt",))
    assert run_checked(d, 64, 64, 64).kernel == SM90_ROW.name  # the eager answer is unaffected
    assert d.quarantined() == {"cublaslt": "kernel_error"}
    monkeypatch.setattr(kernels.dispatch, "_capturing", lambda a: True)
    sel = run_checked(d, 64, 64, 64)
    assert (sel.kernel, sel.fallback) == ("cublas", "quarantined")


def test_without_graph_choices_a_call_never_asks_whether_it_is_captured(monkeypatch):
    def asked(a):
        raise AssertionError("_capturing called although no entry has a graph choice")

    d, _, _ = make([table("f32", entry(SM90_ROW, 64, 64, 64))])
    monkeypatch.setattr(kernels.dispatch, "_capturing", asked)
    assert run_checked(d, 64, 64, 64).kernel == SM90_ROW.name
    assert d.select(64, 64, 64, captured=True).kernel == SM90_ROW.name  # the one choice serves captures too


def test_failing_tuned_cublaslt_arm_falls_back_to_gemmex_and_is_quarantined():
    t = table("f32", {"m": 64, "n": 64, "k": 64, "b_layout": "row", "kernel": "cublaslt",
                      "config": {"algo_index": 7}})
    d, _, arms = make([t], failing_arms={"cublaslt"})
    sel = run_checked(d, 64, 64, 64)
    assert (sel.kernel, sel.fallback) == ("cublas", "kernel_error")
    assert d.quarantined() == {"cublaslt": "kernel_error"}
    assert run_checked(d, 64, 64, 64).fallback == "quarantined"


def lt_entry(m, n, k, b_layout, index):
    """A tuned cuBLASLt choice as tuner.tune_cli writes it."""
    return {"m": m, "n": n, "k": k, "b_layout": b_layout, "kernel": "cublaslt",
            "config": {"kind": "lt_algo", "algo_index": index}, "runtime": {"raster": 0, "swizzle": 0, "splits": 0},
            "us": 9.65, "cublas_us": 10.4}


def misaligned(m, n, k, b_layout="row"):
    """Operands whose A starts 2 bytes into its storage (valid, contiguous, fp16-aligned only)."""
    a, b = operands(m, n, k, b_layout)
    storage = torch.empty(m * k + 1, dtype=torch.float16)
    shifted = storage[1:].view(m, k)
    shifted.copy_(a)
    return shifted, b


def test_tuned_cublaslt_entry_binds_lt_algo_with_its_index_when_the_heuristic_list_has_it():
    counts = []
    d, _, arms = make([table("f32", lt_entry(8192, 512, 512, "col", 5))],
                      lt_algo_count=lambda *shape: counts.append(shape) or 12)
    sel = run_checked(d, 8192, 512, 512, "col")
    assert (sel.kernel, sel.fallback, sel.guarded) == ("cublaslt", None, True)
    assert sel.config == {"kind": "lt_algo", "algo_index": 5} and sel.align == 64
    assert arms.calls("cublaslt", kind="lt_algo", algo_index=5) == 1 and arms.calls() == 0
    assert counts == [(8192, 512, 512, "col", "f32")]  # checked once, when the shape was decided
    run_checked(d, 8192, 512, 512, "col", seed=1)
    assert counts == [(8192, 512, 512, "col", "f32")] and arms.calls("cublaslt", kind="lt_algo", algo_index=5) == 2


def test_cublaslt_index_outside_the_heuristic_list_falls_back_for_that_shape_only(caplog):
    # a table from another GPU or cuBLAS: expected, not a failure (no quarantine, no event, one warning per shape)
    events = []
    t = table("f32", lt_entry(64, 64, 64, "row", 9), lt_entry(64, 128, 64, "row", 2))
    d, _, arms = make([t], lt_algo_count=lambda m, n, k, b_layout, acc: 4, on_event=events.append)
    with caplog.at_level(logging.WARNING, logger="kernels.dispatch"):
        sel = run_checked(d, 64, 64, 64)
        run_checked(d, 64, 64, 64, seed=1)
    assert (sel.kernel, sel.fallback) == ("cublas", "tuned_elsewhere")
    assert d.quarantined() == {} and events == []
    assert [r.levelname for r in caplog.records] == ["WARNING"] and "outside the heuristic list" in caplog.text
    assert arms.calls("cublaslt", kind="lt_algo", algo_index=9) == 0
    assert run_checked(d, 64, 128, 64).kernel == "cublaslt"  # other shapes keep their tuned cuBLASLt choice
    d.clear_cache()
    assert d.select(64, 64, 64).fallback == "tuned_elsewhere"


def test_cublaslt_entry_without_a_heuristic_list_falls_back_with_kernel_error():
    def no_list(*shape):
        raise RuntimeError("cuBLASLt plan (descriptors + heuristic) failed with status 7")

    events = []
    d, _, arms = make([table("f32", lt_entry(64, 64, 64, "row", 0))], lt_algo_count=no_list, on_event=events.append)
    assert run_checked(d, 64, 64, 64).fallback == "kernel_error"
    assert d.quarantined() == {"cublaslt[0]@64x64x64/row/f32": "kernel_error"}
    assert [(e.kind, e.reason) for e in events] == [("quarantine", "kernel_error")]
    assert "heuristic list unavailable" in events[0].detail and "status 7" in events[0].detail
    assert arms.calls() == 1 and arms.calls("cublaslt", kind="lt_algo", algo_index=0) == 0


def test_cublaslt_choice_runs_on_cublas_for_pointers_it_was_not_tuned_for():
    d, _, arms = make([table("f32", lt_entry(64, 64, 64, "row", 3))], lt_algo_count=lambda *shape: 32)
    a, b = misaligned(64, 64, 64)
    out, sel = d.run(a, b, "row", "f32", out=poisoned(64, 64))
    assert (sel.kernel, sel.fallback) == ("cublas", "unaligned")
    assert rel_err(out, a, b, "row") < 1e-2
    assert arms.calls("cublaslt", kind="lt_algo", algo_index=3) == 0 and d.quarantined() == {}
    assert run_checked(d, 64, 64, 64).kernel == "cublaslt"  # aligned calls still run the tuned algorithm


def identity(algo_id, tile_id=20, stages_id=8):
    """An algorithm's identity in a cuBLASLt heuristic list (kernels.tuned_tables.LT_IDENTITY)."""
    return {"algo_id": algo_id, "tile_id": tile_id, "stages_id": stages_id, "splitk_num": 1, "reduction_scheme": 0,
            "cta_swizzling": 0, "custom_option": 0, "cluster_shape_id": 2}


def lt_identity_entry(m, n, k, b_layout, index, algo):
    e = lt_entry(m, n, k, b_layout, index)
    e["config"] = dict(e["config"], algo=algo)
    return e


def test_cublaslt_entry_with_its_identity_runs_that_algorithm_where_this_list_ranks_it():
    tuned = identity(66, tile_id=31)
    listed = {(64, 64, 64): [identity(1), tuned, identity(2)],            # tuned at 2, ranked 1 here
              (64, 128, 64): [identity(1), identity(2), tuned, tuned]}     # at its own index: that one
    asked = []
    d, _, arms = make([table("f32", lt_identity_entry(64, 64, 64, "row", 2, tuned),
                             lt_identity_entry(64, 128, 64, "row", 3, tuned))],
                      lt_algo_count=lambda *shape: pytest.fail("an entry with its identity is found by it"),
                      lt_identities=lambda m, n, k, b_layout, acc: asked.append((m, n, k)) or listed[(m, n, k)])
    sel = run_checked(d, 64, 64, 64)
    assert (sel.kernel, sel.fallback) == ("cublaslt", None)
    assert sel.config == {"kind": "lt_algo", "algo_index": 1, "algo": tuned}   # what runs, as run
    assert arms.calls("cublaslt", kind="lt_algo", algo_index=1) == 1
    assert arms.calls("cublaslt", kind="lt_algo", algo_index=2) == 0
    assert run_checked(d, 64, 128, 64).config["algo_index"] == 3
    run_checked(d, 64, 64, 64, seed=1)
    assert asked == [(64, 64, 64), (64, 128, 64)]   # looked up once per shape, when it was decided


def test_cublaslt_entry_whose_algorithm_this_list_lacks_falls_back_for_that_shape_only(caplog):
    tuned = identity(66, tile_id=31)
    events = []
    d, _, arms = make([table("f32", lt_identity_entry(64, 64, 64, "row", 1, tuned),
                             lt_identity_entry(64, 128, 64, "row", 0, identity(5)))],
                      lt_identities=lambda m, n, k, *rest: [identity(5), identity(66)],   # same id, other tile
                      on_event=events.append)
    with caplog.at_level(logging.WARNING, logger="kernels.dispatch"):
        sel = run_checked(d, 64, 64, 64)
    assert (sel.kernel, sel.fallback) == ("cublas", "tuned_elsewhere")
    assert d.quarantined() == {} and events == []
    assert "not in this heuristic list of 2" in caplog.text
    assert arms.calls("cublaslt", kind="lt_algo", algo_index=1) == 0
    assert arms.calls("cublaslt", kind="lt_algo", algo_index=0) == 0
    assert run_checked(d, 64, 128, 64).kernel == "cublaslt"


def test_cublaslt_identity_is_validated_in_tables():
    good_entry = lt_identity_entry(64, 64, 64, "row", 1, identity(3))
    assert table("f32", good_entry).lookup(64, 64, 64, "row").config["algo"] == identity(3)
    for algo in ({"algo_id": 3}, dict(identity(3), tile_id="20"), dict(identity(3), extra=1), [1, 2]):
        with pytest.raises(TableError, match="config.algo"):
            table("f32", lt_identity_entry(64, 64, 64, "row", 1, algo))
    no_index = lt_entry(64, 64, 64, "row", 1)
    no_index["config"] = {"kind": "lt_algo", "algo": identity(3)}
    with pytest.raises(TableError, match="config.algo"):
        table("f32", no_index)


def test_variants_have_no_pointer_alignment_guard():
    d, loader, _ = make([table("f32", entry(SM90_ROW, 64, 64, 64))])
    a, b = misaligned(64, 64, 64)
    out, sel = d.run(a, b, "row", "f32", out=poisoned(64, 64))
    assert (sel.kernel, sel.align) == (SM90_ROW.name, 0) and rel_err(out, a, b, "row") < 1e-2


def test_default_arm_factory_and_heuristic_list_match_what_the_tuner_timed(monkeypatch):
    import kernels.cublas as cublas
    from kernels.dispatch import LT_ALIGN_BYTES, _default_arm_factory

    arm = _default_arm_factory("cublaslt", {"kind": "lt_algo", "algo_index": 5})
    assert (arm.kind, arm.algo_index, arm.top_n) == ("lt_algo", 5, cublas.DEFAULT_TOP_N)
    seen = []
    monkeypatch.setattr(cublas, "lt_algorithms", lambda *args, **kw: seen.append((args, kw)) or [0] * 7)
    t = table("f32", lt_entry(64, 64, 64, "col", 6), lt_entry(64, 128, 64, "col", 7))
    d = Dispatcher(tables={"f32": t}, arch="sm90", device=torch.device("cuda", 0))  # real arm factory: no launch
    assert d.select(64, 64, 64, "col").kernel == "cublaslt"
    assert d.select(64, 128, 64, "col").fallback == "tuned_elsewhere"  # index 7 of a list of 7
    assert seen[0] == ((64, 64, 64, "col", "f32", cublas.DEFAULT_TOP_N), {"device": 0, "align_bytes": LT_ALIGN_BYTES})


@pytest.mark.gpu
@pytest.mark.parametrize("capture_on", ["torch's capture stream", "the warm-up stream"])
def test_gpu_a_captured_call_runs_the_graph_choice_and_replays_correctly(capture_on):
    # eager: GemmEx; captured: the heuristic's top cuBLASLt algorithm with fp32 accumulation (an f16 table borrowing).
    # Capturing on the stream that served the eager calls (whose launch the C fast path holds): still the graph choice.
    m, n, k = 256, 512, 1024
    t = table("f16", {"m": m, "n": n, "k": k, "b_layout": "col", "kernel": "cublas",
                      "graph": {"kernel": "cublaslt", "acc": "f32", "config": {"algo_index": 0}}})
    d = Dispatcher.default(tables={"f16": t})
    g = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(m, k, generator=g, device="cuda", dtype=torch.float16)
    b = torch.randn(n, k, generator=g, device="cuda", dtype=torch.float16)
    ref = a.double() @ b.double().t()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up off the default stream, as torch.cuda.graph asks
        for _ in range(3):
            out, eager = d.run(a, b, "col", "f16")
    torch.cuda.current_stream().wait_stream(side)
    side.synchronize()
    assert (eager.kernel, eager.acc) == ("cublas", None)
    assert d.fast_path_stats()["hits"] >= 2
    graph = torch.cuda.CUDAGraph()
    captured_out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    with torch.cuda.graph(graph, stream=side if capture_on == "the warm-up stream" else None):
        _, captured = d.run(a, b, "col", "f16", out=captured_out)
    assert (captured.kernel, captured.acc, captured.fallback) == ("cublaslt", "f32", None)
    graph.replay()
    torch.cuda.synchronize()
    assert ((captured_out.double() - ref).norm() / ref.norm()).item() < 1e-3  # fp32 accumulation's bound
    assert d.quarantined() == {}


FIRST_CALL_CAPTURED = """
import json, sys
import torch
from kernels.dispatch import Dispatcher
m, n, k = map(int, sys.argv[1:4])
d = Dispatcher.default()
g = torch.Generator(device="cuda").manual_seed(0)
a = torch.randn(m, k, generator=g, device="cuda", dtype=torch.float16)
b = torch.randn(n, k, generator=g, device="cuda", dtype=torch.float16)
out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
graph = torch.cuda.CUDAGraph()
with torch.cuda.graph(graph):
    _, sel = d.run(a, b, "col", "f32", out=out)
a.copy_(torch.randn(m, k, generator=g, device="cuda", dtype=torch.float16))
out.fill_(float("nan"))
graph.replay()
torch.cuda.synchronize()
ref = a.double() @ b.double().t()
err = ((out.double() - ref).norm() / ref.norm()).item()
print(json.dumps({"kernel": sel.kernel, "fallback": sel.fallback, "err": err, "quarantined": len(d.quarantined())}))
"""


def _first_captured_shape(kind: str) -> tuple[tuple[int, int, int], str] | None:
    """The smallest f32 col shape of the committed tables whose captured choice on this GPU is of this kind, and that
    choice, as the default dispatcher decides it here: with this card's overlay, and a cuBLASLt entry only where this
    card's heuristic list has its algorithm (elsewhere it falls back, as it should: session 40's H100). None if no
    shape's choice of this kind runs here (e.g. its variant is not built)."""
    from kernels.tuned_tables import load_tables

    shapes = sorted((entry.m * entry.n * entry.k, (entry.m, entry.n, entry.k))
                    for entry in load_tables("sm90")["f32"].entries.values() if entry.b_layout == "col")
    d = Dispatcher.default()
    for _, (m, n, k) in shapes:
        sel = d.select(m, n, k, "col", "f32", captured=True)
        if sel.fallback is None and (sel.kernel == kind or sel.kernel.startswith(kind + "_")):
            return (m, n, k), sel.kernel
    return None


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["sm90", "splitk", "cublas", "cublaslt"])
def test_gpu_a_process_whose_first_gemm_is_captured_replays_it_correctly(kind):
    # Nothing used before the capture: no cuBLAS handle, no loaded variant, no cuBLASLt plan, no workspace. Handle
    # creation allocates (arms.cu relaxes the capture mode for it); a fresh process so that it really is the first.
    import json
    import subprocess
    import sys

    found = _first_captured_shape(kind)
    if found is None:
        pytest.skip(f"no f32 col entry runs {kind} when captured on this GPU")
    (m, n, k), choice = found
    run = subprocess.run([sys.executable, "-c", FIRST_CALL_CAPTURED, str(m), str(n), str(k)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert (got["kernel"], got["fallback"], got["quarantined"]) == (choice, None, 0), (m, n, k, got)
    assert got["err"] < 1e-3, (m, n, k, got)


def _gpu_col_operands(m, n, k):
    """A (M×K) and B (N×K, col layout) on the GPU, and their fp64 product."""
    g = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(m, k, generator=g, device="cuda", dtype=torch.float16)
    b = torch.randn(n, k, generator=g, device="cuda", dtype=torch.float16)
    return a, b, a.double() @ b.double().t()


@pytest.mark.gpu
def test_gpu_tuned_cublaslt_entry_runs_its_algorithm_and_guards_alignment_and_range():
    from kernels.cublas import lt_algorithms

    m, n, k = 256, 512, 1024
    count = len(lt_algorithms(m, n, k, "col", "f32"))
    t = table("f32", lt_entry(m, n, k, "col", count - 1), lt_entry(128, 128, 128, "col", 31))
    d = Dispatcher.default(tables={"f32": t}, canary_rate=1.0)
    a, b, ref = _gpu_col_operands(m, n, k)
    out, sel = d.run(a, b, "col", "f32", out=torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16))
    assert (sel.kernel, sel.fallback, sel.config["algo_index"]) == ("cublaslt", None, count - 1)
    assert ((out.double() - ref).norm() / ref.norm()).item() < 1e-3 and d.quarantined() == {}
    shifted = torch.empty(m * k + 8, device="cuda", dtype=torch.float16)[8:].view(m, k)  # 16-byte aligned only
    shifted.copy_(a)
    out, sel = d.run(shifted, b, "col", "f32")
    assert (sel.kernel, sel.fallback) == ("cublas", "unaligned")
    assert ((out.double() - ref).norm() / ref.norm()).item() < 1e-3
    if len(lt_algorithms(128, 128, 128, "col", "f32")) <= 31:
        assert d.select(128, 128, 128, "col", "f32").fallback == "tuned_elsewhere"


@pytest.mark.gpu
def test_gpu_cublaslt_entry_with_its_identity_runs_that_algorithm():
    # a table from elsewhere: the identity of this list's second algorithm, tuned as the last index; and an identity
    # no list has
    from kernels.cublas import lt_algorithms

    m, n, k = 256, 512, 1024
    listed = lt_algorithms(m, n, k, "col", "f32")
    assert len(listed) >= 2
    wanted = listed[1].identity()
    bogus = dict(wanted, algo_id=10**6)
    t = table("f32", lt_identity_entry(m, n, k, "col", len(listed) - 1, wanted),
              lt_identity_entry(128, 128, 128, "col", 0, bogus))
    d = Dispatcher.default(tables={"f32": t}, canary_rate=1.0)
    a, b, ref = _gpu_col_operands(m, n, k)
    out, sel = d.run(a, b, "col", "f32", out=torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16))
    expected = next(x.index for x in listed if x.identity() == wanted)
    assert (sel.kernel, sel.fallback, sel.config["algo_index"]) == ("cublaslt", None, expected)
    assert ((out.double() - ref).norm() / ref.norm()).item() < 1e-3 and d.quarantined() == {}
    assert d.select(128, 128, 128, "col", "f32").fallback == "tuned_elsewhere"


def test_predictor_fills_shapes_the_table_lacks():
    asked = []

    def predictor(m, n, k, b_layout, acc):
        asked.append((m, n, k, b_layout, acc))
        return (SM90_COL, {"swizzle": 2}) if b_layout == "col" else None

    d, loader, _ = make(predictor=predictor)
    sel = run_checked(d, 128, 256, 64, "col")
    assert (sel.kernel, sel.fallback) == (SM90_COL.name, None)
    assert loader.loaded[SM90_COL.name].calls[0][1] == (0, 2, 0)
    assert run_checked(d, 128, 256, 64, "row").fallback == "no_tuned_kernel"
    assert asked[0] == (128, 256, 64, "col", "f32")


def test_table_wins_over_predictor():
    d, _, _ = make([table("f32", entry(SM90_ROW, 128, 128, 128))], predictor=lambda *shape: SM90_COL)
    assert d.select(128, 128, 128, "row").kernel == SM90_ROW.name


def test_broken_predictor_is_reported_and_ignored():
    events = []

    def predictor(*shape):
        raise RuntimeError("model file missing")

    d, _, _ = make(predictor=predictor, on_event=events.append)
    assert run_checked(d, 64, 64, 64).fallback == "no_tuned_kernel"
    assert [e.kind for e in events] == ["predictor_error"]


def test_prediction_for_the_wrong_accumulator_is_rejected():
    events = []
    d, _, _ = make(predictor=lambda *shape: SM80_F16, on_event=events.append)  # an f16 variant for an f32 call
    assert d.select(64, 64, 64, "row", "f32").fallback == "no_tuned_kernel"
    assert events and events[0].kind == "predictor_error"


# ---- the nearest tuned shape (step 4) ---------------------------------------------------------------------------
def test_nearest_borrows_the_variant_of_the_nearest_tuned_shape_and_says_so():
    t = table("f32", entry(SM90_ROW, 1024, 1024, 1024, raster=1), entry(SM90_COL, 1024, 4096, 1024))
    d, loader, arms = make([t], nearest=1.0)
    # no padded shape within the cost bound is tuned; log2 distance to 1024^3: 0.85, to 1024x4096x1024: 2.6
    sel = run_checked(d, 1500, 704, 1304)
    assert (sel.kernel, sel.fallback, sel.borrowed, sel.padded) == (SM90_ROW.name, None, (1024, 1024, 1024), None)
    assert loader.loaded[SM90_ROW.name].calls == [((1500, 704, 1304), (1, 0, 0))]
    assert arms.calls() == 0
    # off by default, and a tuned shape too far away is not borrowed
    assert make([t])[0].select(1500, 704, 1304).fallback == "no_tuned_kernel"
    assert make([t], nearest=0.8)[0].select(1500, 704, 1304).fallback == "no_tuned_kernel"
    assert d.select(1024, 1024, 1024).borrowed is None  # an exact entry is not borrowed


def test_nearest_pads_when_the_borrowed_variant_needs_alignment():
    d, loader, _ = make([table("f32", entry(SM90_ROW, 1024, 1024, 1024))], nearest=1.0)
    sel = run_checked(d, 1500, 701, 1301)  # N and K not multiples of 8
    assert (sel.kernel, sel.borrowed, sel.padded) == (SM90_ROW.name, (1024, 1024, 1024), (1500, 704, 1304))


def test_an_exact_or_padded_entry_wins_over_a_nearer_neighbour():
    pingpong = KernelConfig("sm90", "f32", "row", (64, 64, 64), schedule="pingpong", scheduler="persistent")
    t = table("f32", entry(SM90_ROW, 128, 256, 512), entry(pingpong, 127, 255, 504))
    d, _, _ = make([t], nearest=1.0)
    sel = d.select(127, 255, 511)  # 127x255x504 is nearer, but 128x256x512 covers it by padding (step 3)
    assert (sel.kernel, sel.borrowed, sel.padded) == (SM90_ROW.name, None, (128, 256, 512))


def test_nearest_does_not_borrow_cublas_or_another_shapes_cublaslt_index():
    t = table("f32", {"m": 1024, "n": 1024, "k": 1024, "b_layout": "col", "kernel": "cublas"},
              lt_entry(2048, 2048, 2048, "col", 5))
    d, _, arms = make([t], nearest=1.0)
    for shape in ((1000, 1000, 1000), (2000, 2000, 2000)):
        sel = run_checked(d, *shape, "col")
        assert (sel.kernel, sel.fallback, sel.borrowed) == ("cublas", "no_tuned_kernel", None)
    assert arms.calls("cublaslt", kind="lt_algo", algo_index=5) == 0


def test_nearest_uses_the_graph_choice_for_captured_calls_and_keeps_a_more_precise_accumulator(monkeypatch):
    t = table("f16", {**entry(SM80_F16, 1024, 1024, 1024),
                      "graph": {"kernel": SM90_ROW.name, "config": SM90_ROW.to_dict(), "acc": "f32"}})
    d, _, _ = make([t], nearest=1.0)
    eager = d.select(1500, 704, 1304, "row", "f16")
    captured = d.select(1500, 704, 1304, "row", "f16", captured=True)
    assert (eager.kernel, eager.acc, eager.borrowed) == (SM80_F16.name, None, (1024, 1024, 1024))
    assert (captured.kernel, captured.acc, captured.borrowed) == (SM90_ROW.name, "f32", (1024, 1024, 1024))


def test_nearest_distance_comes_from_the_environment_for_the_default_dispatcher(monkeypatch):
    from kernels.dispatch import nearest_from_env

    monkeypatch.delenv("HGEMM_NEAREST", raising=False)
    assert nearest_from_env() == 0.0
    monkeypatch.setenv("HGEMM_NEAREST", "1.5")
    assert nearest_from_env() == 1.5
    for bad in ("-1", "far", "nan"):
        monkeypatch.setenv("HGEMM_NEAREST", bad)
        with pytest.raises(ValueError, match="HGEMM_NEAREST"):
            nearest_from_env()
    with pytest.raises(ValueError, match="nearest"):
        make(nearest=-0.5)


def test_table_nearest_is_the_log2_nearest_entry_of_the_layout_with_ties_to_the_larger_shape():
    t = table("f32", entry(SM90_ROW, 64, 64, 64), entry(SM90_ROW, 256, 64, 64), entry(SM90_COL, 90, 64, 64))
    assert t.nearest(90, 64, 64, "row", 2.0).m == 64  # log2 distance 0.49 (the col entry at 90 is another layout)
    assert t.nearest(128, 64, 64, "row", 2.0).m == 256  # 1.0 from both
    assert t.nearest(90, 64, 64, "col", 0.0).m == 90
    assert t.nearest(16, 64, 64, "row", 1.9) is None  # 2.0 from 64


# ---- padding ----------------------------------------------------------------------------------------------------
def test_unaligned_shape_runs_the_variant_on_padded_copies():
    d, loader, arms = make([table("f32", entry(SM90_ROW, 127, 255, 511))])
    sel = run_checked(d, 127, 255, 511)
    assert (sel.kernel, sel.fallback, sel.padded) == (SM90_ROW.name, None, (127, 256, 512))
    assert loader.loaded[SM90_ROW.name].calls[0][0] == (127, 256, 512)
    assert arms.calls() == 0


def test_padded_buffers_stay_zero_across_calls():
    d, _, _ = make([table("f32", entry(SM90_COL, 127, 255, 511))])
    for seed in range(3):  # new data each time through the same cached buffers
        assert run_checked(d, 127, 255, 511, "col", seed=seed).padded == (127, 256, 512)


def test_unaligned_shape_uses_the_entry_of_a_covering_shape():
    d, loader, _ = make([table("f32", entry(SM90_ROW, 128, 256, 512))])
    sel = run_checked(d, 127, 255, 511)
    assert (sel.kernel, sel.fallback, sel.padded) == (SM90_ROW.name, None, (128, 256, 512))
    assert loader.loaded[SM90_ROW.name].calls[0][0] == (128, 256, 512)


def test_an_aligned_shape_is_not_padded_to_reach_a_tuned_one():
    d, loader, arms = make([table("f32", entry(SM90_ROW, 128, 256, 512))])
    sel = run_checked(d, 117, 256, 512)  # M padding alone would reach the entry: cuBLAS runs it as is instead
    assert (sel.kernel, sel.fallback, sel.padded) == ("cublas", "no_tuned_kernel", None)
    assert loader.load_calls == 0 and arms.calls() == 1


def test_shapes_padded_to_the_same_target_do_not_share_buffers():
    d, _, _ = make([table("f32", entry(SM90_ROW, 128, 256, 512))])
    for k in (511, 509, 511):  # a shared buffer would keep the first call's K columns in the second
        assert run_checked(d, 127, 255, k, seed=k).padded == (128, 256, 512)


def test_variant_that_handles_the_alignment_runs_unpadded():
    d, loader, _ = make([table("f32", entry(SM80_COL_A2, 64, 130, 66))])  # alignment 2: 130 and 66 are fine
    sel = run_checked(d, 64, 130, 66, "col")
    assert (sel.kernel, sel.padded) == (SM80_COL_A2.name, None)


def test_unaligned_without_padding_falls_back_with_reason_unaligned():
    d, loader, arms = make([table("f32", entry(SM90_ROW, 127, 255, 511))], pad=False)
    sel = run_checked(d, 127, 255, 511)
    assert (sel.kernel, sel.fallback) == ("cublas", "unaligned")
    assert loader.load_calls == 0


def test_padding_that_would_cost_too_much_is_not_done():
    d, _, _ = make([table("f32", entry(SM90_ROW, 3, 5, 7))])  # 3x8x8 is 3.6x the work
    assert run_checked(d, 3, 5, 7).fallback == "unaligned"


def test_pad_targets_cover_the_shape_within_the_cost_bound():
    targets = pad_targets(127, 255, 511)
    assert targets[0] == (127, 256, 512) and (128, 256, 512) in targets
    for t in targets:
        assert t[0] >= 127 and t[1] >= 255 and t[2] >= 511 and t[0] * t[1] * t[2] <= 1.25 * 127 * 255 * 511
    assert pad_targets(64, 64, 64) == [] or all(t != (64, 64, 64) for t in pad_targets(64, 64, 64))
    assert pad_targets(3, 5, 7) == []


def test_pad_pool_evicts_beyond_its_budget_but_keeps_the_newest():
    pool = PadBufferPool(budget_bytes=3 * 2 * 64 * 64 * 2)  # room for about two sets of 64x64 buffers
    like = torch.empty(1, dtype=torch.float16)
    for i in range(5):
        pool.get(like, ("shape", i), ((64, 64), (64, 64), (64, 64)))
    assert 1 <= len(pool) <= 2 and pool.nbytes <= pool.budget_bytes


def test_padded_launcher_rejects_other_dtypes_instead_of_converting():
    d, _, _ = make([table("f32", entry(SM90_ROW, 127, 255, 511))])
    a, b = operands(127, 255, 511)
    with pytest.raises(TypeError):
        d.gemm(a.float(), b.float())
    with pytest.raises(TypeError):
        d.gemm(a, b, out=torch.empty(127, 255))
    assert d.quarantined() == {}


def test_padded_launcher_refuses_a_smaller_target():
    with pytest.raises(ValueError):
        PaddedLauncher(lambda *x: None, (8, 8, 8), (8, 4, 8), "row", PadBufferPool(1 << 20))


# ---- fallback reasons and quarantine ----------------------------------------------------------------------------
def test_not_built_variant_falls_back_and_is_not_quarantined():
    d, _, arms = make([table("f32", entry(SM90_ROW, 64, 64, 64))], modes={SM90_ROW.name: "not_built"})
    assert run_checked(d, 64, 64, 64).fallback == "not_built"
    assert d.quarantined() == {}


def test_variant_that_fails_to_load_is_quarantined():
    events = []
    d, _, _ = make([table("f32", entry(SM90_ROW, 64, 64, 64), entry(SM90_ROW, 128, 64, 64))],
                   modes={SM90_ROW.name: "load_error"}, on_event=events.append)
    assert run_checked(d, 64, 64, 64).fallback == "kernel_error"
    assert d.quarantined() == {SM90_ROW.name: "kernel_error"}
    assert run_checked(d, 128, 64, 64).fallback == "quarantined"
    assert [(e.kind, e.kernel, e.reason) for e in events] == [("quarantine", SM90_ROW.name, "kernel_error")]


def test_variant_that_raises_is_quarantined_and_the_call_still_succeeds():
    events = []
    d, loader, arms = make([table("f32", entry(SM90_ROW, 64, 64, 64))], modes={SM90_ROW.name: "raises"},
                           on_event=events.append)
    sel = run_checked(d, 64, 64, 64)  # correct result: redone on cuBLAS
    assert (sel.kernel, sel.fallback) == ("cublas", "kernel_error")
    assert SM90_ROW.name in d.quarantined()
    assert [e.kind for e in events] == ["quarantine"] and "fake launch failure" in events[0].detail
    assert run_checked(d, 64, 64, 64).fallback == "quarantined"
    assert len(loader.loaded[SM90_ROW.name].calls) == 1  # never launched again


def test_quarantine_keeps_other_cached_selections():
    d, loader, _ = make([table("f32", entry(SM90_ROW, 64, 64, 64), entry(SM90_COL, 64, 64, 64))],
                        modes={SM90_ROW.name: "raises"})
    col = d.select(64, 64, 64, "col")
    run_checked(d, 64, 64, 64, "row")
    assert d.select(64, 64, 64, "col") is col


def test_canary_catches_a_wrong_variant_returns_cublas_result_and_quarantines():
    events = []
    d, loader, arms = make([table("f32", entry(SM90_ROW, 128, 128, 128))], modes={SM90_ROW.name: "wrong"},
                           canary_rate=1.0, on_event=events.append)
    sel = run_checked(d, 128, 128, 128)  # run_checked asserts the returned C is right
    assert (sel.kernel, sel.fallback) == ("cublas", "canary_mismatch")
    assert d.quarantined() == {SM90_ROW.name: "canary_mismatch"}
    canary = [e for e in events if e.kind == "canary"]
    assert len(canary) == 1 and canary[0].ok is False and canary[0].rel_err > canary_tolerance("f32", 128)
    assert run_checked(d, 128, 128, 128).fallback == "quarantined"


def test_canary_passes_a_correct_variant():
    events = []
    d, _, arms = make([table("f32", entry(SM90_ROW, 128, 128, 128))], canary_rate=1.0, on_event=events.append)
    for seed in range(3):
        assert run_checked(d, 128, 128, 128, seed=seed).kernel == SM90_ROW.name
    assert [e.ok for e in events] == [True, True, True] and all(e.rel_err < 1e-2 for e in events)
    assert d.quarantined() == {} and arms.calls() == 3  # each canary reran on cuBLAS


def test_canary_samples_at_the_configured_rate():
    events = []
    d, _, _ = make([table("f32", entry(SM90_ROW, 64, 64, 64))], canary_rate=0.25, rng=random.Random(1),
                   on_event=events.append)
    for _ in range(400):
        d.gemm(*operands(64, 64, 64))
    assert 60 <= len(events) <= 140  # binomial(400, 0.25): mean 100, sd 8.7
    d.canary_rate = 0.0
    before = len(events)
    for _ in range(20):
        d.gemm(*operands(64, 64, 64))
    assert len(events) == before
    with pytest.raises(ValueError):
        d.canary_rate = 1.5


def test_canary_tolerance_is_tight_for_f32_and_grows_with_k_for_f16():
    assert canary_tolerance("f32", 64) == canary_tolerance("f32", 16384) == 1e-2
    assert canary_tolerance("f16", 64) < canary_tolerance("f16", 16384) < 0.2


def test_cpu_backend():
    d = Dispatcher(backend="cpu")
    a, b = operands(33, 17, 9)
    out, sel = d.run(a, b)
    assert (sel.kernel, sel.fallback) == ("torch_cpu", "cpu_backend")
    assert rel_err(out, a, b, "row") < 1e-2


def test_every_fallback_reason_is_reachable():
    seen = set()
    d, _, _ = make()
    seen.add(d.select(64, 64, 64).fallback)  # no_tuned_kernel
    d, _, _ = make([table("f32", entry(SM90_ROW, 3, 5, 7))])
    seen.add(d.select(3, 5, 7).fallback)  # unaligned
    d, _, _ = make([table("f32", entry(SM90_ROW, 64, 64, 64))], modes={SM90_ROW.name: "not_built"})
    seen.add(d.select(64, 64, 64).fallback)  # not_built
    d, _, _ = make([table("f32", entry(SM90_ROW, 64, 64, 64))], modes={SM90_ROW.name: "raises"})
    seen.add(d.run(*operands(64, 64, 64))[1].fallback)  # kernel_error
    seen.add(d.select(64, 64, 64).fallback)  # quarantined
    d, _, _ = make([table("f32", entry(SM90_ROW, 64, 64, 64))], modes={SM90_ROW.name: "wrong"}, canary_rate=1.0)
    seen.add(d.run(*operands(64, 64, 64))[1].fallback)  # canary_mismatch
    seen.add(Dispatcher(backend="cpu").select(64, 64, 64).fallback)  # cpu_backend
    d, _, _ = make([table("f32", lt_entry(64, 64, 64, "row", 9))], lt_algo_count=lambda *shape: 4)
    seen.add(d.select(64, 64, 64).fallback)  # tuned_elsewhere
    assert seen == set(FALLBACK_REASONS)


# ---- the cached path and input checks ---------------------------------------------------------------------------
def test_selection_is_decided_once_per_shape():
    calls = []
    d, loader, _ = make([table("f32", entry(SM90_ROW, 64, 64, 64))],
                        predictor=lambda *shape: calls.append(shape))
    first = d.select(64, 64, 64)
    for _ in range(5):
        d.gemm(*operands(64, 64, 64))
    assert d.select(64, 64, 64) is first and loader.load_calls == 1
    d.gemm(*operands(32, 64, 64))
    d.gemm(*operands(32, 64, 64))
    assert calls.count((32, 64, 64, "row", "f32")) == 1


@pytest.mark.parametrize("tuned", [True, False], ids=["variant", "cublas"])
def test_bad_operands_raise_and_do_not_quarantine(tuned):
    d, _, _ = make([table("f32", entry(SM90_ROW, 64, 64, 64))] if tuned else [])
    a, b = operands(64, 64, 64)
    with pytest.raises(TypeError):
        d.gemm(a.float(), b)
    with pytest.raises(ValueError):
        d.gemm(a, b[:32])  # K mismatch
    with pytest.raises(ValueError):
        d.gemm(a, b.t(), b_layout="row")  # 64x64 but not contiguous
    with pytest.raises(ValueError):
        d.gemm(a, b, out=torch.empty(64, 32, dtype=torch.float16))
    with pytest.raises(ValueError):
        d.gemm(a, b, out=torch.empty(64, 64, dtype=torch.float16).t())  # right shape, column-major
    with pytest.raises(ValueError):
        d.select(64, 64, 64, b_layout="colmajor")
    with pytest.raises(ValueError):
        d.select(64, 64, 64, acc="f64")
    assert d.quarantined() == {}


def test_listener_failure_never_breaks_a_gemm():
    def broken(event):
        raise RuntimeError("metrics down")

    d, _, _ = make([table("f32", entry(SM90_ROW, 64, 64, 64))], modes={SM90_ROW.name: "raises"}, on_event=broken)
    assert run_checked(d, 64, 64, 64).fallback == "kernel_error"


def test_public_api_on_cpu_tensors_uses_the_cpu_backend():
    a, b = operands(16, 24, 8, "col")
    out = kernels.gemm(a, b, b_layout="col")
    assert rel_err(out, a, b, "col") < 1e-2
    assert kernels.get_dispatcher("cpu").select(16, 24, 8, "col").fallback == "cpu_backend"
    assert kernels.get_dispatcher("cpu") is kernels.get_dispatcher(torch.device("cpu"))
