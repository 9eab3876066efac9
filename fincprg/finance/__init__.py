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
from fincprg.finance.lexicon import (
    add_words,
    extra_words,
    question_core,
    stopwords,
    tokenize,
    use_words,
    user_words,
)


def register_companies(reports) -> int:
    """Make the company names of a build's reports (metadata and titles) the tokenizer's extra words.

    Each stage that tokenises calls this first with the same reports, so its output depends on
    the corpus alone, not on which stages or builds ran earlier in the same process.
    Returns the number of names when the word set changed, else 0.
    """
    names = set()
    for r in reports:
        if r.company:
            names.add(r.company)
        name, _ = parse_title_company(r.title)
        if name:
            names.add(name)
    return len(names) if use_words(names) else 0


__all__ = [
    "METRIC_SYNONYMS",
    "FinanceFacts",
    "Number",
    "Period",
    "add_words",
    "extra_words",
    "extract",
    "parse_title_company",
    "question_core",
    "register_companies",
    "stopwords",
    "tokenize",
    "use_words",
    "user_words",
]
