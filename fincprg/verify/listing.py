"""The rule listing: what ``fincprg rules`` prints and what README's verify section holds (scripts/verify_rules.py
writes it; tests/unit/test_readme.py checks the README against it)."""
from __future__ import annotations

from fincprg.verify.registry import Rule
from fincprg.verify.rules import all_rules

_CUT = 60  # characters of an example's source shown


def _short(text: str) -> str:
    return text if len(text) <= _CUT else text[:_CUT] + "…"


def _example(rule: Rule) -> str:
    if rule.fails is None:
        return f"(reads the corpus: {rule.tested_by})"
    return f"drops 「{rule.fails.query}」 against 「{_short(rule.fails.source)}」"


def text_lines(examples: bool = True) -> list[str]:
    """One block per rule, in the order verify applies them: id, kind, levels, switch, reasons, what it checks
    and reads, and the example it must fail."""
    lines = []
    for r in all_rules():
        lines.append(f"{r.id}  [{r.kind}; {', '.join(r.levels)}; switch {r.switches()}]  -> {', '.join(r.reasons)}")
        lines.append(f"    {r.doc}; reads {r.reads}")
        if examples:
            lines.append(f"    e.g. {_example(r)}")
    return lines


def markdown() -> str:
    """The rules as a Markdown table, in the order verify applies them."""
    rows = ["| rule id | levels | switch | reasons | checks | example it drops |", "|---|---|---|---|---|---|"]
    for r in all_rules():
        ex = "—" if r.fails is None else f"「{r.fails.query}」 against 「{_short(r.fails.source)}」"
        reasons = ", ".join(f"`{x}`" for x in r.reasons)
        rows.append(f"| `{r.id}` | {', '.join(r.levels)} | {r.switches()} | {reasons} | {r.doc} "
                    f"| {ex.replace('|', '/')} |")
    return "\n".join(rows)
