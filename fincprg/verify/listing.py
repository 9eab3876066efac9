"""The rule listing: what ``fincprg rules`` prints and what README's verify section holds (scripts/verify_rules.py
writes it; tests/unit/test_readme.py checks the README against it)."""
from __future__ import annotations

from fincprg.verify.rules import RULES, STRICT, Rule

_CUT = 60  # characters of an example's source shown


def _short(text: str) -> str:
    return text if len(text) <= _CUT else text[:_CUT] + "…"


def _example(rule: Rule) -> str:
    if rule.fails is None:
        return f"(reads the corpus: {rule.tested_by})"
    return f"drops 「{rule.fails.query}」 against 「{_short(rule.fails.source)}」"


def text_lines(examples: bool = True) -> list[str]:
    """One block per rule, in the order verify applies them: id, reasons, levels, what it checks and reads, and
    the example it must fail."""
    lines = []
    for r in RULES:
        kind = "strict" if r in STRICT else "stage"
        lines.append(f"{r.id}  [{kind}; {', '.join(r.levels)}]  -> {', '.join(r.reasons)}")
        lines.append(f"    {r.doc}; reads {r.reads}")
        if examples:
            lines.append(f"    e.g. {_example(r)}")
    return lines


def markdown() -> str:
    """The rules as a Markdown table, in the order verify applies them."""
    rows = ["| rule id | levels | reasons | checks | example it drops |", "|---|---|---|---|---|"]
    for r in RULES:
        ex = "—" if r.fails is None else f"「{r.fails.query}」 against 「{_short(r.fails.source)}」"
        rows.append(f"| `{r.id}` | {', '.join(r.levels)} | {', '.join(f'`{x}`' for x in r.reasons)} | {r.doc} "
                    f"| {ex.replace('|', '/')} |")
    return "\n".join(rows)
