"""The eval/README.md section of eval/run_baselines.py: tables, the FiQA study's findings checked, and which SPEC
stands for each seed system."""
from __future__ import annotations

import math
from typing import Any

# the FiQA study's systems as fincprg SPECs (offline side: LSA stands for its dense retriever)
FIQA_OFFLINE = ["bm25", "lsa", "hybrid", "rrf", "linear", "rubric-point", "rubric-list", "rewrite"]

SEED_SYSTEMS = """\
### Seed systems and the SPECs that implement them

| seed system | SPEC(s) | differs from the paper's setting |
|---|---|---|
| FinCPRG paper, Tables 2–3 (lexical, dense, reranked) | `bm25`, `dense:MODEL`, `dense-flag:MODEL`, `rerank[-flag]:MODEL` | The paper's BGE / bge-reranker models are not on this offline box: the dense rows here use the multilingual e5-small (`fincprg models import-e5`), no cross-encoder is run. |
| FiQA study (multi-stage financial retrieval): BM25, LSA, hybrid, RRF | `bm25`, `lsa`, `hybrid`, `rrf` | Chinese reports and jieba + finance-dictionary tokens instead of English FiQA; LSA is 64-d TF-IDF + SVD; the hybrid is min-max 0.75·BM25 + 0.25·side. |
| FiQA study: linear feature reranker | `linear`, `linear:dense:MODEL` | Logistic regression (scikit-learn, balanced classes, standardised features) over the hybrid top 200. Trained on the folder's train qrels (demo, alphafin_generated: the export's train split; alphafin_summary: the generated queries of the same corpus); disc_finllm has none, so it is 5-fold cross-fitted on its test queries. The dense feature is LSA unless `:dense:MODEL`. |
| FiQA study: pointwise and listwise rubric rerankers | `rubric-point`, `rubric-list` (`:dense:MODEL`) | Same features, top 200; the weights (fincprg/evaluate/retrievers/learned.py `RUBRIC`) were set once by hand and are not the study's; listwise = min-max of every feature over the candidate list before the same weights. |
| FiQA study: query rewriting ablation | `rewrite`, `rewrite:llm[:CONFIG]` | Offline: rule rewrite (question words out, fincprg's metric synonyms in) before BM25. The LLM rewrite (prompts/search_rewrite) needs a configured LLM and was not run here. |
| HiREC (documents first, then passages) | `hier`, `hier:N,docs=dense:MODEL,passages=dense:MODEL[,docs-ce=MODEL][,passages-ce=MODEL]` | A "document" is a report, represented by its title + opening passage; HiREC's evidence-curation LLM step is not implemented; the cross-encoder stages exist but no Chinese cross-encoder is on this box, so the run here has dense stages only (e5-small, not fine-tuned). |
| Finance-card reranker | `cards`, `cards:ce:MODEL`, `cards:llm[:CONFIG]` | Offline the relevance signal is the rule-extracted card alignment (fincprg.finance); with a real scorer the cross-encoder score or the LLM's 0–3 grade (prompts/passage_relevance, groups of 5) replaces it in the same RRF fusion with BM25. Only the rule form was run here. |
| Multi-agent Borda reranker | `borda`, `borda:ce:MODEL`, `borda:llm[:CONFIG]` | One scorer regrouped per round stands in for the agents; offline the scorer is card alignment + BM25, which is pointwise, so the regrouping adds nothing but noise; the LLM scorer grades each group of 4 in one request (a round's groups sent together). Only the offline form was run here. |
"""


def _fmt(v: float | None, digits: int = 4) -> str:
    return "–" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{digits}f}"


def headline(res: Any) -> str:
    return "all" if "all" in res.subsets else res.subsets[0]


def label(spec: str, e5: str | None) -> str:
    return spec.replace(e5, "e5") if e5 else spec


def fiqa_findings(ndcg: dict[str, float], specs: list[str], pair: tuple[str, str]) -> list[str]:
    """The study's three findings checked on ``ndcg`` (retriever -> nDCG@10) over ``specs``."""
    have = [s for s in specs if s in ndcg]
    if "bm25" not in have or not all(p in have for p in pair):
        return ["not enough of the study's systems ran"]
    order = sorted(have, key=lambda s: -ndcg[s])
    best = max(ndcg[s] for s in have)
    lst, pt = pair
    rank = 1 + sum(ndcg[s] > ndcg[lst] for s in have)
    return [
        ("agrees" if ndcg["bm25"] == best else f"differs ({order[0]} {ndcg[order[0]]:.4f} > bm25 {ndcg['bm25']:.4f})")
        + ": BM25 strongest",
        ("agrees" if rank == 2 else f"differs (rank {rank} of {len(have)})") + ": listwise rubric second",
        ("agrees" if ndcg[lst] > ndcg[pt] else "differs") + f": listwise above pointwise ({ndcg[lst]:.4f} vs "
        f"{ndcg[pt]:.4f})",
    ]


def render(results: dict[str, dict[str, Any]], skipped: dict[str, str], *, e5: str | None, when: str, commit: str,
           machine: str, wall: float, cpu: float) -> str:
    names = list(results)
    out = ["## Seed baselines (`eval/run_baselines.py`)", "",
           f"Measured {when} at commit {commit} on {machine}, offline; {wall:.0f}s wall, {cpu:.0f}s CPU in all "
           f"(first run: building the AlphaFin dataset and encoding with e5 included). Metrics by pytrec_eval. "
           "`e5` = multilingual e5-small converted offline (`fincprg models import-e5`), not fine-tuned"
           + ("" if e5 else " (not run: no model folder)") + ".", ""]
    out += [f"- **{n}**: {results[n]['docs']} documents, {results[n]['queries']} evaluated queries "
            f"(headline subset `{headline(results[n]['res'])}`){'; ' + results[n]['note'] if results[n]['note'] else ''}"
            + (f"; {results[n]['encoded']} texts encoded by e5 (the rest from the cache)"
               if results[n].get("encoded") is not None else "") for n in names]
    out += [f"- **{n}**: skipped, {why}" for n, why in skipped.items()]
    out.append("")
    specs: list[str] = []
    for n in sorted(names, key=lambda n: -len(results[n]["res"].scores)):  # the fullest run's order first
        specs += [s for s in results[n]["res"].scores if s not in specs]
    if names:
        out += ["### nDCG@10 (headline subset)", "", "| retriever | " + " | ".join(names) + " |",
                "|---" * (len(names) + 1) + "|"]
        for s in specs:
            cells = []
            for n in names:
                sc = results[n]["res"].scores.get(s)
                cells.append(_fmt(sc[headline(results[n]["res"])]["nDCG@10"]) if sc else "–")
            out.append(f"| {label(s, e5)} | " + " | ".join(cells) + " |")
        out += ["", "### Time per query (ms; fit + search of one retriever over the dataset, divided by its "
                "evaluated queries; the first retriever also pays jieba start-up. The e5 rows share one embedding "
                "cache: `dense:e5` pays for encoding the corpus and its queries, later e5 rows only for texts not "
                "seen yet, such as linear's training queries; a run whose cache is already warm pays for none)", "", "| retriever | " + " | ".join(names) + " |",
                "|---" * (len(names) + 1) + "|"]
        for s in specs:
            cells = []
            for n in names:
                ex = results[n]["res"].extras.get(s)
                cells.append(_fmt(1000 * ex["seconds"] / max(results[n]["queries"], 1), 1) if ex else "–")
            out.append(f"| {label(s, e5)} | " + " | ".join(cells) + " |")
        fails = [f"- {n} / {label(s, e5)}: {m.splitlines()[0]}" for n in names
                 for s, m in results[n]["res"].failures.items()]
        if fails:
            out += ["", "Failures:", ""] + fails
        out += ["", "### The FiQA study's findings (BM25 strongest; listwise rubric second and above pointwise)", "",
                f"Checked on nDCG@10 of the headline subset among the study's systems: offline = "
                f"{', '.join(FIQA_OFFLINE)}"
                + ("; e5 = the same with e5 as the dense side (dense, hybrid, linear, rubrics) plus bm25, rrf, "
                   "rewrite" if e5 else "") + ".", ""]
        for n in names:
            res = results[n]["res"]
            nd = {s: v[headline(res)]["nDCG@10"] for s, v in res.scores.items()}
            lines = [f"offline: " + "; ".join(fiqa_findings(nd, FIQA_OFFLINE, ("rubric-list", "rubric-point")))]
            if e5:
                e5_set = ["bm25", "rrf", "rewrite", f"dense:{e5}", f"hybrid:0.75:dense:{e5}", f"linear:dense:{e5}",
                          f"rubric-point:dense:{e5}", f"rubric-list:dense:{e5}"]
                lines.append("e5: " + "; ".join(fiqa_findings(nd, e5_set, (f"rubric-list:dense:{e5}",
                                                                             f"rubric-point:dense:{e5}"))))
            out.append(f"- **{n}**: " + " — ".join(label(x, e5) for x in lines))
        out.append("")
        out += ["Reading: these are small sets (43–84 evaluated queries; disc_finllm is lexical and nearly saturated, "
                "R@1 cannot exceed ~0.36 there), and no significance test is run, so a difference of a few "
                "hundredths is not a finding on its own. alphafin_summary asks for a report by its title, so every "
                "retriever that reaches the right report first (`hier`) is favoured, and `bm25-report` is left out "
                "(it would search the answer's own report). The FiQA study's order was measured on English FiQA with "
                "its own rubric weights; the lines above say where fincprg's versions agree, not whether the study "
                "holds.", "",
                "Notes per retriever (linear's training queries or cross-fitting, pool recall, Borda stability) are "
                "in runs/baselines/<dataset>/results.md.", ""]
    out.append(SEED_SYSTEMS)
    return "\n".join(out)
