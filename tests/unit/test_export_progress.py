"""Export's BM25 hard-negative mining: finance tokens, and tqdm bars that follow show_progress."""
from __future__ import annotations

import fincprg.export.negatives as negatives
from fincprg.config import load_config
from fincprg.finance import tokenize
from fincprg.pipeline.runner import STAGE_BY_NAME, StageContext
from tests.unit.test_export import write_build

TEXTS = ["贵州茅台营业收入同比增长", "宁德时代毛利率提升", "招商银行净息差收窄", "比亚迪销量创新高"]


def test_bm25_uses_finance_tokenize_without_fallback(monkeypatch):
    assert negatives.tokenize is tokenize  # the shared tokenizer, imported directly
    assert not hasattr(negatives, "finance_tokenizer")  # the plain-jieba fallback is gone
    seen: list[str] = []

    def spy(text: str, **kw) -> list[str]:
        seen.append(text)
        return tokenize(text, **kw)

    monkeypatch.setattr(negatives, "tokenize", spy)
    got = negatives.bm25_negatives(["贵州茅台毛利率"], [{0}], TEXTS, 2)
    assert set(seen) == {*TEXTS, "贵州茅台毛利率"}
    assert got == [[1]]  # 宁德时代毛利率: shares a finance token; the positive 0 is never returned


def test_bm25_progress_bars_only_when_asked(capsys):
    negatives.bm25_negatives(["营业收入", "毛利率"], [set(), set()], TEXTS, 1, show_progress=False)
    assert "BM25 negatives" not in capsys.readouterr().err
    negatives.bm25_negatives(["营业收入", "毛利率"], [set(), set()], TEXTS, 1, show_progress=True)
    err = capsys.readouterr().err
    assert "export: BM25 negatives, queries" in err and "2/2" in err


def _export(out, show: bool) -> None:
    from fincprg.export.stage import run

    cfg = load_config(None, ["export.hf=false"])
    ctx = StageContext(STAGE_BY_NAME["export"], out, cfg, "sig", show_progress=show)
    ctx.dir.mkdir(parents=True, exist_ok=True)
    run(ctx)


def test_export_stage_passes_show_progress_down(tmp_path, capsys):
    write_build(tmp_path / "quiet")
    _export(tmp_path / "quiet", show=False)
    assert "BM25 negatives" not in capsys.readouterr().err
    write_build(tmp_path / "loud")
    _export(tmp_path / "loud", show=True)
    assert "export: BM25 negatives, queries" in capsys.readouterr().err
