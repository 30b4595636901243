"""CPU tests of code generation, build planning, the cache (keys, hits, pack/unpack) and the runtime's import path."""
import ctypes
import os
import shutil
import subprocess
import sys
import tarfile
from dataclasses import replace
from pathlib import Path

import pytest

from kernels import build, runtime, space
from kernels.codegen import generate
from kernels.config import KernelConfig

REPO = Path(__file__).resolve().parents[2]
SM90 = KernelConfig("sm90", "f32", "col", (128, 256, 64), cluster=(2, 1), schedule="cooperative",
                    scheduler="streamk")
SM90_PP = KernelConfig("sm90", "f16", "row", (64, 128, 64), schedule="pingpong", scheduler="persistent", stages=4)
SM80 = KernelConfig("sm80", "f16", "row", (64, 64, 64), warp=(32, 32, 64), stages=5, alignment=4)
HAVE_NVCC = build.nvcc_path() is not None and build.ninja_path() is not None

# A tiny TU exporting the variant ABI: real nvcc, real ninja, no CUTLASS (compiles in seconds).
FAKE_TU = r'''
#include "hgemm_abi.h"
extern "C" {
HGEMM_EXPORT const char* hgemm_variant_name(void) { return "fake"; }
HGEMM_EXPORT int hgemm_run(const hgemm_args_t*) { return HGEMM_ERR_UNSUPPORTED; }
HGEMM_EXPORT size_t hgemm_workspace_bytes(const hgemm_args_t*) { return 0; }
HGEMM_EXPORT int hgemm_can_implement(const hgemm_args_t*) { return HGEMM_ERR_UNSUPPORTED; }
}
'''


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HGEMM_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


# --- codegen -------------------------------------------------------------------------------------------------------
def test_sm90_source_has_the_configured_cutlass_types():
    src = generate(SM90)
    for fragment in ["cutlass::arch::Sm90", "cutlass::gemm::KernelTmaWarpSpecializedCooperative",
                     "cutlass::epilogue::TmaWarpSpecializedCooperative", "cutlass::gemm::StreamKScheduler",
                     "cute::Shape<cute::_128, cute::_256, cute::_64>", "cute::Shape<cute::_2, cute::_1, cute::_1>", "StageCountAutoCarveout",
                     "using ElementAcc = float;", "using LayoutB = cutlass::layout::ColumnMajor;",
                     "GemmUniversalAdapter", "args.scheduler.splits", "cute::get<0>(stride_b) = p->ldb",
                     f'return "{SM90.name}";']:
        assert fragment in src, fragment
    assert "${" not in src and "GemmIdentityThreadblockSwizzle" not in src


def test_sm90_pingpong_source():
    src = generate(SM90_PP)
    for fragment in ["KernelTmaWarpSpecializedPingpong", "cutlass::epilogue::TmaWarpSpecialized>",
                     "cutlass::gemm::PersistentScheduler", "StageCount<4>", "using ElementAcc = cutlass::half_t;",
                     "using LayoutB = cutlass::layout::RowMajor;", "cute::get<1>(stride_b) = p->ldb"]:
        assert fragment in src, fragment
    assert "StreamKScheduler" not in src and "args.scheduler.splits" not in src


def test_sm80_source_has_the_configured_cutlass_types():
    src = generate(SM80)
    for fragment in ["cutlass::gemm::device::GemmUniversal<", "cutlass::arch::Sm80", "cutlass::arch::OpClassTensorOp",
                     "GemmShape<64, 64, 64>", "GemmShape<32, 32, 64>", "GemmShape<16, 8, 16>",
                     "GemmIdentityThreadblockSwizzle<8>", "5, kAlign, kAlign>", "constexpr int kAlign = 4;",
                     "using ElementAcc = cutlass::half_t;", "using LayoutB = cutlass::layout::RowMajor;"]:
        assert fragment in src, fragment
    assert "${" not in src and "Sm90" not in src


def test_pdl_source_enables_cutlass_gdc_before_cutlass_and_launches_with_the_attribute():
    plain = generate(SM90_PP)
    pdl = generate(replace(SM90_PP, pdl=True))
    assert "GDC" not in plain and "Programmatic" not in plain
    define = pdl.index("#define CUTLASS_ENABLE_GDC_FOR_SM90 1")
    assert define < pdl.index('#include "cutlass/cutlass.h"')  # the hooks are compiled in only if defined first
    assert "cudaLaunchAttributeProgrammaticStreamSerialization" in pdl
    assert pdl.index("config.numAttrs = 1;") < pdl.index("with_pdl[config.numAttrs]")  # after the cluster attribute
    # apart from the name, a pdl variant adds lines and changes none
    removed = set(plain.splitlines()) - set(pdl.replace("_pdl", "").splitlines())
    assert not removed


def test_l2_promotion_source_routes_cutlass_tma_encodes_through_a_256_byte_wrapper():
    plain = generate(SM90_PP)
    l2 = generate(replace(SM90_PP, l2_promotion=256))
    assert "hgemm_l2" not in plain and "CUTLASS_CUDA_DRIVER_WRAPPER_CALL" not in plain
    adapter = l2.index('#include "cutlass/cuda_host_adapter.hpp"')
    redefine = l2.index("#define CUTLASS_CUDA_DRIVER_WRAPPER_CALL(func) hgemm_l2::call_##func")
    # after CUTLASS's own definition (its header is included first, once) and before the headers that expand it
    assert adapter < redefine < l2.index('#include "cute/tensor.hpp"')
    assert "interleave, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, fill)" in l2
    removed = set(plain.splitlines()) - set(l2.replace("_l2p256", "").splitlines())
    assert not removed  # apart from the name, it adds lines and changes none


def test_l2_prefetch_source_enters_cutlass_kernel_through_the_prefetching_wrapper():
    pdl = generate(replace(SM90_PP, pdl=True))
    pf_cfg = replace(SM90_PP, pdl=True, l2_prefetch=True)
    pf = generate(pf_cfg)
    assert "l2_prefetch" not in pdl and "hgemm::l2_prefetching_kernel" not in pdl
    include = pf.index('#include "l2_prefetch.cuh"')
    assert pf.index("#define CUTLASS_ENABLE_GDC_FOR_SM90 1") < include  # the GDC hooks are on in what it includes
    assert pf.count("hgemm::l2_prefetching_kernel<GemmKernel>") == 2  # the attributes are set on what is launched
    assert "cutlass::device_kernel<GemmKernel>" not in pf
    # apart from the name, it adds the include and changes only the two lines naming the entry point
    removed = set(pdl.splitlines()) - set(pf.replace("_l2pf", "").splitlines())
    assert len(removed) == 2 and all("cutlass::device_kernel<GemmKernel>" in line for line in removed)
    # the header is part of its build key, and of no other variant's
    assert "l2_prefetch.cuh" in {p.name for p in generate_headers(pf)}
    assert "l2_prefetch.cuh" not in {p.name for p in generate_headers(pdl)}
    # a capped twin passes its cap in bytes to the same wrapper, and differs from the uncapped twin only there
    capped = generate(replace(pf_cfg, l2_prefetch_kb=64))
    assert capped.count("hgemm::l2_prefetching_kernel<GemmKernel, 65536>") == 2
    removed = set(pf.splitlines()) - set(capped.replace("_l2pf64k", "_l2pf").splitlines())
    assert len(removed) == 2 and all("hgemm::l2_prefetching_kernel<GemmKernel>" in line for line in removed)


@pytest.mark.parametrize("schedule", ["", "cluster"])
def test_splitk_l2_prefetch_adds_the_prefetch_before_the_wait_and_changes_nothing_else(schedule):
    pdl_cfg = KernelConfig("splitk", "f32", "col", (64, 64, 64), stages=4, schedule=schedule, pdl=True)
    pdl, pf = generate(pdl_cfg), generate(replace(pdl_cfg, l2_prefetch=True))
    assert "l2_prefetch" not in pdl and "prefetch_k_tiles_to_l2" not in pdl
    include = pf.index('#include "l2_prefetch_splitk.cuh"')
    assert pf.index("#define CUTLASS_ENABLE_GDC_FOR_SM90 1") < include
    call = pf.index("hgemm::prefetch_splitk_tile_to_l2<GemmKernel>(params)" if not schedule
                    else "hgemm::prefetch_k_tiles_to_l2(params.mainloop.tma_load_a, tAgA")
    assert call < pf.index("cutlass::arch::wait_on_dependent_grids();")  # before the wait: what it is for
    # apart from the name, it only adds lines (so its pdl twin is the same kernel with the prefetch in front)
    assert not set(pdl.splitlines()) - set(pf.replace("_l2pf", "").splitlines())
    assert "l2_prefetch_splitk.cuh" in {p.name for p in generate_headers(pf)}
    assert "l2_prefetch_splitk.cuh" not in {p.name for p in generate_headers(pdl)}
    # a capped twin bounds the k-tiles in that one call (64 KB of 16 KB k-tiles: 4), and differs in nothing else
    capped = generate(replace(pdl_cfg, l2_prefetch=True, l2_prefetch_kb=64))
    changed = set(capped.replace("_l2pf64k", "_l2pf").splitlines()) - set(pf.splitlines())
    assert len(changed) == 1 and "at most 64 KB" in changed.pop()
    assert ("prefetch_splitk_tile_to_l2<GemmKernel, 4>(params)" if not schedule
            else "min(min(k_tiles, kStages), 4));") in capped


def test_a_capped_splitk_twin_refuses_a_prefetch_call_it_cannot_bound(monkeypatch):
    codegen = sys.modules["kernels.codegen.generate"]
    calls = {schedule: call.replace("kStages", "kDepth").replace("<GemmKernel>", "<Kernel>")
             for schedule, call in codegen._L2_PREFETCH_SPLITK_CALL.items()}
    monkeypatch.setattr(codegen, "_L2_PREFETCH_SPLITK_CALL", calls)  # a template edit the cap does not know
    for schedule in ("", "cluster"):
        cfg = KernelConfig("splitk", "f32", "col", (64, 64, 64), stages=4, schedule=schedule, pdl=True,
                           l2_prefetch=True)
        generate(cfg)  # uncapped: the call as it is
        with pytest.raises(ValueError, match="to cap"):
            generate(replace(cfg, l2_prefetch_kb=64))


def test_splitk_source_splits_k_as_the_l_mode_and_reduces_in_one_kernel():
    col = KernelConfig("splitk", "f32", "col", (128, 64, 64), stages=4, pdl=True)
    row = replace(col, acc="f16", b_layout="row", pdl=False)
    src, src_row = generate(col), generate(row)
    for fragment in ["cutlass::gemm::KernelTma>", "StageCount<4>", "cute::Shape<cute::_128, cute::_64, cute::_64>",
                     "GemmUniversalMode::kBatched", "{M, N, Ks, splits}", "cute::get<2>(stride_b) = Ks;",
                     "cute::get<0>(stride_b) = p->ldb", "constexpr bool kPdl = true;", '#include "zeroed_workspace.cuh"',
                     "atomicAdd(reinterpret_cast<float2*>", "__ldcg", f'return "{col.name}";']:
        assert fragment in src, fragment
    assert src.index("#define CUTLASS_ENABLE_GDC_FOR_SM90 1") < src.index('#include "cutlass/cutlass.h"')
    for fragment in ["using ElementAcc = cutlass::half_t;", "cute::get<1>(stride_b) = p->ldb",
                     "cute::get<2>(stride_b) = int64_t(Ks) * p->ldb;", "constexpr bool kPdl = false;"]:
        assert fragment in src_row, fragment
    assert "GDC_FOR_SM90" not in src_row and "${" not in src + src_row
    assert build.variant_job(col).gencode == ("-gencode=arch=compute_90a,code=sm_90a",)
    assert any(h.name == "zeroed_workspace.cuh" for h in generate_headers(src))  # in the build cache key


def test_splitk_cooperative_source_puts_the_same_epilogue_behind_the_warp_specialized_adapter():
    tma = KernelConfig("splitk", "f32", "col", (128, 128, 64), stages=4, pdl=True)
    coop = replace(tma, schedule="cooperative", stages=6)
    src_tma, src = generate(tma), generate(coop)
    for fragment in ["cutlass::gemm::KernelTmaWarpSpecializedCooperative>::CollectiveOp",
                     "Sm90TmaWarpSpecializedAdapter<SplitKEpilogue>>",
                     '#include "cutlass/epilogue/collective/detail.hpp"',
                     "struct SharedStorage { uint32_t arrived_before; };", "ReservedNamedBarriers::EpilogueBarrier",
                     "const int threads = int(cute::size(tiled_mma));", "StageCount<6>", "{M, N, Ks, splits}"]:
        assert fragment in src, fragment
    assert "__syncthreads()" not in src and "KernelTma>" not in src and "${" not in src
    # the KernelTma variants keep the text they were built and tested from (their build cache keys unchanged)
    for fragment in ["cutlass::gemm::KernelTma>::CollectiveOp", "struct SharedStorage {};", "CollectiveMainloop, "
                     "SplitKEpilogue>;", "const int threads = int(blockDim.x);"]:
        assert fragment in src_tma, fragment
    assert src_tma.count("__syncthreads();") == 2 and "detail.hpp" not in src_tma and "This variant" not in src_tma


def generate_headers(source):
    from kernels.codegen.generate import local_headers
    return local_headers(source)


def test_generation_is_deterministic_and_distinct_per_variant():
    sources = {c.name: generate(c) for c in space.variant_set("default")}
    assert all(generate(c) == sources[c.name] for c in space.variant_set("default"))
    assert len(set(sources.values())) == len(sources)


def test_gencode_targets():
    assert build.variant_job(SM90).gencode == ("-gencode=arch=compute_90a,code=sm_90a",)
    assert build.variant_job(SM80).gencode == ("-gencode=arch=compute_80,code=[sm_80,sm_90]",)


# --- keys ----------------------------------------------------------------------------------------------------------
def test_key_changes_with_config_flags_gencode_compiler_and_cutlass():
    job = build.variant_job(SM90)
    key = job.key("nvcc A")
    assert key == build.variant_job(SM90).key("nvcc A")  # stable
    assert key != build.variant_job(SM90_PP).key("nvcc A")
    assert key != job.key("nvcc B")
    from dataclasses import replace
    assert key != replace(job, flags=job.flags + ("-lineinfo",)).key("nvcc A")
    assert key != replace(job, gencode=("-gencode=arch=compute_90,code=sm_90",)).key("nvcc A")
    assert key != replace(job, cutlass="9.9.9").key("nvcc A")
    assert key != replace(job, libs=("cublas",)).key("nvcc A")


def test_key_covers_included_headers(tmp_path):
    (tmp_path / "mine.h").write_text('#include "inner.h"\n')
    (tmp_path / "inner.h").write_text("#define X 1\n")
    job = build.Job("t", '#include "mine.h"\n', ("-gencode=arch=compute_80,code=sm_80",),
                    hashed_include_dirs=(str(tmp_path),))
    before = job.key("v")
    (tmp_path / "inner.h").write_text("#define X 2\n")  # a transitive include changed
    assert job.key("v") != before


def test_variant_job_hashes_the_abi_headers():
    names = {p.name for p in generate.__globals__["local_headers"](generate(SM90))}
    assert names == {"hgemm_abi.h", "hgemm_common.cuh"}


# --- planning, dry run, CLI ----------------------------------------------------------------------------------------
def test_dry_run_plans_without_compiling(cache):
    report = build.build(space.variant_set("smoke"), dry_run=True)
    assert [v.status for v in report.variants] == ["to build"] * 8
    assert report.ok and not (cache / "lib").exists()
    assert "to build" in report.table()


def test_cli_list_and_dry_run(cache):
    env = {**os.environ, "HGEMM_CACHE_DIR": str(cache)}
    out = subprocess.run([sys.executable, "-m", "kernels.build", "--set", "smoke", "--arch", "sm80", "--list"],
                         cwd=REPO, env=env, capture_output=True, text=True, check=True).stdout.split()
    assert out == [c.name for c in space.variant_set("smoke") if c.family == "sm80"]
    proc = subprocess.run([sys.executable, "-m", "kernels.build", "--set", "default", "--dry-run"],
                          cwd=REPO, env=env, capture_output=True, text=True, check=True)
    assert "40 variants" in proc.stdout and "to build" in proc.stdout and "wall" in proc.stdout


def test_cli_tables_plans_exactly_the_variants_the_tables_run(cache):
    """--tables builds what a deployment of the tables needs: every built variant an entry or its graph choice names,
    in the tables and in each card's overlay of them (the H100's split-K arms, session 48), each once, and no cuBLAS
    arm."""
    from kernels import tuned_tables

    overlays = sorted(p for p in (tuned_tables.TABLES_DIR / tuned_tables.GPU_OVERLAYS).glob("*") if p.is_dir())
    tables = [t for where in (None, *overlays) for t in tuned_tables.load_tables("sm90", where).values()]
    expected = {c.kernel for t in tables for e in t.entries.values() for c in (e, e.graph)
                if c is not None and not c.is_arm}
    assert {c.name for t in tables for c in t.variants()} == expected and len(expected) > 10
    env = {**os.environ, "HGEMM_CACHE_DIR": str(cache)}
    out = subprocess.run([sys.executable, "-m", "kernels.build", "--tables", "committed", "--list"],
                         cwd=REPO, env=env, capture_output=True, text=True, check=True).stdout.split()
    assert sorted(out) == sorted(expected)
    sm80 = subprocess.run([sys.executable, "-m", "kernels.build", "--tables", str(tuned_tables.TABLES_DIR), "--arch",
                           "sm80", "--list"], cwd=REPO, env=env, capture_output=True, text=True, check=True)
    assert set(sm80.stdout.split()) == {n for n in expected if n.startswith("sm80_")}


def test_cutlass_is_located_from_the_wheel():
    dirs = build.cutlass_include_dirs()
    assert (dirs[0] / "cutlass" / "gemm" / "collective" / "collective_builder.hpp").is_file()
    assert (dirs[1] / "cutlass" / "util" / "packed_stride.hpp").is_file()
    assert build.cutlass_version() == "4.2.0"


def test_cutlass_dir_env_overrides(monkeypatch, tmp_path):
    locate = build._cutlass()
    monkeypatch.setenv("CUTLASS_DIR", str(tmp_path))
    with pytest.raises(locate.CutlassNotFound):
        locate.include_dirs()
    (tmp_path / "include" / "cutlass").mkdir(parents=True)
    (tmp_path / "include" / "cutlass" / "cutlass.h").write_text("")
    assert locate.include_dirs()[0] == tmp_path / "include"


# --- the cache -----------------------------------------------------------------------------------------------------
@pytest.mark.skipif(not HAVE_NVCC, reason="needs nvcc and ninja")
def test_compile_tu_caches_and_rebuilds_only_on_change(cache):
    gencode = ["-gencode=arch=compute_80,code=sm_80"]
    first = build.compile_tu(FAKE_TU, "fake", gencode=gencode)
    assert first.is_file() and first.parent == cache / "lib" and first.with_suffix(".json").is_file()
    mtime = first.stat().st_mtime_ns
    report = build.run_jobs([build.Job("fake", FAKE_TU, tuple(gencode), include_dirs=(str(build.CODEGEN_DIR),))])
    assert report.variants[0].cached and report.variants[0].path == first
    assert build.compile_tu(FAKE_TU, "fake", gencode=gencode) == first
    assert first.stat().st_mtime_ns == mtime  # cache hit: not recompiled
    changed = build.compile_tu(FAKE_TU + "\n// v2\n", "fake", gencode=gencode)
    assert changed != first and changed.is_file()
    # the built object really exports the ABI
    import ctypes
    lib = ctypes.CDLL(str(first))
    lib.hgemm_variant_name.restype = ctypes.c_char_p
    assert lib.hgemm_variant_name() == b"fake"


@pytest.mark.skipif(not HAVE_NVCC, reason="needs nvcc and ninja")
def test_compile_error_is_reported_per_variant(cache):
    report = build.run_jobs([build.Job("broken", "this is not C++;", ("-gencode=arch=compute_80,code=sm_80",))])
    v = report.variants[0]
    assert v.status == "FAILED" and "compile failed" in v.error and v.path is None
    with pytest.raises(build.BuildError):
        build.compile_tu("this is not C++;", "broken", gencode=["-gencode=arch=compute_80,code=sm_80"])


@pytest.mark.parametrize("suffix,magic", [(".tar.gz", b"\x1f\x8b"), (".tar.xz", b"\xfd7zXZ")])
def test_pack_unpack_round_trip(cache, tmp_path, suffix, magic):
    lib = cache / "lib"
    lib.mkdir(parents=True)
    (lib / "v-0123.so").write_bytes(b"\x7fELF fake")
    (lib / "v-0123.json").write_text('{"name": "v"}')
    archive = build.pack(tmp_path / "fresh_folder" / f"pack{suffix}")  # its folder is made
    assert archive.read_bytes().startswith(magic)  # the name picks the compression
    for f in lib.iterdir():
        f.unlink()
    restored = build.unpack(archive)
    assert sorted(p.name for p in restored) == ["v-0123.json", "v-0123.so"]
    assert (lib / "v-0123.so").read_bytes() == b"\x7fELF fake"


def test_unpack_ignores_unsafe_members(cache, tmp_path):
    evil = tmp_path / "evil.tar.gz"
    payload = tmp_path / "payload"
    payload.write_text("x")
    with tarfile.open(evil, "w:gz") as tar:
        tar.add(payload, arcname="../escape.so")
        tar.add(payload, arcname="lib/../../escape2.so")
        tar.add(payload, arcname="lib/script.sh")
        tar.add(payload, arcname="lib/ok.so")
    assert [p.name for p in build.unpack(evil)] == ["ok.so"]
    assert not (tmp_path / "escape.so").exists()


def test_find_built_without_nvcc_uses_a_restored_build(cache, monkeypatch):
    job = build.variant_job(SM80)
    lib = cache / "lib"
    lib.mkdir(parents=True)
    (lib / f"{SM80.name}-feedfacefeedface.so").write_bytes(b"so")
    (lib / f"{SM80.name}-feedfacefeedface.json").write_text(f'{{"source_key": "{job.source_key()}"}}')
    monkeypatch.setattr(build, "nvcc_version", lambda nvcc=None: build.NO_NVCC)
    assert build.find_built(SM80) == lib / f"{SM80.name}-feedfacefeedface.so"
    assert build.find_built(SM90) is None


# --- runtime without a GPU -----------------------------------------------------------------------------------------
def test_runtime_load_reports_not_built(cache):
    with pytest.raises(runtime.KernelNotBuilt):
        runtime.load(SM80, build_if_missing=False)


def test_abi_struct_matches_the_header():
    import ctypes
    fields = [f[0] for f in runtime.hgemm_args_t._fields_]
    assert fields == ["A", "B", "C", "M", "N", "K", "lda", "ldb", "ldc", "workspace", "workspace_bytes",
                      "raster", "swizzle", "splits", "stream"]
    assert ctypes.sizeof(runtime.hgemm_args_t) == 3 * 8 + 6 * 8 + 2 * 8 + 3 * 4 + 4 + 8  # padding before stream
    header = (build.CODEGEN_DIR / "hgemm_abi.h").read_text()
    for name, value in [("HGEMM_ERR_WORKSPACE_TOO_SMALL", runtime.HGEMM_ERR_WORKSPACE_TOO_SMALL),
                        ("HGEMM_ERR_CUDA_BASE", runtime.HGEMM_ERR_CUDA_BASE)]:
        assert f"#define {name} {value}" in header


def test_describe_status():
    assert runtime.describe_status(0) == "ok"
    assert runtime.describe_status(2) == "workspace too small"
    assert runtime.describe_status(105) == "cutlass::Status::kErrorNotSupported"
    assert runtime.describe_status(10001) == "cudaError 1"


@pytest.mark.skipif(not HAVE_NVCC, reason="needs nvcc and ninja")
def test_build_deadline_stops_and_reports(cache):
    slow = FAKE_TU + "\n// deadline test\n"
    report = build.run_jobs([build.Job("slow", slow, ("-gencode=arch=compute_80,code=sm_80",))], deadline_s=0.2)
    v = report.variants[0]
    assert v.status == "timeout" and v.path is None
    assert not list((cache / "lib").glob("slow-*.so"))


FAKE_C = r'''
#include "hgemm_abi.h"
static hgemm_args_t last;
HGEMM_EXPORT const char* hgemm_variant_name(void) { return "NAME"; }
HGEMM_EXPORT int hgemm_run(const hgemm_args_t* p) { last = *p; return p->splits == 7 ? HGEMM_ERR_UNSUPPORTED : 0; }
HGEMM_EXPORT size_t hgemm_workspace_bytes(const hgemm_args_t* p) { (void)p; return 0; }
HGEMM_EXPORT int hgemm_can_implement(const hgemm_args_t* p) { (void)p; return 0; }
HGEMM_EXPORT const hgemm_args_t* fake_last(void) { return &last; }
'''


class FakeCudaTensor:
    """Just what the runtime's hot path reads from a torch CUDA tensor (the C side below never dereferences)."""

    def __init__(self, shape, stride, ptr):
        import torch
        self.shape, self._stride, self._ptr, self.dtype = torch.Size(shape), stride, ptr, torch.float16

    def get_device(self):
        return 0

    def stride(self):
        return self._stride

    def data_ptr(self):
        return self._ptr

    def numel(self):
        return 1 << 20

    def element_size(self):
        return 1


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_runtime_packs_the_abi_struct(tmp_path, monkeypatch):
    import ctypes
    cfg = SM80  # b_layout=row: b is K×N
    src = tmp_path / "fake.c"
    src.write_text(FAKE_C.replace("NAME", cfg.name))
    so = tmp_path / "fake.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-I", str(build.CODEGEN_DIR), "-o", str(so), str(src)], check=True)
    kernel = runtime.CompiledKernel(cfg, so)
    monkeypatch.setattr(runtime, "_workspace", lambda device, stream, n: FakeCudaTensor((1 << 20,), (1,), 0xABC000))
    monkeypatch.setattr(kernel, "_stream", lambda device: 0x5555)
    a = FakeCudaTensor((64, 512), (520, 1), 0x1000)
    b = FakeCudaTensor((512, 256), (264, 1), 0x2000)
    out = FakeCudaTensor((64, 256), (256, 1), 0x3000)
    assert kernel(a, b, out, raster=1, swizzle=2, splits=3) is out
    lib = ctypes.CDLL(str(so))
    lib.fake_last.restype = ctypes.POINTER(runtime.hgemm_args_t)
    got = lib.fake_last().contents
    assert {f: getattr(got, f) for f, _ in runtime.hgemm_args_t._fields_} == dict(
        A=0x1000, B=0x2000, C=0x3000, M=64, N=256, K=512, lda=520, ldb=264, ldc=256, workspace=0xABC000,
        workspace_bytes=1 << 20, raster=1, swizzle=2, splits=3, stream=0x5555)
    with pytest.raises(runtime.KernelLaunchError, match="not supported"):
        kernel(a, b, out, splits=7)
    with pytest.raises(ValueError, match="do not match"):
        kernel(a, FakeCudaTensor((256, 512), (512, 1), 0x2000), out)
    with pytest.raises(ValueError, match="unit stride"):
        kernel(FakeCudaTensor((64, 512), (1, 64), 0x1000), b, out)
    with pytest.raises(runtime.KernelError, match="exports variant"):
        runtime.CompiledKernel(SM90, so)


# --- builds made by another host compiler ---------------------------------------------------------------------------
LOCAL = "nvcc: Cuda compilation tools, release 13.0, V13.0.88\nhost compiler: gcc (Debian 12.2.0) 12.2.0"


def _place(cache: Path, job: build.Job, nvcc: str, tag: str, loadable: bool = True) -> Path:
    """A cached object of job as another machine would have packed it: lib/<name>-<tag>.so plus its manifest."""
    lib = cache / "lib"
    lib.mkdir(parents=True, exist_ok=True)
    so = lib / f"{job.name}-{tag}.so"
    if loadable:
        src = cache / f"{tag}.c"
        src.write_text("int foreign_marker(void) { return 7; }\n")
        subprocess.run(["cc", "-shared", "-fPIC", "-o", str(so), str(src)], check=True)
    else:
        so.write_bytes(b"not an ELF object")
    manifest = {"name": job.name, "key": tag, "source_key": job.source_key(), "nvcc": nvcc}
    so.with_suffix(".json").write_text(__import__("json").dumps(manifest))
    return so


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_a_build_by_another_host_compiler_with_the_same_nvcc_is_used_when_it_loads(cache, monkeypatch):
    job = build.variant_job(SM80)
    other_host = LOCAL.replace("gcc (Debian 12.2.0) 12.2.0", "gcc (Ubuntu 13.2.0) 13.2.0")
    assert build.foreign_build(job, LOCAL) is None
    _place(cache, job, other_host, "broken", loadable=False)  # does not dlopen here: skipped
    _place(cache, job, LOCAL.replace("V13.0.88", "V12.8.93"), "oldnvcc")  # another nvcc: other device code
    assert build.foreign_build(job, LOCAL) is None
    good = _place(cache, job, other_host, "portable")
    assert build.foreign_build(job, LOCAL) == good
    monkeypatch.setattr(build, "nvcc_version", lambda nvcc=None: LOCAL)
    assert build.find_built(SM80) == good  # what runtime.load finds
    report = build.run_jobs([job], dry_run=True)
    assert report.variants[0].cached and report.variants[0].path == good  # and what a build counts as cached
    monkeypatch.setenv("HGEMM_FOREIGN_BUILDS", "0")
    assert build.foreign_build(job, LOCAL) is None
    monkeypatch.delenv("HGEMM_FOREIGN_BUILDS")
    wrapper = build.Job("hgemm_cublas_arms", "// wrapper", ("-gencode=arch=compute_90a,code=sm_90a",),
                        libs=("cublas",))
    _place(cache, wrapper, other_host, "elsewhere")
    assert build.foreign_build(wrapper, LOCAL) is None  # linked against a library: never taken from elsewhere


def test_other_source_is_never_taken_for_a_foreign_build(cache):
    job = build.variant_job(SM80)
    other = build.variant_job(KernelConfig("sm80", "f16", "row", (64, 64, 64), warp=(32, 32, 64), stages=4,
                                           alignment=4))
    _place(cache, other, LOCAL.replace("12.2.0) 12.2.0", "13.2.0) 13.2.0"), "x")
    (cache / "lib" / f"{other.name}-x.so").rename(cache / "lib" / f"{job.name}-x.so")
    (cache / "lib" / f"{other.name}-x.json").rename(cache / "lib" / f"{job.name}-x.json")
    assert build.foreign_build(job, LOCAL) is None  # same name, different source key


def test_pack_can_hold_just_the_objects_of_one_build(cache, tmp_path):
    lib = cache / "lib"
    lib.mkdir(parents=True)
    for stem in ("a-1", "b-2"):
        (lib / f"{stem}.so").write_bytes(b"\x7fELF")
        (lib / f"{stem}.json").write_text("{}")
    archive = build.pack(tmp_path / "some.tar.gz", [lib / "b-2.so"])
    with tarfile.open(archive) as tar:
        assert sorted(tar.getnames()) == ["lib/b-2.json", "lib/b-2.so"]
    with tarfile.open(build.pack(tmp_path / "all.tar.gz")) as tar:
        assert len(tar.getnames()) == 4


@pytest.mark.skipif(shutil.which("cc") is None, reason="needs a C compiler")
def test_a_cached_object_without_its_manifest_gets_one_so_packs_of_it_serve_other_machines(cache, monkeypatch,
                                                                                           tmp_path):
    """ninja renames each finished .so into place, but the manifests are written when the whole build ends: an object
    finished by a build still running (or stopped) has none, and a pack of it would not be found as a foreign build
    on the GPU host (session 11 lost a device call to that). Finding it cached writes the manifest."""
    monkeypatch.setattr(build, "nvcc_version", lambda nvcc=None: LOCAL)
    job = build.variant_job(SM80)
    so, manifest = build._paths(job, job.key(LOCAL))
    so.parent.mkdir(parents=True, exist_ok=True)
    src = tmp_path / "obj.c"
    src.write_text("int marker(void) { return 1; }\n")
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(so), str(src)], check=True)
    assert not manifest.exists()
    report = build.run_jobs([job], dry_run=True)
    assert report.variants[0].cached and manifest.is_file()
    meta = __import__("json").loads(manifest.read_text())
    assert meta["source_key"] == job.source_key() and meta["nvcc"] == LOCAL and meta["compile_s"] is None
    other_host = LOCAL.replace("gcc (Debian 12.2.0) 12.2.0", "gcc (Ubuntu 13.2.0) 13.2.0")
    assert build.foreign_build(job, other_host) == so  # what the other machine finds in a pack of it


@pytest.mark.skipif(not (shutil.which("cc") and shutil.which("strip")), reason="needs a C compiler and binutils")
def test_pack_strips_objects_and_they_still_load_and_run(cache, tmp_path):
    lib = cache / "lib"
    lib.mkdir(parents=True)
    src = tmp_path / "v.c"
    src.write_text("__attribute__((visibility(\"default\"))) int hgemm_answer(void) { return 42; }\n"
                   "static int helper(int x) { return x + 1; } int unused(int x) { return helper(x); }\n")
    so = lib / "v-0123.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-g", "-o", str(so), str(src)], check=True)
    archive = build.pack(tmp_path / "pack.tar.gz")
    with tarfile.open(archive) as tar:
        packed = tar.extractfile("lib/v-0123.so").read()
    assert 0 < len(packed) < so.stat().st_size  # the debug info and static symbols are gone
    original = so.read_bytes()
    so.unlink()
    build.unpack(archive)
    assert so.read_bytes() == packed and packed != original
    assert ctypes.CDLL(str(so)).hgemm_answer() == 42


@pytest.mark.parametrize("argv, words", [
    (["--set", "nonexistent", "--dry-run"], "unknown variant set 'nonexistent'"),
    (["--set", "smoke", "--exclude", "nope", "--dry-run"], "unknown variant set 'nope'"),
    (["--tables", "/nonexistent", "--dry-run"], "'/nonexistent' is not a directory"),
])
def test_the_cli_names_an_unknown_set_or_tables_directory(argv, words, capsys):
    with pytest.raises(SystemExit) as exit_info:
        build.main(argv)
    assert exit_info.value.code == 2 and words in capsys.readouterr().err
