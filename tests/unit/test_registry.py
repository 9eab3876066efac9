"""The model-kind registries (fincprg/registry.py): a user's backend registered from Python is built by the
pipeline, config errors list what is registered, and the eval help is the retriever registry."""
from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

import fincprg
from fincprg.config import RayConfig, load_config
from fincprg.errors import ConfigError
from fincprg.registry import CLASSIFIERS, EMBEDDERS, PAIR_SCORERS, RETRIEVERS


def toy_score(a: str, b: str) -> float:
    """Share of a's distinct characters found in b, squeezed into [0.9, 1]: every pair clears keep_min_score
    (so every scored pair is written) and the values are nothing the lexical scorer would give."""
    return round(0.9 + 0.1 * len(set(a) & set(b)) / max(len(set(a)), 1), 6)


class ToyScorer:
    name, default_threshold = "toy", 0.5  # the registry's threshold (0.97) must win over this

    def __init__(self) -> None:
        self.scored = 0

    def score(self, pairs: list[tuple[str, str]]) -> list[float]:
        self.scored += len(pairs)
        return [toy_score(a, b) for a, b in pairs]


@pytest.fixture
def toy():
    built: list[ToyScorer] = []

    def factory(**kw):
        built.append(ToyScorer())
        return built[-1]

    fincprg.register_pair_scorer("toy", factory, threshold=0.97, description="share of shared characters (a test)")
    yield built
    PAIR_SCORERS.unregister("toy")


def _jsonl(path):
    return [json.loads(x) for x in path.read_text("utf-8").splitlines() if x.strip()]


def test_a_pair_scorer_registered_from_python_mines_the_sample(toy, sample_corpus, tmp_path):
    from fincprg.pipeline.runner import run_pipeline

    cfg = load_config(fincprg.bundled_pipeline("offline"), ["mine.reranker.backend=toy", "topics.viz=none"])
    run_pipeline(sample_corpus, tmp_path, cfg, upto="mine", show_progress=False)
    assert len(toy) == 1 and toy[0].scored > 0  # one instance, every space (no lexical hand-over to coverage)
    counts = json.loads((tmp_path / "mine" / "manifest.json").read_text("utf-8"))["counts"]
    assert counts["reranker"] == "toy" and counts["threshold"] == 0.97  # the entry's default threshold
    text = {q["id"]: q["text"] for q in _jsonl(tmp_path / "generate" / "queries.jsonl")}
    pairs = _jsonl(tmp_path / "mine" / "pairs.jsonl")
    assert {p["space"] for p in pairs} >= {"sentence", "passage"}
    checked = [p for p in pairs if p["query_a"] in text and p["query_b"] in text]
    assert len(checked) > 50
    for p in checked:
        assert p["score"] == pytest.approx(toy_score(text[p["query_a"]], text[p["query_b"]]), abs=1e-6), p
    assert all(p["score"] >= 0.97 for p in pairs if p["accepted"])


def test_an_unknown_backend_is_a_config_error_listing_the_registered_ones(toy):
    with pytest.raises(ConfigError) as e:
        load_config(None, ["mine.reranker.backend=bge"])
    msg = str(e.value)
    assert "mine.reranker.backend" in msg and "'bge'" in msg and "register_pair_scorer" in msg
    for entry in PAIR_SCORERS:  # the built-ins and the user's own, each with its description
        assert f"{entry.name}: {entry.description}" in msg
    assert "toy" in PAIR_SCORERS.names() and load_config(None, ["mine.reranker.backend=toy"])
    for key, registry in (("topics.classifier.backend", CLASSIFIERS), ("topics.embedder.backend", EMBEDDERS),
                          ("mine.prefilter.embedder.backend", EMBEDDERS)):
        with pytest.raises(ConfigError, match=re.escape(key)) as e:
            load_config(None, [f"{key}=nope"])
        assert all(name in str(e.value) for name in registry.names())
    with pytest.raises(ConfigError, match="none"):  # negatives also take "none"
        load_config(None, ["export.negatives.reranker.backend=nope"])


def test_registering_twice_needs_replace(toy):
    with pytest.raises(ConfigError, match="registered already"):
        fincprg.register_pair_scorer("toy", lambda **kw: ToyScorer(), description="again")
    with pytest.raises(ConfigError, match="letters"):
        fincprg.register_pair_scorer("a:b", lambda **kw: ToyScorer(), description="bad name")
    entry = fincprg.register_pair_scorer("toy", lambda **kw: ToyScorer(), description="again", replace=True)
    assert PAIR_SCORERS.get("toy") is entry and PAIR_SCORERS.get("toy").description == "again"


def test_builtin_thresholds_match_their_scorers():
    from fincprg.mine.lexical import LexicalReranker
    from fincprg.models.rerankers import CrossEncoderBackend, FlagRerankerBackend

    assert PAIR_SCORERS.names()[0] == "lexical"  # the default is listed first (README table, errors)
    for name, cls in (("lexical", LexicalReranker), ("flag", FlagRerankerBackend),
                      ("cross-encoder", CrossEncoderBackend)):
        assert PAIR_SCORERS.get(name).threshold == cls.default_threshold
        assert PAIR_SCORERS.get(name).gpu is PAIR_SCORERS.get(name).needs_model  # the neural ones want a GPU


def test_ray_places_a_scorer_on_gpus_by_its_entry(toy, monkeypatch):
    from fincprg.mine.stage import ray_gpus
    from fincprg.pipeline import ray_engine

    class Cluster:
        @staticmethod
        def cluster_resources():
            return {"GPU": 2, "CPU": 8}

    monkeypatch.setattr(ray_engine, "connect", lambda cfg: Cluster)

    def gpus(backend: str, ray: RayConfig = RayConfig()) -> float:  # what the engine gives a mine actor
        cfg = load_config(fincprg.bundled_pipeline("offline"), [f"mine.reranker.backend={backend}"])
        return ray_engine.actor_gpus(ray, ray_gpus(cfg, ray))

    assert gpus("lexical") == 0.0
    assert gpus("flag") == 1.0
    assert gpus("toy") == 0.0  # registered with gpu=False
    fincprg.register_pair_scorer("toy", lambda **kw: ToyScorer(), gpu=True, description="on a GPU", replace=True)
    assert gpus("toy") == 1.0
    assert gpus("toy", RayConfig(mine_gpus_per_actor=0.5)) == 0.5


def test_the_card_describes_a_scorer_from_its_entry(toy):
    from fincprg.export.card import model_ids

    ids = model_ids(load_config(None, ["mine.reranker.backend=toy"]))
    assert ids["reranker"] == "share of shared characters (a test), backend default threshold"
    ids = model_ids(load_config(None, ["mine.reranker.backend=flag", "mine.reranker.model=/m/bge"]))
    assert ids["reranker"] == "flag /m/bge, backend default threshold"


def test_eval_help_lists_exactly_the_registered_retrievers():
    from fincprg.cli import app
    from fincprg.evaluate.retriever_specs import cli_help

    grammar = cli_help().split("Retriever SPEC, repeatable. ")[1].split(". MODEL is")[0]
    usages = [part.split(": ", 1)[0] for part in grammar.split(" | ")]
    assert usages == [e.spec for e in RETRIEVERS]
    heads = [re.split(r"[\[:,]", u, maxsplit=1)[0] for u in usages]
    assert heads == RETRIEVERS.names() and len(heads) > 10
    out = re.sub(r"[\s│]+", "", CliRunner().invoke(app, ["eval", "--help"], terminal_width=200).output)
    for entry in RETRIEVERS:
        assert re.sub(r"\s+", "", entry.spec) in out, entry.spec


def test_a_retriever_registered_from_python_is_built_and_listed():
    from fincprg.evaluate.retriever_specs import cli_help, spec_help
    from fincprg.evaluate.retrievers import build_retriever

    class Fixed:
        def __init__(self, doc):
            self.doc = doc

        def fit(self, corpus):
            self.corpus = corpus

        def search(self, queries, k):
            return {q: {self.doc: 1.0} for q in queries}

    fincprg.register_retriever("fixed", lambda *, spec, arg, show_progress=True: Fixed(arg), usage="fixed:DOC",
                               description="every query retrieves DOC (a test)")
    try:
        r = build_retriever("fixed:d1", show_progress=False)
        assert r.name == "fixed:d1" and r.search({"q": "x"}, 10) == {"q": {"d1": 1.0}}
        assert "fixed:DOC" in spec_help() and "fixed:DOC: every query retrieves DOC" in cli_help()
    finally:
        RETRIEVERS.unregister("fixed")
    with pytest.raises(ConfigError, match="unknown retriever spec 'fixed:d1'"):
        build_retriever("fixed:d1")


def test_builtin_order_does_not_depend_on_import_order():
    import subprocess
    import sys

    code = ("import fincprg.mine.lexical; "  # its import registers flag before its own entry
            "from fincprg.registry import PAIR_SCORERS; print(PAIR_SCORERS.names()[0])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "lexical"
