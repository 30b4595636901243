// Host time of one launch, piece by piece, timed in C: what hgemm_run spends beside the driver's own launch.
// Compiled and called by kernels/launch_anatomy.py (launch_anatomy(): one JSON object per measurement, one per line,
// written to out_path; the timed loops run no Python).
//
// Each piece is timed alone (CLOCK_MONOTONIC around one call, median of CALLS); the stream is synchronized every 64
// calls outside the timed region so the launch queue never fills. Operands are random fp16 (never zeros), the legacy
// default stream is used (torch's current stream unless the caller set another one).
#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "hgemm_abi.h"

#define CHECK(call)                                                                               \
  do {                                                                                            \
    cudaError_t e_ = (call);                                                                      \
    if (e_ != cudaSuccess) {                                                                      \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_)); \
      std::exit(2);                                                                               \
    }                                                                                             \
  } while (0)

namespace {

// The size of an sm90 variant's CUTLASS params (~1 KB with its three TMA descriptors): a launch copies them.
struct alignas(64) BigParams {
  unsigned char bytes[1024];
};

__global__ void empty_kernel() {}
__global__ void big_params_kernel(const __grid_constant__ BigParams p) {
  if (p.bytes[threadIdx.x] == 0xff && blockIdx.x == 1u << 30) asm volatile("trap;");  // keeps the params live
}

double now_us() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec * 1e-3;
}

struct Stats {
  double median, p10, p90;
};

Stats summarize(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[std::min(v.size() - 1, size_t(q * v.size()))]; };
  return {at(0.5), at(0.1), at(0.9)};
}

// One piece timed `calls` times; `between` (untimed) runs before each call, the stream is drained every 64 calls.
Stats time_piece(int calls, const std::function<void()>& piece, const std::function<void()>& between = nullptr) {
  for (int i = 0; i < 50; ++i) piece();  // warm-up: first-call lookups, caches, the instruction footprint
  CHECK(cudaDeviceSynchronize());
  std::vector<double> t;
  t.reserve(calls);
  for (int i = 0; i < calls; ++i) {
    if (between) between();
    double t0 = now_us();
    piece();
    t.push_back(now_us() - t0);
    if (i % 64 == 63) CHECK(cudaDeviceSynchronize());
  }
  CHECK(cudaDeviceSynchronize());
  return summarize(t);
}

FILE* out = nullptr;

void report(const char* what, const std::string& variant, Stats s) {
  std::fprintf(out, "{\"piece\": \"%s\", \"variant\": \"%s\", \"median_us\": %.3f, \"p10_us\": %.3f, \"p90_us\": %.3f}\n",
              what, variant.c_str(), s.median, s.p10, s.p90);
  std::fflush(out);
}

template <class Fn>
Fn driver_entry(const char* symbol) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  CHECK(cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || fn == nullptr) {
    std::fprintf(stderr, "driver entry point %s not found\n", symbol);
    std::exit(2);
  }
  return reinterpret_cast<Fn>(fn);
}

void* random_fp16(size_t n, unsigned seed) {
  std::vector<__half> host(n);
  std::srand(seed);
  for (auto& x : host) x = __float2half(float(std::rand()) / RAND_MAX * 2.0f - 1.0f);
  void* dev = nullptr;
  CHECK(cudaMalloc(&dev, n * sizeof(__half)));
  CHECK(cudaMemcpy(dev, host.data(), n * sizeof(__half), cudaMemcpyHostToDevice));
  return dev;
}

// Floors no variant can go below: the runtime calls hgemm_run makes besides the launch, and launches of kernels that
// do nothing, plain and in the form the sm90 variants use (cudaLaunchKernelExC, 1 KB params, cluster, PDL).
void floors(int calls) {
  int device = 0;
  report("cudaGetDevice", "", time_piece(calls, [&] { CHECK(cudaGetDevice(&device)); }));
  report("cudaGetLastError", "", time_piece(calls, [] { CHECK(cudaGetLastError()); }));
  report("stream sync, idle", "", time_piece(calls, [] { CHECK(cudaStreamSynchronize(0)); }));

  using Encode = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                              const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                              CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);
  using Replace = CUresult (*)(CUtensorMap*, void*);
  Encode encode = driver_entry<Encode>("cuTensorMapEncodeTiled");
  Replace replace = driver_entry<Replace>("cuTensorMapReplaceAddress");
  void* buffers[2] = {random_fp16(1 << 20, 1), random_fp16(1 << 20, 2)};
  alignas(64) CUtensorMap map;
  cuuint64_t dims[2] = {1024, 1024}, strides[1] = {1024 * sizeof(__half)};
  cuuint32_t box[2] = {64, 64}, elem[2] = {1, 1};
  auto encode_once = [&](void* address) {
    if (encode(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, address, dims, strides, box, elem,
               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS)
      std::exit(3);
  };
  encode_once(buffers[0]);
  int flip = 0;
  report("cuTensorMapEncodeTiled", "", time_piece(calls, [&] { encode_once(buffers[++flip & 1]); }));
  report("cuTensorMapReplaceAddress x3", "", time_piece(calls, [&] {
           for (int i = 0; i < 3; ++i)
             if (replace(&map, buffers[++flip & 1]) != CUDA_SUCCESS) std::exit(3);
         }));

  report("launch <<<1,128>>> empty", "", time_piece(calls, [] {
           empty_kernel<<<1, 128>>>();
           CHECK(cudaGetLastError());
         }));
  BigParams params;
  std::memset(&params, 1, sizeof params);
  auto launch_ex = [&](int cluster, bool pdl) {
    cudaLaunchConfig_t config = {};
    cudaLaunchAttribute attribute[2] = {};
    config.gridDim = dim3(2 * cluster);
    config.blockDim = dim3(128);
    config.stream = 0;
    int n = 0;
    if (cluster > 1) {
      attribute[n].id = cudaLaunchAttributeClusterDimension;
      attribute[n].val.clusterDim.x = cluster;
      attribute[n].val.clusterDim.y = attribute[n].val.clusterDim.z = 1;
      ++n;
    }
    if (pdl) {
      attribute[n].id = cudaLaunchAttributeProgrammaticStreamSerialization;
      attribute[n].val.programmaticStreamSerializationAllowed = 1;
      ++n;
    }
    config.attrs = attribute;
    config.numAttrs = n;
    void* args[] = {&params};
    CHECK(cudaLaunchKernelExC(&config, reinterpret_cast<const void*>(big_params_kernel), args));
    CHECK(cudaGetLastError());
  };
  report("cudaLaunchKernelExC 1KB params", "", time_piece(calls, [&] { launch_ex(1, false); }));
  report("cudaLaunchKernelExC 1KB params, cluster 2", "", time_piece(calls, [&] { launch_ex(2, false); }));
  report("cudaLaunchKernelExC 1KB params, cluster 2, PDL", "", time_piece(calls, [&] { launch_ex(2, true); }));

  // The same launch through the driver API (what the runtime wraps), on the runtime's function handle.
  using GetFunc = CUresult (*)(CUfunction*, const void*);
  using LaunchEx = CUresult (*)(const CUlaunchConfig*, CUfunction, void**, void**);
  cudaFunction_t func = nullptr;
  CHECK(cudaGetFuncBySymbol(&func, reinterpret_cast<const void*>(big_params_kernel)));
  LaunchEx launch_driver = driver_entry<LaunchEx>("cuLaunchKernelEx");
  report("cuLaunchKernelEx 1KB params, cluster 2", "", time_piece(calls, [&] {
           CUlaunchConfig config = {};
           CUlaunchAttribute attribute[1] = {};
           config.gridDimX = 4;
           config.gridDimY = config.gridDimZ = 1;
           config.blockDimX = 128;
           config.blockDimY = config.blockDimZ = 1;
           config.hStream = 0;
           attribute[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
           attribute[0].value.clusterDim.x = 2;
           attribute[0].value.clusterDim.y = attribute[0].value.clusterDim.z = 1;
           config.attrs = attribute;
           config.numAttrs = 1;
           void* args[] = {&params};
           if (launch_driver(&config, reinterpret_cast<CUfunction>(func), args, nullptr) != CUDA_SUCCESS) std::exit(3);
         }));
  CHECK(cudaFree(buffers[0]));
  CHECK(cudaFree(buffers[1]));
}

struct Variant {
  std::string name;
  int (*run)(const hgemm_args_t*);
  size_t (*workspace_bytes)(const hgemm_args_t*);
  void (*cache_stats)(hgemm_cache_stats_t*);
};

Variant open_variant(const char* path) {
  void* handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    std::fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
    std::exit(2);
  }
  Variant v;
  v.name = reinterpret_cast<const char* (*)()>(dlsym(handle, "hgemm_variant_name"))();
  v.run = reinterpret_cast<int (*)(const hgemm_args_t*)>(dlsym(handle, "hgemm_run"));
  v.workspace_bytes = reinterpret_cast<size_t (*)(const hgemm_args_t*)>(dlsym(handle, "hgemm_workspace_bytes"));
  v.cache_stats = reinterpret_cast<void (*)(hgemm_cache_stats_t*)>(dlsym(handle, "hgemm_cache_stats"));
  if (!v.run || !v.workspace_bytes || !v.cache_stats) {
    std::fprintf(stderr, "%s lacks the hgemm ABI\n", path);
    std::exit(2);
  }
  return v;
}

// hgemm_run on a cache hit (same operands), retargeted (alternating two operand sets, as the benchmark and a server
// see them), and the benchmark's per-call sample (sync, call, sync) split at the call's return.
void variant_pieces(int calls, const Variant& v, int64_t M, int64_t N, int64_t K, bool b_col) {
  hgemm_args_t args[2] = {};
  for (int i = 0; i < 2; ++i) {
    args[i].A = random_fp16(size_t(M) * K, 10 + i);
    args[i].B = random_fp16(size_t(K) * N, 20 + i);
    args[i].C = random_fp16(size_t(M) * N, 30 + i);
    args[i].M = M, args[i].N = N, args[i].K = K;
    args[i].lda = K, args[i].ldb = b_col ? K : N, args[i].ldc = N;
  }
  size_t workspace_bytes = std::max<size_t>(v.workspace_bytes(&args[0]), 1 << 20);
  void* workspace = nullptr;
  CHECK(cudaMalloc(&workspace, workspace_bytes));
  for (auto& a : args) a.workspace = workspace, a.workspace_bytes = workspace_bytes;
  auto run = [&](const hgemm_args_t* a) {
    int status = v.run(a);
    if (status != HGEMM_OK) {
      std::fprintf(stderr, "%s: hgemm_run returned %d\n", v.name.c_str(), status);
      std::exit(4);
    }
  };
  report("hgemm_run, cache hit", v.name, time_piece(calls, [&] { run(&args[0]); }));
  int flip = 0;
  report("hgemm_run, retargeted", v.name, time_piece(calls, [&] { run(&args[++flip & 1]); }));
  std::vector<double> host, wait;
  for (int i = 0; i < calls; ++i) {
    CHECK(cudaStreamSynchronize(0));
    double t0 = now_us();
    run(&args[i & 1]);
    double t1 = now_us();
    CHECK(cudaStreamSynchronize(0));
    double t2 = now_us();
    host.push_back(t1 - t0);
    wait.push_back(t2 - t1);
  }
  report("per call: host", v.name, summarize(host));
  report("per call: wait", v.name, summarize(wait));
  // The same after 8 MB of host memory was written (CPU caches hold little of the launch path): the cold call, as
  // after a server's other work or the benchmark's other competitors. Fewer calls: each write takes ~1 ms.
  std::vector<unsigned char> junk(8 << 20);
  volatile unsigned char sink = 0;  // reads the writes back: they are not dead stores to elide
  host.clear();
  for (int i = 0; i < std::max(100, calls / 10); ++i) {
    std::memset(junk.data(), i & 0xff, junk.size());
    sink = sink + junk[(size_t(i) * 4099) % junk.size()];
    CHECK(cudaStreamSynchronize(0));
    double t0 = now_us();
    run(&args[i & 1]);
    host.push_back(now_us() - t0);
  }
  CHECK(cudaStreamSynchronize(0));
  report("per call: host, caches flushed", v.name, summarize(host));
  hgemm_cache_stats_t stats;
  v.cache_stats(&stats);
  std::fprintf(out, "{\"piece\": \"cache stats\", \"variant\": \"%s\", \"hits\": %llu, \"retargeted\": %llu, "
              "\"prepared\": %llu, \"retarget_refused\": %llu}\n",
              v.name.c_str(), (unsigned long long)stats.hits, (unsigned long long)stats.retargeted,
              (unsigned long long)stats.prepared, (unsigned long long)stats.retarget_refused);
  for (auto& a : args) {
    CHECK(cudaFree(const_cast<void*>(a.A)));
    CHECK(cudaFree(const_cast<void*>(a.B)));
    CHECK(cudaFree(a.C));
  }
  CHECK(cudaFree(workspace));
}

}  // namespace

// variants[i]: the path of a built variant's .so, b_col[i]: its B layout (1: col). Exits the process on a failed
// CUDA call (a diagnostic: the message goes to stderr).
extern "C" __attribute__((visibility("default"))) int launch_anatomy(const char* out_path, int calls, int64_t M,
                                                                     int64_t N, int64_t K, const char* const* variants,
                                                                     const int* b_col, int n_variants) {
  out = std::fopen(out_path, "w");
  if (out == nullptr || calls < 100) return 1;
  CHECK(cudaFree(nullptr));  // the context
  floors(calls);
  for (int i = 0; i < n_variants; ++i) variant_pieces(calls, open_variant(variants[i]), M, N, K, b_col[i] != 0);
  std::fclose(out);
  return 0;
}
