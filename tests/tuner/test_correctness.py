"""Correctness checks on CPU tensors (the same code runs on the GPU): a right GEMM passes; a kernel that writes
nothing, a wrong one, or one that raises is reported, never timed."""
import math

import pytest
import torch

from tuner.correctness import check, tolerance


def _operands(m=48, n=40, k=64, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(m, k, generator=g).half()
    b = torch.randn(k, n, generator=g).half()
    return a, b, b.t().contiguous(), torch.empty(m, n, dtype=torch.half)


def _matmul_fp32(a, b, out):
    out.copy_((a.float() @ b.float()).half())


def test_tolerances_are_stated():
    assert tolerance("f32", 4096) == 1e-3
    assert tolerance("f16", 16) == 2e-3 and tolerance("f16", 16384) == pytest.approx(4 * 2**-12 * 32)
    with pytest.raises(ValueError):
        tolerance("bf16", 64)


def test_a_correct_gemm_passes_in_both_layouts():
    a, b_row, b_col, out = _operands()
    res = check(_matmul_fp32, "row", "f32", a, b_row, b_col, out)
    assert res.ok and res.rel_err < 1e-3 and res.zero_one_err < 1e-3
    res = check(lambda a, b, out: _matmul_fp32(a, b.t(), out), "col", "f32", a, b_row, b_col, out)
    assert res.ok


def test_a_kernel_that_writes_nothing_fails_on_the_nan_poison():
    a, b_row, b_col, out = _operands()
    res = check(lambda a, b, out: None, "row", "f32", a, b_row, b_col, out)
    assert not res.ok and math.isinf(res.rel_err) and "random-normal" in res.reason


def test_a_wrong_layout_is_caught():
    a, b_row, b_col, out = _operands(m=32, n=32, k=32)
    res = check(lambda a, b, out: _matmul_fp32(a, b, out), "col", "f32", a, b_row, b_col, out)  # forgot b.t()
    assert not res.ok


def test_a_kernel_skipping_the_last_k_tile_fails_zero_one_or_random():
    a, b_row, b_col, out = _operands(k=128)

    def short_k(a, b, out):
        out.copy_((a[:, :96].float() @ b[:96].float()).half())

    assert not check(short_k, "row", "f32", a, b_row, b_col, out).ok


def test_an_exception_is_a_reported_failure():
    a, b_row, b_col, out = _operands()

    def boom(a, b, out):
        raise RuntimeError("CUBLAS_STATUS_INVALID_VALUE")

    res = check(boom, "row", "f32", a, b_row, b_col, out)
    assert not res.ok and "CUBLAS_STATUS_INVALID_VALUE" in res.reason


def test_fp16_accumulation_error_passes_fp16_tolerance_but_not_fp32():
    a, b_row, b_col, out = _operands(m=64, n=64, k=2048)

    def fp16_acc(a, b, out):  # rounds the partial sum to fp16 every 16-deep step, like an f16-accumulating MMA
        acc = torch.zeros(a.shape[0], b.shape[1], dtype=torch.half)
        for k0 in range(0, a.shape[1], 16):
            acc = (acc.float() + a[:, k0:k0 + 16].float() @ b[k0:k0 + 16].float()).half()
        out.copy_(acc)

    assert check(fp16_acc, "row", "f16", a, b_row, b_col, out).ok
    assert not check(fp16_acc, "row", "f32", a, b_row, b_col, out).ok
