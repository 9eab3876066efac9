"""Issue 49: the query mix (titles, crops), MarginMSE, the title dev split and the fixed merge weight, down to a
tiny random BERT trained through the real CLI path."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from fincprg.errors import ConfigError, InputError
from fincprg.train.data import Pairs, load_pairs
from fincprg.train.mix import crop_pairs, mix_pairs, parse_mix, record, shuffled_positives, title_pairs
from tests.tiny_bert import DIGIT_PIECES, tiny_bert

COMPANIES = ["星河科技", "康宁生物", "恒芯存储", "华辰电子", "远航汽车", "金石矿业", "青山能源", "明德医药"]
SENTENCES = ["公司营业收入同比增长百分之二十。", "毛利率提升至百分之三十五左右。", "我们维持买入评级不变。"]


def _titled_beir(folder: Path, reports: int = 6, untitled: tuple[int, ...] = ()) -> Path:
    """Reports r0..r{n-1}, three passages of three sentences each; r{n-1} is the test report."""
    corpus = []
    for r in range(reports):
        title = "" if r in untitled else f"{COMPANIES[r]}（{688321 + r}）：业绩稳健增长"
        for i in range(3):
            text = "".join(SENTENCES[(i + j) % 3].replace("公司", f"公司{r}") for j in range(3))
            corpus.append({"_id": f"r{r}#p{i}", "title": title, "text": text, "report_id": f"r{r}"})
    queries = [{"_id": f"q{r}{i}", "text": f"公司{r}第{i}段说了什么", "level": "sentence" if i else "passage"}
               for r in range(reports) for i in range(3)]
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in corpus), "utf-8")
    (folder / "queries.jsonl").write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in queries), "utf-8")
    train = [(f"q{r}{i}", f"r{r}#p{i}") for r in range(reports - 1) for i in range(3)]
    test = [(f"q{reports - 1}{i}", f"r{reports - 1}#p{i}") for i in range(3)]
    for name, rows in (("all-train.tsv", train), ("all-test.tsv", test)):
        (folder / "qrels" / name).write_text(
            "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t1\n" for q, d in rows), "utf-8")
    return folder


def test_parse_mix_names_the_kinds():
    assert parse_mix("titles, generated") == ("generated", "titles")
    for bad in ("", "generated,human", "crop"):
        with pytest.raises(ConfigError, match="--mix"):
            parse_mix(bad)


def test_title_pairs_show_bare_passages_of_training_reports_only(tmp_path):
    from fincprg.train.dev import split_dev

    pairs = load_pairs(_titled_beir(tmp_path / "ds"), ["all"])
    train, dev = split_dev(pairs, 0.3)
    titled = title_pairs(train)
    reports = {train.report_of[p] for _, p, _ in titled}
    assert reports and not reports & set(dev.reports) and "r5" not in reports  # never a dev or test report
    for title, pid, text in titled:
        assert title == train.titles[train.report_of[pid]] and text == train.bare[pid] and title not in text
    mixed = mix_pairs(train, ("generated", "titles"))
    assert mixed.kinds() == {"generated": len(train), "titles": len(titled), "crops": 0}
    assert len(train.queries) == len(train)  # the input is left as it was
    # a title query's negatives are bare passages too, like its positive
    q = titled[0][0]
    other = next(p for p in train.pool if train.report_of[p] != train.report_of[titled[0][1]])
    assert mixed.text(other, q) == train.bare[other] and mixed.text(other, "x") == train.pool[other]
    assert mixed.untitled(train.pool[other]) == train.bare[other]


def test_crops_remove_the_sentence_from_its_passage(tmp_path):
    pairs = load_pairs(_titled_beir(tmp_path / "ds"), ["all"])
    crops = crop_pairs(pairs, seed=1)
    assert len(crops) == len(pairs.pool)  # one per training passage
    for sentence, pid, text in crops:
        assert sentence in pairs.bare[pid] and sentence not in text
        assert text.startswith(pairs.titles[pairs.report_of[pid]] + "\n")
    assert crop_pairs(pairs, seed=1) == crops  # seeded


def test_titles_on_an_untitled_corpus_is_refused_and_the_mix_is_recorded(tmp_path):
    ds = _titled_beir(tmp_path / "ds", untitled=tuple(range(6)))
    pairs = load_pairs(ds, ["all"])
    with pytest.raises(InputError, match="no training report has a title"):
        mix_pairs(pairs, ("generated", "titles"))
    mixed = mix_pairs(pairs, ("crops",))
    rec = record(ds, mixed, ("crops",))
    assert rec["pairs"]["generated"] == 0 and rec["pairs"]["crops"] == len(mixed) and rec["levels"] == {}
    rec = record(ds, pairs, ("generated",))
    assert rec["levels"] == {"passage": 5, "sentence": 10}  # every level the --subset let in


def test_shuffled_positives_keep_the_queries_and_move_the_passages(tmp_path):
    pairs = load_pairs(_titled_beir(tmp_path / "ds"), ["all"])
    control = shuffled_positives(pairs, 3)
    assert control.queries == pairs.queries and sorted(control.positives) == sorted(pairs.positives)
    assert control.positives != pairs.positives


def test_fixed_merge_weight_without_titles_is_recorded():
    import torch

    from fincprg.train.merge import FIXED_ALPHA, merge

    tuned, base = torch.nn.Linear(2, 2), torch.nn.Linear(2, 2)
    want = {k: FIXED_ALPHA * v + (1 - FIXED_ALPHA) * base.state_dict()[k] for k, v in tuned.state_dict().items()}
    rec = merge(tuned, base.state_dict(), "auto", None)
    assert rec["alpha"] == FIXED_ALPHA and rec["chosen_by"].startswith("fixed weight")
    assert all(torch.allclose(v, want[k]) for k, v in tuned.state_dict().items())


def test_margin_mse_matches_teacher_margins_on_the_kl_scale(tmp_path):
    import torch
    from sentence_transformers import SentenceTransformer

    from fincprg.train.distill import margin_mse_loss

    st = SentenceTransformer(tiny_bert(tmp_path / "m", ["公", "司"]), device="cpu")
    loss = margin_mse_loss(st, 0.05, 0.1)
    q, p, n = (torch.nn.functional.normalize(torch.randn(2, 4), dim=-1) for _ in range(3))
    labels = torch.tensor([[1.0, 0.25], [1.0, 0.5]])
    got = loss.compute_loss_from_embeddings([q * 3, p, n], labels)  # any length: cosines are taken
    student = ((q * p).sum(-1) - (q * n).sum(-1)) / 0.05
    teacher = (labels[:, 0] - labels[:, 1]) / 0.1
    assert torch.isclose(got, ((student - teacher) ** 2).mean(), rtol=1e-5)


def test_train_marginmse_on_the_mix_chooses_by_dev_titles(tmp_path):
    """The real path: a tiny BERT, --loss marginmse over generated + title + crop pairs, the dev split's titles
    choose the checkpoint and the merge weight, and fincprg_train.json records the mix, the proxy and memory."""
    from typer.testing import CliRunner

    from fincprg.cli import app

    ds = _titled_beir(tmp_path / "ds")
    chars = sorted({c for line in (ds / "corpus.jsonl").read_text("utf-8").splitlines()
                    for c in json.loads(line)["text"] + json.loads(line)["title"]} | set("第段说了什么"))
    model = tiny_bert(tmp_path / "m", [*DIGIT_PIECES, *chars], positions=128)
    out = tmp_path / "out"
    res = CliRunner().invoke(app, [
        "train", str(ds), "-m", model, "-o", str(out), "--loss", "marginmse", "--teacher", "bm25", "--negatives", "2",
        "--mix", "generated,titles,crops", "--dev-fraction", "0.3", "--merge-base", "auto", "--batch-size", "8",
        "--max-seq-length", "48", "--save-steps", "2", "--log-steps", "1", "--no-compare", "-q",
        # frozen embeddings under checkpointing: no layer input needs a gradient, yet the layers must still get one
        "--freeze-embeddings", "--gradient-checkpointing"])
    assert res.exit_code == 0, res.output
    s = json.loads((out / "fincprg_train.json").read_text("utf-8"))
    assert s["mix"]["kinds"] == ["generated", "titles", "crops"] and all(s["mix"]["pairs"].values())
    assert s["dev"]["proxy"] == "titles" and s["dev"]["queries"] == s["dev"]["reports"] >= 1
    assert s["merge"]["chosen_by"] == "dev titles (human-written)" and len(s["merge"]["dev_ndcg@10"]) == 5
    assert set(s["memory_gb"]) == {"rows", "model", "train"} and s["seconds_per_step"] > 0
    assert all(r["grad_norm"] > 0 for r in s["log"]) and "mix: generated" in res.output
    assert s["settings"]["gradient_checkpointing"] is True
