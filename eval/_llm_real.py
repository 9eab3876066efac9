"""Real-body corpus and the bare-client baseline for ``eval/bench_llm_stage.py --real``.

- :func:`real_corpus` writes the 200 AlphaFin reports (``reports/alphafin_reports.json``) and the 2019 安靠智电
  annual report (``annual_report/``, one report of ~200 passages) from ``../shared/data`` as fincprg input,
  ``copies`` times. A copy's bodies are the real bodies unchanged; copy r > 0 gets ``（副本r）`` after each title,
  because the prompt carries the title: without it a copy would send a question already answered (and cached)
  in the same run, and the run would count cache hits instead of requests.
- :func:`stage_messages` renders, from a build's chunk output, the exact messages the generate stage sends (the
  stage's own ``LLMTreeGenerator.render`` over its own passages, sentences and report titles).
- :func:`bare_once` sends those messages with a bare ``openai.AsyncOpenAI`` client (``chat.completions.create``,
  a semaphore of ``concurrency``; no cache, no parsing, no completion, no files): the rate the machine and the
  server allow at that moment, to put beside the stage's.
"""
from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from fincprg import layout as L

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
ALPHAFIN = DATA / "reports" / "alphafin_reports.json"
ANNUAL = DATA / "annual_report" / "annual_report_300617_2019.json"


def missing_data() -> str | None:
    """Why the real corpus cannot be built here (None when it can)."""
    absent = [str(p) for p in (ALPHAFIN, ANNUAL) if not p.is_file()]
    return f"the shared data is absent ({', '.join(absent)}); see ../shared/data/README.md" if absent else None


def real_rows(tmp: Path) -> list[dict[str, Any]]:
    """The 201 real reports as fincprg input rows (ids ``af000``…``af199`` and ``ar2019``)."""
    from fincprg.ingest.public import alphafin_to_jsonl, annual_report_to_jsonl

    alpha, annual = tmp / "alphafin.jsonl", tmp / "annual.jsonl"
    alphafin_to_jsonl(ALPHAFIN, alpha)
    annual_report_to_jsonl(ANNUAL, annual, report_id="ar2019", title="安靠智电2019年年度报告", date="2020-04-20")
    rows = [{"id": f"af{i:03d}", **json.loads(x)} for i, x in enumerate(alpha.read_text(encoding="utf-8").splitlines())]
    return rows + [json.loads(annual.read_text(encoding="utf-8"))]


def real_corpus(path: Path, copies: int) -> Path:
    """``copies`` copies of the real reports in one JSONL file (see the module docstring)."""
    base = real_rows(path.parent)
    out = []
    for r in range(copies):
        for row in base:
            out.append({**row, "id": f"{row['id']}-{r}", "title": row["title"] + (f"（副本{r}）" if r else "")})
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in out), encoding="utf-8")
    return path


def stage_messages(out: Path) -> list[list[dict[str, Any]]]:
    """The generate stage's messages for every passage of the build ``out`` (its chunk output), in order."""
    from fincprg.config import GenerateConfig
    from fincprg.generate.base import PassageInput
    from fincprg.generate.llm_tree import PROMPT_VARIABLES, LLMTreeGenerator
    from fincprg.llm.prompts import stage_prompt

    build = L.Build(out)
    gen = LLMTreeGenerator.__new__(LLMTreeGenerator)  # render() needs only the prompt, no client
    gen.prompt = stage_prompt(GenerateConfig(backend="llm"), allowed=PROMPT_VARIABLES, required=("sentences",),
                              key="generate.prompt_file")
    reports = {r.id: r for r in build.reports()}
    sents: dict[str, list[Any]] = {}
    for s in build.sentences():
        sents.setdefault(s.passage_id, []).append(s)
    return [gen.render(PassageInput(reports[p.report_id], p, tuple(sorted(sents.get(p.id, []), key=lambda s: s.order))))
            for p in build.passages()]


def bare_once(base_url: str, messages: list[list[dict[str, Any]]], concurrency: int, *, model: str = "bench-model",
              max_tokens: int = 2048) -> dict[str, Any]:
    """Send every message list once with a bare AsyncOpenAI client; wall seconds from the first request to the
    last answer (the client's construction included, as the stage's seconds include its own)."""
    import openai

    failed = 0

    async def go() -> None:
        nonlocal failed
        client = openai.AsyncOpenAI(base_url=base_url, api_key="bench", max_retries=2, timeout=30)
        sem = asyncio.Semaphore(concurrency)

        async def one(msgs: list[dict[str, Any]]) -> None:
            nonlocal failed
            async with sem:
                resp = await client.chat.completions.create(
                    model=model, messages=msgs, temperature=0.0, max_tokens=max_tokens,  # type: ignore[arg-type]
                    response_format={"type": "json_object"})
                failed += not resp.choices[0].message.content

        try:
            await asyncio.gather(*(one(m) for m in messages))
        finally:
            await client.close()

    t0, c0 = time.perf_counter(), time.process_time()
    asyncio.run(go())
    dt, cpu = time.perf_counter() - t0, time.process_time() - c0
    return {"requests": len(messages), "seconds": dt, "rate": len(messages) / dt, "failures": failed,
            "cpu_ms_per_request": 1000 * cpu / max(1, len(messages))}
