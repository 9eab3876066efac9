"""The closing pages of a generated report: analyst statement, disclaimer, rating definitions, special statement,
analyst biographies and the broker's contacts; 1-2 pages in several wordings (all invented)."""
from __future__ import annotations

import random

from eval._fullreports_text import Broker, person, phone

_ANALYST = (
    "本报告署名分析师具有中国证券业协会授予的证券投资咨询执业资格并注册为证券分析师，以勤勉尽责的职业态度，独立、客观地出具"
    "本报告。本报告清晰准确地反映了分析师的研究观点。分析师薪酬的任何部分过去不曾与、现在不与、未来也将不会与本报告中的具体"
    "推荐意见或观点直接或间接相关。",
    "作者具有中国证券业协会授予的证券投资咨询执业资格，保证报告所采用的数据均来自合规渠道，分析逻辑基于作者的职业理解，通过"
    "合理判断得出结论，力求独立、客观、公正，结论不受任何第三方的授意或影响，特此声明。",
)
_DISCLAIMER = (
    "本报告仅供{b}股份有限公司（以下简称“本公司”）的客户使用。本公司不会因接收人收到本报告而视其为客户。本报告基于本公司认为"
    "可靠的公开资料，但本公司对这些信息的准确性和完整性不作任何保证。本报告所载的资料、意见及推测仅反映本公司于发布本报告当日"
    "的判断，在不同时期，本公司可发出与本报告所载资料、意见及推测不一致的报告。",
    "{b}具备中国证监会核准的证券投资咨询业务资格。本报告中的信息均来源于已公开的资料，本公司对这些信息的准确性及完整性不作任"
    "何保证，也不保证所包含的信息和建议不会发生任何变更。在任何情况下，本报告中的信息或所表述的意见并不构成对任何人的投资建议，"
    "投资者应当独立作出投资决策，自行承担投资风险。",
    "市场有风险，投资需谨慎。在任何情况下，本公司不对任何人因使用本报告中的任何内容所引致的任何损失负任何责任。本报告版权归"
    "{b}所有，未经本公司书面许可，任何机构和个人不得以任何形式翻版、复制、发表或引用本报告的任何部分。",
    "本公司及其所属关联机构可能会持有报告中提到的公司所发行的证券头寸并进行交易，也可能为这些公司提供或者争取提供投资银行、财务"
    "顾问或者金融产品等相关服务。投资者应当充分考虑本公司可能存在影响本报告客观性的利益冲突，不应视本报告为作出投资决策的唯一因素。",
    "本报告中所指的投资及服务可能不适合个别客户，不构成客户私人咨询建议。在任何情况下，本报告中的信息或所表述的意见均不构成对任何"
    "人的投资建议。过往的表现亦不应作为日后表现的预示和担保。在不同时期，{b}可能会发出与本报告所载意见、评估及预测不一致的研究报告。",
    "本报告的信息来源于已公开的资料，{b}对该等信息的准确性、完整性或可靠性不作任何保证。本报告所载的资料、意见及推测仅反映{b}于"
    "发布本报告当日的判断，本报告所指的证券或投资标的的价格、价值及投资收入可能会波动。投资者据此作出的任何投资决策与本公司和作者无关。",
)
_DISCLOSURE = (
    "本公司在知晓的范围内履行信息披露义务。客户可登录本公司网站信息披露栏目查询静默期安排和关联公司持股情况。本公司具备证券投资咨询"
    "业务资格，经营许可证编号为{lic}。",
    "{b}股份有限公司经中国证券监督管理委员会批准，已具备证券投资咨询业务资格，经营证券业务许可证编号：{lic}。本报告由{b}研究所"
    "发布，报告中所涉及的数据、观点仅供参考，相关人员在报告发布前后可能存在交易报告所涉证券的情形。",
)
_SPECIAL = (
    "本报告仅供本公司客户参考。若本报告的接收人非本公司的客户，应在基于本报告作出任何投资决定或就本报告要求任何解释前咨询独立"
    "投资顾问。本报告的版权仅为本公司所有，如引用、刊发，需注明出处为{b}研究所，且不得对本报告进行有悖原意的引用、删节和修改。",
    "根据《证券期货投资者适当性管理办法》，本报告仅供{b}客户中的专业投资者使用，若您并非专业投资者，为控制投资风险，请取消"
    "接收、订阅或使用本报告中的任何信息。本公司不会因接收人收到、阅读或关注本报告中的内容而视其为专业投资者。",
)
_RATING_HEADS = ("投资评级说明", "评级说明", "投资评级标准", "本公司投资评级体系")
_STOCK = (("买入", "预期未来6个月内，个股相对同期沪深300指数涨幅在20%以上"),
          ("增持", "预期未来6个月内，个股相对同期沪深300指数涨幅在5%至20%之间"),
          ("中性", "预期未来6个月内，个股相对同期沪深300指数涨跌幅在-5%至5%之间"),
          ("减持", "预期未来6个月内，个股相对同期沪深300指数跌幅在5%以上"))
_INDUSTRY = (("看好", "预期未来6个月内，行业指数表现强于沪深300指数"),
             ("中性", "预期未来6个月内，行业指数表现与沪深300指数基本持平"),
             ("看淡", "预期未来6个月内，行业指数表现弱于沪深300指数"))


def _fill(rng: random.Random, texts: tuple[str, ...], b: Broker, k: int) -> list[str]:
    lic = f"{rng.randint(10000000, 99999999)}{rng.randint(1000, 9999)}"
    return [t.format(b=b.name, lic=lic) for t in rng.sample(texts, k)]


def closing(rng: random.Random, b: Broker) -> list[tuple[str, str, list[str]]]:
    """The closing sections as (category, heading, paragraphs), in a broker-specific order and wording."""
    sep = rng.choice(("：", "——", "，", "　"))
    ratings = [f"{r}{sep}{d}；" for r, d in _STOCK] + [f"{r}{sep}{d}。" for r, d in _INDUSTRY]
    rating_intro = rng.choice(("股票投资评级：", "以报告发布日后6个月内的相对市场表现为比较标准：",
                               "评级基准为报告发布日后6个月内的相对表现："))
    out = [("disclaimer", rng.choice(("分析师声明", "分析师承诺", "作者声明")), _fill(rng, _ANALYST, b, 1)),
           ("rating_def", rng.choice(_RATING_HEADS), [rating_intro, *ratings[:4], "行业投资评级：", *ratings[4:]]),
           ("disclaimer", rng.choice(("免责声明", "法律声明", "重要声明", "一般声明")),
            _fill(rng, _DISCLAIMER, b, rng.randint(3, 6))),
           ("disclaimer", rng.choice(("特别声明", "特别提示", "版权声明")), _fill(rng, _SPECIAL, b, rng.randint(1, 2)))]
    if rng.random() < 0.6:
        out.append(("disclaimer", rng.choice(("信息披露", "重要披露", "披露声明")), _fill(rng, _DISCLOSURE, b, 1)))
    if rng.random() < 0.6:
        out.insert(1, ("contact", rng.choice(("分析师简介", "作者简介", "研究团队简介")),
                       [_bio(rng, b) for _ in range(rng.randint(1, 3))]))
    rng.shuffle(out[2:])  # the order of the legal sections varies by broker; the analyst statement stays first
    return out + [("contact", rng.choice((f"{b.institute}", "联系我们", f"{b.name}研究所联系方式")), _contacts(rng, b))]


def _bio(rng: random.Random, b: Broker) -> str:
    name, _ = person(rng)
    return (f"{name}：{b.name}研究所{rng.choice(('首席分析师', '行业分析师', '资深分析师', '研究员'))}，"
            f"{rng.choice(('复旦大学', '北京大学', '上海交通大学', '中山大学', '南开大学'))}"
            f"{rng.choice(('经济学', '金融学', '工学', '管理学'))}{rng.choice(('硕士', '博士'))}，"
            f"{rng.randint(3, 12)}年证券研究经验，{rng.choice(('曾任职于产业公司', '曾任职于公募基金', '主要覆盖行业龙头公司'))}。")


def _contacts(rng: random.Random, b: Broker) -> list[str]:
    out = []
    for city in rng.sample(["上海", "北京", "深圳", "广州", "杭州"], rng.randint(2, 3)):
        district = {"上海": "浦东新区", "北京": "西城区", "深圳": "福田区", "广州": "天河区", "杭州": "上城区"}[city]
        out.append(f"{city}：{city}市{district}{rng.choice(('世纪大道', '金融大街', '深南大道', '珠江新城', '钱江路'))}"
                   f"{rng.randint(1, 999)}号{rng.randint(5, 40)}楼　邮编：{rng.randint(100000, 599999)}　"
                   f"电话：{phone(rng, city)}")
    out.append(f"网址：www.{b.domain}")
    return out
