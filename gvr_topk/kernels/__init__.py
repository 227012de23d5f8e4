"""Triton kernels (``@triton.jit`` code only): one module per family plus shared helpers in ``_common``."""
