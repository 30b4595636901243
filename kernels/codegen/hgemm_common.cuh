// Helpers shared by the generated variants: argument checks and a cached SM count. Included by every template.
#pragma once
#include <cuda_runtime.h>
#include <stdint.h>
#include "hgemm_abi.h"

namespace hgemm {

// Shape, leading-dimension and pointer checks common to both families. `align` is in fp16 elements.
inline int check_problem(const hgemm_args_t* p, int64_t align, bool b_col) {
  if (p == nullptr || p->A == nullptr || p->B == nullptr || p->C == nullptr) return HGEMM_ERR_INVALID_ARGS;
  const int64_t kMax = INT32_MAX;  // CUTLASS problem shapes are int
  if (p->M < 1 || p->N < 1 || p->K < 1 || p->M > kMax || p->N > kMax || p->K > kMax) return HGEMM_ERR_INVALID_ARGS;
  if (p->lda < p->K || p->ldc < p->N || p->ldb < (b_col ? p->K : p->N)) return HGEMM_ERR_INVALID_ARGS;
  if (p->workspace_bytes > 0 && p->workspace == nullptr) return HGEMM_ERR_INVALID_ARGS;
  // The contiguous extents and the leading dimensions must be multiples of the vector width, and the base pointers
  // aligned to it (align * 2 bytes).
  if (p->K % align || p->N % align || p->lda % align || p->ldb % align || p->ldc % align) return HGEMM_ERR_UNSUPPORTED;
  const uintptr_t mask = uintptr_t(align * 2 - 1);
  if ((uintptr_t(p->A) | uintptr_t(p->B) | uintptr_t(p->C)) & mask) return HGEMM_ERR_UNSUPPORTED;
  if (p->raster < 0 || p->swizzle < 0 || p->splits < 0) return HGEMM_ERR_INVALID_ARGS;
  return HGEMM_OK;
}

// SM count of the current device, queried once per device (persistent / stream-K schedulers size their grid by it).
inline int current_device_and_sms(int* device, int* sm_count) {
  static int cache[64] = {0};
  int dev = 0;
  cudaError_t e = cudaGetDevice(&dev);
  if (e != cudaSuccess) return HGEMM_ERR_CUDA_BASE + int(e);
  if (dev < 0 || dev >= 64) return HGEMM_ERR_INVALID_ARGS;
  if (cache[dev] == 0) {
    int sms = 0;
    e = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    if (e != cudaSuccess) return HGEMM_ERR_CUDA_BASE + int(e);
    cache[dev] = sms;  // benign race: every writer stores the same value
  }
  *device = dev;
  *sm_count = cache[dev];
  return HGEMM_OK;
}

// Raise a kernel's dynamic shared memory limit once per device (a per-call cudaFuncSetAttribute costs host time).
template <class Kernel>
inline int set_smem_attribute_once(Kernel* kernel, int smem_bytes, int device) {
  static bool done[64] = {false};
  if (device < 0 || device >= 64) return HGEMM_ERR_INVALID_ARGS;
  if (done[device] || smem_bytes < (48 << 10)) return HGEMM_OK;
  cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
  if (e != cudaSuccess) return HGEMM_ERR_CUDA_BASE + int(e);
  done[device] = true;  // benign race: setting the attribute twice is harmless
  return HGEMM_OK;
}

}  // namespace hgemm
