"""A build killed with SIGKILL mid-stage (chunk, or generate in a full build) resumes to byte-identical output."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FILES = ("passages.jsonl", "sentences.jsonl", "removed.jsonl", "stats.jsonl")
INDUSTRIES = ["电子", "医药", "食品饮料", "汽车", "银行", "计算机"]


def make_corpus(path: Path, n: int = 12) -> Path:
    rows = []
    for i in range(n):
        body = "\n".join([
            f"事件：公司发布2023年年报，全年实现营业收入{40 + i}.{i:02d}亿元，同比增长{10 + i}.{i}%；"
            f"归母净利润{5 + i}.{i}亿元，同比增长{8 + i}.5%。分业务看，核心产品收入{12 + i}.3亿元，"
            f"占比提升至{30 + i}.2%，海外市场收入同比增长{20 + i}%，客户结构持续多元化。"
            f"毛利率为{35 + i}.6%，同比提升{i % 3}.2个百分点，主要得益于高毛利产品占比提升和原材料价格回落。",
            f"图表{i + 1}：公司营业收入及增速（亿元，%）",
            "资料来源：Wind，某某证券研究所",
            f"营业收入 {30 + i}.15 {35 + i}.77 {40 + i}.62",
            f"费用端控制良好，销售费用率为{3 + i % 4}.2%，管理费用率为{4 + i % 3}.6%，研发费用率为{10 + i}.2%。"
            f"经营活动现金流净额为{2 + i}.8亿元，同比改善明显，存货周转天数下降至{90 + i}天。"
            f"新产能于{2024 + i % 2}年投产后，预计带来约{5 + i}亿元的增量收入，行业地位有望进一步巩固。",
            f"盈利预测：我们预计公司2024E/2025E归母净利润分别为{6 + i}.12/{7 + i}.34亿元，对应PE分别为"
            f"{20 + i}.1/{16 + i}.4倍，维持“买入”评级。风险提示：下游需求不及预期；行业竞争加剧。",
            f"分析师：张{i}，执业证书编号：S05705190800{i:02d}，电话：021-6888{i:04d}，邮箱：a{i}@example.com",
            "免责声明：本报告仅供本公司客户使用，不构成任何投资建议。本报告版权归本公司所有。",
        ])
        rows.append({"id": f"r{i:02d}", "title": f"某某科技{i}（688{i:03d}）：业绩稳健增长", "text": body,
                     "date": f"2023-0{1 + i % 9}-15", "industry": INDUSTRIES[i % 6], "report_type": "company"})
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def build(corpus: Path, out: Path, *extra: str, env: dict[str, str] | None = None, upto: str | None = "chunk",
          batch: str = "chunk.batch_size=2") -> subprocess.CompletedProcess:
    """``fincprg build`` in a subprocess (so SIGKILL hits only it), stopping after ``upto``."""
    cmd = [sys.executable, "-m", "fincprg", "build", str(corpus), "-o", str(out), "--set", batch, "-q", *extra]
    cmd += ["--upto", upto] if upto else []
    full_env = {k: v for k, v in os.environ.items() if k != "FINCPRG_KILL_AFTER"}
    full_env.update(env or {})
    return subprocess.run(cmd, cwd=ROOT, env=full_env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_killed_chunk_stage_resumes_byte_identical(tmp_path):
    corpus = make_corpus(tmp_path / "corpus.jsonl")
    ref, out = tmp_path / "ref", tmp_path / "out"
    r = build(corpus, ref)
    assert r.returncode == 0, r.stderr

    killed = build(corpus, out, env={"FINCPRG_KILL_AFTER": "chunk:2"})
    assert killed.returncode == -signal.SIGKILL, (killed.returncode, killed.stderr)
    chunk = out / "chunk"
    assert not (chunk / "manifest.json").exists()
    progress = json.loads((chunk / "_progress.json").read_text())
    assert progress["batches_done"] == 1  # batch 2's lines were written, its commit never happened
    partial = (chunk / "passages.jsonl").read_bytes()
    assert 0 < len(partial) and partial != (ref / "chunk" / "passages.jsonl").read_bytes()

    status = subprocess.run([sys.executable, "-m", "fincprg", "stages", str(out)], cwd=ROOT,
                            capture_output=True, text=True, timeout=120)
    assert "partial" in status.stdout and "1 batches committed" in status.stdout

    resumed = build(corpus, out)
    assert resumed.returncode == 0, resumed.stderr
    assert "resumed" in resumed.stdout
    for f in FILES:
        assert (chunk / f).read_bytes() == (ref / "chunk" / f).read_bytes(), f
    for f in ("reports.jsonl", "rejected.jsonl"):
        assert (out / "ingest" / f).read_bytes() == (ref / "ingest" / f).read_bytes()
    m_ref = json.loads((ref / "chunk" / "manifest.json").read_text())
    m_out = json.loads((chunk / "manifest.json").read_text())
    assert m_out["output_hash"] == m_ref["output_hash"] and m_out["counts"] == m_ref["counts"]
    assert m_out["counts"]["passages"] >= 12 and m_out["counts"]["removed_by_rule"]["quality"] == 0 and m_out["counts"]["removed_by_rule"]["caption"] == 12


@pytest.mark.slow
def test_second_build_skips_and_config_change_reruns(tmp_path):
    from fincprg.config import load_config
    from fincprg.pipeline.runner import run_pipeline

    corpus = make_corpus(tmp_path / "corpus.jsonl", n=4)
    out = tmp_path / "out"
    first = run_pipeline(corpus, out, load_config(None), upto="chunk", show_progress=False)
    assert [o.status for o in first] == ["ran", "ran"]
    before = (out / "chunk" / "passages.jsonl").read_bytes()
    second = run_pipeline(corpus, out, load_config(None, ["chunk.batch_size=1"]), upto="chunk", show_progress=False)
    assert [o.status for o in second] == ["skipped", "skipped"]  # batch_size is runtime-only
    assert second[1].counts == first[1].counts
    third = run_pipeline(corpus, out, load_config(None, ["chunk.passage_chars=120"]), upto="chunk",
                         show_progress=False)
    assert [o.status for o in third] == ["skipped", "ran"]
    assert (out / "chunk" / "passages.jsonl").read_bytes() != before


def _full_build(corpus: Path, out: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return build(corpus, out, env=env, upto=None, batch="generate.batch_size=4")


@pytest.mark.slow
def test_full_build_killed_in_generate_resumes_to_the_same_dataset(tmp_path):
    corpus = make_corpus(tmp_path / "corpus.jsonl")
    ref, out = tmp_path / "ref", tmp_path / "out"
    assert _full_build(corpus, ref).returncode == 0

    killed = _full_build(corpus, out, env={"FINCPRG_KILL_AFTER": "generate:2"})
    assert killed.returncode == -signal.SIGKILL
    assert json.loads((out / "generate" / "_progress.json").read_text())["batches_done"] == 1
    assert not (out / "topics").exists()  # nothing after the killed stage ran

    resumed = _full_build(corpus, out)
    assert resumed.returncode == 0, resumed.stderr
    assert "resumed" in resumed.stdout
    for f in ("queries.jsonl", "qrels.jsonl", "failures.jsonl", "hierarchy.json"):
        assert (out / "generate" / f).read_bytes() == (ref / "generate" / f).read_bytes(), f
    data = sorted(p.relative_to(ref / "dataset") for p in (ref / "dataset").rglob("*")
                  if p.is_file() and p.name != "manifest.json")
    assert data and any(str(p).startswith("qrels/") for p in data)
    for rel in data:
        assert (out / "dataset" / rel).read_bytes() == (ref / "dataset" / rel).read_bytes(), rel


@pytest.fixture(scope="module")
def reference_build(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("ref")
    corpus = ROOT / "datasets" / "sample"  # enough mining spaces for several batches of one
    ref = root / "ref"
    r = build(corpus, ref, "--set", "mine.batch_size=1", upto=None, batch="topics.viz=none")
    assert r.returncode == 0, r.stderr
    return corpus, ref


@pytest.mark.slow
# ":0" kills after the stage body, before its manifest: its resume state (scratch files) must still be there
@pytest.mark.parametrize("kill", ["topics:1", "topics:0", "verify:2", "verify:0", "mine:2", "mine:0"])
def test_global_stages_resume_after_a_kill(reference_build, tmp_path, kill):
    """topics resumes after its clustering step, verify after its last committed batch of rule checks (the round
    trip over the whole corpus then runs again), mine after its last committed batch of spaces."""
    corpus, ref = reference_build
    out = tmp_path / "out"
    args = ("--set", "mine.batch_size=1", "--set", "verify.batch_size=64")  # batch sizes change no output byte
    killed = build(corpus, out, *args, env={"FINCPRG_KILL_AFTER": kill}, upto=None, batch="topics.viz=none")
    assert killed.returncode == -signal.SIGKILL
    stage = kill.split(":")[0]
    assert not (out / stage / "manifest.json").exists()
    progress = json.loads((out / stage / "_progress.json").read_text())
    if stage == "topics":
        assert progress.get("steps") == ["clustered"]
    else:  # X:2 stops after batch 1's lines; X:0 after the last batch
        assert progress["batches_done"] == 1 if kill.endswith(":2") else progress["batches_done"] > 1
    resumed = build(corpus, out, *args, upto=None, batch="topics.viz=none")
    assert resumed.returncode == 0, resumed.stderr
    assert "resumed" in resumed.stdout
    files = sorted(p.relative_to(ref) for p in ref.rglob("*") if p.is_file() and p.suffix != ".html"
                   and p.name not in ("manifest.json", "_progress.json") and not p.name.startswith("."))
    assert any(str(p).startswith("dataset/qrels/") for p in files)
    for rel in files:
        assert (out / rel).read_bytes() == (ref / rel).read_bytes(), rel
    assert not list((out / stage).glob(".*"))  # scratch files are gone
