"""eval/_train_e5.py: the train-e5 section's 'Configurations tried' table says which settings each run changed
and carries BM25's score, so notes comparing runs rest on rendered figures."""
from __future__ import annotations

import copy

import pytest

te5 = pytest.importorskip("eval._train_e5")

BENCHES = ("dataset test split (all)", "disc_finllm", te5.SUMMARY)
MODELS = {"bm25": "bm25", te5.BASE: "dense:b", te5.BASE_HYBRID: "hybrid:0.75:dense:b", te5.TUNED: "dense:t",
          te5.TUNED_HYBRID: "hybrid:0.75:dense:t"}


def result(lr: float, scale: float | None, seq: int, bm25: float) -> dict:
    scores = {b: {m: {"nDCG@10": 0.5, "R@10": 0.5, "n": 3} for m in MODELS} for b in BENCHES}
    scores[te5.SUMMARY]["bm25"]["nDCG@10"] = bm25
    settings = {"loss": "mnrl", "negatives": 0, "epochs": 1.0, "batch_size": 16, "learning_rate": lr,
                "max_seq_length": seq, **({"scale": scale} if scale else {})}
    return {"date": "2026-01-01", "commit": "abc1234", "machine": "x86_64", "cpus": 2, "wall": 10.0,
            "import_seconds": 0.0, "train_reports": 5, "manifest": {"corpus": 50},
            "summary_bench": {"reports": 2, "passages": 9}, "train_cpu": 12.0, "models": MODELS, "results": scores,
            "score_cpu": dict.fromkeys(MODELS, 1.0),
            "train": {"steps": 4, "pairs": 64, "train_seconds": 8.0, "settings": settings},
            "args": {"model": "e5", "subset": "all", "loss": "mnrl", "negatives": 0, "epochs": 1.0, "batch_size": 16,
                     "lr": lr, "max_seq_length": seq, "max_pairs": 800}}


def test_tried_table_names_what_each_run_changed_and_bm25():
    first = result(1e-5, 100.0, 384, 0.79)
    other = result(3e-5, None, 128, 0.81)  # an old result without a saved scale: MNRL's default 20
    rows = [line for line in te5.render_e5(first, [copy.deepcopy(other)]).splitlines() if "| `--subset" in line]
    assert len(rows) == 2
    cells = [[c.strip() for c in row.strip("|").split("|")] for row in rows]
    assert cells[0][1] == "–" and cells[0][-1] == "0.7900"
    assert cells[1][1] == "`--lr 3e-05`, `--scale 20`, `--max-seq-length 128`" and cells[1][-1] == "0.8100"
