"""CPU tests of the host-overhead caches: the C side's per-thread LRU of prepared launches (hgemm_common.cuh, compiled
with the host C++ compiler), the runtime's launcher closures and workspace retry, and the cuBLAS arms' one-struct call
path (against C stubs compiled with cc: everything but CUDA runs for real)."""
import ctypes
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import torch

import kernels.cublas as cublas
from kernels import build, runtime
from kernels.codegen.generate import CODEGEN_DIR
from kernels.config import KernelConfig
from kernels.cublas import library
from kernels.dispatch import Dispatcher

SM80_ROW = KernelConfig("sm80", "f16", "row", (64, 64, 64), warp=(32, 32, 64), stages=5, alignment=4)
HAVE_CC = shutil.which("cc") is not None


def _cuda_include() -> Path | None:
    """The CUDA toolkit's include directory (hgemm_common.cuh includes cuda_runtime.h), or None."""
    candidates = [Path(os.environ[v]) / "include" for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
    nvcc = build.nvcc_path()
    if nvcc is not None:
        candidates.append(Path(nvcc).resolve().parent.parent / "include")
    candidates.append(Path("/usr/local/cuda/include"))
    return next((c for c in candidates if (c / "cuda_runtime.h").is_file()), None)


# ---- the C side's launch cache ----------------------------------------------------------------------------------
CACHE_TEST = r'''
#include <cstdio>
#include <thread>
#include "hgemm_common.cuh"

// A stand-in for a variant's prepared params: which operands it points at, and which prepare built it.
struct Value { const void* A; const void* B; void* C; int built_by; };

static int prepares = 0, retargets = 0;
static bool honest_retarget = true;  // false: a variant whose retarget misses part of the params

static int prepare(const hgemm_args_t* p, Value* v) {
  if ((uintptr_t(p->A) | uintptr_t(p->B)) & 15) return HGEMM_ERR_UNSUPPORTED;  // what check_problem refuses
  *v = Value{p->A, p->B, p->C, ++prepares};
  return HGEMM_OK;
}
static int retarget(const hgemm_args_t* p, Value* v) {
  ++retargets;
  if (uintptr_t(p->A) & 15) return HGEMM_ERR_UNSUPPORTED;  // checked before anything changes
  v->A = p->A;
  if (uintptr_t(p->B) & 15) return HGEMM_ERR_UNSUPPORTED;  // fails part-way: A is already patched
  v->B = p->B;
  if (honest_retarget) v->C = p->C;
  return HGEMM_OK;
}
static bool same(const Value& x, const Value& y) { return x.A == y.A && x.B == y.B && x.C == y.C; }

static hgemm_args_t base() {
  hgemm_args_t p = {};
  p.A = (const void*)0x1000; p.B = (const void*)0x2000; p.C = (void*)0x3000;
  p.M = 64; p.N = 128; p.K = 256; p.lda = 256; p.ldb = 256; p.ldc = 128;
  p.workspace = (void*)0x4000; p.workspace_bytes = 1 << 20; p.raster = 1; p.swizzle = 2; p.splits = 3;
  p.stream = (void*)0x5000;
  return p;
}

static hgemm_args_t moved(int i) {  // the same problem on other operands
  hgemm_args_t p = base();
  const uintptr_t base_address = uintptr_t(0x10000) * uintptr_t(i + 2);
  p.A = (const void*)base_address; p.B = (const void*)(base_address + 0x100);
  p.C = (void*)(base_address + 0x200);
  return p;
}

#define EXPECT(cond) do { if (!(cond)) { std::printf("FAILED line %d: %s\n", __LINE__, #cond); return 1; } } while (0)

template <int kSlots>
static int run(hgemm::LaunchCache<Value, kSlots>& cache, const hgemm_args_t& p, Value** out) {
  return hgemm::prepared_launch(cache, &p, 0, prepare, retarget, same, out);
}

static bool points_at(const Value* v, const hgemm_args_t& p) { return v->A == p.A && v->B == p.B && v->C == p.C; }

int main() {
  // One cache per thread: the same one on every call of a thread, another one on another thread.
  hgemm::LaunchCache<Value>* here = &hgemm::thread_launch_cache<Value>();
  hgemm::LaunchCache<Value>* there = nullptr;
  std::thread other([&] { there = &hgemm::thread_launch_cache<Value>(); });
  other.join();
  EXPECT(here == &hgemm::thread_launch_cache<Value>() && there != nullptr && there != here);

  // The key: every field the params are computed from except the operand pointers and the stream.
  hgemm::LaunchCache<Value, 4> keys;
  const hgemm_args_t p = base();
  EXPECT(keys.find(hgemm::launch_key(&p, 0)) == nullptr);
  keys.insert(hgemm::launch_key(&p, 0), hgemm::targets_of(&p), Value{p.A, p.B, p.C, 7});
  EXPECT(keys.find(hgemm::launch_key(&p, 0)) && keys.find(hgemm::launch_key(&p, 0))->value.built_by == 7);
  hgemm_args_t q = moved(0);
  q.stream = (void*)0x9999;
  EXPECT(keys.find(hgemm::launch_key(&q, 0)) != nullptr);
  EXPECT(keys.find(hgemm::launch_key(&p, 1)) == nullptr);  // device
  for (int field = 0; field < 11; ++field) {
    q = base();
    switch (field) {
      case 0: q.M += 1; break;
      case 1: q.N += 8; break;
      case 2: q.K += 8; break;
      case 3: q.lda += 8; break;
      case 4: q.ldb += 8; break;
      case 5: q.ldc += 8; break;
      case 6: q.workspace = (void*)0x4010; break;
      case 7: q.workspace_bytes += 1; break;
      case 8: q.raster = 2; break;
      case 9: q.swizzle = 4; break;
      case 10: q.splits = 1; break;
    }
    if (keys.find(hgemm::launch_key(&q, 0)) != nullptr) {
      std::printf("FAILED: field %d not in the key\n", field);
      return 1;
    }
  }

  // prepared_launch: a miss prepares; the same operands hit; the first move prepares in full and checks a retarget
  // against it; later moves only retarget, and every launch points at the call's operands.
  hgemm::LaunchCache<Value, 4> cache;
  Value* v = nullptr;
  EXPECT(run(cache, p, &v) == HGEMM_OK && points_at(v, p) && prepares == 1);
  EXPECT(run(cache, p, &v) == HGEMM_OK && points_at(v, p) && prepares == 1 && cache.stats.hits == 1);
  EXPECT(run(cache, moved(0), &v) == HGEMM_OK && points_at(v, moved(0)) && prepares == 2);
  EXPECT(cache.stats.retarget_checked == 1 && cache.stats.retarget_refused == 0 && cache.size() == 1);
  for (int i = 1; i < 40; ++i) {
    EXPECT(run(cache, moved(i % 7), &v) == HGEMM_OK && points_at(v, moved(i % 7)));
  }
  EXPECT(prepares == 2 && cache.stats.retargeted == 39 && cache.stats.prepared == 2);
  EXPECT(run(cache, p, &v) == HGEMM_OK && points_at(v, p) && prepares == 2);

  // Misaligned operands: the call fails as a fresh prepare would, and the entry keeps its operands.
  hgemm_args_t bad = moved(3);
  bad.A = (const void*)0x10008;
  EXPECT(run(cache, bad, &v) == HGEMM_ERR_UNSUPPORTED);
  EXPECT(run(cache, p, &v) == HGEMM_OK && points_at(v, p) && cache.stats.retarget_refused == 0);
  // A retarget that fails part-way (B misaligned, after A was patched): the entry is unchanged, so its old operands
  // still hit it and launch on themselves.
  bad = moved(4);
  bad.B = (const void*)0x20008;
  EXPECT(run(cache, bad, &v) == HGEMM_ERR_UNSUPPORTED);
  uint64_t hits = cache.stats.hits;
  EXPECT(run(cache, p, &v) == HGEMM_OK && points_at(v, p) && cache.stats.hits == hits + 1);

  // A retarget that disagrees with a full prepare is refused for that entry: every move then prepares in full.
  honest_retarget = false;
  hgemm::LaunchCache<Value, 4> wary;
  hgemm_args_t r = base();
  r.M = 100;
  EXPECT(run(wary, r, &v) == HGEMM_OK);
  int before = prepares;
  for (int i = 0; i < 5; ++i) {
    hgemm_args_t m = moved(i);
    m.M = 100;
    EXPECT(run(wary, m, &v) == HGEMM_OK && points_at(v, m));
  }
  EXPECT(prepares == before + 5 && wary.stats.retarget_refused == 1 && wary.stats.retargeted == 0);
  honest_retarget = true;

  // LRU: fill 4 slots, touch the oldest, insert a 5th: the least recently used one (M = 101) goes.
  hgemm::LaunchCache<Value, 4> lru;
  hgemm_args_t k[5];
  for (int i = 0; i < 5; ++i) { k[i] = base(); k[i].M = 100 + i; }
  for (int i = 0; i < 4; ++i) lru.insert(hgemm::launch_key(&k[i], 0), hgemm::targets_of(&k[i]), Value{0, 0, 0, i});
  EXPECT(lru.size() == 4);
  EXPECT(lru.find(hgemm::launch_key(&k[0], 0))->value.built_by == 0);  // now the most recently used
  lru.insert(hgemm::launch_key(&k[4], 0), hgemm::targets_of(&k[4]), Value{0, 0, 0, 4});
  EXPECT(lru.size() == 4);
  EXPECT(lru.find(hgemm::launch_key(&k[1], 0)) == nullptr);
  for (int i : {0, 2, 3, 4}) {
    auto* slot = lru.find(hgemm::launch_key(&k[i], 0));
    EXPECT(slot != nullptr && slot->value.built_by == i);
  }
  std::printf("OK\n");
  return 0;
}
'''


@pytest.mark.skipif(shutil.which("c++") is None or _cuda_include() is None, reason="needs c++ and the CUDA headers")
def test_launch_cache_keys_on_params_not_pointers_retargets_once_checked_and_evicts_lru(tmp_path):
    src, exe = tmp_path / "cache_test.cpp", tmp_path / "cache_test"
    src.write_text(CACHE_TEST)
    subprocess.run(["c++", "-std=c++17", "-O1", "-pthread", "-I", str(CODEGEN_DIR), "-I", str(_cuda_include()),
                    "-o", str(exe), str(src)], check=True)
    result = subprocess.run([str(exe)], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.strip() == "OK", result.stdout + result.stderr


# ---- fakes for the Python side ----------------------------------------------------------------------------------
class FakeCudaTensor:
    """What the hot paths read from a torch CUDA tensor (the stubs never dereference the pointers)."""

    def __init__(self, shape, stride, ptr, dtype=torch.float16, device=0):
        self.shape, self._stride, self._ptr, self.dtype, self._device = torch.Size(shape), stride, ptr, dtype, device

    def get_device(self):
        return self._device

    def stride(self):
        return self._stride

    def data_ptr(self):
        return self._ptr

    def numel(self):
        return self.shape.numel()

    def element_size(self):
        return 1

    def dim(self):
        return len(self.shape)

    def is_contiguous(self):
        return self._stride == tuple(self.shape[1:]) + (1,)


def _cc(tmp_path, name: str, source: str, include: Path) -> Path:
    src, so = tmp_path / f"{name}.c", tmp_path / f"{name}.so"
    src.write_text(source)
    subprocess.run(["cc", "-shared", "-fPIC", "-I", str(include), "-o", str(so), str(src)], check=True)
    return so


# A variant that needs 4096 bytes of workspace, to exercise the runtime's grow-and-retry path.
VARIANT_STUB = r'''
#include "hgemm_abi.h"
static hgemm_args_t last;
static int runs;
HGEMM_EXPORT const char* hgemm_variant_name(void) { return "NAME"; }
HGEMM_EXPORT int hgemm_run(const hgemm_args_t* p) {
  ++runs;
  last = *p;
  return p->workspace_bytes < 4096 ? HGEMM_ERR_WORKSPACE_TOO_SMALL : 0;
}
HGEMM_EXPORT size_t hgemm_workspace_bytes(const hgemm_args_t* p) { (void)p; return 4096; }
HGEMM_EXPORT int hgemm_can_implement(const hgemm_args_t* p) { (void)p; return 0; }
HGEMM_EXPORT const hgemm_args_t* fake_last(void) { return &last; }
HGEMM_EXPORT int fake_runs(void) { return runs; }
'''


@pytest.mark.skipif(not HAVE_CC, reason="needs a C compiler")
def test_a_stream_workspace_grows_by_doubling_and_an_outgrown_one_is_never_freed(monkeypatch):
    # A CUDA graph keeps the pointer its launches were captured with: a freed buffer would be handed to the next
    # tensor on the stream and overwritten by every replay. Buffers here are CPU tensors standing in for CUDA ones.
    import gc
    import weakref

    made = []
    real_empty = torch.empty
    monkeypatch.setattr(torch, "empty", lambda size, dtype, device: made.append(device) or real_empty(size, dtype=dtype))
    monkeypatch.setattr(runtime, "_workspaces", {})
    monkeypatch.setattr(runtime, "_outgrown", [])
    first = runtime._workspace(0, 0x11, 100)
    assert first.numel() == 1 << 20 and made == ["cuda:0"]
    assert runtime._workspace(0, 0x11, 1000) is first and runtime._workspace(0, 0x22, 1) is not first
    kept = weakref.ref(first)
    del first
    grown = runtime._workspace(0, 0x11, (1 << 20) + 1)
    assert grown.numel() == 2 << 20 and runtime._workspace(0, 0x11, 5) is grown
    gc.collect()
    assert kept() is not None and kept() is not grown
    assert runtime._workspace(0, 0x11, 9 << 20).numel() == 9 << 20  # a larger request than double: its own size
    assert [b.numel() for b in runtime._outgrown] == [1 << 20, 2 << 20]


def test_runtime_launchers_bind_knobs_rebind_workspace_per_stream_and_retry(tmp_path, monkeypatch):
    so = _cc(tmp_path, "variant", VARIANT_STUB.replace("NAME", SM80_ROW.name), CODEGEN_DIR)
    kernel = runtime.CompiledKernel(SM80_ROW, so)
    sizes = {}

    def workspace(device, stream, nbytes):  # a buffer per (device, stream) that grows like the real one
        size = max(nbytes, sizes.get((device, stream), 0), 1024)
        sizes[(device, stream)] = size
        return FakeCudaTensor((size,), (1,), 0x100000 * (1 + stream % 7) + size)

    monkeypatch.setattr(runtime, "_workspace", workspace)
    current = {"stream": 0x11}
    monkeypatch.setattr(kernel, "_stream", lambda device: current["stream"])
    lib = ctypes.CDLL(str(so))
    lib.fake_last.restype = ctypes.POINTER(runtime.hgemm_args_t)
    a = FakeCudaTensor((64, 512), (520, 1), 0x1000)
    b = FakeCudaTensor((512, 256), (264, 1), 0x2000)
    out = FakeCudaTensor((64, 256), (256, 1), 0x3000)

    run = kernel.launcher(1, 2, 3)
    assert kernel.launcher(1, 2, 3) is run and kernel.launcher() is not run
    assert run(a, b, out) is out
    got = lib.fake_last().contents
    assert (got.raster, got.swizzle, got.splits, got.stream) == (1, 2, 3, 0x11)
    assert got.workspace_bytes == 4096 and lib.fake_runs() == 2  # too small at first: grown and retried once
    assert kernel._local.args.stream == 0x11

    current["stream"] = 0x22  # another stream: its own workspace
    kernel(a, b, out)
    got = lib.fake_last().contents
    assert (got.stream, got.raster, got.workspace_bytes) == (0x22, 0, 4096)
    assert got.workspace == workspace(0, 0x22, 0).data_ptr() != workspace(0, 0x11, 0).data_ptr()
    runs = lib.fake_runs()
    kernel(a, b, out)  # same stream again: the bound workspace is big enough, one call
    assert lib.fake_runs() == runs + 1

    with pytest.raises(TypeError, match="float16"):
        run(a, FakeCudaTensor((512, 256), (264, 1), 0x2000, dtype=torch.float32), out)
    with pytest.raises(ValueError, match="same CUDA device"):
        run(a, b, FakeCudaTensor((64, 256), (256, 1), 0x3000, device=1))
    with pytest.raises(ValueError, match="do not match"):
        run(a, b, FakeCudaTensor((64, 128), (128, 1), 0x3000))

    # The dispatcher runs a built variant through the prepared launcher with the tuned knobs bound.
    d = Dispatcher(tables={}, backend="gpu", arch="sm80", load_kernel=lambda cfg: kernel,
                   supports=lambda *args: True, predictor=lambda *shape: (SM80_ROW, {"splits": 5}))
    c, sel = d.run(a, b, "row", "f16", out)
    assert c is out and sel.kernel == SM80_ROW.name and sel.fallback is None
    assert lib.fake_last().contents.splits == 5


# The cuBLAS wrapper's exports, recording the last struct call.
ARMS_STUB = r'''
#include <string.h>
#include "arms.h"
static hgemm_arms_call_t last;
static int last_entry;  /* 1 = gemmex_call, 2 = lt_call */
static int plans_made;
static int plan_storage[16];
static uint32_t last_align;
int hgemm_arms_abi_version(void) { return HGEMM_ARMS_ABI_VERSION; }
const char* hgemm_arms_status_string(int s) { return s == 13 ? "stub failure" : "stub"; }
int hgemm_gemmex(int d, int bc, int acc, int64_t m, int64_t n, int64_t k, const void* A, const void* B, void* C,
                 void* w, size_t wb, void* s) { return -1; }
int hgemm_lt_plan(int d, int bc, int acc, int64_t m, int64_t n, int64_t k, uint32_t align, size_t wb, int top,
                  int st, void** out) {
  last_align = align;
  *out = &plan_storage[plans_made++ % 16];
  return 0;
}
int hgemm_lt_algo_count(const void* p) { return 1; }
int hgemm_lt_algo_info(const void* p, int i, hgemm_lt_algo_info_t* info) { return 0; }
int hgemm_lt_run(const void* p, int i, const void* A, const void* B, void* C, void* w, size_t wb, void* s) {
  return -1;
}
int hgemm_gemmex_call(const hgemm_arms_call_t* c) { last = *c; last_entry = 1; return c->m == 13 ? 13 : 0; }
int hgemm_lt_call(const hgemm_arms_call_t* c) { last = *c; last_entry = 2; return 0; }
const hgemm_arms_call_t* fake_last(void) { return &last; }
int fake_entry(void) { return last_entry; }
int fake_plans(void) { return plans_made; }
uint32_t fake_align(void) { return last_align; }
'''


@pytest.mark.skipif(not HAVE_CC, reason="needs a C compiler")
def test_arms_launcher_packs_one_struct_and_caches_plans(tmp_path, monkeypatch):
    lib = library.bind(_cc(tmp_path, "arms", ARMS_STUB, library.ARMS_DIR))
    lib.fake_last.restype = ctypes.POINTER(cublas.ArmsCall)
    lib.fake_align.restype = ctypes.c_uint32
    monkeypatch.setattr(library, "_library", lib)
    monkeypatch.setattr(cublas, "_plans", {})
    monkeypatch.setattr(cublas, "_per_thread", cublas._PerThread())
    ws = FakeCudaTensor((1 << 25,), (1,), 0xABC000)
    monkeypatch.setattr(cublas, "_runtime_hooks", (lambda device: 0x5555, lambda device, stream, nbytes: ws))

    a = FakeCudaTensor((64, 512), (512, 1), 0x1000)
    b = FakeCudaTensor((256, 512), (512, 1), 0x2000)  # b_layout="col": N x K
    out = FakeCudaTensor((64, 256), (256, 1), 0x3000)
    gemmex = cublas.CublasArm("gemmex")
    run = gemmex.launcher("col", "f16")
    assert gemmex.launcher("col", "f16") is run
    assert gemmex(a, b, out, b_layout="col", acc="f16") is out
    got = lib.fake_last().contents
    assert lib.fake_entry() == 1
    assert {f: getattr(got, f) for f, _ in cublas.ArmsCall._fields_} == dict(
        A=0x1000, B=0x2000, C=0x3000, workspace=0xABC000, workspace_bytes=cublas.WORKSPACE_BYTES, stream=0x5555,
        plan=None, m=64, n=256, k=512, device=0, b_col=1, acc=1, algo_index=-1)

    lt = cublas.CublasArm("lt_algo", 3)
    lt(a, FakeCudaTensor((512, 256), (256, 1), 0x2000), out, b_layout="row", acc="f32")
    got = lib.fake_last().contents
    assert lib.fake_entry() == 2 and got.plan and (got.b_col, got.acc, got.algo_index) == (0, 0, 3)
    assert lib.fake_plans() == 1 and lib.fake_align() == 256  # 0x1000 | 0x2000 | 0x3000: 4 KiB aligned, capped
    first_plan = got.plan
    lt(a, FakeCudaTensor((512, 256), (256, 1), 0x2000), out, b_layout="row", acc="f32")
    assert lib.fake_plans() == 1 and lib.fake_last().contents.plan == first_plan  # cached: no new plan
    lt(a, FakeCudaTensor((512, 256), (256, 1), 0x2008), out, b_layout="row", acc="f32")
    assert lib.fake_plans() == 2 and lib.fake_align() == 8  # a view at an 8-byte offset gets its own plan

    # Operand errors are named (the slow path), statuses raise, layout-restricted forms refuse the other layout.
    with pytest.raises(TypeError, match="float16"):
        run(a, FakeCudaTensor((256, 512), (512, 1), 0x2000, dtype=torch.bfloat16), out)
    with pytest.raises(ValueError, match="contiguous"):
        run(a, FakeCudaTensor((256, 512), (1024, 1), 0x2000), out)
    with pytest.raises(ValueError, match="2-D"):
        run(FakeCudaTensor((64,), (1,), 0x1000), b, out)
    with pytest.raises(ValueError, match="same CUDA device"):
        run(a, b, FakeCudaTensor((64, 256), (256, 1), 0x3000, device=1))
    with pytest.raises(ValueError, match="do not match"):
        run(a, b, FakeCudaTensor((64, 128), (128, 1), 0x3000))
    with pytest.raises(cublas.CublasError, match="stub failure"):
        run(FakeCudaTensor((13, 512), (512, 1), 0x1000), b, FakeCudaTensor((13, 256), (256, 1), 0x3000))
    with pytest.raises(ValueError, match="b_layout='row' only"):
        cublas.CublasArm("gemmex_nn")(a, b, out, b_layout="col")
