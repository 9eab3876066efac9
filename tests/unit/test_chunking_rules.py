"""One test per cleaning rule, plus the quality scorers and the chunk stage's counts."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from fincprg.chunking.clean import clean_and_cut, normalize
from fincprg.chunking.quality import HeuristicScorer, TransformersScorer, make_scorer
from fincprg.config import CHUNK_RULES, QualityConfig, load_config
from fincprg.errors import BackendError
from fincprg.pipeline.runner import STAGE_BY_NAME, StageContext
from fincprg.records import Report

ALL = frozenset(CHUNK_RULES)
BODY = ("事件：公司发布2023年年报，全年实现营业收入52.18亿元，同比增长14.4%；归母净利润7.86亿元，同比增长9.7%。"
        "AI芯片收入占比快速提升，产品结构持续优化，毛利率同比提升1.2个百分点至43.6%。")


def clean(text: str, rules=ALL, passage_chars: int = 500):
    cands, removed = clean_and_cut(text, passage_chars=passage_chars, min_passage_chars=20, rules=rules)
    return "\n".join(c.text for c in cands), removed


def rules_of(removed) -> set[str]:
    return {r.rule for r in removed}


@pytest.mark.parametrize("rule,line", [
    ("caption", "图表1：星河科技营业收入及同比增速（亿元，%）"),
    ("caption", "资料来源：Wind，华辰证券研究所"),
    ("caption", "表2 主要财务指标"),
    ("table", "营业收入 32.15 40.77 45.62 52.18"),
    ("table", "['2019年', '1,234.5', '12.3%', '-']"),
    ("disclaimer", "免责声明：本报告仅供华辰证券的客户使用，不构成任何投资建议。"),
    ("disclaimer", "评级说明：买入，相对涨幅超过15%；增持，相对涨幅介于5%与15%之间。"),
    ("disclaimer", "分析师声明：本人具有中国证券业协会授予的证券投资咨询执业资格。"),
    ("disclaimer", "重要声明：本公司具有中国证监会许可的证券投资咨询业务资格。"),
    ("analyst_intro", "分析师：张明远，清华大学硕士，执业证书编号：S0570519080001"),
    ("analyst_intro", "研究助理：李四 SAC执业证书编号 S0570522010001"),
    ("sidebar", "总股本（亿股）：4.00"),
    ("sidebar", "52周最高/最低（元）：70.20/45.10"),
    ("sidebar", "2.《星河科技：三季报点评，AI芯片加速放量》2023-10-30"),
    ("disclaimer", "特别提示：本报告仅供华辰证券的客户使用。"),
    ("contact", "电话：021-68881234 邮箱：research@hcsec.com"),
    ("contact", "地址：上海市浦东新区世纪大道100号"),
    ("url", "http://www.hcsec.com.cn/research/report?id=1"),
    ("noise", "第 3 页 共 20 页"),
    ("noise", "- 12 -"),
    ("noise", "请务必阅读正文之后的免责声明部分"),
])
def test_each_line_rule_removes_and_names_itself(rule, line):
    kept, removed = clean(BODY + "\n" + line + "\n" + BODY)
    assert line.strip() not in kept
    assert rule in rules_of(removed), removed
    assert kept.count("营业收入52.18亿元") == 2  # the body around it survives


@pytest.mark.parametrize("rule", ["caption", "table", "disclaimer", "analyst_intro", "sidebar", "contact", "url"])
def test_disabled_rule_keeps_its_text(rule):
    samples = {
        "caption": "图表1：星河科技营业收入及同比增速（亿元，%）", "table": "营业收入 32.15 40.77 45.62 52.18",
        "disclaimer": "免责声明：本报告仅供客户使用，不构成任何投资建议。",
        "analyst_intro": "分析师：张明远，执业证书编号：S0570519080001",
        "contact": "邮箱：research@hcsec.com", "url": "https://www.hcsec.com.cn/research",
        "sidebar": "总市值（亿元）：209.20",
    }
    kept, removed = clean(BODY + "\n" + samples[rule], rules=ALL - {rule})
    assert rule not in rules_of(removed)


def test_spans_inside_a_long_line_remove_only_the_span():
    line = BODY + "更多研究报告请访问：http://www.hcsec.com.cn/research 如有疑问请致电：021-68881234。" + BODY
    kept, removed = clean(line)
    assert "http" not in kept and "68881234" not in kept
    assert kept.count("营业收入52.18亿元") == 2
    assert {"url", "contact"} <= rules_of(removed)


def test_disclaimer_block_under_a_heading():
    text = BODY + "\n免责声明\n本报告仅供本公司客户使用。本公司不会因接收人收到本报告而视其为客户。\n" \
                  "本报告版权归华辰证券所有，未经书面许可不得复制。\n投资者应当独立判断。"
    kept, removed = clean(text)
    assert "本报告" not in kept and "营业收入" in kept
    block = [r for r in removed if r.rule == "disclaimer"]
    assert len(block) == 1 and block[0].text.count("\n") == 3  # one record for the whole block


def test_analyst_intro_block_under_a_heading():
    text = BODY + "\n分析师简介\n张明远：清华大学微电子学硕士，2019年加入华辰证券研究所，5年行业研究经验。\n" + BODY
    kept, removed = clean(text)
    assert "清华大学" not in kept and kept.count("营业收入") == 2
    assert "analyst_intro" in rules_of(removed)


def test_table_header_row_goes_with_the_grid():
    text = BODY + "\n产品 2022前三季度 2023前三季度 同比\n臻藏系列 55.97 68.45 22.3%\n次高端系列 20.02 22.36 11.7%\n" + BODY
    kept, removed = clean(text)
    assert "臻藏系列" not in kept and "2022前三季度" not in kept
    assert [r.rule for r in removed] == ["table"]


def test_passage_level_table_when_digits_dominate():
    grid = "，".join(f"{i}.{i}%" for i in range(10, 80))  # one long line of numbers, no spaces
    kept, removed = clean(BODY * 3 + "\n" + grid, passage_chars=120)
    assert "table" in rules_of(removed) and "45.45%" not in kept


def test_passage_level_disclaimer_when_legal_language_dominates():
    legal = ("本报告仅供参考，不构成任何投资建议。投资者据此做出的任何投资决策与本公司无关。"
             "本报告版权归本公司所有，未经书面许可不得转载。")
    kept, removed = clean(BODY + "\n" + "正文如下：" + legal * 2, passage_chars=60)
    assert "disclaimer" in rules_of(removed) and "版权归" not in kept


def test_repeated_header_lines_are_noise():
    text = "\n".join(["华辰证券研究所 | 公司深度", BODY] * 4)
    kept, removed = clean(text, passage_chars=200)
    assert "公司深度" not in kept and "noise" in rules_of(removed)


def test_normalize_spaces_and_fullwidth_digits():
    assert normalize("营收\u3000４６．５１亿元\u00a0 ，同比＋３９．７％\r\n\r\n\n下一段\u200b") == \
        "营收 46.51亿元 ，同比＋39.7%\n下一段"


def test_heuristic_quality_scores():
    s = HeuristicScorer()
    good, garbled, english, repeated = s.score([
        BODY, "@@##$$%%^^&&**(()))__++==--" * 3, "The company reported revenue growth of 14% in 2023." * 2,
        "买入买入买入买入" * 20,
    ])
    assert good < 0.5 and garbled > 0.5 and english > 0.5 and repeated > 0.5


def test_quality_rule_removes_low_scoring_passages():
    text = BODY + "\n" + "Lorem ipsum dolor sit amet, consectetur adipiscing elit. " * 4
    cands, removed = clean_and_cut(text, passage_chars=120, min_passage_chars=20, rules=ALL)
    assert not removed and len(cands) >= 2
    scores = HeuristicScorer().score([c.text for c in cands])
    assert scores[0] == pytest.approx(0.0) and all(sc > 0.5 for sc in scores[1:])
    # the chunk stage drops the second one as rule "quality" (test_chunk_stage_records_ids_and_counts)


def _tiny_bert(folder: Path) -> Path:
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    chars = sorted(set(BODY + "x1y2z3买入"))
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + chars + [f"##{d}" for d in range(10)]
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tok = BertTokenizer.from_pretrained(str(folder))
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=32, max_position_embeddings=128, num_labels=2, initializer_range=1.0)
    import torch

    torch.manual_seed(0)
    BertForSequenceClassification(cfg).save_pretrained(str(folder))
    tok.save_pretrained(str(folder))
    return folder


@pytest.mark.slow  # importing torch + transformers takes 10-40 s on a busy 2-core box
def test_transformers_scorer_loads_a_local_bert(tmp_path):
    model = _tiny_bert(tmp_path / "bert")
    scorer = make_scorer(QualityConfig(backend="transformers", model=str(model), batch_size=2, max_length=64))
    assert isinstance(scorer, TransformersScorer)
    texts = [BODY, "x1y2z3" * 5, "买入" * 10]
    scores = scorer.score(texts)
    assert len(scores) == 3 and all(0.0 <= s <= 1.0 for s in scores)
    assert len({round(s, 4) for s in scores}) > 1  # initializer_range=1.0: outputs differ per text
    assert scorer.score(texts[:1])[0] == pytest.approx(scores[0], abs=1e-4)  # batching does not change scores


def test_transformers_scorer_bad_path_is_backend_error(tmp_path):
    with pytest.raises(BackendError, match="chunk.quality.model"):
        make_scorer(QualityConfig(backend="transformers", model=str(tmp_path / "missing")))


def _chunk_stage(tmp_path: Path, reports: list[Report], overrides: list[str] | None = None) -> tuple[dict, Path]:
    from fincprg.chunking.stage import run

    out = tmp_path / "out"
    (out / "ingest").mkdir(parents=True)
    (out / "ingest" / "reports.jsonl").write_text("".join(r.to_json() + "\n" for r in reports), encoding="utf-8")
    cfg = load_config(None, overrides)
    ctx = StageContext(STAGE_BY_NAME["chunk"], out, cfg, "sig", show_progress=False)
    ctx.dir.mkdir(parents=True)
    return run(ctx), ctx.dir


def _lines(p: Path) -> list[dict]:
    return [json.loads(x) for x in p.read_text(encoding="utf-8").splitlines()]


def test_chunk_stage_records_ids_and_counts(tmp_path):
    text = "\n".join([BODY * 4, "图表1：营收", "营业收入 32.15 40.77 45.62 52.18", BODY * 3,
                      "免责声明：本报告仅供客户使用，不构成任何投资建议。", "Lorem ipsum dolor sit amet. " * 8])
    reports = [Report(id="a", title="甲", text=text), Report(id="b", title="乙", text=BODY * 2)]
    counts, d = _chunk_stage(tmp_path, reports, ["chunk.passage_chars=150", "chunk.sentence_chars=40"])
    passages, sentences, removed = (_lines(d / f) for f in ("passages.jsonl", "sentences.jsonl", "removed.jsonl"))
    assert passages[0]["id"] == "a#p0" and sentences[0]["id"] == "a#p0#s0"
    assert all(len(p["text"]) <= 225 for p in passages) and all(len(s["text"]) <= 60 for s in sentences)
    assert {p["passage_id"] for p in [*sentences]} == {p["id"] for p in passages}
    assert all(counts["removed_by_rule"][r] > 0 for r in ("caption", "table", "disclaimer", "quality"))
    assert counts["removed_by_rule"]["url"] == 0  # enabled rules are listed even when they removed nothing
    assert [r["order"] for r in removed if r["report_id"] == "a"] == list(range(counts["removed_spans"]))
    assert counts["reports"] == 2 and counts["passages"] == len(passages) and counts["sentences"] == len(sentences)
    assert 0 < counts["removed_share"] < 0.5 and 0 < counts["passages_removed_share"] < 1
    # nothing is lost: kept + removed characters account for every input character
    nows = lambda s: "".join(s.split())  # noqa: E731
    total = sum(len(nows(r.text)) for r in reports)
    kept = sum(len(nows(p["text"])) for p in passages)
    gone = sum(len(nows(r["text"])) for r in removed)
    assert kept + gone == total
