"""Query trees from an LLM (FinCPRG §3.1.2): one call per passage -> passage query + one query per sentence.

Render and parse are separate, pure functions; :class:`LLMTreeGenerator` wires them to the client:

1. render every passage with the versioned ``hierarchical_query`` prompt and send all requests at
   once (bounded concurrency, cache, retries live in :class:`fincprg.llm.LLMClient`);
2. parse + validate each answer: JSON (tolerant), schema, ``len(sentence_queries) == N``, and
   not cut off (an answer whose JSON never closes, e.g. at ``max_tokens``, is ``truncated``: its
   last string may end mid-word, ``"销售费用率为18.6``, so that query is dropped, never exported);
3. for invalid answers, re-ask up to ``generate.reask`` times (default once) in one more concurrent
   round, appending the model's answer and the validation error to the conversation;
4. resolve: a valid answer gives a :class:`QueryTree`. An answer that is valid except for its length
   or its cut-off tail (from any round) is kept *aligned*: truncated or padded with "" (= unclear
   sentence), and the tree's ``provenance["warning"]`` says so. :func:`failure_for` turns that
   warning into a ``Failure(kind="misaligned" | "truncated")`` record, which the generate stage
   writes *in addition* to the queries, so the problem is visible without losing the usable part. A
   passage with no usable answer returns ``Failure(stage="generate", kind="request_failed" |
   "bad_json" | "schema" | "truncated")`` with the raw answer. Every input gets exactly one result,
   in order.

Only fully valid answers are cached (the client's ``accept``): every passage listed with a kind in
:data:`RETRYABLE_KINDS` is asked again by the next run of the stage (``fincprg build --retry-failed``),
while every valid answer is served from the cache, so the output equals a build in which the failed
passages had succeeded the first time. A valid re-ask answer is also cached under the passage's first
question (:meth:`LLMClient.remember`): the re-ask's own key holds the rejected first answer, so without
it a rebuild, a resume or ``--retry-failed`` would ask that passage again. A query's provenance does not
say whether its answer needed a re-ask: that is the history of one run (a fault, a cache hit), and the
output must not depend on it (the stage's ``llm.rejected`` count says how many answers were re-asked).

An answer that fails with HTTP 401/403 raises :class:`fincprg.llm.auth.LLMAuthError` (the build stops);
every error text and raw answer in a Failure has the API key masked (:mod:`fincprg.llm.redact`).
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from collections.abc import Iterable, Iterator
from typing import Any

from fincprg.config import GenerateConfig
from fincprg.generate.base import PassageInput, QueryTree
from fincprg.llm import JSONParseError, LLMClient, LLMResult, Prompt, parse_json_detailed
from fincprg.llm.prompts import stage_prompt
from fincprg.llm.redact import redact
from fincprg.llm.stream import ordered_stream
from fincprg.records import Failure

log = logging.getLogger(__name__)

Messages = list[dict[str, Any]]
WARNING_PREFIX = "misaligned:"
TRUNCATED_PREFIX = "truncated:"
# Failure kinds of passages whose answer was not cached: a re-run of the stage asks them again.
RETRYABLE_KINDS = frozenset({"request_failed", "bad_json", "schema", "misaligned", "truncated"})
# what render() and _reask() pass to the template: a user's prompt_file may use only these
PROMPT_VARIABLES = ("sentences", "title", "error", "n")


@dataclass(frozen=True)
class TreeAnswer:
    """A schema-valid answer (its length may still differ from the number of sentences)."""

    passage_query: str
    sentence_queries: tuple[str, ...]


@dataclass(frozen=True)
class TreeProblem:
    """Why an answer is not usable as is. ``partial`` is set when part of it is usable: only its
    length is wrong (misaligned), or it was cut off after some complete queries (truncated)."""

    kind: str  # "bad_json" | "schema" | "misaligned" | "truncated"
    message: str
    partial: TreeAnswer | None = None


def _as_query(value: Any) -> str | None:
    """One sentence query as text, or None if the item is not query-like."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if isinstance(value, dict):  # {"query": "..."} or {"1": "..."}: one string value
        strs = [v for v in value.values() if isinstance(v, str)]
        return strs[0].strip() if len(strs) == 1 else None
    return None


def _key_at(text: str, key: str) -> int:
    """Where ``"key":`` last appears in the answer (-1 if nowhere)."""
    hits = [m.start() for m in re.finditer(rf'"{key}"\s*:', text)]
    return hits[-1] if hits else -1


def parse_tree(text: str | None, n: int, finish_reason: str | None = None) -> TreeAnswer | TreeProblem:
    """Parse and validate one answer against a passage of ``n`` sentences (pure).

    An answer cut off before its JSON closes is a ``truncated`` problem: the queries it completed
    are kept as the partial answer, the one its cut ended in is dropped (set to "").
    """
    try:
        parsed = parse_json_detailed(text)
    except JSONParseError as e:
        if finish_reason == "length":
            return TreeProblem("truncated", f"the answer was cut off at the token limit before any JSON ({e})")
        return TreeProblem("bad_json", f"the answer is not valid JSON ({e})")
    data = parsed.value
    if isinstance(data, list) and len(data) == 1 and isinstance(data[0], dict):
        data = data[0]  # some models wrap the object in a list
    cut = ("the answer was cut off before its JSON closed"
           + (" (finish_reason=length: the token limit)" if finish_reason == "length" else "")
           + "; answer again, shorter")
    if not isinstance(data, dict):
        return TreeProblem("schema", f"expected a JSON object, got a JSON {type(data).__name__}")
    missing = [k for k in ("passage_query", "sentence_queries") if k not in data]
    if missing:
        if parsed.truncated:
            return TreeProblem("truncated", f"{cut} (missing {missing})")
        return TreeProblem("schema", f"missing key(s) {missing}; got keys {sorted(map(str, data))}")
    pq = _as_query(data["passage_query"])
    if pq is None:
        return TreeProblem("schema", "passage_query must be a string")
    sq = data["sentence_queries"]
    if not isinstance(sq, list):
        return TreeProblem("schema", f"sentence_queries must be a list of strings, got {type(sq).__name__}")
    queries = [_as_query(v) for v in sq]
    bad = [i for i, q in enumerate(queries) if q is None]
    if bad:
        return TreeProblem("schema", f"sentence_queries items {bad[:5]} are not strings")
    if parsed.cut_string:  # the string the cut ended in is incomplete: never export it
        if _key_at(text or "", "passage_query") > _key_at(text or "", "sentence_queries"):
            pq = ""  # the passage query came last, so the cut is in it
        elif queries:
            queries[-1] = ""
    answer = TreeAnswer(pq, tuple(q or "" for q in queries))
    if parsed.truncated and (parsed.cut_string or len(answer.sentence_queries) != n):
        detail = f"{len(answer.sentence_queries)} of {n} sentence_queries" + (
            "; the query it stopped in was dropped" if parsed.cut_string else "")
        return TreeProblem("truncated", f"{cut} ({detail})", answer)
    if len(answer.sentence_queries) != n:
        return TreeProblem(
            "misaligned",
            f"sentence_queries has {len(answer.sentence_queries)} items but there are {n} sentences",
            answer,
        )
    return answer


def align(answer: TreeAnswer, n: int) -> tuple[str, ...]:
    """Truncate or pad (with "" = unclear sentence) to exactly ``n`` sentence queries."""
    q = answer.sentence_queries[:n]
    return q + ("",) * (n - len(q))


def failure_for(tree: QueryTree) -> Failure | None:
    """The extra ``misaligned``/``truncated`` Failure record for a tree kept after alignment, else None."""
    warning = tree.provenance.get("warning")
    if isinstance(warning, str):
        for prefix in (WARNING_PREFIX, TRUNCATED_PREFIX):
            if warning.startswith(prefix):
                return Failure(stage="generate", item_id=tree.passage_id, kind=prefix[:-1], message=warning)
    return None


class LLMTreeGenerator:
    """TreeGenerator backed by an OpenAI-compatible LLM (see the module docstring).

    Args:
        client: the shared :class:`LLMClient` (its ``stats`` give tokens and cost afterwards).
        cfg: the ``generate`` config section (prompt name, language, reask count).
        progress: show tqdm bars for the request rounds.
    """

    name = "llm"

    def __init__(self, client: LLMClient, cfg: GenerateConfig, *, progress: bool = True) -> None:
        self.client = client
        self.cfg = cfg
        self.progress = progress
        self.prompt: Prompt = stage_prompt(cfg, allowed=PROMPT_VARIABLES, required=("sentences",),
                                           key="generate.prompt_file")

    def render(self, item: PassageInput) -> Messages:
        """The chat messages for one passage (system + user)."""
        return self.prompt.render(sentences=[s.text for s in item.sentences], title=item.report.title)

    def _reask(self, conv: Messages, answer: str, problem: TreeProblem, n: int) -> Messages:
        follow = self.prompt.render_block("reask", error=problem.message, n=n) if self.prompt.has("reask") \
            else f"{problem.message}. Answer again with valid JSON and exactly {n} sentence_queries."
        return [*conv, {"role": "assistant", "content": answer}, {"role": "user", "content": follow}]

    def _provenance(self) -> dict[str, Any]:
        return {"generator": "llm", "model": self.client.cfg.model, "template": self.prompt.id,
                "version": self.prompt.version}

    async def agenerate_one(self, item: PassageInput) -> QueryTree | Failure:
        """Ask for one passage's tree, re-asking with the validation error up to ``generate.reask`` times."""
        n = len(item.sentences)
        conv = first = self.render(item)
        partial: TreeProblem | None = None  # latest usable-in-part answer (misaligned or truncated)
        last: tuple[str, str, str | None] = ("request_failed", "no answer", None)  # kind, message, raw answer
        for rnd in range(1 + self.cfg.reask):
            parsed: list[TreeAnswer | TreeProblem] = []

            def accept(res: LLMResult, _parsed: list[TreeAnswer | TreeProblem] = parsed) -> bool:
                # only a fully valid tree may be cached (and served again from the cache)
                _parsed.append(parse_tree(res.text, n, res.finish_reason))
                return isinstance(_parsed[-1], TreeAnswer)

            res = await self.client.achat(conv, accept=accept)
            if not res.ok:
                last = ("request_failed", res.error or "no answer", None)
                break  # transport errors were already retried by the client
            answer = parsed[-1] if parsed else parse_tree(res.text, n, res.finish_reason)
            if isinstance(answer, TreeAnswer):
                if rnd > 0:  # so a rebuild finds it under the passage's own question
                    self.client.remember(first, res)
                return QueryTree(item.passage.id, answer.passage_query, answer.sentence_queries,
                                 self._provenance())
            last = (answer.kind, answer.message, res.text)
            if answer.partial is not None:
                partial = answer
            conv = self._reask(conv, res.text or "", answer, n)
        if partial is not None:
            answer = partial.partial
            assert answer is not None
            prov = self._provenance()
            action = "truncated" if len(answer.sentence_queries) > n else "padded with \"\""
            prefix = TRUNCATED_PREFIX if partial.kind == "truncated" else WARNING_PREFIX
            prov["warning"] = f"{prefix} {partial.message}; kept the aligned part ({action})"
            return QueryTree(item.passage.id, answer.passage_query, align(answer, n), prov)
        kind, msg, raw = last
        return Failure(stage="generate", item_id=item.passage.id, kind=kind, message=redact(msg) or kind,
                       raw=redact(raw))

    def stream(self, items: Iterable[PassageInput]) -> Iterator[QueryTree | Failure]:
        """One result per item, in order, with ``llm.concurrency`` requests in flight from the first
        passage to the last (one event loop and connection pool for the whole stream)."""
        window = max(4 * self.client.cfg.concurrency, 64)
        return ordered_stream(items, self.agenerate_one, window=window, close=self.client.aclose)

    def generate(self, items: list[PassageInput]) -> list[QueryTree | Failure]:
        """One result per item, in order: a QueryTree, or a Failure carrying the raw answer."""
        out = list(self.stream(items))
        n_fail = sum(isinstance(r, Failure) for r in out)
        if n_fail:
            log.info("llm query trees: %d/%d passages failed (see failures.jsonl)", n_fail, len(items))
        return out
