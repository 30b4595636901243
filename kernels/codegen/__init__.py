"""KernelConfig -> one CUDA translation unit exporting the C ABI in hgemm_abi.h (see generate.py)."""
from kernels.codegen.generate import CODEGEN_DIR, generate, gencode_for, local_headers

__all__ = ["CODEGEN_DIR", "generate", "gencode_for", "local_headers"]
