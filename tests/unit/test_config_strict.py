"""Issue 41, config overrides: a bad YAML value is one error line, and a boolean is not a number."""
from __future__ import annotations

import pytest
from typer.testing import CliRunner

from fincprg.cli import app
from fincprg.config import load_config
from fincprg.errors import ConfigError


@pytest.mark.parametrize("override", [
    "chunk.passage_chars=[unclosed",
    "chunk.passage_chars={a: 1",
    "run.seed=!!python/object/apply:os.system [echo pwned]",
    "run.seed=!!python/name:os.system",
    "llm.model=: x: y",
])
def test_a_bad_yaml_value_is_a_config_error_naming_the_key(override):
    with pytest.raises(ConfigError) as e:
        load_config(overrides=[override])
    key = override.split("=", 1)[0]
    assert key in str(e.value) and "--set" in str(e.value)


@pytest.mark.parametrize("override", ["run.seed=true", "llm.timeout=true", "export.test_fraction=true",
                                      "chunk.passage_chars=false", "run.sample_reports=yes", "llm.max_tokens=true"])
def test_a_boolean_is_not_a_number(override):
    with pytest.raises(ConfigError) as e:
        load_config(overrides=[override])
    assert override.split("=", 1)[0] in str(e.value) and "boolean" in str(e.value)


def test_numbers_and_booleans_still_parse_where_they_belong():
    cfg = load_config(overrides=["run.seed=7", "llm.timeout=3", "export.test_fraction=0.25", "run.show_progress=false",
                                 "llm.max_tokens=null"])
    assert (cfg.run.seed, cfg.llm.timeout, cfg.export.test_fraction) == (7, 3.0, 0.25)
    assert cfg.run.show_progress is False and cfg.llm.max_tokens is None


def test_a_yaml_file_with_a_boolean_for_a_number_is_refused(tmp_path):
    p = tmp_path / "x.yaml"
    p.write_text("run:\n  seed: true\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="run.seed"):
        load_config(p)


@pytest.mark.parametrize("override", ["chunk.passage_chars=[unclosed", "run.seed=!!python/name:os.system",
                                      "run.seed=true"])
def test_the_cli_prints_one_error_line_and_exits_2(tmp_path, sample_corpus, override):
    res = CliRunner().invoke(app, ["build", str(sample_corpus), "-o", str(tmp_path / "out"), "-q", "--set", override])
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output and res.output.count("error:") == 1
    assert not (tmp_path / "out").exists()
