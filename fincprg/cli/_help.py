"""Help that is whole at any width: which style to print, and the plain style's wrapping.

typer's rich panels cut long words and option names with "…" when a column is narrow, and output to a
pipe (CI logs, ``| cat``, ``| less``) is laid out 80 columns wide. So the panels are used only on a
terminal wide enough for every command's help (tests/unit/test_cli_help.py checks it); elsewhere the
help is click's plain text, with two fixes: the command list shows each command's whole first sentence
(click cuts it to the width with "..."), and lines break at spaces only (click also breaks after a
hyphen, which splits ``--add-cjk`` or ``sentence-transformers`` over two lines).
"""
from __future__ import annotations

import os
import shutil
import sys
import textwrap
from typing import Any, Optional

from typer._click import Context, HelpFormatter
from typer.core import TyperGroup

RICH_HELP_MIN_WIDTH = 120


def help_markup_mode() -> Optional[str]:
    """``"rich"`` (boxed, coloured help) on a terminal at least RICH_HELP_MIN_WIDTH wide, else None (plain)."""
    if not sys.stdout.isatty():
        return None
    width = os.environ.get("TERMINAL_WIDTH") or os.environ.get("COLUMNS")  # typer's override, then the shell's
    cols = int(width) if width and width.isdigit() else shutil.get_terminal_size().columns
    return "rich" if cols >= RICH_HELP_MIN_WIDTH else None


def wrap(text: str, width: int) -> list[str]:
    """click's paragraph rules (blank lines separate paragraphs, one starting with a ``\\b`` line is kept
    as written), but a line never breaks inside a word."""
    wrapper = textwrap.TextWrapper(max(width, 20), break_on_hyphens=False, break_long_words=False)
    lines: list[str] = []
    for par in textwrap.dedent(text.expandtabs()).strip("\n").split("\n\n"):
        if lines:
            lines.append("")
        if par.startswith("\b\n"):
            lines += par[2:].splitlines()
        else:
            lines += wrapper.wrap(" ".join(par.split())) or [""]
    return lines


class WholeWordFormatter(HelpFormatter):
    """click's formatter with :func:`wrap` for paragraphs and definition lists."""

    def write_text(self, text: str) -> None:
        indent = " " * self.current_indent
        self.write("\n".join(indent + ln if ln else "" for ln in wrap(text, self.width - self.current_indent)))
        self.write("\n")

    def write_dl(self, rows: Any, col_max: int = 30, col_spacing: int = 2) -> None:
        rows = list(rows)
        first_col = min(max((len(a) for a, _ in rows), default=0), col_max) + col_spacing
        pad = " " * (self.current_indent + first_col)
        for first, second in rows:
            self.write(" " * self.current_indent + first)
            if not second:
                self.write("\n")
                continue
            if len(first) <= first_col - col_spacing:
                self.write(" " * (first_col - len(first)))
            else:
                self.write("\n" + pad)
            lines = wrap(second, self.width - first_col - self.current_indent - 2)
            self.write(lines[0] + "\n" + "".join(f"{pad}{ln}\n" if ln else "\n" for ln in lines[1:]))


class WholeWordContext(Context):
    formatter_class = WholeWordFormatter


class HelpGroup(TyperGroup):
    """The app's group class: its commands format plain help with :class:`WholeWordFormatter`, and the
    command list shows whole first sentences."""

    context_class = WholeWordContext

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        for cmd in self.commands.values():  # typer builds them with its own class; only their context changes
            cmd.context_class = WholeWordContext

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        rows = [(name, cmd.get_short_help_str(limit=10_000)) for name in self.list_commands(ctx)
                if (cmd := self.get_command(ctx, name)) is not None and not cmd.hidden]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)
