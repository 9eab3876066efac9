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
