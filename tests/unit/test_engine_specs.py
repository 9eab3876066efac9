"""What a stage needs from an engine is a field of its spec: the runner and the Ray engine read it there."""
from __future__ import annotations

import pytest

from fincprg import layout as L
from fincprg.config import PipelineConfig, RayConfig, load_config
from fincprg.contract import STAGE_BY_NAME, STAGES, ConfigView
from fincprg.errors import ConfigError
from fincprg.llm.budget import Budget
from fincprg.pipeline import ray_engine, runner
from fincprg.pipeline.context import StageContext


def _view(stage: str, cfg: PipelineConfig) -> ConfigView:
    spec = STAGE_BY_NAME[stage]
    return ConfigView(cfg, spec.config_keys, spec.name)


def test_engine_needs_are_spec_fields():
    assert {s.name for s in STAGES if s.ray} == {L.CHUNK, L.GENERATE, L.VERIFY, L.MINE}
    assert [s.name for s in STAGES if s.staged] == [L.EXPORT]
    assert [s.name for s in STAGES if s.precheck] == [L.INGEST]
    assert [s.name for s in STAGES if not s.inputs] == [s.name for s in STAGES if s.source_hash] == [L.INGEST]


def test_gpus_per_actor_come_from_the_stage_spec():
    gpus = STAGE_BY_NAME[L.MINE].hook("gpus")
    assert gpus(_view(L.MINE, PipelineConfig()), RayConfig()) == 0.0  # the lexical scorer needs none
    flag = load_config(None, ["mine.reranker.backend=flag", "mine.reranker.model=m"])
    assert gpus(_view(L.MINE, flag), RayConfig()) is None  # one per actor when the cluster has any
    assert gpus(_view(L.MINE, flag), RayConfig(mine_gpus_per_actor=0.5)) == 0.5
    assert ray_engine.actor_gpus(RayConfig(), 0.0) == 0.0  # asked for none: Ray is not even started
    assert STAGE_BY_NAME[L.CHUNK].hook("gpus") is None


def test_a_limited_budget_refuses_llm_actors_named_by_their_spec():
    budget = Budget(max_requests=10)
    llm_ray = load_config(None, ["engine=ray", "generate.backend=llm"])
    with pytest.raises(ConfigError, match="LLM actors in generate"):
        runner._check_budget(llm_ray, budget)
    runner._check_budget(load_config(None, ["engine=ray"]), budget)  # template generation: no LLM actors
    runner._check_budget(load_config(None, ["generate.backend=llm"]), budget)  # local: the budget counts


def test_a_stage_whose_spec_is_not_ray_runs_its_batches_here_with_engine_ray(tmp_path, monkeypatch):
    def no_ray(*args, **kwargs):
        raise AssertionError("batches of a stage without spec.ray went to Ray")

    monkeypatch.setattr(ray_engine, "map_batches", no_ray)
    ctx = StageContext(STAGE_BY_NAME[L.TOPICS], tmp_path, load_config(None, ["engine=ray"]), "sig", show_progress=False)
    ctx.dir.mkdir(parents=True)
    lines = ctx.map_batches([1, 2, 3], lambda b: {L.ASSIGNMENTS: [{"n": x} for x in b]}, outputs=(L.ASSIGNMENTS,),
                            batch_size=2)
    assert lines == {L.ASSIGNMENTS: 3} and ctx.engine == "ray"


def test_llm_stream_asks_the_specs_llm_actors_hook_not_only_whether_it_is_set(tmp_path, monkeypatch):
    def no_ray(*args, **kwargs):
        raise AssertionError("the stream went to Ray actors although the spec's hook said no")

    class Local:
        def stream(self, items):
            return iter([f"local {x}" for x in items])

    monkeypatch.setattr(ray_engine, "llm_stream", no_ray)
    cfg = load_config(None, ["engine=ray"])  # template generation: uses_llm_actors is False
    ctx = StageContext(STAGE_BY_NAME[L.GENERATE], tmp_path, cfg, "sig", show_progress=False)
    out = list(ctx.llm_stream([1, 2], local=Local(), worker=lambda c: c, llm=cfg.llm, stats_out={}))
    assert out == ["local 1", "local 2"]
