"""Hard negatives for training: BM25 (bm25s over finance tokens) or a dense sentence-transformers model.

A candidate is never a negative when it is a known positive of the query (any label, direct or
mined, from any subset or split) or when its text equals a positive's text (boilerplate
passages repeated across reports would otherwise teach the model that a positive is negative).
"""
from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
from tqdm.auto import tqdm

from fincprg.errors import ConfigError
from fincprg.finance import tokenize

log = logging.getLogger(__name__)
_EXTRA = 16  # candidates fetched beyond n + |positives|, to survive the exclusions
_MAX_POS_FETCH = 256  # cap on extra candidates for queries with very many positives
# bm25s's numba backend retrieves ~10x faster than its numpy one but JIT-compiles for tens of
# seconds first; it pays off only for large query sets (paper scale: ~150k queries).
NUMBA_MIN_QUERIES = 20000


def _bm25_backend(n_queries: int) -> str:
    if n_queries < NUMBA_MIN_QUERIES:
        return "numpy"
    try:
        import numba  # noqa: F401
    except ImportError:
        return "numpy"
    return "numba"


def _pick(
    cand_rows: np.ndarray,
    score_rows: np.ndarray | None,
    positives: Sequence[set[int]],
    texts: Sequence[str],
    n: int,
    pos_texts_rows: Sequence[set[str]] | None,
) -> list[list[int]]:
    out = []
    for i, cands in enumerate(cand_rows):
        pos = positives[i]
        pos_texts = {texts[j] for j in pos} | (pos_texts_rows[i] if pos_texts_rows is not None else set())
        chosen: list[int] = []
        for rank, j in enumerate(cands):
            j = int(j)
            if score_rows is not None and score_rows[i][rank] <= 0:
                break  # bm25s pads k with zero-score documents: they match nothing
            if j in pos or texts[j] in pos_texts or j in chosen:
                continue
            chosen.append(j)
            if len(chosen) >= n:
                break
        out.append(chosen)
    return out


def bm25_negatives(
    queries: Sequence[str],
    positives: Sequence[set[int]],
    texts: Sequence[str],
    n: int,
    *,
    positive_texts: Sequence[set[str]] | None = None,
    chunk: int = 4096,
    show_progress: bool = False,
) -> list[list[int]]:
    """Top-scoring non-positive passages (indices into ``texts``) per query under BM25.

    Tokens come from ``fincprg.finance.tokenize`` (jieba + the finance dictionary), as in the
    lexical mining scorer. With ``show_progress`` two tqdm bars (passages tokenised, queries
    retrieved) show the minutes this takes at paper scale.
    """
    import bm25s

    if not texts or n <= 0:
        return [[] for _ in queries]
    retriever = bm25s.BM25(backend=_bm25_backend(len(queries)))
    corpus_tokens = [tokenize(t) for t in tqdm(texts, desc="export: BM25 negatives, tokenise passages",
                                                unit="passage", disable=not show_progress, leave=False)]
    retriever.index(corpus_tokens, show_progress=False)
    out: list[list[int]] = []
    with tqdm(total=len(queries), desc="export: BM25 negatives, queries", unit="query",
              disable=not show_progress) as bar:
        for start in range(0, len(queries), chunk):
            qs = queries[start : start + chunk]
            pos = positives[start : start + chunk]
            k = min(len(texts), n + min(max((len(p) for p in pos), default=0), _MAX_POS_FETCH) + _EXTRA)
            qtok = [tokenize(q) or ["\0"] for q in qs]  # an empty query still needs one token; it matches nothing
            ids, scores = retriever.retrieve(qtok, k=k, show_progress=False)
            ptx = positive_texts[start : start + chunk] if positive_texts is not None else None
            out.extend(_pick(ids, scores, pos, texts, n, ptx))
            bar.update(len(qs))
    return out


def dense_negatives(
    queries: Sequence[str],
    positives: Sequence[set[int]],
    texts: Sequence[str],
    n: int,
    *,
    model: str,
    positive_texts: Sequence[set[str]] | None = None,
    batch_size: int = 64,
    device: str | None = None,
    chunk: int = 1024,
    show_progress: bool = False,
) -> list[list[int]]:
    """Nearest non-positive passages by cosine similarity of a sentence-transformers model."""
    if not texts or n <= 0:
        return [[] for _ in queries]
    from fincprg.models import TextEncoder

    enc = TextEncoder(model, where="export.negatives.model", batch_size=batch_size, device=device,
                      alternative="export.negatives.method=bm25")
    p = enc.encode(list(texts), show_progress=show_progress)
    q = enc.encode(list(queries), show_progress=show_progress)
    out: list[list[int]] = []
    for start in range(0, len(queries), chunk):
        pos = positives[start : start + chunk]
        k = min(len(texts), n + min(max((len(x) for x in pos), default=0), _MAX_POS_FETCH) + _EXTRA)
        sims = q[start : start + chunk] @ p.T
        top = np.argpartition(-sims, k - 1, axis=1)[:, :k] if k < len(texts) else np.tile(
            np.arange(len(texts)), (len(sims), 1))
        order = np.take_along_axis(sims, top, axis=1).argsort(axis=1)[:, ::-1]
        ptx = positive_texts[start : start + chunk] if positive_texts is not None else None
        out.extend(_pick(np.take_along_axis(top, order, axis=1), None, pos, texts, n, ptx))
    return out


def mine_negatives(
    queries: Sequence[str],
    positives: Sequence[set[int]],
    texts: Sequence[str],
    *,
    method: str,
    n: int,
    positive_texts: Sequence[set[str]] | None = None,
    model: str | None = None,
    batch_size: int = 64,
    device: str | None = None,
    show_progress: bool = False,
) -> list[list[int]]:
    """Hard negatives per query, as indices into ``texts``.

    Args:
        queries: query texts.
        positives: per query, indices (into ``texts``) of its known positives; never returned.
        texts: the negative pool (passage texts).
        method: ``export.negatives.method`` ("bm25" | "dense" | "none").
        n: negatives wanted per query (fewer when the pool has fewer matching passages).
        positive_texts: per query, texts of known positives outside the pool; equal texts are excluded too.
        model, batch_size, device: for the dense method.
        show_progress: tqdm bars (the build's ``run.show_progress`` / ``-q``).
    """
    if method == "none":
        return [[] for _ in queries]
    if method == "bm25":
        return bm25_negatives(queries, positives, texts, n, positive_texts=positive_texts,
                              show_progress=show_progress)
    if method == "dense":
        if not model:
            raise ConfigError("export.negatives.method=dense needs export.negatives.model (a sentence-transformers "
                              "path or hub id); or set export.negatives.method: bm25")
        return dense_negatives(queries, positives, texts, n, model=model, positive_texts=positive_texts,
                               batch_size=batch_size, device=device, show_progress=show_progress)
    raise ConfigError(f"export.negatives.method={method!r} is not one of bm25, dense, none")
