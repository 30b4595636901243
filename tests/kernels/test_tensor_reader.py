"""tensor_reader.cpp (kernels/fastpath): what the fast path reads of an operand, taken from the at::Tensor, against
what the tensor's Python attributes say (the path it replaces), on every kind of tensor a caller may pass."""
from __future__ import annotations

import ctypes
import sys

import numpy as np
import pytest
import torch

from kernels import fastpath

P64 = ctypes.POINTER(ctypes.c_int64)
READER = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, P64, P64, P64, ctypes.POINTER(ctypes.c_uint64))


class Marked(torch.Tensor):
    """A subclass: its attributes may mean something else, so the reader leaves it to Python."""


@pytest.fixture(scope="module")
def read():
    address = fastpath.tensor_reader_address()
    if not address:
        pytest.fail(f"the tensor reader must build here: {fastpath.reader_unavailable_reason()}")
    fn = READER(address)  # PYFUNCTYPE: called with the GIL held, as fastpath.c calls it

    def read(x):
        rows, cols, device, ptr = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64(), ctypes.c_uint64()
        status = fn(x, ctypes.byref(rows), ctypes.byref(cols), ctypes.byref(device), ctypes.byref(ptr))
        return (status, rows.value, cols.value, device.value, ptr.value) if status == 1 else (status,)
    return read


def through_python(x):
    """What fastpath.c's attribute path concludes, in Python."""
    if type(x) not in (torch.Tensor, torch.nn.Parameter):
        return (-1,)
    if x.dtype != torch.float16 or x.dim() != 2:
        return (0,)
    rows, cols = x.shape
    if rows < 1 or cols < 1 or x.stride() != (cols, 1):
        return (0,)
    return (1, rows, cols, x.get_device() if x.is_cuda else -1, x.data_ptr())


BASE = torch.randn(6, 10).half()
CASES = {
    "contiguous": BASE,
    "row offset": BASE[2:],
    "one column": torch.randn(6, 1).half(),
    "one row": BASE[3:4],
    "parameter": torch.nn.Parameter(BASE.clone(), requires_grad=False),
    "column slice": BASE[:, :4],
    "transposed": BASE.t(),
    "strided rows": BASE[::2],
    "float32": BASE.float(),
    "bfloat16": BASE.bfloat16(),
    "1-D": BASE[0],
    "3-D": BASE.view(2, 3, 10),
    "no rows": torch.empty(0, 10, dtype=torch.float16),
    "subclass": BASE.as_subclass(Marked),
    "None": None,
    "int": 3,
    "numpy": np.zeros((6, 10), dtype=np.float16),
}


@pytest.mark.parametrize("case", CASES)
def test_the_reader_concludes_what_the_python_attributes_say(read, case):
    assert read(CASES[case]) == through_python(CASES[case])


def test_it_reads_the_operands_not_a_copy(read):
    assert read(BASE)[4] == BASE.data_ptr() and read(BASE[2:])[4] == BASE.data_ptr() + 2 * 10 * 2


def test_a_tensor_without_memory_is_not_served(read):
    assert read(torch.empty(4, 8, dtype=torch.float16, device="meta")) == (0,)


def test_tables_get_the_reader_and_its_allocator_unless_turned_off(monkeypatch):
    def uses(table):
        return table.tensor_reader, table.matrix_maker

    assert uses(fastpath.new_table(lambda device: 0)) == (True, True)
    assert uses(fastpath.new_table(lambda device: 0, tensor_reader=False)) == (False, False)
    monkeypatch.setenv("HGEMM_TENSOR_READER", "0")
    assert uses(fastpath.new_table(lambda device: 0)) == (False, False)


@pytest.mark.gpu
def test_cuda_operands_are_read_with_their_device_and_pointer(read):
    base = torch.randn(64, 96, device="cuda").half()
    for x in (base, base[5:], base[:, :32], base.t(), base.float()):
        assert read(x) == through_python(x)
    assert read(base)[3] == torch.cuda.current_device()


MAKER = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_int64, ctypes.c_int64,
                          ctypes.POINTER(ctypes.c_uint64))


@pytest.fixture(scope="module")
def new_matrix():
    address = fastpath.matrix_maker_address()
    if not address:
        pytest.fail(f"the tensor reader must build here: {fastpath.reader_unavailable_reason()}")
    fn = MAKER(address)

    def new_matrix(like, rows, cols):
        """(the tensor, the pointer it reported), or None for hgemm_new_matrix's NULL without an error."""
        ptr = ctypes.c_uint64()
        address = fn(like, rows, cols, ctypes.byref(ptr))
        if not address:
            return None
        made = ctypes.cast(address, ctypes.py_object).value
        ctypes.pythonapi.Py_DecRef(ctypes.py_object(made))  # the reference hgemm_new_matrix returned
        assert sys.getrefcount(made) == 2  # `made` and getrefcount's argument: it returned exactly one reference
        return made, ptr.value
    return new_matrix


@pytest.mark.parametrize("like", [BASE, BASE[2:], torch.nn.Parameter(BASE.clone(), requires_grad=True)],
                         ids=["contiguous", "row offset", "parameter"])
def test_an_output_is_what_new_empty_gives(new_matrix, like):
    made, ptr = new_matrix(like, 3, 7)
    expected = like.new_empty((3, 7))
    assert type(made) is torch.Tensor and made.shape == expected.shape and made.stride() == expected.stride()
    assert (made.dtype, made.device, made.requires_grad) == (expected.dtype, expected.device, False)
    assert ptr == made.data_ptr()


def test_no_output_for_what_is_not_a_plain_tensor(new_matrix):
    assert new_matrix(BASE.as_subclass(Marked), 3, 7) is None  # the caller allocates through Python
    assert new_matrix(None, 3, 7) is None


@pytest.mark.gpu
def test_a_cuda_output_is_on_the_operands_device(new_matrix):
    like = torch.randn(64, 96, device="cuda").half()
    made, ptr = new_matrix(like, 32, 48)
    assert made.device == like.device and made.dtype == torch.float16 and ptr == made.data_ptr()
    assert made.is_contiguous() and made.shape == (32, 48)
