"""bench_quality's corpora and sources: the two AlphaFin inputs, a build's emitted queries, what each query is
read (and rule-checked) against, and the yield.

A build is read from its folder only (no fincprg config): the exported dataset says which queries were
emitted; the stage files (ingest, chunk, topics, and every stage's ``queries.jsonl``) give their sources.
"""
from __future__ import annotations

import csv
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

LEVELS = ("sentence", "passage", "topic", "intent")
NO_TITLE = "(no title)"
# AlphaFin's bodies open with a header that repeats the title and the broker's target price and rating:
# 「研报题目是:<title>；目标价格是<price>，评分是<x>；研报摘要:」 (every one of the 200 records has it)
HEADER = re.compile(r"^\s*研?报题目是[:：].*?；目标价格是.*?；研报摘要[:：]\s*", re.S)


def _jsonl(p: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in p.read_text(encoding="utf-8").splitlines() if x.strip()] if p.is_file() else []


def _write_jsonl(p: Path, rows: list[dict[str, Any]]) -> None:
    p.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def corpora(alphafin: Path, work: Path, annual: Path | None = None) -> tuple[Path, Path, dict[str, Any]]:
    """The titled input (AlphaFin as ``alphafin_to_jsonl`` converts it) and the untitled one (the same bodies
    without the header, and no title, date or any other field), plus counts that show nothing leaked."""
    from fincprg.ingest.public import alphafin_to_jsonl, annual_report_to_jsonl

    a = work / "alphafin.jsonl"
    alphafin_to_jsonl(alphafin, a)
    titled = _jsonl(a)
    bare, stats = [], Counter()
    for r in titled:
        body, n = HEADER.subn("", r["content"], count=1)
        stats["header_stripped"] += n
        title, date = r.get("title") or "", (r.get("发布日期") or "")[:10]
        stats["title_in_body"] += bool(title) and title in body
        stats["date_in_body"] += bool(date) and (date in body or _cn_date(date) in body)
        bare.append({"content": body})
    stats["reports"] = len(titled)
    stats["duplicate_bodies"] = len(bare) - len({b["content"] for b in bare})
    if annual is not None:
        b = work / "annual.jsonl"
        # date: the disclosure date in annual_report_index_2019_2021.csv
        annual_report_to_jsonl(annual, b, report_id="ar300617-2019", title="安靠智电（300617）：2019年年度报告",
                               date="2020-01-21")
        ar = _jsonl(b)
        titled += ar
        bare += [{"content": r["text"]} for r in ar]  # no id either: it names the stock code
    t, u = work / "titled.jsonl", work / "untitled.jsonl"
    _write_jsonl(t, titled)
    _write_jsonl(u, bare)
    return t, u, dict(stats)


def _cn_date(iso: str) -> str:
    y, m, d = (iso.split("-") + ["", "", ""])[:3]
    return f"{y}年{int(m)}月{int(d)}日" if m.isdigit() and d.isdigit() else iso


class BuildView:
    """One build folder, read for the benchmark: emitted queries with their sources and rule inputs."""

    def __init__(self, out: Path, stock_table: Path | None = None):
        self.out = out
        self.reports = {r["id"]: r for r in _jsonl(out / "ingest" / "reports.jsonl")}
        # titles without bodies (ingest.extra_titles): sources of their topics, not reports of the corpus
        extra = out / "ingest" / "extra_titles.jsonl"
        self.extra = {r["id"]: r for r in _jsonl(extra)} if extra.is_file() else {}
        self.passages = {p["id"]: p for p in _jsonl(out / "chunk" / "passages.jsonl")}
        self.sentences = {s["id"]: s["text"] for s in _jsonl(out / "chunk" / "sentences.jsonl")}
        tree = out / "topics" / "tree.json"
        self.nodes = {n["id"]: n for n in json.loads(tree.read_text(encoding="utf-8"))["nodes"]} \
            if tree.is_file() else {}
        self.stocks = None
        if stock_table is not None and Path(stock_table).is_file():
            from fincprg.finance.stocks import load_stock_table

            self.stocks = load_stock_table(str(stock_table))
        self.generated, self.queries, self.origin = self._queries()
        self._first_passage: dict[str, str] = {}
        for pid, p in sorted(self.passages.items(), key=lambda kv: kv[1].get("order", 0), reverse=True):
            self._first_passage[p["report_id"]] = pid

    def _queries(self) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]], str]:
        """Every stage's queries by id (later stages, e.g. a verify stage, win), and the emitted ones: the
        exported dataset's queries (their text as exported) or, with no export, every stage query."""
        staged: dict[str, dict[str, Any]] = {}
        order = ["generate", "topics"] + sorted(d.name for d in self.out.iterdir() if d.is_dir()
                                                and d.name not in ("generate", "topics", "dataset")) \
            if self.out.is_dir() else []
        for stage in order:
            for q in _jsonl(self.out / stage / "queries.jsonl"):
                staged[q["id"]] = q
        exported = _jsonl(self.out / "dataset" / "queries.jsonl")
        if not exported:
            return staged, sorted(staged.values(), key=lambda q: q["id"]), "stage files (no exported dataset)"
        rows = []
        for e in exported:
            q = dict(staged.get(e["_id"]) or {"id": e["_id"], "source_ids": _source_ids(e["_id"])})
            q.update(id=e["_id"], text=e["text"], level=e.get("level") or q.get("level"),
                     report_id=e.get("report_id") or q.get("report_id"),
                     provenance=e.get("provenance") or q.get("provenance") or {})
            rows.append(q)
        return staged, sorted(rows, key=lambda q: q["id"]), "dataset/queries.jsonl"

    # --- what a query is read against -------------------------------------------------------------------
    def _record(self, rid: str | None) -> dict[str, Any]:
        return self.reports.get(rid or "") or self.extra.get(rid or "") or {}

    def title(self, rid: str | None) -> str:
        return (self._record(rid).get("title") or "").strip()

    def company(self, rid: str | None) -> str | None:
        """The report's company: metadata, the title, else (untitled) the listed company its body names most."""
        from fincprg.finance import parse_title_company

        r = self._record(rid)
        name = r.get("company") or parse_title_company(r.get("title"))[0]
        if not name and self.stocks is not None and r.get("text"):
            hits = self.stocks.mentions(r["text"])
            name = hits[0].name if hits else None
        return name

    def topic_reports(self, q: dict[str, Any]) -> list[str]:
        node = self.nodes.get((q.get("source_ids") or [""])[0], {})
        return [r for r in node.get("title_ids", []) if r in self.reports or r in self.extra]

    def show(self, q: dict[str, Any]) -> dict[str, Any]:
        """The sources a reader sees for a query, as the rubric lists them (no generator, rule or id)."""
        level = q["level"]
        if level in ("sentence", "passage"):
            pid = (q.get("source_ids") or [""])[0]
            p = self.passages.get(pid, {})
            src: dict[str, Any] = {"passage": p.get("text", ""),
                                   "title": self.title(q.get("report_id") or p.get("report_id")) or NO_TITLE}
            if level == "sentence":
                src["sentence"] = self.sentences.get((q.get("provenance") or {}).get("sentence_id", ""), "")
            return src
        reports = []
        for rid in self.topic_reports(q):
            r = self._record(rid)
            row = {"title": self.title(rid) or NO_TITLE, "date": (r.get("date") or "")[:10]}
            if not self.title(rid):  # an untitled report is shown by its opening passage
                row["passage"] = self.passages.get(self._first_passage.get(rid, ""), {}).get("text", "")
            reports.append(row)
        return {"reports": reports}

    def rule_input(self, q: dict[str, Any]) -> dict[str, Any]:
        """What :func:`fincprg.generate.quality.check_query` checks the query against (as issue 11 set it)."""
        if q["level"] in ("sentence", "passage"):
            s = self.show(q)
            title = "" if s["title"] == NO_TITLE else s["title"]
            src = s["passage"] + "\n" + title
            if q["level"] == "sentence":
                src = s["sentence"] + "\n" + src
            return {"source": src, "subjects": [self.company(q.get("report_id"))], "years": []}
        rids = self.topic_reports(q)
        node = self.nodes.get((q.get("source_ids") or [""])[0], {})
        years = sorted({int(self._record(r)["date"][:4]) for r in rids if self._record(r).get("date")})
        # the topic's industry is its subject as the classifier assigned it, not a copy of a title
        return {"source": "\n".join(self.title(r) for r in rids),
                "subjects": [self.company(r) for r in rids] + [node.get("industry")], "years": years}

    # --- yield -----------------------------------------------------------------------------------------------
    def yield_(self) -> dict[str, Any]:
        """Emitted (and generated) queries per level, per passage (sentence/passage levels) or per titled
        report (topic/intent levels), and the share of passages with at least one emitted query."""
        emitted = Counter(q["level"] for q in self.queries)
        generated = Counter(q.get("level") for q in self.generated.values())
        n_pass = len(self.passages)
        titled = sum(1 for r in self.reports.values() if (r.get("title") or "").strip())
        covered = {(q.get("source_ids") or [""])[0] for q in self.queries if q["level"] in ("sentence", "passage")}
        per = {}
        for lv in LEVELS:
            den = n_pass if lv in ("sentence", "passage") else titled
            per[lv] = {"emitted": emitted.get(lv, 0), "generated": generated.get(lv, 0),
                       "per": round(emitted.get(lv, 0) / den, 3) if den else None,
                       "per_unit": "passage" if lv in ("sentence", "passage") else "titled report"}
        return {"reports": len(self.reports), "titled_reports": titled, "passages": n_pass,
                "passages_with_query": len(covered & set(self.passages)),
                "share_with_query": round(len(covered & set(self.passages)) / n_pass, 3) if n_pass else None,
                "levels": per, "queries_from": self.origin}


def _source_ids(qid: str) -> list[str]:
    """A generated query's passage from its id (``qp:<passage>``, ``qs:<passage>#s<n>``) when no stage file
    has the query any more."""
    if qid.startswith("qp:"):
        return [qid[3:]]
    if qid.startswith("qs:"):
        return [qid[3:].rsplit("#s", 1)[0]]
    return []


def mined_labels(out: Path) -> list[dict[str, Any]]:
    """Every mined label of the build (OUT/mine/qrels.jsonl: query, passage, the query whose passage was
    propagated), each with ``exported``: whether the dataset's qrels carry that (query, passage) pair (export
    drops labels of near-duplicate queries, moving them to the query kept, and labels across splits)."""
    mined = _jsonl(out / "mine" / "qrels.jsonl")
    kept: set[tuple[str, str]] = set()
    for f in sorted((out / "dataset" / "qrels").glob("all-*.tsv")):
        with open(f, encoding="utf-8", newline="") as fh:
            kept |= {(row["query-id"], row["corpus-id"]) for row in csv.DictReader(fh, delimiter="\t")}
    return [dict(m, exported=(m["query_id"], m["passage_id"]) in kept) for m in mined]
