// Session 26 diagnosis (LD_PRELOAD): who calls cudaFree while a stream capture is open? Interposes the runtime's
// cudaFree (libcublas and libtorch link libcudart dynamically); when the real one returns
// cudaErrorStreamCaptureUnsupported (900), prints the native stack and this thread's Python stack to stderr.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <stdio.h>
#include <unistd.h>

typedef int (*free_fn)(void*);
typedef void (*dump_fn)(int, void*);
typedef void* (*tstate_fn)(void);

int cudaFree(void* ptr) {
  static free_fn real = NULL;
  if (!real) real = (free_fn)dlsym(RTLD_NEXT, "cudaFree");
  int status = real(ptr);
  if (status == 900) {
    void* frames[40];
    int n = backtrace(frames, 40);
    fprintf(stderr, "== cudaFree(%p) refused during capture; native stack:\n", ptr);
    fflush(stderr);
    backtrace_symbols_fd(frames, n, 2);
    dump_fn dump = (dump_fn)dlsym(RTLD_DEFAULT, "_Py_DumpTraceback");
    tstate_fn tstate = (tstate_fn)dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
    if (dump && tstate && tstate()) {
      fprintf(stderr, "== Python stack:\n");
      fflush(stderr);
      dump(2, tstate());
    }
    fprintf(stderr, "== end\n");
    fflush(stderr);
  }
  return status;
}
