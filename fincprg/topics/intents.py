"""Reading intents and subqueries per topic (paper §3.2.2).

Two backends:

* ``templates`` (offline default, provenance ``generator="templates"``): intents written from what the topic's
  titles share (a company only where its reports are the topic's majority, else the theme its titles agree
  on), see :mod:`fincprg.topics.intent_templates`. Honest about being templates.
* ``llm``: the ``topic_intent`` prompt (``prompts/topic_intent.<lang>.j2``) gets the keywords, the
  most representative titles and the industry; the answer must be
  ``[{"intent": str, "subqueries": [str, ...]}]``. It goes through ``fincprg.llm.LLMClient``
  (cache, retries, bounded concurrency); an invalid answer is re-asked once with the error, and a
  topic that still fails becomes a ``Failure`` record with the raw answer (never silently lost).
  Only valid answers are cached, so the next run of the stage (``fincprg build --retry-failed``)
  asks exactly the failed topics again.
  JSON mode is off for this prompt: OpenAI's json_object mode forbids a top-level array.

Query ids: intent ``qi:<topic_id>:<k>`` (level "intent"), subquery ``qt:<topic_id>:<k>:<j>``
(level "topic", parent = the intent), both with ``source_ids=(topic_id,)``.
"""
from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from fincprg.records import Failure, Query
from fincprg.topics.intent_templates import TEMPLATE_ID, TEMPLATE_VERSION, template_intents
from fincprg.topics.topic_input import TopicInput, period_label, surface_form

log = logging.getLogger(__name__)
__all__ = ["TEMPLATE_ID", "TEMPLATE_VERSION", "TopicInput", "llm_intents", "period_label", "surface_form",
           "template_intents", "to_queries", "validate"]


def to_queries(topic_id: str, intents: list[dict[str, Any]], provenance: dict[str, Any]) -> list[Query]:
    """Intent and subquery Query records for one topic. An empty intent (a topic whose titles share no subject,
    :mod:`fincprg.topics.intent_templates`) writes its subqueries without a parent."""
    out: list[Query] = []
    for k, it in enumerate(intents):
        qid = f"qi:{topic_id}:{k}" if it["intent"] else None
        # the templates name each query's frame (fincprg.topics.frames); an LLM's answer has none
        frames = it.get("frames") or {}
        sub_frames = frames.get("subqueries") or [None] * len(it["subqueries"])
        if qid is not None:
            out.append(Query(id=qid, level="intent", text=it["intent"], source_ids=(topic_id,),
                             provenance=_framed(provenance, frames.get("intent"))))
        for j, (sq, f) in enumerate(zip(it["subqueries"], sub_frames, strict=True)):
            out.append(Query(id=f"qt:{topic_id}:{k}:{j}", level="topic", text=sq, source_ids=(topic_id,),
                             parent_id=qid, provenance=_framed(provenance, f)))
    return out


def _framed(provenance: dict[str, Any], frame: str | None) -> dict[str, Any]:
    return {**provenance, "frame": frame} if frame else dict(provenance)


def validate(answer: Any, *, max_intents: int = 3, max_subqueries: int = 5) -> list[dict[str, Any]]:
    """Check an LLM answer against ``[{"intent": str, "subqueries": [str, ...]}]``.

    A single object, or an object wrapping the list (``{"intents": [...]}``), is accepted too.

    Raises:
        ValueError: with a message fit to send back to the model.
    """
    if isinstance(answer, dict):
        lists = [v for v in answer.values() if isinstance(v, list)]
        answer = [answer] if "intent" in answer else (lists[0] if len(lists) == 1 else None)
    if not isinstance(answer, list) or not answer:
        raise ValueError('the answer must be a non-empty JSON array [{"intent": ..., "subqueries": [...]}]')
    out = []
    for i, item in enumerate(answer[:max_intents]):
        if not isinstance(item, dict):
            raise ValueError(f"item {i} is not an object")
        intent = item.get("intent")
        subs = item.get("subqueries")
        if not isinstance(intent, str) or not intent.strip():
            raise ValueError(f'item {i} has no non-empty string "intent"')
        if not isinstance(subs, list) or not all(isinstance(s, str) for s in subs):
            raise ValueError(f'item {i}: "subqueries" must be a list of strings')
        subs = list(dict.fromkeys(s.strip() for s in subs if s.strip()))[:max_subqueries]
        if not subs:
            raise ValueError(f'item {i} has no non-empty subquery')
        out.append({"intent": intent.strip(), "subqueries": subs})
    return out


def llm_intents(topics: Sequence[TopicInput], cfg: Any, llm_cfg: Any, cache_dir: Path
                ) -> tuple[dict[str, list[dict[str, Any]]], list[Failure], dict[str, Any]]:
    """Ask the LLM for each topic's intents; returns (topic -> intents, failures, client stats)."""
    from fincprg.llm import LLMClient, load_prompt, parse_json_detailed

    prompt = load_prompt(cfg.prompt, cfg.language)
    client = LLMClient(llm_cfg, cache_dir)
    limits = {"max_intents": cfg.max_intents, "max_subqueries": cfg.max_subqueries}
    msgs = [prompt.render(keywords=[surface_form(k, t.titles) for k in t.keywords[:cfg.max_keywords]], titles=list(t.titles[:cfg.max_titles]),
                          industry=t.industry or "", **limits) for t in topics]
    done: dict[str, list[dict[str, Any]]] = {}
    errors: dict[int, tuple[str, str | None]] = {}

    def parse(text: str | None) -> list[dict[str, Any]] | str:
        """The validated intents, or the error message."""
        try:
            parsed = parse_json_detailed(text)
            if parsed.truncated:
                return "invalid answer: it was cut off before its JSON closed; answer again, shorter"
            return validate(parsed.value, **limits)
        except Exception as e:  # noqa: BLE001 - JSONParseError or ValueError: recorded, re-asked
            return f"invalid answer: {e}"

    def check(i: int, text: str | None, err: str | None) -> None:
        if err is not None or text is None:
            errors[i] = (f"llm error: {err}", text)
            return
        got = parse(text)
        if isinstance(got, str):
            errors[i] = (got, text)
        else:
            done[topics[i].topic_id] = got
            errors.pop(i, None)

    def valid(_: int, res: Any) -> bool:  # only valid answers are cached
        return not isinstance(parse(res.text), str)

    results = client.chat_many(msgs, json_mode=False, desc="topic intents", accept=valid)
    for i, r in enumerate(results):
        check(i, r.text, r.error)
    retry = [i for i, (msg, raw) in errors.items() if raw is not None and prompt.has("reask")]
    if retry:
        convs = [msgs[i] + [{"role": "assistant", "content": errors[i][1] or ""},
                            {"role": "user", "content": prompt.render_block("reask", error=errors[i][0])}]
                 for i in retry]
        for i, r in zip(retry, client.chat_many(convs, json_mode=False, desc="topic intents (re-ask)",
                                                accept=valid), strict=True):
            check(i, r.text, r.error)
            if i not in errors:  # a valid re-ask: served from the cache under the first question next time
                client.remember(msgs[i], r, json_mode=False)
    failures = [Failure(stage="topics", item_id=topics[i].topic_id, kind="intent", message=msg, raw=raw)
                for i, (msg, raw) in sorted(errors.items())]
    client.check_answered()  # every request failed (an HTML page, 500s): stop, as the early stop would have
    provenance_note = {"template": prompt.id, "version": prompt.version}
    return done, failures, {**client.stats, **provenance_note}
