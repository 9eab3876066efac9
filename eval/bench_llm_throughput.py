"""Benchmark: query-tree generation throughput against a local OpenAI-compatible server.

The server (tests/llm_server.py, a real HTTP server, run in its own process like a real LLM server
so it does not share the client's GIL) injects a fixed latency per request, so the ideal throughput is ``concurrency / latency`` requests per second. The benchmark runs the real
path - ``LLMTreeGenerator.generate`` -> ``LLMClient.chat_many`` (openai client, retries on, a fresh
on-disk cache per run so every request is sent) -> parse/validate - over N synthetic passages and
reports the median requests/s of several repeats and its ratio to the ideal (target >= 90 %).

Usage::

    .venv/bin/python eval/bench_llm_throughput.py [--n 512] [--latency 0.2] [--concurrency 16 32] [--repeats 5]

It prints a table and replaces its section of eval/README.md (``<!-- llm-throughput:start/end -->``).
"""
from __future__ import annotations

import argparse
import logging
import os
import platform
import json
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from fincprg.config import GenerateConfig, LLMConfig  # noqa: E402
from fincprg.generate.base import PassageInput, QueryTree  # noqa: E402
from fincprg.generate.llm_tree import LLMTreeGenerator  # noqa: E402
from fincprg.llm import LLMClient  # noqa: E402
from fincprg.records import Passage, Report, Sentence  # noqa: E402

README = ROOT / "eval" / "README.md"
START, END = "<!-- llm-throughput:start -->", "<!-- llm-throughput:end -->"


def synthetic_items(n: int, sentences: int = 5) -> list[PassageInput]:
    """N distinct passages of ``sentences`` Chinese sentences each (distinct, so nothing is cached)."""
    items = []
    for k in range(n):
        rep = Report(id=f"b{k}", title=f"示例科技（3000{k % 100:02d}）：2024年三季报点评", text="x")
        pid = f"b{k}#p0"
        sents = tuple(
            Sentence(id=f"{pid}#s{j}", passage_id=pid, order=j,
                     text=f"示例科技{k}号2024年前三季度实现营业收入{10 + j}.{k % 10}亿元，同比增长{j + k % 7}%。")
            for j in range(sentences)
        )
        items.append(PassageInput(rep, Passage(id=pid, report_id=rep.id, order=0,
                                               text="".join(s.text for s in sents)), sents))
    return items


class ServerProcess:
    """``python -m tests.llm_server`` in a subprocess, with its /_stats and /_reset routes."""

    def __init__(self, latency: float) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.llm_server", "--latency", str(latency)],
            cwd=ROOT, stdout=subprocess.PIPE, text=True,
        )
        assert self.proc.stdout is not None
        self.base_url = self.proc.stdout.readline().strip()
        self._root = self.base_url.rsplit("/v1", 1)[0]

    def stats(self) -> dict:
        with urllib.request.urlopen(self._root + "/_stats") as r:
            return json.load(r)

    def reset(self) -> None:
        req = urllib.request.Request(self._root + "/_reset", data=b"{}", method="POST")
        urllib.request.urlopen(req).close()

    @property
    def max_in_flight(self) -> int:
        return int(self.stats()["max_in_flight"])

    def close(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)


def run_once(server: ServerProcess, items: list[PassageInput], concurrency: int) -> tuple[float, float, int]:
    """Wall seconds and client CPU seconds of one full generate() call, and how many trees were valid."""
    with tempfile.TemporaryDirectory() as cache:
        cfg = LLMConfig(base_url=server.base_url, model="bench-model", api_key_env="FINCPRG_BENCH_KEY",
                        concurrency=concurrency, max_retries=2, timeout=30)
        client = LLMClient(cfg, Path(cache))
        gen = LLMTreeGenerator(client, GenerateConfig(backend="llm"), progress=False)
        server.reset()
        t0, c0 = time.perf_counter(), time.process_time()
        out = gen.generate(items)
        dt, cpu = time.perf_counter() - t0, time.process_time() - c0
        client.close()
        assert client.stats["requests"] == len(items), client.stats
        assert server.max_in_flight <= concurrency, (server.max_in_flight, concurrency)
    return dt, cpu, sum(isinstance(t, QueryTree) for t in out)


def raw_once(server: ServerProcess, bodies: list[dict], concurrency: int) -> float:
    """Wall seconds for the same requests sent with a bare httpx2 client (no openai SDK, no cache,
    no parsing): the most this machine and server allow right now, to compare the real path with."""
    import asyncio

    import httpx2

    async def go() -> None:
        limits = httpx2.Limits(max_connections=concurrency)
        async with httpx2.AsyncClient(base_url=server.base_url, limits=limits, timeout=30) as cl:
            sem = asyncio.Semaphore(concurrency)

            async def one(body: dict) -> None:
                async with sem:
                    (await cl.post("/chat/completions", json=body)).raise_for_status()

            await asyncio.gather(*(one(b) for b in bodies))

    t0 = time.perf_counter()
    asyncio.run(go())
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=512, help="passages (= requests) per run; large enough that start-up (new loop, client, connections) and the last partial wave weigh little, as in a real build of thousands of passages")
    ap.add_argument("--latency", type=float, default=0.2, help="seconds injected per request")
    ap.add_argument("--concurrency", type=int, nargs="+", default=[16, 32])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--no-readme", action="store_true", help="print only; leave eval/README.md alone")
    ap.add_argument("--note", default="", help="a sentence appended to the README section (run conditions)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.ERROR)
    os.environ.setdefault("FINCPRG_BENCH_KEY", "EMPTY")

    load0 = os.getloadavg()[0]
    server = ServerProcess(latency=args.latency)
    items = synthetic_items(args.n)
    prompt_gen = LLMTreeGenerator.__new__(LLMTreeGenerator)  # only for render(): no client needed
    from fincprg.llm import load_prompt

    prompt_gen.prompt = load_prompt("hierarchical_query", "zh")
    bodies = [{"model": "bench-model", "messages": prompt_gen.render(it), "temperature": 0.0,
               "max_tokens": 2048, "response_format": {"type": "json_object"}} for it in items]
    run_once(server, items[:8], 8)  # warm-up: imports, SSL context, first connections
    rows = []
    try:
        for c in args.concurrency:
            rates, cpus, raws, valid = [], [], [], 0
            for _ in range(args.repeats):  # interleaved, so both see the same machine load
                dt, cpu, valid = run_once(server, items, c)
                rates.append(args.n / dt)
                cpus.append(cpu / args.n * 1000)
                raws.append(args.n / raw_once(server, bodies, c))
            ideal = c / args.latency
            med = statistics.median(rates)
            cpu_ms, raw = statistics.median(cpus), statistics.median(raws)
            rows.append((c, ideal, med, min(rates), max(rates), med / ideal, valid, server.max_in_flight, cpu_ms,
                         raw))
            print(f"concurrency={c:3d} ideal={ideal:6.1f} req/s  median={med:6.1f} req/s "
                  f"(min {min(rates):.1f}, max {max(rates):.1f})  ratio={med / ideal:.1%}  "
                  f"valid trees {valid}/{args.n}  peak in flight {server.max_in_flight}  "
                  f"client CPU {cpu_ms:.2f} ms/request  bare httpx2 {raw:.1f} req/s  load {os.getloadavg()[0]:.1f}")
    finally:
        server.close()

    table = [
        "| concurrency | ideal req/s (c / latency) | median req/s | min – max | median / ideal | valid trees "
        "| peak in flight | client CPU ms/request | bare httpx2 req/s | fincprg / bare |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ] + [
        f"| {c} | {ideal:.1f} | {med:.1f} | {lo:.1f} – {hi:.1f} | {ratio:.1%} | {valid}/{args.n} | {peak} "
        f"| {cpu:.2f} | {raw:.1f} | {med / raw:.0%} |"
        for c, ideal, med, lo, hi, ratio, valid, peak, cpu, raw in rows
    ]
    section = "\n".join([
        START,
        "## LLM generation throughput (`eval/bench_llm_throughput.py`)",
        "",
        f"`LLMTreeGenerator.generate` over {args.n} synthetic 5-sentence passages against the local "
        f"OpenAI-compatible test server with {args.latency * 1000:.0f} ms injected latency per request; "
        "real `openai` client, retries on, fresh on-disk cache per run (every request is sent), "
        f"parse + validation included. Median of {args.repeats} runs after one warm-up. "
        "\"Bare httpx2\" sends the same rendered requests with a plain async httpx2 client (no SDK, "
        "cache or parsing), interleaved with the real runs: the ceiling this machine and server allow. "
        "Target: median >= 90 % of concurrency / latency.",
        "",
        *table,
        "",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"niceness {os.nice(0)}; "
        f"load average at the start {load0:.1f}, at the end {os.getloadavg()[0]:.1f}. "
        "Where the ratio falls short, read the bare-httpx2 column: it is what this machine and the "
        "Python test server allowed during the run (each request also pays a few ms of client and server "
        "CPU on top of the injected latency, more when other jobs share the cores); \"fincprg / bare\" "
        "is the cost of the SDK, cache, rendering and parsing. 1000 / (client CPU ms/request) is the "
        "request rate one free core can drive. "
        f"Re-run: `.venv/bin/python eval/bench_llm_throughput.py`.",
        *([""] + [args.note] if args.note else []),
        END,
    ])
    print("\n" + section)
    if not args.no_readme:
        write_section(section)


def write_section(section: str) -> None:
    text = README.read_text(encoding="utf-8") if README.exists() else "# fincprg evaluation results\n"
    if START in text and END in text:
        head, rest = text.split(START, 1)
        text = head + section + rest.split(END, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    README.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
