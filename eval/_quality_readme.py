"""bench_quality's section of eval/README.md: the blind reading (when read), yield, and the rule tables."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from _quality_reading import MINED_LEVELS, REASONS, emitted_share
from _quality_sources import LEVELS
from _readme import README, write_section

RULE_TEXT = [
    "Rules (`fincprg/generate/quality.py`; a query passes when it passes all six):",
    "1. `no_phrase_list`: no 、 (no key phrases glued into a list);",
    "2. `no_cut_token`: every stretch of 2+ CJK characters copied from the source starts and ends on a token "
    "boundary of the source as fincprg's jieba tokenizer cuts it (one function character such as 的 at either "
    "end is allowed; the question's own words, i.e. periods, metric names, directions and frame words such as "
    "原因/多少, verdicts against expectations such as 符合预期/不及预期, and company names are not counted as "
    "copies);",
    "3. `content_words`: the copied content is made of words of the tokenizer's dictionary (no word jieba had "
    "to guess, like 以收 or 比仅) and ends in a noun (jieba's part-of-speech tags; fincprg's finance terms count "
    "as nouns; one function character such as 的/为 at either end of a copy is not content, as in rule 2);",
    "4. `period_in_source`: every period the query names is named by the source: same year and part; a "
    "forecast only where the source forecasts, an actual only where the source gives more than a forecast; "
    "a part the source writes without a year is read in the source's latest actual year; a query that says "
    "预测/预计 asks forecasts; topic level: a year inside the span of the topic's report dates also counts;",
    "5. `period_placed`: the first period stands at the start, right after the named company/subject (or an "
    "industry), or after 预计/在/截至;",
    "6. `subject_named`: the query names a company, a stock code, or a term of the CITIC industry lexicon.",
    "Sources: sentence query = its sentence + passage + report title; passage query = passage + title; "
    "topic subquery and intent = the titles and dates of the topic's reports; the subjects a query may name "
    "are the reports' companies (an untitled report's: the listed company its body names most, by the stock "
    "table) and, at topic level, the topic's industry.",
]


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.0f}%"


def _ci(ci: list[float] | tuple[float, float] | None) -> str:
    return "n/a" if not ci else f"{_pct(ci[0])}–{_pct(ci[1])}"


def _intro(meta: dict[str, Any], results: dict[str, Any]) -> list[str]:
    c = meta.get("corpus", {})
    times = ", ".join(f"{n} {r['build_s']} s (+ {r.get('measure_s', '?')} s measuring)" for n, r in results.items())
    extra = f", sheets {meta['sheet_s']} s" if "sheet_s" in meta else ""
    return [
        f"Measured {meta['date']} at commit {meta['commit']} on {meta['machine']}; seed {meta['seed']}. "
        f"Input: AlphaFin's {c.get('reports', '?')} reports from ../shared/data"
        + (" and the 2019 annual report of 安靠智电" if meta.get("annual") else "")
        + ", each built with `fincprg build --upto export` (offline backends; `topics.viz=none`, "
        "`finance.stock_table` and `topics.classifier.stock_table` = stock_basic.csv) twice: **titled** = the "
        "records as `alphafin_to_jsonl` converts them (title, date, and the body with its header); **untitled** "
        "= the same bodies with the header that repeats the title, target price and rating "
        f"(「研报题目是:…；研报摘要:」) stripped ({c.get('header_stripped', '?')} of {c.get('reports', '?')}) and no "
        f"title, date or other field (title still in a body: {c.get('title_in_body', '?')}; publication date "
        f"in a body: {c.get('date_in_body', '?')}, each as the body's own words, e.g. an event on that day "
        f"「2023年4月27日，公司发布…」, left as written; {c.get('duplicate_bodies', '?')} bodies repeat another one and are "
        "rejected by ingest as duplicates once the titles no longer tell them apart). Queries read are the "
        "emitted ones: the exported dataset's `queries.jsonl`. "
        + ("**titled-mixed** = the titled records with the 49,148 East Money titles as `ingest.extra_titles` "
           "(topics mix companies and industry reports; built instead of titled and untitled). "
           if "titled-mixed" in results else "")
        + (f"**cfb-held-out** = the first {meta['cfb']} bodies of the held-out part of CFBenchmark's untitled "
           "report bodies (eval/_cfb_split.py, sha1 of the id mod 4 = 0: no rule is written from them), `{id, text}` "
           "only, built the same way. " if meta.get("cfb") else "")
        + f"Times: {times}{extra}; {meta.get('total_s', '?')} s in all.", ""]


def _reading(meta: dict[str, Any], results: dict[str, Any], agg: dict[str, Any] | None) -> list[str]:
    lines = ["### Blind reading (rubric: /work/shared/QUALITY_RUBRIC.md)", ""]
    sheets = meta.get("sheets")
    if agg is None:
        drawn = "; ".join(f"{b}: " + ", ".join(f"{lv} {n}" for lv, n in lv_n.items())
                          for b, lv_n in sheets.items()) if sheets else "none"
        return lines + [
            "**Not read yet.** " + (f"Sheets drawn at seed {meta['seed']} ({drawn}); a reader fills them and "
                                    "`eval/bench_quality.py --verdicts DIR` records the verdicts here."
                                    if sheets else "Run with `--sheet DIR` to draw the sheets."), ""]
    lines += [f"Read {agg.get('read_on', '?')} by a reader who saw only the sheets (level, query, sources as the "
              "rubric lists them; no generator, rule or id); "
              f"{meta['n_read']} random emitted queries per level and build, seed {meta['seed']}"
              + (f"; unread items: {agg['unread']}" if agg.get("unread") else "") + ".", "",
              "| build | level | emitted | acceptable | 95% CI | reasons (the 0s) | rules passed, reader failed "
              "| rules failed, reader passed | agreement |", "|---|---|---:|---:|---:|---|---:|---:|---:|"]
    for build, levels in agg["reading"].items():
        y = results[build]["yield"]["levels"]
        for lv in LEVELS:
            r = levels.get(lv)
            if not r:
                continue
            reasons = ", ".join(f"{k} {r['reasons'][k]}" for k in REASONS if r["reasons"].get(k)) or "none"
            lines.append(f"| {build} | {lv} | {y[lv]['emitted']} | {r['ok']}/{r['n']} ({_pct(r['rate'])}) | "
                         f"{_ci(r['ci'])} | {reasons} | {r['rules_pass_reader_fail']} | "
                         f"{r['rules_fail_reader_pass']} | {r['agree']}/{r['n']} |")
    lines += ["", *_criteria(agg, results), "", "Failing examples (three per build and level, as read):", ""]
    for build, levels in agg["reading"].items():
        for lv in LEVELS:
            for e in levels.get(lv, {}).get("examples", []):
                note = f": {e['note']}" if e.get("note") else ""
                rules = ", ".join(e["rule_fails"]) or "passed every rule"
                lines.append(f"- {build} / {lv}: 「{e['text']}」 — {e['reason']}{note} (rules: {rules})")
    m = agg.get("mined", {})
    lines += ["", "Mined labels of the titled build (every label mining wrote, `mine/qrels.jsonl`; `in dataset` = "
              "how many of those read are in the exported qrels, the rest belong to queries export dropped as "
              "near-duplicates), read blind: the query and the passage it was labelled with (and its report's "
              "title), scored 1–5 (5 = the passage fully answers the query, 3 = partly, 1 = unrelated); FP = "
              "score < 3. Fewer than the asked number per level means the build has no more.", "",
              "| level | read (in dataset) | FP | 95% CI | scores 1/2/3/4/5 |", "|---|---:|---:|---:|---|"]
    for lv in MINED_LEVELS:
        r = m.get(lv)
        if r:
            sc = "/".join(str(r["scores"].get(str(s), r["scores"].get(s, 0))) for s in range(1, 6))
            lines.append(f"| {lv} | {r['n']} ({r.get('exported', '?')}) | {r['fp']} ({_pct(r['rate'])}) | "
                         f"{_ci(r['ci'])} | {sc} |")
        else:
            lines.append(f"| {lv} | 0 | n/a | n/a | — |")
    lines.append("")
    for lv in MINED_LEVELS:
        for e in m.get(lv, {}).get("examples", []):
            lines.append(f"- mined / {lv}: 「{e['text']}」 scored {e['score']}" + (f": {e['note']}" if e["note"] else ""))
    return lines + [""]


def _criteria(agg: dict[str, Any], results: dict[str, Any]) -> list[str]:
    """Issue 18's bars, each as measured (an estimate from the sample; the CI says how firm)."""
    rows = ["| bar | measured | met |", "|---|---|---|"]
    t = agg["reading"].get("titled", {})
    if t:
        worst = min(t.values(), key=lambda r: r["rate"])
        rows.append("| titled: ≥ 90% acceptable at every level | " + ", ".join(
            f"{lv} {_pct(t[lv]['rate'])}" for lv in LEVELS if lv in t) + f" | {_yes(worst['rate'] >= 0.9)} |")
    mx = agg["reading"].get("titled-mixed", {})
    if mx:
        worst = min(mx.values(), key=lambda r: r["rate"])
        rows.append("| titled-mixed (topics mixing companies, issue 38): ≥ 90% acceptable at every level | "
                    + ", ".join(f"{lv} {_pct(mx[lv]['rate'])}" for lv in LEVELS if lv in mx)
                    + f" | {_yes(worst['rate'] >= 0.9)} |")
    u = agg["reading"].get("untitled", {})
    if u:
        share = emitted_share(u, results["untitled"]["yield"])
        rows.append(f"| untitled: ≥ 80% of the emitted queries acceptable (level rates weighted by emitted "
                    f"count) | {_pct(share)} | {_yes(share is not None and share >= 0.8)} |")
        ws = sum(r["reasons"].get("wrong_subject", 0) for r in u.values())
        rows.append(f"| untitled: no fragment subjects | wrong_subject verdicts (fragments among them): {ws} | "
                    f"{'yes' if ws == 0 else 'see the examples'} |")
        y = results["untitled"]["yield"]
        rows.append("| untitled: yield stated | " + ", ".join(
            f"{lv} {y['levels'][lv]['per']}" for lv in ("sentence", "passage")) + " queries per passage; "
            f"{_pct(y['share_with_query'])} of passages have one | yes |")
    m = agg.get("mined", {})
    if m:
        ok = all(m.get(lv) and m[lv]["n"] >= 30 and m[lv]["rate"] <= 0.1 for lv in MINED_LEVELS)
        rows.append("| mined labels: FP ≤ 10% at every level, ≥ 30 read per level | " + ", ".join(
            f"{lv} {m[lv]['fp']}/{m[lv]['n']}" if m.get(lv) else f"{lv} not read" for lv in MINED_LEVELS)
            + f" | {_yes(ok)} |")
    return rows


def _yes(b: bool) -> str:
    return "yes" if b else "**no**"


def _yield(results: dict[str, Any]) -> list[str]:
    lines = ["### Yield (emitted = in the exported dataset; generated = written by generate/topics)", "",
             "| build | reports (titled) | passages | sentence: emitted / generated (per passage) | passage "
             "(per passage) | topic (per titled report) | intent (per titled report) | passages with ≥ 1 "
             "query |", "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, r in results.items():
        y = r.get("yield")
        if not y:
            continue
        cells = [f"{y['levels'][lv]['emitted']} / {y['levels'][lv]['generated']} "
                 f"({'n/a' if y['levels'][lv]['per'] is None else y['levels'][lv]['per']})"
                 for lv in LEVELS]
        lines.append(f"| {name} | {y['reports']} ({y['titled_reports']}) | {y['passages']} | " + " | ".join(cells)
                     + f" | {y['passages_with_query']} ({_pct(y['share_with_query'])}) |")
    return lines + [""]


def _rules(meta: dict[str, Any], results: dict[str, Any]) -> list[str]:
    names = list(results)
    last = results[names[0] if "titled" not in results else "titled"]
    lines = ["### The rules (a proxy a script can apply)", "",
             f"{meta['n']} random emitted queries per level and build (seed {meta['seed']}), each checked against "
             "its sources" + (f"; `{meta['before']}` = the code at that revision (titled input)" if meta.get(
                 "before") else "") + ". The rules check form (lists, cut words, periods, subject), not whether "
             "a finance reader would ask the question: the reading above is the test; issue 11 recorded pass "
             "rates of 97% (sentence) and 100% (passage, topic, intent) here that the strict reading of issue 18 "
             "did not confirm.", "", *RULE_TEXT, "",
             "| level | " + " | ".join(f"{n}: pass rate" for n in names) + " | titled: failures by rule |",
             "|---|" + "---:|" * len(names) + "---|"]
    for lv in LEVELS:
        cells = [f"{_pct(results[n]['rules'][lv]['rate'])} ({results[n]['rules'][lv]['pass']}/"
                 f"{results[n]['rules'][lv]['n']})" for n in names]
        fails = ", ".join(f"{k} {v}" for k, v in sorted(last["rules"][lv]["fails"].items())) or "none"
        lines.append(f"| {lv} | " + " | ".join(cells) + f" | {fails} |")
    lines += ["", "Label audit (`fincprg audit`, rules judge, 50 pairs per 0.02 interval and level): FP rate of the "
              "labels = accepted pairs judged < 3 over the accepted pairs judged; before the veto = every sampled "
              "pair above the threshold, vetoed ones included; overturned = vetoed and judged > 3. The rules "
              "judge shares the veto's fact comparison, so it is a stand-in, not a reader:", "",
              "| space | build | accepted pairs (identical texts) | vetoed | FP rate of the labels | before the "
              "veto | vetoes overturned |", "|---|---|---:|---:|---:|---:|---:|"]
    for sp in ("sentence", "passage", "topic"):
        for n in names:
            a = results[n]["audit"][sp]
            acc = a["accepted_fp"] / a["accepted_judged"] if a.get("accepted_judged") else None
            lines.append(f"| {sp} | {n} | {a['accepted']} ({a['identical']}) | {a['vetoed']} | {_pct(acc)} "
                         f"({a['accepted_fp'] or 0} / {a['accepted_judged'] or 0}) | {_pct(a['fp_rate'])} "
                         f"({a['fp'] or 0} / {a['judged_above'] or 0}) | {a['vetoed_synonymous'] or 0} / "
                         f"{a['vetoed_judged'] or 0} |")
    lines += ["", "| build | titles | industry unknown | industry sources | leaf topics | topic industry purity | "
              "BM25 nDCG@10 jieba / bigrams (passage subset) | query tokens in passage |",
              "|---|---:|---:|---|---:|---:|---:|---:|"]
    for n in names:
        i, b = results[n]["industry"], results[n]["bias"]
        src = ", ".join(f"{k} {v}" for k, v in i["sources"].items()) or "none"
        purity = "n/a" if i["topic_purity"] is None else i["topic_purity"]
        lines.append(f"| {n} | {i['titles']} | {i['unknown']} ({_pct(i['unknown_share'])}) | {src} | {i['topics']} "
                     f"| {purity} | {b.get('bm25_jieba')} / {b.get('bm25_bigram')} | {b.get('token_overlap')} |")
    lines += ["", "Rule failures (titled):", ""]
    lines += [f"- {lv}: {e}" for lv in LEVELS for e in last["rules"][lv]["examples"]] or ["- none"]
    return lines


def write_readme(measured: dict[str, Any], agg: dict[str, Any] | None, readme: Path = README) -> None:
    meta, results = measured["meta"], measured["results"]
    body = ["## Query and label quality of the offline backends (`eval/bench_quality.py`)", "",
            *_intro(meta, results), *_reading(meta, results, agg), *_yield(results), *_rules(meta, results)]
    write_section("query-quality", "\n".join(body), readme)
