"""The strict reader's checks of one sentence or passage query: the loop over :data:`.rules.STRICT` in its
declared order (what the query is, whether its sentence names the ask, whose figure it is, whether the source
states the fact in the reading asked). The rules themselves, with ids and examples, are in :mod:`.rules`."""
from __future__ import annotations

from collections.abc import Iterable

from fincprg.verify.rules import Reading
from fincprg.verify.rules import strict_checks as _loop
from fincprg.verify.verdict import Verdict


def strict_checks(query: str, passage: str, title: str, sentence: str | None, names: frozenset[str],
                  disabled: Iterable[str] = ()) -> Verdict | None:
    """The first strict rule the query fails (its Verdict carries the rule's id), skipping ``disabled`` ids. A
    sentence query is read against its sentence, a passage query against its passage and title."""
    return _loop(Reading(query, passage, title, sentence, names), frozenset(disabled))
