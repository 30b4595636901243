"""Shared test configuration: `@pytest.mark.gpu` tests run only where CUDA is available (the H200), and are skipped
cleanly on CPU machines such as CI."""
import pytest


def _cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def pytest_collection_modifyitems(config, items):
    if _cuda_available():
        return
    skip_gpu = pytest.mark.skip(reason="needs a CUDA GPU (run `make gpu-test` on the H200)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip_gpu)
