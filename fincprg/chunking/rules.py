"""Cleaning rules for research-report boilerplate; every removal is named by its rule.

Granularity (why): captions, URLs, contact details, analyst introductions, page noise and
table rows are recognisable line by line, so they are removed from lines *before* cutting
passages (a 500-char passage should not lose its good half because it held one caption).
Disclaimers are removed by line (a line that starts with 免责声明…) or as a block under a
heading, and again at passage level when legal language dominates a passage; tables are also
re-checked per passage (digit-dominated passages). Text that lost its layout is judged by sentence
(reflow.py); :func:`unit_rule` and the ``sentence`` flags say where a sentence is judged differently.
"""
from __future__ import annotations

import re
from collections import Counter

from fincprg.wordlists import WordLists, alternation, read_entries

# ---------------------------------------------------------------- patterns
_W = WordLists("fincprg.chunking")  # chunking/data/words.jsonl
_LEAD = r"^[\s\d一二三四五六七八九十、.．()（）【】\[\]#*■●◆◇•·>-]*"

DISCLAIMER_HEAD = re.compile(_LEAD + _W.pattern("disclaimer_head"), re.IGNORECASE)
# the legal text's phrases: fixed ones from the list, the ones with a gap or a variant written here
LEGAL_PHRASE = re.compile(
    _W.pattern("legal_phrase") + r"|不构成(?:任何)?(?:对[^。]{0,12})?投资建议|据此(?:做出|作出)|版权(?:归|均属|所有)|"
    r"未经[^。]{0,12}书面(?:许可|授权|同意)|证券投资咨询(?:业务)?资格|不保证其?准确性|"
    r"投资者(?:不应|应当)?[^。]{0,6}独立判断|仅反映[^。]{0,10}判断|过往的?表现亦?不应作为|版权(?:属于|为)"
)
ANALYST_HEAD = re.compile(_LEAD + rf"(?:{_W.pattern('analyst_heading')}|{_W.pattern('analyst_label')}[：:])")
ANALYST_CUE = re.compile(_W.pattern("analyst_cue") + r"|SAC\s*(?:执业|编号|No)|(?<![A-Za-z0-9])S\d{13}(?!\d)")
PERSON_CUE = _W.compile("person_cue")

# The first page's sidebar: field labels (「总股本（亿股）：3.39」) and section labels (「股票数据」, 「相关报告」) are
# data (data/sidebar.jsonl); a related report is a numbered title in 《》 (「1.《XX：估值处于历史低位》2024-10-08」).
def _words(kind: str) -> str:
    """data/sidebar.jsonl's words of one kind as an alternation, longest first."""
    return alternation(e for e in read_entries("fincprg.chunking", "sidebar.jsonl") if e["kind"] == kind)


SIDEBAR_FIELDS, SIDEBAR_SECTIONS = _words("field"), _words("section")
SIDEBAR_FIELD = re.compile(rf"(?:{SIDEBAR_FIELDS})(?:[（(][^）)\n]{{0,10}}[)）])?\s?[：:]")
SIDEBAR = re.compile(  # a related report may be wrapped: 「2.《XX：需求边际改善，盈利」 / 「拐点渐近》2019-03-18」
    rf"^(?:{SIDEBAR_FIELD.pattern}[^。\n]{{0,30}}|(?:{SIDEBAR_SECTIONS})"
    rf"|\d{{1,2}}\s?[.、．]\s?《[^》\n]{{2,60}}(?:》[\d\-/. ]{{0,11}})?"
    rf"|[^《》\n]{{1,40}}》[\d\-/. ]{{4,11}}|[\d][\d\-/.]{{2,9}}|(?:{SIDEBAR_SECTIONS})[%\dA-Za-z\s.\-+]{{0,60}})$"
)
# Bounded parts (RFC 5321: a local part is at most 64 characters, a domain label 63), and a local part starts
# where an address can: unbounded `[...]+@` rescanned a long run of letters from every start (quadratic).
EMAIL = re.compile(r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63})+")
PHONE = re.compile(
    _W.pattern("phone_label") + r"\s*[：:]?\s*\+?[\d\-()（） ]{7,20}\d"
    r"|(?<![\d.])(?:0\d{2,3}-\d{7,8}|400-?\d{3}-?\d{4}|1[3-9]\d{9})(?![\d.])"
)
ADDRESS = re.compile(_W.pattern("address_label") + r"\s*[：:][^\n。；;]{2,60}")
CONTACT_LABEL = re.compile(_W.pattern("email_label") + r"\s*[：:]\s*", re.IGNORECASE)
URL = re.compile(
    r"(?:https?://|www\.)[\x21-\x7e]+"
    r"|(?<![@\w.])[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\." + _W.pattern("url_tld") + r"(?:\.cn)?"
    r"(?:/[\x21-\x7e]*)?(?![\w])"
)
URL_LABEL = re.compile(_W.pattern("url_label") + r"\s*[：:]?\s*$")
CAPTION_START = re.compile(r"^\s*" + _W.pattern("caption_word") + r"\s*[0-9一二三四五六七八九十]+", re.IGNORECASE)
CAPTION = re.compile(
    CAPTION_START.pattern + r"(?:[-.．][0-9]+)?\s*(?:[:：.、]|\s)"
    rf"|^\s*(?:{_W.pattern('source_label')}|{_W.pattern('source_label_en')})\s*[:：]",
    re.IGNORECASE,
)
# the source line that ends a chart or table cut from flattened text (「…未评级来源：Wind，XX研究」)
SOURCE_END = re.compile(_W.pattern("source_label") + r"\s*[:：][^。\n]{0,80}$")
TRAILING_SOURCE = re.compile(r"(?:资料来源|数据来源|(?<![\u4e00-\u9fff])来源)\s*[:：][^。\n]{0,80}$")
NOISE = re.compile(
    r"^[-—–\s]*\d{1,4}[-—–\s]*$|^第\s*\d+\s*页(?:\s*[/,，]?\s*共\s*\d+\s*页)?$|^\d+\s*/\s*\d+$"
    r"|^(?:Page|P\.?)\s*\d+(?:\s*(?:of|/)\s*\d+)?$"
    r"|^.{0,60}?(?:\.{6,}|．{6,}|…{3,}|·{6,})\s*\d{1,4}$"  # table-of-contents lines with dot leaders
    r"|^(?:图表目录|插图目录|表格目录|目\s?录)$"
    r"|^(?:请务必|敬请)(?:阅读|参阅)[^。]{0,30}(?:声明|条款|说明)[^。]{0,10}$"
    rf"|^{_W.pattern('report_kind_line')}(?:\s*[|｜/·].{{0,20}})?$",
    re.IGNORECASE,
)
_NUM_CELL = re.compile(rf"^[+\-−(（]?[\d,.]+[)）]?{_W.pattern('cell_unit')}?$|^\d{{4}}(?:[QHEA]\d?|Q[1-4]|H[12]|E|A)$|^[-—–]+$|^N/?A$")
_SENT_PUNCT = re.compile(r"[。！？；，]")
_CJK = re.compile(r"[\u4e00-\u9fff]")

# Line rules in precedence order: a line matching several goes to the first enabled one.
LINE_RULES = ("noise", "caption", "disclaimer", "analyst_intro", "sidebar", "contact", "url", "table")


def is_table_row(line: str) -> bool:
    """A row of a number grid: most whitespace/|-separated cells are numbers, or a ['a', 'b'] row dump."""
    s = line.strip()
    if s.startswith("[") and s.endswith("]") and ("', '" in s or '", "' in s):
        return True
    if "。" in s:
        return False
    cells = [c for c in re.split(r"[\s|｜\t]+", s) if c]
    if len(cells) < 3:
        return False
    nums = sum(1 for c in cells if _NUM_CELL.match(c))
    return nums >= 2 and nums / len(cells) >= 0.5


def is_grid_header(line: str) -> bool:
    """A short header-like row (>= 3 cells, no sentence punctuation) that sits next to table rows."""
    s = line.strip()
    cells = [c for c in re.split(r"[\s|｜\t]+", s) if c]
    return len(cells) >= 3 and len(s) <= 60 and not _SENT_PUNCT.search(s)


def line_rule(line: str, enabled: frozenset[str]) -> str | None:
    """The rule that removes this whole line, or None."""
    s = line.strip()
    n = len(s)
    checks = {
        "noise": lambda: bool(NOISE.match(s)),
        "caption": lambda: bool(CAPTION.match(s)) and n <= 120,
        "disclaimer": lambda: bool(DISCLAIMER_HEAD.match(s)) or len(LEGAL_PHRASE.findall(s)) >= 2
        or (n <= 80 and bool(LEGAL_PHRASE.search(s))),
        "analyst_intro": lambda: (bool(ANALYST_HEAD.match(s)) and n <= 400)
        or (bool(ANALYST_CUE.search(s)) and n <= 400),
        "sidebar": lambda: n <= 80 and bool(SIDEBAR.match(s)),
        "contact": lambda: _covered(s, (EMAIL, PHONE, ADDRESS), 0.4) or (
            bool(EMAIL.search(s) or PHONE.search(s) or ADDRESS.search(s)) and n <= 60),
        "url": lambda: _covered(s, (URL,), 0.4) or (bool(URL.search(s)) and n <= 60),
        "table": lambda: is_table_row(s),
    }
    for rule in LINE_RULES:
        if rule in enabled and checks[rule]():
            return rule
    return None


def unit_rule(text: str, enabled: frozenset[str], sentence: bool = False) -> str | None:
    """:func:`line_rule` for a unit of reflow.py; a sentence cut from a flattened report is judged a little
    differently from a line:

    * a chart caption may carry its flattened table, up to its 资料来源 line (「图表3：盈利预测 2022A 2023A …
      资料来源：Wind，XX证券研究所」): no full stop in it, however long;
    * a table row has no clause marks either (「2019H1 公司营收 10.3 亿元，同比+32.8%；」 is a sentence);
    * a link or a phone number inside a sentence of prose goes alone (span rules), not with the sentence.
    """
    if not sentence:
        return line_rule(text, enabled)
    s = text.strip()
    rule = line_rule(s, enabled - {"table"})
    if rule in ("url", "contact"):
        rest = s
        for a, b, _ in reversed(span_removals(s, enabled)):
            rest = rest[:a] + rest[b:]
        rule = None if len(_CJK.findall(rest)) >= 12 else rule
    if rule:
        return rule
    grid = SOURCE_END.sub("", s).strip()  # a table split by a page break ends with its source line
    if "table" in enabled and grid and is_table_row(grid) and not _SENT_PUNCT.search(grid):
        return "table"
    if "caption" in enabled and CAPTION.match(s) and "。" not in s and SOURCE_END.search(s):
        return "caption"
    return None


def _covered(s: str, patterns: tuple[re.Pattern[str], ...], share: float) -> bool:
    hit = sum(len(m.group()) for p in patterns for m in p.finditer(s))
    return bool(s) and hit / len(s) >= share


def block_rule(line: str, sentence: bool = False) -> str | None:
    """A heading that opens a boilerplate block (免责声明 / 分析师简介 alone on a short line).

    A sentence cut from a flattened report has no line of its own, so there a sentence that *starts*
    with such a heading opens the block (「免责声明：本报告仅供…」), whatever its length.
    """
    s = line.strip().rstrip("：:")
    if len(s) > 24 and not sentence:
        return None
    if DISCLAIMER_HEAD.match(s):
        return "disclaimer"
    if ANALYST_HEAD.match(s):
        return "analyst_intro"
    return None


# Rating definitions (「增持，相对涨幅介于5%与15%之间；」) and the legal text's own words: a sentence of a
# disclaimer block says one of these even where it holds no legal phrase.
_BLOCK_WORDS = _W.compile("block_word")
# The legal text's own words, without rating words (a body's 「维持买入评级」 is not legal text).
# (客户, 损失, 责任 and the like are a body's words too: 「前五大客户收入占比」.)
LEGAL_WORDS = _W.compile("legal_word")
# A body heading ends a block in a flattened report: the body goes on after it.
BODY_HEAD = re.compile(_LEAD + rf"(?:{_W.pattern('body_head')}|{_W.pattern('body_label')}[：:])")
# a disclaimer block's own words, line by line (its rating words included)
_DISCLAIMER_CUE = _W.compile("disclaimer_cue")


def continues_block(rule: str, line: str, sentence: bool = False,
                    enabled: frozenset[str] = frozenset(LINE_RULES)) -> bool:
    """Whether a line after a boilerplate heading still belongs to that block.

    Sentence by sentence (a flattened report), a block runs on through sentences that say something
    a disclaimer or an analyst's note says, and through short ones (a rating name, a heading), up to the
    next body heading; a long sentence without such words is body again.
    """
    s = line.strip()
    if sentence:
        if BODY_HEAD.match(s):
            return False
        if len(s) <= 12 or block_rule(s, sentence=True) or line_rule(s, enabled - {"table"}):
            return True
        # the analyst's note and the legal text follow each other at the end of a report: either block's
        # words carry both
        return bool(_BLOCK_WORDS.search(s) or PERSON_CUE.search(s) or LEGAL_PHRASE.search(s) or ANALYST_CUE.search(s))
    if len(s) <= 40 or block_rule(s):
        return True
    cue = LEGAL_PHRASE if rule == "disclaimer" else PERSON_CUE
    extra = _DISCLAIMER_CUE if rule == "disclaimer" else ANALYST_CUE
    return bool(cue.search(s) or extra.search(s) or EMAIL.search(s))


def span_removals(line: str, enabled: frozenset[str]) -> list[tuple[int, int, str]]:
    """Spans to cut out of a kept line: URLs, e-mails/phones/addresses, a trailing 资料来源：…"""
    spans: list[tuple[int, int, str]] = []
    if "contact" in enabled:
        for p in (EMAIL, PHONE, ADDRESS):
            for m in p.finditer(line):
                a = m.start()
                lab = CONTACT_LABEL.search(line, max(0, a - 12), a)
                spans.append((lab.start() if lab and lab.end() == a else a, m.end(), "contact"))
    if "url" in enabled:
        for m in URL.finditer(line):
            lab = URL_LABEL.search(line[: m.start()])
            spans.append((lab.start() if lab else m.start(), m.end(), "url"))
    if "caption" in enabled:
        m = TRAILING_SOURCE.search(line)
        if m:
            spans.append((m.start(), m.end(), "caption"))
    spans.sort()
    merged: list[tuple[int, int, str]] = []
    for a, b, r in spans:  # first rule wins where spans overlap
        if merged and a < merged[-1][1]:
            pa, pb, pr = merged[-1]
            merged[-1] = (pa, max(pb, b), pr)
        else:
            merged.append((a, b, r))
    return merged


def repeated_lines(lines: list[str], min_count: int = 3, max_chars: int = 40) -> set[str]:
    """Short lines repeated on many pages of one report: running headers and footers."""
    c = Counter(s.strip() for s in lines if 0 < len(s.strip()) <= max_chars)
    return {s for s, k in c.items() if k >= min_count and not is_table_row(s)}


# ------------------------------------------------------------ passage level
def digit_share(text: str) -> float:
    chars = [ch for ch in text if not ch.isspace()]
    return sum(ch.isdigit() for ch in chars) / len(chars) if chars else 0.0


def passage_rule(text: str, enabled: frozenset[str]) -> str | None:
    """table: a digit-dominated passage (>= 45% digits with < 35% CJK, >= 60% digits, or mostly grid
    rows); disclaimer: legal
    phrases in at least half of its sentences (and two or more of them)."""
    if "table" in enabled:
        lines = [ln for ln in text.split("\n") if ln.strip()]
        grid = sum(1 for ln in lines if is_table_row(ln))
        d = digit_share(text)
        # Forecast sentences can be half digits too; a grid also lacks Chinese prose.
        if (d >= 0.45 and cjk_share(text) < 0.35) or d >= 0.6 or (lines and grid / len(lines) >= 0.5 and grid >= 2):
            return "table"
    if "disclaimer" in enabled:
        sents = [s for s in re.split(r"[。！？；\n]", text) if s.strip()]
        legal = sum(1 for s in sents if LEGAL_PHRASE.search(s) or DISCLAIMER_HEAD.match(s))
        if legal >= 2 and legal / max(1, len(sents)) >= 0.5:
            return "disclaimer"
    return None


def cjk_share(text: str) -> float:
    chars = [ch for ch in text if not ch.isspace()]
    return len(_CJK.findall(text)) / len(chars) if chars else 0.0
