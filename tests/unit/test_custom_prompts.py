"""Users' own prompt templates: checked against the variables the stage passes, recorded by content."""
from __future__ import annotations

import json
import shutil

import pytest

from fincprg.config import load_config
from fincprg.contract import STAGE_BY_NAME, signature
from fincprg.errors import ConfigError
from fincprg.generate.llm_tree import PROMPT_VARIABLES
from fincprg.llm.prompts import check_variables, load_prompt_file, stage_prompt
from fincprg.pipeline.runner import run_pipeline

GOOD = """---
id: my_tree
version: 3
---
{% block system %}你只输出 JSON。{% endblock %}
{% block user %}自定义提示：{{ title }}
{{ sentences | to_json }}
共 {{ sentences | length }} 句。{% endblock %}
{% block reask %}{{ error }}，需要 {{ n }} 个。{% endblock %}
"""


def _write(tmp_path, text, name="p.j2"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_a_good_template_loads_with_its_content_hash_in_the_id(tmp_path):
    p = load_prompt_file(_write(tmp_path, GOOD))
    assert p.id.startswith("my_tree@sha256:") and p.version == 3 and len(p.sha256) == 64
    check_variables(p, allowed=PROMPT_VARIABLES, required=("sentences",))
    msgs = p.render(sentences=["营收增长。", "毛利率提升。"], title="星河科技")
    assert "自定义提示：星河科技" in msgs[1]["content"] and "共 2 句" in msgs[1]["content"]


@pytest.mark.parametrize("body, match", [
    ("{% block system %}s{% endblock %}{% block user %}{{ sentences }} {{ passage_text }}{% endblock %}",
     r"uses \{\{ passage_text \}\}, which the stage does not pass"),
    ("{% block system %}s{% endblock %}{% block user %}{{ title }}{% endblock %}",
     r"never uses \{\{ sentences \}\}"),
    ("{% block user %}{{ sentences }}{% endblock %}", r"has no \{% block system %\}"),
    ("{% block system %}s{% endblock %}\n{% block user %}{{ sentences }{% endblock %}", "line 2"),
])
def test_bad_templates_fail_with_what_to_fix(tmp_path, body, match):
    section = load_config(None, [f"generate.prompt_file={_write(tmp_path, body)}"]).generate
    with pytest.raises(ConfigError, match=match):
        stage_prompt(section, allowed=PROMPT_VARIABLES, required=("sentences",), key="generate.prompt_file")


def test_the_signature_follows_the_file_content_not_its_path(tmp_path):
    spec = STAGE_BY_NAME["generate"]
    a = _write(tmp_path, GOOD, "a.j2")
    b = tmp_path / "elsewhere" / "b.j2"
    b.parent.mkdir()
    shutil.copy(a, b)
    sig_a = signature(spec, load_config(None, [f"generate.prompt_file={a}"]), {})
    assert signature(spec, load_config(None, [f"generate.prompt_file={b}"]), {}) == sig_a  # moved: same
    b.write_text(GOOD.replace("自定义提示", "新提示"), encoding="utf-8")
    assert signature(spec, load_config(None, [f"generate.prompt_file={b}"]), {}) != sig_a  # edited: re-run
    assert signature(spec, load_config(None, []), {}) != sig_a
    # a stage that does not declare the key ignores it
    assert signature(STAGE_BY_NAME["chunk"], load_config(None, [f"generate.prompt_file={a}"]), {}) == \
        signature(STAGE_BY_NAME["chunk"], load_config(None, []), {})
    with pytest.raises(ConfigError, match="does not exist"):
        signature(spec, load_config(None, [f"generate.prompt_file={tmp_path / 'missing.j2'}"]), {})


def test_generate_sends_the_custom_prompt_and_records_it(tmp_path, llm_server, sample_corpus):
    p = _write(tmp_path, GOOD)
    cfg = load_config(None, ["generate.backend=llm", f"llm.base_url={llm_server.base_url}", "llm.max_retries=0",
                             f"generate.prompt_file={p}", "run.sample_reports=2"])
    out = tmp_path / "out"
    run_pipeline(sample_corpus, out, cfg, upto="generate", show_progress=False)
    # every passage's request uses the custom tree prompt; the report level has its own (report_query)
    trees = [r for r in llm_server.requests if "report_queries" not in r["messages"][1]["content"]]
    assert trees and all("自定义提示" in r["messages"][1]["content"] for r in trees)
    queries = [json.loads(x) for x in (out / "generate" / "queries.jsonl").read_text("utf-8").splitlines()]
    prompt = load_prompt_file(p)
    assert queries and {q["provenance"]["template"] for q in queries} == {prompt.id}
    manifest = json.loads((out / "generate" / "manifest.json").read_text("utf-8"))
    # beside the stock table the stage also reads (finance.stock_table, the bundled one by default)
    assert manifest["files"]["generate.prompt_file"] == "sha256:" + prompt.sha256[:16]
    assert set(manifest["files"]) == {"generate.prompt_file", "finance.stock_table"}


def test_topic_intent_template_is_checked_before_clustering(tmp_path, sample_corpus):
    bad = _write(tmp_path, "{% block system %}s{% endblock %}{% block user %}{{ sentences }}{% endblock %}")
    cfg = load_config(None, ["topics.intents.backend=llm", f"topics.intents.prompt_file={bad}",
                             "run.sample_reports=3", "generate.backend=templates"])
    with pytest.raises(ConfigError, match="topics.intents.prompt_file.*sentences"):
        run_pipeline(sample_corpus, tmp_path / "out", cfg, upto="topics", show_progress=False)
    assert not (tmp_path / "out" / "topics" / "tree.json").exists()


def test_topic_intents_use_the_custom_template(tmp_path, llm_server, sample_corpus):
    body = ("{% block system %}只输出 JSON。{% endblock %}{% block user %}自定义意图 \"intent\"："
            "{{ titles | to_json }} 最多 {{ max_intents }} 个{% endblock %}")
    p = _write(tmp_path, body, "intents.txt")  # any name: a prompt_file is a file whatever its suffix
    cfg = load_config(None, ["topics.intents.backend=llm", f"topics.intents.prompt_file={p}", "topics.viz=none",
                             f"llm.base_url={llm_server.base_url}", "llm.max_retries=0", "run.sample_reports=16"])
    out = tmp_path / "out"
    run_pipeline(sample_corpus, out, cfg, upto="topics", show_progress=False)
    assert llm_server.requests and all("自定义意图" in r["messages"][1]["content"] for r in llm_server.requests)
    queries = [json.loads(x) for x in (out / "topics" / "queries.jsonl").read_text("utf-8").splitlines()]
    assert queries and {q["provenance"]["template"] for q in queries} == {load_prompt_file(p).id}
