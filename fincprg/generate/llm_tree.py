"""Query trees from an LLM (FinCPRG §3.1.2): one call per passage -> passage query + one query per sentence.

Render and parse are separate, pure functions; :class:`LLMTreeGenerator` wires them to the client:

1. render every passage with the versioned ``hierarchical_query`` prompt and send all requests at
   once (bounded concurrency, cache, retries live in :class:`fincprg.llm.LLMClient`);
2. parse + validate each answer: JSON (tolerant), schema, and ``len(sentence_queries) == N``;
3. for invalid answers, re-ask up to ``generate.reask`` times (default once) in one more concurrent
   round, appending the model's answer and the validation error to the conversation;
4. resolve: a valid answer gives a :class:`QueryTree`. An answer that is valid except for its length
   (from any round) is kept *aligned*: truncated or padded with "" (= unclear sentence), and the
   tree's ``provenance["warning"]`` says so. :func:`failure_for` turns that warning into a
   ``Failure(kind="misaligned")`` record, which the generate stage writes *in addition* to the
   queries, so the problem is visible without losing the usable part. A passage with no usable
   answer returns ``Failure(stage="generate", kind="request_failed" | "bad_json" | "schema")`` with
   the raw answer. Every input gets exactly one result, in order.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from fincprg.config import GenerateConfig
from fincprg.generate.base import PassageInput, QueryTree
from fincprg.llm import JSONParseError, LLMClient, Prompt, parse_json
from fincprg.llm.prompts import stage_prompt
from fincprg.records import Failure

log = logging.getLogger(__name__)

Messages = list[dict[str, Any]]
WARNING_PREFIX = "misaligned:"
# what render() and _reask() pass to the template: a user's prompt_file may use only these
PROMPT_VARIABLES = ("sentences", "title", "error", "n")


@dataclass(frozen=True)
class TreeAnswer:
    """A schema-valid answer (its length may still differ from the number of sentences)."""

    passage_query: str
    sentence_queries: tuple[str, ...]


@dataclass(frozen=True)
class TreeProblem:
    """Why an answer is not usable as is. ``partial`` is set when only the length is wrong."""

    kind: str  # "bad_json" | "schema" | "misaligned"
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


def parse_tree(text: str | None, n: int) -> TreeAnswer | TreeProblem:
    """Parse and validate one answer against a passage of ``n`` sentences (pure)."""
    try:
        data = parse_json(text)
    except JSONParseError as e:
        return TreeProblem("bad_json", f"the answer is not valid JSON ({e})")
    if isinstance(data, list) and len(data) == 1 and isinstance(data[0], dict):
        data = data[0]  # some models wrap the object in a list
    if not isinstance(data, dict):
        return TreeProblem("schema", f"expected a JSON object, got a JSON {type(data).__name__}")
    missing = [k for k in ("passage_query", "sentence_queries") if k not in data]
    if missing:
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
    answer = TreeAnswer(pq, tuple(q or "" for q in queries))
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
    """The extra ``misaligned`` Failure record for a tree kept after alignment, else None."""
    warning = tree.provenance.get("warning")
    if isinstance(warning, str) and warning.startswith(WARNING_PREFIX):
        return Failure(stage="generate", item_id=tree.passage_id, kind="misaligned", message=warning)
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

    def _provenance(self, reasked: bool) -> dict[str, Any]:
        return {"generator": "llm", "model": self.client.cfg.model, "template": self.prompt.id,
                "version": self.prompt.version, "reasked": reasked}

    def generate(self, items: list[PassageInput]) -> list[QueryTree | Failure]:
        """One result per item, in order: a QueryTree, or a Failure carrying the raw answer."""
        n_sent = [len(it.sentences) for it in items]
        convs: list[Messages] = [self.render(it) for it in items]
        done: dict[int, QueryTree] = {}
        partial: dict[int, tuple[TreeAnswer, str]] = {}  # latest length-only-wrong answer + its message
        last: dict[int, tuple[str, str, str | None]] = {}  # kind, message, raw answer
        pending = list(range(len(items)))
        for rnd in range(1 + self.cfg.reask):
            if not pending:
                break
            desc = "generate (llm)" if rnd == 0 else f"generate (re-ask {rnd})"
            results = self.client.chat_many([convs[i] for i in pending], desc=desc, progress=self.progress)
            retry: list[int] = []
            for i, res in zip(pending, results):
                if not res.ok:
                    last[i] = ("request_failed", res.error or "no answer", None)
                    continue  # transport errors were already retried by the client
                parsed = parse_tree(res.text, n_sent[i])
                if isinstance(parsed, TreeAnswer):
                    done[i] = QueryTree(items[i].passage.id, parsed.passage_query, parsed.sentence_queries,
                                        self._provenance(rnd > 0))
                    continue
                last[i] = (parsed.kind, parsed.message, res.text)
                if parsed.partial is not None:
                    partial[i] = (parsed.partial, parsed.message)
                if rnd < self.cfg.reask:
                    convs[i] = self._reask(convs[i], res.text or "", parsed, n_sent[i])
                    retry.append(i)
            pending = retry

        out: list[QueryTree | Failure] = []
        for i, it in enumerate(items):
            if i in done:
                out.append(done[i])
            elif i in partial:
                answer, msg = partial[i]
                prov = self._provenance(self.cfg.reask > 0)
                action = "truncated" if len(answer.sentence_queries) > n_sent[i] else "padded with \"\""
                prov["warning"] = f"{WARNING_PREFIX} {msg}; kept the aligned part ({action})"
                out.append(QueryTree(it.passage.id, answer.passage_query, align(answer, n_sent[i]), prov))
            else:
                kind, msg, raw = last.get(i, ("request_failed", "no answer", None))
                out.append(Failure(stage="generate", item_id=it.passage.id, kind=kind, message=msg, raw=raw))
        n_fail = sum(isinstance(r, Failure) for r in out)
        if n_fail:
            log.info("llm query trees: %d/%d passages failed (see failures.jsonl)", n_fail, len(items))
        return out
