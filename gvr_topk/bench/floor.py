"""Launcher of the read-floor kernel (:mod:`gvr_topk.kernels.rowmax`) and its split rule."""

from typing import Optional
from typing import Sequence

import torch

from ..kernels.rowmax import _rowmax_kernel

#: Programs the split rule aims to launch per SM: a few waves, so a small batch of long rows still fills the GPU
#: (performance.md: one program streams a 512 KB row at ~17 GB/s; 1 x 131072 needs ~64 programs to hit the floor).
PROGRAMS_PER_SM = 4
#: Fewest scores one program should stream (below this, launch and merge costs dominate).
MIN_CHUNK = 2048
#: Most programs per row (the H200 row-max stops improving past 64, performance.md).
MAX_SPLIT = 64
#: Scores per loop iteration and warps: 16 scores per thread per iteration keeps enough loads in flight.
BLOCK = 4096
NUM_WARPS = 8


def _pow2_ceil(x: int) -> int:
    return 1 << max(int(x) - 1, 0).bit_length()


def floor_split(rows: int, n: int, num_sms: int = 132) -> int:
    """Programs per row for the read floor at ``rows x n``.

    Parameters
    ----------
    rows : int
        Rows in the launch.
    n : int
        Longest row (columns).
    num_sms : int
        SMs of the GPU (132 on the H200).

    Returns
    -------
    int
        A power of two in ``[1, MAX_SPLIT]``: enough programs for ``PROGRAMS_PER_SM`` per SM in total, no more than
        one per ``MIN_CHUNK`` scores.
    """
    want = _pow2_ceil(-(-PROGRAMS_PER_SM * num_sms // max(rows, 1)))
    by_len = _pow2_ceil(max(-(-n // MIN_CHUNK), 1))
    return max(1, min(want, by_len, MAX_SPLIT))


def split_candidates(rows: int, n: int, num_sms: int = 132) -> Sequence[int]:
    """The rule's split and its neighbours (x0.5, x2): the benchmark keeps the fastest, so the floor is the best
    row-max among them, not one possibly unlucky configuration."""
    s = floor_split(rows, n, num_sms)
    return sorted({max(1, s // 2), s, min(MAX_SPLIT, s * 2)})


class RowMax:
    """A reusable read-floor launch over one score matrix (buffers allocated once, so it is graph-capturable).

    Parameters
    ----------
    logits : torch.Tensor
        ``(rows, npad)`` float32 / bfloat16 / float16 scores, inner stride 1.
    kv_lens : torch.Tensor, optional
        int32 ``(rows // next_n,)``: varlen rows with the op's length rule; None: every row has ``n_valid`` columns.
    n_bound : int
        Longest row (the envelope), clamped to ``npad``; also ``n_valid`` when ``kv_lens`` is None.
    split : int
        Programs per row.
    next_n, compress_ratio : int
        As in :func:`gvr_topk.run_varlen`.
    """

    def __init__(self, logits: torch.Tensor, kv_lens: Optional[torch.Tensor], n_bound: int, split: int, *,
                 next_n: int = 1, compress_ratio: int = 1):
        rows, npad = logits.shape
        self.logits = logits
        self.kv_lens = kv_lens
        self.n_bound = min(max(int(n_bound), 0), npad)
        self.split = int(split)
        self.next_n = next_n
        self.cr_shift = compress_ratio.bit_length() - 1
        # Shares are whole BLOCKs, like the selection kernels' tiles.
        blocks = -(-self.n_bound // BLOCK)
        self.chunk = max(-(-blocks // self.split), 1) * BLOCK
        #: float32 ``(rows,)``: the output of the last launch.
        self.out = torch.empty(rows, dtype=torch.float32, device=logits.device)
        self._merge = torch.zeros((rows, 2), dtype=torch.int32, device=logits.device)

    def __call__(self) -> torch.Tensor:
        rows = self.logits.shape[0]
        if rows == 0:
            return self.out
        _rowmax_kernel[(self.split, rows)](
            self.out, self.logits, self.kv_lens if self.kv_lens is not None else self._merge, self._merge,
            self.n_bound, self.logits.stride(0), self.n_bound, self.next_n, self.cr_shift, self.chunk, self.split,
            BLOCK=BLOCK, VARLEN=self.kv_lens is not None, num_warps=NUM_WARPS)
        return self.out
