"""Map one raw input record onto a :class:`~fincprg.records.Report` (or a Rejection saying why not)."""
from __future__ import annotations

import datetime as dt
import hashlib
import logging
import re
from collections.abc import Mapping
from typing import Any

from fincprg.config import REPORT_FIELDS, IngestConfig
from fincprg.errors import InputError
# one title parser for the whole pipeline, so Report.company matches what generate/mine/topics derive
from fincprg.finance import parse_title_company
from fincprg.finance.reportkind import broker_of, report_broker, report_kind
from fincprg.ingest.dates import parse_date
from fincprg.ingest.readers import Raw
from fincprg.records import Rejection, Report

log = logging.getLogger(__name__)

# Built-in aliases, in priority order; keys compare case-insensitively. ``ingest.fields`` wins over these.
ALIASES: dict[str, tuple[str, ...]] = {
    "id": ("id", "_id", "doc_id", "report_id", "编号", "研报编号", "报告编号"),
    "title": ("title", "标题", "研报标题", "报告标题", "题目", "研报题目"),
    "text": ("text", "content", "body", "正文", "内容", "研报内容", "报告内容", "全文"),
    "date": ("date", "publish_date", "pub_date", "publishdate", "published", "datetime", "日期", "发布日期",
             "发布时间", "报告日期", "时间"),
    "company": ("company", "company_name", "stock_name", "公司", "公司名称", "公司简称", "股票简称",
                "股票名称", "证券简称"),
    "stock_code": ("stock_code", "code", "ticker", "symbol", "股票代码", "证券代码", "代码"),
    "industry": ("industry", "industry_name", "行业", "所属行业", "行业名称"),
    "report_type": ("report_type", "type", "category", "类型", "报告类型", "研报类型", "报告类别"),
}

_CODE = re.compile(r"(?<!\d)(\d{6})(?!\d)")
_TYPES = (("strategy", ("策略",)), ("bond", ("债", "固收", "固定收益", "可转债")), ("macro", ("宏观",)),
          ("industry", ("行业",)), ("company", ("公司", "个股", "点评", "深度")))
_KNOWN_TYPES = {"company", "industry", "strategy", "bond", "macro", "other"}


def _norm_code(v: Any) -> str | None:
    if v is None:
        return None
    s = str(v).strip()
    if isinstance(v, int) and 0 <= v < 1_000_000:
        return f"{v:06d}"  # CSV/JSON tools drop leading zeros: 519 -> 000519
    m = _CODE.search(s)
    return m.group(1) if m else (s or None)


def _norm_type(v: Any) -> str | None:
    if v is None or not str(v).strip():
        return None
    s = str(v).strip()
    if s.lower() in _KNOWN_TYPES:
        return s.lower()
    for name, keys in _TYPES:
        if any(k in s for k in keys):
            return name
    return s


# C0/C1 control characters (NUL, BEL, ESC, DEL...): never content, and NUL breaks tools downstream.
# Tab, line feed and carriage return stay in text; vertical tab and form feed (page breaks in extracted
# PDF text) become a line break so the words either side stay apart.
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]")
_BREAKS = re.compile(r"[\x0b\x0c]")
_LINE_BREAKS = re.compile(r"[\t\n\r\x0b\x0c]+")  # one-line fields (title, company...) get a space instead


class NotText(ValueError):
    """A field that must be text holds a JSON object, array or boolean."""


def _present(v: Any) -> bool:
    """Whether a field holds a value (None, "", NaN from spreadsheets, [] and {} are empty cells)."""
    if v is None or (isinstance(v, float) and v != v):
        return False
    if isinstance(v, (str, list, dict, tuple)):
        return bool(v.strip() if isinstance(v, str) else v)
    return True


def _text(v: Any, *, multiline: bool = False) -> tuple[str | None, int]:
    """A field as clean text and the number of control characters taken out of it.

    Raises:
        NotText: an object, array or boolean (``str()`` would store its Python repr as the text).
    """
    if not _present(v):
        return None, 0
    if isinstance(v, (dict, list, tuple, bool)):
        kind = {dict: "an object", bool: "a boolean"}.get(type(v), "an array")
        raise NotText(f"{kind} ({_short(v)})")
    s, n = _CONTROL.subn("", str(v))
    if multiline:
        s, k = _BREAKS.subn("\n", s)
    else:  # a one-line field is short: counting its breaks apart costs nothing
        k = len(_BREAKS.findall(s))
        s = _LINE_BREAKS.sub(" ", s)
    s = s.strip()
    return s or None, n + k


def _short(v: Any) -> str:
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


class FieldMapper:
    """Resolve input field names to Report fields once per distinct key set."""

    def __init__(self, explicit: Mapping[str, str]):
        self.explicit = dict(explicit)
        self._cache: dict[tuple[str, ...], dict[str, list[str]]] = {}

    def plan(self, keys: tuple[str, ...]) -> dict[str, list[str]]:
        """Report field -> input keys that feed it, best first."""
        if keys in self._cache:
            return self._cache[keys]
        plan: dict[str, list[str]] = {f: [] for f in REPORT_FIELDS}
        for k in keys:
            if k in self.explicit:
                plan[self.explicit[k]].append(k)
        lower = {k.lower().strip(): k for k in keys if k not in self.explicit}
        for f, names in ALIASES.items():
            for n in names:
                k = lower.get(n.lower())
                if k is not None and k not in plan[f]:
                    plan[f].append(k)
        self._cache[keys] = plan
        return plan


def to_report(raw: Raw, cfg: IngestConfig, mapper: FieldMapper, *, need_text: bool = True) -> Report | Rejection:
    """Map, validate and normalise one record (``need_text`` False: a title without a body, text "").

    Raises:
        InputError: a report has no text and ``ingest.skip_empty`` is false.
    """
    vals, meta = _pick(raw, mapper)
    src = raw.source
    got = _clean_fields(vals, src)
    if isinstance(got, Rejection):
        return got
    cleaned, removed = got
    title, text, rid = cleaned["title"], cleaned["text"], cleaned["id"]
    if text is None and not need_text:
        text = ""
    if (missing := _missing(title, text, rid, src, cfg)) is not None:
        return missing
    title = title or ""  # untitled: bottom-up generation runs; topics and title-based completion skip it
    if rid is None:
        # Stable across runs and input order: the same report always gets the same id.
        rid = "r" + hashlib.sha1(f"{title}\n{text}".encode("utf-8", "surrogatepass")).hexdigest()[:12]
    date = _date(vals.get("date"), meta, src, rid, cfg)
    if isinstance(date, Rejection):
        return date
    if removed:
        meta["_control_chars_removed"] = removed
    company, code = cleaned["company"], _norm_code(vals.get("stock_code"))
    if company is None or code is None:
        t_co, t_code = parse_title_company(title)
        company, code = company or t_co, code or t_code
    report_type = _kind_and_broker(title, text, company, cleaned["report_type"], meta)
    return Report(id=rid, title=title, text=text, date=date, company=company, stock_code=code,
                  industry=cleaned["industry"], report_type=report_type, source=src, meta=meta)


def _pick(raw: Raw, mapper: FieldMapper) -> tuple[dict[str, Any], dict[str, Any]]:
    """The first present value of each Report field (by the mapper's plan), and the unmapped fields as meta."""
    used: set[str] = set()
    vals: dict[str, Any] = {}
    for f, keys in mapper.plan(tuple(raw.fields)).items():
        for k in keys:
            used.add(k)
            v = raw.fields[k]
            # a NaN date is a non-finite number like Infinity (a bad date), not an empty cell
            if f not in vals and (_present(v) or (f == "date" and isinstance(v, float))):
                vals[f] = v
    return vals, {k: v for k, v in raw.fields.items() if k not in used}


def _clean_fields(vals: Mapping[str, Any], src: str) -> tuple[dict[str, str | None], int] | Rejection:
    """The text fields cleaned, and how many control characters went; a Rejection for a bad id or a non-text field."""
    rid = vals.get("id")
    if rid is not None and not isinstance(rid, (dict, list, tuple, bool)):
        rid = str(rid).strip()
        if "#" in rid or _LINE_BREAKS.search(rid) or _CONTROL.search(rid):
            return Rejection(source=src, report_id=rid, reason="bad_id",
                             detail=f"{src}: id {rid!r} contains '#' (fincprg uses it in passage ids, <report>#p0) "
                                    "or a tab, line break or control character (qrels are tab-separated); rename it")
    cleaned: dict[str, str | None] = {}
    removed = 0
    for f in ("id", "title", "text", "company", "industry", "report_type", "stock_code"):
        try:
            cleaned[f], n = _text(vals.get(f), multiline=f == "text")
        except NotText as e:
            return Rejection(source=src, report_id=rid if isinstance(rid, str) else None, reason="bad_field",
                             detail=f"{src}: field {f!r} is {e}, not text; give it a string (join paragraph "
                                    "lists into one string) or map the right input field with ingest.fields")
        removed += n
    return cleaned, removed


def _missing(title: str | None, text: str | None, rid: str | None, src: str, cfg: IngestConfig) -> Rejection | None:
    """A Rejection for a report without text (an error unless ``ingest.skip_empty``) or, when required, a title."""
    if text is None:
        detail = (f"{src}: report {rid or ''} has no text; add a text/content/正文 field, map yours with "
                  "ingest.fields (e.g. --set ingest.fields.研报内容=text), or remove the record")
        if not cfg.skip_empty:
            raise InputError(detail + " (or set ingest.skip_empty: true to reject it and go on)")
        return Rejection(source=src, report_id=rid, reason="missing_text", detail=detail)
    if title is None and cfg.require_title:
        return Rejection(source=src, report_id=rid, reason="missing_title",
                         detail=f"{src}: report {rid or ''} has no title; add a title/标题 field or map yours "
                                "with ingest.fields (e.g. --set ingest.fields.研报标题=title), or set "
                                "ingest.require_title: false to keep untitled reports")
    return None


def _date(raw_date: Any, meta: dict[str, Any], src: str, rid: str, cfg: IngestConfig) -> dt.date | None | Rejection:
    """The parsed date; a bad one rejects the report (``ingest.on_bad_date: reject``) or is kept in meta."""
    try:
        return parse_date(raw_date)
    except ValueError as e:
        if cfg.on_bad_date == "reject":
            return Rejection(source=src, report_id=rid, reason="bad_date",
                             detail=f"{src}: {e}; fix the date, or set ingest.on_bad_date: null to keep "
                                    "the report without a date")
        log.debug("%s: %s; kept with date=None (ingest.on_bad_date: null)", src, e)
        meta["_bad_date"] = raw_date if isinstance(raw_date, str) else _short(raw_date)  # JSON has no inf/nan
        return None


def _kind_and_broker(title: str, text: str, company: str | None, report_type: str | None,
                     meta: dict[str, Any]) -> str | None:
    """The report type (from the field, else read from the title, masthead or first lines, noted in meta) and the
    broker, which goes to meta."""
    report_type = _norm_type(report_type)
    masthead = meta.get("masthead") if isinstance(meta.get("masthead"), str) else None
    if report_type is None:  # no type field: the title, masthead or first lines say it (finance.reportkind)
        report_type, how = report_kind(title, masthead=masthead, text=text, company=company)
        if report_type is not None:
            meta["report_type_from"] = how
    if broker_of(meta) is None and (broker := report_broker(text, title, masthead)):
        meta["broker"] = broker  # never a subject (generate, verify)
    return report_type
