"""The subject of an untitled body is its issuer (issue 38): the company whose stock code the body writes, else the
one its 公司 sentences are about; a partner, customer, investor, parent or a place named like a listed company is
not. Made-up bodies; the table is written here."""
from __future__ import annotations

import pytest

from fincprg.finance.stocks import StockTable
from fincprg.generate.subject import body_subject

TABLE = ("symbol,name,industry\n300014,亿纬锂能,电气设备\n300769,德方纳米,化工原料\n002594,比亚迪,汽车整车\n"
         "300037,新宙邦,化工原料\n600350,山东高速,路桥\n600295,鄂尔多斯,普钢\n300750,宁德时代,电气设备\n"
         "601633,长城汽车,汽车整车\n600104,上汽集团,汽车整车\n")
FILL = "行业需求稳步回升，产品结构持续优化。" * 12  # > 200 characters: what follows is past the opening


def _table(tmp_path, rows: str) -> StockTable:
    """A stock table of ``rows`` (``symbol,name,industry`` lines)."""
    p = tmp_path / "stocks.csv"
    p.write_text("symbol,name,industry\n" + rows, encoding="utf-8")
    return StockTable(p)


@pytest.fixture()
def table(tmp_path) -> StockTable:
    p = tmp_path / "stocks.csv"
    p.write_text(TABLE, encoding="utf-8")
    return StockTable(p)


def test_the_company_whose_code_the_body_writes_is_the_issuer(table):
    # a joint-venture partner named first, in the opening, is not the issuer
    body = ("德方纳米与公司合资建设的磷酸铁锂项目顺利投产。亿纬锂能（300014）发布2021年半年报，"
            "公司二季度实现归母净利润7.9亿元，同比增长20%。")
    assert body_subject(body, table) == ("亿纬锂能", "300014")


def test_an_investor_a_parent_or_a_place_is_not_the_issuer(table):
    investor = "比亚迪战略入股公司，持股比例5%。新宙邦发布年报，公司2021年实现营业收入69.5亿元，同比增长133%。"
    assert body_subject(investor, table) == ("新宙邦", "300037")
    parent = "公司控股股东山东高速拟增持公司股份。公司2021年实现营业收入20.1亿元，同比增长15%。"
    assert body_subject(parent, table) is None
    place = "鄂尔多斯项目二期顺利投产，公司产能大幅提升。2021年公司实现营业收入30.2亿元，同比增长25%。"
    assert body_subject(place, table) is None


def test_the_company_the_bodys_company_sentences_are_about_is_the_issuer(table):
    # named once, past the opening, as the subject of a sentence about 公司; the customers are objects of a list
    body = ("公司发布2021年年报，营收增长。" + FILL + "宁德时代作为动力电池龙头，公司市占率持续提升。"
            "公司为长城汽车、上汽集团等客户供货。")
    assert body_subject(body, table) == ("宁德时代", "300750")
    # customers alone, in a list after 为, are nobody's subject
    assert body_subject("公司发布年报。" + FILL + "公司为长城汽车、上汽集团等客户供货。", table) is None


def test_a_company_named_twice_as_its_own_and_no_other_is_the_issuer(table):
    body = "公司发布年报，营收增长。" + FILL + "2021年宁德时代装机量居首。前9月，宁德时代的装车量同比增长。"
    assert body_subject(body, table) == ("宁德时代", "300750")
    # a data source, a subsidiary, an investee or a place inside 我国 is named twice too, but not as the issuer
    for before in ("根据", "子公司", "将持有"):
        other = "公司发布年报。" + FILL + f"{before}长城汽车数据，销量增长。{before}长城汽车统计，份额提升。"
        assert body_subject(other, table) is None, before


def test_a_name_written_inside_a_longer_word_names_no_company(tmp_path):
    # 「中国银行业」 is the banking industry, 「中微半导体」 another company, 「我国新能源」 the nation's; a longer name
    # of the company itself (「中国平安保险」) and a name before a word of its own (「银行业绩」, 「家居于」) still count
    p = tmp_path / "stocks.csv"
    p.write_text("symbol,name,industry\n601988,中国银行,银行\n688380,中微半导,半导体\n600116,国新能源,燃气\n"
                 "601318,中国平安,保险\n600036,招商银行,银行\n603801,志邦家居,家居\n835670,数字人,软件\n", encoding="utf-8")
    t = StockTable(p)
    named = lambda text: [o.key for o in t.occurrences(text)]  # noqa: E731
    assert named("2019年中国银行业IT解决方案市场总规模约为425.8亿元") == []
    assert named("2018年中微半导体的营业收入16亿元") == []
    assert named("2019年我国新能源汽车销量120万辆") == []
    assert named("公司参与数字人民币硬钱包试点") == []
    assert named("中国平安保险集团发布年报") == ["中国平安"]
    assert named("招商银行业绩稳健，志邦家居于2019年上市") == ["招商银行", "志邦家居"]
    body = "公司发布年报。" + FILL + "2019年中国银行业IT解决方案市场规模增长。到2024年，中国银行业IT市场规模翻倍。"
    assert body_subject(body, t) is None


def test_a_company_its_sentence_sets_apart_from_公司_is_not_the_issuer(table):
    # an investor whose resources the issuer gains: 「…具有公司所在行业…资源」, 「…与公司具有协同效应」
    body = ("公司发布公告，拟非公开发行股票募资9亿元。" + FILL + "比亚迪旗下基金参与认购。比亚迪具有公司所在行业较强的"
            "战略性资源，与公司具有较高的协同效应。比亚迪能够给公司带来领先的市场、渠道资源。")
    assert body_subject(body, table) is None
    # the issuer's own sentences about 公司 keep it
    own = "公司发布年报。" + FILL + "比亚迪2021年销量大增。比亚迪通过全新的信息化系统赋能公司快速增长。"
    assert body_subject(own, table) == ("比亚迪", "002594")


def test_an_investee_the_issuer_trades_or_a_broker_hosting_a_meeting_is_not_the_issuer(tmp_path):
    t = _table(tmp_path, "601012,隆基绿能,电气设备\n002736,国信证券,证券\n300628,亿联网络,通信设备\n")
    investee = ("公司发布2022年半年报，上半年归母净利润245.98亿元。上半年公司出售隆基绿能部分股份使投资收益增加29.16亿元；"
                "另外投资隆基绿能的会计核算方法变更，使公允价值变动损益增幅较大。")
    assert body_subject(investee, t) is None
    host = "近日，在国信证券举办的TMT策略会上，亿联网络领导与投资者深入交流。公司成功切入视频会议市场。"
    assert body_subject(host, t) == ("亿联网络", "300628")


def test_a_customer_listed_elsewhere_is_not_the_issuer_by_a_sentence_about_公司(table):
    # named once in a customer list and once heading a clause before 「公司出货…」: the customer, not the issuer
    body = ("公司专注三元正极材料，供应包括长城汽车、宁德时代、比亚迪在内的头部企业。" + FILL +
            "随着终端放量，宁德时代高镍电池比例大幅提升，公司出货有望持续放量。")
    assert body_subject(body, table) is None


def test_a_name_ending_in_gongsi_is_not_doubled():
    """Held-out reading 1 (issue 38): 「中金中金公司」, the 公司 of 中金公司's own name replaced by the name."""
    from fincprg.generate.complete import replace_vague_subjects

    assert replace_vague_subjects("中金公司2021年营业收入是多少？", "中金公司") == "中金公司2021年营业收入是多少？"
    assert replace_vague_subjects("公司2021年营业收入是多少？", "中金公司") == "中金公司2021年营业收入是多少？"
    assert replace_vague_subjects("公司2021年营业收入是多少？", "星河科技") == "星河科技2021年营业收入是多少？"


def test_a_company_the_issuer_bought_is_nobodys_issuer_anywhere_in_the_body(tmp_path):
    """A subsidiary named where the body says the issuer bought it is not the issuer where the body names it
    again as a sentence's subject (an unlisted short name, 佛照, writes the issuer); its parent group is no
    subsidiary (「母公司中国黄金集团」 leaves the listed 中国黄金 the issuer)."""
    t = _table(tmp_path, "002449,国星光电,半导体\n600916,中国黄金,服饰\n")
    bought = ("考虑到国星光电23Q1营收同比+4.28%，我们预计通用照明营收增速高于整体。公司2022年以来先后并购国星光电、"
              "风华芯电，尽管受疫情影响国星光电收入略降4%至16.7亿，协同可期。")
    assert body_subject(bought, t) is None
    group = "中国黄金为集团旗下唯一黄金珠宝零售平台，充分享受母公司中国黄金集团的资源支持。中国黄金2022年营收同比增长。"
    assert body_subject(group, t) == ("中国黄金", "600916")


def test_a_valuation_peer_is_nobodys_issuer(tmp_path):
    """Reading 22's 民和股份 for 益生股份's figures: a company the body compares the issuer with is not its issuer,
    wherever else the body names it."""
    t = _table(tmp_path, "002234,民和股份,农业综合\n002458,益生股份,农业综合\n")
    body = "公司2022年实现营收22.6亿元，同比增长10%。对比民和股份，公司成本更低。民和股份估值较高，民和股份市值回落。"
    assert body_subject(body, t) is None
