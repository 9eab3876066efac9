"""A dev split held out by report from the training labels (``fincprg train --dev-fraction``).

The dev queries are the build's own generated queries on reports that training never sees (their
passages are neither positives nor negatives). The dev score picks the checkpoint and the merge
weight; it is never a benchmark, so the figures a user reports still come from ``--eval-on``.
"""
from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field, replace

from fincprg.errors import InputError
from fincprg.train.data import Pairs

# a salt of its own, so the dev reports are not the export's test reports (which hash the report id too)
_SALT = "fincprg-train-dev"


def dev_share(report_id: str) -> float:
    """A fixed number in [0, 1) per report: a report is dev when it is below the fraction."""
    return int(hashlib.sha1(f"{_SALT}:{report_id}".encode("utf-8")).hexdigest()[:12], 16) / 16 ** 12


@dataclass
class Dev:
    """What sentence-transformers' ``InformationRetrievalEvaluator`` reads: queries, corpus and labels."""

    queries: dict[str, str] = field(default_factory=dict)
    corpus: dict[str, str] = field(default_factory=dict)
    relevant: dict[str, set[str]] = field(default_factory=dict)
    reports: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.relevant)


def split_dev(pairs: Pairs, fraction: float, *, max_queries: int = 300, seed: int = 42) -> tuple[Pairs, Dev]:
    """(training pairs, dev) with about ``fraction`` of the reports held out.

    A query with any positive in a dev report is a dev query, and all of its pairs leave training (a
    mined label can join two reports). Dev reports' passages leave the negative pool. At least one
    report is held out, and at least one stays. ``max_queries`` caps the dev queries (a seeded sample),
    so that evaluating a checkpoint stays cheap on CPU.
    """
    if fraction <= 0:
        return pairs, Dev()
    reports = sorted({pairs.report_of[p] for p in pairs.pos_ids if p in pairs.report_of})
    if len(reports) < 2:
        raise InputError(f"--dev-fraction {fraction:g}: the training labels come from {len(reports)} report(s); "
                         "a dev split held out by report needs at least 2 (or pass --dev-fraction 0)")
    ranked = sorted(reports, key=dev_share)
    held = {r for r in reports if dev_share(r) < fraction} or {ranked[0]}
    if len(held) == len(reports):
        held.discard(ranked[-1])
    dev_q = {q for q, p in zip(pairs.queries, pairs.pos_ids) if pairs.report_of.get(p) in held}
    keep = [i for i, q in enumerate(pairs.queries) if q not in dev_q]
    if not keep:
        raise InputError(f"--dev-fraction {fraction:g} left no training pairs; lower it")
    train = replace(pairs, queries=[pairs.queries[i] for i in keep], positives=[pairs.positives[i] for i in keep],
                    pos_ids=[pairs.pos_ids[i] for i in keep],
                    pool={p: t for p, t in pairs.pool.items() if pairs.report_of.get(p) not in held})
    dev = Dev(corpus={p: t for p, t in pairs.pool.items() if pairs.report_of.get(p) in held}, reports=sorted(held))
    chosen = sorted(dev_q)
    random.Random(seed).shuffle(chosen)
    for n, q in enumerate(sorted(chosen[:max_queries])):
        qid = f"dev{n}"
        dev.queries[qid] = q
        dev.relevant[qid] = {p for p in pairs.known[q] if p in dev.corpus}
    return train, dev
