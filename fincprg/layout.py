"""The one place that names a build's folders and files, and reads stage outputs back as typed records.

A build folder ``OUT`` holds one folder per stage (``OUT/ingest`` ... ``OUT/dataset``), each closed by a
``manifest.json``, plus ``OUT/audit``, ``OUT/eval``, ``OUT/report.html`` and the ``OUT/.cache``. The
exported dataset (:class:`Dataset`) is a plain BEIR folder that users load without fincprg.

Every other module takes folder and file names from here, so renaming one is a one-line change and a
reader can never disagree with the writer about where a file lives. :data:`ARTIFACTS` is the one table of
what each stage writes and the record type of each file: the stage contract (``StageSpec.writes``), the
stage context's and :class:`Build`'s readers and the report all take it from there, so a reader never
picks a record type of its own.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from fincprg.errors import InputError
from fincprg.io import hash_files, read_jsonl
from fincprg.records import (
    Failure, Passage, Qrel, Query, Rejection, Removed, Report, ScoredPair, Sentence, Title, TopicAssignment,
    TopicHierarchy,
)

# --- stages, in pipeline order, and their folders -------------------------------------------------------------
INGEST, CHUNK, GENERATE, TOPICS, VERIFY, MINE, EXPORT = (
    "ingest", "chunk", "generate", "topics", "verify", "mine", "export")
STAGE_DIRS: dict[str, str] = {INGEST: "ingest", CHUNK: "chunk", GENERATE: "generate", TOPICS: "topics",
                              VERIFY: "verify", MINE: "mine", EXPORT: "dataset"}
AUDIT_DIR, EVAL_DIR, CACHE_DIR, REPORT_FILE = "audit", "eval", ".cache", "report.html"
ESTIMATE = "estimate.json"  # OUT/estimate.json: `fincprg estimate -o OUT`, compared in the build summary
MANIFEST, PROGRESS, LOCK = "manifest.json", "_progress.json", ".lock"

# --- stage output files (names inside the stage's folder) -----------------------------------------------------
REPORTS, REJECTED = "reports.jsonl", "rejected.jsonl"  # ingest
EXTRA_TITLES = "extra_titles.jsonl"  # ingest: titles without bodies (ingest.extra_titles), for topics
LAYOUT_REMOVED = "layout_removed.jsonl"  # ingest: what PDF layout cleaning removed (Removed records)
PASSAGES, SENTENCES, REMOVED, CHUNK_STATS = "passages.jsonl", "sentences.jsonl", "removed.jsonl", "stats.jsonl"
QUERIES, QRELS, FAILURES, HIERARCHY = "queries.jsonl", "qrels.jsonl", "failures.jsonl", "hierarchy.json"
# generate: report-level queries and their graded qrels, made once every passage's tree is written
REPORT_QUERIES, REPORT_QRELS = "report_queries.jsonl", "report_qrels.jsonl"
TITLES, TREE, ASSIGNMENTS = "titles.jsonl", "tree.json", "assignments.jsonl"  # topics (+ QUERIES, FAILURES)
TOPICS_HTML, HIERARCHY_HTML = "topics.html", "hierarchy.html"
BERTOPIC_DIR = "bertopic"  # topics: the fitted BERTopic model (engine "bertopic"), BERTopic.load() opens it
PAIRS, HISTOGRAM = "pairs.jsonl", "histogram.json"  # mine (+ QRELS)
DROPPED = "dropped.jsonl"  # verify: {query_id, level, text, reason, detail} (+ QUERIES and QRELS of kept queries)

# --- the exported dataset (BEIR names, plus the training file, the HF layout and the card) --------------------
CORPUS, QRELS_DIR, CARD = "corpus.jsonl", "qrels", "README.md"
TRAIN_FILE = "train/flagembedding.jsonl"
HF_DIR = "hf"

# --- audit and eval outputs -----------------------------------------------------------------------------------
SAMPLES, JUDGEMENTS, DECISIONS = "samples.jsonl", "judgements.jsonl", "decisions.jsonl"
SUMMARY_JSON, SUMMARY_MD, REVIEW_HTML = "summary.json", "summary.md", "review.html"
RESULTS_MD, RESULTS_CSV, RUNS_DIR, EVAL_META = "results.md", "results.csv", "runs", "eval.json"



# --- the artifact table: (stage, file, record type) ----------------------------------------------------------
@dataclass(frozen=True)
class Artifact:
    """One file a stage writes. ``record``: the type of each JSONL line (or of a JSON file's one object);
    None for plain dicts, TSV, HTML and folders (``name`` ending in ``/``). ``optional``: a view the stage
    may leave out (the topic plots with ``topics.viz=none``)."""

    stage: str
    name: str
    record: type[BaseModel] | None = None
    optional: bool = False


ARTIFACTS: tuple[Artifact, ...] = (
    Artifact(INGEST, REPORTS, Report), Artifact(INGEST, REJECTED, Rejection), Artifact(INGEST, EXTRA_TITLES, Report),
    Artifact(INGEST, LAYOUT_REMOVED, Removed),
    Artifact(CHUNK, PASSAGES, Passage), Artifact(CHUNK, SENTENCES, Sentence), Artifact(CHUNK, REMOVED, Removed),
    Artifact(CHUNK, CHUNK_STATS),
    Artifact(GENERATE, QUERIES, Query), Artifact(GENERATE, QRELS, Qrel), Artifact(GENERATE, FAILURES, Failure),
    Artifact(GENERATE, HIERARCHY), Artifact(GENERATE, REPORT_QUERIES, Query), Artifact(GENERATE, REPORT_QRELS, Qrel),
    Artifact(TOPICS, TITLES, Title), Artifact(TOPICS, TREE, TopicHierarchy),
    Artifact(TOPICS, ASSIGNMENTS, TopicAssignment), Artifact(TOPICS, QUERIES, Query),
    Artifact(TOPICS, FAILURES, Failure), Artifact(TOPICS, TOPICS_HTML, optional=True),
    Artifact(TOPICS, HIERARCHY_HTML, optional=True),
    Artifact(TOPICS, BERTOPIC_DIR + "/"),
    Artifact(VERIFY, QUERIES, Query), Artifact(VERIFY, QRELS, Qrel), Artifact(VERIFY, DROPPED),
    Artifact(MINE, PAIRS, ScoredPair), Artifact(MINE, QRELS, Qrel), Artifact(MINE, HISTOGRAM),
    # the dataset is plain BEIR (dict rows), readable without fincprg
    Artifact(EXPORT, CORPUS), Artifact(EXPORT, QUERIES), Artifact(EXPORT, QRELS_DIR + "/"),
    Artifact(EXPORT, TRAIN_FILE), Artifact(EXPORT, HF_DIR + "/"), Artifact(EXPORT, CARD),
)
_ARTIFACT = {(a.stage, a.name): a for a in ARTIFACTS}


def artifact(stage: str, name: str) -> Artifact:
    """The table's entry for ``stage``'s file ``name`` (a stage's ``manifest.json`` is always one)."""
    if name == MANIFEST:
        return Artifact(stage, MANIFEST)
    try:
        return _ARTIFACT[(stage, name)]
    except KeyError:
        raise KeyError(f"{stage}/{name} is not in the artifact table (fincprg/layout.py ARTIFACTS)") from None


def written_by(stage: str) -> tuple[str, ...]:
    """The files ``stage`` writes, in table order."""
    return tuple(a.name for a in ARTIFACTS if a.stage == stage)


def read_records(path: Path, stage: str, name: str) -> Iterator[Any]:
    """The records of ``path``, which holds ``stage``'s file ``name``: typed as the table says."""
    return read_jsonl(path, artifact(stage, name).record)


def read_extra_titles(ctx: Any) -> list[Report]:
    """ingest's titles without bodies (``ingest.extra_titles``) for a stage that declares reading them; none where
    ingest wrote no such file (a folder made by hand or by a version before the setting)."""
    try:
        return list(ctx.read(INGEST, EXTRA_TITLES))
    except InputError:
        return []


def qrels_name(subset: str, split: str) -> str:
    """``qrels/<subset>-<split>.tsv`` inside a dataset (``all`` is a subset like the others)."""
    return f"{QRELS_DIR}/{subset}-{split}.tsv"


def load_json(path: Path) -> Any:
    """A JSON file's content, or None when it is missing or unreadable (callers report what is missing)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, NotADirectoryError, ValueError):
        return None


def read_topic_tree(path: Path) -> TopicHierarchy:
    """``topics/tree.json`` as a typed record."""
    model = artifact(TOPICS, TREE).record
    assert model is not None
    try:
        return model.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError as e:
        raise InputError(f"{path}: cannot read the topic tree ({e}); re-run `fincprg build --force`") from e


@dataclass(frozen=True)
class Dataset:
    """An exported dataset folder (``OUT/dataset`` or any BEIR folder)."""

    root: Path

    @property
    def corpus(self) -> Path:
        return self.root / CORPUS

    @property
    def queries(self) -> Path:
        return self.root / QUERIES

    @property
    def qrels_dir(self) -> Path:
        return self.root / QRELS_DIR

    def qrels(self, subset: str, split: str) -> Path:
        return self.root / qrels_name(subset, split)

    @property
    def train_file(self) -> Path:
        return self.root / TRAIN_FILE

    @property
    def hf_dir(self) -> Path:
        return self.root / HF_DIR

    @property
    def card(self) -> Path:
        return self.root / CARD

    def content_hash(self) -> str | None:
        """Hash of what a retriever is scored on (corpus, queries, qrels); None when the folder has no corpus.

        Eval results record it, so a report can tell results of this dataset from those of an older build.
        """
        if not self.corpus.is_file():
            return None
        files = [self.corpus, *([self.queries] if self.queries.is_file() else []),
                 *sorted(self.qrels_dir.glob("*.tsv"))]
        return hash_files(files, self.root)


@dataclass(frozen=True)
class Build:
    """A build folder: where each stage's files are, and typed readers for them."""

    out: Path

    def dir(self, stage: str) -> Path:
        return self.out / STAGE_DIRS[stage]

    def path(self, stage: str, name: str) -> Path:
        return self.dir(stage) / name

    def require(self, stage: str, name: str) -> Path:
        p = self.path(stage, name)
        if not p.exists():
            raise InputError(f"{p} is missing; run `fincprg build` so that stage '{stage}' runs first")
        return p

    def manifest(self, stage: str) -> dict[str, Any] | None:
        return load_json(self.path(stage, MANIFEST))

    def used(self, stage: str) -> dict[str, Any]:
        """What ``stage`` actually used (its manifest's ``used``: a backend's default threshold, the model it
        loaded), {} when it recorded nothing. A mine stage of a build made before manifests recorded it falls
        back to the threshold its histogram or counts carried."""
        m = self.manifest(stage) or {}
        if m.get("used"):
            return dict(m["used"])
        if stage != MINE:
            return {}
        h, c = self.histogram() or {}, m.get("counts") or {}
        old = {"threshold": h.get("threshold", c.get("threshold")), "keep_min_score": h.get("keep_min_score")}
        return {k: v for k, v in old.items() if v is not None}

    def progress(self, stage: str) -> dict[str, Any] | None:
        return load_json(self.path(stage, PROGRESS))

    def is_build(self) -> bool:
        """Whether a build has started here: a stage's folder exists (a killed first stage leaves only that)."""
        return any(self.dir(s).is_dir() for s in STAGE_DIRS)

    def require_build(self) -> None:
        """An InputError, with the fix, unless this is a build folder."""
        what = "a folder with no stage folder in it" if self.out.is_dir() else "not a folder"
        if not self.out.is_dir() or not self.is_build():
            raise InputError(f"{self.out} is not a build folder ({what}); give the --out of `fincprg build`, or "
                             f"run `fincprg build CORPUS -o {self.out}` first")

    @property
    def dataset(self) -> Dataset:
        return Dataset(self.dir(EXPORT))

    @property
    def audit_dir(self) -> Path:
        return self.out / AUDIT_DIR

    @property
    def eval_dir(self) -> Path:
        return self.out / EVAL_DIR

    @property
    def report_file(self) -> Path:
        return self.out / REPORT_FILE

    @property
    def cache_dir(self) -> Path:
        return self.out / CACHE_DIR

    # --- typed readers (raise InputError with the fix when a file is missing or damaged) ---------------------
    def records(self, stage: str, name: str) -> Iterator[Any]:
        """``stage``'s JSONL file ``name`` as the record type of the artifact table."""
        return read_records(self.require(stage, name), stage, name)

    def reports(self) -> Iterator[Report]:
        return self.records(INGEST, REPORTS)

    def passages(self) -> Iterator[Passage]:
        return self.records(CHUNK, PASSAGES)

    def sentences(self) -> Iterator[Sentence]:
        return self.records(CHUNK, SENTENCES)

    def queries(self, stage: str = GENERATE) -> Iterator[Query]:
        """Queries of ``generate`` (sentence, passage), ``topics`` (intent, topic) or ``verify`` (the kept
        queries of every level)."""
        return self.records(stage, QUERIES)

    def direct_qrels(self) -> Iterator[Qrel]:
        return self.records(GENERATE, QRELS)

    def kept_qrels(self) -> Iterator[Qrel]:
        """The direct qrels of the queries verify kept."""
        return self.records(VERIFY, QRELS)

    def dropped(self) -> Iterator[dict[str, Any]]:
        """verify's dropped queries with their reasons."""
        return self.records(VERIFY, DROPPED)

    def mined_qrels(self) -> Iterator[Qrel]:
        return self.records(MINE, QRELS)

    def pairs(self) -> Iterator[ScoredPair]:
        return self.records(MINE, PAIRS)

    def topic_tree(self) -> TopicHierarchy:
        return read_topic_tree(self.require(TOPICS, TREE))

    def assignments(self) -> Iterator[TopicAssignment]:
        return self.records(TOPICS, ASSIGNMENTS)

    def histogram(self) -> dict[str, Any] | None:
        return load_json(self.path(MINE, HISTOGRAM))
