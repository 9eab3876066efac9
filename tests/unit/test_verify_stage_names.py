"""Which names verify reads as the company a query asks about (issue 18)."""
from __future__ import annotations

from fincprg.verify.reading import Subjects
from fincprg.verify.rules import check_strict
from fincprg.verify.sources import asked_names


def test_another_listed_name_in_the_passage_is_not_the_company():
    # 机器人 is a listed stock's short name and a common word: 「科沃斯品牌服务机器人收入」 is a brand's revenue
    subjects = Subjects(frozenset({"科沃斯", "机器人"}), frozenset(), "company")
    assert asked_names("科沃斯2021年上半年收入达到了多少？", subjects) >= {"科沃斯"}
    assert "机器人" not in asked_names("科沃斯2021年上半年收入达到了多少？", subjects)
    sentence = "21H1，公司科沃斯品牌服务机器人收入26.1亿元，添可品牌智能家电收入20.4亿元。"
    names = asked_names("科沃斯2021年上半年收入达到了多少？", subjects)
    v = check_strict("科沃斯2021年上半年收入达到了多少？", sentence, "", sentence, names)
    assert v is not None and v.reason == "not_answered"
    v = check_strict("科沃斯2021年上半年收入达到了多少？", sentence, "", sentence, subjects.names)
    assert v is None  # with the stock's name read as the company, the brand's revenue passed
