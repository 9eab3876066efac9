"""A dev split held out by report from the training labels (``fincprg train --dev-fraction``), scored on
human-written proxies (issue 49).

The dev queries are the held-out reports' own titles, each labelled with every passage of its report; the
passages are shown without their title (which would answer the query verbatim). Generated queries never choose:
on issue 37's runs the dev split of generated queries rose (0.906 → 0.922) while every human benchmark fell, so
it rewarded the very drift that hurt. Only titled reports are held out; on a corpus without titles nothing is
held out, no checkpoint is chosen (the last step is kept) and ``--merge-base auto`` falls back to a fixed weight,
and the run record says so (:data:`NO_PROXY`). The dev score is never a benchmark: the figures a user reports
still come from ``--eval-on``.
"""
from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field, replace

from fincprg.errors import InputError
from fincprg.train.data import Pairs

# a salt of its own, so the dev reports are not the export's test reports (which hash the report id too)
_SALT = "fincprg-train-dev"
PROXY = "titles"  # what the dev queries are: the held-out reports' titles -> their passages
NO_PROXY = "none: the training reports have no titles, so no human-written dev query exists"


def dev_share(report_id: str) -> float:
    """A fixed number in [0, 1) per report: a report is dev when it is below the fraction."""
    return int(hashlib.sha1(f"{_SALT}:{report_id}".encode("utf-8")).hexdigest()[:12], 16) / 16 ** 12


@dataclass
class Dev:
    """What sentence-transformers' ``InformationRetrievalEvaluator`` reads: queries, corpus and labels; ``proxy``
    says what the queries are (:data:`PROXY`, or :data:`NO_PROXY` when there are none)."""

    queries: dict[str, str] = field(default_factory=dict)
    corpus: dict[str, str] = field(default_factory=dict)
    relevant: dict[str, set[str]] = field(default_factory=dict)
    reports: list[str] = field(default_factory=list)
    proxy: str = PROXY

    def __bool__(self) -> bool:
        return bool(self.relevant)


def split_dev(pairs: Pairs, fraction: float, *, max_queries: int = 300, seed: int = 42) -> tuple[Pairs, Dev]:
    """(training pairs, dev) with about ``fraction`` of the titled training reports held out.

    A query with any positive in a dev report leaves training with all its pairs (a mined label can join two
    reports), and dev reports' passages leave the negative pool. At least one titled report is held out, and at
    least one report stays. ``max_queries`` caps the dev titles (a seeded sample), so that evaluating a checkpoint
    stays cheap on CPU.
    """
    if fraction <= 0:
        return pairs, Dev()
    reports = sorted({pairs.report_of[p] for p in pairs.pool if p in pairs.report_of})
    titled = [r for r in reports if pairs.titles.get(r)]
    if not titled:
        return pairs, Dev(proxy=NO_PROXY)
    if len(reports) < 2:
        raise InputError(f"--dev-fraction {fraction:g}: the training labels come from {len(reports)} report(s); "
                         "a dev split held out by report needs at least 2 (or pass --dev-fraction 0)")
    ranked = sorted(titled, key=dev_share)
    held = {r for r in titled if dev_share(r) < fraction} or {ranked[0]}
    if len(held) == len(reports):
        held.discard(ranked[-1])
    dev_q = {q for q, p in zip(pairs.queries, pairs.pos_ids) if pairs.report_of.get(p) in held}
    dev_q |= {q for q, known in pairs.known.items() if any(pairs.report_of.get(p) in held for p in known)}
    keep = [i for i, q in enumerate(pairs.queries) if q not in dev_q]
    if not keep:
        raise InputError(f"--dev-fraction {fraction:g} left no training pairs; lower it")
    train = replace(pairs.select(keep), pool={p: t for p, t in pairs.pool.items() if pairs.report_of.get(p) not in held})
    return train, _title_dev(pairs, held, max_queries, seed)


def _title_dev(pairs: Pairs, held: set[str], max_queries: int, seed: int) -> Dev:
    """Each held-out report's title -> every passage of that report (reports sharing a title share the query)."""
    dev = Dev(corpus={p: pairs.bare.get(p) or pairs.pool[p] for p in sorted(pairs.pool)
                      if pairs.report_of.get(p) in held}, reports=sorted(held))
    by_title: dict[str, set[str]] = {}
    for p in dev.corpus:
        by_title.setdefault(pairs.titles[pairs.report_of[p]], set()).add(p)
    chosen = sorted(by_title)
    random.Random(seed).shuffle(chosen)
    for n, title in enumerate(sorted(chosen[:max_queries])):
        dev.queries[f"dev{n}"] = title
        dev.relevant[f"dev{n}"] = by_title[title]
    return dev
