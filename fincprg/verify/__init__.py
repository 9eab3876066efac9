"""Verify: keep or drop each generated query with a reason, by a second reading that is not the generator's.

One module per concern, each a pure function over texts and records:

* :mod:`fincprg.finance.crosscheck`: verify's own reading of metric, direction, year, part of year, actual vs
  forecast (below the stages: mining's topic veto reads its trend rule too);
* :mod:`.subject`: the company/industry a query names must be a subject of its source;
* :mod:`.answer`: every fact the query asks is in the source with the same reading;
* :mod:`.wording`, :mod:`.figures` and :mod:`.forecasts`: a strict reader's rules (boilerplate, vague asks, part as whole, events
  without specifics; amounts and rate levels given only as changes, combined categories, risks only listed);
* :mod:`.topical`: an open ask about a topic, or a metric's trend, needs a source stating it with specifics
  or a figure, not only an outlook;
* :mod:`.related`: an intent pairs related companies only;
* :mod:`.roundtrip`: the query retrieves its own source (character BM25 over the corpus), and not many
  unrelated reports equally well;
* :mod:`.judge`: the optional LLM judge; :mod:`.sources`: report subjects and what a query is read against;
  :mod:`.stage`: the stage.

Each rule is declared beside its check (:func:`.registry.rule`: id, levels, reasons, switch, doc, example) and
reads one :class:`.reading.Reading`; :mod:`.rules` loads them all and applies them in the registry's order.
"""
