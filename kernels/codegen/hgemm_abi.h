// The C ABI every built HGEMM variant exports (docs/architecture.md, Contract 2). Plain C: no torch, no CUTLASS.
// C[M,N] = A[M,K] @ B, fp16 in/out. A row-major (lda >= K). B: K×N row-major (ldb >= N) for b_layout=row, or
// N×K row-major (ldb >= K) for b_layout=col. C row-major (ldc >= N).
#pragma once
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  const void* A; const void* B; void* C;      // fp16 device pointers
  int64_t M, N, K, lda, ldb, ldc;
  void* workspace; size_t workspace_bytes;    // preallocated by the caller (no cudaMalloc per call)
  int32_t raster; int32_t swizzle; int32_t splits;   // runtime knobs (0 = kernel default)
  void* stream;                               // cudaStream_t: the caller's current stream
} hgemm_args_t;

// Status codes: 0 = launched. Small codes are ours; cutlass::Status and cudaError_t are offset into their own ranges.
#define HGEMM_OK 0
#define HGEMM_ERR_INVALID_ARGS 1          // null pointers, non-positive or too large extents, bad leading dimensions
#define HGEMM_ERR_WORKSPACE_TOO_SMALL 2   // ask hgemm_workspace_bytes() and pass a larger workspace
#define HGEMM_ERR_UNSUPPORTED 3           // this variant cannot run the problem (alignment, knob value)
#define HGEMM_ERR_CUTLASS_BASE 100        // + int(cutlass::Status)
#define HGEMM_ERR_CUDA_BASE 10000         // + int(cudaError_t)

#if defined(_WIN32)
#define HGEMM_EXPORT __declspec(dllexport)
#else
#define HGEMM_EXPORT __attribute__((visibility("default")))
#endif

// This thread's launch-cache counts for this variant (hgemm_common.cuh, prepared_launch): calls served as they were
// prepared, retargeted to other operands, prepared in full; retargets checked against a full prepare, and refused.
typedef struct {
  uint64_t hits, retargeted, prepared, retarget_checked, retarget_refused;
} hgemm_cache_stats_t;

HGEMM_EXPORT int hgemm_run(const hgemm_args_t* args);
HGEMM_EXPORT size_t hgemm_workspace_bytes(const hgemm_args_t* args);
HGEMM_EXPORT int hgemm_can_implement(const hgemm_args_t* args);
HGEMM_EXPORT const char* hgemm_variant_name(void);
HGEMM_EXPORT void hgemm_cache_stats(hgemm_cache_stats_t* out);

#ifdef __cplusplus
}
#endif
