"""Time2Vec-style temporal features for report dates (fixed, not learnt).

For a date ``d`` and a reference date ``r`` (config ``topics.time2vec.reference_date``, default the
earliest date in the corpus), ``t = (d - r).days`` and the 6 features are::

    [ t / span,  sin(2*pi*t/7),  sin(2*pi*t/30.4375),  sin(2*pi*t/91.3125),
      sin(2*pi*t/182.625),  sin(2*pi*t/365.25) ]

i.e. one linear trend (``span`` = the largest |t| in the batch, so it lies in [-1, 1]) and five
periodic terms with periods week, month, quarter, half-year and year (in days; 365.25/12 etc.).
Time2Vec learns the frequencies and phases; here both are fixed so that the features need no
training and stay comparable between runs. The vector is divided by sqrt(6) (norm <= 1, the
scale of an L2-normalised title embedding) and multiplied by ``weight`` before concatenation.
A missing date gives the zero vector: such titles are clustered on their text alone.
"""
from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

import numpy as np

PERIODS_DAYS: tuple[float, ...] = (7.0, 30.4375, 91.3125, 182.625, 365.25)
DIM = 1 + len(PERIODS_DAYS)


def reference_date(dates: Sequence[dt.date | None], given: dt.date | None = None) -> dt.date | None:
    """The configured reference date, else the earliest known date (None when no date is known)."""
    if given is not None:
        return given
    known = [d for d in dates if d is not None]
    return min(known) if known else None


def time2vec(dates: Sequence[dt.date | None], *, reference: dt.date | None = None,
             weight: float = 1.0) -> np.ndarray:
    """Map dates to an ``(n, 6)`` float32 array (see the module docstring for the formula)."""
    out = np.zeros((len(dates), DIM), dtype=np.float32)
    ref = reference_date(dates, reference)
    if ref is None or not len(dates):
        return out
    mask = np.array([d is not None for d in dates])
    t = np.array([(d - ref).days if d is not None else 0 for d in dates], dtype=np.float64)
    span = max(float(np.abs(t[mask]).max()) if mask.any() else 0.0, 1.0)
    feats = np.empty((len(dates), DIM), dtype=np.float64)
    feats[:, 0] = t / span
    for i, p in enumerate(PERIODS_DAYS, start=1):
        feats[:, i] = np.sin(2 * np.pi * t / p)
    feats *= weight / np.sqrt(DIM)
    out[mask] = feats[mask].astype(np.float32)
    return out
