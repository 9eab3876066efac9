"""verify's round trip (fincprg.verify.roundtrip.RoundTrip: the floored, pruned BM25 search) gives the verdicts of
the brute-force one, verdict for verdict: every query scored against every passage (``search_exhaustive``), the
whole top ``depth`` judged."""
from __future__ import annotations

import random
from types import SimpleNamespace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fincprg.verify.roundtrip import CharBM25, RoundTrip, judge_ranking

ALPHABET = "营收利润增长公司毛利率下降风险"  # a small alphabet: shared bigrams, near-equal passages, ties


class _Src:
    """The part of verify's sources the round trip reads: passages, their reports, a topic's reports."""

    def __init__(self, passages: list, reports: dict, topics: dict):
        self.passages, self.reports, self.topics = passages, reports, topics
        self.passage_at = {p.id: i for i, p in enumerate(passages)}

    def passage(self, pid: str):
        return self.passages[self.passage_at[pid]] if pid in self.passage_at else None

    def topic_reports(self, topic: str) -> list:
        return [self.reports[r] for r in self.topics.get(topic, ())]


def _brute(rt: RoundTrip, asks: list) -> list:
    """Today's reference: exhaustive scores, the whole top depth judged (no floors, no pruning)."""
    cfg = rt.cfg
    idx, scores = CharBM25(rt.docs).search_exhaustive([q.text for q in asks], max(cfg.top_k, 10 * cfg.ambiguous_reports))
    return [judge_ranking(idx[r], scores[r], rt.target(q), rt.report_of, k=cfg.top_k, n=cfg.ambiguous_reports,
                          margin=cfg.ambiguous_margin) for r, q in enumerate(asks)]


def _corpus(rng: random.Random, n_reports: int) -> _Src:
    text = lambda lo, hi: "".join(rng.choice(ALPHABET) for _ in range(rng.randint(lo, hi)))  # noqa: E731
    companies = ["甲", "乙", "丙", "丁"]
    reports, passages = {}, []
    for r in range(n_reports):
        rid = f"r{r}"
        reports[rid] = SimpleNamespace(id=rid, title=text(2, 8), companies=frozenset(rng.sample(companies, rng.randint(0, 2))))
        for j in range(rng.randint(1, 4)):
            body = text(5, 40) if rng.random() < 0.8 or not passages else passages[rng.randrange(len(passages))].text
            passages.append(SimpleNamespace(id=f"{rid}-p{j}", report_id=rid, text=body))
    topics = {f"t{i}": rng.sample(sorted(reports), rng.randint(1, min(3, n_reports))) for i in range(3)}
    return _Src(passages, reports, topics)


def _asks(rng: random.Random, src: _Src, n: int) -> list:
    asks = []
    for i in range(n):
        if rng.random() < 0.75:
            p = rng.choice(src.passages)
            a = rng.randrange(len(p.text))
            text = p.text[a:a + rng.randint(2, 12)] if rng.random() < 0.8 else p.text
            asks.append(SimpleNamespace(id=f"q{i}", level=rng.choice(["sentence", "passage"]), text=text, source=p.id))
        else:
            t = rng.choice(sorted(src.topics))
            body = src.topic_reports(t)[0].title
            asks.append(SimpleNamespace(id=f"q{i}", level=rng.choice(["topic", "intent"]), text=body, source=t))
    asks.append(SimpleNamespace(id="none", level="passage", text="鑫鑫 xyz", source=src.passages[0].id))
    return asks


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10 ** 6), n_reports=st.integers(1, 40), top_k=st.integers(1, 6),
       ambiguous=st.integers(1, 4), margin=st.sampled_from([0.0, 0.05, 0.3]), batch=st.sampled_from([1, 7, 128]))
def test_round_trip_verdicts_are_the_brute_force_ones(seed, n_reports, top_k, ambiguous, margin, batch):
    rng = random.Random(seed)
    src = _corpus(rng, n_reports)
    cfg = SimpleNamespace(top_k=top_k, ambiguous_reports=ambiguous, ambiguous_margin=margin, batch_size=batch)
    rt = RoundTrip(src, cfg)
    asks = _asks(rng, src, rng.randint(1, 30))
    assert rt(asks) == _brute(rt, asks)


def test_the_comparison_catches_a_floor_set_too_high(monkeypatch):
    """Floors above the own passage's score (pruning that drops passages the verdict reads) give verdicts the
    brute force does not: the comparison above can fail."""
    from fincprg.verify import roundtrip

    real = roundtrip.own_floors
    cfg = SimpleNamespace(top_k=3, ambiguous_reports=2, ambiguous_margin=0.3, batch_size=128)
    cases = []
    for seed in range(5):
        rng = random.Random(seed)
        src = _corpus(rng, 30)
        asks = _asks(rng, src, 30)
        cases.append((RoundTrip(src, cfg), asks, _brute(RoundTrip(src, cfg), asks)))
    assert all(rt(asks) == want for rt, asks, want in cases)
    monkeypatch.setattr(roundtrip, "own_floors", lambda *a: real(*a) * 1.5)
    assert any(rt(asks) != want for rt, asks, want in cases)
