"""Benchmark validity (paper Fig. 6): do retrievers rank the same on a generated subset as on an external benchmark?

Given per-retriever scores on an external benchmark and on each generated subset, compute the Pearson
and Kendall correlation between every pair of columns (external + subsets) over the retrievers they share.
"""
from __future__ import annotations

import csv
import math
from pathlib import Path

from fincprg.errors import InputError


def read_scores_csv(path: str | Path) -> dict[str, float]:
    """Read ``retriever,score`` rows (a header line is expected; extra columns are ignored)."""
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path} does not exist; --correlate takes a CSV with columns retriever,score")
    out: dict[str, float] = {}
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        if not reader.fieldnames or "retriever" not in reader.fieldnames or "score" not in reader.fieldnames:
            raise InputError(f"{path}: the header must name the columns 'retriever' and 'score' "
                             f"(found {reader.fieldnames})")
        for i, row in enumerate(reader, 2):
            try:
                out[row["retriever"].strip()] = float(row["score"])
            except (TypeError, ValueError) as e:
                raise InputError(f"{path}:{i}: score {row.get('score')!r} is not a number") from e
    return out


def correlation_matrix(columns: dict[str, dict[str, float]], method: str = "pearson"
                       ) -> tuple[list[str], list[list[float]], list[list[int]]]:
    """Pairwise correlations between named columns of per-retriever scores.

    Args:
        columns: column name (e.g. "external", "sentence") -> {retriever: score}.
        method: ``pearson`` or ``kendall`` (tau-b).

    Returns:
        (names, matrix, counts): ``matrix[i][j]`` is the correlation over the retrievers both columns
        share (NaN with fewer than 3 shared or a constant column); ``counts[i][j]`` is that number.
    """
    from scipy import stats

    fn = {"pearson": stats.pearsonr, "kendall": stats.kendalltau}.get(method)
    if fn is None:
        raise ValueError(f"method must be pearson or kendall, got {method!r}")
    names = list(columns)
    mat = [[math.nan] * len(names) for _ in names]
    cnt = [[0] * len(names) for _ in names]
    for i, a in enumerate(names):
        for j, b in enumerate(names):
            shared = sorted(set(columns[a]) & set(columns[b]))
            cnt[i][j] = len(shared)
            x = [columns[a][r] for r in shared]
            y = [columns[b][r] for r in shared]
            if len(shared) >= 3 and len(set(x)) > 1 and len(set(y)) > 1:
                mat[i][j] = float(fn(x, y)[0])
    return names, mat, cnt


def format_matrix(names: list[str], mat: list[list[float]], title: str) -> str:
    """A Markdown table of a correlation matrix (NaN shown as '–')."""
    lines = [f"**{title}**", "", "| | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for n, row in zip(names, mat):
        lines.append(f"| {n} | " + " | ".join("–" if math.isnan(v) else f"{v:.3f}" for v in row) + " |")
    return "\n".join(lines)


def correlate(external: dict[str, float], subsets: dict[str, dict[str, float]], external_name: str = "external"
              ) -> str:
    """Pearson and Kendall matrices (Markdown) of an external benchmark against each generated subset.

    Args:
        external: retriever -> score on the external benchmark.
        subsets: subset -> {retriever: score} on the generated dataset (one metric, e.g. nDCG@10).
    """
    cols = {external_name: external, **subsets}
    shared = set(external)
    for s in subsets.values():
        shared &= set(s)
    parts = [f"Retrievers shared by every column: {len(shared)}"
             + ("" if len(shared) >= 3 else " (fewer than 3: correlations are undefined and shown as '–')")]
    for method in ("pearson", "kendall"):
        names, mat, _ = correlation_matrix(cols, method)
        parts.append(format_matrix(names, mat, f"{method.capitalize()} correlation"))
    return "\n\n".join(parts)
