"""Host launchers: one module per kernel family, mirroring ``gvr_topk.kernels`` (kernel, grid, per-family
arguments, workspace views), the shared argument builders (``common``) and the launcher cache (``cache``). No ``tl``
code here."""
