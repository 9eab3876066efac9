"""Done-when of issue 10: a tiny random model is fine-tuned on the sample dataset for a few steps,
reloaded with sentence-transformers and FlagEmbedding, and evaluated with ``fincprg eval``."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from fincprg.cli import app
from fincprg.train.vocab import is_cjk
from tests.tiny_bert import DIGIT_PIECES, tiny_bert

pytestmark = pytest.mark.slow  # builds the sample corpus once per session (~20 s)


def _tiny_model(folder: Path, dataset: Path) -> tuple[str, set[str]]:
    """A 1-layer BERT whose vocabulary holds every character of the dataset except some CJK ones
    (left out on purpose, for --add-cjk to add back)."""
    chars = sorted({c for name in ("corpus.jsonl", "queries.jsonl")
                    for line in (dataset / name).read_text("utf-8").splitlines()
                    for c in json.loads(line)["text"] + json.loads(line).get("title", "") if not c.isspace()})
    corpus_chars = {c for line in (dataset / "corpus.jsonl").read_text("utf-8").splitlines()
                    for c in json.loads(line)["text"]}
    left_out = set([c for c in chars if is_cjk(c) and c in corpus_chars][::3])  # --add-cjk reads the corpus
    return tiny_bert(folder, [*DIGIT_PIECES, *(c for c in chars if c not in left_out)], positions=128), left_out


def _train(dataset: Path, model: str, out: Path, *extra: str):
    return CliRunner().invoke(app, [
        "train", str(dataset), "-m", model, "-o", str(out), "--max-pairs", "48", "--batch-size", "16",
        "--max-seq-length", "64", "--lr", "1e-3", "--save-steps", "2", "--seed", "7", "-q", *extra])


def test_train_reload_and_eval(sample_dataset, tmp_path):
    from sentence_transformers import SentenceTransformer

    model, left_out = _tiny_model(tmp_path / "tiny", sample_dataset)
    out = tmp_path / "tuned"
    res = _train(sample_dataset, model, out, "--add-cjk", "--eval-on", str(sample_dataset))
    assert res.exit_code == 0, res.output
    assert re.search(rf"\+{len(left_out)} CJK tokens", res.output), res.output
    assert "3 steps" in res.output  # 48 pairs / 16
    table = [ln for ln in res.output.splitlines() if ln.startswith(f"| {sample_dataset}")]
    # the dataset's own test split (trained subset `all`), then every subset of the --eval-on folder
    labelled = [f for f in (sample_dataset / "qrels").glob("*-test.tsv") if len(f.read_text("utf-8").splitlines()) > 1]
    assert table[0].startswith(f"| {sample_dataset} (test) | all |") and len(table) == 1 + len(labelled)
    after = float(table[0].split("|")[5])

    tuned = SentenceTransformer(str(out), device="cpu")
    assert all(tuned.tokenizer.convert_tokens_to_ids(c) != tuned.tokenizer.unk_token_id for c in left_out)
    base = SentenceTransformer(model, device="cpu")
    text = "星河科技2023年营业收入增长的原因是什么？"
    assert not np.allclose(base.encode([text]), tuned.encode([text]), atol=1e-3)  # training moved the weights

    from FlagEmbedding import FlagModel

    flag = FlagModel(str(out), pooling_method="mean", use_fp16=False, devices="cpu")
    assert np.allclose(flag.encode([text])[0], tuned.encode([text], normalize_embeddings=True)[0], atol=1e-4)

    ev = CliRunner().invoke(app, ["eval", str(sample_dataset), "-r", f"dense:{out}", "-s", "all", "-q"])
    assert ev.exit_code == 0, ev.output
    row = next(ln for ln in ev.output.splitlines() if ln.startswith(f"| dense:{out} |"))
    assert float(row.split("|")[6]) == pytest.approx(after, abs=1e-4)  # nDCG@10 column of `fincprg eval`

    summary = json.loads((out / "fincprg_train.json").read_text("utf-8"))
    assert summary["precision"] == "fp32" and summary["device"] == "cpu"
    assert "test_cosine_ndcg@10" in summary["test_eval"]  # the IR evaluator ran on the test split


def test_checkpoints_resume_and_refuse_to_overwrite(sample_dataset, tmp_path):
    model, _ = _tiny_model(tmp_path / "tiny", sample_dataset)
    out = tmp_path / "tuned"
    first = _train(sample_dataset, model, out, "--loss", "cosent", "--eval", "no", "--no-compare")
    assert first.exit_code == 0, first.output
    ckpts = sorted(p.name for p in (out / "checkpoints").glob("checkpoint-*"))
    assert ckpts == ["checkpoint-4", "checkpoint-6"]  # 48 pairs + 48 random negatives / 16; 2 kept
    again = _train(sample_dataset, model, out, "--loss", "cosent", "--eval", "no", "--no-compare")
    assert again.exit_code == 2 and "--resume" in again.output
    shutil.rmtree(out / "checkpoints" / "checkpoint-6")  # as if the run had been killed after step 4
    resumed = _train(sample_dataset, model, out, "--loss", "cosent", "--eval", "no", "--no-compare", "--resume")
    assert resumed.exit_code == 0, resumed.output
    assert "6 steps" in resumed.output and "resumed from checkpoint-4" in resumed.output
    changed = _train(sample_dataset, model, out, "--loss", "mnrl", "--eval", "no", "--no-compare", "--resume")
    assert changed.exit_code == 2 and "loss" in changed.output


@pytest.mark.parametrize("loss", ["mnrl", "cmnrl", "gist", "cgist"])
def test_in_batch_losses_train_on_dense_negatives(sample_dataset, tmp_path, loss):
    model, _ = _tiny_model(tmp_path / "tiny", sample_dataset)
    out = tmp_path / "tuned"
    cached = ["--mini-batch-size", "4"] if loss.startswith("c") else []  # read by the GradCache losses only
    res = _train(sample_dataset, model, out, "--loss", loss, "--negatives-from", "dense", "--neg-range", "3:40",
                 *cached, "--eval", "no", "--no-compare")
    assert res.exit_code == 0, res.output
    summary = json.loads((out / "fincprg_train.json").read_text("utf-8"))
    neg = summary["negatives"]
    assert neg["source"] == "dense" and neg["hard"] > 0 and summary["steps"] == 3


def test_dev_split_keeps_the_best_checkpoint_and_auto_merge_is_scored_on_it(sample_dataset, tmp_path):
    from sentence_transformers import SentenceTransformer

    from fincprg.train.merge import GRID, interpolate

    model, _ = _tiny_model(tmp_path / "tiny", sample_dataset)
    out = tmp_path / "tuned"
    res = _train(sample_dataset, model, out, "--loss", "gist", "--negatives-from", "dense", "--dev-fraction", "0.3",
                 "--save-steps", "2", "--merge-base", "auto", "--no-compare")
    assert res.exit_code == 0, res.output
    assert "dev split:" in res.output and "merged with the base at alpha" in res.output
    s = json.loads((out / "fincprg_train.json").read_text("utf-8"))
    curve, merge = s["dev"]["curve"], s["merge"]
    assert [c["step"] for c in curve] == [0, 2, 3]  # every save, and the last step though 2 does not divide it
    best = max(c["ndcg@10"] for c in curve[1:])
    assert s["dev"]["best_ndcg@10"] == pytest.approx(best, abs=1e-6)
    assert s["dev"]["chosen_checkpoint"] == f"checkpoint-{next(c['step'] for c in curve[1:] if c['ndcg@10'] == best)}"
    # alpha 0 is the base (step 0 of the curve) and alpha 1 the kept checkpoint: both scored the same way
    assert merge["dev_ndcg@10"]["0"] == pytest.approx(curve[0]["ndcg@10"], abs=1e-6)
    assert merge["dev_ndcg@10"]["1"] == pytest.approx(best, abs=1e-6)
    assert merge["alpha"] in GRID and merge["dev_ndcg@10"][f"{merge['alpha']:g}"] == max(merge["dev_ndcg@10"].values())
    merged = SentenceTransformer(str(out), device="cpu")
    unmerged = SentenceTransformer(str(out / "unmerged"), device="cpu")
    base = SentenceTransformer(model, device="cpu")
    want = interpolate(base.state_dict(), unmerged.state_dict(), merge["alpha"])
    assert all(np.allclose(v.numpy(), want[k].numpy(), atol=1e-6) for k, v in merged.state_dict().items())
    # the dev split's reports never reached training: a resume with another dev split is refused
    again = _train(sample_dataset, model, out, "--loss", "gist", "--negatives-from", "dense", "--dev-fraction", "0.5",
                   "--save-steps", "1", "--merge-base", "auto", "--no-compare", "--resume")
    assert again.exit_code == 2 and "dev_fraction" in again.output


def test_help_explains_the_recipes():
    res = CliRunner().invoke(app, ["train", "--help"], env={"COLUMNS": "200"})
    for flag in ("--negatives-from", "--neg-range", "--neg-margin", "--neg-model", "--guide", "--mini-batch-size",
                 "--dev-fraction", "--merge-base", "cgist"):
        assert flag in res.output, flag


def test_kl_distils_a_teacher_ranking_and_records_loss_and_gradient(sample_dataset, tmp_path):
    """Issue 49: --loss kl ranks the training queries with the teacher once (OUT/teacher, or --teacher-cache
    shared by runs), trains on its ranking, and records the loss and gradient norm of each logged step."""
    model, _ = _tiny_model(tmp_path / "tiny", sample_dataset)
    out = tmp_path / "kl"
    res = _train(sample_dataset, model, out, "--loss", "kl", "--teacher", "bm25", "--negatives", "3",
                 "--log-steps", "1", "--eval", "no", "--no-compare")
    assert res.exit_code == 0, res.output
    assert "teacher bm25: top 30 of" in res.output
    summary = json.loads((out / "fincprg_train.json").read_text("utf-8"))
    assert summary["teacher"]["teacher"] > 0 and summary["rows"] > 0
    # 16 rows a step, accumulated over mini-batches of 2 rows: the optimizer steps once per 16 rows
    assert summary["steps"] == -(-summary["rows"] // 16)
    assert len(summary["log"]) == summary["steps"] and all(r["grad_norm"] > 0 for r in summary["log"])
    caches = list((out / "teacher").glob("*.jsonl"))
    assert len(caches) == 1 and len(caches[0].read_text("utf-8").splitlines()) == summary["teacher"]["queries"]
    again = _train(sample_dataset, model, tmp_path / "kl2", "--loss", "kl", "--teacher", "bm25", "--negatives", "3",
                   "--shuffle-labels", "--teacher-cache", str(out / "teacher"), "--eval", "no", "--no-compare")
    assert again.exit_code == 0 and "labels shuffled (control run)" in again.output, again.output
    assert not (tmp_path / "kl2" / "teacher").exists() and list((out / "teacher").glob("*.jsonl")) == caches
