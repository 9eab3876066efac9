"""The examples of each strict rule (:mod:`.rules`), by rule id: (a query and source it must fail, one it must
pass), and the Reading a rule reads. Drawn from the sample's and AlphaFin's builds, cut to the sentence that
decides; tests/unit/test_verify_rules.py runs them."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Reading:
    """What a strict rule reads of one sentence or passage query: the query, its passage and report title, its
    sentence (sentence queries), and the names of the company it asks about."""

    query: str
    passage: str
    title: str = ""
    sentence: str | None = None
    names: frozenset[str] = frozenset()

    @property
    def source(self) -> str:
        """A sentence query is read against its sentence, a passage query against its passage and title."""
        return self.sentence if self.sentence else f"{self.passage}\n{self.title}"


@dataclass(frozen=True)
class Example:
    """A query and its source (a sentence when ``sentence``, else a passage), with the names the query asks about."""

    query: str
    source: str
    sentence: bool = False
    names: tuple[str, ...] = ()

    def reading(self) -> Reading:
        if self.sentence:
            return Reading(self.query, self.source, "", self.source, frozenset(self.names))
        return Reading(self.query, self.source, "", None, frozenset(self.names))

# rule id -> (it must fail, it must pass); the strict rules' sources as chunk writes them (sentences.jsonl's
# text, punctuation read by the chunker already), names as the stage reads them (the asked company's names)
EXAMPLES: dict[str, tuple[Example, Example]] = {
    # the stage's rules that read one text (their sources as each rule's adapter in rules.py reads them)
    "subject": (
        Example('代理保险2020年占手续费收入是多少？', '代理保险收入占手续费收入的12%，同比提升2个百分点。', names=('招商银行',)),
        Example('招商银行2020年代理保险收入是多少？', '代理保险收入占手续费收入的12%，同比提升2个百分点。', names=('招商银行',)),
    ),
    "fact_owner": (  # a company in the title asked about another company's figure (issue 48's real reading)
        Example('京东方A2023年初期规划产能是多少？', '力积电（600000）铜锣新厂2023年初期规划产能为每月1万片。',
                sentence=True, names=('京东方A',)),
        Example('力积电2023年初期规划产能是多少？', '力积电（600000）铜锣新厂2023年初期规划产能为每月1万片。',
                sentence=True, names=('京东方A',)),
    ),
    "segment": (  # a strategy report's passage on a company's businesses (issue 48's class: segment as industry)
        Example('焦炭板块2021年一季度焦炭销量同比下降了多少？', '公司聚烯烃板块受景气上行带动盈利提升。'
                '焦炭板块2021Q1实现焦炭销量103万吨，同比减少0.4万吨。'),
        Example('焦炭板块2021年一季度焦炭销量同比下降了多少？', '焦炭板块2021Q1实现焦炭销量103万吨，同比减少0.4万吨，'
                '行业库存回落。'),
    ),
    "answer": (
        Example('兆驰股份2019年代工出货量下降的主要原因是什么？', '2019年公司代工出货量同比增长34%，代工收入增长20%。'),
        Example('兆驰股份2019年代工出货量增长了多少？', '2019年公司代工出货量同比增长34%，代工收入增长20%。'),
    ),
    "report_claim": (  # the source: the report's title, a line break, its body
        Example('景津装备2019年业绩表现如何？', '景津装备（603279）：业绩符合预期，持续看好配件业务放量\n'
                '公司发布2021年年报，2021年全年实现营业收入46.51亿元，同比增长39.7%。'),
        Example('景津装备2021年业绩是否符合预期？', '景津装备（603279）：业绩符合预期，持续看好配件业务放量\n'
                '公司发布2021年年报，2021年全年实现营业收入46.51亿元，同比增长39.7%。'),
    ),
    "topic_strict": (
        Example('伊利股份2021年业绩表现如何？', '2021-08-30 伊利股份（600887）：2021年半年报点评：收入高增\n'
                '2021-10-29 伊利股份（600887）：三季报点评：盈利改善', names=('伊利股份',)),
        Example('伊利股份2021年上半年业绩表现如何？', '2021-08-30 伊利股份（600887）：2021年半年报点评：收入高增\n'
                '2021-10-29 伊利股份（600887）：三季报点评：盈利改善', names=('伊利股份',)),
    ),
    "topic_answer": (
        Example('A公司2023年营收下降的原因？', 'A公司（600001）：2023年营收增长20%'),
        Example('A公司2023年营收表现如何？', 'A公司（600001）：2023年营收增长20%'),
    ),
    "related": (
        Example('比较涪陵榨菜和五粮液的经营表现', '涪陵榨菜:食品\n五粮液:白酒\n泸州老窖:白酒'),
        Example('比较泸州老窖和五粮液的经营表现', '涪陵榨菜:食品\n五粮液:白酒\n泸州老窖:白酒'),
    ),
    # the strict rules, drawn from the builds
    "garbled": (
        Example('航发动力扩产计划的进展如何？',
                '我们认为，充足的现金流将全面提高公司的管理经营质量，保证扩产规划和新品研制顺利进行，公司新产品线有望得到加速。', sentence=True, names=('航发动力',)),
        Example('航发动力面临哪些主要风险？',
                '风险提示 供应配套风险，客户订单风险，新型号推出不及预期风险等', sentence=True, names=('航发动力',)),
    ),
    "vague": (
        Example('预计华鲁恒升营收是多少？',
                '项目投产后预计实现营收111 38亿元，利润总额13 26亿元。', sentence=True, names=('华鲁恒升',)),
        Example('华鲁恒升面临哪些主要风险？',
                '风险提示 产能投放低于预期、原材料价格波动的风险。', sentence=True, names=('华鲁恒升',)),
    ),
    "in_sentence": (
        Example('新天药业在研发上有哪些投入？',
                '公司按照 生产一代、储备一代、开发一代 的研发要求，持续进行中药新药、中药配方颗粒和经典名方等产品研发储备。', sentence=True, names=('新天药业',)),
        Example('新天药业2022年前三季度营业收入是多少？',
                '2022年前三季度，公司实现营业收入8 69亿元，同比 16 63 归母净利润1 05亿元，同比 17 94 扣非归母净'
                '利润1 02亿元，同比 17 91 。', sentence=True, names=('新天药业',)),
    ),
    "part_whole": (
        Example('兴发集团2021年四季度扣非净利润达到了多少？',
                '对应Q4单季扣非净利润18 44 20 44亿元，环比Q3增长24 37 。', sentence=True, names=('兴发集团',)),
        Example('兴发集团2021年归母净利的预测是多少？',
                '研报摘要:事件公司发布2021年业绩预告 预计全年实现归母净利42 44亿元，同比增长573 605 。预计全年扣非净利'
                '润44 5 46 5亿元，同比增长604 636 。', sentence=True, names=('兴发集团',)),
    ),
    "market_as_company": (
        Example('常熟汽饰2020年二季度的国内乘用车销量为多少？',
                '20Q2国内乘用车销量同比 2 3 ，较20Q1的 45 4 大幅改善，行业呈现疫情后从谷底V型反转复苏的良好态势。', sentence=True, names=('常熟汽饰',)),
        Example('投资常熟汽饰需要关注哪些风险？',
                '风险提示 宏观经济下行导致国内车市回暖不及预期，豪华车市场销量增长不及预期，公司新项目、新产能落地不及预期。', sentence=True, names=('常熟汽饰',)),
    ),
    "event": (
        Example('星河科技客户拓展情况如何？',
                '我们认为，客户结构的改善有助于提升公司议价能力，并降低单一终端市场波动对业绩的冲击。', sentence=True),
        Example('星河科技2023年综合毛利率的同比变化幅度是多少？',
                '2023年公司综合毛利率为43.6%，同比提升1.2个百分点，主要得益于高毛利的AI芯片占比提升；净利率为15.1%，同'
                '比下降0.6个百分点。', sentence=True),
    ),
    "whole_year": (
        Example('泰和农商行2024年的贷款总额为多少？',
                '深耕县域，小微贷款保持较快增长。截至2024年3月末，公司贷款总额为1586亿元，较年初增长5.2%，其中小微企业贷款较'
                '年初增长7.8%，普惠型小微贷款余额占比为38.6%。', sentence=True),
        Example('投资泰和农商行需要关注哪些风险？',
                '维持“增持”评级。\n风险提示：区域经济下行风险；净息差收窄超预期；小微企业资产质量波动；利率市场化推进带来的竞争风险。', sentence=True),
    ),
    "amount": (
        Example('海天味业2020年二季度的调味酱收入为多少？',
                '2Q20海天味业酱油 蚝油 调味酱收入分别同比 16 7 30 8 19 7 ，各品类均录得较高增速。', sentence=True, names=('海天味业',)),
        Example('海天味业2020年上半年毛利率同比下降了多少？',
                '1H20公司毛利率同比下跌1 92ppt至42 9 ，主因新收入准则下运输费用调至营业成本。1H20销售费用率同比下跌3'
                ' 53ppt至7 5 ，且剔除运费重分类影响，公司人工 广告 促销等费用率均录得同比下滑，销售费用的投放效率获得同比提升'
                '。', sentence=True, names=('海天味业',)),
    ),
    "rate_level": (
        Example('兆驰股份2019年财务费用率是多少？',
                '公司 2019 年销售、管理、研发、财务费用率同比分别 0 14pct、 0 29pct、 0 38pct、 1 71p'
                'ct。', sentence=True, names=('兆驰股份',)),
        Example('兆驰股份2019年的营业收入为多少？',
                '研报摘要:兆驰股份 002429 事件 公司发布 2019 年年报，公司实现营业收入 133 02 亿元，同比增长3 3'
                '8 实现归母净利润 11 35 亿元，同比增长 154 77 其中 19Q4', sentence=True, names=('兆驰股份',)),
    ),
    "price_level": (
        Example('万科A2019年销售均价是多少？',
                '1 10月累计楼面价6433元 平米，累计楼面价 销售均价为42 9 ，略高19年全年39 0 的水平。', sentence=True, names=('万科', '万科A')),
        Example('万科A面临哪些主要风险？',
                '风险提示 房屋价格大跌、销售不及预期、宏观经济波动', sentence=True, names=('万科', '万科A')),
    ),
    "combined": (
        Example('中国神华2019年运输板块利润总额同比下降了多少？',
                '2019 年电力和运输板块利润总额 85 0、 187 亿元， 同比下降 16 、 1 。', sentence=True, names=('中国神华',)),
        Example('投资中国神华需要关注哪些风险？',
                '风险提示 宏观经济失速， 煤价大幅回落，电价大幅回落。', sentence=True, names=('中国神华',)),
    ),
    "valuation": (
        Example('坚朗五金2021-2023年EPS预计能达到多少？',
                '我们预计公司2021 2023年EPS分别为3 56 4 98 6 83元，最新收盘价对应PE分别为37 2 26 6 '
                '19 4倍。', sentence=True, names=('坚朗五金',)),
        Example('坚朗五金2021年三季度收入达到了多少？',
                '2021年Q3实现收入24 78亿元，同比 28 97 归母净利润3 26亿元，同比 20 4 扣非净利润3 31亿元，'
                '同比 25 06 。', sentence=True, names=('坚朗五金',)),
    ),
    "day_figure": (
        Example('牧原股份2020年生猪外三元均价为多少？', '生猪外三元价格6月15日为32.64元/公斤，较上周上涨5%。', sentence=True,
                names=('牧原股份',)),
        Example('牧原股份2020年生猪外三元均价为多少？', '2020年生猪外三元均价为33.2元/公斤，同比上涨62%。', sentence=True,
                names=('牧原股份',)),
    ),
    "actual_as_forecast": (
        Example('恩华药业2021年前三季度营收的预测值是多少？', '2021年前三季度公司实现营收30.59亿元，同比增长15%。',
                sentence=True, names=('恩华药业',)),
        Example('恩华药业2022年营收的预测值是多少？', '我们预计2022年公司实现营收36.2亿元，同比增长18%。', sentence=True,
                names=('恩华药业',)),
    ),
    "earnings_forecast": (
        Example('华鲁恒升2023-2025年的业绩预测如何？',
                '21年以来公司新老基地资本开支加速，规划包括尼龙66新材料、高端电解液溶剂、荆州新基地、绿色新能源材料等项目，拟投资额超'
                '过200亿元，我们预计将于23 25年陆续投产，有望支撑公司新一轮高质量成长。风险提示 原材料价格大幅波动 新项目达产不'
                '及预期 汇率波动 下游需求不及预期。', names=('华鲁恒升',)),
        Example('华鲁恒升2022年三季度的毛利率为多少？',
                '22Q3实现毛利率23 3 ，同环比分别下滑 13 2 9 1pct。', sentence=True, names=('华鲁恒升',)),
    ),
    "target_as_forecast": (
        Example('泸州老窖2021-2023年ROE的预测是多少？',
                '考核目标为 1 2021 2023年ROE均不低于22 2 净利润增长率均不低于对标公司 见附录 75 分位值 3 成本'
                '费用率不高于65 。评论 市场期待已久的股权激励方案终出台，覆盖面广、力度到位。', sentence=True, names=('泸州老窖',)),
        Example('投资泸州老窖需要关注哪些风险？',
                '风险提示 高端酒需求不及预期、中低档产品拖累增速、市场估值中枢回落。', sentence=True, names=('泸州老窖',)),
    ),
    "change_stated": (
        Example('亚士创能2022年一季度毛利率较上年同期变化了多少？',
                '成本上涨导致毛利率承压，产品提价成功22Q1毛利率迅速回升21FY整体毛利率24 ，同比下滑8 5pct。', sentence=True, names=('亚士创能',)),
        Example('投资亚士创能需要关注哪些风险？',
                '风险提示 原材料价格涨幅超预期、产能投放不及预期、行业竞争加剧', sentence=True, names=('亚士创能',)),
    ),
    "risk": (
        Example('投资坚朗五金需要关注哪些风险？',
                '参考可比公司估值及公司业绩增长预期，给予公司2022年合理PE估值40X的判断，对应公司合理价值199 33元 股，维持'
                ' 买入 评级。风险提示。', sentence=True, names=('坚朗五金',)),
        Example('坚朗五金2021年三季度收入达到了多少？',
                '2021年Q3实现收入24 78亿元，同比 28 97 归母净利润3 26亿元，同比 20 4 扣非净利润3 31亿元，'
                '同比 25 06 。', sentence=True, names=('坚朗五金',)),
    ),
    "topical": (
        Example('万润股份项目投产进展如何？',
                '评级面临的主要风险项目投产不及预期 产品价格大幅波动、汇率风险。', sentence=True, names=('万润股份',)),
        Example('万润股份2021年二季度的营收为多少？',
                '公司二季度业绩大幅增长，创下历史同期新高。二季度单季度实现营收10 23亿元，同比增长76 97 归母净利润1 69亿元'
                '，同比增长83 74 。', sentence=True, names=('万润股份',)),
    ),
    "trend": (
        Example('振华科技2021年上半年归母净利润和订单表现如何？',
                '若剔除2 33亿元统筹外费用一次性计提的影响，则2021H1公司实现归母净利润7 48亿元，同比增长217 。资产负债表'
                '科目反映公司积极备产、订单充足 至6月30日，预付账款为2 34亿元，比2021年初时增长88 77 存货为13 37亿'
                '元，比2021年初时增长21 92 ，其中增长较多的为原材料 预付账款、存货的增长反映了公司积极准备以维持后续生产。公司'
                '应收账款为26 01亿元，比2021年初时增长98 21 合同负债6460万元，比2021年初时增长89 15 ，应收账'
                '款及合同负债的增加，反映了公司获得的订单金额持续增长。盈利预测、估值与评级 公司21H1净利润实现了大幅增长，毛利率也实'
                '现了明显提升，订单持续增加，积极备货生产。考虑公司是国内军工电子元器件龙头企业，产品广泛应用于国内航空、航天、电子、兵器'
                '、船舶及核工业等重点领域。新型电子元器件业务在重点应用领域刚性需求和国内高技术产业转型升级驱动下，规模、效益有望实现持续'
                '、快速地增长。', names=('振华科技',)),
        Example('振华科技2021年上半年归母净利润的同比变化幅度是多少？',
                '若剔除2 33亿元统筹外费用一次性计提的影响，则2021H1公司实现归母净利润7 48亿元，同比增长217 。', sentence=True, names=('振华科技',)),
    ),
    "base": (
        Example('某能源2019年资产负债率同比下降了多少？',
                '募集资金到位后公司偿还部分借款，2019年财务费用同比减少1.5亿元，资产负债率从上市前的52%降至31%。', sentence=True, names=('某能源',)),
        Example('某能源2019年财务费用同比下降了多少？',
                '募集资金到位后公司偿还部分借款，2019年财务费用同比减少1.5亿元，资产负债率从上市前的52%降至31%。', sentence=True, names=('某能源',)),
    ),
    "valuation_parts": (
        Example('顺丰控股2022年市值的预测值是多少？',
                '新业务中我们预计快运业务2022年至少300亿以上收入，给予1 7倍PS，价值541亿市值 其他新业务合计350亿收入，'
                '给予1 5倍PS，价值525亿市值', sentence=True, names=('顺丰控股',)),
        Example('顺丰控股面临哪些主要风险？',
                '风险提示 时效件业务量增速不及预期，特惠件业务成本投入超出预期。', sentence=True, names=('顺丰控股',)),
    ),
    "valued_part": (
        Example('祁连山2021年估值是否合理？',
                '测算重组后拟置入资产估值较可比公司低估明显，或有较大预期差考虑资产重组完成对公司业务及估值体系将带来重大变化，我们测算基'
                '准情形下 置入置出资产增值率假设为1 2x ，交易完成后 暂不考虑配套募集资金', sentence=True),
        Example('祁连山面临哪些主要风险？',
                '风险提示 资产重组交易失败风险及推进节奏不确定性 测算假设较真实情况或有较大偏差 资产重组交易存在控股股东、实际控制人变'
                '更的风险及审批风险 水泥需求不及预期 煤炭等成本上涨超预期', sentence=True),
    ),
}
