"""The op's semantics as constants, shared by the implementation, the reference and the tests.

Everything a caller may rely on is stated here once:

* ``indices`` is int32, row-local (0 .. n_r - 1), unordered.
* Rows with ``n_r <= K`` get ``0 .. n_r - 1`` followed by :data:`PAD_INDEX`; rows with ``n_r <= 0`` are all
  :data:`PAD_INDEX`.
* ``values`` (optional) is float32; pad slots hold :data:`PAD_VALUE`.
* Ordering of scores is the order of :func:`order key <gvr_topk.reference.order_keys>`: IEEE order with every
  NaN above +inf (as ``torch.topk`` ranks them) and -0.0 just below +0.0.
* Tie rule: among scores equal (in that order) to the K-th largest, the **lowest column indices** win. The chosen
  index *set* is therefore a pure function of the input, identical on every run, family and GPU.
"""

import torch

#: Index written to output slots that hold no selection (short rows, padding rows).
PAD_INDEX = -1
#: Value written to ``values`` slots that hold no selection.
PAD_VALUE = torch.finfo(torch.float32).min
#: Largest supported K (``indices.shape[1]``).
MAX_K = 2048
#: Score dtypes the kernels accept; scores are compared after an exact upcast to float32.
SCORE_DTYPES = (torch.float32, torch.bfloat16, torch.float16)
