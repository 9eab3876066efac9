"""The offline templates ask only what the source states, in its period, about its subject (issue 18)."""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from fincprg.config import load_config
from fincprg.finance.stocks import StockTable
from fincprg.generate.base import PassageInput, QueryTree
from fincprg.finance.reporting_period import dominant_period
from fincprg.generate.complete import complete_query
from fincprg.generate.subject import body_subject
from fincprg.generate.templates import NO_SUBJECT, TemplateGenerator
from fincprg.records import Failure, Passage, Report, Sentence

CO = "星河科技"
KEYS = "abcdefgh"


def _sq(text: str, **kw) -> list[str]:
    return [TemplateGenerator().sentence_query(text, CO, key=k, **kw) for k in KEYS]


def _item(sents, *, company=CO, title="星河科技（688321）：点评", text=None, date=None, rid="r1") -> PassageInput:
    rep = Report(id=rid, title=title, text=text or "".join(sents), company=company, date=date)
    pid = f"{rid}#p0"
    p = Passage(id=pid, report_id=rid, order=0, text="".join(sents))
    return PassageInput(rep, p, tuple(Sentence(id=f"{pid}#s{i}", passage_id=pid, order=i, text=t)
                                      for i, t in enumerate(sents)))


# ------------------------------------------------------------------ direction


def test_a_segment_falling_while_the_company_rose_is_not_asked_as_the_company_falling():
    s = "2022年公司实现营业收入306亿元，同比增长26%，其中铁路装备业务收入53亿元，同比下降64%，收入下降是由于动车组交付减少所致。"
    qs = _sq(s)
    assert all(qs), qs  # the company's own figure is still asked
    for q in qs:
        assert not (q.startswith(f"{CO}2022年营业收入下降") or q.startswith(f"{CO}2022年收入下降")), q
        assert "下降" not in q or "铁路装备" in q, q
        # the reason written is the segment's fall, not the company's growth
        assert "铁路装备" in q or not ("原因" in q or "因素" in q), q


def test_a_direction_belongs_to_the_metric_it_follows():
    # 提升 is 毛利率's, 下降 is 其他费用's: nothing is said of 研发费用 or 现金流
    for q in _sq("除研发费用外，其他费用下降显著，毛利率稳步提升。") + _sq("现金流健康毛利率2021年为76.7%，同比提升2.8个百分点。"):
        assert "研发费用" not in q and "现金流" not in q, q
    # AlphaFin lost the comma: 提升 follows 毛利率, so 研发费用 is asked as its level, never as rising
    qs = _sq("2021年公司研发费用3.2亿元毛利率同比提升2.1个百分点。")
    assert all(qs), qs
    for q in qs:
        assert not ("研发费用" in q and ("提升" in q or "变化" in q)), q


def test_why_is_asked_only_where_a_reason_is_written():
    for q in _sq("随着毛利率持续提升，费用率稳中有降，预计净利率平稳上行。"):
        assert "为什么" not in q and "原因" not in q and "因素" not in q, q
    assert any("原因" in q or "因素" in q for q in _sq("2023年公司毛利率为43.6%，同比下降1.2个百分点，主要由于晶圆代工价格上涨。"))


def test_a_level_is_not_asked_as_a_change_and_nothing_is_asked_without_a_figure():
    qs = _sq("当前公司热管理在手订单60亿元且处于持续提升阶段。")
    assert all("在手订单" in q for q in qs), qs  # the level is asked
    for q in qs:
        assert "变化" not in q and "了多少" not in q, q
    assert set(_sq("收入方面，线下客流受限，但新零售销售机会得到充分开发。")) == {""}


def test_a_subsidiary_or_customer_figure_is_not_the_company_s():
    for s in ("其中子公司金赛药业2020年营收58.03亿元，同比增长20.34%。",
              "特斯拉上半年全球产量18.5万辆，同比增长13%。"):
        assert set(_sq(s)) == {""}, _sq(s)


# ------------------------------------------------------------------ period


H1 = ("公司发布2021年半年报，2021H1实现营收24.5亿元，同比增长27.6%。单Q2营收12.5亿元，同比增长24.0%。"
      "毛利率为33.6%，同比提升3.1个百分点。")


def test_half_year_figures_are_asked_as_the_half_year():
    assert dominant_period(H1).part == "H1"
    sents = H1.split("。")[:3]
    tree = TemplateGenerator().generate([_item([s + "。" for s in sents])])[0]
    assert isinstance(tree, QueryTree)
    assert "2021年上半年" in tree.passage_query, tree.passage_query
    margin = tree.sentence_queries[2]
    assert margin.startswith(f"{CO}2021年上半年毛利率"), margin
    # completion adds the half year, never the bare year, to a query naming no period
    assert complete_query("公司毛利率是多少？", company=CO, passage_text=H1) == f"{CO}2021年上半年毛利率是多少？"


def test_a_bare_quarter_takes_the_year_the_passage_gives_that_quarter():
    passage = "2021年公司实现营业收入10.2亿元，同比增长18%。22Q1公司实现营业收入2.6亿元，同比增长21%。Q1毛利率为41.2%。"
    qs = _sq("Q1毛利率为41.2%。", passage_year=2021, passage_text=passage)
    assert all("2022年一季度" in q and "2021" not in q for q in qs), qs
    assert complete_query("公司一季度毛利率是多少？", company=CO, passage_text=passage) == f"{CO}2022年一季度毛利率是多少？"
    # a quarter the passage dates with no year stays bare: no guessed year
    vague = "2021年营收10.2亿元，2020年营收8.6亿元。Q1毛利率为41.2%。"
    assert complete_query("公司一季度毛利率是多少？", company=CO, passage_text=vague) == f"{CO}一季度毛利率是多少？"


def test_years_after_the_report_date_are_forecasts_and_two_digit_years_are_read():
    date = dt.date(2023, 1, 10)
    for q in _sq("我们维持22 24年归母净利润分别为5.70、14.33、16.79亿元。", date=date):
        assert "2022-2024年" in q and ("预计" in q or "预测" in q), q
    for q in _sq("22年公司实现营业收入262.1亿元，同比增长31.3%。", passage_year=2023, date=dt.date(2023, 4, 28)):
        assert "2022年" in q and "2023" not in q, q


# ------------------------------------------------------------------ subject

TABLE = "ts_code,symbol,name,industry\n000858.SZ,000858,五粮液,白酒\n002429.SZ,002429,兆驰股份,家用电器\n" \
        "300024.SZ,300024,机器人,专用机械\n688981.SH,688981,中芯国际,半导体\n"


@pytest.fixture()
def table(tmp_path) -> StockTable:
    p = tmp_path / "stocks.csv"
    p.write_text(TABLE, encoding="utf-8")
    return StockTable(p)


def test_an_untitled_body_takes_the_listed_company_it_opens_with(table):
    body = "事件 兆驰股份发布2019年年报，公司实现营业收入133亿元，同比增长3.4%。公司为中芯国际等客户供货。"
    assert body_subject(body, table) == ("兆驰股份", "002429")
    # a customer named once in the middle, or an ordinary word that is also a short name, is no subject
    assert body_subject("事件 公司发布年报，营收增长。" + "公司业务稳步推进。" * 30 + "公司为中芯国际批量供货。", table) is None
    assert body_subject("公司发布年报，工业机器人需求旺盛，营收增长。", table) is None


def test_generate_stage_takes_an_untitled_subject_from_the_body_and_counts_passages_without_one(tmp_path):
    from fincprg.pipeline.runner import run_pipeline

    stocks = tmp_path / "stocks.csv"
    stocks.write_text(TABLE, encoding="utf-8")
    named = "兆驰股份发布2019年年报。2019年公司实现营业收入133.02亿元，同比增长3.38%，归母净利润11.35亿元，同比增长154.77%。"
    nameless = "公司发布2019年年报。2019年公司实现营业收入52.18亿元，同比增长14.4%，归母净利润7.86亿元，同比增长9.7%。"
    corpus = tmp_path / "c.jsonl"
    corpus.write_text("".join(json.dumps({"id": i, "content": t}, ensure_ascii=False) + "\n"
                              for i, t in (("u1", named), ("u2", nameless))), encoding="utf-8")
    cfg = load_config(overrides=[f"finance.stock_table={stocks}"])
    out = tmp_path / "out"
    run_pipeline(corpus, out, cfg, upto="generate", show_progress=False)
    queries = [json.loads(x) for x in (out / "generate" / "queries.jsonl").read_text(encoding="utf-8").splitlines()]
    assert queries and all(q["report_id"] == "u1" for q in queries), queries
    assert all(q["text"].startswith("兆驰股份") for q in queries), [q["text"] for q in queries]
    assert all(q["provenance"]["generator"] == "templates" for q in queries)
    manifest = json.loads((out / "generate" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["counts"]["no_subject_passages"] >= 1, manifest["counts"]
    kinds = [json.loads(x)["kind"] for x in (out / "generate" / "failures.jsonl").read_text(encoding="utf-8").splitlines()]
    assert NO_SUBJECT in kinds


def test_no_subject_no_query_and_no_fragment_subject():
    # no company, no industry title: the generator does not cut a name-like fragment (「钢基材料」) from the text
    item = _item(["钢基材料2021年实现营业收入12.3亿元，同比增长20.1%。"], company=None, title="")
    (res,) = TemplateGenerator().generate([item])
    assert isinstance(res, Failure) and res.kind == NO_SUBJECT


def test_a_quarter_on_quarter_change_is_not_asked_as_year_on_year():
    qs = _sq("4Q20公司拨备覆盖率季度环比上升5.7pct至256%，风险抵补能力得到进一步夯实。")
    assert all("拨备覆盖率" in q for q in qs), qs  # asked as its level
    for q in qs:
        assert "同比" not in q and "较上年同期" not in q, q


def test_a_topical_word_about_the_industry_is_not_asked_of_the_company():
    assert set(_sq("据数据显示，2022年上半年家电行业出口规模为2833亿元，同比下降8.2%。")) == {""}


def test_a_markets_size_is_not_asked_of_the_company():
    # an airline's report sizing the nation's aviation market: the figure is the market's
    s = "据此我们预测2035年中国航空市场规模为1.6万亿元。"
    assert all(not q for q in _sq(s)), _sq(s)
    # the company's sales in a market are its own
    assert any("海外市场收入" in q for q in _sq("公司2021年海外市场收入12.5亿元，同比增长30%。"))


def test_a_preannouncements_range_is_not_asked_as_an_achieved_figure():
    s = "从单季度的数据来看，18Q4单季度实现归母净利润2.48亿元-3.76亿元，同比增长39.69%至112.02%。"
    assert all("增长了多少" not in q and "是多少" not in q for q in _sq(s) if q), _sq(s)
    # a single figure is asked
    assert any(q for q in _sq("2018年四季度公司实现归母净利润3.12亿元，同比增长75.9%。"))
    # a change and the level it reached is no range
    assert any(q for q in _sq("公司2020年收入逆势增长5.08%至41.91亿元。"))
