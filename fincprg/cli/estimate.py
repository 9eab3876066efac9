"""``fincprg estimate``: what a build will send to the LLM, cost and take, before it pays for anything."""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from fincprg import layout as L
from fincprg.cli._common import ConfigOpt, LimitOpt, QuietOpt, SetOpt, guarded, setup_logging


def estimate_cmd(
    corpus: Annotated[Path, typer.Argument(help="The corpus you would build (a .jsonl/.csv file or a folder).")],
    config: ConfigOpt = None,
    set_: SetOpt = None,
    out: Annotated[Optional[Path], typer.Option(
        "--out", "-o", help="The build folder you will use: ingest and chunk are run there (the build then skips "
                            "them), cached answers are counted as free, and OUT/estimate.json is written for the "
                            "build summary to compare. Default: a temporary folder.")] = None,
    probe: Annotated[int, typer.Option(
        "--probe", min=0, help="Send the first N requests of each kind (query trees, report-level queries, "
                               "topic intents) for real (cached: the build reuses them) to measure tokens, answer "
                               "length, re-asks and latency. 0 sends nothing.")] = 0,
    limit: LimitOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the estimate as JSON.")] = False,
    quiet: QuietOpt = False,
) -> None:
    """Estimate a build before running it: LLM requests, tokens, cost (llm.prices) and wall time per stage,
    from the real prompts rendered over the chunked corpus, and the reranker pairs per mining space.

    Tokens are counted with estimate.tokenizer (a tokenizer.json or tiktoken:<encoding>) or
    estimate.chars_per_token; --probe N corrects them by what the server reports. Wall time uses
    llm.concurrency and the probes' median latency (else estimate.latency_s).
    """
    from fincprg.config import bundled_pipeline, load_config
    from fincprg.estimate.run import estimate

    setup_logging(quiet)

    def body() -> None:
        overrides = [*(set_ or []), *([f"run.sample_reports={limit}"] if limit is not None else [])]
        cfg = load_config(config or bundled_pipeline("offline"), overrides)
        res = estimate(corpus, cfg, out=out, probes=probe, show_progress=not quiet)
        typer.echo(json.dumps(res, ensure_ascii=False, indent=2) if as_json else render(res, out))

    guarded(body)


def _wall(s: float) -> str:
    return f"{s:.1f}s" if s < 60 else str(dt.timedelta(seconds=round(s)))


def render(res: dict[str, Any], out: Path | None) -> str:
    """The estimate as a short text table."""
    lines = [f"fincprg estimate of {res['corpus']}: {res['reports']} reports, {res['passages']} passages, "
             f"{res['sentences']} sentences, {res['topics']} topics",
             f"tokens: {res['tokens']}" + (f"; probes: {res['probes']} per stage" if res["probes"] else "")]
    if res["stages"]:
        lines.append(f"LLM {res['model']}, concurrency {res['concurrency']}, latency {res['latency_s']} s "
                     f"({res['latency_source']})" + ("" if res["priced"] else "; no price in llm.prices: cost unknown"))
        head = f"  {'stage':<9} {'requests':>9} {'cached':>7} {'to send':>8} {'prompt tok':>11} {'compl. tok':>11}"
        lines.append(head + (f" {'cost USD':>9}" if res["priced"] else "") + f" {'LLM time':>9}")
        for name, r in [*res["stages"].items(), ("total", res["total"])]:
            row = (f"  {name:<9} {r['requests']:>9,} {r['cached']:>7,} {r['to_send']:>8,} "
                   f"{r['to_send_prompt_tokens']:>11,} {r['to_send_completion_tokens']:>11,}")
            if res["priced"]:
                row += f" {r.get('to_send_cost_usd', 0.0):>9.4f}"
            lines.append(row + f" {_wall(r['wall_s']):>9}")
        lines.append("  (tokens, cost and LLM time: the requests still to send; cached answers are free. LLM time is the "
                     "waiting for answers at llm.concurrency, not the stages' own work)")
        gen = res["stages"].get("generate", {})
        if "rewrite_share" in gen:
            lines.append(f"  generate.rewrite: {gen['rewrite_share']:.0%} of queries expected to copy their passage"
                         + ("" if res["probes"] else " (upper bound: no probe)"))
    else:
        lines.append("LLM: no stage uses the LLM with this config (generate.backend, topics.intents.backend)")
    m = res["mine"]
    lines.append(f"mining ({m['reranker']} reranker): pairs per space " +
                 ", ".join(f"{k} {v:,}" for k, v in m["pairs"].items()) +
                 " (full traversal, one query per sentence: an upper bound" +
                 (f"; the top-{m['prefilter_top_k']} prefilter scores fewer)" if m["prefilter_top_k"] else ")"))
    if out is not None:
        lines.append(f"written: {out / L.ESTIMATE}; `fincprg build ... -o {out}` compares it with what it sends")
    return "\n".join(lines)
