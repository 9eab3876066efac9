"""The eval/README.md section of eval/bench_validity.py, rendered from its result.json."""
from __future__ import annotations

from typing import Any

from eval._alphafin import DATA

TARGET = 0.8  # Kendall τ between the human and the generated ranking (issue 18)
HEADLINE = "all"  # the generated subset the target is stated on


def _f(v: float, nd: int = 4) -> str:
    return "–" if v is None or v != v else f"{v:.{nd}f}"


def _ranks(col: dict[str, float]) -> dict[str, int]:
    from scipy.stats import rankdata

    names = list(col)
    return dict(zip(names, rankdata([-col[r] for r in names], method="min").astype(int).tolist()))


def _short(mods: list[str]) -> str:
    return ", ".join(m.removeprefix("fincprg.finance.") if m != "fincprg.finance" else "finance/__init__"
                     for m in mods) or "none"


def _verdict(c: dict[str, Any]) -> str:
    return f"τ = {_f(c['kendall'], 3)} ({'met' if c['kendall'] >= TARGET else 'not met'})"


def render(r: dict[str, Any], also: list[dict[str, Any]] = ()) -> str:
    """The eval/README.md section, from a saved result.json (plus other runs' headline rows)."""
    label = lambda spec: r["dense"].get(spec, spec)  # noqa: E731
    h_sub = next(iter(r["ndcg"]["human"]))
    human, gen = r["ndcg"]["human"][h_sub], r["ndcg"]["generated"]
    raw = r["ndcg"].get("generated as exported", {})
    head = HEADLINE if HEADLINE in gen else next(iter(gen))
    subsets = [head, *(s for s in gen if s != head)]
    hi, gi, corr = r["human"], r["generated"], r["correlation"]
    gen_reads = set().union(*map(set, r["generator_reads"].values())) if r["generator_reads"] else set()
    sets = " ".join("--set " + s.replace(str(DATA), "../shared/data") for s in r["build_sets"])
    untitled = r.get("untitled", False)
    lines = [
        ("## Benchmark validity without leakage: the untitled build vs the human titles "
         "(`eval/bench_validity.py --untitled`)" if untitled else
         "## Benchmark validity: human queries vs the generated benchmark (`eval/bench_validity.py`)"), "",
        *(["The build reads the reports **without their titles**: no title field, and the body's 研报题目是…研报摘要 "
           "header (which repeats the title) cut before ingest, so no human query reaches the generator or verify; "
           "report-level queries come from each report's lead (issue 50).", ""] if untitled else []),
        f"Measured {r['date']} at commit {r['commit']} on {r['machine']} CPU ({r['cpus']} cores, shared), offline: "
        f"build {r['build_s']:.0f} s, evaluation {r['eval_s']:.0f} s, total {r['wall']:.0f} s wall.", "",
        f"- **Reports:** {r['n_reports']} AlphaFin reports ("
        + (f"the held-out part of eval/bench_train.py's split, sha1(title) mod {r['held_out_buckets']} = 0"
           if r["reports"] == "held-out" else "all of them") + f"), built with `fincprg build` (config "
        f"{r['config']}, `{sets}`; stage folders besides dataset/: {', '.join(r['stages'])}).",
        f"- **Corpus, identical for both benchmarks:** {hi['passages']} of the export's {r['export_passages']} "
        "passages, with the report title and the body's 研报题目是…研报摘要 header removed (they repeat the human "
        "query); the rest were only the header and are dropped.",
        f"- **Human:** {hi['queries']} queries, each a report's title as its analysts wrote it (AlphaFin's "
        "`summary` field); every passage of that report is relevant.",
        f"- **Generated:** the export's {gi['queries']} queries with the qrels of its splits "
        f"({', '.join(gi['splits'])}) merged, since nothing is trained here; {gi['dropped_pairs']} of "
        f"{gi['pairs']} (query, passage) pairs pointed at a dropped passage. Queries per subset: "
        + ", ".join(f"{s} {n}" for s, n in gi["queries_by_subset"].items()) + "."
        + (f" For reference, `{head}` as exported is also scored on the export's corpus as it is (titles and "
           "headers kept), which is what `fincprg eval` on the dataset sees." if raw else ""),
        "- **Scoring:** every retriever through `fincprg eval`'s harness (`run_eval`, pytrec_eval nDCG@10, "
        "k = 100). `bm25-report` is left out: it searches only the query's own report, which for a title "
        "query is the answer. The last two columns: the `fincprg.finance` modules whose code ran while the "
        "retriever scored a toy corpus (traced), and those of them that fincprg/"
        + ", fincprg/".join(r["generator_reads"]) + " also import.", "",
        f"| retriever | human `{h_sub}` (rank) | generated `{head}` (rank) | "
        + " | ".join(f"`{s}`" for s in subsets[1:]) + (f" | `{head}` as exported" if raw else "")
        + " | fincprg.finance code it runs | also read by the generator |",
        "|---|---:|---:|" + "---:|" * (len(subsets) - 1 + bool(raw)) + "---|---|"]
    shown = [x for x in r["specs"] if x in human and x in gen[head]]
    hr, gr = _ranks({x: human[x] for x in shown}), _ranks({x: gen[head][x] for x in shown})
    for x in shown:
        runs = r["shared_code"].get(x)
        lines.append(f"| {label(x)} | {_f(human[x])} ({hr[x]}) | {_f(gen[head][x])} ({gr[x]}) | "
                     + " | ".join(_f(gen[s].get(x)) for s in subsets[1:])
                     + (f" | {_f(raw[head].get(x))}" if raw else "")
                     + (f" | {_short(runs)} | {_short([m for m in runs if m in gen_reads])} |" if runs is not None
                        else " | not traced | not traced |"))
    lines += ["", "Agreement with the human column (Kendall τ-b and Pearson r over the retrievers; 95% interval of τ "
              f"from {r['args']['bootstrap']} bootstrap resamples of the queries of both benchmarks):", "",
              "| generated subset | retrievers | n | Kendall τ | τ 95% interval | Pearson r |",
              "|---|---|---:|---:|---|---:|"]
    rows = [(f"`{s}`", corr["generated"][s]) for s in subsets]
    rows += [(f"`{s}` as exported", c) for s, c in corr.get("generated as exported", {}).items()]
    for name, by_group in rows:
        for group, c in by_group.items():
            if group != "fincprg offline" and c["retrievers"] == by_group.get("fincprg offline", {}).get("retrievers"):
                continue  # the same retrievers: the same row
            lines.append(f"| {name} | {group} | {int(c['n'])} | {_f(c['kendall'], 3)} | "
                         f"[{_f(c['ci'][0], 2)}, {_f(c['ci'][1], 2)}] | {_f(c['pearson'], 3)} |")
    if "bm25" in shown and any(d in shown for d in r["dense"]):
        notes = r.get("dense_prompts", {})
        lines += ["", "Dense / BM25 nDCG@10:", ""] + [
            f"- {label(d)}: {human[d] / human['bm25']:.2f} on the human queries, "
            f"{gen[head][d] / gen[head]['bm25']:.2f} on the generated `{head}` queries"
            + (f"; {notes[d]}" if d in notes else "") + "." for d in r["dense"] if d in shown]
    traced = [x for x in shown if x in r["shared_code"]]
    fact = [x for x in traced if set(r["shared_code"][x]) & gen_reads - {"fincprg.finance.lexicon"}]
    tok = [x for x in traced if x not in fact and set(r["shared_code"][x]) & gen_reads]
    free = [x for x in traced if x not in fact and x not in tok]
    lines += ["", "**Code shared with the generator.** " + "; ".join(
        f"fincprg/{p} imports {_short(m)}" for p, m in r["generator_reads"].items()) + ". "
        "Retrievers that run finance code beyond the tokenizer that the generator also reads: "
        + (", ".join(f"{label(x)} (rank {hr[x]} of {len(shown)} on the human queries, {gr[x]} on the generated)"
                     for x in fact) or "none") + ". "
        "Only the tokenizer (`fincprg.finance.lexicon`: jieba + finance dictionary, which also cuts the "
        f"generator's query words): {', '.join(map(label, tok)) or 'none'}. None: {', '.join(map(label, free)) or 'none'}."]
    shifts = [f"{label(x)} {hr[x]} → {gr[x]}" for x in shown if abs(hr[x] - gr[x]) >= 2]
    lines += ["", f"**Reading.** Rank changes of two places or more (human → generated `{head}`): "
              + (", ".join(shifts) or "none") + ". The two tasks differ in shape as well as in who wrote the "
              "queries: a human query is a report title with every passage of its report relevant (report-level, "
              f"{hi['passages'] / max(hi['queries'], 1):.1f} relevant passages per query), a generated query mostly "
              "asks about one passage or sentence, so a retriever that ranks reports first (`hier`) has an "
              "advantage on the human queries that passage-level generated queries do not reward."]
    for b, fails in r["failures"].items():
        lines += [f"- {x} FAILED on the {b} benchmark: {msg.splitlines()[0]}" for x, msg in fails.items()]
    lines += ["", f"**Target** τ ≥ {TARGET} between the human and the generated `{head}` rankings: "
              + "; ".join(f"{g} retrievers {_verdict(c)}" for g, c in corr["generated"][head].items()) + "."]
    if also:
        lines += ["", "This run and earlier ones (`--also`; generated `all`, each over its own identical corpus):", "",
                  "| reports | commit | human / generated queries | τ fincprg offline [95%] | retrievers | τ all | "
                  "Pearson all |", "|---|---|---|---:|---:|---:|---:|"]
        for x in [r, *also]:
            c = x["correlation"]["generated"][HEADLINE]
            lines.append(f"| {x['n_reports']} ({x['reports']}) | {x['commit']} | {x['human']['queries']} / "
                         f"{x['generated']['queries']} | {_f(c['fincprg offline']['kendall'], 3)} "
                         f"[{_f(c['fincprg offline']['ci'][0], 2)}, {_f(c['fincprg offline']['ci'][1], 2)}] | "
                         f"{int(c['all']['n'])} | {_f(c['all']['kendall'], 3)} | {_f(c['all']['pearson'], 3)} |")
    return "\n".join(lines)
