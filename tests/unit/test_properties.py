"""Property-based tests (hypothesis) for the three parsers that meet untrusted text (issue 12):
ingest records, the LLM JSON answer parser (and the query-tree validation on top of it) and the
finance extractor."""
from __future__ import annotations

import json
import math
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fincprg.config import IngestConfig, load_config
from fincprg.finance.extract import METRIC_SYNONYMS, Period, extract, parse_title_company
from fincprg.generate.llm_tree import TreeAnswer, TreeProblem, parse_tree
from fincprg.ingest.mapping import FieldMapper
from fincprg.ingest.readers import Raw
from fincprg.ingest.stage import _as_record
from fincprg.llm import JSONParseError, parse_json_detailed
from fincprg.records import Rejection, Report

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ---------------------------------------------------------------- ingest records

ANY_CHAR = st.characters(codec=None, exclude_categories=())  # lone surrogates included
SCALARS = (st.none() | st.booleans() | st.integers(min_value=-10**30, max_value=10**30)
           | st.floats(allow_nan=True, allow_infinity=True)
           | st.text(ANY_CHAR, max_size=12)
           | st.sampled_from(["2024-03-01", "2024年3月1日", "20240301", "Infinity", "#", "a\tb", "", "  ",
                              "贵州茅台（600519）：业绩点评", "公司2023年营收增长14%。"]))
VALUES = st.recursive(SCALARS, lambda kids: st.lists(kids, max_size=3) | st.dictionaries(st.text(max_size=4), kids,
                                                                                         max_size=3), max_leaves=6)
KEYS = st.sampled_from(["id", "_id", "title", "标题", "text", "正文", "content", "date", "发布日期", "company",
                        "stock_code", "股票代码", "industry", "report_type", "类型", "broker"]) | st.text(max_size=6)
RECORDS = st.dictionaries(KEYS, VALUES, max_size=8)


@SETTINGS
@given(fields=RECORDS)
def test_any_record_maps_to_a_report_or_a_rejection(fields):
    rec, line = _as_record(Raw("c.jsonl:1", fields), IngestConfig(), FieldMapper({}))
    if isinstance(rec, Report):
        assert rec.text.strip() and not re.search(r"[#\t\r\n]", rec.id)
        back = Report.model_validate_json(line)  # what is written reads back (non-finite floats in meta as null)
        assert back.model_dump(exclude={"meta"}) == rec.model_dump(exclude={"meta"}) and back.meta.keys() == rec.meta.keys()
        line.encode("utf-8")
    else:
        assert isinstance(rec, Rejection) and line is None and rec.reason and rec.detail


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=st.lists(RECORDS, min_size=1, max_size=6))
def test_every_input_line_is_one_report_or_one_rejection(tmp_path_factory, records):
    from fincprg.ingest.stage import run
    from fincprg.pipeline.runner import STAGE_BY_NAME, StageContext

    tmp = tmp_path_factory.mktemp("prop")
    good = {"id": "good", "title": "星河科技（688321）：点评", "text": "公司2023年营收增长14%。"}
    lines = [json.dumps(r) for r in [good, *records]]  # ASCII JSON: surrogates and NaN survive as escapes/literals
    (tmp / "c.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    ctx = StageContext(STAGE_BY_NAME["ingest"], tmp / "out", load_config(), "sig", corpus=tmp / "c.jsonl",
                       show_progress=False)
    ctx.dir.mkdir(parents=True)
    counts = run(ctx)
    written = [ctx.dir / "reports.jsonl", ctx.dir / "rejected.jsonl"]
    # JSONL lines end at "\n" only: str.splitlines() would also split inside a string holding U+0085 or U+2028
    rows = [x for p in written for x in p.read_bytes().decode("utf-8").split("\n") if x]
    assert counts["reports"] + counts["rejected"] == len(lines) == len(rows)
    assert all(json.loads(x) for x in rows)


# ---------------------------------------------------------------- the JSON answer parser

TEXT = st.characters(exclude_characters="`", exclude_categories=("Cs",))


@SETTINGS
@given(text=st.text(st.sampled_from('{}[]",:`\\ abc1\n') | TEXT, max_size=80))
def test_parser_raises_nothing_but_json_parse_error(text):
    try:
        got = parse_json_detailed(text)
    except JSONParseError:
        return
    assert isinstance(got.value, (dict, list))
    assert not got.cut_string or got.truncated


@settings(max_examples=20, deadline=None)
@given(depth=st.integers(65, 200_000), opener=st.sampled_from(["[", "{\"a\":"]))
def test_deep_nesting_is_a_parse_error_or_a_value(depth, opener):
    with pytest.raises(JSONParseError):
        parse_json_detailed("```json\n" + opener * depth)


QUERY = st.text(TEXT, min_size=1, max_size=12).filter(lambda q: q.strip() == q and q)


@SETTINGS
@given(pq=QUERY, qs=st.lists(QUERY, min_size=1, max_size=5), data=st.data(), swap=st.booleans(),
       fence=st.booleans(), ascii_=st.booleans())
def test_a_cut_off_answer_never_yields_a_cut_query(pq, qs, data, swap, fence, ascii_):
    """Whatever the cut point, every query parse_tree returns is one the model wrote in full."""
    tree = {"sentence_queries": qs, "passage_query": pq} if swap else {"passage_query": pq, "sentence_queries": qs}
    full = json.dumps(tree, ensure_ascii=ascii_)
    cut = data.draw(st.integers(1, len(full) - 1))
    text = ("```json\n" if fence else "") + full[:cut]
    res = parse_tree(text, len(qs))
    answer = res if isinstance(res, TreeAnswer) else res.partial
    if answer is None:
        assert isinstance(res, TreeProblem)
        return
    assert answer.passage_query in ("", pq)
    assert all(q in ("", *qs) for q in answer.sentence_queries)
    assert all(q == "" or q == qs[i] for i, q in enumerate(answer.sentence_queries[:len(qs)]))


@SETTINGS
@given(pq=QUERY, qs=st.lists(QUERY, min_size=1, max_size=5))
def test_a_complete_answer_is_accepted_verbatim(pq, qs):
    res = parse_tree(json.dumps({"passage_query": pq, "sentence_queries": qs}, ensure_ascii=False), len(qs))
    assert res == TreeAnswer(pq, tuple(qs))


# ---------------------------------------------------------------- the finance extractor

UNITS = {"%", "个百分点", "倍", "亿元", "万元", "千元", "元/股", "元/吨", "亿美元", "万美元", "亿港元", "美元", "港元",
         "元", "亿股", "万股", "亿", "万", "bps", "bp", "万吨", "吨", "GWh", "GW", "MWh", "MW", "万辆", "辆", "万台",
         "台", "万人", "家"}


@SETTINGS
@given(text=st.text(st.sampled_from("0123456789.,%年季度Q1234HE上半前三营收净利润增长下降（）()600519SH亿元 ")
                    | TEXT, max_size=60))
def test_extract_is_total_and_reports_only_what_the_text_holds(text):
    facts = extract(text)
    assert facts == extract(text)  # deterministic
    assert all(n.raw in text for n in facts.numbers)
    assert all(n.unit is None or n.unit in UNITS for n in facts.numbers)
    assert all(code in text for code in facts.codes)
    assert all(p.year is None or 1980 <= p.year <= 2049 for p in facts.periods)
    assert facts.metrics <= set(METRIC_SYNONYMS) and facts.directions <= {"up", "down"}


SYNONYMS = sorted(s for syns in METRIC_SYNONYMS.values() for s in syns if not re.fullmatch(r"[A-Za-z/]+", s))


@SETTINGS
@given(year=st.integers(1990, 2049), syn=st.sampled_from(SYNONYMS), value=st.integers(1, 99_999),
       unit=st.sampled_from(["亿元", "万元", "%"]), pct=st.integers(1, 999), up=st.booleans())
def test_extract_recovers_a_written_fact(year, syn, value, unit, pct, up):
    amount = f"{value / 100:.2f}"
    text = f"{year}年公司{syn}为{amount}{unit}，同比{'增长' if up else '下降'}{pct / 10:.1f}%。"
    facts = extract(text)
    canon = next(c for c, syns in METRIC_SYNONYMS.items() if syn in syns)
    assert Period(year, None, False) in facts.periods
    assert canon in facts.metrics
    assert any(math.isclose(n.value, value / 100) and n.unit == unit for n in facts.numbers)
    assert any(math.isclose(n.value, pct / 10) and n.unit == "%" for n in facts.numbers)
    assert facts.directions == {"up" if up else "down"}


NAME = st.text(st.sampled_from("星河恒芯远航江城云岭晶阳金禾锂源泰和康宁华济智驰数安"), min_size=2, max_size=6)


@SETTINGS
@given(name=NAME, code=st.integers(600000, 605999), ex=st.sampled_from(["", ".SH"]),
       bracket=st.sampled_from(["（{}）", "({})", "[{}]"]), rest=st.text(TEXT, max_size=20))
def test_title_company_round_trip(name, code, ex, bracket, rest):
    title = name + bracket.format(f"{code}{ex}") + "：" + rest
    assert parse_title_company(title) == (name, str(code))


@SETTINGS
@given(title=st.text(ANY_CHAR, max_size=40))
def test_title_parser_is_total(title):
    name, code = parse_title_company(title)
    assert (name is None) == (code is None)
    assert code is None or re.fullmatch(r"\d{6}|\d{5}\.HK|[A-Z]{1,5}\.(US|N|O)", code)
