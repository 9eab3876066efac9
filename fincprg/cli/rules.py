"""CLI command ``fincprg rules``: list verify's rules (the registry, :mod:`fincprg.verify.registry`)."""
from __future__ import annotations

from typing import Annotated

import typer


def rules_cmd(
    markdown: Annotated[bool, typer.Option("--markdown", help="Print the Markdown table README's verify section "
                                                              "holds instead of text.")] = False,
    examples: Annotated[bool, typer.Option(help="Show the example query each rule drops, with its source.")] = True,
) -> None:
    """List verify's rules in the order it applies them: id, levels, the verify.checks switch that runs it, the
    reasons it writes to dropped.jsonl, what it checks and reads, and an example query (with its source) it drops.

    Each dropped query's row in OUT/verify/dropped.jsonl names its rule in `rule`, and the verify manifest
    counts drops by rule (`counts.rules`). Switch rules off with `--set 'verify.disable=[vague,risk]'` (or
    `verify.disable:` in a pipeline YAML); `source` cannot be switched off. `verify.checks` still switches
    whole groups (subject, answer, related, round_trip)."""
    from fincprg.verify.listing import markdown as table
    from fincprg.verify.listing import text_lines

    typer.echo(table() if markdown else "\n".join(text_lines(examples)))
