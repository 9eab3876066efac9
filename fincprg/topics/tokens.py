"""The c-TF-IDF vocabulary of title topics: finance tokens less report boilerplate and bare figures.

Both engines count these tokens (the native one per title, BERTopic's vectorizer per joined topic).
"""
from __future__ import annotations

import re

# Words every report title uses; they would otherwise top the c-TF-IDF keywords of many topics.
REPORT_STOPWORDS = frozenset(
    "行业 周报 月报 年报 季报 日报 点评 报告 研究 深度 跟踪 系列 专题 分析 公司 投资 策略 关注 建议 "
    "观点 简评 快评 动态 事件 周度 月度 年度 双周 周观点 评级 首次 覆盖 维持 买入 增持 推荐 第 周 月 年 "
    "季度 有望 持续 以及 进一步 中国 我国 市场 发展 数据 情况 主要 相关 整体 加速 趋势 展望 回顾 "
    "年前 年后 一季度 二季度 三季度 四季度 上半年 下半年 全年 同比 环比 单季 预期 超预期".split()
)
_NUMERIC = re.compile(r"^[\d.%]+[a-z]?$")


def topic_tokens(text: str) -> list[str]:
    """Tokens for the c-TF-IDF vocabulary: finance tokenizer minus boilerplate and bare numbers."""
    from fincprg.finance import tokenize

    return [t for t in tokenize(text) if t not in REPORT_STOPWORDS and not _NUMERIC.match(t) and len(t) > 1]
