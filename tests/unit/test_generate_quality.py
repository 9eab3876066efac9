"""The quality rules of eval/bench_quality.py, and the stock-code industry table."""
from __future__ import annotations

import pytest

from fincprg.errors import ConfigError
from fincprg.finance.stocks import StockTable
from fincprg.generate.quality import check_query

SRC = "2021年公司毛利率较科信下降2.1个百分点，消费电子营业收入23.13亿元。预计公司2022-2024年净利润分别为8.5、10.9、13.4亿元。"


def test_rules_flag_what_a_reader_rejects():
    ok = check_query("星河科技2021年消费电子营业收入是多少？", SRC, subjects=["星河科技"])
    assert all(ok.values()), ok
    assert not check_query("星河科技在毛利率、科信、消费电子方面的情况如何？", SRC, subjects=["星河科技"])["no_phrase_list"]
    assert not check_query("星河科技2021年率较科信有哪些变化？", SRC, subjects=["星河科技"])["no_cut_token"]
    assert not check_query("星河科技2019年营业收入是多少？", SRC, subjects=["星河科技"])["period_in_source"]
    # the report's actual year asked where the text only forecasts it
    assert not check_query("星河科技2023年净利润是多少？", "预计公司2023E净利润8.5亿元", subjects=["星河科技"])[
        "period_in_source"]
    assert check_query("预计星河科技2022-2024年净利润是多少？", SRC, subjects=["星河科技"])["period_in_source"]
    assert not check_query("星河科技营业收入受2022年电价提升影响的原因是什么？", "2022年电价提升，营业收入增长",
                           subjects=["星河科技"])["period_placed"]
    assert not check_query("产后产能达到了多少？", "投产后产能达到10万吨", subjects=["星河科技"])["subject_named"]


def test_stock_table_maps_codes_and_names_to_citic(tmp_path):
    csv = tmp_path / "stocks.csv"
    csv.write_text("ts_code,symbol,name,industry\n603279.SH,603279,景津装备,专用机械\n000001.SZ,000001,平安银行,银行\n"
                   "000002.SZ,000002,万科Ａ,\n", encoding="utf-8")
    t = StockTable(csv)
    assert t.lookup("603279", None) == "机械" and t.lookup("000001.SZ", None) == "银行"
    assert t.lookup(None, "景津装备") == "机械" and t.lookup("000002", "万科Ａ") is None
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="stock_table"):
        StockTable(bad)
    with pytest.raises(ConfigError, match="does not exist"):
        StockTable(tmp_path / "missing.csv")


def test_rules_read_what_a_finance_reader_reads():
    # a verdict against expectations is the question's vocabulary, like a direction
    assert check_query("晨鸣纸业业绩是否符合预期？", "晨鸣纸业（000488）：业绩符合预期", subjects=["晨鸣纸业"])[
        "content_words"]
    assert check_query("终端需求不及预期的风险对星河科技有何影响？", "风险提示：终端需求不及预期。",
                       subjects=["星河科技"])["content_words"]
    # one function character of the frame at the end of a copy (…总额为多少) is no content
    assert check_query("星河科技的应付票据总额为多少？", "应付票据总额为3亿元", subjects=["星河科技"])["content_words"]
    # a bare part in the source is read in the source's latest actual year
    src = "公司公布2020年三季度报告，前三季度实现营业收入74.68亿元"
    assert check_query("星河科技2020年前三季度的营业收入为多少？", src, subjects=["星河科技"])["period_in_source"]
    assert not check_query("星河科技2019年前三季度的营业收入为多少？", src, subjects=["星河科技"])["period_in_source"]
    # 「…的盈利预测」 asks a forecast even though the cue follows the years
    src = "预计2021 2023年EPS分别为0.33、0.37、0.43元"
    assert check_query("星河科技2021-2023年的盈利预测是多少？", src, subjects=["星河科技"])["period_in_source"]
    assert not check_query("星河科技2021年EPS是多少？", src, subjects=["星河科技"])["period_in_source"]


def test_stock_table_finds_the_companies_a_text_names(tmp_path):
    csv = tmp_path / "stocks.csv"
    csv.write_text("ts_code,symbol,name,industry\n600519.SH,600519,贵州茅台,白酒\n000002.SZ,000002,万科Ａ,全国地产\n"
                   "000001.SZ,000001,平安银行,银行\n", encoding="utf-8")
    t = StockTable(csv)
    found = t.mentions("贵州茅台（600519）营收增长；万科A与平安银行另述。茅台（600519.SH）渠道改革。")
    assert [(m.name, m.code, m.count) for m in found] == [
        ("贵州茅台", "600519", 3), ("万科A", "000002", 1), ("平安银行", "000001", 1)]
    assert t.mentions("公司营收增长，毛利率提升") == []
    assert t.lookup(None, "万科Ａ") == t.lookup("000002.SZ", None)
