"""PDF ingest: a reportlab-made sell-side report keeps its body and loses its furniture; bad PDFs are rejects."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("reportlab")
pytest.importorskip("pdfplumber")

from fincprg.ingest.pdf import read_pages  # noqa: E402
from fincprg.ingest.pdf_layout import _join, _Line, clean  # noqa: E402
from tests.pdf_report import make_report, make_scanned  # noqa: E402
from tests.unit.test_ingest import run_ingest  # noqa: E402


def _flat(s: str) -> str:
    return re.sub(r"\s+", "", s)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    path = tmp_path_factory.mktemp("pdf") / "maotai.pdf"
    truth = make_report(path, body_pages=3)
    return path, truth, clean(read_pages(path))


def test_every_body_sentence_is_kept_in_order(report):
    _, truth, doc = report
    body = _flat(doc.body)
    sentences = [_flat(s) for s in truth.body_sentences()]
    assert [s for s in sentences if s.rstrip("。") not in body] == []
    at = 0
    for s in sentences:  # in reading order (some sentences repeat, so each is looked for after the last)
        at = body.find(s.rstrip("。"), at)
        assert at >= 0, s


def test_no_boilerplate_is_kept(report):
    _, truth, doc = report
    body = _flat(doc.body)
    kept = [b for b in truth.boilerplate if len(_flat(b)) > 4 and _flat(b) in body]
    assert kept == []
    for word in ("请务必阅读", "目录", "资料来源", "图表1", "分析师", "免责声明", "投资评级", "营业收入（亿元）", "2022A"):
        assert word not in body, word


def test_removals_are_counted_per_rule(report):
    path, _, doc = report
    by_rule = doc.removed_by_rule()
    assert {"pdf_header", "pdf_page_number", "pdf_sidebar", "pdf_table", "pdf_caption", "pdf_toc",
            "pdf_disclaimer"} <= set(by_rule)
    assert doc.summary()["removed_chars"] == sum(by_rule.values()) < doc.chars
    assert any(r["rule"] == "pdf_page_number" and r["text"] == "2/6" for r in doc.removed)


def test_title_and_date_come_from_the_first_page(report):
    _, truth, doc = report
    assert doc.title == truth.title
    assert truth.title not in doc.body
    assert doc.date == "2023-10-30"


def test_a_sentence_broken_by_a_wrap_is_joined_and_a_heading_is_not():
    lines = [_Line("公司营业收入同比增长", 50, 545, 100, 10.5, 0), _Line("20%。", 50, 90, 118, 10.5, 0),
             _Line("2 渠道改革", 50, 120, 150, 13, 0), _Line("渠道改革持续推进，直销占比提", 50, 545, 170, 10.5, 0),
             _Line("升。", 50, 70, 80, 10.5, 1)]
    assert _join(lines, 10.5).split("\n") == ["公司营业收入同比增长20%。", "2 渠道改革", "渠道改革持续推进，直销占比提升。"]


def test_bad_pdfs_are_rejects_with_a_reason_and_a_fix(tmp_path):
    corpus = tmp_path / "in"
    corpus.mkdir()
    make_report(corpus / "good.pdf", body_pages=1)
    make_scanned(corpus / "scan.pdf")
    (corpus / "broken.pdf").write_bytes(b"%PDF-1.4\nthese bytes are not a PDF\n")
    (corpus / "notes.pdf").write_text("plain text named .pdf", encoding="utf-8")
    make_report(corpus / "locked.pdf", body_pages=1, encrypt="secret")
    counts, reports, rejected = run_ingest(corpus, tmp_path / "out")
    assert [r.id for r in reports] == ["good"]
    why = {r.report_id: r for r in rejected}
    assert {k: r.reason for k, r in why.items()} == {
        "scan": "pdf_no_text", "broken": "pdf_corrupt", "notes": "pdf_corrupt", "locked": "pdf_encrypted"}
    assert "OCR" in why["scan"].detail and "scan.pdf" in why["scan"].detail
    assert "qpdf --decrypt" in why["locked"].detail
    assert counts["rejected_by_reason"] == {"pdf_corrupt": 2, "pdf_encrypted": 1, "pdf_no_text": 1}


def test_ingest_writes_the_removed_segments_and_counts_them(tmp_path):
    corpus = tmp_path / "in"
    corpus.mkdir()
    truth = make_report(corpus / "r1.pdf", body_pages=2)
    counts, reports, _ = run_ingest(corpus, tmp_path / "out")
    (rep,) = reports
    assert (rep.id, rep.title, rep.company, rep.stock_code) == ("r1", truth.title, "贵州茅台", "600519")
    assert str(rep.date) == "2023-10-30"
    layout = rep.meta["_layout"]
    pdf = counts["pdf"]
    assert pdf["reports"] == 1 and pdf["pages"] == layout["pages"] == 5
    assert pdf["removed_by_rule"] == layout["removed_by_rule"] and 0.15 < pdf["removed_share"] < 0.6
    removed = [json.loads(x) for x in (tmp_path / "out" / "ingest" / "layout_removed.jsonl").read_text().splitlines()]
    assert {r["rule"] for r in removed} == set(pdf["removed_by_rule"])
    assert sum(len(_flat(r["text"])) for r in removed) == pdf["removed_chars"]
    assert "_layout_removed" not in rep.meta
