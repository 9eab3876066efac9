"""CLI command ``fincprg audit`` (registered by :mod:`fincprg.cli`). Heavy work is imported lazily."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from fincprg import layout as L
from fincprg.cli._common import HANDLED, fail, setup_logging


def _import_decisions(src: Path, audit_dir: Path) -> int:
    """Append valid decisions from a downloaded decisions.jsonl into audit/decisions.jsonl."""
    from fincprg.errors import InputError
    from fincprg.audit.review import validate_decision
    from fincprg.io import read_jsonl

    if not src.is_file():
        raise InputError(f"--decisions {src} does not exist")
    keys = {j["key"] for j in read_jsonl(audit_dir / L.JUDGEMENTS)}
    dest = audit_dir / L.DECISIONS
    if src.resolve() == dest.resolve():
        return 0
    rows = []
    for n, obj in enumerate(read_jsonl(src), 1):
        try:
            rows.append(validate_decision(obj, keys))
        except ValueError as e:
            raise InputError(f"{src}:{n}: {e}") from None
    with open(dest, "a", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    return len(rows)


def _print_summary(s: dict) -> None:
    def pct(x: float | None) -> str:
        return "n/a" if x is None else f"{x:.1%}"

    typer.echo(f"judge: {s['judge']}" + (f"  [{s['judge_note']}]" if s.get("judge_note") else ""))
    typer.echo(f"threshold {s['threshold']} ({s['threshold_source']}); intervals {', '.join(s['intervals'])}")
    for lv, r in s["levels"].items():
        typer.echo(f"  {lv:<8} sampled {r['sampled']:>4}  failed {r['failed']:>3}  "
                   f"FP {r['fp']}/{r['judged_above']} ({pct(r['fp_rate'])}, weighted {pct(r['fp_weighted_rate'])})  "
                   f"FN {r['fn']}/{r['judged_below']} ({pct(r['fn_rate'])}, weighted {pct(r['fn_weighted_rate'])})"
                   + (f"  human {r['human_decided']}" if r["human_decided"] else ""))


def audit_cmd(
    target: Annotated[Path, typer.Argument(help="A build's output folder (after mine), or its dataset/ folder.")],
    intervals: Annotated[Optional[str], typer.Option(
        help="Comma-separated lower edges of the score intervals, e.g. 0.99,0.97,0.95,0.93,0.91,0.89,0.87,0.85 "
             "(top edge 1.0). Default: 0.02-wide intervals with the mining threshold on an edge, from "
             "mine.keep_min_score (0.85) to 1.0 (the paper's eight for threshold 0.99).")] = None,
    per_interval: Annotated[int, typer.Option(min=1, help="Pairs sampled per interval and level.")] = 50,
    seed: Annotated[Optional[int], typer.Option(help="Sampling seed (default run.seed).")] = None,
    judge: Annotated[str, typer.Option(
        help="llm: the paper's 1-5 synonymy prompt via the llm config section (--set llm.base_url=...). "
             "rules: offline stand-in (finance facts + character overlap), labelled as such everywhere.")] = "rules",
    language: Annotated[str, typer.Option(help="Judge prompt language: zh or en.")] = "zh",
    threshold: Annotated[Optional[float], typer.Option(
        help="Mining threshold (default: the one mining used, recorded in the mine manifest).")] = None,
    config: Annotated[Optional[Path], typer.Option("--config", "-c", help="Pipeline YAML (llm section).")] = None,
    set_: Annotated[Optional[list[str]], typer.Option("--set", help="Dotted override, e.g. llm.model=qwen2.5.")] = None,
    review: Annotated[bool, typer.Option(
        help="Serve review.html on 127.0.0.1 and save each decision to audit/decisions.jsonl (Ctrl-C stops). "
             "Reuses an existing audit.")] = False,
    port: Annotated[int, typer.Option(help="Port for --review (0 = any free port).")] = 8765,
    apply_decisions: Annotated[bool, typer.Option(
        help="Recompute the estimates from the existing audit with people's decisions replacing the judge.")] = False,
    decisions: Annotated[Optional[Path], typer.Option(
        help="A decisions.jsonl downloaded from the review page: appended to audit/decisions.jsonl, then applied.")]
    = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bars.")] = False,
) -> None:
    """Audit mined labels: sample pairs per score interval, judge them 1-5, estimate FP/FN rates per level.

    Writes OUT/audit/: samples.jsonl, judgements.jsonl, summary.json, summary.md, review.html.
    FP = score >= threshold and judge < 3; FN = score < threshold and judge > 3.
    Example: fincprg audit runs/demo --judge llm --set llm.base_url=http://localhost:8000/v1
    """
    from fincprg.audit.run import reapply
    from fincprg.audit.sample import locate
    from fincprg.errors import FincprgError

    setup_logging(quiet)
    try:
        paths = locate(target)
        existing = (paths.audit / L.SUMMARY_JSON).is_file()
        if decisions is not None or apply_decisions:
            if not existing:
                raise FincprgError(f"no audit in {paths.audit} to apply decisions to; run `fincprg audit {target}`")
            if decisions is not None:
                typer.echo(f"imported {_import_decisions(decisions, paths.audit)} decision(s) from {decisions}")
            summary = reapply(target, apply=True)
        elif review and existing:
            summary = json.loads((paths.audit / L.SUMMARY_JSON).read_text(encoding="utf-8"))
        else:
            summary = _new_audit(target, paths, judge=judge, language=language, config=config, set_=set_,
                                 intervals=intervals, per_interval=per_interval, seed=seed, threshold=threshold,
                                 quiet=quiet)
        _print_summary(summary)
        _warn_if_nothing_sampled(summary, paths.out)
        typer.echo(f"wrote {paths.audit}/summary.md and review.html")
        if review:
            _serve(paths.audit, port)
    except HANDLED as e:
        fail(e)


def _new_audit(target: Path, paths: Any, *, judge: str, language: str, config: Path | None, set_: list[str] | None,
               intervals: str | None, per_interval: int, seed: int | None, threshold: float | None,
               quiet: bool) -> dict[str, Any]:
    """Sample, judge and summarise a build's mined pairs (``fincprg audit`` without --review/--decisions)."""
    from fincprg.audit.run import run_audit
    from fincprg.audit.sample import parse_intervals
    from fincprg.config import load_config
    from fincprg.errors import FincprgError

    if judge not in ("llm", "rules"):
        raise FincprgError(f"--judge {judge!r}: choose llm or rules")
    cfg = load_config(config, set_)
    if judge == "llm":
        from fincprg.audit.judge import LLMJudge

        cache = Path(cfg.run.cache_dir) if cfg.run.cache_dir else L.Build(paths.out).cache_dir
        j: Any = LLMJudge(cfg.llm, cache, language=language, progress=not quiet)
    else:
        from fincprg.audit.judge import RulesJudge

        j = RulesJudge()
    return run_audit(target, judge=j, intervals=parse_intervals(intervals) if intervals else None,
                     per_interval=per_interval, seed=cfg.run.seed if seed is None else seed, threshold=threshold)


def _warn_if_nothing_sampled(summary: dict[str, Any], out: Path) -> None:
    if not any(r["sampled"] for r in summary["levels"].values()):
        typer.secho(f"no mined pairs fall in the audit intervals: {L.Build(out).path(L.MINE, L.PAIRS)} holds only "
                    "pairs scored >= mine.keep_min_score (or the threshold); lower that and re-run mine, or "
                    "pass lower --intervals", err=True, fg=typer.colors.YELLOW)


def _serve(audit_dir: Path, port: int) -> None:
    from fincprg.audit.review import make_review_server

    server = make_review_server(audit_dir, port=port)
    host, real_port = server.server_address[:2]
    typer.echo(f"review at http://{host}:{real_port}/  (decisions -> {audit_dir / L.DECISIONS}; Ctrl-C stops)")
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        typer.echo("\nstopped; run `fincprg audit ... --apply-decisions` to use the decisions")
    finally:
        server.server_close()
