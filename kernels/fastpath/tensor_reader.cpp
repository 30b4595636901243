// What the fast path needs of an operand, read from the at::Tensor itself: fastpath.c reads it through five Python
// attribute calls (dtype, shape, stride(), get_device(), data_ptr()), ~0.4-0.7 us per tensor and three tensors per
// GEMM; this reads the same fields in ~10 ns. Built against the installed torch's headers
// (kernels/fastpath/__init__.py), so it only exists where they and a C++ compiler do; fastpath.c keeps its attribute
// path for everything else.
//
// hgemm_read_tensor returns, with the GIL held (as fastpath.c calls it):
//    1  fp16, 2-D, contiguous row-major, non-empty, on CUDA or the CPU: rows, cols, device (-1: the CPU) and data
//       pointer filled;
//    0  a plain tensor the fast path does not serve (the Python path handles it and names any problem);
//   -1  not a plain torch.Tensor / Parameter (a subclass may give its attributes other meanings): read it through
//       Python as before.
#include <Python.h>
#include <ATen/ATen.h>
#include <torch/csrc/Exceptions.h>
#include <torch/csrc/autograd/python_variable.h>

#include <cstdint>

extern "C" __attribute__((visibility("default"))) int hgemm_read_tensor(PyObject* obj, int64_t* rows, int64_t* cols,
                                                                        int64_t* device, uint64_t* ptr) {
  if (!THPVariable_CheckExact(obj)) return -1;
  try {
    const at::Tensor& t = THPVariable_Unpack(obj);
    if (!t.defined() || t.dim() != 2 || t.scalar_type() != at::kHalf) return 0;
    const int64_t r = t.size(0), c = t.size(1);
    if (r < 1 || c < 1 || t.stride(1) != 1 || t.stride(0) != c) return 0;
    if (!t.is_cuda() && !t.is_cpu()) return 0;  // meta, fake and other devices: no memory a launch could use
    void* data = t.data_ptr();
    if (data == nullptr) return 0;
    *rows = r;
    *cols = c;
    *device = t.is_cuda() ? t.get_device() : -1;
    *ptr = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(data));
    return 1;
  } catch (...) {  // nothing may cross into C
    return 0;
  }
}

// The output of a call made without one: a rows x cols tensor with `like`'s dtype and device, what
// `like.new_empty((rows, cols))` gives (that and `data_ptr()` through Python cost 3-6 us of a call's host time on the
// H200 host, session 21). `like` is an operand hgemm_read_tensor served. Returns a new reference and its data pointer; NULL with a
// Python error set when allocation fails (out of memory raises torch.OutOfMemoryError, as in Python), NULL without
// one when `like` is not a plain tensor (the caller allocates through Python).
extern "C" __attribute__((visibility("default"))) PyObject* hgemm_new_matrix(PyObject* like, int64_t rows,
                                                                          int64_t cols, uint64_t* ptr) {
  if (!THPVariable_CheckExact(like)) return nullptr;
  HANDLE_TH_ERRORS
  at::Tensor out = at::empty({rows, cols}, THPVariable_Unpack(like).options());
  *ptr = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(out.data_ptr()));
  return THPVariable_Wrap(std::move(out));
  END_HANDLE_TH_ERRORS
}
