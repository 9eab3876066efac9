"""Body texts for the full-length report generator: pools of paragraphs per company and per industry.

Sources: ``cfb`` reads CFBenchmark report bodies and sector news (Apache-2.0) from ../shared/data (never copied into
the repository); ``sample`` reads the team's own datasets/sample texts, so tests run without shared data. A body
sentence that carries boilerplate (a caption, a source line, an analyst's certificate, legal wording) is dropped
here, so the truth's body never holds text a cleaner should remove.
"""
from __future__ import annotations

import csv
import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
SAMPLE = ROOT / "datasets" / "sample" / "reports.jsonl"

# Boilerplate cues a body sentence must not carry (what the generator adds itself, so truth stays exact).
_BOILER = re.compile(r"执业证书|证书编号|资料来源|数据来源|免责|声明|请务必|敬请|评级说明|分析师|研究员|研究所|@|邮箱|电话|"
                     r"^\s*(?:图表?|表)\s*\d|本报告|版权|www\.|http|证券研究报告|投资评级|目录|投资决策|自行承担|不构成|仅供|"
                     r"独立判断|投资需谨慎")
_SENT_END = re.compile(r"(?<=[。！？!?])")
_SPACE = re.compile(r"\s+")
# Stock short names that are everyday words: a body saying 机器人 is rarely about the listed 机器人.
_GENERIC_NAMES = frozenset({"机器人", "驱动力", "太阳能", "线上线下", "农产品", "连云港", "国新能源", "新产业", "天然气",
                            "大众交通", "中国中免", "东方电气", "海南发展", "国际医学"})
# Tushare industry (stock_basic.csv) -> the Shenwan level-1 name the sector news uses, for industry pools.
TUSHARE_TO_SW = {
    "半导体": "电子", "元器件": "电子", "电器仪表": "电子", "白酒": "食品饮料", "食品": "食品饮料", "啤酒": "食品饮料",
    "乳制品": "食品饮料", "软饮料": "食品饮料", "汽车整车": "汽车", "汽车配件": "汽车", "电气设备": "电气设备",
    "新型电力": "公用事业", "水力发电": "公用事业", "火力发电": "公用事业", "供气供热": "公用事业", "银行": "银行",
    "证券": "非银金融", "保险": "非银金融", "多元金融": "非银金融", "软件服务": "计算机", "互联网": "计算机",
    "IT设备": "计算机", "通信设备": "通信", "电信运营": "通信", "家用电器": "家用电器", "化学制药": "医药生物",
    "中成药": "医药生物", "生物制药": "医药生物", "医疗保健": "医药生物", "医药商业": "医药生物", "化工原料": "化工",
    "农药化肥": "化工", "塑料": "化工", "染料涂料": "化工", "专用机械": "机械设备", "工程机械": "机械设备",
    "机械基件": "机械设备", "建筑工程": "建筑装饰", "装修装饰": "建筑装饰", "小金属": "有色金属", "铝": "有色金属",
    "铜": "有色金属", "黄金": "有色金属", "仓储物流": "交通运输", "港口": "交通运输", "机场": "交通运输",
    "空运": "交通运输", "影视音像": "传媒", "出版业": "传媒", "农业综合": "农林牧渔", "饲料": "农林牧渔",
    "全国地产": "房地产", "区域地产": "房地产", "煤炭开采": "采掘", "石油开采": "采掘", "普钢": "钢铁", "特种钢": "钢铁",
    "水泥": "建筑材料", "玻璃": "建筑材料", "服饰": "纺织服装", "纺织": "纺织服装",
}


@dataclass
class Pools:
    """Paragraph lists (each a list of sentences) grouped by company and by industry, plus company metadata."""

    company_bodies: dict[str, list[list[list[str]]]] = field(default_factory=lambda: defaultdict(list))
    company_meta: dict[str, tuple[str, str]] = field(default_factory=dict)   # name -> (code, industry)
    industry_bodies: dict[str, list[list[list[str]]]] = field(default_factory=lambda: defaultdict(list))
    industry_news: dict[str, list[list[list[str]]]] = field(default_factory=lambda: defaultdict(list))  # no issuer
    loose: list[list[list[str]]] = field(default_factory=list)               # bodies with no known subject
    # how many reports of the draw so far used each body (by id()): a draw uses the fewest-used first, since a
    # corpus rarely prints one paragraph in several reports, and a body in five of them made each of its passages
    # one of five look-alikes that the round trip could not tell apart
    uses: Counter[int] = field(default_factory=Counter)


def clean_spaces(text: str) -> str:
    """Drop spaces next to CJK characters (PDF-extracted bodies are full of them), keep one between Latin words."""
    text = _SPACE.sub(" ", text)
    return re.sub(r" (?=[^\x00-\x7f])|(?<=[^\x00-\x7f]) ", "", text).strip()


# characters STSong-Light has no glyph for: the PDF form would print a sentence without them, so the truth
# (which must match the PDF text) leaves them out too (「证券时报·券商中国」, 「朴欣汀®」)
_NO_GLYPH = str.maketrans("", "", "·®™•©")


def sentences(paragraph: str) -> list[str]:
    """Split at 。！？, merging fragments under 8 characters into the next sentence; drop boilerplate-bearing ones."""
    out: list[str] = []
    carry = ""
    for s in _SENT_END.split(clean_spaces(paragraph.translate(_NO_GLYPH))):
        s = carry + s.strip()
        if len(s) < 8:
            carry = s
            continue
        carry = ""
        if _BOILER.search(s) or not re.search(r"[\u4e00-\u9fff]", s):
            continue
        digits = sum(ch.isdigit() for ch in s)
        if digits > 0.4 * len(s):  # a number dump (a table pasted as text) is not prose a cleaner must keep
            continue
        out.append(s)
    if carry and out:
        out[-1] += carry
    return out


def body(text: str) -> list[list[str]]:
    """A body text as paragraphs of sentences; full-width double spaces and line breaks start paragraphs."""
    paras = re.split(r"\n|\u3000{2,}", text)
    return [ss for p in paras if (ss := sentences(p))]


def load_sample() -> Pools:
    pools = Pools()
    for line in SAMPLE.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        paras = body(row["text"])
        if row.get("company"):
            pools.company_bodies[row["company"]].append(paras)
            pools.company_meta[row["company"]] = (row["stock_code"], row["industry"])
        pools.industry_bodies[row["industry"]].append(paras)
    return pools


def _stock_names() -> dict[str, tuple[str, str]]:
    names = {}
    with open(SHARED / "taxonomy" / "stock_basic.csv", encoding="utf-8") as f:
        for r in csv.DictReader(f):
            name = r["name"].replace(" ", "")
            if len(name) >= 3 and not name.startswith(("ST", "*ST")):
                names[name] = (r["symbol"], r["industry"])
    # stock names that are also everyday words (机器人, 太阳能, 农产品…) would group unrelated bodies
    common = SHARED / "lexicons" / "THUOCL_caijing.txt"
    if common.exists():
        words = {ln.split("\t")[0].strip() for ln in common.read_text(encoding="utf-8").splitlines()}
        names = {n: v for n, v in names.items() if n not in words}
    return names


# a name cited as a data source or a counterpart (「据卓创资讯数据」, 「采用华大九天」), an investee or a new holder
# (「出售隆基绿能部分股份」, 「引入比亚迪作为战略投资者」) or a comparable (「选取老板电器」, 「高于老板电器」) does not
# make a body its own, nor does a shell or a parent (「通过大连热电进行重组」, 「成为大连热电控股股东」, 「控股子公司
# 包钢股份」): filed under that name, the body's 公司 would say another issuer's figures of it
_CITED = re.compile(r"(?:据|根据|来源|来自|参考|采用|引用|援引|与|和|向|及|、|出售|减持|增持|持有|投资|入股|参股|引入|"
                    r"选取|高于|低于|超过|相较|对标|比如|例如|如|客户|供应|通过|成为|公司|收购|并购|[（(])$")


BARE_GONGSI = re.compile(r"(?:^|[，。；：、\s])(?:公司|该公司|本公司)(?!债|治理)")  # 公司 of a company it does not name
OPENING = 150  # characters: where a company report's body names its issuer (「事件：X发布…」, 「X（code）…」)


def issuer_hits(text: str, pattern: re.Pattern[str]) -> dict[str, int]:
    """How often ``text`` names each listed company as what it speaks of (not as a source or a counterpart)."""
    hits: dict[str, int] = defaultdict(int)
    for m in pattern.finditer(text):
        if not _CITED.search(text[max(0, m.start() - 2):m.start()]):
            hits[m.group()] += 1
    return hits


def issuer_of(text: str, pattern: re.Pattern[str]) -> str | None:
    """The listed company a body is the report of, or None: the one it names most as what it speaks of, at least
    twice, and, where the body says 公司 (a company report's), named so in its opening too: one named most but only
    later is a customer, partner or target (「公司公布2020年业绩…宁德时代订单14.4亿元」), and filed under it the body
    was printed under that name, its 公司's figures read as the customer's."""
    hits = issuer_hits(text, pattern)
    if not hits:
        return None
    name = max(sorted(hits), key=lambda n: hits[n])
    if hits[name] < 2 or name in _GENERIC_NAMES:  # one passing mention does not make a body the company's
        return None
    if BARE_GONGSI.search(text) and name not in issuer_hits(text[:OPENING], pattern):
        return None
    return name


def _seen(paras: list[list[str]], seen: frozenset[str]) -> bool:
    return any(s in seen for p in paras for s in p)


def load_cfb(part: str = "all", seen: frozenset[str] = frozenset()) -> Pools:
    """CFBenchmark bodies grouped by the listed company they name most, and sector news by Shenwan industry.

    ``part`` keeps the CFBenchmark bodies and sector news of one part (``held-out`` or ``learn``, eval/_cfb_split.py);
    ``seen`` drops every body or news item with a sentence in it (the body sentences of earlier draws), so a reading
    can draw reports no developer looked at."""
    from eval._cfb_split import part_of

    names = _stock_names()
    pattern = re.compile("|".join(sorted(map(re.escape, names), key=len, reverse=True)))
    pools = Pools()
    with open(SHARED / "reports" / "cfbenchmark_reports.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            text = row["text"]
            paras = body(text)
            if not paras or (part != "all" and part_of(row["id"]) != part) or _seen(paras, seen):
                continue
            name = issuer_of(text, pattern)
            if name is None:
                pools.loose.append(paras)
                continue
            code, tushare = names[name]
            sw = TUSHARE_TO_SW.get(tushare, tushare)
            pools.company_bodies[name].append(paras)
            pools.company_meta[name] = (code, sw)
            pools.industry_bodies[sw].append(paras)
    with open(SHARED / "news" / "cfbenchmark_sector.jsonl", encoding="utf-8") as f:
        for i, line in enumerate(f):
            row = json.loads(line)
            # news is split like the bodies (by its line), so a developer's draws and a reading share no item
            if part != "all" and part_of(f"cfbenchmark_sector:{i}") != part:
                continue
            m = re.search(r"一级分类为：(\S+?)。", row["instruction"])
            if m and (paras := body(row["input"])) and not _seen(paras, seen):
                pools.industry_bodies[m.group(1)].append(paras)
                pools.industry_news[m.group(1)].append(paras)
    return pools


def shared_available() -> bool:
    return (SHARED / "reports" / "cfbenchmark_reports.jsonl").exists()
