// Helpers shared by the generated variants: argument checks, a cached SM count, once-per-device kernel attributes
// and the per-thread cache of prepared launches. Included by every template.
#pragma once
#include <cuda_runtime.h>
#include <stdint.h>

#include <cstdlib>
#include <cstring>
#include <memory>

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

inline int cuda_status(cudaError_t e) { return e == cudaSuccess ? HGEMM_OK : HGEMM_ERR_CUDA_BASE + int(e); }

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

// Raise a kernel's dynamic shared memory limit (and allow non-portable cluster sizes for cluster launches, as
// CUTLASS's ClusterLauncher does on every launch) once per device: a per-call cudaFuncSetAttribute costs host time.
template <class Kernel>
inline int set_kernel_attributes_once(Kernel* kernel, int smem_bytes, bool cluster_launch, int device) {
  static bool done[64] = {false};
  if (device < 0 || device >= 64) return HGEMM_ERR_INVALID_ARGS;
  if (done[device]) return HGEMM_OK;
  if (smem_bytes >= (48 << 10)) {
    cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes);
    if (e != cudaSuccess) return HGEMM_ERR_CUDA_BASE + int(e);
  }
  if (cluster_launch) {
    cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    if (e != cudaSuccess) return HGEMM_ERR_CUDA_BASE + int(e);
  }
  done[device] = true;  // benign race: setting the attributes twice is harmless
  return HGEMM_OK;
}

// Point a TMA descriptor (CUtensorMap) at another global address, as cuTensorMapReplaceAddress does: the rest of the
// descriptor (shape, strides, box, swizzle) stays. Through the runtime's driver entry point (variants link no libcuda,
// like CUTLASS's own cuTensorMapEncodeTiled calls), looked up once per process.
template <class Descriptor>
inline int replace_tma_address(Descriptor const* descriptor, const void* address) {
  using ReplaceAddress = int (*)(Descriptor*, void*);  // CUresult cuTensorMapReplaceAddress(CUtensorMap*, void*)
  static const ReplaceAddress replace = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapReplaceAddress", &fn, 12000, cudaEnableDefault,
                                                     &found);
    if (e != cudaSuccess) cudaGetLastError();
    return e == cudaSuccess && found == cudaDriverEntryPointSuccess ? reinterpret_cast<ReplaceAddress>(fn) : nullptr;
  }();
  if (replace == nullptr) return HGEMM_ERR_UNSUPPORTED;
  // The descriptor belongs to a non-const Prepared; CUTLASS only hands out const pointers to it.
  return replace(const_cast<Descriptor*>(descriptor), const_cast<void*>(address)) == 0 ? HGEMM_OK
                                                                                        : HGEMM_ERR_UNSUPPORTED;
}

template <class T>
inline bool same_bytes(T const* x, T const* y) { return std::memcmp(x, y, sizeof(T)) == 0; }

// Everything a prepared launch (CUTLASS params, TMA descriptors, grid) is computed from, except the stream and the
// operand pointers: two calls with equal keys get params that differ only in where A, B and C are (the device is the
// current one: params hold its SM count). Pointers are not in the key because callers rotate buffers (the caching
// allocator, a server's fresh requests, the per-call benchmark): an entry is retargeted to new operands instead of
// prepared again (see prepared_launch).
struct LaunchKey {
  int64_t M, N, K, lda, ldb, ldc;
  void* workspace; size_t workspace_bytes;
  int32_t raster, swizzle, splits, device;
};

inline LaunchKey launch_key(const hgemm_args_t* p, int device) {
  return LaunchKey{p->M, p->N, p->K, p->lda, p->ldb, p->ldc, p->workspace, p->workspace_bytes,
                   p->raster, p->swizzle, p->splits, device};
}

inline bool operator==(const LaunchKey& x, const LaunchKey& y) {
  return x.M == y.M && x.N == y.N && x.K == y.K && x.lda == y.lda && x.ldb == y.ldb && x.ldc == y.ldc &&
         x.workspace == y.workspace && x.workspace_bytes == y.workspace_bytes && x.raster == y.raster &&
         x.swizzle == y.swizzle && x.splits == y.splits && x.device == y.device;
}

// The operands an entry's params point at.
struct Targets {
  const void* A; const void* B; void* C;
};

inline Targets targets_of(const hgemm_args_t* p) { return Targets{p->A, p->B, p->C}; }

inline bool operator==(const Targets& x, const Targets& y) { return x.A == y.A && x.B == y.B && x.C == y.C; }

// Whether retargeting an entry's params is trusted: unknown until its first pointer change, when the retargeted params
// are compared with freshly prepared ones; equal -> trusted from then on, different -> that entry always prepares.
enum RetargetState : int32_t { kRetargetUnchecked = 0, kRetargetTrusted = 1, kRetargetRefused = -1 };

// A small LRU of prepared launches. Used as a thread_local (one per thread and variant), so it needs no lock; an
// entry is only ever inserted complete (after every check passed), so find() never returns a half-built one.
template <class Prepared, int kSlots = 16>
class LaunchCache {
 public:
  struct Slot {
    LaunchKey key{};
    uint64_t stamp = 0;
    Targets targets{};
    int32_t retarget = kRetargetUnchecked;
    Prepared value{};
  };

  Slot* find(const LaunchKey& key) {
    for (int i = 0; i < used_; ++i) {
      if (slots_[i].key == key) {
        slots_[i].stamp = ++clock_;
        return &slots_[i];
      }
    }
    return nullptr;
  }

  // Stores a copy (replacing the least recently used entry when full) and returns its slot.
  Slot* insert(const LaunchKey& key, const Targets& targets, const Prepared& value) {
    int slot = 0;
    if (used_ < kSlots) {
      slot = used_++;
    } else {
      for (int i = 1; i < kSlots; ++i) {
        if (slots_[i].stamp < slots_[slot].stamp) slot = i;
      }
    }
    slots_[slot].key = key;
    slots_[slot].targets = targets;
    slots_[slot].retarget = kRetargetUnchecked;
    slots_[slot].value = value;
    slots_[slot].stamp = ++clock_;
    return &slots_[slot];
  }

  int size() const { return used_; }
  hgemm_cache_stats_t stats{};

 private:
  Slot slots_[kSlots];
  int used_ = 0;
  uint64_t clock_ = 0;
};

// HGEMM_RETARGET=0 in the environment: every operand move prepares in full (what each call with new pointers cost
// before retargeting existed; for A/B measurements). Read once per process.
inline bool retarget_enabled() {
  static const bool enabled = [] {
    const char* v = std::getenv("HGEMM_RETARGET");
    return v == nullptr || std::strcmp(v, "0") != 0;
  }();
  return enabled;
}

// The prepared launch for `p` (HGEMM_OK and *out set, or the status of the failed step):
//   same key, same operands     -> the entry as it is (a hit);
//   same key, other operands    -> the entry retargeted by `retarget(p, Prepared*)` once trusted; before
//                                  that, prepared in full and a retargeted copy compared with it by
//                                  `same(const Prepared&, const Prepared&)` (so a variant whose params hold the
//                                  operands somewhere retarget does not patch is never retargeted);
//   no entry                    -> `prepare(p, Prepared*)`, stored only when every step passed.
// `retarget` returns non-zero when it cannot (e.g. misaligned operands); it works on a copy, so a failure part-way
// leaves the entry as it was.
template <class Prepared, int kSlots, class Prepare, class Retarget, class Same>
int prepared_launch(LaunchCache<Prepared, kSlots>& cache, const hgemm_args_t* p, int device, Prepare prepare,
                    Retarget retarget, Same same, Prepared** out) {
  const LaunchKey key = launch_key(p, device);
  const Targets targets = targets_of(p);
  typename LaunchCache<Prepared, kSlots>::Slot* slot = cache.find(key);
  if (slot == nullptr) {
    Prepared fresh;
    int status = prepare(p, &fresh);
    if (status != HGEMM_OK) return status;
    slot = cache.insert(key, targets, fresh);
    cache.stats.prepared++;
  } else if (!(slot->targets == targets)) {
    bool retargeted = false;
    if (slot->retarget == kRetargetTrusted && retarget_enabled()) {
      // on a copy: the entry only ever changes as a whole (a half-patched one would be hit again by its old operands)
      Prepared patched = slot->value;
      if ((retargeted = retarget(p, &patched) == HGEMM_OK)) {
        slot->value = patched;
        cache.stats.retargeted++;
      }
    }
    if (!retargeted) {
      Prepared fresh;
      int status = prepare(p, &fresh);
      if (status != HGEMM_OK) return status;  // the entry still holds its old operands, consistently
      if (slot->retarget == kRetargetUnchecked) {
        Prepared patched = slot->value;
        bool equal = retarget(p, &patched) == HGEMM_OK && same(patched, fresh);
        slot->retarget = equal ? kRetargetTrusted : kRetargetRefused;
        (equal ? cache.stats.retarget_checked : cache.stats.retarget_refused)++;
      } else if (slot->retarget == kRetargetTrusted) {  // trusted, yet retarget failed (e.g. misaligned operands)
        slot->retarget = kRetargetRefused;
        cache.stats.retarget_refused++;
      }
      slot->value = fresh;
      cache.stats.prepared++;
    }
    slot->targets = targets;
  } else {
    cache.stats.hits++;
  }
  *out = &slot->value;
  return HGEMM_OK;
}

// This thread's cache of one variant's prepared launches. Heap-allocated: the params hold 64-byte-aligned TMA
// descriptors, and the TLS block of a dlopen'ed library is only a pointer this way.
template <class Prepared>
inline LaunchCache<Prepared>& thread_launch_cache() {
  static thread_local std::unique_ptr<LaunchCache<Prepared>> cache;
  if (!cache) cache.reset(new LaunchCache<Prepared>());
  return *cache;
}

}  // namespace hgemm
