"""Audit inputs: locate a build, pick score intervals, and sample mined pairs per (level, interval).

Intervals are ``[lo, hi)`` except the top one, which also holds its upper edge (and anything above,
for scorers that can exceed 1). By default they are 0.02 wide with the mining threshold on an
edge, from ``mine.keep_min_score`` (pairs.jsonl holds nothing lower) up to 1.0. With the BGE
threshold 0.99 that reproduces the paper's eight intervals 0.99-1.00, 0.97-0.99, ..., 0.85-0.87;
with the lexical threshold 0.9 it gives 0.98-1.00, ..., 0.90-0.92 above the threshold and
0.88-0.90, 0.86-0.88, 0.85-0.86 below it. ``--intervals`` replaces them.
"""
from __future__ import annotations

import bisect
import math
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fincprg import layout as L
from fincprg.config import MineConfig
from fincprg.errors import InputError
from fincprg.io import read_jsonl

STEP = 0.02


@dataclass(frozen=True)
class Interval:
    lo: float
    hi: float
    top: bool = False  # the top interval includes hi

    @property
    def label(self) -> str:
        return f"{self.lo:.2f}-{self.hi:.2f}" if (self.lo * 100).is_integer() and (self.hi * 100).is_integer() \
            else f"{self.lo:g}-{self.hi:g}"

    def holds(self, score: float) -> bool:
        return self.lo <= score and (score < self.hi or self.top)


@dataclass(frozen=True)
class BuildPaths:
    out: Path  # the build folder (holds mine/, generate/, topics/, dataset/)
    audit: Path  # where the audit writes


def locate(target: Path) -> BuildPaths:
    """Accept a build's OUT folder or its dataset folder (OUT/dataset): the audit goes to OUT/audit."""
    target = Path(target)
    for out in (target, target.parent):
        build = L.Build(out)
        if build.path(L.MINE, L.PAIRS).is_file():
            return BuildPaths(out, build.audit_dir)
    raise InputError(f"{target} holds no mine/pairs.jsonl (nor does its parent); give a build's output "
                     "folder (after the mine stage) or its dataset/ folder")


def _round(x: float) -> float:
    return round(x, 6)


def default_intervals(threshold: float, keep_min: float = 0.85, top: float = 1.0) -> list[Interval]:
    """0.02-wide intervals with ``threshold`` on an edge, from min(keep_min, threshold) to ``top``.

    When that span exceeds 0.16 (8 intervals), eight equal intervals are used instead.
    """
    lo = min(keep_min, threshold)
    if top - lo > 8 * STEP + 1e-9:
        step = (top - lo) / 8
        edges = [_round(lo + k * step) for k in range(9)]
    else:
        edges = {_round(lo), _round(top)}
        k_lo, k_hi = math.floor((lo - threshold) / STEP) - 1, math.ceil((top - threshold) / STEP) + 1
        edges |= {_round(threshold + k * STEP) for k in range(k_lo, k_hi + 1)
                  if lo + 1e-9 < threshold + k * STEP < top - 1e-9}
        edges = sorted(edges)
    return intervals_from_edges(edges)


def intervals_from_edges(edges: list[float]) -> list[Interval]:
    """Intervals between sorted edges, highest first; the last edge is the top."""
    e = sorted(set(edges))
    if len(e) < 2:
        raise InputError("need at least two interval edges")
    n = len(e) - 1
    return [Interval(e[i], e[i + 1], top=(i == n - 1)) for i in reversed(range(n))]


def parse_intervals(spec: str) -> list[Interval]:
    """``"0.99,0.97,...,0.85"``: lower edges (any order); the top edge is 1.0 unless a larger edge
    (e.g. ``1.0``) is given explicitly."""
    try:
        vals = sorted({_round(float(x)) for x in spec.replace(" ", "").split(",") if x})
    except ValueError:
        raise InputError(f"--intervals {spec!r}: give comma-separated lower edges like 0.99,0.97,0.95") from None
    if not vals:
        raise InputError("--intervals is empty")
    if any(v < 0 for v in vals):
        raise InputError(f"--intervals {spec!r}: edges must be >= 0")
    if vals[-1] < 1.0:
        vals.append(1.0)
    return intervals_from_edges(vals)


def interval_of(intervals: list[Interval], score: float) -> Interval | None:
    """The interval holding ``score`` (intervals as returned above: highest first)."""
    asc = intervals[::-1]
    i = bisect.bisect_right([iv.lo for iv in asc], score) - 1
    if i < 0:
        return None
    iv = asc[i]
    return iv if iv.holds(score) else None


def read_threshold(out: Path) -> tuple[float | None, float, str]:
    """(threshold, keep_min_score, source): what the mine stage used, as its manifest records it (a backend's
    default threshold when none was configured; see :meth:`fincprg.layout.Build.used`)."""
    build = L.Build(out)
    used, manifest = build.used(L.MINE), build.manifest(L.MINE) or {}
    configured = (manifest.get("config") or {}).get(L.MINE) or {}
    keep_min = float(used.get("keep_min_score", configured.get("keep_min_score", MineConfig().keep_min_score)))
    if used.get("threshold") is None:
        return None, keep_min, "none"
    # a build made before manifests recorded "used" had it in the histogram
    source = L.MANIFEST if manifest.get("used") else L.HISTOGRAM
    return float(used["threshold"]), keep_min, f"{L.STAGE_DIRS[L.MINE]}/{source}"


def query_texts(out: Path) -> dict[str, str]:
    """Query id -> text from generate/ and topics/ queries, else the dataset's queries.jsonl."""
    texts: dict[str, str] = {}
    build = L.Build(out)
    for p in (build.path(L.GENERATE, L.QUERIES), build.path(L.TOPICS, L.QUERIES)):
        if p.is_file():
            texts.update((r["id"], r["text"]) for r in read_jsonl(p))
    ds = build.dataset.queries
    if ds.is_file():
        for r in read_jsonl(ds):
            texts.setdefault(r["_id"], r.get("text", ""))
    return texts


def pair_key(space: str, a: str, b: str) -> str:
    return f"{space}|{a}|{b}"


@dataclass
class Stratum:
    """Pairs of one (level, interval): population counts and a reservoir sample."""

    above: int = 0
    below: int = 0
    seen: int = 0
    sample: list[dict[str, Any]] = field(default_factory=list)


def sample_pairs(pairs: Path | list[dict[str, Any]], intervals: list[Interval], threshold: float,
                 per_interval: int, seed: int) -> dict[tuple[str, str], Stratum]:
    """Reservoir-sample up to ``per_interval`` pairs per (space, interval label), streaming the file.

    The result is deterministic for a given file, seed and intervals; population counts cover
    every pair in an interval, split at the threshold (for stratified rate estimates).
    """
    strata: dict[tuple[str, str], Stratum] = {}
    rngs: dict[tuple[str, str], random.Random] = {}
    rows = read_jsonl(pairs) if isinstance(pairs, Path) else iter(pairs)
    for row in rows:
        score = float(row["score"])
        iv = interval_of(intervals, score)
        if iv is None:
            continue
        key = (row["space"], iv.label)
        st = strata.get(key)
        if st is None:
            st = strata[key] = Stratum()
            rngs[key] = random.Random(f"{seed}|{key[0]}|{key[1]}")
        if score >= threshold:
            st.above += 1
        else:
            st.below += 1
        item = {"space": row["space"], "query_a": row["query_a"], "query_b": row["query_b"], "score": score,
                "accepted": bool(row.get("accepted")), "veto": row.get("veto"), "interval": iv.label}
        if st.seen < per_interval:
            st.sample.append(item)
        else:
            j = rngs[key].randrange(st.seen + 1)
            if j < per_interval:
                st.sample[j] = item
        st.seen += 1
    for st in strata.values():  # file order of the kept items must not leak into the review order
        st.sample.sort(key=lambda r: (-r["score"], r["query_a"], r["query_b"]))
    return strata
