"""A sell-side report PDF built in code with reportlab, and the truth about it (which text is body).

The layout follows a Chinese broker's report: a running header (company, report type, a rule) and footer
(请务必阅读…免责声明, page k/n) on every page; on the first page a large title, a narrow right-hand sidebar
(analyst, SAC number, rating, price and share data, 相关报告); a table of contents with dot leaders; body
paragraphs that wrap and run across page breaks; a ruled table and a chart with 图表N captions and
资料来源 lines; and analyst statement, rating definitions and disclaimer blocks on the last pages.
Also a scanned (image-only) PDF and an encrypted one. Used by tests/unit/test_ingest_pdf.py and
eval/bench_pdf_parsers.py.
"""
from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path

W, H = 595.27, 841.89  # A4 in points
FONT = "STSong-Light"
BODY_SIZE, LEADING = 10.5, 18.0
LEFT, RIGHT = 50.0, W - 50.0
TOP_BODY, BOTTOM_BODY = 80.0, H - 70.0  # body runs between these (distance from the top)

_SENTENCES = (
    "{c}{y}年前三季度实现营业收入{a}亿元，同比增长{p}%，归母净利润{b}亿元，同比增长{q}%。",
    "分产品看，{c}核心产品收入占比提升至{p}%，毛利率同比提升{d}个百分点，产品结构持续优化。",
    "报告期内公司销售费用率为{d}%，管理费用率为{e}%，费用管控效果显著，经营效率稳步提高。",
    "我们认为，渠道改革的红利将在未来两到三年持续释放，直销渠道收入占比有望进一步提升至{p}%。",
    "{c}第三季度单季经营性现金流净额为{a}亿元，合同负债余额{b}亿元，环比增加{q}%，预收款项充足。",
    "考虑到行业需求复苏节奏，我们上调{y}年盈利预测，预计每股收益分别为{d}元和{e}元。",
    "从区域结构看，省外市场收入同比增长{p}%，增速高于省内市场{d}个百分点，全国化布局成效显现。",
    "公司持续推进数字化营销体系建设，新增经销商{q}家，终端网点覆盖率提升至{p}%。",
    "风险提示：宏观经济下行导致消费需求不及预期，行业竞争加剧，食品安全风险。",
    "{c}在研发方面投入{b}亿元，占营业收入的{d}%，新产品贡献收入{a}亿元。",
)


@dataclass
class Truth:
    """What the PDF says: the title, the body paragraphs (in order) and every boilerplate string."""

    title: str
    body: list[str] = field(default_factory=list)
    boilerplate: list[str] = field(default_factory=list)

    def body_sentences(self) -> list[str]:
        out: list[str] = []
        for para in self.body:
            out += [s + "。" for s in para.split("。") if s.strip()]
        return out


def _sentence(k: int, company: str) -> str:
    n = k * 7 + 3
    return _SENTENCES[k % len(_SENTENCES)].format(
        c=company, y=2021 + k % 3, a=f"{100 + n * 3.7:.2f}", b=f"{40 + n * 1.9:.2f}", p=f"{10 + n % 40}.{n % 10}",
        q=f"{5 + n % 30}.{(n * 3) % 10}", d=f"{1 + n % 9}.{n % 7}", e=f"{2 + n % 5}.{(n * 5) % 10}")


def paragraphs(company: str, n: int, per: int = 4, start: int = 0) -> list[str]:
    """``n`` body paragraphs of ``per`` sentences, each sentence different (numbers vary)."""
    return ["".join(_sentence(start + i * per + j, company) for j in range(per)) for i in range(n)]


class _Writer:
    """Places wrapped text on reportlab pages, with the running header and footer on every page."""

    def __init__(self, dest: Path | io.BytesIO, company: str, pages_total: int, encrypt: str | None = None):
        from reportlab.pdfbase import pdfmetrics
        from reportlab.pdfbase.cidfonts import UnicodeCIDFont
        from reportlab.pdfgen import canvas

        if FONT not in pdfmetrics.getRegisteredFontNames():
            pdfmetrics.registerFont(UnicodeCIDFont(FONT))
        self.width = pdfmetrics.stringWidth
        self.c = canvas.Canvas(dest if hasattr(dest, "write") else str(dest), pagesize=(W, H), encrypt=encrypt)
        self.company, self.total, self.page, self.y = company, pages_total, 1, TOP_BODY
        self.boiler: list[str] = []

    def text(self, x: float, top: float, s: str, size: float = BODY_SIZE) -> None:
        self.c.setFont(FONT, size)
        self.c.drawString(x, H - top - size, s)

    def furniture(self) -> None:
        head_l, head_r = f"{self.company}（600519）公司深度报告", "证券研究报告"
        foot_l, foot_r = "请务必阅读正文之后的免责声明及其项下所有内容", f"{self.page}/{self.total}"
        self.text(LEFT, 30, head_l, 9)
        self.text(RIGHT - self.width(head_r, FONT, 9), 30, head_r, 9)
        self.c.line(LEFT, H - 45, RIGHT, H - 45)
        self.text(LEFT, H - 40, foot_l, 8)
        self.text(RIGHT - self.width(foot_r, FONT, 8), H - 40, foot_r, 8)
        self.boiler += [head_l, head_r, foot_l, foot_r]

    def new_page(self) -> None:
        self.c.showPage()
        self.page += 1
        self.y = TOP_BODY
        self.furniture()

    def wrap(self, s: str, width: float, size: float = BODY_SIZE, indent: float = 0.0) -> list[str]:
        lines, cur, room = [], "", width - indent
        for ch in s:
            if self.width(cur + ch, FONT, size) > room:
                lines.append(cur)
                cur, room = "", width
            cur += ch
        return lines + [cur] if cur else lines

    def para(self, s: str, left: float = LEFT, right: float = RIGHT, size: float = BODY_SIZE) -> None:
        """A paragraph with a two-character first-line indent; it runs onto the next page when full."""
        indent = 2 * size
        for k, line in enumerate(self.wrap(s, right - left, size, indent)):
            if self.y + LEADING > BOTTOM_BODY:
                self.new_page()
            self.text(left + (indent if k == 0 else 0), self.y, line, size)
            self.y += LEADING
        self.y += 6

    def heading(self, s: str, size: float = 13.0) -> None:
        if self.y + 3 * LEADING > BOTTOM_BODY:
            self.new_page()
        self.text(LEFT, self.y + 4, s, size)
        self.y += LEADING + 12


def _first_page(w: _Writer, title: str, company: str, truth: Truth) -> None:
    w.text(LEFT, 62, title, 18)
    side_x, main_right = 405.0, 385.0
    side = ["投资评级：买入（维持）", "报告日期：2023年10月30日", "当前价格：1,712.50元", "目标价格：2,100.00元",
            "基本数据", "总股本/流通股本（亿股）：12.56/12.56", "总市值（亿元）：21,512.77",
            "52周最高/最低（元）：1,935.00/1,555.00", "分析师：张明远", "执业证书编号：S0100521100005",
            "邮箱：zhangmy@example.com", "相关报告", "1.《渠道改革深化，业绩稳健》2023-08-02",
            "2.《提价落地，开启新周期》2023-04-28"]
    for k, s in enumerate(side):
        w.text(side_x, 110 + k * 22, s, 8)
    w.boiler += side
    w.y = 110
    w.text(LEFT, w.y, "投资要点", 13)
    w.y += LEADING + 8
    for p in paragraphs(company, 3, per=3, start=100):
        w.para(p, LEFT, main_right)
        truth.body.append(p)


def _toc(w: _Writer) -> None:
    w.new_page()
    w.text(W / 2 - 20, w.y, "目录", 14)
    w.boiler.append("目录")
    w.y += 34
    entries = [("1 业绩回顾：收入利润双增长", 3), ("2 渠道改革持续推进", 3), ("3 盈利预测与投资建议", 4),
               ("4 风险提示", 4), ("图表1：主要财务指标", 3), ("图表2：营业收入及增速", 4)]
    for name, page in entries:
        dots = "." * int((RIGHT - LEFT - w.width(name, FONT, BODY_SIZE) - 20) / w.width(".", FONT, BODY_SIZE))
        w.text(LEFT, w.y, f"{name}{dots}{page}")
        w.boiler.append(f"{name}{dots}{page}")
        w.y += LEADING


def _table(w: _Writer) -> None:
    cap, src = "图表1：主要财务指标", "资料来源：Wind，示例证券研究所"
    rows = [["指标", "2022A", "2023E", "2024E", "2025E"], ["营业收入（亿元）", "1275.5", "1495.3", "1732.1", "1987.6"],
            ["同比增长（%）", "16.5", "17.2", "15.8", "14.8"], ["归母净利润（亿元）", "627.2", "742.6", "861.4", "989.0"],
            ["每股收益（元）", "49.93", "59.12", "68.57", "78.73"]]
    if w.y + 30 + len(rows) * 20 + 30 > BOTTOM_BODY:
        w.new_page()
    w.text(LEFT, w.y, cap, 9)
    top = w.y + 18
    colw = (RIGHT - LEFT) / len(rows[0])
    for r, row in enumerate(rows):
        for k, cell in enumerate(row):
            w.text(LEFT + k * colw + 4, top + r * 20 + 5, cell, 9)
    for r in range(len(rows) + 1):
        w.c.line(LEFT, H - top - r * 20, RIGHT, H - top - r * 20)
    for k in range(len(rows[0]) + 1):
        w.c.line(LEFT + k * colw, H - top, LEFT + k * colw, H - top - len(rows) * 20)
    w.y = top + len(rows) * 20 + 6
    w.text(LEFT, w.y, src, 8)
    w.y += LEADING + 8
    w.boiler += [cap, src, *(c for row in rows for c in row)]


def _chart(w: _Writer) -> None:
    cap, src = "图表2：营业收入及增速", "资料来源：公司公告，示例证券研究所"
    if w.y + 200 > BOTTOM_BODY:
        w.new_page()
    w.text(LEFT, w.y, cap, 9)
    w.c.setFillGray(0.85)
    w.c.rect(LEFT, H - w.y - 160, 300, 140, fill=1, stroke=0)
    w.c.setFillGray(0)
    labels = ["2019", "2020", "2021", "2022", "2023"]
    for k, lab in enumerate(labels):
        w.text(LEFT + 20 + k * 55, w.y + 146, lab, 7)
    w.y += 170
    w.text(LEFT, w.y, src, 8)
    w.y += LEADING + 8
    w.boiler += [cap, src, *labels]


_END = (("分析师声明", "作者具有中国证券业协会授予的证券投资咨询执业资格，以勤勉的职业态度，独立、客观地出具本报告。"
         "本报告清晰准确地反映了作者的研究观点，作者所得报酬的任何部分不曾与本报告中的具体推荐意见相联系。"),
        ("投资评级说明", "买入：预期未来6个月内股价相对市场基准指数涨幅超过20%；增持：涨幅介于10%与20%之间；"
         "中性：涨幅介于-10%与10%之间；减持：跌幅超过10%。行业评级分为看好、中性和看淡。"),
        ("免责声明", "本报告仅供示例证券股份有限公司的客户使用。本公司不会因接收人收到本报告而视其为客户。"
         "本报告基于本公司认为可靠的已公开信息，但本公司对这些信息的准确性及完整性不作任何保证。"
         "本报告所载的资料、意见及推测仅反映本公司于发布本报告当日的判断，在不同时期可能发出与本报告不一致的报告。"
         "市场有风险，投资需谨慎。未经本公司书面许可，任何机构和个人不得以任何形式翻版、复制和发布本报告。"))


def make_report(path: Path, company: str = "贵州茅台", body_pages: int = 3, encrypt: str | None = None) -> Truth:
    """Write a sell-side report PDF of ``body_pages`` + 3 pages or so to ``path``; return its truth.

    Drawn twice: the first pass counts the pages that the footers' k/n then names."""
    total = _draw(io.BytesIO(), company, body_pages, None, 0)[1]
    return _draw(path, company, body_pages, encrypt, total)[0]


def _draw(dest: Path | io.BytesIO, company: str, body_pages: int, encrypt: str | None,
          total: int) -> tuple[Truth, int]:
    title = f"{company}（600519）：业绩稳健增长，维持买入评级"
    truth = Truth(title=title)
    w = _Writer(dest, company, total, encrypt)
    w.furniture()
    _first_page(w, title, company, truth)
    _toc(w)
    w.new_page()
    body = paragraphs(company, body_pages * 6, start=0)
    sections = ["1 业绩回顾：收入利润双增长", "2 渠道改革持续推进", "3 盈利预测与投资建议"]
    step = max(1, len(body) // len(sections))
    for k, p in enumerate(body):
        if k % step == 0 and k // step < len(sections):
            w.heading(sections[k // step])
            truth.body.append(sections[k // step])
        w.para(p)
        truth.body.append(p)
        if k == 2:
            _table(w)
        if k == 7:
            _chart(w)
    w.new_page()
    for head, text in _END:
        w.heading(head)
        w.para(text)
        w.boiler += [head, text]
    w.c.save()
    truth.boilerplate = w.boiler
    return truth, w.page


def make_scanned(path: Path, pages: int = 2) -> None:
    """A PDF whose pages are images only: no text layer (what a scanner writes)."""
    from PIL import Image, ImageDraw
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfgen import canvas

    img = Image.new("L", (400, 560), 255)
    d = ImageDraw.Draw(img)
    for k in range(0, 560, 14):
        d.line((30, k, 370, k), fill=60, width=3)
    c = canvas.Canvas(str(path), pagesize=(W, H))
    for _ in range(pages):
        c.drawImage(ImageReader(img), 40, 40, W - 80, H - 80)
        c.showPage()
    c.save()


def draw_pages(path: Path, pages: list[list[tuple]], scanned: tuple[int, ...] = ()) -> None:  # type: ignore[type-arg]
    """A PDF from explicit items, for layout cases the report above does not have: each page a list of
    ``(x, top, text, size)`` (top in points from the page's top) or ``(x, top, text, size, angle)`` (rotated
    text, as a diagonal watermark is drawn); the pages numbered in ``scanned`` (0-based) also get a full-page
    image, as a scanned page has."""
    from PIL import Image
    from reportlab.lib.utils import ImageReader
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont
    from reportlab.pdfgen import canvas

    if FONT not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(UnicodeCIDFont(FONT))
    c = canvas.Canvas(str(path), pagesize=(W, H))
    for k, items in enumerate(pages):
        if k in scanned:
            c.drawImage(ImageReader(Image.new("L", (60, 80), 128)), 40, 40, W - 80, H - 80)
        for x, top, text, size, *angle in items:
            c.saveState()
            c.setFont(FONT, size)
            c.translate(x, H - top - size)
            if angle:
                c.rotate(angle[0])
            c.drawString(0, 0, text)
            c.restoreState()
        c.showPage()
    c.save()


def body_lines(text: str, top: float, left: float = LEFT, right: float = RIGHT,
               size: float = BODY_SIZE) -> tuple[list[tuple[float, float, str, float]], float]:
    """``text`` wrapped into items between ``left`` and ``right`` from ``top``; the items and the next top."""
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.cidfonts import UnicodeCIDFont

    if FONT not in pdfmetrics.getRegisteredFontNames():
        pdfmetrics.registerFont(UnicodeCIDFont(FONT))
    items, cur = [], ""
    for ch in text:
        if pdfmetrics.stringWidth(cur + ch, FONT, size) > right - left:
            items.append((left, top, cur, size))
            top, cur = top + LEADING, ""
        cur += ch
    if cur:
        items.append((left, top, cur, size))
        top += LEADING
    return items, top
