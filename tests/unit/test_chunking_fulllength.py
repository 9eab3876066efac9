"""Cleaning full-length reports that lost their layout (issue 48): flattened to one line, or hard-wrapped.

Each test here fails on the line-only cleaner: it judged a flattened report as one line, and one legal phrase
in it removed 99% of the report.
"""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from fincprg.chunking.clean import clean_and_cut, normalize
from fincprg.chunking.headers import running_header_spans
from fincprg.chunking.reflow import units, wrap_width
from fincprg.config import CHUNK_RULES
from fincprg.records import Report
from tests.unit._fulllength import full_report, score
from tests.unit.test_chunking_rules import _chunk_stage, _lines

ALL = frozenset(CHUNK_RULES)
BODY = ["事件：星河科技发布2023年年度报告，全年实现营业收入52.18亿元，同比增长14.4%。",
        "AI芯片收入占比快速提升，产品结构持续优化，毛利率同比提升1.2个百分点至43.6%。",
        "公司在业绩说明会上表示，第三代AI推理芯片已于2023年12月完成流片。",
        "海外收入为9.36亿元，同比增长31.2%，占比提升至17.9%。",
        "我们预计公司2024年归母净利润为9.68亿元，对应当前股价PE为35.2倍。",
        "客户结构持续多元化，前五大客户收入占比为48.3%，较上年下降7.4个百分点。"]


def _nonspace(s: str) -> int:
    return sum(1 for c in s if not c.isspace())


def clean(text: str, passage_chars: int = 500) -> tuple[str, list]:
    cands, removed = clean_and_cut(text, passage_chars=passage_chars, min_passage_chars=40, rules=ALL)
    return "\n".join(c.text for c in cands), removed


@pytest.mark.parametrize("kind", ["flat", "wrapped"])
@pytest.mark.parametrize("i", [0, 2, 5, 11])
def test_full_length_report_loses_its_boilerplate_and_keeps_its_body(i, kind):
    r = full_report(i)
    text = getattr(r, kind)
    kept, removed = clean(text)
    sc = score(r, kept, sum(_nonspace(x.text) for x in removed))
    assert sc["body_kept"] >= 0.98, sc
    assert sc["boiler_kept"] <= 0.01, sc
    assert abs(sc["removed_share"] - sc["boiler_share"]) <= 0.02, sc  # issue 48: within 5 points
    assert _nonspace(kept) + sum(_nonspace(x.text) for x in removed) == _nonspace(text)  # nothing lost


@pytest.mark.parametrize("i", [0, 5, 11])
def test_line_breaks_put_back_after_each_sentence(i):
    """Issue 48's second measure: the PDF text with a line break after each 。 and around the page headers.
    The headers say the report is paged, so its short lines are cut and judged like the flattened report's."""
    r = full_report(i)
    kept, removed = clean(r.lined)
    sc = score(r, kept, sum(_nonspace(x.text) for x in removed))
    assert sc["body_kept"] >= 0.98 and sc["boiler_kept"] <= 0.01, sc


@pytest.mark.parametrize("width,page_chars", [(33, 2000), (80, 700), (60, 500)])
def test_other_widths_and_page_counts(width, page_chars):
    """Two-digit page numbers (60/500 makes 27 pages), wide and narrow wraps."""
    r = full_report(3, width=width, page_chars=page_chars)
    for text in (r.flat, r.wrapped):
        kept, removed = clean(text)
        sc = score(r, kept, sum(_nonspace(x.text) for x in removed))
        assert sc["body_kept"] >= 0.98 and sc["boiler_kept"] <= 0.01, sc


def _paged(header: str, pages: int = 5) -> tuple[str, list[str]]:
    """BODY sentences laid on pages, each page after the first opening with ``header`` in mid-sentence."""
    text, body = "", []
    for k in range(1, pages + 1):
        s = BODY[k % len(BODY)].replace("。", f"，第{k}页的数据与上页不同。")
        body.append(s)
        if k == 1:
            text += s
        else:  # the header splits this page's sentence after its first 9 characters
            text += s[:9] + header.format(k=k, n=pages) + s[9:]
    return text, body


@pytest.mark.parametrize("header", [
    "华辰证券·公司研究 请务必阅读正文后免责条款 {k}/{n}",
    "生物医药·行业周报请务必阅读正文后免责条款{k}/{n}",
    "东岳证券研究所 敬请参阅末页重要声明 第{k}页 共{n}页",
    "星河科技（688321）深度报告 {k} / {n}",  # no legal words: found by its repetition and page number
])
def test_inline_running_header_is_cut_out_and_the_sentence_joined(header):
    text, body = _paged(header)
    kept, removed = clean(text)
    for s in body:
        assert s in kept  # whole: the header that split it is gone and the two halves joined
    stem = header.split("{k}")[0].strip()[:6]
    assert stem not in kept
    assert {x.rule for x in removed} == {"noise"}
    assert sum(1 for x in removed if stem in x.text) == 4  # pages 2..5


def test_page_numbers_glued_to_body_digits_go_with_the_header_and_no_more():
    """「…同比增长」+「本报告版权属于…家用电器P10」+「14.4%…」: page 9 is one digit, page 10 two, and the body's
    digits touch them on some pages; the numbers that count up are the header's."""
    body, text = [], ""
    for k in range(1, 13):
        s = BODY[k % len(BODY)].replace("。", f"，第{k}页的数据与上页不同。")
        body.append(s)
        # every third page ends just before a number of the body (repetition cannot tell those digits apart)
        cut = next(i for i, ch in enumerate(s) if ch.isdigit() and i > 5) if k % 3 == 0 else 9
        text += s if k == 1 else s[:cut] + f"本报告版权属于云帆证券股份有限公司家用电器P{k}" + s[cut:]
    kept, removed = clean(text)
    assert all(s in kept for s in body), kept
    assert "P1" not in kept and "版权" not in kept


def test_legal_paragraphs_without_a_heading_go_as_a_run():
    legal = ("本报告所载的资料、意见及推测仅反映本公司于发布本报告当日的看法。"
             "本报告的信息来源于已公开的资料，本公司对该等信息的准确性不作任何保证。"
             "本公司及其所属关联机构可能会持有报告中提到的公司所发行的证券头寸并进行交易。"
             "投资者应当充分考虑本公司可能存在影响本报告客观性的利益冲突。")
    text = "".join(BODY * 3) + legal + "".join(BODY * 2)
    kept, removed = clean(text)
    assert all(s in kept for s in BODY)
    assert "本公司" not in kept and sum(_nonspace(x.text) for x in removed) == _nonspace(legal)


def test_chart_text_between_caption_and_source_goes_with_the_caption():
    lines = [*(s for s in BODY for _ in range(2)), "图表3：星河科技营业收入及同比增速", "营业收入（亿元） 同比（%，右轴）",
             "2019 2020 2021 2022 2023", "资料来源：Wind，华辰证券研究所", *BODY]
    rows = []
    for ln in lines:  # hard-wrapped at 24 Chinese characters
        rows += [ln[j:j + 24] for j in range(0, len(ln), 24)]
    kept, removed = clean("\n".join(rows))
    assert all(s in kept for s in BODY)
    assert "右轴" not in kept and "图表3" not in kept and "资料来源" not in kept


def test_flattened_sidebar_fields_are_cut_apart_and_removed():
    sidebar = ("报告日期：2024-08-20公司评级：增持（维持）6个月目标价：31.23元当前股价：22.18元（2024-08-20）股票数据"
               "总股本（亿股）：3.39流通股本（亿股）：2.26总市值（亿元）：75.19相关报告1.《星河科技：估值处于历史低位》"
               "2024-10-082.《星河科技：产能释放驱动成长》2023-04-12")
    text = "".join(BODY * 2) + sidebar + "".join(BODY * 2)
    kept, removed = clean(text)
    assert all(s in kept for s in BODY)
    assert "总股本" not in kept and "《" not in kept and "2024-08-20" not in kept
    assert {x.rule for x in removed} == {"sidebar"}


def test_header_finder_ignores_fractions_and_lone_phrases():
    text = ("营收4.00/3.20亿元，2024E/2025E增速分别为20%/18%。请务必阅读正文后的免责声明。" * 2)
    assert running_header_spans(text) == []
    # repeated past MIN_REPEATS, with no legal phrase: only the guards against k/n-like fractions keep it body
    assert running_header_spans("营收4.00/3.20亿元，2024E/2025E增速分别为20%/18%。" * 6) == []


def test_disclaimer_is_removed_as_a_block_never_the_report():
    legal = ("免责声明：本报告仅供华辰证券的客户使用，本公司不会因接收人收到本报告而视其为客户。"
             "本报告所载资料的来源被认为是可靠的，但本公司不保证其准确性或完整性。"
             "报告中的信息和意见仅供参考，并不构成对所述证券买卖的出价或询价。"
             "投资评级说明：买入，相对同期沪深300指数涨幅20%以上；增持，相对涨幅介于5%与20%之间；"
             "中性，相对涨跌幅介于-5%与5%之间。"
             "本报告版权归华辰证券所有，未经书面许可，任何机构和个人不得翻版、复制或发表。")
    text = "".join(BODY * 5) + legal  # one line, ~1.9k characters
    kept, removed = clean(text)
    assert all(s in kept for s in BODY)
    assert "本报告" not in kept and "增持" not in kept and "沪深300" not in kept
    gone = sum(_nonspace(x.text) for x in removed)
    assert gone == _nonspace(legal)
    assert {x.rule for x in removed} == {"disclaimer"}


def test_a_legal_sentence_in_the_body_goes_alone():
    legal = "本报告仅供参考，不构成任何投资建议。"
    text = "".join(BODY[:3] * 4) + legal + "".join(BODY[3:] * 4)
    kept, removed = clean(text)
    assert all(s in kept for s in BODY)
    assert [x.text for x in removed] == [legal]


def test_hard_wrapped_sentences_are_joined_across_wraps_and_header_lines():
    body = [s.replace("。", f"，第{k}段的数据各不相同。") for k, s in enumerate(BODY * 2)]
    text = "".join(body)
    rows = [text[j:j + 30] for j in range(0, len(text), 30)]
    lines = []
    for j, row in enumerate(rows):  # a page every 4 lines: footer and header on lines of their own
        if j and j % 4 == 0:
            lines += [f"- {j // 4} -", f"华辰证券·公司研究 请务必阅读正文后免责条款 {j // 4 + 1}/{len(rows) // 4 + 1}"]
        lines.append(row)
    wrapped = "\n".join(lines)
    assert wrap_width(normalize(wrapped).split("\n")) is not None
    kept, removed = clean(wrapped)
    for s in body:
        assert s in kept  # verbatim: no line break left inside a sentence
    assert "请务必" not in kept and "- 1 -" not in kept and {x.rule for x in removed} == {"noise"}


def test_short_line_broken_reports_keep_their_lines_as_units():
    """The bundled sample's reports are judged line by line, exactly as before issue 48."""
    from tests.unit._fulllength import SAMPLE

    for line in SAMPLE.read_text(encoding="utf-8").splitlines()[:10]:
        norm = normalize(json.loads(line)["text"])
        us = units(norm)
        assert [u.text for u in us] == norm.split("\n")
        assert not any(u.sentence or u.header for u in us)


def test_reports_losing_over_half_are_counted_named_and_warned(tmp_path, capsys):
    from fincprg.cli._common import _print_outcomes

    legal = "免责声明：本报告仅供客户使用，不构成任何投资建议。本报告版权归本公司所有，未经书面许可不得转载。"
    reports = [Report(id="ok", title="甲", text="\n".join(BODY)),
               Report(id="heavy", title="乙", text=BODY[0] + "\n" + "\n".join([legal] * 6))]
    counts, d = _chunk_stage(tmp_path, reports)
    assert counts["reports_over_half_removed"] == 1
    assert counts["reports_over_half_removed_ids"] == ["heavy"]
    stats = {st["report_id"]: st for st in _lines(d / "stats.jsonl")}
    assert stats["heavy"]["removed_chars"] > stats["heavy"]["chars"] / 2
    out = tmp_path / "out"
    _print_outcomes([SimpleNamespace(name="chunk", status="done", seconds=1.0, counts=counts)], out)
    cap = capsys.readouterr()
    printed = cap.out + cap.err
    warning = [ln for ln in printed.splitlines() if "more than half" in ln]
    assert len(warning) == 1 and "heavy" in warning[0] and "manifest.json" in warning[0]
    assert "reports_over_half_removed: 1" in printed and "reports_over_half_removed_ids" not in printed.replace(
        warning[0], "")


def test_no_warning_when_no_report_loses_half(tmp_path, capsys):
    from fincprg.cli._common import _print_outcomes

    counts, _ = _chunk_stage(tmp_path, [Report(id="ok", title="甲", text="\n".join(BODY))])
    assert counts["reports_over_half_removed"] == 0 and counts["reports_over_half_removed_ids"] == []
    _print_outcomes([SimpleNamespace(name="chunk", status="done", seconds=1.0, counts=counts)], tmp_path)
    cap = capsys.readouterr()
    assert "more than half" not in cap.out + cap.err


def test_a_footer_naming_the_brokers_research_institute_with_a_space_anchors_the_header():
    # 「云帆证券股份有限公司 研究所」 then the next page's header and number, inline in a sentence (flattened text)
    body = ["营收同比增长12%", "毛利率提升1.2个百分点", "费用率下降", "现金流改善", "估值处于低位", "订单饱满"]
    t = "".join(f"{b}云帆证券股份有限公司 研究所公司研究｜格力电器格力电器{k}。" for k, b in enumerate(body, 2))
    spans = [t[a:b] for a, b in running_header_spans(t)]
    assert len(spans) == len(body) and all(s.startswith("云帆证券股份有限公司 研究所公司研究") for s in spans), spans


def test_a_footer_of_the_research_institute_before_a_bare_page_number_anchors_the_header():
    body = ["营收同比增长12%", "毛利率提升1.2个百分点", "费用率下降", "现金流改善", "估值处于低位"]
    after = ["渠道库存良性。", "动销平稳。", "提价落地。", "新品放量。", "分红提升。"]
    t = "".join(f"{b}松涛证券研究所{k}松涛研究·行业点评报告食品饮料{a}" for k, (b, a) in enumerate(zip(body, after), 1))
    spans = [t[a:b] for a, b in running_header_spans(t)]
    assert spans and all(s.startswith("松涛证券研究所") and s.endswith("食品饮料") for s in spans), spans
    # a source line's institute, or one before a year, anchors nothing
    cited = "".join(f"{b}，数据来源：松涛证券研究所2021年测算。" for b in body)
    assert running_header_spans(cited) == []
