"""cards/borda with a cross-encoder scorer and hier with dense and cross-encoder stages, on tiny random models
saved to a temp dir. Random weights rank arbitrarily, so each test checks the order the model itself implies
(its scores computed separately) rather than relevance."""
from __future__ import annotations

import numpy as np
import pytest

from fincprg.evaluate.harness import run_eval
from fincprg.evaluate.retrievers.base import ranked
from fincprg.evaluate.retrievers.fusion import rrf_scores
from tests.unit import _eval_fixture as fx
from tests.unit.test_eval_dense import _tiny_cross_encoder
from tests.unit.test_model_prompts import _tiny

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, str]:
    root = tmp_path_factory.mktemp("real_scorers")
    return {"ce": _tiny_cross_encoder(root / "ce"), "bi": _tiny(root / "bi", None)}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return fx.write_beir(tmp_path_factory.mktemp("beir"))


def _ce(model: str, pairs: list[tuple[str, str]]) -> list[float]:
    from sentence_transformers import CrossEncoder

    return [float(s) for s in CrossEncoder(model, device="cpu").predict(pairs, activation_fn=None)]


def _text(d: str) -> str:
    from fincprg.evaluate.retrievers.base import doc_text

    return doc_text(fx.corpus()[d])


def test_cards_with_a_cross_encoder_fuses_its_ranks_with_bm25(models, folder):
    spec = f"cards:ce:{models['ce']}"
    res = run_eval(folder, ["bm25", spec], subsets=["all"], show_progress=False, keep_runs=True)
    assert not res.failures
    for q, text in fx.queries().items():
        first = ranked(res.runs["bm25"][q])
        ce = dict(zip(first, _ce(models["ce"], [(text, _text(d)) for d in first])))
        by_ce = {d: ce[d] - i * 1e-9 for i, d in enumerate(first)}
        want = rrf_scores([{d: -float(i) for i, d in enumerate(first)}, by_ce])
        assert ranked(res.runs[spec][q]) == ranked(want)[:len(res.runs[spec][q])]


def test_borda_with_a_cross_encoder_puts_its_best_candidate_first(models, folder):
    spec = f"borda:ce:{models['ce']}"
    res = run_eval(folder, ["bm25", spec], subsets=["all"], show_progress=False, keep_runs=True)
    assert not res.failures
    for q, text in fx.queries().items():
        pool = ranked(res.runs["bm25"][q])[:30]
        ce = _ce(models["ce"], [(text, _text(d)) for d in pool])
        # a pointwise scorer's best candidate wins every group it is in: Borda mean 1 (a random model may tie
        # two candidates, so the winner is checked by its score, not its id)
        assert ce[pool.index(ranked(res.runs[spec][q])[0])] == pytest.approx(max(ce), abs=1e-5)


def test_hier_with_a_dense_report_stage_keeps_the_reports_the_model_ranks_first(models, folder):
    from fincprg.evaluate.retrievers.dense import Dense

    spec = f"hier:1,docs=dense:{models['bi']},passages=dense:{models['bi']}"
    res = run_eval(folder, [spec], subsets=["all"], show_progress=False, keep_runs=True)
    assert not res.failures
    reports = {r: {"title": fx.REPORTS[r][0], "text": fx.REPORTS[r][1][0]} for r in fx.REPORTS}
    d = Dense(models["bi"], show_progress=False)
    d.fit(reports)
    top = {q: ranked(run)[0] for q, run in d.search(fx.queries(), 1).items()}
    for q, docs in res.runs[spec].items():
        assert {x.split("#")[0] for x in docs} == {top[q]} and len(docs) == 3


def test_hier_passage_cross_encoder_orders_the_passages_it_reranks(models, folder):
    spec = f"hier:2,docs-ce={models['ce']},passages-ce={models['ce']}"
    res = run_eval(folder, ["hier:2", spec], subsets=["all"], show_progress=False, keep_runs=True)
    assert not res.failures
    for q, text in fx.queries().items():
        order = ranked(res.runs[spec][q])
        reports = {d.split("#")[0] for d in order}
        assert 1 <= len(reports) <= 2 and len(order) == 3 * len(reports)  # every passage of the kept reports
        ce = _ce(models["ce"], [(text, _text(d)) for d in order])
        assert ce == sorted(ce, reverse=True)
