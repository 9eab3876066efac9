"""Reference years (创2002年以来新低) and years long before the report never become a query's period."""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest

from fincprg.finance import Period
from fincprg.finance.reporting_period import dominant_year, recent_year, without_reference_years
from fincprg.generate.complete import add_period, complete_query
from fincprg.generate.templates import TemplateGenerator, title_subject

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample" / "reports.jsonl"


def _s31() -> dict:
    for line in SAMPLE.read_text(encoding="utf-8").splitlines():
        if line.strip() and json.loads(line)["id"] == "s31":
            return json.loads(line)
    raise AssertionError("report s31 (the '2002年以来' case) is missing from datasets/sample")


@pytest.mark.parametrize("text", ["十年期国债收益率创2002年以来新低", "自2019年以来，集采品种增加", "2019年底以来利差收窄",
                                  "2015年以前的数据", "2019年3月至今", "自2020年起实施", "从2018年开始"])
def test_reference_years_are_blanked(text):
    out = without_reference_years(text)
    assert out != text and not any(y in out for y in ("2002", "2019", "2015", "2020", "2018"))


@pytest.mark.parametrize("text", ["2023年前三季度营业收入增长", "2024年一季度净利润", "从2023年来看，需求回暖"])
def test_period_years_are_kept(text):
    assert without_reference_years(text) is text


def test_s31_passage_gets_no_2002():
    report = _s31()
    date = dt.date.fromisoformat(report["date"])
    passage = "\n".join(report["text"].splitlines()[:3])
    assert "创2002年以来新低" in passage
    assert dominant_year(passage, date) is None
    assert dominant_year(passage) is None  # the 以来 construction alone is enough
    for q in ("关于降准、国债、下行、基点有哪些看点？", "存款准备金率下降的原因是什么？", "DR001DR007有哪些变化？"):
        assert complete_query(q, company=None, passage_text=passage, title=report["title"], date=date) == q
    gen = TemplateGenerator()
    subject = title_subject(report["title"])  # 利率债周报 -> 利率债: what the generator asks about
    assert subject == "利率债"
    pq = gen.passage_query(passage, subject, key="s31#p0", date=date)
    assert "2002" not in pq  # (no passage query at all: its policy event is undated, 「利率债受到哪些政策影响？」 is vague)
    for i, sent in enumerate(passage.split("。")):
        assert "2002" not in gen.sentence_query(sent, subject, key=f"s31#p0#s{i}", date=date)


def test_years_far_before_the_report_date_are_ignored():
    text = "2018年信用债发行规模同比增长20%，2018年城投债融资额上升。"
    assert dominant_year(text) == 2018
    assert dominant_year(text, dt.date(2023, 12, 4)) is None
    assert dominant_year(text, dt.date(2020, 1, 1)) == 2018
    assert recent_year(2020, dt.date(2023, 1, 1)) and not recent_year(2019, dt.date(2023, 1, 1))
    assert complete_query("信用债发行情况如何？", company=None, passage_text=text,
                          date=dt.date(2023, 12, 4)) == "信用债发行情况如何？"


def test_add_period_still_adds_to_a_query_with_only_a_reference_year():
    assert add_period("创2002年以来新低的原因是什么？", 2024) == "2024年创2002年以来新低的原因是什么？"


def test_a_bare_part_beside_only_an_earlier_comparison_year_is_of_the_reports_latest_such_part():
    from fincprg.finance.reporting_period import part_year

    # read three times as 「2019年前三季度」 where the passage compares 2020 with 2019
    text = "公司前三季度实现签约金额737亿元，销售均价同比增长3%。拿地强度34%（2019年26%）。"
    assert part_year("Q1-Q3", text) == 2019  # no date: the one year written
    assert part_year("Q1-Q3", text, date=dt.date(2020, 10, 26)) == 2020
    assert part_year("Q1-Q3", text, date=dt.date(2020, 3, 1)) == 2019  # 2020's first three quarters had not ended
    assert part_year("Q1-Q3", "2019年前三季度营收10亿元", date=dt.date(2020, 10, 26)) == 2019  # dated: kept


def test_a_comparison_base_is_no_reporting_year_of_the_passage():
    """A 2022–2023 review measured against 2019 again and again is not about 2019 (春秋航空's 2023Q1 profit asked
    as 2019's, a learn-part reading's wrong_period), and a year written only as a base gives no year."""
    from fincprg.finance.reporting_period import dominant_year

    review = ("22年录得亏损，但23年Q1扭亏为盈，实现归母净利3.56亿。22年营收同比下降22.9%，较19年下滑43.5%。23年Q1营收"
              "同比上升63.6%（较19年同期上涨6.1%），单位营收较19年同期上升10.4%，同比19年仅略升9.9%。")
    assert dominant_year(review) != 2019
    assert dominant_year("公司2021年营收30亿元，较2019年增长20%。") == 2021
    assert dominant_year("营收较2019年增长20%。") is None


def test_a_day_gets_its_year_before_the_day_never_a_part_of_a_year_in_front_of_the_company():
    # an industry report's query about another company than the report's: the year goes before the day
    ctx = ("1月7日午间收盘，国芯科技市值117.29亿元。", "")
    q = "国芯科技1月7日市值是多少？"
    assert add_period(q, 2022, "当升科技", context=ctx, date=dt.date(2022, 3, 1)) == "国芯科技2022年1月7日市值是多少？"
    # the passage's quarter is no period of a November day
    assert add_period("美的集团11月14日市值是多少？", Period(2020, "Q1"), "美的集团",
                      context=("2020年一季度营收…11月14日收盘", ""), date=dt.date(2020, 5, 1)) \
        == "美的集团2019年11月14日市值是多少？"
    # the year written with the day in the passage wins; a day far before the report's date gets none
    assert add_period(q, 2022, None, context=("2021年1月7日，国芯科技市值…", ""), date=dt.date(2022, 3, 1)) \
        == "国芯科技2021年1月7日市值是多少？"
    assert add_period(q, 2022, None, context=ctx, date=dt.date(2022, 12, 1)) == q


def test_a_bare_part_in_a_passage_two_years_older_than_the_report_is_of_no_year():
    from fincprg.finance.reporting_period import part_year

    # a full-length report of 2021-11 keeps a 2019 section: its 三季度 is 2019's or 2020's, not 2021's
    text = "三季度公司销售费用率为6.2%，2019年前三季度营收46.78亿元。"
    assert part_year("Q3", text, date=dt.date(2021, 11, 20)) is None
    assert part_year("Q3", text, date=dt.date(2020, 11, 20)) == 2020  # a year before: still the comparison base
