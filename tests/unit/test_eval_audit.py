"""fincprg audit: interval sampling, FP/FN arithmetic, the LLM judge over HTTP, the rules judge, CLI."""
from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from fincprg.cli import app
from fincprg.config import LLMConfig
from fincprg.audit.review import read_decisions
from fincprg.audit.run import estimate, reapply, run_audit
from fincprg.audit.judge import LLMJudge, RulesJudge, parse_verdict
from fincprg.audit.sample import (
    Interval,
    default_intervals,
    interval_of,
    locate,
    parse_intervals,
    sample_pairs,
)
from tests.unit._report_fixture import SCRIPT, make_build

PAPER = ["0.99-1.00", "0.97-0.99", "0.95-0.97", "0.93-0.95", "0.91-0.93", "0.89-0.91", "0.87-0.89", "0.85-0.87"]


def test_default_intervals_reproduce_the_paper_for_threshold_099():
    assert [iv.label for iv in default_intervals(0.99, 0.85)] == PAPER


def test_default_intervals_put_the_lexical_threshold_on_an_edge():
    ivs = default_intervals(0.9, 0.85)
    assert [iv.label for iv in ivs] == ["0.98-1.00", "0.96-0.98", "0.94-0.96", "0.92-0.94", "0.90-0.92",
                                        "0.88-0.90", "0.86-0.88", "0.85-0.86"]
    assert ivs[0].top and not any(iv.top for iv in ivs[1:])


def test_wide_span_gets_eight_equal_intervals():
    ivs = default_intervals(0.5, 0.85)  # threshold below keep_min: pairs >= 0.5 are on disk
    assert len(ivs) == 8 and ivs[-1].lo == 0.5 and ivs[0].hi == 1.0


def test_parse_intervals_and_edges():
    ivs = parse_intervals("0.85,0.87,0.89,0.91,0.93,0.95,0.97,0.99")
    assert [iv.label for iv in ivs] == PAPER
    assert interval_of(ivs, 1.0).label == "0.99-1.00"  # top edge is inside the top interval
    assert interval_of(ivs, 0.99).label == "0.99-1.00"  # lower edges are inclusive
    assert interval_of(ivs, 0.98999).label == "0.97-0.99"
    assert interval_of(ivs, 0.97).label == "0.97-0.99"
    assert interval_of(ivs, 0.85).label == "0.85-0.87"
    assert interval_of(ivs, 0.8499) is None
    assert [iv.label for iv in parse_intervals("0.5,0.9")] == ["0.90-1.00", "0.50-0.90"]
    with pytest.raises(Exception, match="comma-separated"):
        parse_intervals("0.9,x")


def _pairs(n_per: dict[float, int], space: str = "sentence") -> list[dict]:
    rows = []
    for base, n in n_per.items():
        for i in range(n):
            rows.append({"space": space, "query_a": f"a{base}-{i}", "query_b": f"b{base}-{i}",
                         "score": round(base + 0.0001 * (i % 100), 6), "accepted": True, "veto": None})
    return rows


def test_sampling_counts_cap_population_and_determinism():
    ivs = parse_intervals(",".join(map(str, [0.85, 0.87, 0.89, 0.91, 0.93, 0.95, 0.97, 0.99])))
    pairs = _pairs({0.99: 120, 0.97: 30, 0.85: 7, 0.80: 40}) + _pairs({0.91: 60}, "topic")
    st = sample_pairs(pairs, ivs, threshold=0.99, per_interval=50, seed=1)
    assert {k: len(v.sample) for k, v in st.items()} == {
        ("sentence", "0.99-1.00"): 50, ("sentence", "0.97-0.99"): 30, ("sentence", "0.85-0.87"): 7,
        ("topic", "0.91-0.93"): 50}
    assert (st[("sentence", "0.99-1.00")].above, st[("sentence", "0.99-1.00")].below) == (120, 0)
    assert (st[("sentence", "0.97-0.99")].above, st[("sentence", "0.97-0.99")].below) == (0, 30)
    assert ("sentence", "0.80-0.85") not in st  # below the lowest edge: not audited
    # every kept item really lies in its interval, and is unique
    for (space, label), s in st.items():
        iv = next(i for i in ivs if i.label == label)
        assert all(iv.holds(r["score"]) and r["space"] == space for r in s.sample)
        assert len({r["query_a"] for r in s.sample}) == len(s.sample)
    again = sample_pairs(pairs, ivs, threshold=0.99, per_interval=50, seed=1)
    other = sample_pairs(pairs, ivs, threshold=0.99, per_interval=50, seed=2)
    key = ("sentence", "0.99-1.00")
    assert [r["query_a"] for r in again[key].sample] == [r["query_a"] for r in st[key].sample]
    assert {r["query_a"] for r in other[key].sample} != {r["query_a"] for r in st[key].sample}
    small = sample_pairs(pairs, ivs, threshold=0.99, per_interval=3, seed=1)
    assert all(len(s.sample) <= 3 for s in small.values())


def _j(key, space, interval, score, judge):
    return {"key": key, "space": space, "interval": interval, "score": score, "judge_score": judge}


def test_fp_fn_arithmetic_on_a_hand_built_sample():
    ivs = [Interval(0.95, 1.0, top=True), Interval(0.9, 0.95), Interval(0.85, 0.9)]
    judged = [
        # 0.95-1.00, all above threshold 0.93: judge 1, 2 -> FP; 3, 5 -> not FP
        _j("a", "passage", "0.95-1.00", 0.99, 1), _j("b", "passage", "0.95-1.00", 0.98, 2),
        _j("c", "passage", "0.95-1.00", 0.97, 3), _j("d", "passage", "0.95-1.00", 0.96, 5),
        # 0.90-0.95 straddles 0.93: above 0.94 judge 2 -> FP; below 0.91 judge 4 -> FN, 0.92 judge 3 -> not FN
        _j("e", "passage", "0.90-0.95", 0.94, 2), _j("f", "passage", "0.90-0.95", 0.91, 4),
        _j("g", "passage", "0.90-0.95", 0.92, 3),
        # 0.85-0.90: judge 5 -> FN, failed judge -> excluded
        _j("h", "passage", "0.85-0.90", 0.86, 5), _j("i", "passage", "0.85-0.90", 0.87, None),
    ]
    pop = {"passage": {"0.95-1.00": {"above": 100, "below": 0}, "0.90-0.95": {"above": 50, "below": 50},
                       "0.85-0.90": {"above": 0, "below": 200}}}
    r = estimate(judged, 0.93, ivs, pop)["passage"]
    assert (r["sampled"], r["judged"], r["failed"]) == (9, 8, 1)
    assert (r["fp"], r["judged_above"], r["fp_rate"]) == (3, 5, 0.6)
    assert (r["fn"], r["judged_below"], r["fn_rate"]) == (2, 3, round(2 / 3, 4))
    # stratified: FP = (100 * 2/4 + 50 * 1/1) / 150; FN = (50 * 1/2 + 200 * 1/1) / 250
    assert r["fp_weighted_rate"] == round((100 * 0.5 + 50 * 1.0) / 150, 4)
    assert r["fn_weighted_rate"] == round((50 * 0.5 + 200 * 1.0) / 250, 4)
    assert (r["accepted_judged"], r["vetoed_judged"]) == (0, 0)  # hand rows carry no accepted/veto fields
    rows = {x["interval"]: x for x in r["intervals"]}
    assert (rows["0.90-0.95"]["fp"], rows["0.90-0.95"]["fn"], rows["0.90-0.95"]["judged"]) == (1, 1, 3)
    assert rows["0.85-0.90"]["mean_judge"] == 5.0
    # a person overrides a (judge 1 -> 4: no longer FP) and scores the failed pair i (4 -> FN)
    dec = {"a": {"key": "a", "decision": "override", "score": 4}, "i": {"key": "i", "decision": "override", "score": 4},
           "c": {"key": "c", "decision": "confirm", "score": 3}}
    r2 = estimate(judged, 0.93, ivs, pop, dec)["passage"]
    assert (r2["fp"], r2["fn"], r2["failed"], r2["human_decided"]) == (2, 3, 0, 3)


def test_written_labels_and_vetoes_are_counted():
    ivs = [Interval(0.9, 1.0, top=True)]
    judged = [{**_j("a", "topic", "0.90-1.00", 0.95, 2), "accepted": True, "veto": None},
              {**_j("b", "topic", "0.90-1.00", 0.96, 4), "accepted": True, "veto": None},
              {**_j("c", "topic", "0.90-1.00", 0.97, 5), "accepted": False, "veto": "period"},
              {**_j("d", "topic", "0.90-1.00", 0.98, 1), "accepted": False, "veto": "company"}]
    r = estimate(judged, 0.9, ivs, {})["topic"]
    assert (r["accepted_fp"], r["accepted_judged"], r["vetoed_synonymous"], r["vetoed_judged"]) == (1, 2, 1, 2)
    assert r["fp"] == 2  # by score, as the paper defines it, vetoed pairs included


def test_rules_judge_scores_and_labels():
    j = RulesJudge()
    same, other_co, other_metric = j.judge([
        ("星河科技2024年营业收入同比增长多少？", "星河科技2024年营业收入同比增速是多少？"),
        ("星河科技2024年营业收入是多少？", "远山医药2024年营业收入是多少？"),
        ("星河科技2024年营业收入是多少？", "星河科技2024年毛利率是多少？"),
    ])
    assert same.score >= 4 and other_co.score <= 2 and other_metric.score <= 2
    assert {same.judge, other_co.judge} == {"rules"}


def test_parse_verdict():
    assert parse_verdict('```json\n{"score": 4, "reason": "同义"}\n```') == (4, "同义", None)
    assert parse_verdict('{"score": "5"}')[0] == 5
    assert parse_verdict('{"score": 7}')[2] is not None
    assert parse_verdict('{"score": 3.5}')[2] is not None
    assert parse_verdict("no json here")[0] is None


def _cfg(srv) -> LLMConfig:
    return LLMConfig(base_url=srv.base_url, model="test-model", api_key_env="FINCPRG_TEST_LLM_KEY",
                     concurrency=4, max_retries=0, timeout=5.0)


def test_llm_judge_against_the_local_server(llm_server, tmp_path):
    def responder(req):
        text = "\n".join(m["content"] for m in req["messages"])
        if "BROKEN" in text:
            return "I cannot answer"  # never valid: recorded as a failure after one re-ask
        if "FLAKY" in text and len(req["messages"]) == 2:
            return '{"score": 9}'  # invalid first answer, fixed on re-ask
        return '{"score": 4, "reason": "同一信息需求"}'

    llm_server.set_responder(responder)
    judge = LLMJudge(_cfg(llm_server), tmp_path / "cache", language="zh", progress=False)
    out = judge.judge([("星河科技营收", "星河科技营业收入"), ("BROKEN a", "b"), ("FLAKY a", "b")])
    assert [o.score for o in out] == [4, None, 4]
    assert out[0].reason == "同一信息需求" and out[0].judge == "llm:test-model"
    assert out[1].error and out[1].raw == "I cannot answer"
    assert out[2].meta["reasked"] is True
    assert len(llm_server.requests) == 5  # 3 first asks + 2 re-asks
    first = next(r["messages"] for r in llm_server.requests if "星河科技营收" in r["messages"][-1]["content"])
    assert [m["role"] for m in first] == ["system", "user"] and "星河科技营业收入" in first[1]["content"]
    assert "1–5" in first[1]["content"]  # the paper's 1-5 synonymy scale, from prompts/synonymy_judge.zh.j2


def test_run_audit_with_llm_judge_writes_everything(llm_server, tmp_path):
    out = make_build(tmp_path, n_pairs=150)
    llm_server.set_responder(lambda req: '{"score": 4, "reason": "ok"}')
    judge = LLMJudge(_cfg(llm_server), tmp_path / "cache", progress=False)
    s = run_audit(out / "dataset", judge=judge, per_interval=2, seed=3)  # the dataset folder works too
    audit = out / "audit"
    for f in ("samples.jsonl", "judgements.jsonl", "summary.json", "summary.md", "review.html"):
        assert (audit / f).is_file(), f
    judged = [json.loads(x) for x in (audit / "judgements.jsonl").read_text().splitlines()]
    assert len(judged) == len(llm_server.requests) == sum(r["sampled"] for r in s["levels"].values())
    for lv in s["levels"].values():  # every judge says 4: no FP; every pair below threshold is an FN
        assert lv["fp"] == 0 and lv["fn"] == lv["judged_below"] and lv["failed"] == 0
    assert s["judge"] == "llm:test-model" and s["threshold"] == 0.9
    assert all(len([j for j in judged if j["space"] == sp and j["interval"] == iv]) <= 2
               for sp in ("sentence", "passage", "topic") for iv in s["intervals"])


def test_rules_audit_is_labelled_and_escaped(tmp_path):
    out = make_build(tmp_path)
    s = run_audit(out, judge=RulesJudge(), per_interval=50, seed=0)
    md = (out / "audit" / "summary.md").read_text()
    html = (out / "audit" / "review.html").read_text()
    assert "judge: **rules**" in md and "not an LLM" in md and "not an LLM" in html
    assert SCRIPT not in html and "&lt;script&gt;window.__pwned=1" in html
    assert "onerror=\"document" not in html
    # per interval: every pair of the build when it holds <= 50, else 50; samples.jsonl agrees
    ivs = parse_intervals(",".join(label.split("-")[0] for label in s["intervals"]))
    pop: dict[str, int] = {}
    for line in (out / "mine" / "pairs.jsonl").read_text().splitlines():
        p = json.loads(line)
        iv = interval_of(ivs, float(p["score"])) if p["space"] == "sentence" else None
        if iv is not None:
            pop[iv.label] = pop.get(iv.label, 0) + 1
    in_samples: dict[str, int] = {}
    for line in (out / "audit" / "samples.jsonl").read_text().splitlines():
        r = json.loads(line)
        if r["space"] == "sentence":
            in_samples[r["interval"]] = in_samples.get(r["interval"], 0) + 1
    rows = s["levels"]["sentence"]["intervals"]
    assert sum(pop.values()) > 0
    assert {r["interval"]: r["sampled"] for r in rows} == {lb: min(50, pop.get(lb, 0)) for lb in s["intervals"]}
    assert {r["interval"]: r["population"] for r in rows} == {lb: pop.get(lb, 0) for lb in s["intervals"]}
    assert in_samples == {lb: min(50, n) for lb, n in pop.items() if n}
    assert s["levels"]["sentence"]["sampled"] == sum(min(50, n) for n in pop.values())
    # deterministic: the same seed samples the same pairs
    first = (out / "audit" / "samples.jsonl").read_text()
    run_audit(out, judge=RulesJudge(), per_interval=50, seed=0)
    assert (out / "audit" / "samples.jsonl").read_text() == first


def test_locate_errors_name_the_fix(tmp_path):
    with pytest.raises(Exception, match="mine/pairs.jsonl"):
        locate(tmp_path)


def test_cli_audit_apply_downloaded_decisions(tmp_path):
    out = make_build(tmp_path, n_pairs=120)
    runner = CliRunner()
    res = runner.invoke(app, ["audit", str(out), "--per-interval", "3", "--intervals", "0.85,0.9,0.95", "-q"])
    assert res.exit_code == 0, res.output
    assert "judge: rules" in res.output and "0.95-1.00, 0.90-0.95, 0.85-0.90" in res.output
    judged = [json.loads(x) for x in (out / "audit" / "judgements.jsonl").read_text().splitlines()]
    above = next(j for j in judged if j["score"] >= 0.9 and j["judge_score"] >= 3)
    download = tmp_path / "decisions.jsonl"
    download.write_text(json.dumps({"key": above["key"], "decision": "override", "score": 1, "note": "wrong"}) + "\n")
    before = json.loads((out / "audit" / "summary.json").read_text())["levels"][above["space"]]["fp"]
    res = runner.invoke(app, ["audit", str(out), "--decisions", str(download)])
    assert res.exit_code == 0, res.output
    s = json.loads((out / "audit" / "summary.json").read_text())
    assert s["decisions_applied"] and s["levels"][above["space"]]["fp"] == before + 1
    assert read_decisions(out / "audit" / "decisions.jsonl")[above["key"]]["score"] == 1
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"key": "nope", "decision": "override", "score": 2}) + "\n")
    res = runner.invoke(app, ["audit", str(out), "--decisions", str(bad)])
    assert res.exit_code == 2 and "unknown pair key" in res.output
    assert reapply(out, apply=False)["decisions_applied"] is False


def test_cli_llm_judge_uses_the_llm_config(llm_server, tmp_path, monkeypatch):
    out = make_build(tmp_path, n_pairs=60)
    llm_server.set_responder(lambda req: '{"score": 2, "reason": "不同"}')
    res = CliRunner().invoke(app, [
        "audit", str(out), "--judge", "llm", "--per-interval", "1", "--language", "en", "-q",
        "--set", f"llm.base_url={llm_server.base_url}", "--set", "llm.model=judge-x", "--set", "llm.max_retries=0"])
    assert res.exit_code == 0, res.output
    assert "judge: llm:judge-x" in res.output and llm_server.requests
    assert all(r["model"] == "judge-x" for r in llm_server.requests)
    assert "Rate how synonymous" in llm_server.requests[0]["messages"][1]["content"]  # English prompt
    s = json.loads((out / "audit" / "summary.json").read_text())
    assert all(lv["fp"] == lv["judged_above"] and lv["fn"] == 0 for lv in s["levels"].values())
    assert (out / ".cache").is_dir()  # answers cached under the build
