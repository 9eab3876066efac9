"""Benchmark: the generate stage's LLM throughput through ``fincprg build`` (what a user runs).

A synthetic corpus of distinct passages is built once through ingest + chunk; then, ``--repeats`` times,
the generate folder and the LLM cache are removed and ``fincprg build --upto generate`` runs the real
stage (one client for the whole stage, requests streamed across batch boundaries, checkpoints per batch)
against ``python -m tests.llm_server --latency L`` in its own process. The rate is the stage's requests
divided by its wall seconds from the generate manifest (loading inputs and writing outputs included);
the ideal is ``concurrency / latency``.

Run: ``.venv/bin/python eval/bench_llm_stage.py [--reports 2200] [--concurrency 8,32] [--engines local,ray] [--latency 0.2] [--repeats 3]``

Results replace the ``<!-- llm-stage:start -->`` … ``<!-- llm-stage:end -->`` section of eval/README.md.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from eval._readme import commit, write_section  # noqa: E402
from fincprg import layout as L  # noqa: E402

METRICS = ["营业收入", "归母净利润", "毛利率", "经营现金流", "研发费用", "销售费用率", "存货周转天数", "海外收入"]
REASONS = ["新产能爬坡带来规模效应", "原材料价格回落改善成本", "海外渠道拓展成效显现", "高端产品占比持续提升",
           "下游需求阶段性承压", "行业竞争加剧压缩利润空间", "汇兑收益增厚当期业绩", "费用管控成效逐步释放",
           "政策补贴退坡影响毛利", "新客户导入节奏快于预期", "订单交付集中于四季度", "数字化改造提升运营效率"]
OUTLOOK = ["我们看好公司中长期成长空间", "预计明年盈利能力有望修复", "维持买入评级", "关注新品放量节奏",
           "估值处于历史低位", "风险在于需求恢复不及预期", "产能利用率仍有提升空间", "现金流改善值得关注"]


def corpus(path: Path, reports: int) -> Path:
    """``reports`` distinct reports of two ~450-character passages each (distinct text: nothing is cached)."""
    rows = []
    for k in range(reports):
        paras = []
        for p in range(2):
            # varied wording: the chunk stage's quality rule removes repetitive text
            sents = [f"示例科技{k}号{2020 + (k + j) % 5}年{METRICS[(j + 3 * p + k) % 8]}为{10 + j}.{k % 97}亿元，"
                     f"同比变动{(j * 7 + k) % 40}.{p}%，{REASONS[(k + 5 * j + p) % 12]}，{OUTLOOK[(k * 3 + j) % 8]}。"
                     for j in range(6)]
            paras.append("".join(sents))
        rows.append({"id": f"s{k}", "title": f"示例科技{k}号（300{k % 1000:03d}）：业绩点评", "text": "\n".join(paras),
                     "date": f"2024-0{1 + k % 9}-15"})
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def run_once(src: Path, out: Path, sets: list[str], env: dict[str, str]) -> dict[str, Any]:
    """One ``fincprg build --upto generate`` with a fresh generate folder and LLM cache."""
    build = L.Build(out)
    shutil.rmtree(build.dir(L.GENERATE), ignore_errors=True)
    shutil.rmtree(build.cache_dir, ignore_errors=True)
    cmd = [sys.executable, "-m", "fincprg", "build", str(src), "-o", str(out), "--upto", "generate", "-q"]
    for s in sets:
        cmd += ["--set", s]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the build's CPU (the server is not reaped yet)
    assert r.returncode == 0, r.stderr
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    m = build.manifest(L.GENERATE)
    llm = m["counts"]["llm"]
    return {"requests": llm["requests"], "seconds": m["seconds"], "rate": llm["requests"] / m["seconds"],
            "retries": llm.get("retries", 0), "failures": llm.get("failures", 0), "load": os.getloadavg()[0],
            "cpu_ms_per_request": 1000 * cpu / max(1, llm["requests"])}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reports", type=int, default=2200,
                    help="synthetic reports (2 passages each) at the highest concurrency; lower concurrencies get "
                         "proportionally fewer, so every run lasts about as long")
    ap.add_argument("--concurrency", default="32", help="comma-separated llm.concurrency values, e.g. 8,16,32")
    ap.add_argument("--engines", default="local", help="comma-separated: local, ray (engine=ray, ray.num_cpus=2)")
    ap.add_argument("--latency", type=float, default=0.2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-readme", action="store_true")
    args = ap.parse_args()
    conc = [int(c) for c in args.concurrency.split(",")]
    engines = args.engines.split(",")
    server = subprocess.Popen([sys.executable, "-m", "tests.llm_server", "--latency", str(args.latency)], cwd=ROOT,
                              stdout=subprocess.PIPE, text=True)
    base_url = server.stdout.readline().strip()
    env = {**os.environ, "OPENAI_API_KEY": "bench", "HF_HUB_OFFLINE": "1"}
    results: dict[tuple[str, int], list[dict[str, Any]]] = {}
    try:
        with tempfile.TemporaryDirectory(prefix="fincprg-llm-stage-") as tmp:
            for c in conc:
                n = max(100, args.reports * c // max(conc))
                src = corpus(Path(tmp) / f"corpus-{n}.jsonl", n)
                for engine in engines:
                    sets = ["generate.backend=llm", f"llm.base_url={base_url}", f"llm.concurrency={c}",
                            "llm.model=bench-model", "llm.max_retries=2", "llm.timeout=30", f"engine={engine}",
                            *(["ray.num_cpus=2"] if engine == "ray" else [])]
                    runs = results[(engine, c)] = []
                    for _ in range(args.repeats):
                        runs.append(run_once(src, Path(tmp) / f"out-{n}", sets, env))
                        print({"engine": engine, "concurrency": c, **runs[-1]}, flush=True)
    finally:
        server.terminate()
        server.wait(timeout=10)
    text = render(results, args)
    print("\n" + text)
    if not args.no_readme:
        write_section("llm-stage", text)
    return 0


def render(results: dict[tuple[str, int], list[dict[str, Any]]], args: argparse.Namespace) -> str:
    lines = [
        "## LLM throughput of the generate stage through `fincprg build` (`eval/bench_llm_stage.py`)", "",
        f"Measured {time.strftime('%Y-%m-%d')} at commit {commit()} on 2 CPU cores shared with the local test "
        f"server (its own process, {args.latency * 1000:.0f} ms latency per request). Synthetic reports of two "
        "distinct passages each (one request per passage; nothing cached). Rate = the stage's requests / its wall "
        "seconds from the generate manifest (inputs loaded and outputs written included; with engine=ray also "
        "the Ray start and the actors' start); ideal = concurrency ÷ latency. Median of "
        f"{args.repeats} runs per row; `ray` = `engine=ray`, `ray.num_cpus=2`, `ray.llm_actors=4`.", "",
        "| engine | concurrency | requests per run | median req/s | % of ideal | runs (req/s) | retries | "
        "build CPU ms / request | load avg |",
        "|---|---:|---:|---:|---:|---|---:|---:|---:|",
    ]
    for (engine, c), runs in results.items():
        ideal = c / args.latency
        med = statistics.median(r["rate"] for r in runs)
        lines.append(f"| {engine} | {c} | {runs[0]['requests']} | {med:.1f} | {med / ideal:.1%} | "
                     f"{', '.join(format(r['rate'], '.1f') for r in runs)} | {sum(r['retries'] for r in runs)} | "
                     f"{statistics.median(r['cpu_ms_per_request'] for r in runs):.2f} | "
                     f"{statistics.median(r['load'] for r in runs):.1f} |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
