"""verify's bases (fincprg/verify/bases.py): a year-on-year change asked where the source compares with another
base, and a company's market value asked where the source values only its parts (shapes from blind readings,
sources made up). Each rule drops the failing reading and keeps the acceptable one beside it."""
from fincprg.verify.bases import check_base, check_valuation_parts, check_valued_part
from fincprg.verify.rules import check_strict

_LISTING = "募集资金到位后公司偿还部分借款，2019年财务费用同比减少1.5亿元，资产负债率从上市前的52%降至31%。"


def test_a_yoy_change_is_not_answered_by_a_change_from_another_base():
    v = check_base("某能源2019年资产负债率同比下降了多少？", _LISTING)
    assert v is not None and v.reason == "not_answered" and "上市前" in v.detail
    # the same sentence answers the metric it compares year on year
    assert check_base("某能源2019年财务费用同比下降了多少？", _LISTING) is None
    # a year-end balance compared with the last year-end is another base; with the last year it is the same
    assert check_base("某银行2021年资产负债率同比下降了多少？", "资产负债率较上年末下降2pct至45%。") is not None
    assert check_base("某银行2021年资产负债率同比下降了多少？", "资产负债率较上年下降2pct至45%。") is None
    # a quarter's change on the previous quarter, in the clause after the figure
    assert check_base("某科技2019年四季度营收的同比变化幅度是多少？", "19Q4单季营收2.2亿元，环比增长55.6%。") is not None
    # ... but not where the year-on-year change follows the figure and 环比 is another clause's
    both = "Q4环比大幅改善 19Q4单季营收2.2亿元，同比增长55.6%，环比增长55.5%。"
    assert check_base("某科技2019年四季度营收的同比变化幅度是多少？", both) is None
    # a change asked on another base is none of this rule's business
    assert check_base("某能源2019年资产负债率较上市前下降了多少？", _LISTING) is None
    # the company's name against the metric, with no year between, is read off the word asked
    v = check_base("某能源资产负债率同比下降了多少？", _LISTING, ["某能源"])
    assert v is not None and v.reason == "not_answered"


_PARTS = ("新业务中预计快运业务2022年收入300亿元，给予1.7倍PS，价值510亿市值；其他新业务收入350亿元，给予1.5倍PS，"
          "价值525亿市值。")


def test_a_market_value_of_parts_is_no_value_of_the_company():
    v = check_valuation_parts("某物流2022年市值的预测值是多少？", _PARTS, ["某物流"])
    assert v is not None and v.reason == "vague"
    # with the whole stated (综合, the company's name) the company's value is answered
    whole = _PARTS + "综合预计某物流2022年可以实现5000亿市值。"
    assert check_valuation_parts("某物流2022年市值的预测值是多少？", whole, ["某物流"]) is None
    # one value is the company's; a business asked by name is a part asked as a part
    assert check_valuation_parts("某物流2022年市值的预测值是多少？", "给予30倍PE，对应市值4800亿。", ["某物流"]) is None
    assert check_valuation_parts("某物流快运业务2022年市值的预测值是多少？", _PARTS, ["某物流"]) is None


def test_the_strict_checks_apply_both_bases():
    assert check_strict("某能源2019年资产负债率同比下降了多少？", _LISTING, "某能源：上市首年", _LISTING,
                         frozenset({"某能源"})) is not None
    assert check_strict("某物流2022年市值的预测值是多少？", _PARTS, "某物流：生态赋能", _PARTS,
                         frozenset({"某物流"})) is not None


def test_a_valuation_of_a_part_is_no_valuation_of_the_company():
    injected = "测算重组后拟置入资产估值较可比公司低估明显，考虑重组完成对公司估值体系将带来重大变化。"
    v = check_valued_part("某建材2021年估值是否合理？", injected)
    assert v is not None and v.reason == "not_answered"
    # the company's own level beside it answers the question
    assert check_valued_part("某建材2021年估值是否合理？", injected + "公司21年PE、PB分别为8.3x、1.2x，低于可比公司。") is None
    assert check_valued_part("某建材2021年估值是否合理？", "公司当前估值较低，对应21年PE为8倍。") is None
    # the part asked by name is the part's valuation
    assert check_valued_part("某建材拟置入资产估值是否合理？", injected) is None


def test_a_cost_to_income_ratio_states_no_revenue():
    cost = "支出端，2021年部分常态化支出力度加大，成本收入较上年提高2.59pct至21.52%。"
    v = check_strict("某银行2021年收入较上年同期变化了多少？", cost, "某银行：战略推进", cost, frozenset({"某银行"}))
    assert v is not None and v.reason == "not_in_sentence"
    rev = "2021年营业收入较上年增长10.8%，成本收入比21.52%。"
    assert check_strict("某银行2021年收入较上年同期变化了多少？", rev, "某银行：战略推进", rev, frozenset({"某银行"})) is None
