// Scratch memory that starts zeroed and that the kernels using it leave zeroed (the split-K variants' fp32 partial
// tiles and arrival tickets), so that no launch needs a memset node before it. One buffer per (device, stream), owned
// by the variant's library rather than taken from the caller's workspace, which other variants leave dirty. A buffer
// is zeroed once, when it is allocated: synchronously, on a private stream, with this thread's capture mode relaxed,
// so that it is zero before anything runs even when the first call on a stream is being captured into a CUDA graph.
// A buffer that is outgrown is kept, not freed: kernels already queued on its stream may still use it.
#pragma once
#include <cuda_runtime.h>

#include <mutex>
#include <vector>

#include "hgemm_abi.h"

namespace hgemm {

struct ZeroedBuffer {
  int device = -1;
  cudaStream_t stream = nullptr;
  void* ptr = nullptr;
  size_t bytes = 0;
};

// A private non-blocking stream per device for the one-off zeroing (never captured: no one else uses it).
inline int zeroing_stream(int device, cudaStream_t* out) {
  static cudaStream_t streams[64] = {};
  if (device < 0 || device >= 64) return HGEMM_ERR_INVALID_ARGS;
  if (streams[device] == nullptr) {
    cudaError_t e = cudaStreamCreateWithFlags(&streams[device], cudaStreamNonBlocking);
    if (e != cudaSuccess) return HGEMM_ERR_CUDA_BASE + int(e);
  }
  *out = streams[device];
  return HGEMM_OK;
}

inline int allocate_zeroed(int device, size_t bytes, void** out) {
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  cudaError_t e = cudaThreadExchangeStreamCaptureMode(&mode);
  if (e != cudaSuccess) return HGEMM_ERR_CUDA_BASE + int(e);
  cudaStream_t zs = nullptr;
  int status = zeroing_stream(device, &zs);
  void* ptr = nullptr;
  if (status == HGEMM_OK) {
    e = cudaMalloc(&ptr, bytes);
    if (e == cudaSuccess) e = cudaMemsetAsync(ptr, 0, bytes, zs);
    if (e == cudaSuccess) e = cudaStreamSynchronize(zs);
    if (e != cudaSuccess) {
      if (ptr != nullptr) cudaFree(ptr);
      cudaGetLastError();
      status = HGEMM_ERR_CUDA_BASE + int(e);
    }
  }
  cudaThreadExchangeStreamCaptureMode(&mode);  // back to what the caller had
  if (status == HGEMM_OK) *out = ptr;
  return status;
}

// *out = a zeroed buffer of at least `bytes` for (device, stream). The common case (this thread's last answer still
// fits) takes no lock.
inline int zeroed_workspace(int device, cudaStream_t stream, size_t bytes, void** out) {
  thread_local ZeroedBuffer last;
  if (last.device == device && last.stream == stream && last.bytes >= bytes) {
    *out = last.ptr;
    return HGEMM_OK;
  }
  static std::mutex lock;
  static std::vector<ZeroedBuffer> buffers;
  std::lock_guard<std::mutex> guard(lock);
  ZeroedBuffer* found = nullptr;
  for (ZeroedBuffer& b : buffers) {
    if (b.device == device && b.stream == stream) found = &b;
  }
  if (found == nullptr || found->bytes < bytes) {
    const size_t grown = found == nullptr ? 0 : 2 * found->bytes;
    size_t size = bytes > grown ? bytes : grown;
    size = (size + (1 << 20) - 1) & ~size_t((1 << 20) - 1);  // whole MiB
    void* ptr = nullptr;
    int status = allocate_zeroed(device, size, &ptr);
    if (status != HGEMM_OK) return status;
    if (found == nullptr) {
      buffers.push_back(ZeroedBuffer{device, stream, ptr, size});
      found = &buffers.back();
    } else {
      found->ptr = ptr;  // the outgrown buffer stays allocated (see above)
      found->bytes = size;
    }
  }
  last = *found;
  *out = found->ptr;
  return HGEMM_OK;
}

}  // namespace hgemm
