"""Full-length-like report texts built from the bundled sample, with body/boilerplate truth (issue 48).

A sample report is abstract-length and line-broken. Eight of them are concatenated into one ~12k-character
report and dressed like a PDF extraction: a first-page sidebar (analyst, SAC number, rating, price data,
related reports), a running header with 请务必阅读… and the page number k/n on every page (often in the middle
of a sentence), chart captions with 资料来源, a forecast table flattened into a run of numbers, and at the end
the sample's own analyst, rating and disclaimer lines under their headings. Two renderings:

* ``flat``: one line, as PDF text arrives when its line breaks are lost;
* ``lined``: the flat text with its line breaks put back after each 。 and around the headers and footers;
* ``wrapped``: hard-wrapped at ``width`` Chinese characters (twice as many digits) mid-sentence, with headers
  and footers on lines of their own.

``body`` lists the body sentences (what cleaning must keep), ``boiler`` the boilerplate pieces (what it
must remove). The generator of eval/_fullreports.py does the same from CFBenchmark bodies; these tests need
only the repository.
"""
from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from fincprg.chunking import rules as R
from fincprg.config import CHUNK_RULES

SAMPLE = Path(__file__).resolve().parents[2] / "datasets" / "sample" / "reports.jsonl"
_ALL = frozenset(CHUNK_RULES)
_SENT = re.compile(r"[^。！？；]+[。！？；]?")

# Header wordings differ by broker, as they do in real reports; {k}/{n} is the page number.
HEADERS = (
    "{broker}·公司研究 请务必阅读正文后免责条款 {k}/{n}",
    "{industry}·行业深度{broker} 敬请参阅末页重要声明及评级说明 {k} / {n}",
    "证券研究报告 {company} 请务必阅读正文之后的免责声明部分 第{k}页 共{n}页",
    "{broker}研究所{industry}周报请务必阅读正文后免责条款{k}/{n}",
)
FOOTERS = ("- {k} -", "第 {k} 页 共 {n} 页", "{k}")


@dataclass(frozen=True)
class FullReport:
    id: str
    flat: str
    wrapped: str
    body: list[str]  # body sentences, in order
    boiler: list[str]  # boilerplate pieces: sidebar, headers, captions, tables, disclaimers
    lined: str = ""  # the flattened text with a line break after each 。 and around the page headers

    def boiler_share(self) -> float:
        b = sum(_nonspace(x) for x in self.boiler)
        return b / (b + sum(_nonspace(x) for x in self.body))


def _nonspace(s: str) -> int:
    return sum(1 for c in s if not c.isspace())


def _sample() -> list[dict]:
    return [json.loads(x) for x in SAMPLE.read_text(encoding="utf-8").splitlines()]


def _split(report: dict) -> tuple[list[str], list[str]]:
    """A sample report's body lines and boilerplate lines, as today's line rules label the line-broken text."""
    body, boiler = [], []
    for ln in report["text"].split("\n"):
        (boiler if R.line_rule(ln, _ALL) or R.is_grid_header(ln) else body).append(ln)
    return body, boiler


def _sidebar(r: dict, broker: str) -> str:
    return (f"{broker} 证券研究报告 {r.get('report_type') == 'industry' and '行业研究' or '公司研究'} "
            f"投资评级 买入（维持） 分析师 张明远 执业证书编号：S0570519080001 邮箱：zhangmy@hcsec.com "
            f"研究助理 李思 SAC执业证书编号：S0570522010001 当前价格 52.30元 目标价格 101.64元 "
            f"总股本/流通股本（亿股） 4.00/3.20 总市值（亿元） 209.20 52周最高/最低（元） 70.20/45.10 "
            f"相关研究 《{r.get('company') or r['industry']}：三季报点评，增长动能持续》2023-10-30")


def _table(j: int, broker: str) -> str:
    return (f"图表{j}：主要财务指标预测 单位：亿元 2022A 2023A 2024E 2025E 营业收入 45.62 52.18 63.40 76.85 "
            f"同比增速 11.9% 14.4% 21.5% 21.2% 归母净利润 7.17 7.86 9.68 12.05 EPS（元） 1.79 1.97 2.42 3.01 "
            f"资料来源：Wind，{broker}研究所")


def full_report(i: int, width: int = 40, page_chars: int = 1300) -> FullReport:
    """The i-th full-length-like report (deterministic): eight sample bodies, one broker's boilerplate."""
    sample = _sample()
    first = sample[i % len(sample)]
    broker = first["broker"]
    bodies, tail = [], []
    for k in range(8):
        b, bp = _split(sample[(i + k) % len(sample)])
        bodies.extend(b)
        if k == 0:
            tail = [x for x in bp if not R.CAPTION.match(x) and not R.is_table_row(x) and not R.is_grid_header(x)]
    stream: list[tuple[str, str]] = [("boiler", _sidebar(first, broker))]
    for j, para in enumerate(bodies):  # paragraphs, a caption or a table after every fourth
        stream.append(("body", para))
        if j % 4 == 3:
            cap = (f"图表{j}：{first.get('company') or first['industry']}营业收入及同比增速（亿元，%） "
                   f"资料来源：Wind，{broker}研究所") if j % 8 == 3 else _table(j, broker)
            stream.append(("boiler", cap))
    # the tail block: each of the sample's boilerplate lines (分析师…/评级说明…/免责声明…) under its own heading
    stream += [("boiler", "分析师声明"), *[("boiler", x) for x in tail]]
    fmt = {"broker": broker, "industry": first["industry"], "company": first.get("company") or first["industry"]}
    header = HEADERS[i % len(HEADERS)]
    return _render(f"full{i:02d}", stream, header, FOOTERS[i % len(FOOTERS)], fmt, width, page_chars)


def _render(rid: str, stream: list[tuple[str, str]], header: str, footer: str, fmt: dict, width: int,
            page_chars: int) -> FullReport:
    """Wrap each piece at ``width``, lay the lines out on pages, and open every page after the first with its
    header (and close the page before with its footer): on a line of their own in ``wrapped``, inline in
    ``flat``, where a page usually breaks in the middle of a sentence."""
    rows: list[tuple[str, str]] = []  # (kind, text) of each wrapped line
    for kind, piece in stream:
        rows += [(kind, row) for row in _wrap(piece, 2 * width)]
        rows[-1] = (rows[-1][0], rows[-1][1] + "\n")  # a piece ends its line and its paragraph
    per_page = page_chars // width
    n = (len(rows) - 1) // per_page + 1
    sep = " " if "{k} / {n}" in header else ""  # some extractions keep spaces around pieces, some do not
    flat, wrapped, lined, boiler = [], [], [], []
    for j, (kind, text) in enumerate(rows):
        if j and j % per_page == 0:
            k = j // per_page + 1
            f, h = footer.format(k=k - 1, n=n), header.format(k=k, n=n, **fmt)
            boiler += [f, h]
            flat.append(sep + f + sep + h + sep)
            wrapped += [f, h]
            lined.append(f"\n{f}\n{h}\n")
        flat.append(text.rstrip("\n") + (sep if text.endswith("\n") else ""))
        wrapped.append(text.rstrip("\n"))
        lined.append(text.rstrip("\n").replace("。", "。\n"))
    body = [s for kind, piece in stream if kind == "body" for s in _SENT.findall(piece) if s.strip()]
    boiler += [piece for kind, piece in stream if kind == "boiler"]
    return FullReport(rid, "".join(flat).strip(), "\n".join(wrapped), body, boiler, "".join(lined).strip())


def _wrap(text: str, columns: int) -> list[str]:
    """Cut ``text`` into lines of ``columns`` display columns (a Chinese character takes two), as a PDF's
    fixed line width holds more digits and Latin letters than Chinese characters."""
    rows, cur, w = [], "", 0
    for ch in text:
        cw = 2 if unicodedata.east_asian_width(ch) in "WF" else 1
        if w + cw > columns:
            rows.append(cur)
            cur, w = "", 0
        cur, w = cur + ch, w + cw
    return rows + [cur] if cur else rows


def score(report: FullReport, kept: str, removed_chars: int) -> dict[str, float]:
    """Body sentences kept, boilerplate characters kept, removed share and boilerplate share of one cleaning."""
    k = "".join(kept.split())
    body_kept = [s for s in report.body if "".join(s.split()) in k]
    kept_body_chars = sum(_nonspace(s) for s in body_kept)
    boiler_chars = sum(_nonspace(x) for x in report.boiler)
    total = boiler_chars + sum(_nonspace(s) for s in report.body)
    return {
        "body_kept": len(body_kept) / len(report.body),
        "boiler_kept": max(0, len(k) - kept_body_chars) / boiler_chars,
        "removed_share": removed_chars / total,
        "boiler_share": boiler_chars / total,
    }
