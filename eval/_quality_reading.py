"""bench_quality's blind reading: draw the sheets a reader scores, keep the key apart, and count the verdicts.

Layout of a sheet folder (``--sheet DIR``)::

    DIR/reader/sheet-<build>.md       what a reader sees: numbered items, level, query, sources (rubric)
    DIR/reader/verdicts-<build>.jsonl one line per item to fill: {"item", "acceptable": 0|1, "reason", "note"}
    DIR/reader/sheet-mined.md         mined labels: query + the passage it was labelled with
    DIR/reader/verdicts-mined.jsonl   {"item", "score": 1..5, "note"}
    DIR/key.json                      item -> query id, build, level, the rules' verdict (not for the reader)
    DIR/measure.json                  rule rates, audit, yield, timings of the builds (for the README)

Only ``DIR/reader`` goes to a reader. Items are numbered in a seeded random order within each level, so an
item number says nothing about the query id, generator or rule verdict.
"""
from __future__ import annotations

import json
import math
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

from _quality_sources import LEVELS, NO_TITLE, BuildView, mined_labels

REASONS = ("garbled", "wrong_subject", "not_answered", "wrong_period", "vague", "keyword_list", "unnatural",
           "other")
MINED_LEVELS = ("sentence", "passage", "topic")


def draw(rows: list[dict[str, Any]], n: int, seed: int, tag: str, key: str = "id") -> list[dict[str, Any]]:
    """``n`` rows at random (all when fewer), the same for the same seed, tag and rows in any order."""
    pool = sorted(rows, key=lambda r: r[key])
    return random.Random(f"{seed}|{tag}").sample(pool, min(n, len(pool)))


def rule_verdict(view: BuildView, q: dict[str, Any]) -> list[str]:
    """The rules (fincprg/generate/quality.py) a query fails against its sources (empty: it passes)."""
    from fincprg.generate.quality import RULES, check_query

    inp = view.rule_input(q)
    yrs = inp["years"]
    res = check_query(q["text"], inp["source"], subjects=inp["subjects"],
                      year_span=(yrs[0], yrs[-1]) if yrs else None, date_years=yrs)
    return [k for k in RULES if not res[k]]


def _md_query(item: str, level: str, text: str, src: dict[str, Any]) -> list[str]:
    lines = [f"### {item} · level: {level}", "", f"**Query:** {text}", ""]
    if "sentence" in src:
        lines += [f"**Sentence:** {src['sentence']}", ""]
    if "passage" in src:
        lines += [f"**Passage:** {src['passage']}", ""]
    if "title" in src:
        lines += [f"**Report title:** {src['title']}", ""]
    if "reports" in src:
        lines.append("**The topic's reports (title · date):**")
        lines += [f"- {r['title']} · {r['date'] or 'no date'}" + (f"<br>passage: {r['passage']}"
                                                                    if r.get("passage") else "")
                  for r in src["reports"]] or ["- (none)"]
        lines.append("")
    return lines


def _header(title: str, rubric: Path | None, how: list[str]) -> list[str]:
    lines = [f"# {title}", "", *how, ""]
    if rubric is not None and rubric.is_file():
        lines += ["<details><summary>The rubric</summary>", "", rubric.read_text(encoding="utf-8").strip(), "",
                  "</details>", ""]
    return lines


def report_of(query_id: str) -> str | None:
    """The report a sentence or passage query was written from (``qs:r12ab#p0#s3`` -> ``r12ab``), or the topic
    of a topic or intent query (``qt:t51:0:1``, ``qi:t51:0`` -> ``t51``); None for another id."""
    m = re.match(r"q[sp]:([^#]+)#", query_id) or re.match(r"q[ti]:(t[^:#]+)", query_id)
    return m.group(1) if m else None


def seen_reports(keys: list[Path]) -> set[str]:
    """The reports and topics whose queries earlier readings' keys (or a developer's list of what they read, in
    the same form) put before a reader: a reading after class fixes draws from what no reader has seen (issue 38).
    Topic ids hold within one build's clustering."""
    seen: set[str] = set()
    for k in keys:
        items = json.loads(k.read_text(encoding="utf-8"))["items"].values()
        seen |= {r for it in items if (r := report_of(it["query_id"]))}
    return seen


def write_sheets(sheet: Path, views: dict[str, BuildView], *, n_read: int, n_mined: int, seed: int,
                 mined_from: str, rubric: Path | None = None, unseen: set[str] = frozenset()) -> dict[str, Any]:
    """Draw and write every sheet, its verdict template and the key; returns counts per sheet and level.
    ``unseen``: reports and topics an earlier reading showed, whose queries are not drawn again."""
    reader = sheet / "reader"
    reader.mkdir(parents=True, exist_ok=True)
    key: dict[str, Any] = {"seed": seed, "n_read": n_read, "n_mined": n_mined, "items": {}}
    counts: dict[str, dict[str, int]] = {}
    for b, (name, view) in enumerate(views.items()):
        prefix = chr(ord("A") + b)
        md = _header(f"Blind reading sheet {prefix}", rubric, [
            "Score every item by the rubric: is this query acceptable to a demanding finance reader searching a "
            "large collection of Chinese research reports, given its sources?",
            f"Write one line per item into `verdicts-{name}.jsonl`: `acceptable` 1 or 0 and, for a 0, one "
            f"`reason` of: {', '.join(f'`{r}`' for r in REASONS)} (an optional short `note`)."])
        template, counts[name] = [], {}
        i = 0
        for level in LEVELS:
            pool = [q for q in view.queries if q["level"] == level and report_of(q["id"]) not in unseen]
            sample = draw(pool, n_read, seed, f"{name}|{level}")
            counts[name][level] = len(sample)
            if sample:
                md += [f"## Level: {level}", ""]
            for q in sample:
                i += 1
                item = f"{prefix}{i:03d}"
                md += _md_query(item, level, q["text"], view.show(q))
                template.append({"item": item, "acceptable": None, "reason": None, "note": ""})
                key["items"][item] = {"sheet": name, "build": name, "query_id": q["id"], "level": level,
                                      "text": q["text"], "rule_fails": rule_verdict(view, q)}
        (reader / f"sheet-{name}.md").write_text("\n".join(md), encoding="utf-8")
        _write_template(reader / f"verdicts-{name}.jsonl", template)
    counts["mined"] = _mined_sheet(reader, key, views[mined_from], mined_from, n_mined, seed, rubric)
    (sheet / "key.json").write_text(json.dumps(key, ensure_ascii=False, indent=1), encoding="utf-8")
    return counts


def _mined_sheet(reader: Path, key: dict[str, Any], view: BuildView, build: str, n: int, seed: int,
                 rubric: Path | None) -> dict[str, int]:
    md = _header("Mined labels: does the passage answer the query?", rubric, [
        "Each item is a query and a passage that the dataset labels as relevant to it. Score how well the "
        "passage answers the query: 5 = fully answers it, 4 = answers it with a small gap, 3 = partly, "
        "2 = same subject but does not answer it, 1 = unrelated.",
        "Write one line per item into `verdicts-mined.jsonl`: `score` 1..5 (an optional short `note`)."])
    # every query the build generated, not only the exported ones: a label is the miner's output even when
    # export later drops its query as a near-duplicate (``exported`` in the key tells them apart)
    every = {**view.generated, **{q["id"]: q for q in view.queries}}
    levels = {i: q.get("level") for i, q in every.items()}
    texts = {i: q.get("text", "") for i, q in every.items()}
    labels = [dict(m, key=f"{m['query_id']}|{m['passage_id']}") for m in mined_labels(view.out)
              if m["query_id"] in levels]
    template, counts, i = [], {}, 0
    for level in MINED_LEVELS:
        sample = draw([m for m in labels if levels[m["query_id"]] == level], n, seed, f"mined|{level}", key="key")
        counts[level] = len(sample)
        if sample:
            md += [f"## Level: {level}", ""]
        for m in sample:
            i += 1
            item = f"M{i:03d}"
            p = view.passages.get(m["passage_id"], {})
            md += _md_query(item, level, texts[m["query_id"]],
                            {"passage": p.get("text", ""), "title": view.title(p.get("report_id")) or NO_TITLE})
            template.append({"item": item, "score": None, "note": ""})
            key["items"][item] = {"sheet": "mined", "build": build, "query_id": m["query_id"], "level": level,
                                  "passage_id": m["passage_id"], "via": m.get("via"), "score": m.get("score"),
                                  "exported": m["exported"], "text": texts[m["query_id"]]}
    (reader / "sheet-mined.md").write_text("\n".join(md), encoding="utf-8")
    _write_template(reader / "verdicts-mined.jsonl", template)
    return counts


def _write_template(p: Path, rows: list[dict[str, Any]]) -> None:
    p.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


# --- verdicts ---------------------------------------------------------------------------------------------------
def read_verdicts(sheet: Path, key: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every filled verdict by item, from ``DIR/verdicts/*.jsonl`` when that folder exists, else from the
    templates in ``DIR/reader``. Raises ValueError naming the line when a verdict is malformed."""
    folder = sheet / "verdicts" if (sheet / "verdicts").is_dir() else sheet / "reader"
    out: dict[str, dict[str, Any]] = {}
    for f in sorted(folder.glob("*.jsonl")):
        for ln, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            v = json.loads(line)
            item, where = v.get("item"), f"{f}:{ln}"
            if item not in key["items"]:
                raise ValueError(f"{where}: item {item!r} is not in {sheet / 'key.json'}; verdicts must come "
                                 "from the sheets drawn with this key")
            if key["items"][item]["sheet"] == "mined":
                if v.get("score") is None:
                    continue
                if v["score"] not in (1, 2, 3, 4, 5):
                    raise ValueError(f"{where}: score must be 1..5, got {v['score']!r}")
            else:
                if v.get("acceptable") is None:
                    continue
                if v["acceptable"] not in (0, 1):
                    raise ValueError(f"{where}: acceptable must be 0 or 1, got {v['acceptable']!r}")
                if v["acceptable"] == 0 and v.get("reason") not in REASONS:
                    raise ValueError(f"{where}: a 0 needs one reason of {', '.join(REASONS)}, "
                                     f"got {v.get('reason')!r}")
            out[item] = v
    return out


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float] | None:
    """95% Wilson interval of k/n (how far a 40-query reading can be trusted)."""
    if n == 0:
        return None
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return round(max(0.0, c - h), 3), round(min(1.0, c + h), 3)


def aggregate(key: dict[str, Any], verdicts: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Per build and level: acceptable k/n, reasons, three failing examples, agreement with the rules; per
    mined level: FP (score < 3) k/n and the score distribution."""
    reading: dict[str, dict[str, dict[str, Any]]] = {}
    mined: dict[str, dict[str, Any]] = {}
    unread = Counter()
    for item in sorted(key["items"]):
        k = key["items"][item]
        v = verdicts.get(item)
        if v is None:
            unread[k["sheet"]] += 1
            continue
        if k["sheet"] == "mined":
            m = mined.setdefault(k["level"], {"n": 0, "fp": 0, "scores": Counter(), "examples": [], "exported": 0})
            m["n"] += 1
            m["exported"] += bool(k.get("exported"))
            m["scores"][v["score"]] += 1
            if v["score"] < 3:
                m["fp"] += 1
                if len(m["examples"]) < 3:
                    m["examples"].append({"item": item, "text": k["text"], "score": v["score"],
                                          "note": v.get("note") or ""})
            continue
        r = reading.setdefault(k["build"], {}).setdefault(k["level"], {
            "n": 0, "ok": 0, "reasons": Counter(), "examples": [], "rules_pass_reader_fail": 0,
            "rules_fail_reader_pass": 0, "agree": 0})
        r["n"] += 1
        ok, rules_ok = v["acceptable"] == 1, not k["rule_fails"]
        r["ok"] += ok
        r["agree"] += ok == rules_ok
        r["rules_pass_reader_fail"] += rules_ok and not ok
        r["rules_fail_reader_pass"] += ok and not rules_ok
        if not ok:
            r["reasons"][v["reason"]] += 1
            if len(r["examples"]) < 3:
                r["examples"].append({"item": item, "text": k["text"], "reason": v["reason"],
                                      "note": v.get("note") or "", "rule_fails": k["rule_fails"]})
    for levels in reading.values():
        for r in levels.values():
            r["rate"] = round(r["ok"] / r["n"], 3) if r["n"] else None
            r["ci"] = wilson(r["ok"], r["n"])
    for m in mined.values():
        m["rate"] = round(m["fp"] / m["n"], 3) if m["n"] else None
        m["ci"] = wilson(m["fp"], m["n"])
    return {"reading": reading, "mined": mined, "unread": dict(unread)}


def emitted_share(levels: dict[str, dict[str, Any]], yields: dict[str, Any]) -> float | None:
    """Acceptable share of all emitted queries: each level's rate weighted by how many queries it emitted."""
    tot = sum(yields["levels"][lv]["emitted"] for lv in levels if levels[lv]["n"])
    if not tot:
        return None
    return round(sum(levels[lv]["rate"] * yields["levels"][lv]["emitted"] for lv in levels if levels[lv]["n"])
                 / tot, 3)
