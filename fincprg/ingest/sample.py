"""A reproducible, stratified sample of reports (``run.sample_reports`` / ``fincprg build --limit N``).

Strata are (industry, year) from the report metadata ("unknown" when missing). Each stratum gets
its proportional share of N by the largest-remainder method, so the sample keeps the corpus's mix
of industries and periods; inside a stratum the reports with the smallest
``sha256(seed:report id)`` are taken. The choice depends only on the seed and the reports' ids,
industries and dates: not on the input order, the batch size or the machine.
"""
from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from fincprg.records import Report


def stratum(r: Report) -> tuple[str, str]:
    """(industry, year) of a report, "unknown" for what the metadata lacks."""
    return (r.industry or "unknown").strip() or "unknown", str(r.date.year) if r.date else "unknown"


def _rank(seed: int, report_id: str) -> str:
    return hashlib.sha256(f"{seed}:{report_id}".encode()).hexdigest()


def quotas(sizes: dict[tuple[str, str], int], n: int) -> dict[tuple[str, str], int]:
    """Proportional allocation of ``n`` over strata (largest remainder; ties by stratum key)."""
    total = sum(sizes.values())
    exact = {k: n * v / total for k, v in sizes.items()}
    out = {k: int(x) for k, x in exact.items()}
    left = n - sum(out.values())
    for k in sorted(exact, key=lambda k: (-(exact[k] - out[k]), k))[:left]:
        out[k] += 1
    return out


def sample_reports(reports: Sequence[Report], n: int, seed: int) -> tuple[list[Report], dict[str, Any]]:
    """Keep ``n`` of ``reports`` (all when there are no more than ``n``), in their input order.

    Returns:
        The kept reports and counts for the stage summary: ``{from, kept, strata}``.
    """
    groups: dict[tuple[str, str], list[Report]] = defaultdict(list)
    for r in reports:
        groups[stratum(r)].append(r)
    if n >= len(reports):
        keep = {r.id for r in reports}
    else:
        share = quotas({k: len(v) for k, v in groups.items()}, n)
        keep = {r.id for k, rs in groups.items() for r in sorted(rs, key=lambda r: _rank(seed, r.id))[:share[k]]}
    kept = [r for r in reports if r.id in keep]
    return kept, {"from": len(reports), "kept": len(kept), "strata": len(groups)}
