"""``fincprg estimate``: what a build will send to the LLM, cost and take, before it pays for anything.

:func:`fincprg.estimate.run.estimate` renders the real prompts over the chunked corpus, counts their
tokens, prices them, counts the mining pairs from the traversal itself and writes ``OUT/estimate.json``;
:mod:`fincprg.estimate.compare` puts that estimate next to what a build then sent.
"""
