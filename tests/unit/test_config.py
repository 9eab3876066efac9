"""Config errors name their dotted path, from YAML keys and from --set overrides."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fincprg.config import PipelineConfig, load_config, section_hash
from fincprg.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def _err(path=None, overrides=None) -> str:
    with pytest.raises(ConfigError) as e:
        load_config(path, overrides)
    return str(e.value)


@pytest.mark.parametrize("override,path", [
    ("chunk.pasage_chars=3", "chunk.pasage_chars"),
    ("chunk.passage_chars=abc", "chunk.passage_chars"),
    ("chunk.passage_chars=3", "chunk.passage_chars"),  # gt=20
    ("chunk.quality.threshold=2", "chunk.quality.threshold"),
    ("chunk.quality.modle=x", "chunk.quality.modle"),
    ("chunk.quality.backend=bert", "chunk.quality.backend"),
    ("chunk.quality.backend=transformers", "chunk.quality.model"),
    ("chunk.rules=[table, tables]", "chunk.rules"),
    ("ingest.format=xml", "ingest.format"),
    ("ingest.fields={研报标题: titel}", "ingest.fields"),
    ("ingest.on_bad_date=drop", "ingest.on_bad_date"),
    ("nosuchsection.x=1", "nosuchsection"),
])
def test_override_errors_name_their_path(override, path):
    assert path in _err(overrides=[override])


def test_yaml_errors_name_their_path(tmp_path):
    p = tmp_path / "x.yaml"
    p.write_text("chunk:\n  passage_chars: 500\n  quality:\n    treshold: 0.3\ningest:\n  encodng: gbk\n",
                 encoding="utf-8")
    msg = _err(p)
    assert "chunk.quality.treshold" in msg and "ingest.encodng" in msg and str(p) in msg


def test_override_into_a_value_is_an_error():
    assert "chunk.passage_chars" in _err(overrides=["chunk.passage_chars.x=1"])


def test_malformed_override_and_missing_file(tmp_path):
    assert "key.path=value" in _err(overrides=["chunk.passage_chars"])
    assert "does not exist" in _err(tmp_path / "missing.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("chunk: [unclosed", encoding="utf-8")
    assert "not valid YAML" in _err(bad)


def test_valid_overrides_and_yaml_null():
    cfg = load_config(None, ["chunk.passage_chars=400", "ingest.on_bad_date=null", "ingest.fields={发布日期: date}"])
    assert cfg.chunk.passage_chars == 400 and cfg.ingest.on_bad_date == "null"
    assert cfg.ingest.fields == {"发布日期": "date"}


def test_shipped_pipelines_load():
    for name in ("offline.yaml", "paper.yaml"):
        assert isinstance(load_config(ROOT / "pipelines" / name), PipelineConfig)


def test_runtime_keys_do_not_change_the_signature():
    a = load_config(None, ["chunk.batch_size=2"])
    b = load_config(None, ["chunk.batch_size=64", "chunk.quality.batch_size=1"])
    assert section_hash(a, ("chunk",)) == section_hash(b, ("chunk",))
    assert section_hash(a, ("chunk",)) != section_hash(load_config(None, ["chunk.passage_chars=400"]), ("chunk",))


def test_cli_reports_config_error_with_path(tmp_path):
    corpus = tmp_path / "c.jsonl"
    corpus.write_text('{"title": "t", "text": "正文。"}\n', encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "fincprg", "build", str(corpus), "-o", str(tmp_path / "out"),
                        "--set", "chunk.pasage_chars=3", "-q"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "chunk.pasage_chars" in r.stderr


def test_missing_dependency_error_names_package_feature_and_alternative():
    from fincprg.errors import MissingDependencyError

    msg = str(MissingDependencyError("FlagEmbedding", "mine.reranker.backend=flag",
                                     alternative="mine.reranker.backend=lexical"))
    assert "FlagEmbedding" in msg and "mine.reranker.backend=flag" in msg and msg.endswith("backend=lexical.")
