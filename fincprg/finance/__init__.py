"""Shared finance knowledge: tokenisation, entities, periods, metrics, numbers and directions.

Used by generation (templates, completion), mining (finance veto) and evaluation (BM25 tokens)::

    >>> from fincprg.finance import extract, tokenize
    >>> f = extract("星河科技2024Q1营业收入同比增长12.5%")
    >>> sorted(f.metrics), sorted(f.directions), [p.part for p in f.periods]
    (['营业收入'], ['up'], ['Q1'])
"""
from fincprg.finance.extract import (
    METRIC_SYNONYMS,
    FinanceFacts,
    Number,
    Period,
    extract,
    parse_title_company,
)
from fincprg.finance.lexicon import add_words, stopwords, tokenize, user_words

__all__ = [
    "METRIC_SYNONYMS",
    "FinanceFacts",
    "Number",
    "Period",
    "add_words",
    "extract",
    "parse_title_company",
    "stopwords",
    "tokenize",
    "user_words",
]
