"""AlphaFin reports as fincprg input and as a human-query benchmark, shared by eval/bench_train.py and
eval/bench_validity.py.

- :func:`split_alphafin` splits the 200 reports by report (sha1 of the title) into a training part and a
  held-out quarter;
- :func:`summary_benchmark` writes ``alphafin_summary``: the query is the title carried by the
  ``summary`` field (written by the report's analysts), the documents are the report passages with the
  title and the body's "研报题目是:…研报摘要:" header removed (they repeat the query verbatim), and every
  passage of a query's own report is relevant.
"""
from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
ALPHAFIN = DATA / "reports" / "alphafin_reports.json"
HELD_OUT_BUCKETS = 4  # sha1(title) % 4 == 0 -> held out (about a quarter of the reports)
# the body header repeats the title (and rating); documents must not contain the query verbatim
HEADER = re.compile(r"^研报题目是:.*?研报摘要:", re.S)
MIN_CHARS = 20  # a passage shorter than this after the header is removed was only the header


def held_out(title: str) -> bool:
    return int(hashlib.sha1(title.encode("utf-8")).hexdigest(), 16) % HELD_OUT_BUCKETS == 0


def split_alphafin(path: Path = ALPHAFIN) -> tuple[list[dict], list[dict]]:
    """(training reports, held-out reports) as fincprg input rows, split by report title."""
    from fincprg.ingest.public import _ALPHAFIN_SUMMARY

    train, held = [], []
    for i, item in enumerate(json.loads(Path(path).read_text(encoding="utf-8"))):
        m = _ALPHAFIN_SUMMARY.search(item["summary"])
        if not m:
            raise SystemExit(f"{path}: item {i} has no title in its summary field")
        row = {"id": f"af{i:03d}", "title": m.group("title"), "发布日期": m.group("date"), "content": item["content"],
               "summary": item["summary"]}
        (held if held_out(row["title"]) else train).append(row)
    return train, held


def input_rows(rows: list[dict]) -> list[dict]:
    """The rows as a build reads them: without the ``summary`` field (it carries the title query)."""
    return [{k: v for k, v in r.items() if k != "summary"} for r in rows]


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in Path(path).read_text(encoding="utf-8").splitlines() if x.strip()]


def strip_header(text: str) -> str:
    return HEADER.sub("", text).strip()


def summary_corpus(passages: list[dict]) -> list[dict]:
    """BEIR corpus rows of report passages (``id``/``_id``, ``text``, ``report_id``): header removed, no title,
    header-only passages dropped."""
    out = []
    for p in passages:
        text = strip_header(p["text"])
        if len(text) >= MIN_CHARS:
            out.append({"_id": p.get("_id", p.get("id")), "title": "", "text": text, "report_id": p["report_id"]})
    return out


def write_beir(out: Path, corpus: list[dict], queries: list[dict], qrels: dict[str, list[tuple]],
               split: str = "test") -> Path:
    """A BEIR folder; ``qrels`` maps a subset (``all`` -> ``qrels/<split>.tsv``, else
    ``qrels/<subset>-<split>.tsv``) to (query id, corpus id[, score]) tuples (score 1 when left out)."""
    write_jsonl(out / "corpus.jsonl", corpus)
    write_jsonl(out / "queries.jsonl", queries)
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    for old in (out / "qrels").glob("*.tsv"):
        old.unlink()
    for subset, pairs in qrels.items():
        name = split if subset == "all" else f"{subset}-{split}"
        (out / "qrels" / f"{name}.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(
            f"{t[0]}\t{t[1]}\t{t[2] if len(t) > 2 else 1}\n" for t in pairs), encoding="utf-8")
    return out


def summary_benchmark(rows: list[dict], passages: list[dict], out: Path) -> tuple[Path, dict[str, int]]:
    """Write ``alphafin_summary`` (title -> every passage of its report) for ``rows`` over ``passages``
    (the chunked bodies of those reports) to ``out``; return the folder and its counts."""
    corpus = summary_corpus(passages)
    qrels = [(f"q-{p['report_id']}", p["_id"]) for p in corpus]
    asked = {q for q, _ in qrels}
    queries = [{"_id": f"q-{r['id']}", "text": r["title"], "report_id": r["id"]} for r in rows
               if f"q-{r['id']}" in asked]
    write_beir(out, corpus, queries, {"all": qrels})
    return out, {"reports": len(rows), "queries": len(queries), "passages": len(corpus),
                 "labelled": len({p["report_id"] for p in corpus})}
