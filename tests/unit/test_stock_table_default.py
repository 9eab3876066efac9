"""The stock table ships with the package and is the default for finance.stock_table and
topics.classifier.stock_table; a user can switch it off or point to their own file, and a stage that reads the
table re-runs when the table's content changes."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from fincprg.config import bundled_pipeline, load_config
from fincprg.contract import STAGE_BY_NAME, signature
from fincprg.errors import ConfigError
from fincprg.finance.stocks import BUNDLED, bundled_table_path, stock_table, table_path
from fincprg.topics.stage import label_industries
from fincprg.topics.titles import Title

ROOT = Path(__file__).resolve().parents[2]
OWN = "ts_code,symbol,name,industry\n002429.SZ,002429,兆驰股份,家用电器\n"


def test_the_bundled_table_ships_inside_the_package_with_its_attribution():
    path = bundled_table_path()
    assert path.is_file() and (ROOT / "fincprg") in path.parents
    # hatch builds the wheel from the package folder minus what git ignores
    ignored = subprocess.run(["git", "check-ignore", "-q", str(path)], cwd=ROOT).returncode == 0
    assert not ignored, f"{path} is git-ignored, so the wheel would leave it out"
    notice = "\n".join(p.read_text(encoding="utf-8") for p in path.parent.glob("stock_basic.*") if p.suffix != ".csv")
    assert "AFAN-LIFE/macropage" in notice and "9ef6144e" in notice and "CC-BY-4.0" in notice
    t = stock_table(BUNDLED)
    assert t is not None and t.code_of["贵州茅台"] == "600519" and t.lookup("600519.SH", None) == "食品饮料"
    assert len(t.name_of) > 5000


def test_the_bundled_table_is_the_default_for_finance_and_topics():
    for cfg in (load_config(), load_config(bundled_pipeline("offline"))):
        assert table_path(cfg.finance.stock_table) == str(bundled_table_path())
        assert cfg.topics.classifier.stock_table is None  # follows finance.stock_table
    title = Title(report_id="r", title="贵州茅台：渠道改革推进，业绩稳健", company="贵州茅台", stock_code=None)
    cfg = load_config()
    (labelled,), _ = label_industries([title], [], cfg.topics, cfg.finance.stock_table)
    assert (labelled.industry, labelled.industry_source) == ("食品饮料", "stock_table")


@pytest.mark.parametrize("off", ["none", "None", "", "null"])
def test_a_user_switches_the_table_off(off):
    cfg = load_config(overrides=[f"finance.stock_table={off}"])
    assert table_path(cfg.finance.stock_table) is None and stock_table(cfg.finance.stock_table) is None
    title = Title(report_id="r", title="贵州茅台：渠道改革推进，业绩稳健", company="贵州茅台", stock_code=None)
    (labelled,), _ = label_industries([title], [], cfg.topics, cfg.finance.stock_table)
    assert labelled.industry_source != "stock_table"
    # the topics stage alone: its own key switches its table off while generation keeps the bundled one
    cfg = load_config(overrides=[f"topics.classifier.stock_table={off or 'none'}"] if off != "null" else
                      ["topics.classifier.stock_table=none"])
    (labelled,), _ = label_industries([title], [], cfg.topics, cfg.finance.stock_table)
    assert labelled.industry_source != "stock_table" and table_path(cfg.finance.stock_table) is not None


def test_a_user_points_to_their_own_table(tmp_path):
    own = tmp_path / "own.csv"
    own.write_text(OWN, encoding="utf-8")
    cfg = load_config(overrides=[f"finance.stock_table={own}"])
    t = stock_table(cfg.finance.stock_table)
    assert t is not None and t.path == str(own) and set(t.name_of.values()) == {"兆驰股份"}
    with pytest.raises(ConfigError, match="finance.stock_table.*does not exist"):
        stock_table(str(tmp_path / "missing.csv"))


@pytest.mark.parametrize("stage", ["generate", "topics", "verify"])
def test_a_stage_reading_the_table_reruns_when_its_content_changes(tmp_path, stage):
    own = tmp_path / "own.csv"
    own.write_text(OWN, encoding="utf-8")
    spec = STAGE_BY_NAME[stage]
    cfg = load_config(overrides=[f"finance.stock_table={own}"])
    before = signature(spec, cfg, {})
    own.write_text(OWN + "600519.SH,600519,贵州茅台,白酒\n", encoding="utf-8")
    assert signature(spec, cfg, {}) != before  # same path, new content
    moved = tmp_path / "moved.csv"
    moved.write_bytes(own.read_bytes())
    assert signature(spec, load_config(overrides=[f"finance.stock_table={moved}"]), {}) == signature(spec, cfg, {})
    # the bundled table and a copy of it are the same input
    copy = tmp_path / "copy.csv"
    copy.write_bytes(bundled_table_path().read_bytes())
    assert signature(spec, load_config(overrides=[f"finance.stock_table={copy}"]), {}) == signature(spec, load_config(), {})
    assert signature(spec, load_config(overrides=["finance.stock_table=none"]), {}) != signature(spec, load_config(), {})


def test_an_untitled_body_gets_queries_out_of_the_box_and_none_with_the_table_off(tmp_path):
    from fincprg.pipeline.runner import run_pipeline

    body = ("事件：贵州茅台（600519）发布2023年年报。2023年公司实现营业收入1476.9亿元，同比增长18.0%；"
            "实现归母净利润747.3亿元，同比增长19.2%。公司直销渠道收入占比提升，毛利率稳定。")
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "u1", "text": body}, ensure_ascii=False) + "\n", encoding="utf-8")
    run_pipeline(corpus, tmp_path / "on", load_config(), upto="generate", show_progress=False)
    queries = [json.loads(x) for x in (tmp_path / "on" / "generate" / "queries.jsonl").read_text("utf-8").splitlines()]
    assert queries and all("贵州茅台" in q["text"] for q in queries), [q["text"] for q in queries]
    off = {o.name: o for o in run_pipeline(corpus, tmp_path / "off", load_config(overrides=["finance.stock_table=none"]),
                                           upto="generate", show_progress=False)}
    assert sum(off["generate"].counts["queries"].values()) == 0 and off["generate"].counts["no_subject_passages"] > 0
