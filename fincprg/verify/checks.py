"""The strict reader's checks of one sentence or passage query, in the order a reader applies them: what the
query is (boilerplate, vague), whether its sentence names the ask, whose figure it is, and whether the source
states the fact in the reading asked (an event, an amount, a level, a base, a topic's state or impact)."""
from __future__ import annotations

from fincprg.verify.verdict import Verdict
from fincprg.verify.bases import check_base, check_valuation_parts, check_valued_part
from fincprg.verify.figures import (check_amount, check_change_stated, check_combined, check_earnings_forecast,
                                    check_price_level, check_rate_level, check_risk, check_target_as_forecast,
                                    check_valuation)
from fincprg.verify.readers import norm
from fincprg.verify.scopes import check_market_as_company, check_part_whole
from fincprg.verify.events import check_event
from fincprg.verify.strict import check_garbled, check_in_sentence, check_vague, check_whole_year
from fincprg.verify.topical import check_topical, check_trend


def strict_checks(query: str, passage: str, title: str, sentence: str | None, names: frozenset[str]
                  ) -> Verdict | None:
    """A strict reader's checks (:mod:`.strict`): boilerplate, vague asks, the sentence states the ask, part
    as whole, a market's volume asked as the company's, events with specifics (dated by the year on their
    name), a whole year's figure of a year the source gives only in part; open asks about a topic or a metric's
    trend (:mod:`.topical`); and of figures (:mod:`.figures`): an amount or a rate's level the source gives only
    as a change, a part of a combined category or a remainder, a multiple at today's price asked as reached, an
    earnings forecast for years the source does not forecast or forecasts only as a plan's targets, a change
    whose period has no number, a risk only listed; a change asked against a base the source does not use, a
    value or a valuation of parts asked as the whole's (:mod:`.bases`). A sentence query is read against its
    sentence, a passage query against its passage and title."""
    source = sentence if sentence else f"{passage}\n{title}"
    return (check_garbled(query) or check_vague(query, source, names)
            or (check_in_sentence(query, sentence, names) if sentence else None)
            or _part_whole(query, passage, title, sentence, names) or check_market_as_company(query, source, names)
            or check_event(query, source, names) or check_whole_year(query, source, names)
            or check_amount(query, source, names) or check_rate_level(query, source) or check_price_level(query, source)
            or check_combined(query, source, names)
            or check_valuation(query, source) or check_earnings_forecast(query, source)
            or check_target_as_forecast(query, source) or check_change_stated(query, source)
            or check_risk(query, source)
            or check_topical(query, source, names) or check_trend(query, source, names)
            or check_base(query, source, names) or check_valuation_parts(query, source, names)
            or check_valued_part(query, source))


def _part_whole(query: str, passage: str, title: str, sentence: str | None, names: frozenset[str]) -> Verdict | None:
    """Part as whole; a sentence is read in its passage, since a sentence that opens on its figure speaks of
    the subject of the one before (「顶立科技是…龙头。上半年实现净利润7671万元」)."""
    if not sentence:
        return check_part_whole(query, f"{passage}\n{title}", names)
    p, s = norm(passage), norm(sentence)
    at = p.find(s)
    if at < 0:
        return check_part_whole(query, sentence, names)
    return check_part_whole(query, p[:at + len(s)], names, start=at)
