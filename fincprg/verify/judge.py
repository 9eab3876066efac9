"""Optional LLM judge (``verify.judge.backend: llm``): is the query answered by its source, yes or no?

Only queries that passed the rule checks are asked. Each request goes through :class:`fincprg.llm.LLMClient`
(cache, retries, budget, accounting) with the ``verify_judge`` prompt; an answer must be
``{"answerable": bool, "reason": str}``. An invalid answer is re-asked once with the error; a query whose
judge never answers validly is kept (the judge is a filter, not a gate) and counted as ``judge_failures``.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fincprg.verify.registry import ALL, Rule, register
from fincprg.verify.verdict import Reason, Verdict

# run by the stage on the queries every other rule kept, when verify.judge.backend is llm
register(Rule("judge", ALL, (Reason.JUDGE_NOT_ANSWERED,), "query, source", "the optional LLM judge answers it",
              switch="", kind="stage",
              tested_by="tests/integration/test_verify_stage.py::test_the_llm_judge_drops_what_it_finds_unanswered"))


@dataclass(frozen=True)
class JudgeItem:
    query: str
    level: str
    source: str


def parse_answer(text: str | None) -> tuple[bool, str] | str:
    """``(answerable, reason)``, or the error message to send back."""
    from fincprg.llm import parse_json

    try:
        value = parse_json(text or "")
    except Exception as e:  # noqa: BLE001 - JSONParseError: re-asked with the message
        return f"not JSON: {e}"
    if not isinstance(value, dict) or not isinstance(value.get("answerable"), bool):
        return 'the answer must be a JSON object with a boolean "answerable"'
    return value["answerable"], str(value.get("reason") or "").strip()


def judge(items: Sequence[JudgeItem], cfg: Any, llm_cfg: Any, cache_dir: Path, *, progress: bool = True
          ) -> tuple[list[Verdict | None], dict[str, Any]]:
    """One verdict per item (None: answerable, or no valid answer), and the judge's counts and client stats."""
    from fincprg.llm import LLMClient, load_prompt

    prompt = load_prompt(cfg.prompt, cfg.language)
    client = LLMClient(llm_cfg, cache_dir)
    msgs = [prompt.render(query=it.query, level=it.level, source=it.source[:cfg.max_source_chars]) for it in items]
    answers: dict[int, tuple[bool, str]] = {}
    errors: dict[int, tuple[str, str | None]] = {}

    def valid(_: int, res: Any) -> bool:  # only valid answers are cached
        return not isinstance(parse_answer(res.text), str)

    def take(i: int, res: Any) -> None:
        got = parse_answer(res.text) if res.error is None else f"llm error: {res.error}"
        if isinstance(got, str):
            errors[i] = (got, res.text)
        else:
            answers[i] = got
            errors.pop(i, None)

    for i, r in enumerate(client.chat_many(msgs, desc="verify judge", progress=progress, accept=valid)):
        take(i, r)
    retry = [i for i, (_, raw) in errors.items() if raw is not None and prompt.has("reask")]
    if retry:
        convs = [msgs[i] + [{"role": "assistant", "content": errors[i][1] or ""},
                            {"role": "user", "content": prompt.render_block("reask", error=errors[i][0])}]
                 for i in retry]
        for i, r in zip(retry, client.chat_many(convs, desc="verify judge (re-ask)", progress=progress,
                                                accept=valid), strict=True):
            take(i, r)
            if i not in errors:  # a valid re-ask: served from the cache under the first question next time
                client.remember(msgs[i], r)
    verdicts: list[Verdict | None] = [
        Verdict(Reason.JUDGE_NOT_ANSWERED, answers[i][1] or "the judge found it not answered")
        if i in answers and not answers[i][0] else None for i in range(len(items))]
    client.check_answered()  # every request failed (an HTML page, 500s): stop, as the early stop would have
    stats = client.stats
    counts = {"asked": len(items), "answerable": sum(a for a, _ in answers.values()),
              "not_answerable": sum(not a for a, _ in answers.values()), "judge_failures": len(errors),
              "prompt": f"{prompt.id}@{prompt.version}",
              "llm": {k: stats.get(k) for k in ("requests", "cache_hits", "retries", "failures", "rejected",
                                                "prompt_tokens", "completion_tokens", "cost_usd", "model")}}
    return verdicts, counts
