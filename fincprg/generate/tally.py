"""What the generate stage's tail needs from its queries, gathered one query at a time: the query counts
of its manifest and generate/hierarchy.json (:func:`fincprg.generate.complete.hierarchy`, as text).

A fresh run feeds each batch's queries as the batch is written, so after the last LLM answer only the
last report is left to nest and serialise: reading every query back from queries.jsonl, nesting and
dumping them took about 1 s of a 33 s stage on 7,880 real passages, while the requests had all come back.
A resumed run feeds queries.jsonl as read back instead (the same queries in the same order), so both
write the same bytes.
"""
from __future__ import annotations

import json
from collections import Counter
from typing import Any

from fincprg.generate.complete import add_to_hierarchy, finish_report


def _dumps(obj: Any) -> str:
    # what fincprg.io.atomic_write_json(compact=True) writes for the whole tree, one piece at a time
    return json.dumps(obj, ensure_ascii=False, sort_keys=True, default=str)


class QueryTally:
    """Counts (levels, generators, completed queries) and the hierarchy of the queries :meth:`add` was given.

    A report is serialised as soon as a query of another report arrives (chunk writes a report's passages
    together, so that is once per report); should one come back later, its JSON is read back and reopened.
    """

    def __init__(self) -> None:
        self.levels: Counter[str] = Counter()
        self.generators: Counter[str] = Counter()
        self.completed = 0
        self._open: dict[str, dict[str, Any]] = {}  # report id -> node still being filled
        self._done: dict[str, str] = {}  # report id -> its finished node as JSON

    def add(self, q: dict[str, Any]) -> None:
        """One query as its JSON dict (``Query.model_dump(mode="json")`` or a line of queries.jsonl)."""
        prov = q["provenance"]
        self.levels[q["level"]] += 1
        self.generators[prov.get("generator", "?")] += 1
        self.completed += "original" in prov
        if q["level"] not in ("passage", "sentence") or not q["source_ids"]:
            return
        rid = q["report_id"] or q["source_ids"][0].split("#", 1)[0]
        if rid not in self._open:
            for other in list(self._open):
                self._done[other] = _dumps(finish_report(self._open.pop(other)))
            if rid in self._done:  # the report came back: reopen it (a finished node sorts the same again)
                node = json.loads(self._done.pop(rid))
                node["passages"] = {n["passage_id"]: n for n in node["passages"]}
                self._open[rid] = node
        add_to_hierarchy(self._open, q)

    def hierarchy_json(self) -> str:
        """generate/hierarchy.json's text (without the final newline): ``json.dumps(hierarchy(queries),
        ensure_ascii=False, sort_keys=True)`` for every query added."""
        for rid in list(self._open):
            self._done[rid] = _dumps(finish_report(self._open.pop(rid)))
        return "{" + ", ".join(f"{_dumps(rid)}: {self._done[rid]}" for rid in sorted(self._done)) + "}"

    @property
    def reports(self) -> int:
        return len(self._open) + len(self._done)
