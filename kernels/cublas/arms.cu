// Our own thin wrapper around cuBLAS (cublasGemmEx) and cuBLASLt (heuristic / chosen algorithm), C ABI in arms.h.
//
// Row-major -> column-major: cuBLAS is column-major, so a row-major C[M,N] is a column-major C^T[N,M] and we compute
// C^T = B^T * A^T: cuBLAS's "A" operand is our B, its "B" operand is our A, and m/n are swapped.
//   our A [M,K] row-major   == column-major K x M, ld = K       -> cuBLAS op(B) = N
//   our B [K,N] row-major   == column-major N x K, ld = N       -> cuBLAS op(A) = N   ("NN", b_col = 0)
//   our B [N,K] row-major   == column-major K x N, ld = K       -> cuBLAS op(A) = T   ("TN", b_col = 1)
//   our C [M,N] row-major   == column-major N x M, ld = N
// Every cuBLAS / CUDA status is checked and returned; nothing is launched after a failed call.
#include "arms.h"

#include <climits>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>
#include <atomic>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

namespace {

constexpr int kMaxDevices = 64;

// Scalars alpha = 1, beta = 0 in each scale type (fp16 as raw bits: 0x3C00 is 1.0).
const float kOneF = 1.0f, kZeroF = 0.0f;
const uint16_t kOneH = 0x3C00, kZeroH = 0x0000;

int cuda_status(cudaError_t e) { return e == cudaSuccess ? HGEMM_ARMS_OK : HGEMM_ARMS_CUDA_BASE + int(e); }

#define HGEMM_RETURN_IF_ERROR(expr)       \
  do {                                    \
    int hgemm_status_ = (expr);           \
    if (hgemm_status_ != HGEMM_ARMS_OK) { \
      return hgemm_status_;               \
    }                                     \
  } while (0)

// Makes `device` current for the scope and restores the previous device afterwards.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    status_ = cuda_status(cudaGetDevice(&previous_));
    if (status_ == HGEMM_ARMS_OK && previous_ != device) {
      status_ = cuda_status(cudaSetDevice(device));
      restore_ = status_ == HGEMM_ARMS_OK;
    }
  }
  ~DeviceGuard() {
    if (restore_) cudaSetDevice(previous_);  // best effort: the call's own status was already decided
  }
  int status() const { return status_; }

 private:
  int previous_ = 0;
  int status_ = HGEMM_ARMS_OK;
  bool restore_ = false;
};

// This thread's stream-capture mode relaxed for the scope, as torch's allocator does around its cudaMalloc. Handle
// creation allocates and frees device memory, which a capture in global mode refuses: cuBLAS then reports the handle
// "not initialized" and the capture is invalidated (session 26: a dispatcher whose first GemmEx call was captured).
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  ~RelaxedCaptureMode() { cudaThreadExchangeStreamCaptureMode(&mode_); }

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

struct DeviceHandles {
  std::atomic<cublasHandle_t> blas{nullptr};
  std::atomic<cublasLtHandle_t> lt{nullptr};
  std::mutex blas_call;  // cublasSetStream/SetWorkspace mutate the handle: one GemmEx call at a time per device
  // What the handle is bound to now (guarded by blas_call), so a call on the same stream and workspace sets nothing.
  bool bound = false;
  cudaStream_t stream = nullptr;
  void* workspace = nullptr;
  size_t workspace_bytes = 0;
};
DeviceHandles g_handles[kMaxDevices];
std::mutex g_create_mutex;

int check_device(int device) {
  int count = 0;
  HGEMM_RETURN_IF_ERROR(cuda_status(cudaGetDeviceCount(&count)));
  return (device >= 0 && device < count && device < kMaxDevices) ? HGEMM_ARMS_OK : HGEMM_ARMS_BAD_DEVICE;
}

// The handles are created once per device (under the device's guard, since a cuBLAS handle binds to the current
// device) and kept for the life of the process. The device index is bounds-checked before the table is touched.
template <class Handle, class Create>
int cached_handle(int device, std::atomic<Handle> DeviceHandles::*slot, Create create, Handle* out) {
  if (device < 0 || device >= kMaxDevices) return HGEMM_ARMS_BAD_DEVICE;
  std::atomic<Handle>& cell = g_handles[device].*slot;
  *out = cell.load(std::memory_order_acquire);
  if (*out) return HGEMM_ARMS_OK;
  std::lock_guard<std::mutex> lock(g_create_mutex);
  *out = cell.load(std::memory_order_acquire);
  if (*out) return HGEMM_ARMS_OK;
  HGEMM_RETURN_IF_ERROR(check_device(device));
  DeviceGuard guard(device);
  HGEMM_RETURN_IF_ERROR(guard.status());
  Handle h = nullptr;
  {
    RelaxedCaptureMode relaxed;  // the first call may be a captured one (see RelaxedCaptureMode)
    HGEMM_RETURN_IF_ERROR(int(create(&h)));
  }
  cell.store(h, std::memory_order_release);
  *out = h;
  return HGEMM_ARMS_OK;
}

int blas_handle(int device, cublasHandle_t* out) {
  return cached_handle(device, &DeviceHandles::blas, [](cublasHandle_t* h) { return cublasCreate(h); }, out);
}

int lt_handle(int device, cublasLtHandle_t* out) {
  return cached_handle(device, &DeviceHandles::lt, [](cublasLtHandle_t* h) { return cublasLtCreate(h); }, out);
}

int check_problem(int device, int b_col, int acc, int64_t m, int64_t n, int64_t k) {
  if (device < 0 || device >= kMaxDevices) return HGEMM_ARMS_BAD_DEVICE;
  if ((b_col != 0 && b_col != 1) || (acc != 0 && acc != 1)) return HGEMM_ARMS_BAD_ARGUMENT;
  if (m <= 0 || n <= 0 || k <= 0) return HGEMM_ARMS_BAD_ARGUMENT;
  if (m > INT_MAX || n > INT_MAX || k > INT_MAX) return HGEMM_ARMS_SHAPE_TOO_LARGE;
  return HGEMM_ARMS_OK;
}

// ---- cuBLASLt plans ---------------------------------------------------------------------------------------------

struct LtPlan {
  int device = 0;
  cublasLtHandle_t lt = nullptr;
  cudaDataType_t scale_type = CUDA_R_32F;
  bool heuristic = false;  // false: top_n = 0, only the implicit algorithm (algo_index -1) may run
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;  // cuBLAS's A (= our B), B (= our A), C = D
  std::vector<cublasLtMatmulHeuristicResult_t> algos;           // only those with state == CUBLAS_STATUS_SUCCESS

  ~LtPlan() {  // only reached for plans whose creation failed; cached plans live until exit
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (op) cublasLtMatmulDescDestroy(op);
  }
};

using PlanKey = std::tuple<int, int, int, int64_t, int64_t, int64_t, uint32_t, size_t, int, int>;
std::mutex g_plan_mutex;
std::map<PlanKey, std::unique_ptr<LtPlan>>* g_plans = new std::map<PlanKey, std::unique_ptr<LtPlan>>();  // leaked
// on purpose: destroying descriptors during static destruction may run after the CUDA/cuBLAS libraries unloaded.

template <typename T>
int set_desc(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, T value) {
  return int(cublasLtMatmulDescSetAttribute(d, attr, &value, sizeof(value)));
}

template <typename T>
int set_pref(cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t attr, T value) {
  return int(cublasLtMatmulPreferenceSetAttribute(p, attr, &value, sizeof(value)));
}

int query_heuristic(LtPlan* plan, uint32_t align_bytes, size_t max_workspace_bytes, int top_n) {
  cublasLtMatmulPreference_t pref = nullptr;
  HGEMM_RETURN_IF_ERROR(int(cublasLtMatmulPreferenceCreate(&pref)));
  std::unique_ptr<cublasLtMatmulPreferenceOpaque_t, cublasStatus_t (*)(cublasLtMatmulPreference_t)> pref_owner(
      pref, cublasLtMatmulPreferenceDestroy);
  HGEMM_RETURN_IF_ERROR(set_pref(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64_t(max_workspace_bytes)));
  // Tell the heuristic how aligned the pointers really are, so it never picks an algorithm that needs more.
  for (auto attr : {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                    CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES}) {
    HGEMM_RETURN_IF_ERROR(set_pref(pref, attr, align_bytes));
  }
  std::vector<cublasLtMatmulHeuristicResult_t> results(top_n);
  int returned = 0;
  HGEMM_RETURN_IF_ERROR(int(cublasLtMatmulAlgoGetHeuristic(plan->lt, plan->op, plan->a, plan->b, plan->c, plan->c,
                                                           pref, top_n, results.data(), &returned)));
  for (int i = 0; i < returned; ++i) {
    if (results[i].state == CUBLAS_STATUS_SUCCESS) plan->algos.push_back(results[i]);
  }
  return plan->algos.empty() ? HGEMM_ARMS_NO_ALGORITHM : HGEMM_ARMS_OK;
}

int create_plan(LtPlan* plan, int b_col, int acc, int64_t m, int64_t n, int64_t k, uint32_t align_bytes,
                size_t max_workspace_bytes, int top_n, int scale_type_override) {
  const cublasComputeType_t compute = acc == 0 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_16F;
  plan->scale_type = scale_type_override >= 0 ? cudaDataType_t(scale_type_override)
                                              : (acc == 0 ? CUDA_R_32F : CUDA_R_16F);
  HGEMM_RETURN_IF_ERROR(int(cublasLtMatmulDescCreate(&plan->op, compute, plan->scale_type)));
  HGEMM_RETURN_IF_ERROR(set_desc(plan->op, CUBLASLT_MATMUL_DESC_TRANSA, int32_t(b_col ? CUBLAS_OP_T : CUBLAS_OP_N)));
  HGEMM_RETURN_IF_ERROR(set_desc(plan->op, CUBLASLT_MATMUL_DESC_TRANSB, int32_t(CUBLAS_OP_N)));
  if (b_col) {
    HGEMM_RETURN_IF_ERROR(int(cublasLtMatrixLayoutCreate(&plan->a, CUDA_R_16F, uint64_t(k), uint64_t(n), k)));
  } else {
    HGEMM_RETURN_IF_ERROR(int(cublasLtMatrixLayoutCreate(&plan->a, CUDA_R_16F, uint64_t(n), uint64_t(k), n)));
  }
  HGEMM_RETURN_IF_ERROR(int(cublasLtMatrixLayoutCreate(&plan->b, CUDA_R_16F, uint64_t(k), uint64_t(m), k)));
  HGEMM_RETURN_IF_ERROR(int(cublasLtMatrixLayoutCreate(&plan->c, CUDA_R_16F, uint64_t(n), uint64_t(m), n)));
  plan->heuristic = top_n > 0;
  if (plan->heuristic) {
    HGEMM_RETURN_IF_ERROR(query_heuristic(plan, align_bytes, max_workspace_bytes, top_n));
  }
  return HGEMM_ARMS_OK;
}

const void* alpha_for(cudaDataType_t scale) { return scale == CUDA_R_16F ? (const void*)&kOneH : (const void*)&kOneF; }
const void* beta_for(cudaDataType_t scale) { return scale == CUDA_R_16F ? (const void*)&kZeroH : (const void*)&kZeroF; }

template <typename T>
int read_algo_attr(const cublasLtMatmulAlgo_t* algo, cublasLtMatmulAlgoConfigAttributes_t attr, int32_t* out) {
  T value{};
  size_t written = 0;
  HGEMM_RETURN_IF_ERROR(int(cublasLtMatmulAlgoConfigGetAttribute(algo, attr, &value, sizeof(value), &written)));
  *out = int32_t(value);
  return HGEMM_ARMS_OK;
}

}  // namespace

extern "C" {

int hgemm_arms_abi_version(void) { return HGEMM_ARMS_ABI_VERSION; }

const char* hgemm_arms_status_string(int status) {
  switch (status) {
    case HGEMM_ARMS_OK: return "success";
    case HGEMM_ARMS_BAD_ARGUMENT: return "hgemm arms: bad argument (null pointer, unknown acc/layout or size <= 0)";
    case HGEMM_ARMS_BAD_ALGO_INDEX: return "hgemm arms: algorithm index out of range for this plan";
    case HGEMM_ARMS_NO_ALGORITHM: return "hgemm arms: the cuBLASLt heuristic returned no usable algorithm";
    case HGEMM_ARMS_WORKSPACE_TOO_SMALL: return "hgemm arms: the algorithm needs more workspace than was passed";
    case HGEMM_ARMS_BAD_DEVICE: return "hgemm arms: device ordinal out of range";
    case HGEMM_ARMS_SHAPE_TOO_LARGE: return "hgemm arms: M, N or K exceeds the 32-bit cuBLAS interface";
    default: break;
  }
  if (status >= HGEMM_ARMS_CUDA_BASE) return cudaGetErrorString(cudaError_t(status - HGEMM_ARMS_CUDA_BASE));
  if (status > 0) return cublasGetStatusString(cublasStatus_t(status));
  return "hgemm arms: unknown status";
}

int hgemm_gemmex(int device, int b_col, int acc, int64_t m, int64_t n, int64_t k, const void* A, const void* B, void* C,
                 void* workspace, size_t workspace_bytes, void* stream) {
  HGEMM_RETURN_IF_ERROR(check_problem(device, b_col, acc, m, n, k));
  if (!A || !B || !C) return HGEMM_ARMS_BAD_ARGUMENT;
  DeviceGuard guard(device);
  HGEMM_RETURN_IF_ERROR(guard.status());
  cublasHandle_t h = nullptr;
  HGEMM_RETURN_IF_ERROR(blas_handle(device, &h));

  const cudaDataType_t scale = acc == 0 ? CUDA_R_32F : CUDA_R_16F;
  const cublasComputeType_t compute = acc == 0 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_16F;
  const cublasOperation_t op_b = b_col ? CUBLAS_OP_T : CUBLAS_OP_N;
  const int ldb = int(b_col ? k : n);
  if (!workspace || !workspace_bytes) {  // no caller workspace: cuBLAS's default pool
    workspace = nullptr;
    workspace_bytes = 0;
  }

  DeviceHandles& dh = g_handles[device];
  std::lock_guard<std::mutex> lock(dh.blas_call);
  const cudaStream_t s = static_cast<cudaStream_t>(stream);
  if (!dh.bound || dh.stream != s || dh.workspace != workspace || dh.workspace_bytes != workspace_bytes) {
    dh.bound = false;  // until both calls below succeeded
    HGEMM_RETURN_IF_ERROR(int(cublasSetStream(h, s)));
    // cublasSetStream resets the workspace to cuBLAS's default pool, so the caller's one is set after it.
    if (workspace) {
      HGEMM_RETURN_IF_ERROR(int(cublasSetWorkspace(h, workspace, workspace_bytes)));
    }
    dh.stream = s;
    dh.workspace = workspace;
    dh.workspace_bytes = workspace_bytes;
    dh.bound = true;
  }
  return int(cublasGemmEx(h, op_b, CUBLAS_OP_N, int(n), int(m), int(k), alpha_for(scale), B, CUDA_R_16F, ldb, A,
                          CUDA_R_16F, int(k), beta_for(scale), C, CUDA_R_16F, int(n), compute, CUBLAS_GEMM_DEFAULT));
}

int hgemm_gemmex_call(const hgemm_arms_call_t* c) {
  if (!c) return HGEMM_ARMS_BAD_ARGUMENT;
  return hgemm_gemmex(c->device, c->b_col, c->acc, c->m, c->n, c->k, c->A, c->B, c->C, c->workspace,
                      c->workspace_bytes, c->stream);
}

int hgemm_lt_plan(int device, int b_col, int acc, int64_t m, int64_t n, int64_t k, uint32_t align_bytes,
                  size_t max_workspace_bytes, int top_n, int scale_type_override, void** plan_out) {
  if (!plan_out) return HGEMM_ARMS_BAD_ARGUMENT;
  *plan_out = nullptr;
  HGEMM_RETURN_IF_ERROR(check_problem(device, b_col, acc, m, n, k));
  if (top_n < 0 || align_bytes < 2 || align_bytes > 256 || (align_bytes & (align_bytes - 1))) {
    return HGEMM_ARMS_BAD_ARGUMENT;
  }
  const PlanKey key{device, b_col, acc, m, n, k, align_bytes, max_workspace_bytes, top_n, scale_type_override};
  std::lock_guard<std::mutex> lock(g_plan_mutex);
  auto found = g_plans->find(key);
  if (found != g_plans->end()) {
    *plan_out = found->second.get();
    return HGEMM_ARMS_OK;
  }
  DeviceGuard guard(device);
  HGEMM_RETURN_IF_ERROR(guard.status());
  auto plan = std::make_unique<LtPlan>();
  plan->device = device;
  HGEMM_RETURN_IF_ERROR(lt_handle(device, &plan->lt));
  HGEMM_RETURN_IF_ERROR(
      create_plan(plan.get(), b_col, acc, m, n, k, align_bytes, max_workspace_bytes, top_n, scale_type_override));
  *plan_out = plan.get();
  g_plans->emplace(key, std::move(plan));
  return HGEMM_ARMS_OK;
}

int hgemm_lt_algo_count(const void* plan) {
  return plan ? int(static_cast<const LtPlan*>(plan)->algos.size()) : 0;
}

int hgemm_lt_algo_info(const void* plan_ptr, int algo_index, hgemm_lt_algo_info_t* info) {
  if (!plan_ptr || !info) return HGEMM_ARMS_BAD_ARGUMENT;
  const LtPlan* plan = static_cast<const LtPlan*>(plan_ptr);
  if (algo_index < 0 || algo_index >= int(plan->algos.size())) return HGEMM_ARMS_BAD_ALGO_INDEX;
  const cublasLtMatmulHeuristicResult_t& r = plan->algos[algo_index];
  std::memset(info, 0, sizeof(*info));
  HGEMM_RETURN_IF_ERROR(read_algo_attr<int32_t>(&r.algo, CUBLASLT_ALGO_CONFIG_ID, &info->algo_id));
  HGEMM_RETURN_IF_ERROR(read_algo_attr<uint32_t>(&r.algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &info->tile_id));
  HGEMM_RETURN_IF_ERROR(read_algo_attr<uint32_t>(&r.algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &info->stages_id));
  HGEMM_RETURN_IF_ERROR(read_algo_attr<int32_t>(&r.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &info->splitk_num));
  HGEMM_RETURN_IF_ERROR(
      read_algo_attr<uint32_t>(&r.algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &info->reduction_scheme));
  HGEMM_RETURN_IF_ERROR(read_algo_attr<uint32_t>(&r.algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &info->cta_swizzling));
  HGEMM_RETURN_IF_ERROR(read_algo_attr<uint32_t>(&r.algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &info->custom_option));
  HGEMM_RETURN_IF_ERROR(
      read_algo_attr<uint16_t>(&r.algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &info->cluster_shape_id));
  info->workspace_bytes = r.workspaceSize;
  info->waves_count = r.wavesCount;
  return HGEMM_ARMS_OK;
}

int hgemm_lt_run(const void* plan_ptr, int algo_index, const void* A, const void* B, void* C, void* workspace,
                 size_t workspace_bytes, void* stream) {
  if (!plan_ptr || !A || !B || !C) return HGEMM_ARMS_BAD_ARGUMENT;
  const LtPlan* plan = static_cast<const LtPlan*>(plan_ptr);
  const cublasLtMatmulAlgo_t* algo = nullptr;  // nullptr: cuBLASLt runs its own implicit heuristic
  if (algo_index != -1) {
    if (algo_index < 0 || algo_index >= int(plan->algos.size())) return HGEMM_ARMS_BAD_ALGO_INDEX;
    if (plan->algos[algo_index].workspaceSize > workspace_bytes) return HGEMM_ARMS_WORKSPACE_TOO_SMALL;
    algo = &plan->algos[algo_index].algo;
  }
  if (!workspace) workspace_bytes = 0;
  DeviceGuard guard(plan->device);
  HGEMM_RETURN_IF_ERROR(guard.status());
  // The status is the whole truth: an invalid descriptor returns here without writing C, and the caller must see it.
  return int(cublasLtMatmul(plan->lt, plan->op, alpha_for(plan->scale_type), B, plan->a, A, plan->b,
                            beta_for(plan->scale_type), C, plan->c, C, plan->c, algo, workspace, workspace_bytes,
                            static_cast<cudaStream_t>(stream)));
}

int hgemm_lt_call(const hgemm_arms_call_t* c) {
  if (!c) return HGEMM_ARMS_BAD_ARGUMENT;
  return hgemm_lt_run(c->plan, c->algo_index, c->A, c->B, c->C, c->workspace, c->workspace_bytes, c->stream);
}

}  // extern "C"
