"""The ``fincprg`` command line (typer). Heavy libraries load only inside the commands that need them.

One module per command group; :mod:`fincprg.cli._common` holds the app, the shared options, logging
and the one error exit.
"""
from __future__ import annotations

from fincprg.cli._common import app


def _register_commands() -> None:
    # These modules are light at import (their heavy deps load inside the command bodies).
    from fincprg.cli import build  # noqa: F401 - registers build, stages, demo, doctor
    from fincprg.cli.audit import audit_cmd
    from fincprg.cli.estimate import estimate_cmd
    from fincprg.cli.models import models_app
    from fincprg.cli.eval import eval_cmd
    from fincprg.cli.report import report_cmd
    from fincprg.cli.rules import rules_cmd
    from fincprg.cli.train import train_cmd

    app.command("eval")(eval_cmd)
    app.command("audit")(audit_cmd)
    app.command("report")(report_cmd)
    app.command("train")(train_cmd)
    app.command("estimate")(estimate_cmd)
    app.command("rules")(rules_cmd)
    app.add_typer(models_app, name="models")


_register_commands()


def main() -> None:
    from fincprg.cli._common import HANDLED, print_error

    try:
        app()
    except HANDLED as e:  # a last resort: the commands catch these themselves
        print_error(e)
        raise SystemExit(2) from None


__all__ = ["app", "main"]
