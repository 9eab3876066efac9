"""One class per loss (fincprg/train/losses.py): the settings, the sampler and --help read that table only."""
from __future__ import annotations

from fincprg.train import losses, settings


def test_every_loss_class_is_listed_once_with_its_help():
    from typer.testing import CliRunner

    from fincprg.cli import app

    out = " ".join(CliRunner().invoke(app, ["train", "--help"], env={"COLUMNS": "400"}).output.split())
    for name, loss in losses.LOSSES.items():
        assert loss.help() and f"{name}: {loss.help()[:40]}" in out.replace("│", "").replace("  ", " "), name
    assert settings.LOSSES == tuple(losses.LOSSES)


def test_the_kinds_the_trainer_reads_come_from_the_classes():
    assert settings.GUIDED == ("gist", "cgist") and settings.CACHED == ("cmnrl", "cgist", "kl", "marginmse")
    assert settings.IN_BATCH == ("mnrl", "cmnrl", "gist", "cgist") and settings.DISTILL == ("kl", "marginmse")
    assert losses.names(rows="pairs") == ("cosent",)
    # the mini-batch's default is the loss's own: kl's rows hold 1 + --negatives passages each
    assert settings.TrainSettings(loss="kl").value("mini_batch_size") == 2
    assert settings.TrainSettings(loss="cmnrl").value("mini_batch_size") == 16
