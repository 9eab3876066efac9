"""The full-length report generator (eval/_fullreports.py) and the scoring of issue 48's cleaning benchmark.

Reports are built from datasets/sample (no shared data needed); three reports take well under a second.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("reportlab", reason="reportlab draws the test PDFs: pip install reportlab (test extra)")

from eval import _fullreports as G  # noqa: E402
from eval._fullreports_bodies import _BOILER  # noqa: E402
from eval.bench_fulllength import norm, score_report  # noqa: E402

FURNITURE = ("header", "footer", "page_number")


def _ws(s: str) -> str:
    return re.sub(r"\s+", "", s)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[dict]]:
    out = tmp_path_factory.mktemp("full")
    return out, G.generate(out, 3, seed=7, source="sample")


def test_three_forms_and_truth_are_written(made: tuple[Path, list[dict]]) -> None:
    out, truths = made
    lines = (out / "truth.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(ln)["id"] for ln in lines] == [t["id"] for t in truths]
    for t in truths:
        for form, ext in (("pdf", "pdf"), ("flat", "txt"), ("wrapped", "txt")):
            assert (out / form / f"{t['id']}.{ext}").stat().st_size > 0
    kinds = [t["kind"] for t in truths]
    assert kinds.count("company") >= len(kinds) / 2 and "industry" in kinds


def test_pdf_has_ten_pages_and_a_text_layer(made: tuple[Path, list[dict]]) -> None:
    out, truths = made
    for t in truths:
        data = (out / "pdf" / f"{t['id']}.pdf").read_bytes()
        assert t["pages"] >= 10
        assert len(re.findall(rb"/Type /Page\b", data)) == t["pages"]
        assert b"STSong-Light" in data
    try:
        import pypdfium2
    except ImportError:
        pytest.skip("pypdfium2 is not installed: the text layer was checked by font only")
    t = truths[0]
    doc = pypdfium2.PdfDocument(str(out / "pdf" / f"{t['id']}.pdf"))
    text = _ws("".join(doc[i].get_textpage().get_text_range() for i in range(len(doc))))
    found = sum(_ws(s) in text for s in t["body_sentences"])
    assert found >= 0.9 * len(t["body_sentences"])  # the rest are cut by a page break, as in any PDF


def test_every_form_holds_every_body_sentence_and_segment(made: tuple[Path, list[dict]]) -> None:
    out, truths = made
    for t in truths:
        flat = (out / "flat" / f"{t['id']}.txt").read_text(encoding="utf-8")
        wrapped = (out / "wrapped" / f"{t['id']}.txt").read_text(encoding="utf-8")
        assert "\n" not in flat and _ws(flat) == _ws(wrapped)
        lines = wrapped.split("\n")
        widths = sorted(len(ln) for ln in lines if ln)
        assert 25 <= widths[len(widths) // 2] <= 50 and "" in lines  # hard wraps; a blank line at page breaks
        furniture = {s["text"] for s in t["boilerplate"] if s["category"] in FURNITURE}
        running = _ws("".join(ln for ln in lines if ln not in furniture))
        assert all(_ws(s) in running for s in t["body_sentences"])
        assert all(_ws(s["text"]) in _ws(flat) for s in t["boilerplate"])
        for cat in FURNITURE:  # running headers and page numbers sit on every page but the cover
            assert sum(s["category"] == cat for s in t["boilerplate"]) >= t["pages"] - 1


def test_truth_categories_add_up_and_body_is_clean(made: tuple[Path, list[dict]]) -> None:
    _, truths = made
    for t in truths:
        c = t["chars"]
        assert set(c["by_category"]) == set(G.CATEGORIES)
        assert c["boilerplate"] == sum(c["by_category"].values())
        assert c["body"] == sum(len(_ws(s)) for s in t["body_sentences"])
        assert c["all"] == c["body"] + c["boilerplate"] + c["neutral"]
        assert {s["category"] for s in t["boilerplate"]} <= set(G.CATEGORIES)
        assert all(c["by_category"][k] > 0 for k in ("header", "sidebar", "table", "caption", "source",
                                                     "disclaimer", "rating_def", "contact"))
        assert not [s for s in t["body_sentences"] if _BOILER.search(s)]
        assert len(set(t["body_sentences"])) == len(t["body_sentences"])


def test_same_seed_same_reports(made: tuple[Path, list[dict]], tmp_path: Path) -> None:
    out, truths = made
    again = G.generate(tmp_path, 3, seed=7, source="sample")
    assert again == truths
    for t in truths:
        for form, ext in (("pdf", "pdf"), ("flat", "txt"), ("wrapped", "txt")):
            assert (tmp_path / form / f"{t['id']}.{ext}").read_bytes() == (out / form / f"{t['id']}.{ext}").read_bytes()
    G.generate(tmp_path / "other", 1, seed=8, source="sample")
    assert (tmp_path / "other" / "flat" / "fr001.txt").read_text("utf-8") != (out / "flat" / "fr001.txt").read_text(
        "utf-8")


def _truth() -> dict:
    body = ["公司2023年营业收入同比增长12.5%。", "毛利率提升1.2个百分点，盈利能力改善。", "维持买入评级。"]
    boiler = [{"category": "header", "text": "华辰证券·公司深度报告"}, {"category": "page_number", "text": "3/12"}]
    chars = {"header": 11, "page_number": 4}
    return {"id": "r1", "kind": "company", "body_sentences": body, "boilerplate": boiler,
            "neutral": [{"category": "heading", "text": "1. 经营分析"}],
            "chars": {"all": sum(len(s) for s in body) + 15 + 6, "boilerplate": 15, "by_category": chars}}


def test_score_counts_a_lost_sentence_and_a_leaked_header_exactly() -> None:
    t = _truth()
    # kept: sentence 1 wrapped across a line (with a space), the heading, a leaked header; sentence 3 lost
    kept = "1. 经营分析公司2023年营业收入同比\n增长12.5%。华辰证券·公司深度报告毛利率提升1.2个百分点，盈利能力改善。"
    s = score_report(kept, t)
    assert (s["sentences"], s["sentences_kept"], s["lost"]) == (3, 2, ["维持买入评级。"])
    assert s["leak_chars"] == len("华辰证券·公司深度报告") and s["leak_by_category"] == {"header": 11}
    assert s["kept_chars"] == len(norm(kept))


def test_score_keeps_a_cut_sentence_out_of_the_leak() -> None:
    t = _truth()
    s = score_report("公司2023年营业收入同比3/12毛利率提升1.2个百分点，盈利能力改善。", t)
    assert s["sentences_kept"] == 1
    assert s["leak_by_category"] == {"page_number": 4} and s["body_part_chars"] == len("公司2023年营业收入同比")


def test_a_counterpart_shell_or_parent_does_not_make_a_body_its_own() -> None:
    from eval._fullreports_bodies import issuer_hits

    pat = re.compile("大连热电|恒力石化|包钢股份|隆基绿能")
    text = ("康辉新材通过大连热电进行重组上市，恒力石化将成为大连热电控股股东。公司采购控股子公司包钢股份的稀土精矿。"
            "上半年公司出售隆基绿能部分股份。恒力石化发布2022年一季报。")
    assert issuer_hits(text, pat) == {"恒力石化": 2}


def test_a_company_reports_body_is_filed_under_the_issuer_its_opening_names() -> None:
    from eval._fullreports_bodies import issuer_of

    pat = re.compile("宁德时代|先导智能")
    # a supplier's report naming its customer most, but only after an opening that names no company
    supplier = "公司公布2020年业绩：收入23.85亿元。" + "公司订单饱满。" * 30 + "宁德时代订单14.4亿元，宁德时代扩产带动需求。"
    assert issuer_of(supplier, pat) is None
    own = "事件：先导智能发布2020年年报，公司实现收入58.58亿元。先导智能获宁德时代订单。" + "公司订单饱满。" * 30
    assert issuer_of(own, pat) == "先导智能"
    # a news item that never says 公司 is filed under whom it names most
    assert issuer_of("行业新闻。" * 40 + "宁德时代扩产，宁德时代新基地开工。", pat) == "宁德时代"


def test_an_industry_report_holds_no_body_about_an_unnamed_company() -> None:
    from eval._fullreports import _unnamed

    assert _unnamed([["公司2020年上半年实现营收8.11亿元。"]])
    assert not _unnamed([["2020年上半年行业营收增长8%，子公司数量增加。"]])
    # ... a news item about an unnamed company is no exception, nor is the fallback padding
    import random

    pools = G.load_pools("sample")
    unnamed = [["事件具体内容：公司以提高人类健康生活品质为宗旨，致力于营养强化剂的创新。"]]
    for bs in pools.industry_bodies.values():
        bs.append(unnamed)
    for meta in (m for m in G.plan(pools, 6, seed=2) if m.report_type != "company"):
        assert id(unnamed) not in G.gather(random.Random(3), pools, meta, 100000)[3]


def test_a_draw_takes_the_fewest_used_bodies_first() -> None:
    import random

    pools = G.load_pools("sample")
    meta = next(m for m in G.plan(pools, 4, seed=1) if m.report_type != "company")
    first = G.gather(random.Random(1), pools, meta, 1500)[3]
    pools.uses.update(first)
    second = G.gather(random.Random(1), pools, meta, 1500)[3]
    named = {id(b) for bs in pools.company_bodies.values() for b in bs}
    # the report's industry's bodies come first (an industry report takes none about an unnamed 公司)
    fitting = {id(b) for b in pools.industry_bodies[meta.industry] if id(b) in named or not G._unnamed(b)}
    unused = len(fitting - set(first))
    # the same seed took the same bodies when nothing counted their use; now it starts with bodies still unused
    assert unused > 0 and second[0] not in first and not set(second[:min(unused, len(second))]) & set(first)
