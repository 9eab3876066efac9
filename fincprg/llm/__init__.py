"""The LLM layer: one OpenAI-compatible client (bounded, retried, cached, costed), prompt loading,
tolerant JSON parsing.

``import fincprg.llm`` is cheap: the ``openai`` package is imported when the first request is sent.
"""
from fincprg.llm.client import LLMClient, LLMResult, price_for
from fincprg.llm.jsonparse import JSONParseError, parse_json
from fincprg.llm.prompts import Prompt, load_prompt

__all__ = ["LLMClient", "LLMResult", "JSONParseError", "Prompt", "load_prompt", "parse_json", "price_for"]
