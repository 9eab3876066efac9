"""Report-level queries from an LLM (``generate.backend: llm``): the versioned ``report_query`` prompt gets a
report's subject, period, title and lead (:func:`fincprg.generate.report_level.claim_of` finds them, so an
untitled report's queries come from its lead only) and answers ``{"report_queries": [str, ...]}``.

Render and parse are separate: :func:`render` builds the messages, :func:`parse` returns the questions or an
error message. An invalid answer is re-asked once with the error; a report that still fails is a Failure with
its raw answer, and only valid answers are cached (a re-run asks exactly the failed reports again).
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fincprg.generate.report_level import Claim, ReportInput, claim_of, lead, stating_passage, to_records
from fincprg.llm.redact import redact
from fincprg.records import Failure, Qrel, Query

KEY = "report_queries"


def render(prompt: Any, item: ReportInput, c: Claim, max_queries: int) -> list[dict[str, str]]:
    """The messages for one report (the title only where it has one: an untitled report leaks none)."""
    return prompt.render(subject=c.subject, period=c.period, title=item.report.title or "",
                         lead=lead(item.passages)[0] or c.text, max_queries=max_queries)


def parse(text: str | None, title: str, max_queries: int) -> list[str] | str:
    """The valid questions of an answer, or the error to send back: a non-empty list of strings, none the
    title copied."""
    from fincprg.llm import parse_json_detailed

    try:
        parsed = parse_json_detailed(text)
    except Exception as e:  # noqa: BLE001 - JSONParseError: recorded, re-asked
        return f"invalid answer: {e}"
    if parsed.truncated:
        return "invalid answer: it was cut off before its JSON closed; answer again, shorter"
    value = parsed.value
    got = value.get(KEY) if isinstance(value, dict) else value
    if not isinstance(got, list) or not all(isinstance(q, str) for q in got):
        return f'invalid answer: "{KEY}" must be a list of strings'
    qs = list(dict.fromkeys(q.strip() for q in got if q.strip()))[:max_queries]
    if not qs:
        return f'invalid answer: "{KEY}" holds no question'
    if title and any(q.rstrip("？?") == title.strip() for q in qs):
        return "invalid answer: a question copies the title; ask what the report answers instead"
    return qs


def llm_report_queries(items: Sequence[ReportInput], cfg: Any, llm_cfg: Any, cache_dir: Path, language: str
                       ) -> tuple[list[Query], list[Qrel], dict[str, Any]]:
    """Ask the LLM for every report with a claim; returns (queries, qrels, counts with failures)."""
    from fincprg.llm import LLMClient, load_prompt

    prompt = load_prompt(cfg.prompt, language)
    client = LLMClient(llm_cfg, cache_dir)
    asked = [(item, c) for item in items if (c := claim_of(item)) is not None]
    msgs = [render(prompt, item, c, cfg.max_queries) for item, c in asked]
    got: dict[int, list[str] | str] = {}
    raw: dict[int, str | None] = {}

    def valid(i: int, res: Any) -> bool:  # only valid answers are cached
        return not isinstance(parse(res.text, asked[i][0].report.title, cfg.max_queries), str)

    for i, r in enumerate(client.chat_many(msgs, desc="report queries", accept=valid)):
        got[i] = f"llm error: {r.error}" if r.error or r.text is None else \
            parse(r.text, asked[i][0].report.title, cfg.max_queries)
        raw[i] = r.text
    retry = [i for i, v in got.items() if isinstance(v, str) and raw[i] is not None and prompt.has("reask")]
    convs = [msgs[i] + [{"role": "assistant", "content": raw[i] or ""},
                        {"role": "user", "content": prompt.render_block("reask", error=got[i])}] for i in retry]
    for i, r in zip(retry, client.chat_many(convs, desc="report queries (re-ask)", accept=lambda j, res: valid(
            retry[j], res)) if retry else [], strict=True):
        again = parse(r.text, asked[i][0].report.title, cfg.max_queries) if r.text is not None else "no answer"
        if not isinstance(again, str):
            got[i] = again
            client.remember(msgs[i], r)  # served under the first question next time
        raw[i] = r.text
    client.check_answered()
    queries: list[Query] = []
    qrels: list[Qrel] = []
    failures = []
    prov = {"generator": "llm", "template": prompt.id, "version": prompt.version, "model": llm_cfg.model}
    for i, (item, c) in enumerate(asked):
        v = got[i]
        if isinstance(v, str):
            failures.append(Failure(stage="generate", item_id=item.report.id, kind="report_query", message=v,
                                    raw=redact(raw[i]) if raw[i] is not None else None))
            continue
        # the passage that states the LLM's question, not the claim's, gets grade 2
        states = stating_passage(" ".join(v), item.passages) or c.states
        q, r = to_records(item, Claim(c.subject, c.period, c.text, c.origin, states), [("llm", x) for x in v], prov)
        queries += q
        qrels += r
    # the manifest lists them (the generate stage's failures.jsonl is its passages' batches, closed by now)
    return queries, qrels, {"reports": len(items), "asked": len(asked), "failures": len(failures),
                            "failed": [f.model_dump(mode="json") for f in failures][:20], "llm": client.stats}
