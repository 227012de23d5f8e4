"""The gvr-topk benchmark (``gvr-topk bench``): named cases, a synthetic DSA-indexer generator and adversarial
rows, CUDA-graph timing with a cold L2, an on-device exactness check of every timed output, and the report
(table, target summary, JSON, heatmap).

Modules: :mod:`.cases`, :mod:`.data`, :mod:`.timing`, :mod:`.floor`, :mod:`.exact`, :mod:`.runner`,
:mod:`.report`, :mod:`.cli`. Optional dependencies (tqdm, matplotlib: the ``bench`` extra) are imported only when
used.
"""
