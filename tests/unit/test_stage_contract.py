"""The stage contract: a stage sees only the config it declares, reads and writes only its declared files,
every file name lives in fincprg.layout, no module imports itself through a cycle, and a stage's signature
follows the code it imports."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from fincprg import layout as L
from fincprg.config import PipelineConfig, load_config
from fincprg.contract import STAGE_BY_NAME, STAGES, ConfigView, UndeclaredConfigError, signature
from fincprg.pipeline.runner import StageContext

PKG = Path(__file__).resolve().parents[2] / "fincprg"


def test_a_stage_reading_an_undeclared_section_fails(tmp_path):
    ctx = StageContext(STAGE_BY_NAME["mine"], tmp_path, PipelineConfig(), "sig")
    assert ctx.config.mine.reranker.backend == "lexical"  # declared section: the real object
    assert ctx.config.run.seed == 42  # declared dotted key
    with pytest.raises(UndeclaredConfigError, match="'mine' read config 'topics'"):
        _ = ctx.config.topics
    with pytest.raises(UndeclaredConfigError, match="'run.cache_dir'"):
        _ = ctx.config.run.cache_dir  # run.seed is declared, not the whole run section
    with pytest.raises(AttributeError):
        ctx.config.mine = None  # read-only


def test_a_stage_body_reading_an_undeclared_key_fails_when_it_runs(tmp_path, monkeypatch):
    """A newcomer's extra ``ctx.config.X`` read breaks the stage at once instead of silently breaking caching."""
    import fincprg.chunking.stage as chunk_stage

    original = chunk_stage.chunk_batch

    def sneaky(reports, cfg, scorer):
        _ = chunk_stage_ctx.config.generate.language  # not declared by chunk
        return original(reports, cfg, scorer)

    from fincprg.records import Report
    from fincprg.io import atomic_write_jsonl

    atomic_write_jsonl(tmp_path / "ingest" / L.REPORTS, [Report(id="r", title="t", text="营业收入增长。" * 20)])
    chunk_stage_ctx = StageContext(STAGE_BY_NAME["chunk"], tmp_path, PipelineConfig(), "sig", show_progress=False)
    chunk_stage_ctx.dir.mkdir(parents=True)
    monkeypatch.setattr(chunk_stage, "chunk_batch", sneaky)
    with pytest.raises(UndeclaredConfigError, match="'chunk' read config 'generate'"):
        chunk_stage.run(chunk_stage_ctx)


def test_undeclared_files_fail(tmp_path):
    ctx = StageContext(STAGE_BY_NAME["chunk"], tmp_path, PipelineConfig(), "sig")
    with pytest.raises(RuntimeError, match="does not declare"):
        ctx.input_path(L.GENERATE, L.QUERIES)  # chunk does not read generate's output
    with pytest.raises(RuntimeError, match="does not declare"):
        ctx.output(L.PAIRS)


@pytest.mark.parametrize("spec", STAGES, ids=lambda s: s.name)
def test_signature_covers_exactly_the_declared_keys(spec):
    base = PipelineConfig()
    sig = signature(spec, base, {})
    # every declared key changes the signature ...
    probes = {"run.seed": ["run.seed=7"], "run.sample_reports": ["run.sample_reports=5"],
              "ingest": ["ingest.skip_empty=false"], "finance": ["finance.stock_table=none"], "chunk": ["chunk.passage_chars=400"],
              "generate": ["generate.complete=false"], "llm": ["llm.model=qwen"], "topics": ["topics.dominance=0.8"],
              "verify": ["verify.top_k=3"],
              "mine": ["mine.keep_min_score=0.5"], "export": ["export.seed=1"]}
    for key in spec.config_keys:
        assert signature(spec, load_config(None, probes[key]), {}) != sig, key
    # ... and no other key does (runtime knobs included)
    for key, change in probes.items():
        if key not in spec.config_keys and not any(key.startswith(k + ".") for k in spec.config_keys):
            assert signature(spec, load_config(None, change), {}) == sig, key
    assert signature(spec, load_config(None, ["llm.concurrency=64", "mine.batch_size=2"]), {}) == sig


def test_view_of_a_whole_config_passes_nested_sections_through():
    view = ConfigView(PipelineConfig(), ("topics", "run.seed"), "topics")
    assert view.topics.cluster.min_cluster_size == 5
    with pytest.raises(UndeclaredConfigError):
        _ = view.export


# --- one layout: file and folder names appear in fincprg/layout.py only -----------------------------------------

def _layout_names() -> tuple[set[str], set[str]]:
    """(file names, folder names): folders are only flagged when joined onto a path (``out / "mine"``),
    since words such as "qrels" or "mine" are also count keys and stage names."""
    files = {v for k, v in vars(L).items() if k.isupper() and isinstance(v, str) and "." in v and k != "CACHE_DIR"}
    dirs = set(L.STAGE_DIRS.values()) | {L.AUDIT_DIR, L.EVAL_DIR, L.QRELS_DIR, L.HF_DIR, L.RUNS_DIR, L.CACHE_DIR}
    return files, dirs


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def test_stage_folders_and_file_names_live_in_the_layout_module_only():
    files, dirs = _layout_names()
    offenders = []
    for f in sorted(PKG.rglob("*.py")):
        if f.name == "layout.py" and f.parent == PKG:
            continue
        tree = ast.parse(f.read_text(encoding="utf-8"))
        docs = _docstrings(tree)
        for node in ast.walk(tree):
            # a file name as a whole string (or a path of them), outside docstrings
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                parts = node.value.strip("/").split("/")
                if node.value in files or (len(parts) > 1 and parts[-1] in files):
                    offenders.append(f"{f.relative_to(PKG)}:{node.lineno} {node.value!r}")
            # a folder name joined onto a path: out / "mine"
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div) and isinstance(node.right, ast.Constant) \
                    and node.right.value in dirs | files:
                offenders.append(f"{f.relative_to(PKG)}:{node.lineno} / {node.right.value!r}")
    assert not offenders, "use the names in fincprg/layout.py:\n" + "\n".join(offenders)


# --- no import cycles ------------------------------------------------------------------------------------------

def _import_graph() -> dict[str, set[str]]:
    mods = {}
    for f in PKG.rglob("*.py"):
        parts = list(f.relative_to(PKG.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = f

    def resolve(name: str) -> str | None:
        while name and name not in mods:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, f in mods.items():
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            targets: list[str | None] = []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("fincprg"):
                targets = [resolve(f"{node.module}.{a.name}") for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [resolve(a.name) for a in node.names if a.name.startswith("fincprg")]
            graph[m] |= {t for t in targets if t and t != m}
    return graph


def test_no_import_cycle_between_modules():
    """Lazy imports inside functions count too: a cycle there is a cycle in the design."""
    graph = _import_graph()
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(m: str, path: list[str]) -> None:
        state[m] = 1
        for t in sorted(graph[m]):
            if state.get(t) == 1:
                cycles.append(path[path.index(t):] + [t] if t in path else [m, t])
            elif t not in state:
                visit(t, path + [t])
        state[m] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


# --- a stage's code hash: the modules it imports ---------------------------------------------------------------

def _edited_copy(tmp_path: Path) -> Path:
    import shutil

    root = tmp_path / "fincprg"
    shutil.copytree(PKG, root, ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _touch(path: Path) -> None:
    path.write_text(path.read_text(encoding="utf-8") + "\n# an edit\n", encoding="utf-8")


def test_editing_a_module_a_stage_imports_changes_its_signature_and_no_other(tmp_path, monkeypatch):
    from fincprg import codehash

    root = _edited_copy(tmp_path)
    cfg = PipelineConfig()
    monkeypatch.setattr(codehash, "PKG", root)  # signature() hashes the copy from here on
    before = {s.name: signature(s, cfg, {}) for s in STAGES}
    _touch(root / "llm" / "client.py")  # the generator's LLM client: not in the hand-written list that was here
    after = {s.name: signature(s, cfg, {}) for s in STAGES}
    changed = {n for n in before if before[n] != after[n]}
    assert {"generate", "topics", "verify"} <= changed
    assert {"ingest", "chunk", "export"}.isdisjoint(changed)  # they never import the LLM client


def test_code_hash_covers_lazy_imports_layout_and_data_but_not_unimported_modules(tmp_path):
    from fincprg.codehash import code_hash, stage_files

    root = _edited_copy(tmp_path)
    hashes = {s.name: code_hash(s, root) for s in STAGES}
    assert hashes == {s.name: code_hash(s) for s in STAGES}  # the same bytes elsewhere: the same hash

    def changed() -> set[str]:
        new = {s.name: code_hash(s, root) for s in STAGES}
        out = {n for n in new if new[n] != hashes[n]}
        hashes.update(new)
        return out

    # mine imports the prefilter only inside a function (it needs an embedder): a lazy import counts
    assert "\n    from fincprg.mine.prefilter import" in (root / "mine" / "stage.py").read_text(encoding="utf-8")
    _touch(root / "mine" / "prefilter.py")
    assert changed() == {"mine"}
    _touch(root / "layout.py")  # every stage reads and writes through it
    assert changed() == {s.name for s in STAGES}
    (root / "finance" / "data" / "userdict.txt").write_text("新词 5\n", encoding="utf-8")  # package data
    by_data = changed()
    assert {"generate", "mine"} <= by_data and "chunk" not in by_data
    _touch(root / "report" / "html.py")  # the report: no stage imports it
    _touch(root / "cli" / "build.py")
    assert changed() == set()
    assert all(root / "report" / "html.py" not in stage_files(s, root) for s in STAGES)


# --- one artifact table -----------------------------------------------------------------------------------------

def test_specs_readers_and_outputs_use_the_artifact_table(tmp_path):
    from fincprg.records import Passage, Query

    for spec in STAGES:
        assert spec.writes == tuple(a.name for a in L.ARTIFACTS if a.stage == spec.name)
        for stage, name in spec.reads:  # every declared read is a file some stage writes (or its manifest)
            assert name == L.MANIFEST or name in STAGE_BY_NAME[stage].writes, (spec.name, stage, name)
    assert L.artifact(L.CHUNK, L.PASSAGES).record is Passage
    with pytest.raises(KeyError, match="artifact table"):
        L.artifact(L.CHUNK, "nope.jsonl")
    # a stage reading an input as another type than the table's is a contract break, caught at the read
    ctx = StageContext(STAGE_BY_NAME["verify"], tmp_path, PipelineConfig(), "sig")
    from fincprg.io import atomic_write_jsonl

    atomic_write_jsonl(L.Build(tmp_path).path(L.CHUNK, L.PASSAGES), [Passage(id="p", report_id="r", order=0,
                                                                           text="营业收入增长")])
    assert [type(p) for p in ctx.read(L.CHUNK, L.PASSAGES)] == [Passage]
    with pytest.raises(RuntimeError, match="artifact table"):
        ctx.read(L.CHUNK, L.PASSAGES, Query)


def test_a_spec_cannot_read_a_file_no_stage_writes():
    from fincprg.contract import StageSpec

    with pytest.raises(KeyError, match="artifact table"):
        StageSpec("x", "m:f", (), ((L.CHUNK, "passages.json"),))


@pytest.mark.parametrize("spec", STAGES, ids=lambda s: s.name)
def test_each_stage_entry_is_typed_with_the_context_protocol(spec):
    """A stage's ``run(ctx)`` names the protocol it programs against (fincprg.contract.StageContext), not Any."""
    import typing

    from fincprg import contract

    hints = typing.get_type_hints(spec.hook("entry"))
    assert hints.get("ctx") is contract.StageContext, f"{spec.entry}: ctx is {hints.get('ctx')}"
