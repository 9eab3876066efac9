"""Judges for the label audit: the paper's 1-5 LLM synonymy judge, and an honest offline stand-in.

Both take ``[(query_a_text, query_b_text), ...]`` and return one :class:`Judgement` per pair, in
order, never raising per pair: an LLM answer that cannot be parsed (even after one re-ask) is
kept as a judgement with ``score=None`` and the ``error``/``raw`` answer, so nothing is lost.

The ``rules`` judge is NOT an LLM and not a human: it scores finance-fact agreement (companies,
stock codes, periods, metrics, numbers, and the figures of the queries' source texts, compared with
:mod:`fincprg.finance.compare`, the mining veto's own comparison) plus character-bigram overlap.
It shares ideas with the offline lexical reranker, so its agreement with that reranker overstates
label quality; every output it writes says ``judge: rules``.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from fincprg.config import LLMConfig

log = logging.getLogger(__name__)

RULES_NOTE = ("rule-based stand-in (finance-fact agreement + character overlap), not an LLM or a human; "
              "it resembles the offline lexical reranker and shares the mining veto's fact comparison, so its agreement "
              "overstates label quality")


@dataclass(frozen=True)
class Judgement:
    """One judge verdict on a pair: ``score`` 1-5, or ``None`` with ``error`` when the judge failed."""

    score: int | None
    reason: str = ""
    judge: str = "rules"
    error: str | None = None
    raw: str | None = None
    meta: dict[str, Any] | None = None


class Judge(Protocol):
    name: str

    def judge(self, pairs: list[tuple[str, str]]) -> list[Judgement]: ...


def _bigrams(text: str) -> set[str]:
    chars = [c for c in text if not c.isspace()]
    return {a + b for a, b in zip(chars, chars[1:])} or set(chars)


def char_overlap(a: str, b: str) -> float:
    """Jaccard overlap of character bigrams (characters for one-character texts)."""
    x, y = _bigrams(a), _bigrams(b)
    return len(x & y) / len(x | y) if x | y else 1.0


class RulesJudge:
    """Offline 1-5 synonymy scorer; see the module docstring for what it is and is not."""

    name = "rules"

    def _one(self, a: str, b: str, sa: str | None = None, sb: str | None = None) -> Judgement:
        from fincprg.finance import extract
        from fincprg.finance.compare import fact_conflicts, source_conflict

        fa, fb = extract(a), extract(b)
        # the mining veto's own comparison (fincprg.finance.compare): both read facts the same way
        found = fact_conflicts(fa, fb, text_a=a, text_b=b)
        conflicts = [c for c in found if c != "metric"] + [s for s in [source_conflict(fa, fb, sa, sb)] if s]
        overlap = char_overlap(a, b)
        if conflicts:
            return Judgement(1, "; ".join(conflicts), self.name, meta={"overlap": round(overlap, 4)})
        if "metric" in found:
            return Judgement(2, "different metrics", self.name, meta={"overlap": round(overlap, 4)})
        # Shared facts raise the floor: same metric (and entity/period when named) is at least "partly related".
        score = 1 + sum(overlap >= t for t in (0.2, 0.4, 0.6, 0.8))
        shared = bool(fa.metrics & fb.metrics)
        if shared and score < 3:
            score = 3
        reason = f"character-bigram overlap {overlap:.2f}" + ("; same metric" if shared else "")
        return Judgement(score, reason, self.name, meta={"overlap": round(overlap, 4)})

    def judge(self, pairs: list[tuple[str, str]], sources: list[tuple[str | None, str | None]] | None = None
              ) -> list[Judgement]:
        """Judge ``pairs``; ``sources`` (the texts each query was generated from, aligned) adds the check
        that two questions' sources give the same figures (``source_numbers``/``source_metrics``)."""
        srcs = sources or [(None, None)] * len(pairs)
        return [self._one(a, b, sa, sb) for (a, b), (sa, sb) in zip(pairs, srcs, strict=True)]


def parse_verdict(text: str | None) -> tuple[int | None, str, str | None]:
    """``(score, reason, error)`` from an LLM answer ``{"score": 1-5, "reason": "..."}``."""
    from fincprg.llm import JSONParseError, parse_json

    try:
        obj = parse_json(text)
    except JSONParseError as e:
        return None, "", f"unparseable answer: {e}"
    if isinstance(obj, list) and len(obj) == 1:
        obj = obj[0]
    if not isinstance(obj, dict) or "score" not in obj:
        return None, "", 'answer has no "score" field'
    raw = obj["score"]
    try:
        score = int(float(raw))
    except (TypeError, ValueError):
        return None, "", f"score {raw!r} is not a number"
    if float(raw) != score or not 1 <= score <= 5:
        return None, "", f"score {raw!r} is not an integer from 1 to 5"
    return score, str(obj.get("reason") or ""), None


class LLMJudge:
    """The paper's 1-5 synonymy prompt (``prompts/synonymy_judge.<lang>.j2``) through :class:`LLMClient`."""

    name = "llm"

    def __init__(self, cfg: LLMConfig, cache_dir: Path, *, language: str = "zh", reask: int = 1,
                 progress: bool = True) -> None:
        from fincprg.llm import LLMClient, load_prompt

        self.client = LLMClient(cfg, cache_dir)
        self.prompt = load_prompt("synonymy_judge", language)
        self.reask = reask
        self.progress = progress

    @property
    def label(self) -> str:
        return f"llm:{self.client.cfg.model}"

    def judge(self, pairs: list[tuple[str, str]]) -> list[Judgement]:
        convs = [self.prompt.render(query_a=a, query_b=b) for a, b in pairs]
        out: list[Judgement | None] = [None] * len(pairs)
        pending = list(range(len(pairs)))
        first = list(convs)  # each pair's own question: a valid re-ask is cached under it too
        meta = {"model": self.client.cfg.model, "template": self.prompt.id, "version": self.prompt.version}
        for attempt in range(self.reask + 1):
            # only a parseable verdict is cached: an unparseable one is asked again on the next run
            results = self.client.chat_many([convs[i] for i in pending], desc="audit judge",
                                            progress=self.progress,
                                            accept=lambda _, res: parse_verdict(res.text)[2] is None)
            retry = []
            for i, res in zip(pending, results):
                if res.text is None:  # transport/API failure: re-asking the same thing rarely helps
                    out[i] = Judgement(None, "", self.label, error=res.error or "no answer", meta=meta)
                    continue
                score, reason, err = parse_verdict(res.text)
                if err is None:
                    out[i] = Judgement(score, reason, self.label, raw=res.text,
                                       meta={**meta, "reasked": attempt > 0})
                    if attempt > 0:
                        self.client.remember(first[i], res)
                elif attempt < self.reask:
                    follow = self.prompt.render_block("reask", error=err)
                    convs[i] = [*convs[i], {"role": "assistant", "content": res.text},
                                {"role": "user", "content": follow}]
                    retry.append(i)
                else:
                    out[i] = Judgement(None, "", self.label, error=err, raw=res.text, meta=meta)
            pending = retry
            if not pending:
                break
        self.client.close()
        log.info("audit judge: %s", {k: v for k, v in self.client.stats.items()
                                     if k in ("requests", "cache_hits", "failures", "cost_usd")})
        return [j if j is not None else Judgement(None, "", self.label, error="not judged") for j in out]
