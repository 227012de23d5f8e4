"""Test-session setup shared by every test.

Without a CUDA GPU the Triton kernels run through Triton's interpreter: ``TRITON_INTERPRET=1`` must be set before
triton is first imported, which is why this happens here, at collection time, before any test module imports
``gvr_topk``.
"""

import os

import torch

ON_GPU = torch.cuda.is_available()
if not ON_GPU:
    os.environ.setdefault("TRITON_INTERPRET", "1")
