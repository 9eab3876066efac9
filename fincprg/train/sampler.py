"""Length-grouped batches for ``fincprg train --group-by-length`` (less padding, faster CPU steps).

Rows are shuffled, cut into pools of ``pool`` batches, sorted by length inside each pool, batched,
and the batches shuffled again: each batch holds texts of similar length (padding is paid per
batch) while the order stays random from one epoch to the next (the idea of transformers'
``group_by_length``). With ``unique=True`` a batch never holds the same text twice (MNRL's in-batch
negatives must not be copies of a positive), like sentence-transformers' ``NoDuplicatesBatchSampler``.
:func:`length_batches` is pure Python; :mod:`fincprg.train.st_sampler` wraps it for the trainer.
"""
from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

POOL_BATCHES = 50  # batches sorted together: larger pools pad less, smaller ones mix lengths more


def _fill(items: list[int], keys: Sequence[frozenset[str]] | None, batch_size: int) -> tuple[list[int], list[int]]:
    """One batch taken in order, skipping a row whose texts are already in it; and the rows left over."""
    cur: list[int] = []
    seen: set[str] = set()
    rest: list[int] = []
    for i in items:
        if len(cur) < batch_size and (keys is None or seen.isdisjoint(keys[i])):
            cur.append(i)
            if keys is not None:
                seen |= keys[i]
        else:
            rest.append(i)
    return cur, rest


def _greedy(items: list[int], keys: Sequence[frozenset[str]] | None,
            batch_size: int) -> tuple[list[list[int]], list[int]]:
    """Full batches taken in order (:func:`_fill`); and the rest."""
    batches: list[list[int]] = []
    rest = items
    while len(rest) >= batch_size:
        cur, skipped = _fill(rest, keys, batch_size)
        if len(cur) < batch_size:  # duplicates left no full batch: hand the rows to the next pool
            return batches, cur + skipped
        batches.append(cur)
        rest = skipped
    return batches, rest


def length_batches(lengths: Sequence[int], batch_size: int, *, seed: int, keys: Sequence[frozenset[str]] | None = None,
                   drop_last: bool = False, pool: int = POOL_BATCHES) -> list[list[int]]:
    """Row indices in batches of similar ``lengths``, every row once (less the rest with ``drop_last``).

    Args:
        lengths: one length per row (characters of all its texts).
        keys: per row, its texts; a batch never holds two rows that share one (None: no check).
        seed: the shuffle; the trainer passes seed + epoch.
    """
    rng = random.Random(seed)
    order = list(range(len(lengths)))
    rng.shuffle(order)
    batches: list[list[int]] = []
    carry: list[int] = []
    step = batch_size * pool
    for start in range(0, len(order), step):
        chunk = sorted(carry + order[start : start + step], key=lambda i: lengths[i])
        done, carry = _greedy(chunk, keys, batch_size)
        batches += done
    while carry:  # the tail: partial batches, still without duplicates
        cur, carry = _fill(carry, keys, batch_size)
        if len(cur) == batch_size or not drop_last:
            batches.append(cur)
    rng.shuffle(batches)
    return batches


def row_texts(dataset: Any, exclude: Sequence[str] = ("score", "label")) -> list[list[str]]:
    """The text columns of every row of a ``datasets.Dataset`` (labels left out)."""
    cols = [c for c in dataset.column_names if c not in exclude]
    columns = [dataset[c] for c in cols]
    return [[str(col[i]) for col in columns] for i in range(len(dataset))]
