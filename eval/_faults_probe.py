"""bench_faults section ``misuse``, the rows of issue 47: the nine defects a blind probe of main (e63162f) found.

Each case runs the real CLI in a subprocess (through ``_faults_misuse._cli``) and is scored like the other misuse
rows: the exit code wanted, no traceback, no key on disk or on the terminal, no record lost, and its own checks.
"""
from __future__ import annotations

import json
import shutil
import time
from pathlib import Path
from typing import Any

from eval._faults_misuse import ROOT, _cli, _error_lines, _row
from fincprg import layout as L

SAMPLE = ROOT / "datasets" / "sample" / "reports.jsonl"
TABLE = ROOT / "fincprg" / "finance" / "data" / "stock_basic.csv"
UNTITLED = ["本周市场整体震荡，成交量有所回落。我们认为后续政策面仍有支撑，建议关注消费与科技板块的结构性机会。" * 3,
            "海外方面，美联储加息节奏放缓，全球流动性压力缓解，风险偏好有望回升。国内稳增长政策持续发力。" * 3,
            "行业层面，上游原材料价格继续下行，中游制造环节盈利有望修复，全年来看仍保持稳定增长态势。" * 3,
            "从估值角度看，当前市场整体估值处于历史较低分位，具备较好的配置价值，维持中性偏积极判断。" * 3]


def _timed(case: str, want_rc: int, runs_fn, checks_fn, lost_fn=None, **kw: Any) -> dict[str, Any]:
    """Run the case's commands, then score them: its checks and the records it lost (both read after the runs)."""
    t0 = time.perf_counter()
    runs = runs_fn()
    return _row(case, runs, want_rc, time.perf_counter() - t0, checks_fn(runs),
                lost=lost_fn() if lost_fn else None, **kw)


def _reports(out: Path) -> int:
    return ((L.Build(out).manifest(L.INGEST) or {}).get("counts") or {}).get("reports", 0)


def out_inside_corpus(work: Path) -> dict[str, Any]:
    corpus = work / "corp"
    corpus.mkdir()
    shutil.copy(SAMPLE, corpus / "reports.jsonl")
    return _timed("`build corp -o corp/out` (OUT inside the corpus folder)", 2,
                  lambda: [_cli("build", str(corpus), "-o", str(corpus / "out"), "-q")],
                  lambda r: {"one error line": len(_error_lines(r[0])) == 1, "says inside the corpus":
                             "inside the corpus folder" in r[0].stderr,
                             "nothing written": sorted(p.name for p in corpus.iterdir()) == ["reports.jsonl"]})


def long_run(work: Path) -> dict[str, Any]:
    corpus = work / "run.jsonl"
    corpus.write_text(json.dumps({"id": "r", "title": "长串", "text": "a" * 1_000_000}) + "\n", "utf-8")
    out = work / "run-out"
    return _timed("a report that is one 1 MB run of `a`, `--upto chunk`", 0,
                  lambda: [_cli("build", str(corpus), "-o", str(out), "-q", "--upto", "chunk", timeout=600)],
                  lambda r: {"chunk finished": (L.Build(out).manifest(L.CHUNK) or {}) != {}},
                  lambda: 1 - _reports(out), out=out)


def stock_tables(work: Path, sample_out: Path) -> list[dict[str, Any]]:
    text = TABLE.read_text("utf-8-sig")
    tables = {"binary": bytes(range(256)) * 64, "gbk": text.encode("gbk"),
              "long": (text + "300999,长字段," + "电" * 3_000_000 + "\n").encode()}
    rows = []
    for name, data in tables.items():
        p = work / f"stocks-{name}.csv"
        p.write_bytes(data)
        out = work / f"stocks-{name}-out"
        want = 2 if name == "binary" else 0
        rows.append(_timed(f"`finance.stock_table` = a {name} file" + (" (GBK, as Tushare/Excel export)" if name ==
                                                                         "gbk" else ""), want,
                           lambda p=p, out=out: [_cli("build", str(SAMPLE), "-o", str(out), "-q", "--upto", "topics",
                                                      "--set", f"finance.stock_table={p}")],
                           lambda r, out=out, name=name: (
                               {"one error line": len(_error_lines(r[0])) == 1,
                                "says not a text CSV": "not a text CSV" in r[0].stderr} if name == "binary" else
                               {"topics ran": (L.Build(out).manifest(L.TOPICS) or {}) != {}}),
                           None if name == "binary" else lambda out=out: _reports(sample_out) - _reports(out)))
    d = work / "a-folder"
    d.mkdir()
    rows.append(_timed("`finance.stock_table` = a folder", 2,
                       lambda: [_cli("build", str(SAMPLE), "-o", str(work / "dir-out"), "-q", "--set",
                                     f"finance.stock_table={d}")],
                       lambda r: {"says it is a folder": "is a folder" in r[0].stderr,
                                  "not 'does not exist'": "does not exist" not in r[0].stderr}))
    return rows


def mixed_encoding(work: Path) -> dict[str, Any]:
    lines = SAMPLE.read_bytes().splitlines(keepends=True)
    gbk = lines[3].decode("utf-8").encode("gbk")
    corpus = work / "mixed.jsonl"
    corpus.write_bytes(b"".join(lines[:3] + [gbk] + lines[4:]))
    out = work / "mixed-out"
    return _timed("a UTF-8 JSONL with one GBK line", 0,
                  lambda: [_cli("build", str(corpus), "-o", str(out), "-q", "--upto", "ingest")],
                  lambda r: {"encoding utf-8+gbk in the manifest": "utf-8+gbk" in json.dumps(
                      L.Build(out).manifest(L.INGEST) or {})}, lambda: len(lines) - _reports(out))


def rule_name(work: Path) -> dict[str, Any]:
    out = work / "rule-out"
    return _timed("`--set verify.disable=[nosuchrule]`", 2,
                  lambda: [_cli("build", str(SAMPLE), "-o", str(out), "-q", "--set", "verify.disable=[nosuchrule]")],
                  lambda r: {"names `fincprg rules`": "`fincprg rules`" in r[0].stderr,
                             "no `verify-rules`": "verify-rules" not in r[0].stderr, "nothing written": not out.exists()})


def no_query(work: Path) -> dict[str, Any]:
    corpus = work / "untitled.jsonl"
    corpus.write_text("".join(json.dumps({"id": f"u{i}", "text": t}, ensure_ascii=False) + "\n"
                              for i, t in enumerate(UNTITLED)), "utf-8")
    out = work / "untitled-out"
    return _timed("4 untitled reports naming no company (no query emitted)", 0,
                  lambda: [_cli("build", str(corpus), "-o", str(out), "-q")],
                  lambda r: {"warning line": "warning: the dataset has no query" in r[0].stderr,
                             "manifest queries_emitted 0": ((L.Build(out).manifest(L.EXPORT) or {}).get("counts") or {})
                             .get("queries_emitted") == 0})


def disable_order(work: Path, sample_out: Path) -> dict[str, Any]:
    def runs() -> list[Any]:
        return [_cli("build", str(SAMPLE), "-o", str(sample_out), "-q", "--upto", "verify", "--set",
                     f"verify.disable={d}") for d in ("[risk,vague]", "[vague,risk]", "[vague,vague,risk]")]

    def checks(r: list[Any]) -> dict[str, bool]:
        said = [next((x for x in p.stdout.splitlines() if x.strip().startswith("verify")), "") for p in r]
        return {"verify re-used on the 2nd and 3rd": all("skipped" in s for s in said[1:]), "first ran": "ran" in
                said[0]}
    return _timed("`verify.disable` = [risk,vague], then [vague,risk], then [vague,vague,risk]", 0, runs, checks)


def train_ignored(work: Path, sample_out: Path) -> dict[str, Any]:
    dataset = sample_out / L.STAGE_DIRS[L.EXPORT]
    return _timed("`train --neg-range 5:50 --neg-margin 0.1` without `--negatives-from dense`", 2,
                  lambda: [_cli("train", str(dataset), "-m", str(work / "no-model"), "-o", str(work / "t"),
                                "--neg-range", "5:50", "--neg-margin", "0.1", "--no-compare")],
                  lambda r: {"one error line": len(_error_lines(r[0])) == 1,
                             "names --negatives-from dense": "--negatives-from dense" in r[0].stderr,
                             "nothing written": not (work / "t").exists()})


def report_empty(work: Path) -> dict[str, Any]:
    empty = work / "empty"
    empty.mkdir()
    return _timed("`report` and `stages` on an empty folder", 2,
                  lambda: [_cli("report", str(empty)), _cli("stages", str(empty))],
                  lambda r: {"both exit 2": [x.returncode for x in r] == [2, 2],
                             "says not a build folder": all("not a build folder" in x.stderr for x in r),
                             "no report.html": not (empty / L.REPORT_FILE).exists()})


def run(work: Path) -> list[dict[str, Any]]:
    work.mkdir(parents=True, exist_ok=True)
    sample_out = work / "sample"
    assert _cli("build", str(SAMPLE), "-o", str(sample_out), "-q").returncode == 0
    rows = [out_inside_corpus(work), long_run(work), *stock_tables(work, sample_out), rule_name(work),
            no_query(work), disable_order(work, sample_out), train_ignored(work, sample_out),
            mixed_encoding(work), report_empty(work)]
    return rows
