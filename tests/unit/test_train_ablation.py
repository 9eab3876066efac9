"""eval/_train_ablation.py: issue 49's ablation rows, each with its --shuffle-labels control."""
from __future__ import annotations

import pytest

from eval._train_ablation import DIMENSIONS, render_ablation, rows
from fincprg.train.settings import TrainSettings


def test_rows_vary_one_thing_each_and_train_the_default_once():
    table = rows()
    keys = [r.key for r in table]
    assert len(keys) == len(set(keys)) == 1 + 2 + 2 + 2 + 2  # the default, then two others per dimension
    assert {r.dimension for r in table} == {"default", *DIMENSIONS}
    assert rows(("loss",))[1:] == [r for r in table if r.dimension == "loss"]
    with pytest.raises(SystemExit, match="--ablation-dims"):
        rows(("lr",))


def test_every_row_and_control_is_a_valid_train_command():
    """The flags go through the CLI's own settings checks: a row the CLI would refuse fails here, not an hour in."""
    from typer.main import get_command

    from fincprg.cli import app

    cmd = get_command(app).commands["train"]  # type: ignore[attr-defined]
    for row in rows():
        for control in (False, True):
            flags = row.flags("/m/e5", control=control, seed=7)
            ctx = cmd.make_context("train", ["DS", "-m", "/m/e5", "-o", "OUT", *flags])
            p = ctx.params
            s = TrainSettings(loss=p["loss"], negatives=p["negatives"], teacher=p["teacher"], mix=p["mix"],
                              shuffle_labels=p["shuffle_labels"], mini_batch_size=p["mini_batch_size"],
                              negatives_from=p["negatives_from"], neg_range=p["neg_range"],
                              neg_margin=p["neg_margin"], teacher_k=p["teacher_k"], scale=p["scale"])
            s.check()
            assert p["shuffle_labels"] is control and p["seed"] == 7 and p["max_pairs"] == row.pairs
    assert "dense:/m/e5" in rows(("teacher",))[-1].flags("/m/e5")


def test_render_names_each_row_its_control_and_the_difference():
    table = rows(("mix",))
    cmp = {"diff": 0.01, "lo": -0.01, "hi": 0.03}
    models = {"bm25": "", "e5 base": ""} | {f"{r.key}{c}-seed1": "" for r in table for c in ("", "-control")}
    r = {"date": "d", "commit": "c", "machine": "m", "cpus": 2, "seed": 1, "wall": 1.0,
         "means": {"alphafin_summary": {m: 0.5 for m in models}}, "models": models,
         "runs": {f"{t.key}-seed1": {"flags": t.flags("E5", seed=1)} for t in table},
         "rows": [{"dimension": t.dimension, "value": t.value, "key": t.key, "run": f"{t.key}-seed1",
                   "control": f"{t.key}-control-seed1", "vs_base": cmp, "vs_control": cmp, "steps": 30,
                   "seconds_per_step": 12.0, "peak_gb": 3.1} for t in table]}
    text = render_ablation(r, [])
    assert text.count("| mix |") == 2 and "+0.0100 [-0.0100, +0.0300]" in text and "--mix generated,titles" in text
