"""The LLM layer: one OpenAI-compatible client (bounded, retried, cached, costed), prompt loading,
tolerant JSON parsing.

``import fincprg.llm`` is cheap: the ``openai`` package is imported when the first request is sent.
"""
from fincprg.llm.auth import LLMAuthError, LLMUnreachableError
from fincprg.llm.client import LLMClient, LLMResult, price_for
from fincprg.llm.jsonparse import JSONParseError, ParsedJSON, parse_json, parse_json_detailed
from fincprg.llm.prompts import Prompt, load_prompt

__all__ = ["LLMAuthError", "LLMUnreachableError", "LLMClient", "LLMResult", "JSONParseError", "ParsedJSON", "Prompt", "load_prompt", "parse_json",
           "parse_json_detailed", "price_for"]
