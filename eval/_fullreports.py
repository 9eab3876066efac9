"""Generate full-length sell-side research reports that know which text is body and which is boilerplate.

Each report is laid out once (eval/_fullreports_layout.py) and written in three forms: ``pdf/<id>.pdf`` (reportlab,
CID font STSong-Light, a real text layer, ruled tables, a sidebar column on page 1), ``flat/<id>.txt`` (what a
PDF-to-text tool gives with no line breaks: running headers and page numbers inline) and ``wrapped/<id>.txt`` (one
line per PDF line, a blank line at each page break), plus ``truth.jsonl``: the body sentences that must survive
cleaning and every boilerplate segment with its category.

Run: ``python -m eval._fullreports --out DIR --n 60 [--seed S] [--source cfb|sample]``. ``cfb`` reads CFBenchmark
bodies and sector news from ../shared/data (Apache-2.0); ``sample`` uses datasets/sample (the team's own texts).
"""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from eval import _fullreports_bodies as B
from eval import _fullreports_layout as L
from eval import _fullreports_text as T
from eval._fullreports_pages import Doc, paginate

NEUTRAL = ("title", "heading")  # neither body nor boilerplate: a cleaner may keep or drop them
CATEGORIES = ("header", "footer", "page_number", "sidebar", "toc", "table", "caption", "source", "disclaimer",
              "rating_def", "contact")
MIN_PAGES = 10
_TYPES = {  # report_type -> (kind, names on the cover)
    "company": ("company", ("公司深度报告", "公司点评报告", "首次覆盖报告", "公司研究", "公司动态研究")),
    "industry_weekly": ("industry", ("行业周报",)),
    "industry_deep": ("industry", ("行业深度报告", "行业专题报告")),
    "industry_update": ("industry", ("行业动态报告", "行业点评报告")),
    "strategy": ("industry", ("策略周报", "策略深度报告")),
}
_FALLBACK_VIEWS = ("景气向上，关注龙头", "业绩稳健，估值修复可期", "需求回暖，结构性机会显现", "成本改善，盈利能力提升")
_FICTIONAL_PEERS = (("688321", "星河科技"), ("600873", "云岭酒业"), ("601577", "江城银行"), ("300750", "锂源电池"),
                    ("002920", "智驰科技"), ("688185", "康宁生物"))


@dataclass
class Meta:
    id: str
    report_type: str
    company: str | None
    code: str | None
    industry: str


def _chars(bodies: list[list[list[str]]]) -> int:
    return sum(len(s) for b in bodies for p in b for s in p)


def plan(pools: B.Pools, n: int, seed: int) -> list[Meta]:
    """At least half company reports, the rest industry/weekly/strategy reports.

    A company has few bodies of its own (CFBenchmark: 1-6), so its report goes on with bodies of its industry;
    companies and industries are taken where the industry holds enough text (15k characters) that no report
    needs text from another industry (the sample corpus is too small for that and falls back to all).
    """
    rng = random.Random(f"plan:{seed}")
    rich = {i for i, bs in pools.industry_bodies.items() if _chars(bs) >= 15000} or set(pools.industry_bodies)
    by_size = sorted((c for c in pools.company_bodies if pools.company_meta[c][1] in rich),
                     key=lambda c: (-_chars(pools.company_bodies[c]), c)) or sorted(pools.company_bodies)
    companies = by_size[:max(40, n)]
    rng.shuffle(companies)
    industries = sorted(rich, key=lambda i: (-_chars(pools.industry_bodies[i]), i))[:15]
    n_company = (n + 1) // 2
    out = []
    for k in range(n):
        if k < n_company:
            c = companies[k % len(companies)]
            code, ind = pools.company_meta[c]
            out.append(Meta(f"fr{k + 1:03d}", "company", c, code, ind))
        else:
            kind = ("industry_weekly", "industry_deep", "industry_update", "strategy")[(k - n_company) % 4]
            out.append(Meta(f"fr{k + 1:03d}", kind, None, None, industries[(k - n_company) % len(industries)]))
    return out


def gather(rng: random.Random, pools: B.Pools, meta: Meta,
           target: int) -> tuple[list[list[str]], set[str], int, list[int]]:
    """Paragraphs for one report: its company's bodies, then its industry's, then any; each sentence once. Also
    the sentences that are padding, off the report's subject: another company's or industry's text in a company
    report, another industry's in an industry report (a CFBenchmark company has only a few bodies), and how many
    of the paragraphs are on the report's subject, and the bodies it took (their id()).

    A company report is padded with industry news, never with another company's report body: such a body says
    公司 of its own issuer, which no real report on this company would print under its title."""
    own = list(pools.company_bodies.get(meta.company or "", []))
    issuer = {id(b): (c, pools.company_meta[c][0]) for c, bs in pools.company_bodies.items() for b in bs}
    if meta.report_type == "company" and pools.industry_news:  # (the sample corpus has no news)
        ind = list(pools.industry_news.get(meta.industry, []))
        rest = [b for i, bs in sorted(pools.industry_news.items()) if i != meta.industry for b in bs]
    else:
        # a body about an unnamed 公司 (a news item too: 「事件具体内容：公司以…为宗旨」) has no place in an industry
        # report, which heads each company's section with its name: after another company's section its 公司 would
        # read as that company; a company's own body is printed under its name (_named)
        fits = lambda b: id(b) in issuer or not _unnamed(b)  # noqa: E731
        ind = [b for b in pools.industry_bodies.get(meta.industry, []) if b not in own and fits(b)]
        rest = [b for bs in pools.industry_bodies.values() for b in bs if fits(b)] + \
            [b for b in pools.loose if not _unnamed(b)]
    if meta.report_type == "strategy":
        own, ind = [], []
    for group in (own, ind, rest):
        rng.shuffle(group)
        group.sort(key=lambda b: pools.uses[id(b)])  # (stable: the fewest-used first, at random among them)
    seen: set[str] = set()
    paras: list[list[str]] = []
    off: set[str] = set()
    total = 0
    on_topic = len(own) if meta.report_type == "company" else len(own) + len(ind)
    n_on = 0
    used: list[int] = []
    for i, b in enumerate(own + ind + rest):
        used.append(id(b))
        if meta.report_type != "company" and id(b) in issuer:
            b = _named(b, *issuer[id(b)])
        for para in b:
            fresh = [s for s in para if s not in seen]
            seen.update(fresh)
            if fresh:
                paras.append(fresh)
                total += sum(len(s) for s in fresh)
                if i >= on_topic:
                    off.update(fresh)
                else:
                    n_on += 1
        if total >= target:
            break
    return paras, off, n_on, used




def _unnamed(body: list[list[str]]) -> bool:
    """Whether a body speaks of a company it never names (「公司2020年半年报…」)."""
    return any(B.BARE_GONGSI.search(s) for p in body for s in p)


def _named(body: list[list[str]], company: str, code: str) -> list[list[str]]:
    """A company's report body as an industry report prints it: under the company's name (「重点公司：X（code）」),
    since such a report speaks of many companies and never says 公司 of one it has not named."""
    first = body[0][0]
    if company in first:
        return body
    return [[f"{company}（{code}）：{first}", *body[0][1:]], *body[1:]]


# a year stated as past (「2021年前三季度实现营收」, 「21Q3」, 「2022H1」), not a forecast (2023E, 预计2023年)
_YEAR = re.compile(r"(?<!\d)(20[0-3]\d)(?=年|Q[1-4]|H[12]|[上下]半年)|(?<![\dA-Za-z])(\d{2})(?=Q[1-4]|H[12])|"
                   r"(?<=[1-4]Q)(\d{2})(?!\d)")
_FORECAST_BEFORE = re.compile(r"(?:预计|预测|预期|有望|将|计划|目标|规划|力争|到|至|展望)[^，。；]{0,10}$|"
                              r"\d{2}年?[-—~～至到]$")  # the later end of a range (2022-2024年) is a forecast

_FORECAST_AFTER = re.compile(r"预计|预测|预期|有望|将|计划|目标|规划|力争|或将|可望|展望|估算|测算|或达|假设|空间|规模|^年?前|E\b")


def report_year(paras: list[list[str]], fallback: int) -> int:
    """The year a report is dated: the latest year its own text states as past. A report is written after the
    results it reports, so no actual in it falls after its date (a random date made actuals read as forecasts)."""
    years = []
    for s in (s for p in paras for s in p):
        for m in _YEAR.finditer(s):
            y = int(m.group(1) or "20" + (m.group(2) or m.group(3)))
            after = s[m.end():m.end() + 6]
            clause = re.split(r"[，,。；;！？]", s[m.end():], maxsplit=1)[0]
            if re.match(r"(?:年)?(?:E|e|年?[-—~至到]|年度?目标)", after) or _FORECAST_BEFORE.search(s[:m.start()]) \
                    or _FORECAST_AFTER.search(clause):
                continue
            years.append(y)
    # the latest year stated as past at least twice: one stray mention (a plan's year) does not date a report
    stated = [y for y in set(years) if years.count(y) >= 2 and 2010 <= y <= 2030]
    return max(stated) if stated else fallback


_VIEW_CUE = re.compile(r"增长|提升|改善|超预期|符合预期|稳健|回暖|放量|景气|龙头|拐点|承压|加速|修复|向好|高增|复苏|受益|优势")
_NOT_VIEW = re.compile(r"\d{1,2}月\d{1,2}日|讯|发布|公告|报告期|记者|他|她|我们|据|%|^\d|[“”「」《》（）()]|"
                       r"^(?:同比|环比|其中|同时|并|而|但|且|如果|仍|也|从|由于|随着|主要|预计|则|即|这|该|此|对|将|已|因|为)")
_HEADINGS = ("经营情况分析", "业务结构拆分", "行业景气度跟踪", "竞争格局与市场份额", "盈利能力分析", "估值与投资建议",
             "产能与供给", "需求端跟踪", "重点公司动态", "市场回顾")


def _view(rng: random.Random, paras: list[list[str]], no_company: bool, fallback: tuple[str, ...]) -> str:
    """A clause that reads like an analyst's view (增长/改善/景气…) from the first sentences, else a stock phrase."""
    found = []
    for s in (s for para in paras for s in para):
        for clause in re.split(r"[，。；：！？,;:]", s):
            if 6 <= len(clause) <= 20 and _VIEW_CUE.search(clause) and not _NOT_VIEW.search(clause) and not (
                    no_company and "公司" in clause):
                found.append(clause)
        if len(found) >= 5:
            break
    return rng.choice(found) if found else rng.choice(fallback)


def _sections(rng: random.Random, paras: list[list[str]], rtype: str) -> list[tuple[str, list[list[str]]]]:
    """Group paragraphs into numbered sections; the first (on the cover) is the key-points section."""
    lead = {"company": ("投资要点", "核心观点", "事件点评"), "industry_weekly": ("本周观点", "核心观点"),
            "strategy": ("核心观点", "投资要点")}.get(rtype, ("投资要点", "核心观点", "行业观点"))
    style = rng.choice(("{n}. ", "{n} ", "{c}、", "（{c}）"))
    cn = "一二三四五六七八九十"
    cover, size = 0, 0
    while cover < len(paras) - 1 and size < 650:  # the key points fill about page 1's narrow column
        size += sum(len(s) for s in paras[cover])
        cover += 1
    out = [(rng.choice(lead), paras[:max(1, cover)])]
    cur: list[list[str]] = []
    size, goal = 0, rng.randint(1400, 2400)
    for para in paras[cover:]:
        cur.append(para)
        size += sum(len(s) for s in para)
        if size >= goal:
            out.append(("", cur))
            cur, size, goal = [], 0, rng.randint(1400, 2400)
    if cur:
        out.append(("", cur))
    for i in range(1, len(out)):
        head = _view(rng, out[i][1], rtype != "company", _HEADINGS)
        num = style.format(n=i, c=cn[(i - 1) % 10] if i <= 10 else str(i))
        out[i] = (num + head, out[i][1])
    return out


def _title(rng: random.Random, meta: Meta, kind_name: str, view: str, date: str) -> str:
    if meta.report_type == "company":
        return rng.choice((f"{meta.company}（{meta.code}）：{view}", f"{meta.company}（{meta.code}）{kind_name}：{view}"))
    if meta.report_type == "strategy":
        return rng.choice((f"A股{kind_name}：{view}", f"{kind_name}：{view}"))
    if meta.report_type == "industry_weekly":
        return rng.choice((f"{meta.industry}{kind_name}：{view}", f"{meta.industry}{kind_name}（{date[:7]}）：{view}"))
    return f"{meta.industry}{kind_name}：{view}"


def _peers(pools: B.Pools, meta: Meta, rng: random.Random) -> list[tuple[str, str]]:
    same = sorted((code, c) for c, (code, ind) in pools.company_meta.items() if ind == meta.industry)
    if len(same) < 4:
        same += list(_FICTIONAL_PEERS)
    return rng.sample(same, min(len(same), rng.randint(4, 7)))


def build_doc(rng: random.Random, pools: B.Pools, meta: Meta, target: int) -> tuple[Doc, dict[str, Any]]:
    """One report's content and its metadata for the truth."""
    kind, names = _TYPES[meta.report_type]
    kind_name = rng.choice(names)
    broker = T.pick_broker(rng)
    fallback = rng.randint(2019, 2024)
    paras, off_topic, n_on, used = gather(rng, pools, meta, target)
    year = report_year(paras[:n_on] or paras, fallback)
    date = f"{year}-{rng.randint(10, 12):02d}-{rng.randint(1, 28):02d}"
    view = _view(rng, paras, kind != "company", _FALLBACK_VIEWS)
    title = _title(rng, meta, kind_name, view, date)
    subject = meta.company if kind == "company" else ("A股" if meta.report_type == "strategy" else meta.industry)
    side = (T.company_sidebar(rng, broker, meta.company or "", date) if kind == "company"
            else T.industry_sidebar(rng, broker, meta.industry, date))
    label = rng.choice(("报告日期：", "发布日期：", "日期：", ""))
    side.insert(0, ("sidebar", f"{label}{date}"))
    def grid() -> list[list[str]]:
        return T.forecast_table(rng, year) if kind == "company" else T.peers_table(rng, _peers(pools, meta, rng), year)
    tables = [grid() for _ in range(1 + (rng.random() < 0.5))]
    tag = rng.choice((f"证券研究报告｜{kind_name}", f"证券研究报告·{kind_name}·{meta.industry}", f"{broker.name}｜{kind_name}",
                      f"{kind_name}　{date}"))
    doc = Doc(title=title, tag=tag, sections=_sections(rng, paras, meta.report_type), sidebar=side,
              furniture=T.furniture(rng, broker, kind_name, subject or ""), broker=broker, subject=subject or "",
              tables=tables, toc=rng.random() < 0.8, sidebar_first=rng.random() < 0.5, year=year)
    info = {"id": meta.id, "kind": kind, "report_type": meta.report_type, "title": title, "broker": broker.name,
            "date": date, "company": meta.company, "stock_code": meta.code, "industry": meta.industry,
            "off_topic_sentences": sorted(off_topic), "_used": used}
    return doc, info


def _nonspace(s: str) -> int:
    return sum(1 for c in s if not c.isspace())


def truth_of(info: dict[str, Any], doc: Doc, pages: list[L.Page]) -> dict[str, Any]:
    """Body sentences, boilerplate segments (category, text) and neutral segments, with character counts."""
    body = [s for _, paras in doc.sections for para in paras for s in para]
    boiler = [{"category": it.cat, "text": it.text} for p in pages for it in p.items
              if it.cat not in ("body", *NEUTRAL)]
    neutral = [{"category": it.cat, "text": it.text} for p in pages for it in p.items if it.cat in NEUTRAL]
    chars: dict[str, int] = {c: 0 for c in CATEGORIES}
    for seg in boiler:
        chars[seg["category"]] += _nonspace(seg["text"])
    body_chars = sum(_nonspace(s) for s in body)
    all_chars = sum(_nonspace(it.text) for p in pages for it in p.items)
    return {**info, "pages": len(pages), "body_sentences": body, "boilerplate": boiler, "neutral": neutral,
            "chars": {"all": all_chars, "body": body_chars, "boilerplate": sum(chars.values()),
                      "neutral": sum(_nonspace(s["text"]) for s in neutral), "by_category": chars}}


def make_report(pools: B.Pools, meta: Meta, seed: int) -> tuple[list[L.Page], dict[str, Any], Doc]:
    """Lay out one report; add body until it fills at least MIN_PAGES pages."""
    target = 12000
    while True:
        rng = random.Random(f"{seed}:{meta.id}:{target}")
        doc, info = build_doc(rng, pools, meta, target)
        pages = paginate(doc, rng)
        if len(pages) >= MIN_PAGES or target > 60000:
            pools.uses.update(info.pop("_used"))
            return pages, truth_of(info, doc, pages), doc
        target += 3000


def write_report(out: Path, pages: list[L.Page], truth: dict[str, Any]) -> None:
    rid = truth["id"]
    L.write_pdf(pages, str(out / "pdf" / f"{rid}.pdf"), truth["title"])
    (out / "flat" / f"{rid}.txt").write_text(L.flat_text(pages), encoding="utf-8")
    (out / "wrapped" / f"{rid}.txt").write_text(L.wrapped_text(pages), encoding="utf-8")


def load_pools(source: str, part: str = "all", exclude: tuple[Path, ...] = ()) -> B.Pools:
    if source == "sample":
        return B.load_sample()
    if not B.shared_available():
        raise SystemExit(f"--source cfb needs {B.SHARED} (CFBenchmark bodies); it is absent here: "
                         "use --source sample, or run where ../shared/data exists")
    seen = frozenset(s for p in exclude for line in p.read_text("utf-8").splitlines() if line.strip()
                     for s in json.loads(line)["body_sentences"])
    return B.load_cfb(part, seen)


def generate(out: Path, n: int, seed: int = 0, source: str = "sample", *, part: str = "all",
             exclude: tuple[Path, ...] = ()) -> list[dict[str, Any]]:
    """Write ``n`` reports in three forms and OUT/truth.jsonl; return the truth records."""
    pools = load_pools(source, part, exclude)
    for sub in ("pdf", "flat", "wrapped"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    truths = []
    for meta in plan(pools, n, seed):
        pages, truth, _ = make_report(pools, meta, seed)
        write_report(out, pages, truth)
        truths.append(truth)
    with open(out / "truth.jsonl", "w", encoding="utf-8") as f:
        for t in truths:
            f.write(json.dumps(t, ensure_ascii=False) + "\n")
    return truths


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--source", choices=("cfb", "sample"), default="cfb")
    ap.add_argument("--part", choices=("all", "held-out", "learn"), default="all",
                    help="cfb: only the bodies of this part of eval/_cfb_split.py")
    ap.add_argument("--exclude", type=Path, nargs="*", default=[],
                    help="truth.jsonl files of earlier draws: no body or news item with a sentence in them is used")
    a = ap.parse_args(argv)
    truths = generate(a.out, a.n, a.seed, a.source, part=a.part, exclude=tuple(a.exclude))
    pages = [t["pages"] for t in truths]
    share = sum(t["chars"]["boilerplate"] for t in truths) / max(1, sum(t["chars"]["all"] for t in truths))
    print(f"{len(truths)} reports ({sum(t['kind'] == 'company' for t in truths)} company) in {a.out}: "
          f"{min(pages)}-{max(pages)} pages, boilerplate {100 * share:.1f}% of characters")
    return 0


if __name__ == "__main__":
    sys.exit(main())
