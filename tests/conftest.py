"""Shared fixtures: every cache points at tmp_path, and nothing reaches a model hub."""
from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

pytest_plugins = ["tests.llm_server"]

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
SAMPLE = Path(__file__).resolve().parents[1] / "datasets" / "sample"


@pytest.fixture(autouse=True)
def _isolated_caches(tmp_path_factory, monkeypatch):
    cache = tmp_path_factory.mktemp("cache")
    monkeypatch.setenv("HF_HOME", str(cache / "hf"))
    # datasets reads its cache folder once, at import: a module imported by an earlier test (or the default
    # ~/.cache) would serve a dataset cached from an earlier build at the same temp path
    monkeypatch.setenv("HF_DATASETS_CACHE", str(cache / "hf" / "datasets"))
    import sys

    if "datasets.config" in sys.modules:
        monkeypatch.setattr(sys.modules["datasets.config"], "HF_DATASETS_CACHE", cache / "hf" / "datasets")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    monkeypatch.setenv("FINCPRG_CACHE", str(cache / "fincprg"))
    monkeypatch.delenv("FINCPRG_KILL_AFTER", raising=False)
    tqdm_disable = os.environ.pop("TQDM_DISABLE", None)  # `fincprg -q` sets it in-process
    # CLI tests run in-process (CliRunner) and install a root log handler on a stream that the
    # runner closes afterwards; restore the root logger so later tests do not log into it
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)
    from fincprg.finance import use_words

    use_words(())  # stages register their corpus's company names; later tests start clean
    if "fincprg.models.load" in sys.modules:  # a test's stand-in model must not be served to the next test
        sys.modules["fincprg.models.load"].clear_cache()
    os.environ.pop("TQDM_DISABLE", None)
    if tqdm_disable is not None:
        os.environ["TQDM_DISABLE"] = tqdm_disable


@pytest.fixture
def shared_data() -> Path:
    """../shared/data (real public data); skips when a user's clone lacks it."""
    if not SHARED_DATA.exists():
        pytest.skip(f"real data not found at {SHARED_DATA} (only present in the team workspace)")
    return SHARED_DATA


@pytest.fixture
def sample_corpus() -> Path:
    return SAMPLE


@pytest.fixture(scope="session")
def sample_dataset(tmp_path_factory) -> Path:
    """``fincprg build`` of datasets/sample (offline config, no topic plots), built once per session;
    returns its ``dataset/`` folder. Tests must not write into it."""
    from fincprg.config import bundled_pipeline, load_config
    from fincprg.finance import use_words
    from fincprg.pipeline.runner import run_pipeline

    out = tmp_path_factory.mktemp("sample_dataset")
    run_pipeline(SAMPLE / "reports.jsonl", out, load_config(bundled_pipeline("offline"), ["topics.viz=none"]),
                 show_progress=False)
    use_words(())  # the build registered the sample's company names; other tests start clean
    return out / "dataset"
