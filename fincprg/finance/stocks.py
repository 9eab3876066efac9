"""The stock table: code and short name -> CITIC industry, and the listed companies a text names.

Read from a CSV such as Tushare's ``stock_basic.csv`` (``finance.stock_table``, or
``topics.classifier.stock_table`` for the topic stage alone). Used by topics (a title's industry),
generation (an untitled report's subject, found in its body) and verify (a query's subject must be the
report's company or one the source itself names).

By default (``"bundled"``) it is the table shipped in ``fincprg/finance/data/stock_basic.csv`` (5,806 A-share
stocks from AFAN-LIFE/macropage @ 9ef6144e, CC-BY-4.0, see ``stock_basic.NOTICE.md`` beside it), so untitled
bodies find their company out of the box. ``none`` (or an empty value, or YAML ``null``) uses no table; any
other value is the path of the user's own CSV. :func:`table_path` reads a setting, :func:`stock_table` loads it.
"""
from __future__ import annotations

import csv
import io
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

from fincprg.errors import ConfigError
from fincprg.finance.industries import to_citic

_CODE_COLS = ("symbol", "code", "stock_code", "ts_code", "股票代码", "证券代码", "代码")
_NAME_COLS = ("name", "short_name", "股票简称", "证券简称", "简称", "名称")
_INDUSTRY_COLS = ("industry", "industry_name", "行业", "所属行业")
# a six-digit code standing alone (not inside a longer number): 600519, 600519.SH, SZ000001
_CODE = re.compile(r"(?<![\d.])(?:(?:SH|SZ|BJ)\.?)?([036894]\d{5})(?:\.(?:SH|SZ|BJ))?(?![\d.]?\d)", re.I)
BUNDLED = "bundled"  # the setting that names the table shipped with the package
OFF = ("", "none")  # settings (any case) that name no table; YAML null (None) too
# names this short are ordinary words too often (美的, 中信) unless a code stands beside them
MIN_NAME_CHARS = 3


def norm_name(name: str) -> str:
    """Full-width letters and spaces folded (万科Ａ -> 万科A, ＊ST -> *ST)."""
    return unicodedata.normalize("NFKC", name).replace(" ", "").strip()


def name_index(names: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """First two characters (one, for a one-character name) -> the names starting with them, longest first
    (for :func:`find_names`)."""
    index: dict[str, list[str]] = {}
    for n in set(names):
        if n:
            index.setdefault(n[:2], []).append(n)
    return {k: tuple(sorted(v, key=len, reverse=True)) for k, v in index.items()}


def find_names(text: str, index: dict[str, tuple[str, ...]]) -> Iterator[tuple[str, int]]:
    """(name, offset) of the names of ``index`` in ``text``: leftmost, longest, not overlapping. A position
    tries only the names starting with its two characters: thousands of names cost what a few do, and a
    155,000-character annual report is read in milliseconds (keyed by one character, the common ones such as
    中 or 华 each tried hundreds of names at every place they appear)."""
    get = index.get
    i, end = 0, len(text)
    while i < end:
        hit = None
        for name in get(text[i:i + 2], ()):  # names of two or more characters first: they are longer
            if text.startswith(name, i):
                hit = name
                break
        else:
            if text[i] in index:  # a one-character name
                hit = text[i]
        if hit:
            yield hit, i
            i += len(hit)
        else:
            i += 1


@dataclass(frozen=True)
class Mention:
    name: str  # the table's short name (normalised), or for an ST-marked one the name written beside its code
    code: str | None  # six digits
    count: int  # times the text names it (by name or code)
    first: int  # offset of the first mention
    key: str = ""  # the table's short name (``name`` may be the one written beside the code)


@dataclass(frozen=True)
class Occurrence:
    key: str  # the table's short name
    start: int  # offsets in the NFKC-normalised text
    end: int
    by_code: bool  # a stock code, not the name


def _read_table(p: Path, key: str) -> tuple[list[str], list[dict[str, str]]]:
    """The header and rows of a stock table CSV, read like the corpus: UTF-8 (with or without a mark), else
    GBK/GB18030 (Tushare and Excel exports in China). Anything unreadable is one ConfigError naming the fix."""
    if p.is_dir():
        raise ConfigError(f"{key}: {p} is a folder; give the CSV file itself (e.g. {p / 'stock_basic.csv'})")
    if not p.is_file():
        raise ConfigError(f"{key}: {p} does not exist; give a CSV with a stock code "
                          "and an industry column (e.g. Tushare's stock_basic.csv), \"bundled\" for the table shipped "
                          "with fincprg, or \"none\" for no table")
    data = p.read_bytes()
    for enc in ("utf-8-sig", "gbk", "gb18030"):
        try:
            text = data.decode(enc)
            break
        except UnicodeDecodeError:
            continue
    else:
        raise ConfigError(f"{key}: {p} is not a text CSV in UTF-8 or GBK/GB18030; re-save it as UTF-8 CSV "
                          "(e.g. `iconv -f <encoding> -t utf-8`)")
    if "\0" in text:
        raise ConfigError(f"{key}: {p} holds NUL bytes, so it is not a CSV (UTF-16 or a binary file?); re-save it "
                          "as UTF-8 CSV")
    limit = csv.field_size_limit()
    csv.field_size_limit(max(limit, len(text) + 1))  # a long field is read, not refused; restored below
    try:
        reader = csv.DictReader(io.StringIO(text, newline=""))
        return list(reader.fieldnames or []), list(reader)
    except csv.Error as e:
        raise ConfigError(f"{key}: {p} is not a valid CSV (line {reader.line_num}: {e}); check its quoting or "
                          "re-export it as CSV") from None
    finally:
        csv.field_size_limit(limit)


class StockTable:
    """Stock code (and short name) -> CITIC industry, read from a CSV (the bundled one or a user's).

    The CSV needs a code column (``symbol``/``code``/``ts_code``/``股票代码`` …) and an industry column
    (``industry``/``行业`` …) with names of any scheme :func:`~fincprg.finance.industries.to_citic` knows
    (CITIC, Shenwan, East Money, Tushare); a ``name`` column adds short names. Codes are matched on their
    six digits (``000001.SZ`` == ``000001``); rows whose industry maps to nothing are skipped for the
    industry lookup (and counted) but still name a company.
    """

    def __init__(self, path: str | Path, key: str = "finance.stock_table"):
        p = Path(path)
        cols, rows = _read_table(p, key)
        code = next((c for c in _CODE_COLS if c in cols), None)
        ind = next((c for c in _INDUSTRY_COLS if c in cols), None)
        name = next((c for c in _NAME_COLS if c in cols), None)
        if code is None or ind is None:
            raise ConfigError(f"{key}: {p} has columns {cols}; it needs a code column "
                              f"({'/'.join(_CODE_COLS)}) and an industry column ({'/'.join(_INDUSTRY_COLS)})")
        self.by_code: dict[str, str] = {}
        self.by_name: dict[str, str] = {}
        self.name_of: dict[str, str] = {}  # six digits -> short name
        self.code_of: dict[str, str] = {}  # short name -> six digits
        self.own_industry: dict[str, str] = {}  # short name -> the table's own (often finer) industry name
        self.unmapped = 0
        for row in rows:
            digits = (row.get(code) or "").strip().split(".")[0]
            digits = digits.zfill(6) if digits.isdigit() else digits.upper()
            short = norm_name(row.get(name) or "") if name else ""
            if digits and short:
                self.name_of.setdefault(digits, short)
                self.code_of.setdefault(short, digits)
            if short and (row.get(ind) or "").strip():
                self.own_industry.setdefault(short, row[ind].strip())
            citic = to_citic(row.get(ind))
            if citic is None:
                self.unmapped += bool((row.get(ind) or "").strip())
                continue
            if digits:
                self.by_code[digits] = citic
            if short:
                self.by_name.setdefault(short, citic)
        self.path = str(p)
        self._by_first: dict[str, tuple[str, ...]] = {}

    def lookup(self, code: str | None, company: str | None) -> str | None:
        """The CITIC industry of a stock code (six digits, or with an exchange suffix) or short name."""
        if code:
            digits = code.strip().split(".")[0]
            hit = self.by_code.get(digits.zfill(6) if digits.isdigit() else digits.upper())
            if hit:
                return hit
        return self.by_name.get(norm_name(company)) if company else None

    def occurrences(self, text: str) -> list[Occurrence]:
        """Every place the NFKC-normalised ``text`` names a listed company: a short name (>= 3 characters,
        leftmost longest) or a stock code the table knows, in text order."""
        if not self._by_first:
            self._by_first = name_index(n for n in self.code_of if len(n) >= MIN_NAME_CHARS)
        t = unicodedata.normalize("NFKC", text)
        out = [Occurrence(hit, i, i + len(hit), False) for hit, i in find_names(t, self._by_first)
               if not inside_word(t, i, i + len(hit)) and not starts_other_name(t, i + len(hit))]
        out += [Occurrence(n, m.start(), m.end(), True) for m in _CODE.finditer(t) if (n := self.name_of.get(m.group(1)))]
        return sorted(out, key=lambda o: o.start)

    def mentions(self, text: str, occurrences: list[Occurrence] | None = None) -> list[Mention]:
        """The listed companies a text names, by short name (>= 3 characters, longest match) or by a
        stock code the table knows, most mentioned first (ties: first mentioned first). ``occurrences``:
        :meth:`occurrences` of ``text`` when the caller has them already (a long body's take a while)."""
        t = unicodedata.normalize("NFKC", text)
        counts: Counter[str] = Counter()
        first: dict[str, int] = {}
        written: dict[str, str] = {}  # table name -> the name the text writes beside its code
        for o in self.occurrences(t) if occurrences is None else occurrences:
            counts[o.key] += 1
            first.setdefault(o.key, o.start)
            if o.by_code and o.key not in written:  # the first name written beside the code is the one kept
                w = _written_name(o.key, t[max(0, o.start - 14):o.start])
                if w:
                    written[o.key] = w
        return [Mention(written.get(n, n), self.code_of.get(n), c, first[n], n)
                for n, c in sorted(counts.items(), key=lambda kv: (-kv[1], first[kv[0]]))]


# characters of context either side that jieba segments to tell a name from part of a longer word
_WORD_WINDOW = 6
# a noun (「银行业」, 「半导体」, 「街区」) past the name's end; a verb or a person's name is not (「志邦家居于」, 「珀莱雅正」)
_NOUN_TAGS = ("n", "nz", "s")


def inside_word(text: str, start: int, end: int) -> bool:
    """Whether the name at ``text[start:end]`` is written inside a longer word, so it names no company.

    Read with jieba's own dictionary (no HMM guesses, none of fincprg's added words, so the answer does not
    depend on which company names a build registered): a word that starts before the name and ends inside it
    (「我国新能源」: 我国, so no 国新能源; 「设立新能源」), a noun that starts on the name's last character
    (「数字人民币」: 人民币, so no 数字人), or a noun that runs exactly one character past its end (「中国银行业」:
    银行业, the industry, so no 中国银行; 「中微半导体」 is not 中微半导) and the character after the name opens no word of
    its own (「五洲特纸浆纸」 is 五洲特纸 + 浆纸). A word running further on (「中国平安保险」: 平安保险) leaves the name
    its own: a listed company's full name often goes on that way.

    Example:
        >>> inside_word("我国新能源汽车销量", 1, 5), inside_word("招商银行业绩稳健", 0, 4)
        (True, False)
    """
    from fincprg.finance.lexicon import plain_tokenizer
    from fincprg.finance.words import pos_tags

    cut = plain_tokenizer().lcut
    lo = max(0, start - _WORD_WINDOW)
    s, e, pos = start - lo, end - lo, 0
    for tok in cut(text[lo:end + _WORD_WINDOW], HMM=False):
        a, b = pos, pos + len(tok)
        pos = b
        if a < s < b < e:  # (a word holding the whole name, 「中国建设银行」, is its longer name)
            return True
        if s <= a < e < b and (b - e == 1 or e - a == 1) and pos_tags().get(tok) in _NOUN_TAGS:
            # unless the character after the name opens a word of its own (「五洲特纸浆纸」: 浆纸, 「银行业绩」: 业绩)
            after = cut(text[end:end + _WORD_WINDOW], HMM=False)
            return bool(after) and len(after[0]) == 1
        if a >= e:
            break
    return False


# a company name that goes on past a listed short name to a 有限公司 (「太平洋制罐（北京）有限公司」): a subsidiary
# or another firm; a listed company's own full name is a 股份有限公司 (「贵州茅台酒股份有限公司」)
_OTHER_FIRM = re.compile(r"((?:[\u4e00-\u9fff]|[（(][\u4e00-\u9fff]{2,4}[)）]){1,8}?)(?<!股份)有限(?:责任)?公司")


# ... or one that a 有限公司 or 分公司 follows at once: a listed company writes its own as 股份有限公司
_OWN_FIRM_AFTER = re.compile(r"有限(?:责任)?公司|分公司")


def starts_other_name(text: str, end: int) -> bool:
    """Whether the name ending at ``end`` opens another company's name: nouns run from it to a 有限公司 that is no
    股份有限公司 (「比亚迪汽车工业有限公司」 is a subsidiary, 「太平洋制罐有限公司」 no broker; 「比亚迪与华为…有限公司」 is
    two names), or a 有限公司 or 分公司 follows it at once (「安徽宣城海螺水泥有限公司」).

    Example:
        >>> starts_other_name("比亚迪汽车工业有限公司", 3), starts_other_name("比亚迪股份有限公司", 3)
        (True, False)
        >>> starts_other_name("宣城海螺水泥有限公司", 6)
        True
    """
    from fincprg.finance.words import is_noun, words

    if _OWN_FIRM_AFTER.match(text, end):
        return True  # the short name closes another registered name (「安徽宣城海螺水泥有限公司」, a subsidiary)
    m = _OTHER_FIRM.match(text, end)
    return bool(m) and all(is_noun(w) for w in words(re.sub(r"[（()）]", "", m.group(1))))


_ST = re.compile(r"^\*?S?ST\s*")


def _written_name(name: str, before: str) -> str | None:
    """The name a report writes before a stock code the table lists as risk-flagged today (*ST传智 for
    「传智教育（003032）」): the table's ST mark and later renames are not the report's subject."""
    bare = _ST.sub("", name)
    if bare == name or not bare:
        return None
    run = re.search(r"([\u4e00-\u9fffA-Za-z]{2,12})\s*[（(]?\s*$", before)
    if not run or bare[0] not in run.group(1):
        return None
    w = run.group(1)[run.group(1).rfind(bare[0]):]
    return w if len(w) >= 2 else None


@lru_cache(maxsize=4)
def load_stock_table(path: str, key: str = "finance.stock_table") -> StockTable:
    """One parsed table per path and process (stages and Ray actors ask for it once per batch)."""
    return StockTable(path, key)


def bundled_table_path() -> Path:
    """The stock table shipped with the package (``fincprg/finance/data/stock_basic.csv``)."""
    return Path(str(resources.files("fincprg.finance").joinpath("data", "stock_basic.csv")))


def table_path(setting: str | None) -> str | None:
    """The CSV a ``stock_table`` setting names: ``"bundled"`` the shipped table, ``None``/``""``/``"none"``
    no table, anything else the path as given."""
    if setting is None or setting.strip().lower() in OFF:
        return None
    return str(bundled_table_path()) if setting.strip().lower() == BUNDLED else setting


def stock_table(setting: str | None, key: str = "finance.stock_table") -> StockTable | None:
    """The table a ``stock_table`` setting names (loaded once per process), or None for no table."""
    path = table_path(setting)
    return load_stock_table(path, key) if path else None
