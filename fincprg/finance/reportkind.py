"""What kind of report a text is (company, industry, strategy, macro, bond) and which broker wrote it, read from
its title, its masthead (the first page's running tag, 「证券研究报告｜行业周报」) or its first lines, and its legal
text; for reports whose input gives neither a ``report_type`` nor a ``broker`` field.

The kind words are data (``data/report_kinds.jsonl``: ``{"word", "kind"}``), matched longest first, so 行业周报 is
an industry report's and 策略周报 a strategy report's although both hold 周报. A title that names a listed
company with its code (「贵州茅台（600519）：…」) is a company report's whatever else it says.

The broker is never a report's subject: it is the name the report's legal text and running header give with
证券 (「本报告由华辰证券研究所发布」, 「东岳证券股份有限公司具备…」, 「启明证券｜行业周报」), the one named most.
"""
from __future__ import annotations

import functools
import re
import unicodedata
from collections import Counter
from typing import Any

from fincprg.finance.extract import parse_title_company
from fincprg.wordlists import alternation, read_entries

KINDS = ("company", "industry", "strategy", "macro", "bond")
_SEP = r"[｜|·•　/\s]"
_DATE = re.compile(r"(?:19|20)\d{2}\s*[-年/.]\s*\d{1,2}(?:\s*[-月/.]\s*\d{1,2}\s*日?)?月?")
HEAD_LINES = 3  # how many of a text's first lines may carry its masthead
_MAX_MASTHEAD = 40


@functools.lru_cache(maxsize=1)
def _kind_words() -> tuple[re.Pattern[str], dict[str, str]]:
    entries = read_entries("fincprg.finance", "report_kinds.jsonl")
    return re.compile(alternation(entries)), {e["word"]: e["kind"] for e in entries}


def kind_in(text: str | None) -> str | None:
    """The kind a text's kind words give (the longest word found), else None."""
    if not text:
        return None
    pattern, kind = _kind_words()
    found = pattern.findall(unicodedata.normalize("NFKC", text))
    return kind[max(found, key=len)] if found else None


def title_kind(title: str | None) -> str | None:
    """A title's kind: ``company`` for 「公司名（代码）：…」, else its kind words, those before its colon first
    (「汽车行业周报：关注策略…」 is an industry weekly, not a strategy report)."""
    if not title or not title.strip():
        return None
    if parse_title_company(title)[0]:
        return "company"
    head = re.split(r"[:：]", unicodedata.normalize("NFKC", title), maxsplit=1)[0]
    return kind_in(head) or kind_in(title)


def is_masthead(line: str | None) -> bool:
    """Whether a line is a report's masthead or running tag rather than its title: no colon, short, and made of
    证券研究报告, a kind word, a broker, an industry and a date between separators (「证券研究报告｜首次覆盖报告」,
    「行业深度报告　2020-05-19」, 「启明证券｜行业周报」)."""
    s = unicodedata.normalize("NFKC", line or "").strip()
    if not s or len(s) > _MAX_MASTHEAD or re.search(r"[:：，,。；;！？]", s):
        return False
    if "研究报告" in s and not parse_title_company(s)[0]:
        return True
    pieces = [p for p in re.split(f"{_SEP}+", _DATE.sub(" ", s)) if p]
    return len(pieces) >= 1 and kind_in(s) is not None and (len(pieces) >= 2 or bool(_DATE.search(s)))


def report_kind(title: str | None, *, masthead: str | None = None, text: str | None = None,
                company: str | None = None) -> tuple[str | None, str]:
    """``(kind, where it was read)``: from the title, else the masthead, else a masthead among the text's first
    :data:`HEAD_LINES` lines, else ``company`` when the metadata names one; ``(None, "none")`` when nothing says.

    Example:
        >>> report_kind("电子行业周报：费用改善助力净利率提升")
        ('industry', 'title')
    """
    if kind := title_kind(title):
        return kind, "title"
    if kind := (kind_in(masthead) if masthead else None):
        return kind, "masthead"
    lines = [ln for ln in (text or "").splitlines()[:HEAD_LINES * 2] if ln.strip()][:HEAD_LINES]
    for ln in lines:
        if is_masthead(ln) and (kind := kind_in(ln)):
            return kind, "text"
    if company:
        return "company", "metadata"
    return None, "none"


# a broker named as the report's writer: its legal name, its research institute, its licence, its running header
_BROKER = r"([\u4e00-\u9fff]{2,6}?证券)"
_WRITER = re.compile(
    _BROKER + r"(?=股份有限公司|有限责任公司|有限公司|研究所|研究院|研究部|研究中心|具备|具有中国证监会|版权|"
              r"[｜|·•]|\s*(?:行业|公司|策略|宏观|固收)?(?:周报|月报|深度|点评|研究))"
    r"|(?:本报告由|仅供|版权归|版权属于|由)" + _BROKER)
# words a lazy 「…证券」 match takes in from before the name (「根据西南证券研究所」 names 西南证券)
_LEGAL_PREFIX = re.compile(r"^(?:本报告由|仅供|版权归|版权属于|由|本|的|系|根据|依据|据|经|与|和|及|对|在|为|从|向|将)+")


def report_broker(text: str | None, title: str | None = None, masthead: str | None = None) -> str | None:
    """The broker that wrote a report, as its masthead, running header or legal text names it (「XX证券」), the one
    named most; None when no text names one.

    Example:
        >>> report_broker("营收增长。\\n本报告由华辰证券研究所发布，华辰证券股份有限公司具备证券投资咨询业务资格。")
        '华辰证券'
    """
    counts: Counter[str] = Counter()
    for part in (masthead, title, text):
        if not part:
            continue
        for m in _WRITER.finditer(unicodedata.normalize("NFKC", part)):
            counts[_LEGAL_PREFIX.sub("", m.group(1) or m.group(2))] += 1
    counts = Counter({k: v for k, v in counts.items() if len(k) >= 4})
    return counts.most_common(1)[0][0] if counts else None


BROKER_KEYS = ("broker", "org_name", "orgname", "institution", "券商", "机构", "研究机构", "发布机构", "撰写机构")


def broker_of(meta: dict[str, Any] | None) -> str | None:
    """The broker a report's metadata names (``meta["broker"]``, 机构 …; ingest fills ``broker`` from the text
    where no field gives one)."""
    for k in BROKER_KEYS:
        v = (meta or {}).get(k)
        if isinstance(v, str) and v.strip():
            return v.strip()
    return None


# a broker acting as an analyst of another company: 「兴业证券7月12日将东方盛虹评级调整为审慎增持」, 「中信证券给予…目标价」
_ACTS = re.compile(r"[^。；;，,]{0,24}?(?:评级|目标价|盈利预测|EPS预测|首次覆盖|研报|研究报告|分析师)")


def broker_acting(text: str, name: str) -> bool:
    """Whether ``text`` names the securities firm ``name`` as a broker rating or forecasting another company, not
    as the company its fact is about (the rating's or forecast's company is)."""
    if not name.endswith("证券"):
        return False
    return any(_ACTS.match(text, m.end()) for m in re.finditer(re.escape(name), text))


def same_broker(name: str, broker: str | None) -> bool:
    """Whether a company name is the broker's (西南证券 ↔ 西南证券, 中国银河 ↔ 中国银河证券 or 银河证券), not a
    namesake of another trade (兴业银行 is not 兴业证券)."""
    if not broker or not name:
        return False
    stem = lambda s: re.sub(r"(?:股份有限公司|有限责任公司|有限公司)$", "", s).removesuffix("证券")  # noqa: E731
    a, b = stem(name), stem(broker)
    return bool(a) and (a == b or a == "中国" + b or b == "中国" + a)
