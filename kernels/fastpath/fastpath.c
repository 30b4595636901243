// The cached dispatch in C: one call from Python checks the operands, finds the prepared launch for
// (M, N, K, layout, accumulator, device, stream, captured) and calls its C entry point, without ctypes and without a
// Python frame per step. Python (kernels/dispatch.py) decides what runs and registers the launch here after a first
// successful call; everything this path does not serve (not fp16, not contiguous, a shape or stream not registered
// yet, misaligned pointers, a canary sample) returns a miss code and the Python path handles it, errors included.
//
// A registered launch is an entry point `int fn(const void* call)` and the bytes of its argument struct with
// everything but the operand pointers filled in: both ABIs (hgemm_args_t of kernels/codegen/hgemm_abi.h and
// hgemm_arms_call_t of kernels/cublas/arms.h) start with the A, B and C pointers, so a call copies the template,
// writes three pointers and calls. Status != 0 drops every entry and returns LAUNCH_ERROR: the Python path reruns
// the call and deals with the error (quarantine, fallback).
//
// Captured: whether the stream is capturing a CUDA graph. A table whose dispatcher has graph choices (tuned entries
// that run another kernel under capture) asks the driver on every call (cuStreamIsCapturing, ~0.1 us) and keys on the
// answer: the stream alone cannot say, since a stream that served eager calls may be the next capture's stream (torch
// hands out its pooled streams round-robin, and torch.cuda.graph captures on one of them).
//
// The GIL is held throughout (a launch is a few microseconds; releasing and retaking the GIL would cost about as
// much), so the table needs no lock of its own. Tensor metadata is read through Python attributes (dtype, shape,
// stride(), get_device(), data_ptr()): no torch headers, so this builds in a second with any C compiler. Where torch's
// headers and a C++ compiler are at hand, a table is given tensor_reader.cpp's hgemm_read_tensor, which reads the
// same fields from the at::Tensor (~10 ns instead of ~0.5 us per operand) and leaves subclasses to this path, and its
// hgemm_new_matrix, which allocates an output without Python's argument parsing.
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define TEMPLATE_MAX 128
enum { MISS = 0, CANARY = 1, LAUNCH_ERROR = 2 };

typedef int (*launch_fn)(const void* call);
typedef int (*capture_status_fn)(void* stream, int* status);  // cuStreamIsCapturing's ABI: 0 = success; status 0 = none
// tensor_reader.cpp's ABI: 1 servable (fields filled), 0 not servable, -1 not a plain tensor (read it through Python)
typedef int (*read_tensor_fn)(PyObject* x, int64_t* rows, int64_t* cols, int64_t* device, uint64_t* ptr);
// ... and its allocator: a new reference (and its data pointer), NULL + error on failure, NULL alone for a non-tensor
typedef PyObject* (*new_matrix_fn)(PyObject* like, int64_t rows, int64_t cols, uint64_t* ptr);

typedef struct {
  int64_t m, n, k, device, stream;
  int64_t flags;  // bit 0: B column-major (N x K), bit 1: fp16 accumulation, bit 2: captured
} Key;

typedef struct {
  Key key;
  int used;
  launch_fn fn;
  unsigned char tmpl[TEMPLATE_MAX];
  Py_ssize_t size;
  uint64_t align_mask;       // (A | B | C) & mask must be 0
  int guarded;               // tuned choice: subject to the canary sample
  PyObject* selection;       // returned with the output by run()
  PyObject* keep;            // what the template points into (workspace tensor...), kept alive
} Entry;

typedef struct {
  PyObject_HEAD
  Entry* slots;
  Py_ssize_t capacity, count;
  PyObject* stream_of;       // callable(device index) -> int stream handle (torch's current stream)
  PyObject* float16;         // torch.float16
  int allow_cpu;             // tests: serve CPU tensors (device -1) too
  int graph_choices;         // key on the capture status (see the top); the dispatcher sets it with its tables
  capture_status_fn capture_status;  // how to ask; NULL: a call that needs to know is a miss
  read_tensor_fn read_tensor;        // NULL: every operand is read through Python attributes
  new_matrix_fn new_matrix;          // NULL: an output is allocated through Python (a.new_empty)
  uint64_t canary_every;     // a guarded entry returns CANARY on every canary_every-th call (0: never)
  uint64_t canary_count;
  unsigned long long hits, misses;
} FastTable;

static PyObject *s_dtype, *s_shape, *s_stride, *s_get_device, *s_data_ptr, *s_new_empty;
static PyObject *s_row, *s_col, *s_f32, *s_f16;

static uint64_t hash_key(const Key* k) {
  uint64_t h = 1469598103934665603ull;
  const int64_t* words = (const int64_t*)k;
  for (size_t i = 0; i < sizeof(Key) / sizeof(int64_t); i++) {
    h ^= (uint64_t)words[i] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h *= 1099511628211ull;
  }
  return h ^ (h >> 29);
}

static Entry* find_slot(Entry* slots, Py_ssize_t capacity, const Key* key) {
  // open addressing, linear probing; capacity is a power of two and never full (load <= 1/2)
  size_t mask = (size_t)capacity - 1, i = (size_t)hash_key(key) & mask;
  while (slots[i].used && memcmp(&slots[i].key, key, sizeof(Key)) != 0) i = (i + 1) & mask;
  return &slots[i];
}

// Releasing a reference can run Python code (a destructor), which may switch threads; so the table is made
// consistent first and the old references are dropped last, never while an entry is half written.
static void clear_entries(FastTable* t) {
  Py_ssize_t n = 0;
  PyObject** old = t->count ? PyMem_Malloc(sizeof(PyObject*) * 2 * (size_t)t->count) : NULL;
  for (Py_ssize_t i = 0; i < t->capacity; i++) {
    Entry* e = &t->slots[i];
    if (e->used) {
      e->used = 0;
      if (old) {
        old[n++] = e->selection;
        old[n++] = e->keep;
      } else {  // out of memory: drop them right away (a destructor could still run; the entry is already unused)
        Py_XDECREF(e->selection);
        Py_XDECREF(e->keep);
      }
      e->selection = e->keep = NULL;
    }
  }
  t->count = 0;
  for (Py_ssize_t i = 0; i < n; i++) Py_XDECREF(old[i]);
  PyMem_Free(old);
}

static int grow(FastTable* t) {
  Py_ssize_t capacity = t->capacity ? t->capacity * 2 : 64;
  Entry* slots = PyMem_Calloc((size_t)capacity, sizeof(Entry));
  if (!slots) {
    PyErr_NoMemory();
    return -1;
  }
  for (Py_ssize_t i = 0; i < t->capacity; i++)
    if (t->slots[i].used) *find_slot(slots, capacity, &t->slots[i].key) = t->slots[i];
  PyMem_Free(t->slots);
  t->slots = slots;
  t->capacity = capacity;
  return 0;
}

// ---- operands -----------------------------------------------------------------------------------------------------
// 1: fp16, 2-D, contiguous row-major; rows, cols, device and data pointer filled. 0: not servable here (any Python
// error raised while reading is cleared: the Python path will name the problem).
static int read_int64_pair(PyObject* seq, int64_t* first, int64_t* second) {
  if (!PyTuple_Check(seq) || PyTuple_GET_SIZE(seq) != 2) return 0;
  *first = PyLong_AsLongLong(PyTuple_GET_ITEM(seq, 0));
  *second = PyLong_AsLongLong(PyTuple_GET_ITEM(seq, 1));
  return !PyErr_Occurred();
}

static int tensor_info(FastTable* t, PyObject* x, int64_t* rows, int64_t* cols, int64_t* device, uint64_t* ptr) {
  if (t->read_tensor) {
    int read = t->read_tensor(x, rows, cols, device, ptr);
    if (read >= 0) return read && (*device >= 0 || t->allow_cpu);
  }
  PyObject* dtype = PyObject_GetAttr(x, s_dtype);
  if (!dtype) goto fail;
  int is_f16 = dtype == t->float16;
  Py_DECREF(dtype);
  if (!is_f16) return 0;
  PyObject* shape = PyObject_GetAttr(x, s_shape);
  if (!shape) goto fail;
  int ok = read_int64_pair(shape, rows, cols);
  Py_DECREF(shape);
  if (!ok) goto fail;
  PyObject* stride = PyObject_CallMethodNoArgs(x, s_stride);
  if (!stride) goto fail;
  int64_t s0, s1;
  ok = read_int64_pair(stride, &s0, &s1);
  Py_DECREF(stride);
  if (!ok) goto fail;
  if (s1 != 1 || s0 != *cols || *rows < 1 || *cols < 1) return 0;
  PyObject* dev = PyObject_CallMethodNoArgs(x, s_get_device);
  if (!dev) goto fail;
  *device = PyLong_AsLongLong(dev);
  Py_DECREF(dev);
  if (PyErr_Occurred()) goto fail;
  if (*device < 0 && !t->allow_cpu) return 0;
  PyObject* p = PyObject_CallMethodNoArgs(x, s_data_ptr);
  if (!p) goto fail;
  *ptr = PyLong_AsUnsignedLongLong(p);
  Py_DECREF(p);
  if (PyErr_Occurred()) goto fail;
  return 1;
fail:
  PyErr_Clear();
  return 0;
}

static int flag_of(PyObject* s, PyObject* zero, PyObject* one) {  // 0, 1, or -1 for anything else
  if (s == zero) return 0;
  if (s == one) return 1;
  if (!PyUnicode_Check(s)) return -1;
  if (PyUnicode_Compare(s, zero) == 0) return 0;
  if (PyUnicode_Compare(s, one) == 0) return 1;
  PyErr_Clear();
  return -1;
}

// ---- the call -----------------------------------------------------------------------------------------------------
// call(a, b, out, b_layout, acc, with_selection) -> out or (out, selection); an int code when not served.
static PyObject* table_call(FastTable* t, PyObject* const* args, Py_ssize_t nargs, int with_selection) {
  if (nargs != 5) {
    PyErr_SetString(PyExc_TypeError, "expected (a, b, out, b_layout, acc)");
    return NULL;
  }
  PyObject *a = args[0], *b = args[1], *out = args[2];
  int b_col = flag_of(args[3], s_row, s_col), acc16 = flag_of(args[4], s_f32, s_f16);
  int64_t m, k, rb, cb, dev_a, dev_b;
  uint64_t pa, pb, pc;
  if (b_col < 0 || acc16 < 0 || !tensor_info(t, a, &m, &k, &dev_a, &pa) || !tensor_info(t, b, &rb, &cb, &dev_b, &pb))
    goto miss;
  int64_t n = b_col ? rb : cb, kb = b_col ? cb : rb;
  if (kb != k || dev_b != dev_a) goto miss;
  if (out != Py_None) {
    int64_t rc, cc, dev_c;
    if (!tensor_info(t, out, &rc, &cc, &dev_c, &pc) || rc != m || cc != n || dev_c != dev_a) goto miss;
  }
  PyObject* dev_obj = PyLong_FromLongLong(dev_a);
  if (!dev_obj) return NULL;
  PyObject* stream_obj = PyObject_CallOneArg(t->stream_of, dev_obj);
  Py_DECREF(dev_obj);
  if (!stream_obj) {
    PyErr_Clear();
    goto miss;
  }
  int64_t stream = (int64_t)PyLong_AsUnsignedLongLong(stream_obj);
  Py_DECREF(stream_obj);
  if (PyErr_Occurred()) {
    PyErr_Clear();
    goto miss;
  }
  Key key;
  memset(&key, 0, sizeof key);
  key.m = m, key.n = n, key.k = k, key.device = dev_a, key.stream = stream, key.flags = b_col | (acc16 << 1);
  if (t->graph_choices) {
    int capture = 0;
    if (!t->capture_status || t->capture_status((void*)(uintptr_t)stream, &capture) != 0) goto miss;
    if (capture != 0) key.flags |= 4;  // active (or invalidated): the Python path and the capture decide the rest
  }
  if (!t->capacity) goto miss;
  Entry* e = find_slot(t->slots, t->capacity, &key);
  if (!e->used) goto miss;
  if (e->guarded && t->canary_every && ++t->canary_count >= t->canary_every) {
    t->canary_count = 0;
    return PyLong_FromLong(CANARY);
  }
  // everything the launch needs, copied out of the table: allocating `out` may run Python code that changes it
  unsigned char call[TEMPLATE_MAX];
  memcpy(call, e->tmpl, (size_t)e->size);
  launch_fn fn = e->fn;
  uint64_t align_mask = e->align_mask;
  PyObject* selection = e->selection;
  PyObject* keep = e->keep;
  Py_INCREF(selection);
  Py_INCREF(keep);
  int allocated = 0;
  if (out == Py_None) {
    if ((pa | pb) & align_mask) goto release_miss;
    out = t->new_matrix ? t->new_matrix(a, m, n, &pc) : NULL;
    if (out) {
      allocated = 1;
    } else {
      if (PyErr_Occurred()) goto release_error;
      PyObject* shape = Py_BuildValue("((LL))", (long long)m, (long long)n);
      if (!shape) goto release_error;
      out = PyObject_CallMethodObjArgs(a, s_new_empty, PyTuple_GET_ITEM(shape, 0), NULL);
      Py_DECREF(shape);
      if (!out) goto release_error;
      allocated = 1;
      PyObject* p = PyObject_CallMethodNoArgs(out, s_data_ptr);
      if (!p) goto release_error;
      pc = PyLong_AsUnsignedLongLong(p);
      Py_DECREF(p);
      if (PyErr_Occurred()) goto release_error;
    }
  }
  if ((pa | pb | pc) & align_mask) goto release_miss;
  memcpy(call + 0, &pa, 8);
  memcpy(call + 8, &pb, 8);
  memcpy(call + 16, &pc, 8);
  int status = fn(call);
  Py_DECREF(keep);
  if (status != 0) {
    Py_DECREF(selection);
    if (allocated) Py_DECREF(out);
    clear_entries(t);  // the Python path reruns the call and decides (quarantine, fallback)
    t->misses++;
    return PyLong_FromLong(LAUNCH_ERROR);
  }
  t->hits++;
  if (!allocated) Py_INCREF(out);
  if (!with_selection) {
    Py_DECREF(selection);
    return out;
  }
  PyObject* result = PyTuple_Pack(2, out, selection);
  Py_DECREF(out);
  Py_DECREF(selection);
  return result;

release_miss:
  Py_DECREF(selection);
  Py_DECREF(keep);
  if (allocated) Py_DECREF(out);
  goto miss;
release_error:
  Py_DECREF(selection);
  Py_DECREF(keep);
  if (allocated) Py_DECREF(out);
  return NULL;
miss:
  t->misses++;
  return PyLong_FromLong(MISS);
}

static PyObject* table_run(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  return table_call((FastTable*)self, args, nargs, 1);
}

static PyObject* table_gemm(PyObject* self, PyObject* const* args, Py_ssize_t nargs) {
  return table_call((FastTable*)self, args, nargs, 0);
}

// put(m, n, k, b_layout, acc, device, stream, captured, fn_address, template, align, guarded, selection, keep)
static PyObject* table_put(PyObject* self, PyObject* args) {
  FastTable* t = (FastTable*)self;
  long long m, n, k, device, stream;
  unsigned long long fn, align;
  PyObject *b_layout, *acc, *selection, *keep;
  Py_buffer tmpl;
  int captured, guarded;
  if (!PyArg_ParseTuple(args, "LLLUULLpKy*KpOO", &m, &n, &k, &b_layout, &acc, &device, &stream, &captured, &fn, &tmpl,
                        &align, &guarded, &selection, &keep))
    return NULL;
  int b_col = flag_of(b_layout, s_row, s_col), acc16 = flag_of(acc, s_f32, s_f16);
  const char* problem = NULL;
  if (b_col < 0 || acc16 < 0) problem = "b_layout must be 'row' or 'col' and acc 'f32' or 'f16'";
  else if (m < 1 || n < 1 || k < 1) problem = "M, N, K must be >= 1";
  else if (!fn) problem = "null entry point";
  else if (tmpl.len < 24 || tmpl.len > TEMPLATE_MAX) problem = "template must hold 24 to 128 bytes";
  else if (align & (align - 1)) problem = "align must be a power of two (or 0)";
  if (problem) {
    PyBuffer_Release(&tmpl);
    PyErr_SetString(PyExc_ValueError, problem);
    return NULL;
  }
  if ((t->count + 1) * 2 > t->capacity && grow(t) < 0) {
    PyBuffer_Release(&tmpl);
    return NULL;
  }
  Key key;
  memset(&key, 0, sizeof key);
  key.m = m, key.n = n, key.k = k, key.device = device, key.stream = stream;
  key.flags = b_col | (acc16 << 1) | (captured ? 4 : 0);
  Entry* e = find_slot(t->slots, t->capacity, &key);
  PyObject *old_selection = NULL, *old_keep = NULL;  // released once the entry is whole again
  if (e->used) {
    old_selection = e->selection;
    old_keep = e->keep;
  } else {
    t->count++;
  }
  e->key = key;
  e->used = 1;
  e->fn = (launch_fn)(uintptr_t)fn;
  memset(e->tmpl, 0, TEMPLATE_MAX);
  memcpy(e->tmpl, tmpl.buf, (size_t)tmpl.len);
  e->size = tmpl.len;
  e->align_mask = align ? align - 1 : 0;
  e->guarded = guarded;
  Py_INCREF(selection);
  Py_INCREF(keep);
  e->selection = selection;
  e->keep = keep;
  PyBuffer_Release(&tmpl);
  Py_XDECREF(old_selection);
  Py_XDECREF(old_keep);
  Py_RETURN_NONE;
}

static PyObject* table_clear(PyObject* self, PyObject* unused) {
  clear_entries((FastTable*)self);
  Py_RETURN_NONE;
}

static Py_ssize_t table_len(PyObject* self) { return ((FastTable*)self)->count; }

static PyObject* table_stats(PyObject* self, PyObject* unused) {
  FastTable* t = (FastTable*)self;
  return Py_BuildValue("{sKsKsn}", "hits", t->hits, "misses", t->misses, "entries", t->count);
}

static PyObject* table_get_canary_every(PyObject* self, void* closure) {
  return PyLong_FromUnsignedLongLong(((FastTable*)self)->canary_every);
}

static int table_set_canary_every(PyObject* self, PyObject* value, void* closure) {
  if (!value) {
    PyErr_SetString(PyExc_TypeError, "cannot delete canary_every");
    return -1;
  }
  unsigned long long every = PyLong_AsUnsignedLongLong(value);
  if (PyErr_Occurred()) return -1;
  ((FastTable*)self)->canary_every = every;
  ((FastTable*)self)->canary_count = 0;
  return 0;
}

static PyObject* table_get_graph_choices(PyObject* self, void* closure) {
  return PyBool_FromLong(((FastTable*)self)->graph_choices);
}

// Changing it drops every entry: they were keyed with the other rule.
static int table_set_graph_choices(PyObject* self, PyObject* value, void* closure) {
  if (!value) {
    PyErr_SetString(PyExc_TypeError, "cannot delete graph_choices");
    return -1;
  }
  int on = PyObject_IsTrue(value);
  if (on < 0) return -1;
  FastTable* t = (FastTable*)self;
  if (on != t->graph_choices) {
    t->graph_choices = on;
    clear_entries(t);
  }
  return 0;
}

static int table_init(PyObject* self, PyObject* args, PyObject* kwargs) {
  FastTable* t = (FastTable*)self;
  static char* names[] = {"stream_of",     "float16",      "allow_cpu", "capture_status",
                          "tensor_reader", "matrix_maker", NULL};
  PyObject *stream_of, *float16;
  int allow_cpu = 0;
  unsigned long long capture_status = 0, tensor_reader = 0, matrix_maker = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|pKKK", names, &stream_of, &float16, &allow_cpu, &capture_status,
                                   &tensor_reader, &matrix_maker))
    return -1;
  if (!PyCallable_Check(stream_of)) {
    PyErr_SetString(PyExc_TypeError, "stream_of must be callable");
    return -1;
  }
  Py_INCREF(stream_of);
  Py_INCREF(float16);
  Py_XSETREF(t->stream_of, stream_of);
  Py_XSETREF(t->float16, float16);
  t->allow_cpu = allow_cpu;
  t->capture_status = (capture_status_fn)(uintptr_t)capture_status;
  t->read_tensor = (read_tensor_fn)(uintptr_t)tensor_reader;
  t->new_matrix = (new_matrix_fn)(uintptr_t)matrix_maker;
  return 0;
}

static PyObject* table_get_tensor_reader(PyObject* self, void* closure) {
  return PyBool_FromLong(((FastTable*)self)->read_tensor != NULL);
}

static PyObject* table_get_matrix_maker(PyObject* self, void* closure) {
  return PyBool_FromLong(((FastTable*)self)->new_matrix != NULL);
}

static int table_traverse(PyObject* self, visitproc visit, void* arg) {
  FastTable* t = (FastTable*)self;
  Py_VISIT(t->stream_of);
  Py_VISIT(t->float16);
  for (Py_ssize_t i = 0; i < t->capacity; i++) {
    if (t->slots[i].used) {
      Py_VISIT(t->slots[i].selection);
      Py_VISIT(t->slots[i].keep);
    }
  }
  return 0;
}

static int table_clear_refs(PyObject* self) {
  FastTable* t = (FastTable*)self;
  clear_entries(t);
  Py_CLEAR(t->stream_of);
  Py_CLEAR(t->float16);
  return 0;
}

static void table_dealloc(PyObject* self) {
  PyObject_GC_UnTrack(self);
  table_clear_refs(self);
  PyMem_Free(((FastTable*)self)->slots);
  Py_TYPE(self)->tp_free(self);
}

static PyMethodDef table_methods[] = {
    {"run", (PyCFunction)(void (*)(void))table_run, METH_FASTCALL,
     "run(a, b, out, b_layout, acc) -> (out, selection), or an int: 0 miss, 1 canary sample, 2 launch error"},
    {"gemm", (PyCFunction)(void (*)(void))table_gemm, METH_FASTCALL,
     "gemm(a, b, out, b_layout, acc) -> out, or an int code as run()"},
    {"put", table_put, METH_VARARGS,
     "put(m, n, k, b_layout, acc, device, stream, captured, fn_address, template, align, guarded, selection, keep)"},
    {"clear", table_clear, METH_NOARGS, "drop every entry"},
    {"stats", table_stats, METH_NOARGS, "{'hits', 'misses', 'entries'}"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef table_getset[] = {
    {"canary_every", table_get_canary_every, table_set_canary_every, "every n-th guarded call is a canary sample",
     NULL},
    {"graph_choices", table_get_graph_choices, table_set_graph_choices,
     "key entries on whether the stream is capturing a CUDA graph (setting it drops every entry)", NULL},
    {"tensor_reader", table_get_tensor_reader, NULL, "whether operands are read from the at::Tensor (not Python)",
     NULL},
    {"matrix_maker", table_get_matrix_maker, NULL, "whether outputs are allocated in C++ (not a.new_empty)", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PySequenceMethods table_as_sequence = {.sq_length = table_len};

static PyTypeObject FastTableType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kernels_fastpath.FastTable",
    .tp_basicsize = sizeof(FastTable),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "FastTable(stream_of, float16, allow_cpu=False, capture_status=0, tensor_reader=0): prepared launches "
              "keyed by shape, device, stream and (with graph_choices) capture status",
    .tp_new = PyType_GenericNew,
    .tp_init = table_init,
    .tp_dealloc = table_dealloc,
    .tp_traverse = table_traverse,
    .tp_clear = table_clear_refs,
    .tp_methods = table_methods,
    .tp_getset = table_getset,
    .tp_as_sequence = &table_as_sequence,
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "kernels_fastpath", "The cached GEMM dispatch in C.", -1,
                                    NULL};

PyMODINIT_FUNC PyInit_kernels_fastpath(void) {
  if (PyType_Ready(&FastTableType) < 0) return NULL;
  const char* names[] = {"dtype", "shape", "stride", "get_device", "data_ptr", "new_empty", "row", "col", "f32", "f16"};
  PyObject** slots[] = {&s_dtype, &s_shape, &s_stride, &s_get_device, &s_data_ptr, &s_new_empty,
                        &s_row, &s_col, &s_f32, &s_f16};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (!(*slots[i] = PyUnicode_InternFromString(names[i]))) return NULL;
  PyObject* m = PyModule_Create(&module);
  if (!m) return NULL;
  Py_INCREF(&FastTableType);
  if (PyModule_AddObject(m, "FastTable", (PyObject*)&FastTableType) < 0) {
    Py_DECREF(&FastTableType);
    Py_DECREF(m);
    return NULL;
  }
  PyModule_AddIntConstant(m, "MISS", MISS);
  PyModule_AddIntConstant(m, "CANARY", CANARY);
  PyModule_AddIntConstant(m, "LAUNCH_ERROR", LAUNCH_ERROR);
  return m;
}
