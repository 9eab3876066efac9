"""The query mix of ``fincprg train --mix`` (issue 49): which kinds of (query, passage) pairs a run trains on.

- ``generated``: the build's labels of ``--subset`` (every level with ``--subset all``: sentence, passage, topic...).
- ``titles``: report-level pairs, a training report's title → each of its passages. The passages are bare (no
  title): the title inside them would answer the query verbatim, and the student would learn to copy. Only titled
  training reports give one; the dev split's reports and the export's test reports never do (they are not in
  the training pool).
- ``crops``: cropped-sentence pairs, a sentence → its passage with that sentence removed (the inverse cloze task
  of ORQA; Contriever's cropping): the passage must be found by its context, not by the sentence's own words.

Templates ask about one sentence; human titles and summaries ask about a report. The mix is a switch per kind so
that an ablation can tell what each one adds, and the run records how many pairs of each it trained on.
"""
from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

from fincprg import layout as L
from fincprg.errors import ConfigError, InputError
from fincprg.train.data import Pairs

KINDS = ("generated", "titles", "crops")
MIN_CROP_CHARS = 8  # a shorter "sentence" (a heading, a figure) says too little to find its passage by


def parse_mix(text: str) -> tuple[str, ...]:
    """``--mix`` as given (``generated,titles``) -> the kinds, in :data:`KINDS` order."""
    kinds = {k.strip() for k in text.split(",") if k.strip()}
    bad = sorted(kinds - set(KINDS))
    if bad or not kinds:
        raise ConfigError(f"--mix {text!r}: give one or more of {', '.join(KINDS)}, comma-separated "
                          f"(e.g. generated,titles){'; unknown: ' + ', '.join(bad) if bad else ''}")
    return tuple(k for k in KINDS if k in kinds)


def title_pairs(pairs: Pairs) -> list[tuple[str, str, str]]:
    """(title, passage id, bare passage) for every passage of a titled training report."""
    out = []
    for pid in sorted(pairs.pool):
        title = pairs.titles.get(pairs.report_of.get(pid, ""), "")
        text = pairs.bare.get(pid, "")
        if title and text:
            out.append((title, pid, text))
    return out


def crop_pairs(pairs: Pairs, seed: int) -> list[tuple[str, str, str]]:
    """(sentence, passage id, title + the passage without it): one seeded sentence per training passage that has
    two or more sentences."""
    from fincprg.chunking.reflow import sentence_spans

    rng = random.Random(seed)
    out = []
    for pid in sorted(pairs.pool):
        text = pairs.bare.get(pid, "")
        spans = [(a, b) for a, b in sentence_spans(text) if len(text[a:b].strip()) >= MIN_CROP_CHARS]
        if len(spans) < 2:  # a one-sentence passage would be empty without it
            continue
        a, b = spans[rng.randrange(len(spans))]
        rest = (text[:a] + text[b:]).strip()
        title = pairs.titles.get(pairs.report_of.get(pid, ""), "")
        out.append((text[a:b].strip(), pid, f"{title}\n{rest}" if title else rest))
    return out


def mix_pairs(pairs: Pairs, kinds: tuple[str, ...], *, seed: int = 42) -> Pairs:
    """``pairs`` (the generated labels, dev reports already out) with the other kinds added, shuffled by ``seed``.

    Raises:
        InputError: ``titles`` on a corpus without report titles, or no pair of any kind.
    """
    out = pairs.select(list(range(len(pairs))) if "generated" in kinds else [])  # a copy: the lists grow below
    out.known = {q: set(v) for q, v in pairs.known.items()}
    out.plain, out.crops = set(pairs.plain), set(pairs.crops)
    extra: list[tuple[str, str, str]] = []
    if "titles" in kinds:
        titled = title_pairs(pairs)
        if not titled:
            raise InputError("--mix titles: no training report has a title (corpus.jsonl's 'title' is empty); drop "
                             "titles from --mix, or build from reports with titles")
        out.plain |= {q for q, _, _ in titled}
        extra += titled
    if "crops" in kinds:
        cropped = crop_pairs(pairs, seed)
        out.crops |= {q for q, _, _ in cropped}
        extra += cropped
    for q, pid, text in extra:
        out.queries.append(q)
        out.pos_ids.append(pid)
        out.positives.append(text)
        out.known.setdefault(q, set()).add(pid)
    if not out.queries:
        raise InputError(f"--mix {','.join(kinds)} gave no training pairs")
    if not extra:
        return out  # the generated labels alone keep load_pairs' seeded order (earlier runs' samples)
    order = list(range(len(out.queries)))
    random.Random(seed).shuffle(order)
    return out.select(order)


def generated_levels(dataset: Path, pairs: Pairs) -> dict[str, int]:
    """Generated pairs per query level (queries.jsonl's ``level``): what ``--subset`` let in."""
    level: dict[str, str] = {}
    path = L.Dataset(Path(dataset)).queries
    if path.exists():
        with open(path, encoding="utf-8") as f:
            for line in f:
                if line.strip():
                    row = json.loads(line)
                    level.setdefault(str(row.get("text", "")).strip(), str(row.get("level") or "unknown"))
    gen = [q for q in pairs.queries if q not in pairs.plain and q not in pairs.crops]
    return dict(sorted(Counter(level.get(q, "unknown") for q in gen).items()))


def record(dataset: Path, pairs: Pairs, kinds: tuple[str, ...]) -> dict[str, object]:
    """The summary's ``mix``: the kinds asked, pairs of each kind trained on, and the generated ones by level."""
    return {"kinds": list(kinds), "pairs": pairs.kinds(), "levels": generated_levels(dataset, pairs)}


def shuffled_positives(pairs: Pairs, seed: int) -> Pairs:
    """The control run of a contrastive loss: each query paired with another pair's positive (a seeded
    permutation), so the labels carry nothing and what the run loses is what the optimiser alone costs."""
    from dataclasses import replace

    order = list(range(len(pairs)))
    random.Random(seed + 1).shuffle(order)
    return replace(pairs, positives=[pairs.positives[i] for i in order], pos_ids=[pairs.pos_ids[i] for i in order])
