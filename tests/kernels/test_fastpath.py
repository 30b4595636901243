"""The C fast path (kernels/fastpath) on the CPU, for real: the extension is built with cc, and the launches it makes
go to C stubs with the ABIs of a built variant (hgemm_run) and of the cuBLAS wrapper (hgemm_gemmex_call) that compute
C = A @ B from the argument struct on CPU memory. A wrong template (M, N, K, leading dimensions, layout) therefore
gives a wrong product, not just a wrong byte. The stubs count their calls, so the tests see which path ran.

CPU tensors pose as CUDA device 0 (Tensor.get_device is patched per test), the stream is a constant. The tables read
operands through Python attributes there (the pose is Python's): tensor_reader.cpp, which reads the at::Tensor, has its
own test below and in test_tensor_reader.py."""
from __future__ import annotations

import ctypes
import os
import shutil
import subprocess

import pytest
import torch

import kernels.cublas as cublas
from kernels import fastpath, runtime
from kernels.codegen.generate import CODEGEN_DIR
from kernels.config import KernelConfig
from kernels.cublas import CublasArm, library
import kernels.dispatch
from kernels.dispatch import Dispatcher, DispatchEvent
from kernels.tuned_tables import TunedTable

from gemm_operands import operands, rel_err

pytestmark = pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")

CFG = {"row": KernelConfig("sm90", "f32", "row", (128, 128, 64), schedule="cooperative", scheduler="persistent"),
       "col": KernelConfig("sm90", "f32", "col", (64, 128, 64), schedule="pingpong", scheduler="persistent")}
STREAM = 0x5000

STUB = r'''
#include <stdint.h>
#include <string.h>
#include "hgemm_abi.h"
#include "arms.h"
static int fail_status, wrong;
static long calls;
HGEMM_EXPORT void stub_set(int status, int wrong_result) { fail_status = status; wrong = wrong_result; }
HGEMM_EXPORT long stub_calls(void) { return calls; }

static int gemm(const _Float16* A, const _Float16* B, _Float16* C, int64_t M, int64_t N, int64_t K, int64_t lda,
                int64_t ldb, int64_t ldc, int b_col) {
  calls++;
  if (fail_status) return fail_status;
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      float acc = 0.f;
      for (int64_t l = 0; l < K; l++) acc += (float)A[i * lda + l] * (float)(b_col ? B[j * ldb + l] : B[l * ldb + j]);
      C[i * ldc + j] = (_Float16)(wrong && i == 0 ? 0.f : acc);
    }
  return 0;
}
#ifdef VARIANT
HGEMM_EXPORT const char* hgemm_variant_name(void) { return VARIANT; }
HGEMM_EXPORT int hgemm_run(const hgemm_args_t* p) {
  return gemm(p->A, p->B, p->C, p->M, p->N, p->K, p->lda, p->ldb, p->ldc, B_COL);
}
HGEMM_EXPORT size_t hgemm_workspace_bytes(const hgemm_args_t* p) { return 0; }
HGEMM_EXPORT int hgemm_can_implement(const hgemm_args_t* p) { return 0; }
#else
int hgemm_arms_abi_version(void) { return HGEMM_ARMS_ABI_VERSION; }
const char* hgemm_arms_status_string(int s) { return "stub"; }
int hgemm_gemmex(int d, int bc, int acc, int64_t m, int64_t n, int64_t k, const void* A, const void* B, void* C,
                 void* w, size_t wb, void* s) { return -1; }
int hgemm_lt_plan(int d, int bc, int acc, int64_t m, int64_t n, int64_t k, uint32_t al, size_t wb, int top, int st,
                  void** out) { return -1; }
int hgemm_lt_algo_count(const void* p) { return 0; }
int hgemm_lt_algo_info(const void* p, int i, hgemm_lt_algo_info_t* info) { return -1; }
int hgemm_lt_run(const void* p, int i, const void* A, const void* B, void* C, void* w, size_t wb, void* s) {
  return -1;
}
int hgemm_gemmex_call(const hgemm_arms_call_t* c) {
  if (c->workspace == 0 || c->stream != (void*)0x5000) return -1;
  return gemm(c->A, c->B, c->C, c->m, c->n, c->k, c->k, c->b_col ? c->k : c->n, c->n, c->b_col);
}
int hgemm_lt_call(const hgemm_arms_call_t* c) { return -1; }
#endif
'''


def _compile(tmp_path, name: str, *defines: str):
    src, so = tmp_path / "stub.c", tmp_path / f"{name}.so"
    src.write_text(STUB)
    subprocess.run(["cc", "-O1", "-shared", "-fPIC", *defines, "-I", str(CODEGEN_DIR), "-I", str(library.ARMS_DIR),
                    "-o", str(so), str(src)], check=True)
    lib = ctypes.CDLL(str(so))
    lib.stub_calls.restype = ctypes.c_long
    return so, lib


@pytest.fixture
def world(tmp_path, monkeypatch):
    """Stub variants for both layouts, a stub cuBLAS library, CPU tensors posing as cuda:0."""
    if fastpath.load() is None:
        pytest.fail(f"the fast path must build here: {fastpath.unavailable_reason()}")
    monkeypatch.setattr(torch.Tensor, "get_device", lambda self: 0)
    monkeypatch.setenv("HGEMM_TENSOR_READER", "0")  # the reader would see the real device (-1) past the pose
    workspace = torch.empty(1 << 16, dtype=torch.uint8)
    monkeypatch.setattr(runtime, "_workspace", lambda device, stream, nbytes: workspace)
    monkeypatch.setattr(cublas, "_runtime_hooks", (lambda device: STREAM, runtime._workspace))
    monkeypatch.setattr(cublas, "_per_thread", cublas._PerThread())
    arms_so, arms_lib = _compile(tmp_path, "arms")
    monkeypatch.setattr(library, "_library", library.bind(arms_so))
    kernels, libs = {}, {"cublas": arms_lib}
    for layout, cfg in CFG.items():
        so, libs[layout] = _compile(tmp_path, layout, f'-DVARIANT="{cfg.name}"', f"-DB_COL={int(layout == 'col')}")
        kernels[cfg.name] = runtime.CompiledKernel(cfg, so)
        kernels[cfg.name]._stream = lambda device: STREAM
    return kernels, libs


def dispatcher(world, *, tuned=True, events=None, **kwargs) -> Dispatcher:
    kernels, _ = world
    predictor = (lambda m, n, k, b_layout, acc: CFG[b_layout] if acc == "f32" else None) if tuned else None
    return Dispatcher(tables={}, backend="gpu", arch="sm90", load_kernel=lambda cfg: kernels[cfg.name],
                      supports=lambda *args: True, predictor=predictor, arm_factory=None,
                      lt_algo_count=lambda *args: 0, on_event=events.append if events is not None else None,
                      fast_path=fastpath.new_table(lambda device: STREAM), **kwargs)


def check(out, a, b, b_layout):
    err = rel_err(out, a, b, b_layout)
    assert err < 2e-3, err


def poisoned(m, n):
    return torch.full((m, n), float("nan"), dtype=torch.float16)


@pytest.mark.parametrize("b_layout", ["row", "col"])
def test_repeated_calls_are_served_in_c_with_the_variants_own_template(world, b_layout):
    _, libs = world
    d = dispatcher(world)
    m, n, k = 24, 40, 56
    for seed in range(5):  # fresh inputs and a poisoned output each call
        a, b = operands(m, n, k, b_layout, seed)
        out, sel = d.run(a, b, b_layout, "f32", out=poisoned(m, n))
        check(out, a, b, b_layout)
        assert sel.kernel == CFG[b_layout].name and sel.fallback is None
    assert libs[b_layout].stub_calls() == 5
    assert d.fast_path_stats() == {"hits": 4, "misses": 1, "entries": 1}


def test_with_the_tensor_reader_a_table_serves_the_launch_from_the_at_tensor(world, monkeypatch):
    """A table given tensor_reader.cpp reads plain tensors from the at::Tensor and serves a registered launch with
    the right product; a Tensor subclass it leaves to the attribute path. The reader sees the CPU tensors' real device
    (-1: get_device is patched for Python only), so the launch is registered for device -1 on a table that serves CPU
    tensors, and a call the attribute path reads (device 0 by the pose) finds no entry."""
    built, libs = world
    monkeypatch.delenv("HGEMM_TENSOR_READER")
    table = fastpath.new_table(lambda device: STREAM, allow_cpu=True)
    assert table.tensor_reader
    m, n, k = 24, 40, 56
    a, b = operands(m, n, k, "row", 0)
    run = kernels.dispatch._bind_kernel(built[CFG["row"].name], {})
    out = run(a, b, poisoned(m, n))
    stream, fn_address, template, align, keep = run.fast_entry(a, b, out)
    table.put(m, n, k, "row", "f32", -1, stream, False, fn_address, template, align, False, "selection", keep)
    for seed in range(1, 4):  # fresh operands each call
        a, b = operands(m, n, k, "row", seed)
        out, selection = table.run(a, b, poisoned(m, n), "row", "f32")
        check(out, a, b, "row")
        assert selection == "selection"
    assert table.stats()["hits"] == 3 and libs["row"].stub_calls() == 4

    class Marked(torch.Tensor):
        pass

    assert table.run(a.as_subclass(Marked), b, poisoned(m, n), "row", "f32") == fastpath.MISS
    assert table.run(a, b.float(), poisoned(m, n), "row", "f32") == fastpath.MISS
    assert libs["row"].stub_calls() == 4
    # no output given: allocated in C++ too (Python's new_empty is not called), as new_empty would
    assert table.matrix_maker
    with monkeypatch.context() as patched:
        patched.setattr(torch.Tensor, "new_empty", lambda *args: pytest.fail("allocated through Python"))
        out = table.gemm(a, b, None, "row", "f32")
    assert type(out) is torch.Tensor and out.shape == (m, n) and out.dtype == torch.float16 and out.is_contiguous()
    check(out, a, b, "row")
    assert libs["row"].stub_calls() == 5


def test_cublas_fallback_is_served_with_its_workspace_and_stream(world):
    _, libs = world
    d = dispatcher(world, tuned=False)
    for seed in range(3):
        a, b = operands(16, 32, 8, "col", seed)
        out, sel = d.run(a, b, "col", "f32", out=poisoned(16, 32))
        check(out, a, b, "col")
        assert (sel.kernel, sel.fallback) == ("cublas", "no_tuned_kernel")
    assert libs["cublas"].stub_calls() == 3 and d.fast_path_stats()["hits"] == 2


def test_gemm_allocates_the_output_when_none_is_given(world):
    d = dispatcher(world)
    a, b = operands(8, 24, 16, "row", 0)
    first, second = d.gemm(a, b, "row", "f32"), d.gemm(a, b, "row", "f32")
    assert second.shape == (8, 24) and second.dtype == torch.float16 and second.data_ptr() != first.data_ptr()
    check(second, a, b, "row")
    assert d.fast_path_stats()["hits"] == 1


def test_each_shape_layout_accumulator_and_stream_has_its_own_entry(world):
    d = dispatcher(world)
    for m, n, k, layout in [(8, 16, 32, "row"), (8, 16, 32, "col"), (16, 16, 32, "row"), (8, 16, 32, "row")]:
        a, b = operands(m, n, k, layout, m)
        out, _ = d.run(a, b, layout, "f32", out=poisoned(m, n))
        check(out, a, b, layout)
    assert d.fast_path_stats() == {"hits": 1, "misses": 3, "entries": 3}
    a, b = operands(8, 16, 32, "row", 1)
    out, sel = d.run(a, b, "row", "f16", out=poisoned(8, 16))  # no tuned f16 choice: cuBLAS
    check(out, a, b, "row")
    assert sel.fallback == "no_tuned_kernel" and d.fast_path_stats()["entries"] == 4


def test_operands_it_does_not_serve_take_the_python_path(world):
    _, libs = world
    d = dispatcher(world)
    m, n, k = 16, 32, 64
    a, b = operands(m, n, k, "row", 0)
    d.run(a, b, "row", "f32", out=poisoned(m, n))
    wide = torch.randn(m, 2 * k).half()
    strided = wide[:, :k]  # unit inner stride, leading dimension 2k: the Python launcher passes lda
    storage = torch.randn(m * k + 1).half()
    misaligned = storage[1:].view(m, k)  # contiguous, but 2 bytes past a 16-byte boundary
    for a2 in (strided, misaligned):
        out, _ = d.run(a2, b, "row", "f32", out=poisoned(m, n))
        check(out, a2, b, "row")
    assert d.fast_path_stats()["hits"] == 0 and libs["row"].stub_calls() == 3


def test_bad_operands_get_the_python_paths_errors(world):
    d = dispatcher(world)
    a, b = operands(8, 16, 32, "row", 0)
    d.run(a, b, "row", "f32")
    with pytest.raises(TypeError, match="float16"):
        d.run(a.float(), b, "row", "f32")
    with pytest.raises(ValueError):
        d.run(a, b[:16], "row", "f32")
    with pytest.raises(ValueError):
        d.run(a, b, "row", "f32", out=torch.empty(8, 17, dtype=torch.float16))
    with pytest.raises(ValueError, match="b_layout"):
        d.run(a, b, "diagonal", "f32")
    with pytest.raises(ValueError):
        d.run(a.unsqueeze(0), b, "row", "f32")


def test_launch_error_empties_the_table_and_the_python_path_quarantines(world):
    _, libs = world
    events: list[DispatchEvent] = []
    d = dispatcher(world, events=events)
    a, b = operands(8, 16, 32, "col", 0)
    d.run(a, b, "col", "f32")
    libs["col"].stub_set(7, 0)
    out, sel = d.run(a, b, "col", "f32", out=poisoned(8, 16))
    check(out, a, b, "col")
    assert (sel.kernel, sel.fallback) == ("cublas", "kernel_error")
    assert [e.kind for e in events] == ["quarantine"] and events[0].kernel == CFG["col"].name
    out, sel = d.run(a, b, "col", "f32", out=poisoned(8, 16))  # re-decided without the variant, and fast again
    check(out, a, b, "col")
    assert sel.fallback == "quarantined" and d.fast_path_stats()["entries"] == 1


def test_canary_samples_every_nth_tuned_call_and_quarantines_a_wrong_variant(world):
    _, libs = world
    events: list[DispatchEvent] = []
    d = dispatcher(world, events=events, canary_rate=1.0)
    a, b = operands(8, 16, 32, "row", 0)
    d.run(a, b, "row", "f32")  # the Python path: sampled (rate 1), agreed with cuBLAS, registered all the same
    assert d.fast_path_stats()["entries"] == 1 and [e.kind for e in events] == ["canary"]
    d.canary_rate = 0.25
    assert d._fast.canary_every == 4
    for _ in range(8):  # served from C: every 4th is handed back for a canary, nothing is drawn
        d.run(a, b, "row", "f32")
    samples = [e for e in events if e.kind == "canary"]
    assert len(samples) == 3 and all(e.ok for e in samples) and d.fast_path_stats()["hits"] == 6
    libs["row"].stub_set(0, 1)  # the variant now loses its first row
    for _ in range(4):
        out, sel = d.run(a, b, "row", "f32", out=poisoned(8, 16))
    assert any(e.kind == "quarantine" and e.reason == "canary_mismatch" for e in events)
    check(out, a, b, "row")
    assert sel.kernel == "cublas"


def test_quarantine_and_clear_cache_empty_the_table(world):
    d = dispatcher(world)
    a, b = operands(8, 16, 32, "row", 0)
    d.run(a, b, "row", "f32")
    assert d.fast_path_stats()["entries"] == 1
    d.clear_cache()
    assert d.fast_path_stats()["entries"] == 0


def test_table_rejects_malformed_entries():
    table = fastpath.new_table(lambda device: 0)
    good = (1, 1, 1, "row", "f32", 0, 0, False, 0x1000, bytes(64), 16, True, None, None)
    table.put(*good)
    assert len(table) == 1
    for index, bad in [(0, 0), (3, "diag"), (8, 0), (9, bytes(8)), (9, bytes(200)), (10, 3)]:
        args = list(good)
        args[index] = bad
        with pytest.raises(ValueError):
            table.put(*args)
    table.clear()
    assert len(table) == 0


class CaptureSwitch:
    """A stand-in for cuStreamIsCapturing (same C ABI, as a ctypes callback): reports `capturing` for STREAM and
    counts the questions; kernels.dispatch._capturing (the Python path's question to torch) follows it too."""

    def __init__(self, monkeypatch):
        self.capturing, self.asked = False, 0
        proto = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_int))
        self._fn = proto(self._status)  # kept alive as long as the table may call it
        self.address = ctypes.cast(self._fn, ctypes.c_void_p).value
        monkeypatch.setattr(kernels.dispatch, "_capturing", lambda a: self.capturing)

    def _status(self, stream, status):
        self.asked += 1
        if stream != STREAM:
            return 400  # CUDA_ERROR_INVALID_HANDLE
        status[0] = int(self.capturing)
        return 0


def graph_choice_dispatcher(world, capture_status: int) -> Dispatcher:
    """Col-layout 24x40x56: eagerly the stub variant, captured into a CUDA graph cuBLAS (the stub GemmEx)."""
    kernels_, _ = world
    cfg = CFG["col"]
    entry = {"m": 24, "n": 40, "k": 56, "b_layout": "col", "kernel": cfg.name, "config": cfg.to_dict(),
             "runtime": {}, "graph": {"kernel": "cublas"}}
    table = TunedTable.from_dict({"meta": {"arch": "sm90", "acc": "f32", "gpu": "test"}, "entries": [entry]})
    return Dispatcher(tables={"f32": table}, backend="gpu", arch="sm90", load_kernel=lambda c: kernels_[c.name],
                      supports=lambda *args: True, arm_factory=None, lt_algo_count=lambda *args: 0,
                      fast_path=fastpath.new_table(lambda device: STREAM, capture_status=capture_status))


def test_a_captured_call_on_a_stream_that_served_eager_calls_runs_the_graph_choice(world, monkeypatch):
    # torch hands out pooled streams round-robin: the stream a graph is captured on may have served eager calls of
    # the same shape before, and the stream alone must not bring back the eager choice's entry
    _, libs = world
    switch = CaptureSwitch(monkeypatch)
    d = graph_choice_dispatcher(world, switch.address)
    m, n, k = 24, 40, 56

    def call(seed, expect):
        a, b = operands(m, n, k, "col", seed)
        out, sel = d.run(a, b, "col", "f32", out=poisoned(m, n))
        check(out, a, b, "col")
        assert sel.kernel == expect

    for seed in range(3):
        call(seed, CFG["col"].name)
    assert (libs["col"].stub_calls(), libs["cublas"].stub_calls()) == (3, 1)  # + the graph choice's eager try
    switch.capturing = True
    for seed in range(3):
        call(seed, "cublas")
    switch.capturing = False
    call(9, CFG["col"].name)
    assert (libs["col"].stub_calls(), libs["cublas"].stub_calls()) == (4, 4)
    assert d.fast_path_stats() == {"hits": 5, "misses": 2, "entries": 2}  # each choice registered once, then in C
    assert switch.asked == 7


def test_without_a_way_to_ask_graph_choices_leave_the_calls_to_the_python_path(world, monkeypatch):
    switch = CaptureSwitch(monkeypatch)
    d = graph_choice_dispatcher(world, capture_status=0)
    for capturing in (False, True, False):
        switch.capturing = capturing
        a, b = operands(24, 40, 56, "col", int(capturing))
        out, sel = d.run(a, b, "col", "f32", out=poisoned(24, 40))
        check(out, a, b, "col")
        assert sel.kernel == ("cublas" if capturing else CFG["col"].name)
    assert d.fast_path_stats()["hits"] == 0


def test_without_graph_choices_the_table_never_asks_the_driver(world, monkeypatch):
    kernels_, _ = world
    switch = CaptureSwitch(monkeypatch)
    d = Dispatcher(tables={}, backend="gpu", arch="sm90", load_kernel=lambda c: kernels_[c.name],
                   supports=lambda *args: True, predictor=lambda *shape: CFG["row"], arm_factory=None,
                   lt_algo_count=lambda *args: 0,
                   fast_path=fastpath.new_table(lambda device: STREAM, capture_status=switch.address))
    for seed in range(3):
        a, b = operands(8, 16, 32, "row", seed)
        d.run(a, b, "row", "f32")
    assert d.fast_path_stats()["hits"] == 2 and switch.asked == 0


def test_disabled_by_environment(monkeypatch):
    monkeypatch.setenv("HGEMM_FASTPATH", "0")
    assert fastpath.new_table() is None
    d = Dispatcher(tables={}, backend="gpu", arch="sm90")
    assert d.fast_path_stats() is None


def test_real_launchers_describe_their_launch(world):
    """The entries come from the real launchers: CompiledKernel (16-byte TMA alignment) and CublasArm (gemmex: none)."""
    kernels, _ = world
    a, b = operands(8, 16, 32, "col", 0)
    out = torch.empty(8, 16, dtype=torch.float16)
    run = kernels[CFG["col"].name].launcher(0, 0, 0)
    run(a, b, out)
    stream, fn, template, align, keep = run.fast_entry(a, b, out)
    fields = runtime._ARGS_LAYOUT.unpack(template)
    assert stream == STREAM and fn and align == runtime.TMA_ALIGN_BYTES
    assert fields[:3] == (0, 0, 0) and fields[3:9] == (8, 16, 32, 32, 32, 16) and fields[-1] == STREAM
    arm_run = CublasArm("gemmex").launcher("row", "f32")
    b_row = b.t().contiguous()
    arm_run(a, b_row, out)
    stream, fn, template, align, keep = arm_run.fast_entry(a, b_row, out)
    fields = cublas._CALL_LAYOUT.unpack(template)
    assert stream == STREAM and align == 0 and keep is not None
    assert fields[5] == STREAM and fields[7:10] == (8, 16, 32) and fields[10:13] == (0, 0, 0)



def test_threads_calling_while_another_empties_the_table_get_right_answers(world):
    import threading

    d = dispatcher(world)
    shapes = [(8, 16, 32, "row"), (16, 32, 64, "col"), (24, 40, 56, "row")]
    errors: list[BaseException] = []
    stop = threading.Event()

    def caller(seed):
        try:
            for i in range(60):
                m, n, k, layout = shapes[(seed + i) % len(shapes)]
                a, b = operands(m, n, k, layout, seed * 1000 + i)
                out, _ = d.run(a, b, layout, "f32", out=poisoned(m, n))
                check(out, a, b, layout)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    def clearer():
        while not stop.is_set():
            d.clear_cache()

    threads = [threading.Thread(target=caller, args=(seed,)) for seed in range(4)]
    wiper = threading.Thread(target=clearer)
    wiper.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    stop.set()
    wiper.join()
    assert not errors, errors[0]
    stats = d.fast_path_stats()
    assert stats["hits"] + stats["misses"] == 240

# ---- on the GPU: real kernels, real streams, CUDA graphs ---------------------------------------------------------
def _gpu_dispatcher(choice: str, m: int, n: int, k: int):
    from kernels import space
    from kernels.tuned_tables import TunedTable

    if choice == "variant":
        cfg = next(c for c in space.variant_sets(os.environ.get("HGEMM_TEST_SET", "default")) if c.family == "sm90"
                   and c.b_layout == "col" and c.acc == "f32" and space.supports(c, m, n, k))
        runtime.load(cfg)  # from the cache (or built here)
        row = {"kernel": cfg.name, "config": cfg.to_dict(), "runtime": {}}
    elif choice == "cublaslt":
        row = {"kernel": "cublaslt", "config": {"kind": "lt_algo", "algo_index": 0}, "runtime": {}}
    entries = [] if choice == "cublas" else [dict(row, m=m, n=n, k=k, b_layout="col")]
    table = TunedTable.from_dict({"meta": {"arch": "sm90", "acc": "f32", "gpu": "test"}, "entries": entries})
    return Dispatcher.default(tables={"f32": table})


@pytest.mark.gpu
@pytest.mark.parametrize("choice", ["variant", "cublas", "cublaslt"])
def test_gpu_fast_path_is_correct_per_stream_and_under_graph_capture(choice):
    m, n, k = 256, 512, 1024
    d = _gpu_dispatcher(choice, m, n, k)
    assert d.fast_path_stats() is not None, fastpath.unavailable_reason()
    g = torch.Generator(device="cuda").manual_seed(0)

    def fresh():
        a = torch.randn(m, k, generator=g, device="cuda", dtype=torch.float16)
        b = torch.randn(n, k, generator=g, device="cuda", dtype=torch.float16)
        return a, b, a.double() @ b.double().t()

    def err(out, ref):
        return ((out.double() - ref).norm() / ref.norm()).item()

    for _ in range(4):  # the first call decides and registers, the others are served in C
        a, b, ref = fresh()
        out, sel = d.run(a, b, "col", "f32", out=torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16))
        assert err(out, ref) < 1e-3 and sel.fallback == (None if choice != "cublas" else "no_tuned_kernel")
        assert sel.kernel == (choice if choice != "variant" else sel.config.name)
    assert d.fast_path_stats()["hits"] == 3
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # another stream: its own entry (own workspace)
        outs = [d.gemm(a, b, "col", "f32") for _ in range(3)]
    side.synchronize()
    assert all(err(o, ref) < 1e-3 for o in outs) and d.fast_path_stats()["entries"] == 2
    static = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    graph = torch.cuda.CUDAGraph()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        d.gemm(a, b, "col", "f32", static)  # warm the capture stream's entry
    side.synchronize()
    with torch.cuda.graph(graph):
        d.gemm(a, b, "col", "f32", static)
    static.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    assert err(static, ref) < 1e-3
    assert torch.equal(static, d.gemm(a, b, "col", "f32"))
