"""Fine-tune embedding models on a fincprg dataset (``fincprg train``).

- :mod:`fincprg.train.data`: training pairs, negatives and IR-evaluation data from the export.
- :mod:`fincprg.train.vocab`: add a corpus's CJK characters to an English-vocabulary tokenizer.
- :mod:`fincprg.train.trainer`: the sentence-transformers trainer wrapper (losses, checkpoints, resume).
- :mod:`fincprg.train.compare`: the before/after table on BEIR benchmarks.

Nothing here imports torch at import time.
"""
