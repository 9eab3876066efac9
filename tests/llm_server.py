"""Local OpenAI-compatible HTTP server fixture (filled in by the LLM-layer work)."""
