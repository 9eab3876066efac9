"""fincprg.finance: periods, metrics, numbers, directions, companies, title parsing, tokenize."""
from __future__ import annotations

import pytest

from fincprg.finance import Period, add_words, extract, parse_title_company, tokenize


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2023年公司实现营收10亿元", {Period(2023, None, False)}),
        ("2023年报显示", {Period(2023, "FY", False)}),
        ("2023年全年", {Period(2023, "FY", False)}),
        ("2024Q1营收增长", {Period(2024, "Q1", False)}),
        ("2024年一季度营收增长", {Period(2024, "Q1", False)}),
        ("2024年第三季度", {Period(2024, "Q3", False)}),
        ("24Q1毛利率", {Period(2024, "Q1", False)}),
        ("1Q24毛利率", {Period(2024, "Q1", False)}),
        ("2023年上半年", {Period(2023, "H1", False)}),
        ("23H2", {Period(2023, "H2", False)}),
        ("2023年前三季度", {Period(2023, "Q1-Q3", False)}),
        ("上半年公司净利率下滑", {Period(None, "H1", False)}),
        ("前三季度实现收入", {Period(None, "Q1-Q3", False)}),
        ("预计2025E EPS为2.3元", {Period(2025, None, True)}),
        ("25E PE 20倍", {Period(2025, None, True)}),
        ("2024-2026年归母净利润", {Period(y, None, False) for y in (2024, 2025, 2026)}),
        ("2024-2026E", {Period(y, None, True) for y in (2024, 2025, 2026)}),
        ("FY2024", {Period(2024, "FY", False)}),
        ("公司拟授予2000万股限制性股票", set()),
        ("发行价20.24元", set()),
    ],
)
def test_periods(text, expected):
    assert set(extract(text).periods) == expected


@pytest.mark.parametrize(
    ("text", "metrics"),
    [
        ("归属于母公司股东的净利润为5亿元", {"归母净利润"}),
        ("净利润同比增长", {"归母净利润"}),
        ("扣非归母净利润", {"扣非净利润"}),
        ("营收与营业总收入", {"营业收入"}),
        ("ROE和净资产收益率", {"ROE"}),
        ("roe提升", {"ROE"}),
        ("毛利率和净利率", {"毛利率", "净利率"}),
        ("每股收益EPS", {"EPS"}),
        ("对应PE为19倍，PB 2倍", {"PE", "PB"}),
        ("PEG与OPEX", set()),  # Latin synonyms only match whole words
        ("目标价45元", {"目标价"}),
        ("经营性现金流净额", {"现金流"}),
        ("研发投入占比", {"研发费用"}),
        ("市场份额与出货量", {"市占率", "出货量"}),
        ("在手订单充足，产能释放", {"订单", "产能"}),
    ],
)
def test_metric_synonyms(text, metrics):
    assert set(extract(text).metrics) == metrics


def test_numbers_with_units():
    nums = extract("营业收入46.51亿元，同比增长39.7%，净利润1,234万元，毛利率-2.0pct，PE 19倍，提升2个百分点").numbers
    got = [(n.value, n.unit) for n in nums]
    assert got == [(46.51, "亿元"), (39.7, "%"), (1234.0, "万元"), (-2.0, "个百分点"), (19.0, "倍"),
                   (2.0, "个百分点")]
    assert nums[0].raw == "46.51亿元"


def test_years_and_codes_are_not_numbers():
    nums = extract("贵州茅台（600519）2023年营收1500亿元").numbers
    assert [(n.value, n.unit) for n in nums] == [(1500.0, "亿元")]


@pytest.mark.parametrize(
    ("text", "dirs"),
    [
        ("营收同比增长20%", {"up"}),
        ("毛利率提升，费用率上升", {"up"}),
        ("净利润下降，收入下滑", {"down"}),
        ("亏损收窄", {"down"}),
        ("收入增加但毛利率减少", {"up", "down"}),
        ("负增长", {"down"}),
        ("维持买入评级", set()),
    ],
)
def test_directions(text, dirs):
    assert set(extract(text).directions) == dirs


def test_companies_and_codes():
    f = extract("我们推荐贵州茅台(600519.SH)与五粮液（000858）")
    assert f.companies == {"贵州茅台", "五粮液"}
    assert f.codes == {"600519", "000858"}
    assert "星河科技" in extract("报告期内，星河科技实现营收10亿元").companies
    assert extract("毛利率下降", company="星河科技").companies == {"星河科技"}
    # phrases ending in a company suffix are not names
    assert not extract("，公司新材料业务增长").companies
    assert extract("代码300750").codes == {"300750"}
    assert not extract("营收300750万元").codes


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("贵州茅台（600519）：业绩符合预期", ("贵州茅台", "600519")),
        ("贵州茅台(600519.SH)年报点评", ("贵州茅台", "600519")),
        ("贵州茅台[600519]深度报告", ("贵州茅台", "600519")),
        ("宁德时代300750：储能放量", ("宁德时代", "300750")),
        ("【华泰证券】宁德时代（300750）：点评", ("宁德时代", "300750")),
        ("腾讯控股(0700.HK)：游戏回暖", ("腾讯控股", "00700.HK")),
        ("光伏行业周报：硅料价格见底", (None, None)),
        ("", (None, None)),
    ],
)
def test_parse_title_company(title, expected):
    assert parse_title_company(title) == expected


def test_tokenize_uses_finance_dictionary_and_drops_punctuation():
    toks = tokenize("归母净利润同比增长39.7%，毛利率1,234，ROE！")
    assert "归母净利润" in toks and "同比增长" in toks and "毛利率" in toks
    assert "1234" in toks and "roe" in toks
    assert not any(t in {"，", "！", "%"} for t in toks)


def test_tokenize_stopwords_and_add_words():
    assert "的" not in tokenize("公司的毛利率")
    assert "的" in tokenize("公司的毛利率", stopwords=False)
    assert "星汉霓虹" not in tokenize("星汉霓虹营收增长")
    add_words(["星汉霓虹"])
    assert "星汉霓虹" in tokenize("星汉霓虹营收增长")


def test_extract_is_deterministic_and_hashable():
    a = extract("2024Q1营收同比增长12.5%")
    b = extract("2024Q1营收同比增长12.5%")
    assert a == b and hash(a) == hash(b)


def test_year_range_with_year_suffix_on_both_ends_expands():
    from fincprg.finance import extract

    years = sorted(p.year for p in extract("2022年至2024年医药行业创新药的最新情况").periods)
    assert years == [2022, 2023, 2024]


# Every title form the pipeline meets; ingest (Report.company) and generate/mine/topics share this parser.
TITLE_FORMS = [
    # plain and exchange-suffixed codes, full- and half-width brackets
    ("贵州茅台（600519）：业绩符合预期", ("贵州茅台", "600519")),
    ("贵州茅台(600519.SH)：高端白酒龙头", ("贵州茅台", "600519")),
    ("「贵州茅台（600519.SS）」", ("贵州茅台", "600519")),
    ("ＴＣＬ科技（０００１００．ＳＺ）：面板周期底部", ("TCL科技", "000100")),
    ("北方华创（002371.SZ）深度报告", ("北方华创", "002371")),
    ("贝特瑞（835185.BJ）：负极龙头", ("贝特瑞", "835185")),
    # exchange prefix inside the bracket, suffix word after it
    ("「中国平安(SH.601318)点评」", ("中国平安", "601318")),
    ("中国平安（SH601318）：寿险改革见效", ("中国平安", "601318")),
    # report-label prefixes
    ("「公司点评-贵州茅台（600519）」", ("贵州茅台", "600519")),
    ("公司深度：宁德时代（300750）：储能第二曲线", ("宁德时代", "300750")),
    ("【华泰证券】宁德时代（300750）：点评", ("宁德时代", "300750")),
    ("【券商】公司点评｜贵州茅台（600519）", ("贵州茅台", "600519")),
    # square brackets and bare codes
    ("「贵州茅台[600519]」", ("贵州茅台", "600519")),
    ("贵州茅台【600519】年报点评", ("贵州茅台", "600519")),
    ("「贵州茅台600519」", ("贵州茅台", "600519")),
    ("宁德时代300750：储能放量", ("宁德时代", "300750")),
    ("贵州茅台-600519-深度报告", ("贵州茅台", "600519")),
    # report words glued to the name, share-class suffixes, ST names, a rating in the bracket
    ("贵州茅台点评（600519）", ("贵州茅台", "600519")),
    ("寒武纪-U（688256）：收入高增", ("寒武纪", "688256")),
    ("*ST华仪（600290）：风险提示", ("*ST华仪", "600290")),
    ("中国平安（601318，买入）", ("中国平安", "601318")),
    # Hong Kong and US listings
    ("「腾讯控股（00700.HK）」", ("腾讯控股", "00700.HK")),
    ("腾讯控股(0700.HK)：游戏回暖", ("腾讯控股", "00700.HK")),
    ("美团-W（3690.HK）：外卖稳健", ("美团", "03690.HK")),
    ("中国平安（HK.2318）", ("中国平安", "02318.HK")),
    ("计算机行业点评报告：英伟达（NVDA.O）：数据中心高增", ("英伟达", "NVDA.O")),
    # no company: industry, strategy, macro, bond reports; issue numbers and months are no codes
    ("「半导体行业周报：存储价格触底回升」", (None, None)),
    ("光伏行业周报：硅料价格见底", (None, None)),
    ("2024年A股策略展望：估值处于底部区间，把握结构性机会", (None, None)),
    ("2023年中期A股策略：经济复苏斜率放缓，关注科技与红利双主线", (None, None)),
    ("宏观周报：降准落地", (None, None)),
    ("利率债周报：降准落地，十年期国债收益率下行至2.4%附近", (None, None)),
    ("铜月报（202409）：铜价维持涨势", (None, None)),
    ("食品饮料（2134）：乳企渠道调整见效", (None, None)),
    ("低空经济发展研究报告（2024）", (None, None)),
    ("电子行业：重点推荐中芯国际（688981）", (None, None)),
    ("营收300750万元", (None, None)),
    ("", (None, None)),
]


@pytest.mark.parametrize(("title", "expected"), TITLE_FORMS)
def test_parse_title_company_forms(title, expected):
    assert parse_title_company(title) == expected


def test_tokens_depend_on_the_word_set_not_on_history():
    from fincprg.finance import tokenize, use_words

    text = "星汉霓虹与云岭酒业的营业收入"
    use_words(["云岭酒业"])
    first = tokenize(text)
    use_words(["星汉霓虹"])
    use_words(["星汉霓虹", "云岭酒业"])
    use_words(["云岭酒业"])  # same set as at first, after other sets were in use
    assert tokenize(text) == first and "云岭酒业" in first
    use_words(())


def test_question_core_drops_frame_fillers_and_keeps_the_asking_word():
    from fincprg.finance import question_core

    assert question_core("中核科技2023年一季度的营业收入为多少？") == "中核科技2023年一季度营业收入多少"
    assert question_core("中核科技2023年一季度营业收入能达到了多少") == "中核科技2023年一季度营业收入多少"
    assert question_core("营收增长的原因是什么？") == "营收增长原因是什么"  # 是 goes only before 多少
    assert question_core("？") == "？"  # nothing left: the text itself


def test_a_cost_ratio_or_a_capability_holds_no_metric():
    from fincprg.finance import extract
    assert extract("2021年成本收入比为27.6%，同比下降0.9个百分点").metrics == frozenset()
    assert extract("2021年成本收入比为27.6%，营业收入同比增长10.8%").metrics == frozenset({"营业收入"})
    assert "产能" not in extract("公司生产能力持续提升").metrics


def test_the_plain_tokenizer_is_jiebas_own_and_fincprgs_words_stay_out_of_it():
    """inside_word reads jieba's own dictionary from one shared read of it; the finance tokenizer's words
    (added to its copy) never reach it."""
    import jieba

    from fincprg.finance.lexicon import _tokenizer, plain_tokenizer, use_words

    text = "兆驰股份业绩稳健，我国新能源汽车销量增长"
    use_words({"兆驰股份"})
    try:
        assert "兆驰股份" in _tokenizer().lcut(text)
        assert plain_tokenizer().lcut(text, HMM=False) == jieba.lcut(text, HMM=False)
        assert "兆驰股份" not in plain_tokenizer().lcut(text, HMM=False)
        assert plain_tokenizer().total == jieba.dt.total and plain_tokenizer().FREQ == jieba.dt.FREQ
    finally:
        use_words(set())


def test_the_plain_tokenizer_refuses_words_it_would_add_to_every_tokenizer():
    """It shares jieba's dictionary with the finance tokenizer's source: add_word, del_word and suggest_freq
    (which write through add_word) raise, and the shared dictionary keeps its words."""
    from fincprg.finance.lexicon import _default_dictionary, plain_tokenizer

    tok = plain_tokenizer()
    for change in (lambda: tok.add_word("兆驰股份"), lambda: tok.del_word("银行"),
                   lambda: tok.suggest_freq("兆驰股份", tune=True)):
        with pytest.raises(TypeError, match="shares jieba's dictionary"):
            change()
    assert "兆驰股份" not in _default_dictionary()[0] and _default_dictionary()[0]["银行"] > 0


def test_a_word_in_front_of_a_coded_name_is_no_part_of_the_company():
    # the suffix pattern (…生物) would read 「同行安图生物」 as a name; the code says the company is 安图生物
    facts = extract("同行安图生物(603658)原材料自产率能达到70%。")
    assert "安图生物" in facts.companies and "同行安图生物" not in facts.companies
