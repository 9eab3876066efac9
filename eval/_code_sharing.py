"""Which retrievers run the finance code the query generator also reads (eval/bench_validity.py).

A retriever that scores passages with the same fact extraction the template generator, the rules judge
and the veto use (fincprg/finance/extract.py) is rewarded by a benchmark those stages wrote. Two views:

- :func:`finance_modules_run`: the fincprg.finance modules whose functions *run* while a retriever fits
  and searches a toy corpus (``sys.setprofile``), so a reranker that calls ``extract`` through another
  module is caught, and one that merely imports it is not;
- :func:`generator_reads`: the fincprg.finance modules that fincprg/generate, fincprg/mine and
  fincprg/verify import (source scan, closed over the imports inside fincprg.finance).
"""
from __future__ import annotations

import ast
import itertools
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


_TOY = [{"a#p0": {"title": "", "text": "星河科技2023年营业收入同比增长12.5%，归母净利润3.2亿元。", "report_id": "a"},
         "b#p0": {"title": "", "text": "云海银行一季度净息差收窄，不良率1.1%，拨备覆盖率提升。", "report_id": "b"},
         "c#p0": {"title": "", "text": "光伏组件价格下行，公司毛利率承压，预计2024年出货量增长。", "report_id": "c"}},
        {"d#p0": {"title": "", "text": "海岳电子2022年净利润增长30%，毛利率提升2个百分点。", "report_id": "d"},
         "e#p0": {"title": "", "text": "白酒行业需求回暖，龙头酒企提价，三季度营收增速加快。", "report_id": "e"},
         "f#p0": {"title": "", "text": "航空公司客座率回升，燃油成本下降，2023年有望扭亏。", "report_id": "f"}}]
_SALT = itertools.count()
_TOY_Q = [{"q": "星河科技2023年营业收入增长多少？"}, {"q": "海岳电子2022年的净利润同比增速是多少？"}]


def finance_modules_run(spec: str) -> list[str]:
    """The fincprg.finance modules whose functions run while ``spec`` fits and searches a toy corpus
    (after an untraced warm-up on another one, so imports, model loading and caches do not count)."""
    import threading

    import fincprg.finance
    from fincprg.evaluate.retrievers import build_retriever

    where = str(Path(fincprg.finance.__file__).parent)
    seen: set[str] = set()

    def prof(frame, event, _arg):  # noqa: ANN001 - sys.setprofile's signature
        if event == "call" and frame.f_code.co_filename.startswith(where):
            stem = Path(frame.f_code.co_filename).stem
            seen.add("fincprg.finance" + ("" if stem == "__init__" else f".{stem}"))

    for i, (corpus, queries) in enumerate(zip(_TOY, _TOY_Q)):
        # fresh texts every call: a cached extract() from an earlier retriever's run would hide the call
        salt = f"（{next(_SALT)}）"
        corpus = {d: {**doc, "text": doc["text"] + salt} for d, doc in corpus.items()}
        queries = {q: t + salt for q, t in queries.items()}
        r = build_retriever(spec, show_progress=False)
        if i:
            sys.setprofile(prof)
            threading.setprofile(prof)
        try:
            r.fit(corpus)
            r.search(queries, 3)
        finally:
            sys.setprofile(None)
            threading.setprofile(None)
    return sorted(seen)


def shared_code(specs: list[str]) -> dict[str, list[str]]:
    """spec -> :func:`finance_modules_run`; a retriever that cannot run (a missing model) is left out."""
    out = {}
    for s in specs:
        try:
            out[s] = finance_modules_run(s)
        except Exception as e:  # noqa: BLE001 - the evaluation already reported it; the trace is optional
            print(f"warning: could not trace {s}: {str(e).splitlines()[0]}")
    return out


def _finance_imports(py: Path) -> set[str]:
    """fincprg.finance modules a source file imports (names from the package resolve to their module)."""
    import importlib

    pkg = importlib.import_module("fincprg.finance")
    found: set[str] = set()
    for node in ast.walk(ast.parse(py.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("fincprg.finance"):
            if node.module != "fincprg.finance":
                found.add(node.module)
                continue
            for a in node.names:
                obj = getattr(pkg, a.name, None)
                found.add(getattr(obj, "__name__", None) if isinstance(obj, type(pkg))
                          else getattr(obj, "__module__", "fincprg.finance"))
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("fincprg.finance")}
    return found


def generator_reads(packages: tuple[str, ...] = ("generate", "mine", "verify")) -> dict[str, list[str]]:
    """package -> fincprg.finance modules its source imports, closed over the imports inside fincprg.finance."""
    fin = ROOT / "fincprg" / "finance"
    inner = {"fincprg.finance" + ("" if p.stem == "__init__" else f".{p.stem}"): _finance_imports(p)
             for p in fin.glob("*.py")}
    out: dict[str, list[str]] = {}
    for pkg in packages:
        d = ROOT / "fincprg" / pkg
        if not d.is_dir():
            continue
        mods = set().union(*(_finance_imports(p) for p in sorted(d.rglob("*.py"))))
        todo = list(mods)
        while todo:
            for m in inner.get(todo.pop(), set()) - mods:
                mods.add(m)
                todo.append(m)
        out[pkg] = sorted(mods)
    return out
