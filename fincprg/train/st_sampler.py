"""sentence-transformers batch samplers over :func:`fincprg.train.sampler.length_batches`.

Module-level classes (the trainer pickles its arguments, the sampler class included, into every
checkpoint). Importing this module imports sentence-transformers: only the trainer does.
"""
from __future__ import annotations

from typing import Any

from sentence_transformers.base.sampler import DefaultBatchSampler

from fincprg.train.sampler import length_batches, row_texts


class LengthGroupedBatchSampler(DefaultBatchSampler):
    """Batches of similar length, in a new random order every epoch (seed + epoch)."""

    unique = False

    def __init__(self, dataset: Any, batch_size: int, drop_last: bool, valid_label_columns: Any = None,
                 generator: Any = None, seed: int = 0) -> None:
        super().__init__(dataset, batch_size=batch_size, drop_last=drop_last,
                         valid_label_columns=valid_label_columns, generator=generator, seed=seed)
        texts = row_texts(dataset, exclude=(*(valid_label_columns or ()), "score", "label"))
        self.lengths = [sum(len(t) for t in row) for row in texts]
        self.keys = [frozenset(row) for row in texts] if self.unique else None
        self._plan: tuple[int, list[list[int]]] | None = None

    def _batches(self) -> list[list[int]]:
        if self._plan is None or self._plan[0] != self.epoch:
            self._plan = (self.epoch, length_batches(self.lengths, self.batch_size, seed=self.seed + self.epoch,
                                                     keys=self.keys, drop_last=self.drop_last))
        return self._plan[1]

    def __iter__(self):  # noqa: ANN204 - torch's BatchSampler protocol
        yield from self._batches()

    def __len__(self) -> int:
        return len(self._batches())


class LengthGroupedNoDuplicatesBatchSampler(LengthGroupedBatchSampler):
    """The same, and no text twice in a batch (in-batch negatives of MNRL)."""

    unique = True
