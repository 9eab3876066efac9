"""Boilerplate wordings for the full-length report generator (eval/_fullreports.py).

Every piece is drawn from several wordings, brokers and formats, so that a cleaner scored on these reports cannot
pass by learning one string. Brokers, analysts, certificate numbers, phone numbers, addresses and URLs are invented
(as in datasets/sample); nothing here names a real broker or person.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

BROKERS = (  # (name, short name, mail / web domain, city of the head office)
    ("华辰证券", "华辰", "hcsec.com.cn", "上海"), ("东岳证券", "东岳", "dongyuesec.com", "深圳"),
    ("恒信证券", "恒信", "hengxinsec.cn", "北京"), ("启明证券", "启明", "qimingsec.com", "上海"),
    ("云帆证券", "云帆", "yunfansec.com", "杭州"), ("松涛证券", "松涛", "songtaosec.cn", "广州"),
    ("明川证券", "明川", "mingchuan-sec.com", "成都"), ("长庚证券", "长庚", "changgengsec.com.cn", "武汉"),
)
_SURNAMES = "张王李赵刘陈杨黄周吴徐孙马朱胡郭何林罗高郑梁谢宋唐许韩冯邓曹彭曾萧田董潘袁蔡蒋余于杜叶程魏苏吕丁任沈姚卢"
_GIVEN = "明远若溪启航雨桐静怡博文嘉禾一凡晓峰思远子涵振宇欣然浩然佳琪俊杰婉清天翔梓萱宏伟晨曦海波雅琴志强"
_PINYIN = ("zhang", "wang", "li", "zhao", "liu", "chen", "yang", "huang", "zhou", "wu", "xu", "sun", "ma", "zhu")


@dataclass(frozen=True)
class Broker:
    name: str
    short: str
    domain: str
    city: str

    @property
    def institute(self) -> str:
        return f"{self.name}研究所"


def pick_broker(rng: random.Random) -> Broker:
    return Broker(*rng.choice(BROKERS))


def person(rng: random.Random) -> tuple[str, str]:
    """(Chinese name, mail box) of an invented analyst."""
    k = rng.randrange(0, len(_GIVEN) - 1, 2)
    return rng.choice(_SURNAMES) + _GIVEN[k:k + 2], f"{rng.choice(_PINYIN)}{rng.randint(10, 999)}"


def cert(rng: random.Random) -> str:
    return f"S{rng.randint(1, 1599):04d}{rng.randint(510, 524)}{rng.randint(1, 12):02d}{rng.randint(1, 9999):04d}"


def phone(rng: random.Random, city: str) -> str:
    area = {"上海": "021", "北京": "010", "深圳": "0755", "杭州": "0571", "广州": "020", "成都": "028", "武汉": "027"}
    return f"{area[city]}-{rng.randint(5000_0000, 8999_9999)}"


def analysts(rng: random.Random, b: Broker) -> list[str]:
    """Sidebar lines naming one to three analysts with certificate, mail and phone (personal information)."""
    out = []
    for _ in range(rng.randint(1, 3)):
        name, box = person(rng)
        label = rng.choice(("分析师：", "证券分析师：", "研究员：", ""))
        out += [f"{label}{name}", f"{rng.choice(('执业证书编号', 'SAC执业证书编号', '执业编号'))}：{cert(rng)}",
                f"{rng.choice(('邮箱', 'Email', 'E-mail'))}：{box}@{b.domain}"]
        if rng.random() < 0.6:
            out.append(f"{rng.choice(('电话', '联系电话', 'Tel'))}：{phone(rng, b.city)}")
    return out


def _price(rng: random.Random) -> float:
    return round(rng.uniform(6, 260), 2)


def company_sidebar(rng: random.Random, b: Broker, company: str, date: str) -> list[tuple[str, str]]:
    """First-page sidebar of a company report: rating, prices, share data, analysts, related reports."""
    cur = _price(rng)
    rating = rng.choice(("买入", "增持", "推荐", "强烈推荐", "买入-A"))
    keep = rng.choice(("维持", "首次", "上调"))
    shares = round(rng.uniform(2, 80), 2)
    rows = [f"{rng.choice(('投资评级', '评级', '公司评级'))}：{rating}（{keep}）",
            f"{rng.choice(('目标价', '6个月目标价', '目标价格'))}：{cur * rng.uniform(1.1, 1.5):.2f}元",
            f"{rng.choice(('当前股价', '收盘价', '最新收盘价'))}：{cur:.2f}元（{date}）",
            rng.choice(("基本数据", "股票数据", "公司数据")),
            f"总股本（亿股）：{shares:.2f}", f"流通股本（亿股）：{shares * rng.uniform(0.5, 1):.2f}",
            f"总市值（亿元）：{shares * cur:.2f}", f"流通市值（亿元）：{shares * cur * rng.uniform(0.5, 1):.2f}",
            f"52周最高/最低（元）：{cur * rng.uniform(1.05, 1.6):.2f}/{cur * rng.uniform(0.5, 0.95):.2f}",
            f"资产负债率（%）：{rng.uniform(15, 75):.1f}", f"每股净资产（元）：{rng.uniform(2, 40):.2f}"]
    out = [("sidebar", r) for r in rows]
    out += [("sidebar", a) for a in analysts(rng, b)]
    return out + related(rng, company, date)


def industry_sidebar(rng: random.Random, b: Broker, industry: str, date: str) -> list[tuple[str, str]]:
    """First-page sidebar of an industry, weekly or strategy report."""
    rows = [f"{rng.choice(('行业评级', '投资评级', '评级'))}：{rng.choice(('看好', '增持', '推荐', '优于大市', '强于大市'))}"
            f"（{rng.choice(('维持', '首次', '上调'))}）",
            rng.choice(("行业表现", "相对表现", "市场表现")), "%　1M　3M　12M",
            f"相对收益　{rng.uniform(-9, 9):.1f}　{rng.uniform(-15, 15):.1f}　{rng.uniform(-30, 30):.1f}",
            f"绝对收益　{rng.uniform(-9, 9):.1f}　{rng.uniform(-15, 15):.1f}　{rng.uniform(-30, 30):.1f}",
            f"行业指数（{date}）：{rng.uniform(800, 9000):.2f}"]
    out = [("sidebar", r) for r in rows]
    out += [("sidebar", a) for a in analysts(rng, b)]
    return out + related(rng, f"{industry}行业", date)


def related(rng: random.Random, subject: str, date: str) -> list[tuple[str, str]]:
    """相关报告: two to four earlier titles with dates."""
    views = ("业绩稳健增长，龙头地位稳固", "需求边际改善，盈利拐点渐近", "季度业绩超预期", "新品放量在即",
             "景气延续，关注结构性机会", "估值处于历史低位", "政策催化不断", "产能释放驱动成长")
    year = int(date[:4])
    out = [("sidebar", rng.choice(("相关报告", "相关研究", "近期报告")))]
    for i in range(rng.randint(2, 4)):
        d = f"{year - (1 if i > 1 else 0)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        out.append(("sidebar", f"{i + 1}.《{subject}：{rng.choice(views)}》{d}"))
    return out


@dataclass(frozen=True)
class Furniture:
    """Running header and footer of one report (what repeats on every page)."""

    header_left: str
    header_right: str
    footer_text: str
    page_format: str      # str.format with k, n
    number_on_top: bool   # the page number sits in the header line instead of the footer


def furniture(rng: random.Random, b: Broker, kind_name: str, subject: str) -> Furniture:
    left = rng.choice((f"{b.name}·{kind_name}", f"{kind_name}｜{subject}", f"{subject}·{kind_name}",
                       f"{b.short}研究·{kind_name}", "证券研究报告", f"{b.institute}"))
    right = rng.choice(("请务必阅读正文后的免责声明", "请务必阅读正文之后的免责条款部分", "敬请参阅报告结尾处的免责声明",
                        "请务必阅读最后一页的重要声明", f"{subject}", "请仔细阅读本报告末页声明"))
    foot = rng.choice(("请务必阅读正文之后的信息披露和免责申明", f"本报告版权属于{b.name}股份有限公司",
                       f"{b.institute}", "敬请参阅最后一页特别声明", "请务必阅读正文后的重要声明部分",
                       f"{b.name}股份有限公司 研究所"))
    fmt = rng.choice(("{k}/{n}", "第{k}页 共{n}页", "- {k} -", "{k}", "第 {k} 页 / 共 {n} 页", "{k} / {n}", "P{k}"))
    return Furniture(left, right, foot, fmt, rng.random() < 0.25)


CHART_TOPICS = ("营业收入及同比增速", "归母净利润及同比增速", "毛利率与净利率变化", "分业务收入结构", "研发投入及占比",
                "期间费用率变化", "产能及产量情况", "市场份额变化", "月度销量及同比", "指数相对沪深300走势",
                "估值水平（PE-TTM）", "单季度营收及增速", "主要产品价格走势", "经营性现金流净额", "存货及周转天数")


def caption(rng: random.Random, k: int, subject: str, table: bool = False) -> str:
    """图表k：… in one of several numbering styles (the 图表目录 lists it as written)."""
    topic = "盈利预测与估值" if table else rng.choice(CHART_TOPICS)
    style = rng.choice(("图表{k}：", "图表{k}：", "图{k}：", "图表 {k}：", "图 {k}　") if not table else
                       ("图表{k}：", "表{k}：", "图表 {k}：", "表 {k}　"))
    return style.format(k=k) + (f"{subject}{topic}" if rng.random() < 0.7 else topic)


def source(rng: random.Random, b: Broker) -> str:
    lead = rng.choice(("资料来源：", "数据来源：", "资料来源：", "来源："))
    data = rng.choice(("Wind", "公司公告", "iFinD", "公司年报", "国家统计局", "Wind，公司公告", "Choice"))
    tail = rng.choice((b.institute, f"{b.institute}整理", f"{b.short}研究", f"{b.institute}测算"))
    return f"{lead}{data}，{tail}"


def forecast_table(rng: random.Random, year: int) -> list[list[str]]:
    """A company's 盈利预测 grid: 营业收入/净利润/EPS/PE by year (two actual, three estimated)."""
    years = [f"{year - 2 + i}{'A' if i < 2 else 'E'}" for i in range(5)]
    rev, margin = rng.uniform(800, 90000), rng.uniform(0.04, 0.25)
    rows: list[list[str]] = [[rng.choice(("指标", "会计年度", "主要财务指标", "单位：百万元")), *years]]
    revs = [rev * (1 + rng.uniform(-0.05, 0.3)) ** i for i in range(5)]
    profits = [r * margin * rng.uniform(0.85, 1.15) for r in revs]
    rows.append(["营业收入（百万元）", *[f"{v:,.0f}" for v in revs]])
    rows.append(["增长率（%）", *[f"{rng.uniform(-10, 40):.1f}" for _ in revs]])
    rows.append(["归母净利润（百万元）", *[f"{v:,.0f}" for v in profits]])
    rows.append(["增长率（%）", *[f"{rng.uniform(-10, 45):.1f}" for _ in revs]])
    shares = profits[0] / rng.uniform(0.3, 3)  # millions of shares, so that EPS lands in 0.3-3 yuan
    eps = [p / shares for p in profits]
    price = eps[0] * rng.uniform(10, 45)
    rows.append(["EPS（元）", *[f"{e:.2f}" for e in eps]])
    rows.append([rng.choice(("P/E（倍）", "PE（倍）", "市盈率")), *[f"{price / e:.1f}" if e > 0 else "-" for e in eps]])
    if rng.random() < 0.6:
        rows.append(["ROE（%）", *[f"{rng.uniform(3, 28):.1f}" for _ in revs]])
    return rows


def peers_table(rng: random.Random, peers: list[tuple[str, str]], year: int) -> list[list[str]]:
    """An industry report's 重点公司估值表: code, name, EPS and PE by year, rating."""
    head = ["代码", "公司", f"EPS {year - 1}A", f"EPS {year}E", f"EPS {year + 1}E", f"PE {year}E", "评级"]
    rows = [head]
    for code, name in peers:
        e = rng.uniform(0.1, 5)
        rows.append([code, name, f"{e:.2f}", f"{e * rng.uniform(0.9, 1.4):.2f}", f"{e * rng.uniform(1, 1.8):.2f}",
                     f"{rng.uniform(8, 60):.1f}", rng.choice(("买入", "增持", "推荐", "未评级"))])
    return rows
