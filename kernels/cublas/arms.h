// C ABI of our cuBLAS / cuBLASLt wrapper (kernels/cublas/arms.cu), loaded from Python with ctypes.
//
// Row-major problem: C[M,N] = A[M,K] * B, A row-major, B row-major K x N (b_col = 0) or N x K (b_col = 1, x @ W^T),
// C row-major, fp16 in and out. acc: 0 = fp32 accumulation (fp32 scalars), 1 = fp16 accumulation (fp16 scalars).
// Every function returns a status: 0 = success, HGEMM_ARMS_* (< 0) = wrapper error, 1..99999 = cublasStatus_t,
// HGEMM_ARMS_CUDA_BASE + cudaError_t = CUDA runtime error. hgemm_arms_status_string() names any of them.
#pragma once
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// The build hides symbols by default (-fvisibility=hidden); these are the library's only exports.
#define HGEMM_ARMS_API __attribute__((visibility("default")))
#define HGEMM_ARMS_ABI_VERSION 1
#define HGEMM_ARMS_CUDA_BASE 100000

enum {
  HGEMM_ARMS_OK = 0,
  HGEMM_ARMS_BAD_ARGUMENT = -1,         // null pointer, unknown acc / layout, non-positive size
  HGEMM_ARMS_BAD_ALGO_INDEX = -2,       // algo_index outside [0, algo_count) and not -1 (-1 = implicit algorithm)
  HGEMM_ARMS_NO_ALGORITHM = -3,         // the heuristic returned no usable algorithm for this problem
  HGEMM_ARMS_WORKSPACE_TOO_SMALL = -4,  // the chosen algorithm needs more workspace than the caller passed
  HGEMM_ARMS_BAD_DEVICE = -5,           // device ordinal out of range
  HGEMM_ARMS_SHAPE_TOO_LARGE = -6,      // M, N or K does not fit cuBLAS's 32-bit int interface
};

typedef struct {
  int32_t algo_id, tile_id, stages_id, splitk_num, reduction_scheme, cta_swizzling, custom_option, cluster_shape_id;
  uint64_t workspace_bytes;  // what this algorithm needs
  float waves_count;         // the heuristic's device-utilization estimate
} hgemm_lt_algo_info_t;

HGEMM_ARMS_API int hgemm_arms_abi_version(void);
HGEMM_ARMS_API const char* hgemm_arms_status_string(int status);

// cuBLAS cublasGemmEx: b_col = 1 is the "TN" form, b_col = 0 the "NN" form (in cuBLAS's column-major terms).
// The workspace (>= 256-byte aligned) must belong to `stream` (it is not shared with other streams).
HGEMM_ARMS_API int hgemm_gemmex(int device, int b_col, int acc, int64_t m, int64_t n, int64_t k, const void* A,
                                const void* B, void* C, void* workspace, size_t workspace_bytes, void* stream);

// cuBLASLt: a plan holds the matmul descriptor, the layouts and the top_n heuristic results for one problem.
// Plans are cached (same arguments -> same pointer) and live until the process exits.
// align_bytes: the smallest alignment of the A, B, C pointers that will be used with the plan (2..256).
// top_n = 0: no heuristic query; run with algo_index -1 (cuBLASLt picks internally).
// scale_type_override: -1 = the matching scale type; otherwise a cudaDataType_t (tests use it to build an invalid
// descriptor, e.g. CUDA_R_16F scales with fp32 compute, and check that the error is reported).
HGEMM_ARMS_API int hgemm_lt_plan(int device, int b_col, int acc, int64_t m, int64_t n, int64_t k,
                                 uint32_t align_bytes, size_t max_workspace_bytes, int top_n, int scale_type_override,
                                 void** plan_out);
// algo_index: 0 .. hgemm_lt_algo_count(plan)-1 picks a heuristic result (0 = the heuristic's top-1);
// -1 passes no algorithm, so cuBLASLt picks one itself.
HGEMM_ARMS_API int hgemm_lt_algo_count(const void* plan);
HGEMM_ARMS_API int hgemm_lt_algo_info(const void* plan, int algo_index, hgemm_lt_algo_info_t* info);
HGEMM_ARMS_API int hgemm_lt_run(const void* plan, int algo_index, const void* A, const void* B, void* C,
                                void* workspace, size_t workspace_bytes, void* stream);

// One call as a struct: the hot path passes one pointer instead of a dozen converted arguments (the ctypes
// conversions cost more host time than the struct packing). Fields as in hgemm_gemmex / hgemm_lt_run.
typedef struct {
  const void* A; const void* B; void* C;
  void* workspace; size_t workspace_bytes;
  void* stream;
  const void* plan;                 // hgemm_lt_call: a plan from hgemm_lt_plan (ignored by hgemm_gemmex_call)
  int64_t m, n, k;                  // hgemm_gemmex_call (a plan holds its own)
  int32_t device, b_col, acc;       // hgemm_gemmex_call
  int32_t algo_index;               // hgemm_lt_call
} hgemm_arms_call_t;

HGEMM_ARMS_API int hgemm_gemmex_call(const hgemm_arms_call_t* call);
HGEMM_ARMS_API int hgemm_lt_call(const hgemm_arms_call_t* call);

#ifdef __cplusplus
}
#endif
