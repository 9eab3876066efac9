"""Issue 41: the dataset card prints text from the corpus (queries, verify examples, duplicates) escaped, so a
report field holding HTML is shown as text by the hub and by markdown viewers, never run or rendered."""
from __future__ import annotations

import json

from typer.testing import CliRunner

from fincprg.cli import app
from fincprg.export.card import md_text

HOSTILE = '<script>alert("co")</script>'


def test_md_text_escapes_html_and_leaves_plain_text_alone():
    assert md_text(HOSTILE) == '&lt;script&gt;alert("co")&lt;/script&gt;'
    assert md_text("A&B") == "A&amp;B"
    assert md_text("星河科技2023年营收是多少？") == "星河科技2023年营收是多少？"


def test_a_corpus_holding_html_does_not_reach_the_card_as_html(tmp_path, sample_corpus):
    rows = [json.loads(x) for x in (sample_corpus / "reports.jsonl").read_text("utf-8").splitlines() if x]
    for r in rows[:8]:
        r["company"] = HOSTILE
        r["title"] = "<img src=x onerror=alert(1)>" + r["title"]
    corpus = tmp_path / "hostile.jsonl"
    corpus.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "out"
    res = CliRunner().invoke(app, ["build", str(corpus), "-o", str(out), "-q", "--set", "topics.viz=none"])
    assert res.exit_code == 0, res.output
    cards = [out / "dataset" / "README.md", out / "dataset" / "hf" / "README.md"]
    texts = [p.read_text("utf-8") for p in cards]
    assert any("&lt;script&gt;" in t for t in texts)  # the hostile text is there, shown as text
    for p, t in zip(cards, texts):
        assert "<script" not in t and "<img" not in t, p
