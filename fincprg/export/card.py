"""Dataset card (README.md): what the dataset is, how it was made, Table-1-style statistics."""
from __future__ import annotations

import html
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from fincprg import layout as L
from fincprg.config import ExportConfig, PipelineConfig, section_hash
from fincprg.export.beir import SUBSETS
from fincprg.export.hf import mteb_subsets
from fincprg.manifest_counts import ordered_levels, ordered_reasons
from fincprg.registry import CLASSIFIERS, PAIR_SCORERS, Registry

STAT_COLUMNS = ("queries", "avg_query_chars", "avg_passage_chars", "rel_per_query", "pairs")


def md_text(text: Any) -> str:
    """``text`` from the corpus (a query, a verdict quoting it) as card text: HTML escaped, so a report field such as
    ``<script>`` is shown as written by the hub and by markdown viewers, which render raw HTML in a card."""
    return html.escape(str(text), quote=False)


def subset_stats(
    qrels: Mapping[str, Mapping[str, int]], query_texts: Mapping[str, str], passage_texts: Mapping[str, str]
) -> dict[str, float | int]:
    """Table-1 columns for one qrels file.

    ``avg_passage_chars`` averages over the distinct passages the file labels relevant;
    ``rel_per_query`` is pairs / queries.
    """
    pairs = sum(len(r) for r in qrels.values())
    pids = {p for r in qrels.values() for p in r}
    nq = len(qrels)
    return {
        "queries": nq,
        "avg_query_chars": round(sum(len(query_texts[q]) for q in qrels) / nq, 1) if nq else 0.0,
        "avg_passage_chars": round(sum(len(passage_texts[p]) for p in pids) / len(pids), 1) if pids else 0.0,
        "rel_per_query": round(pairs / nq, 2) if nq else 0.0,
        "pairs": pairs,
    }


def produced_by(manifests: Mapping[str, Mapping[str, Any]], export_cfg: ExportConfig) -> PipelineConfig:
    """The config recorded by the stages that produced the data (each manifest holds its stage's declared
    keys), plus export's own; keys no stage declared keep their defaults and affect nothing."""
    data: dict[str, Any] = {}
    for m in manifests.values():
        for key, value in (m.get("config") or {}).items():
            *parents, last = key.split(".")
            node = data
            for part in parents:
                node = node.setdefault(part, {})
            node[last] = value
    data["export"] = export_cfg.model_dump(mode="json")
    return PipelineConfig.model_validate(data)


def config_hash(cfg: PipelineConfig) -> str:
    """Hash of the whole pipeline config without runtime-only keys."""
    return section_hash(cfg, tuple(type(cfg).model_fields))


def _backend(registry: Registry, name: str, model: str | None) -> str:
    """A backend as the card names it: ``name model`` for a model-loading one, else its registry description."""
    return f"{name} {model or ''}".strip() if registry.get(name).needs_model else registry.get(name).description


def _reranker(rr: Any, used: Mapping[str, Any]) -> str:
    """The scorer and threshold mining used (the mine manifest's ``used``), else the configured ones."""
    backend, model = used.get("reranker", rr.backend), used["model"] if "model" in used else rr.model
    threshold = used.get("threshold", rr.threshold)
    return _backend(PAIR_SCORERS, backend, model) + (f", threshold {threshold}" if threshold is not None
                                                      else ", backend default threshold")


def model_ids(cfg: PipelineConfig, used: Mapping[str, Mapping[str, Any]] | None = None) -> dict[str, str]:
    """The models (or honest offline stand-ins) behind each label, from the config; ``used`` (stage -> its
    manifest's ``used``) gives what a stage actually used where it differs (a backend's default threshold)."""
    llm = f"LLM {cfg.llm.model} via {cfg.llm.base_url}"
    cls, emb, rr, neg = cfg.topics.classifier, cfg.topics.embedder, cfg.mine.reranker, cfg.export.negatives
    return {
        "query generator": llm if cfg.generate.backend == "llm" else "offline templates (no LLM)",
        "topic intents": llm if cfg.topics.intents.backend == "llm" else "offline templates (no LLM)",
        "industry classifier": _backend(CLASSIFIERS, cls.backend, cls.model),
        "title embedder": f"{emb.backend}" + (f" {emb.model}" if emb.model else ""),
        "reranker": _reranker(rr, (used or {}).get(L.MINE) or {}),
        "query verification": (f"rules + {llm} judge" if cfg.verify.judge.backend == "llm"
                               else f"rules ({', '.join(cfg.verify.checks) or 'none'}), no LLM judge"),
        "hard negatives": neg.method + (f" {neg.model}" if neg.method == "dense" else "")
                          + ("" if neg.method == "none" else f", {neg.n} per query"),
    }


def labelled_splits(stats: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> dict[str, list[str]]:
    """Subset -> the splits with at least one labelled query (the splits hf/ has a file for)."""
    out: dict[str, list[str]] = {}
    for subset in SUBSETS:
        have = [split for split, s in stats.get(subset, {}).items() if s["queries"]]
        if have:
            out[subset] = have
    return out


def _table(stats: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> list[str]:
    """Table 1, one row per labelled split: an empty split is said in words (``_missing_splits``), not listed."""
    rows = ["| subset | split | queries | avg query length (chars) | avg passage length (chars) "
            "| relevant passages / query | pairs (qrels) |",
            "|---|---|---:|---:|---:|---:|---:|"]
    for subset in SUBSETS:
        for split, s in stats.get(subset, {}).items():
            if not s["queries"]:
                continue
            rows.append(f"| {subset} | {split} | {s['queries']} | {s['avg_query_chars']} | "
                        f"{s['avg_passage_chars']} | {s['rel_per_query']} | {s['pairs']} |")
    return rows


def _missing_splits(stats: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> list[str]:
    """Name each subset/split without labels, and what that means for each loader."""
    out = []
    for subset in SUBSETS:
        empty = [split for split, s in stats.get(subset, {}).items() if not s["queries"]]
        if not empty:
            continue
        why = (" (at least two topic nodes must carry labels for one of them to go to test; see the split rule "
               "below)" if subset == "topic" and "test" in empty else "")
        files = ", ".join(f"`qrels/{subset}-{split}.tsv`" for split in empty)
        out.append(f"- `{subset}` has no {' or '.join(empty)} labels in this build{why}: {files} holds only the "
                   f"header, `hf/` has no such split, and the MTEB snippet below leaves `{subset}` out.")
    return ["", "Splits without labels:", "", *out] if out else []


def _mined_notes(stats: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> list[str]:
    """Say plainly when a ``-mined`` subset adds nothing, so nobody mistakes it for mined data."""
    notes = []
    for base in ("sentence", "passage"):
        direct = sum(s["pairs"] for s in stats.get(base, {}).values())
        mined = sum(s["pairs"] for s in stats.get(f"{base}-mined", {}).values())
        if direct and mined == direct:
            notes.append(f"- `{base}-mined` equals `{base}` in this build: the reranker accepted no equivalent "
                         f"{base}-query pair (score histogram: OUT/{L.STAGE_DIRS[L.MINE]}/{L.HISTOGRAM}; error rates: "
                         "`fincprg audit`).")
    return ["", "Mined labels:", "", *notes] if notes else []


_LICENCE = ("", "## Licence", "",
            "The passages are excerpts of the source research reports and inherit the licence and terms of use "
            "of the corpus they came from; check them before redistributing. Generated queries and labels "
            "follow the same terms.", "")


def render_card(
    *,
    cfg: PipelineConfig,
    stats: Mapping[str, Mapping[str, Mapping[str, Any]]],
    corpus: Mapping[str, Any],
    query_levels: Mapping[str, int],
    generators: Mapping[str, Counter[str]],
    templates: Counter[str],
    signatures: Mapping[str, str | None],
    dropped: Mapping[str, int],
    train_examples: int | None,
    negatives: Mapping[str, Any] | None = None,
    extra: Sequence[str] = (),
    used: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    """Render the card as Markdown (no front matter; the hf/ copy gets its own). ``used``: stage -> what it
    actually used, as its manifest records it."""
    out = ["# fincprg passage-retrieval dataset", "",
           "Chinese financial passage retrieval built from research reports (研报) with the FinCPRG method: "
           "hierarchical queries per passage (passage and sentence level), report-level queries (what a report "
           "answers as a whole; beyond the paper), topic queries from clustered report titles, direct labels, and indirect positives mined by comparing equivalent queries "
           "(`fincprg build`).", "",
           "## How the queries were made", ""]
    out += _query_lines(cfg, query_levels, generators, templates, used)
    out += _statistics_lines(corpus, stats)
    out += _split_lines(cfg, dropped)
    if train_examples is not None:
        out += [f"`train/flagembedding.jsonl`: {train_examples} training queries (`all` subset, train split) "
                "with hard negatives from training-report passages only; no negative is a known positive "
                "(direct or mined, any subset) or has the same text as one.", ""]
        out += negatives_lines(negatives)
    out += list(extra)  # sections of other modules, e.g. export.quality's diversity and difficulty
    out += loading_lines(labelled_splits(stats), signatures.get("export"))
    out += _provenance_lines(cfg, signatures)
    out += _LICENCE
    return "\n".join(out)


def _query_lines(cfg: PipelineConfig, query_levels: Mapping[str, int], generators: Mapping[str, Counter[str]],
                 templates: Counter[str], used: Mapping[str, Mapping[str, Any]] | None) -> list[str]:
    """How the queries were made: each level's count by generator, the models, the templates and prompts."""
    out: list[str] = []
    for level in ("sentence", "passage", "report", "intent", "topic"):
        gens = generators.get(level)
        if query_levels.get(level):
            desc = ", ".join(f"{g}: {n}" for g, n in sorted(gens.items())) if gens else "unlabelled"
            out.append(f"- {level} queries: {query_levels[level]} ({desc})")
    if any("templates" in g for g in generators.values()):
        out += ["", "Queries labelled `templates` were written by fincprg's offline template generator, "
                "not by a language model; they are fluent only within the templates' range and should not be "
                "read as LLM-quality queries."]
    out += ["", "| component | model |", "|---|---|"]
    out += [f"| {k} | {v} |" for k, v in model_ids(cfg, used).items()]
    if templates:
        out += ["", "Templates / prompts and versions (from query provenance):", ""]
        out += [f"- `{t}`: {n} queries" for t, n in sorted(templates.items())]
    return out


def _statistics_lines(corpus: Mapping[str, Any], stats: Mapping[str, Mapping[str, Mapping[str, Any]]]) -> list[str]:
    """The corpus and ingest counts, Table 1, and what is missing or adds nothing."""
    out = ["", "## Statistics", "",
           f"Corpus: {corpus['passages']} passages from {corpus['reports']} reports "
           f"({corpus['reports_train']} train, {corpus['reports_test']} test), "
           f"average passage length {corpus['avg_passage_chars']} characters.", ""]
    if corpus.get("untitled") or corpus.get("undated") or corpus.get("rejected"):
        out += [f"Ingest: {corpus.get('rejected', 0)} input records rejected (reasons in `ingest/rejected.jsonl` of "
                f"the build); {corpus.get('untitled', 0)} reports without a title, which get bottom-up queries only "
                "(no topic, no company completion from the title); "
                f"{corpus.get('undated', 0)} without a date (no date features in topic clustering).", ""]
    out += _table(stats)
    out += ["", "Average passage length is over the distinct passages each file labels relevant."]
    out += _missing_splits(stats)
    out += _mined_notes(stats)
    return out


def _split_lines(cfg: PipelineConfig, dropped: Mapping[str, int]) -> list[str]:
    """What each subset holds, and how reports, topic queries and labels were split."""
    return ["", "## Subsets and splits", "",
            "- `sentence`: sentence queries, direct labels (query ⊂ passage); `sentence-mined`: the same "
            "queries with direct + mined labels.",
            "- `passage`: passage queries, direct labels (query ≡ passage); `passage-mined`: direct + mined.",
            "- `report`: report-level queries (a report's claim, event, rating or outlook as a reader asks it, "
            "from its title, or its lead where it has none), direct graded labels: the passage stating it 2, "
            "the report's other passages 1.",
            "- `topic`: topic subqueries with mined labels only (they have no source passage).",
            "- `all`: union of the six. Intent queries (level `intent`) are in queries.jsonl as parents of "
            "topic subqueries and have no labels.",
            f"- Split: reports move between train and test as units (`export.split_unit={cfg.export.split_unit}`), "
            f"about {cfg.export.test_fraction:.0%} of reports in test, ordered by a hash of the unit id with "
            f"seed {cfg.export.seed}; no report is in both splits. Topic queries go with their topic node's "
            "majority split, so a cluster's queries stay together; when at least two topic nodes carry labels and "
            "the hash left none of them in test, the smallest one moved there with its reports, so the topic "
            "subset then has a test set (with one labelled node it stays in train). A label is kept only when "
            "its query and its "
            "passage's report are in the same split; cross-split labels are dropped "
            f"(here: {dropped.get('cross_split', 0)} cross-split labels dropped, {dropped.get('dangling', 0)} with "
            "unknown query/passage ids dropped).",
            "- The corpus is shared by both splits (BEIR convention).", ""]


def _provenance_lines(cfg: PipelineConfig, signatures: Mapping[str, str | None]) -> list[str]:
    """The config hash and each stage's signature, so a reader can tell which build made the dataset."""
    out = ["## Provenance", "",
           "Pipeline config hash of the stages that produced this dataset (each stage's declared keys as recorded "
           f"in its manifest, runtime-only knobs excluded): `{config_hash(cfg)}`.", "",
           "Stage signatures (config + input hashes) of the build that made this dataset:", ""]
    out += [f"- {stage}: `{sig or 'unknown'}`" for stage, sig in signatures.items()]
    return out


def verify_lines(manifest: Mapping[str, Any] | None) -> list[str]:
    """The verify stage's verdicts: the share of each level kept, why the rest was dropped, examples."""
    counts = (manifest or {}).get("counts") or {}
    if not counts.get("levels"):
        return []
    out = ["## Query verification", "",
           "Every generated query was checked against its source by a reading independent of the generator's "
           "(`verify` stage: subject, answerability, related companies, round-trip retrieval"
           + (", LLM judge" if counts.get("judge") else "") + "); only kept queries are in this dataset.", "",
           "| level | generated | kept | yield |", "|---|---:|---:|---:|"]
    out += [f"| {lv} | {c['generated']} | {c['kept']} | {c['yield']:.1%} |" for lv, c in ordered_levels(counts)]
    reasons = ordered_reasons(counts)
    if reasons:
        out += ["", "Dropped, by reason: " + ", ".join(f"`{r}` {n}" for r, n in reasons) + "."]
        for reason, _ in reasons:
            ex = ((counts.get("examples") or {}).get(reason) or [None])[0]
            if ex is None:
                continue
            out.append(f"- `{reason}` ({md_text(ex['level'])}): 「{md_text(ex['text'])}」 — {md_text(ex['detail'])}")
    if counts.get("passages_without_subject"):
        out += ["", f"{counts['passages_without_subject']} passages had no subject (no company in metadata, title or "
                "body): their queries were dropped."]
    return [*out, ""]


def negatives_lines(neg: Mapping[str, Any] | None) -> list[str]:
    """How many negatives each ``train/flagembedding.jsonl`` row has, and where they came from."""
    if not neg:
        return []
    span = f"{neg['min']}" if neg["min"] == neg["max"] else f"{neg['min']}–{neg['max']}"
    total = neg["mined"] + neg["random"]
    out = [f"Negatives per row: {span} (`export.negatives.n` = {neg['n']}; {neg['full_rows']} of {neg['rows']} "
           f"rows have all {neg['n']}). Of {total} negatives, {neg['mined']} were mined by the configured method "
           f"and {neg['random']} are random training passages that filled rows the miner left short "
           "(no row has an empty `neg` list, which FlagEmbedding's trainer cannot read)."]
    if neg["dropped"]:
        out.append(f"{neg['dropped']} training queries were left out: no training passage could be their negative.")
    return out + [""]


# The placeholders the Loading snippets use for the dataset folder and the encoder (a test swaps them).
CARD_DATASET = "OUT/dataset"
CARD_MODEL = "BAAI/bge-small-zh-v1.5"


def _mteb_snippet(subsets: Sequence[str], revision: str | None) -> list[str]:
    """A complete MTEB 2.x evaluation of ``subsets`` on the test split (an ``AbsTaskRetrieval`` over hf/)."""
    langs = ", ".join(f'"{s}": ["cmn-Hans"]' for s in subsets)
    return ["```python",
            "import mteb",
            "from mteb.abstasks.retrieval import AbsTaskRetrieval",
            "from mteb.abstasks.task_metadata import TaskMetadata",
            "from sentence_transformers import SentenceTransformer",
            "",
            "",
            "class FinCPRG(AbsTaskRetrieval):",
            "    metadata = TaskMetadata(",
            '        name="FinCPRG", description="fincprg passage-retrieval dataset", type="Retrieval",',
            f'        dataset={{"path": "{CARD_DATASET}/hf", "revision": "{revision or "local"}"}},',
            '        category="t2t", modalities=["text"], eval_splits=["test"], main_score="ndcg_at_10",',
            f"        eval_langs={{{langs}}},",
            "    )",
            "",
            "",
            "# cache=None: a rebuilt folder keeps its path, and MTEB's result cache would return the old scores",
            f'result = mteb.evaluate(SentenceTransformer("{CARD_MODEL}"), FinCPRG(), cache=None)',
            'for score in result.task_results[0].scores["test"]:',
            '    print(score["hf_subset"], score["main_score"])',
            "```"]


def loading_lines(available: Mapping[str, Sequence[str]] | None = None, revision: str | None = None) -> list[str]:
    """The card's "Loading" section: BEIR, HuggingFace ``datasets``, MTEB and FlagEmbedding.

    ``available``: subset -> its labelled splits (``labelled_splits``); every example names one of them,
    and MTEB evaluates every subset labelled in both splits (``hf.mteb_subsets``). ``revision``: the export signature, as the
    MTEB task's dataset revision.
    """
    if available is None:
        available = {s: ["train", "test"] for s in SUBSETS}
    tested = [s for s in SUBSETS if "test" in available.get(s, ())]

    def example(preferred: str) -> tuple[str, str]:  # a test split when any subset has one
        subset = next((s for s in (preferred, *tested) if s in tested), next(iter(available), preferred))
        return subset, "test" if subset in tested else (list(available.get(subset, ())) or ["test"])[0]

    beir_subset, beir_split = example("sentence-mined")
    hf_subset, hf_split = example("passage-mined")
    listing = ", ".join(f"`{s}` ({', '.join(available[s])})" for s in SUBSETS if s in available)
    out = ["## Loading", "",
           f"Labelled splits in this build: {listing or 'none'}. These are the splits the loaders below can read; "
           "any other qrels file holds only its header.", "",
           "BEIR folder (`corpus.jsonl`, `queries.jsonl`, `qrels/<subset>-<split>.tsv`):", "", "```python",
           "from beir.datasets.data_loader import GenericDataLoader",
           f'corpus, queries, qrels = GenericDataLoader("{CARD_DATASET}").load(split="{beir_subset}-{beir_split}")',
           "```", "",
           "HuggingFace `datasets` (`hf/`; config `<subset>` for each subset above; `default` is `all` when it "
           "has both splits; a missing value is an empty string, where the BEIR files have `null`):", "",
           "```python", "import datasets",
           f'corpus = datasets.load_dataset("{CARD_DATASET}/hf", "corpus", split="corpus")',
           f'queries = datasets.load_dataset("{CARD_DATASET}/hf", "queries", split="queries")',
           f'qrels = datasets.load_dataset("{CARD_DATASET}/hf", "{hf_subset}", split="{hf_split}")',
           "```", ""]
    for_mteb = [s for s in SUBSETS if s in mteb_subsets(available)]
    if for_mteb:
        out += [f"MTEB 2.x evaluation of every subset labelled in both splits ({', '.join(f'`{s}`' for s in for_mteb)})"
                f" on its test split; any sentence-transformers model in place of `{CARD_MODEL}`. Subset `X` is read "
                "from the `X-qrels`/`X-corpus`/`X-queries` configs, which `hf/` declares only for subsets labelled in "
                "both splits, because MTEB reads a one-split config whatever split it was asked for (it would score "
                "train labels as the test set); `mteb.abstasks.retrieval_dataset_loaders.RetrievalDatasetLoader("
                'path, revision=None, split="test", config=X).load()` reads one subset on its own:', "",
                *_mteb_snippet(for_mteb, revision), ""]
    else:
        out += ["MTEB: no subset has labels in both splits in this build, so `hf/` declares no MTEB configs and "
                "there is nothing to evaluate.", ""]
    out += ["Fine-tuning: `fincprg train OUT/dataset -m MODEL -o OUT/model`, or FlagEmbedding's embedder "
            "fine-tuning with `--train_data OUT/dataset/train/flagembedding.jsonl`.", ""]
    return out
