"""Chat models for lgembed programs: `ChatOpenAI` for OpenAI-compatible servers.

Why this package exists: a LangGraph agent gets its model from langchain-openai; lgembed
ships a dependency-free equivalent (standard library HTTP) for the servers devices use
(llama.cpp, Ollama, vLLM, LM Studio) and for OpenAI itself, plus tool-call grammars that
keep small local models to well-formed calls (`lgembed.models.grammar`).

Importing this package loads no third-party module; `import lgembed.graph` does not import it.
"""

from __future__ import annotations

from lgembed.models.chat_openai import ChatOpenAI
from lgembed.models.errors import (
    APIConnectionError,
    APIError,
    APIStatusError,
    APITimeoutError,
    BadRequestError,
    OutputParserException,
    RateLimitError,
)
from lgembed.models.grammar import GrammarError

__all__ = (
    "APIConnectionError",
    "APIError",
    "APIStatusError",
    "APITimeoutError",
    "BadRequestError",
    "ChatOpenAI",
    "GrammarError",
    "OutputParserException",
    "RateLimitError",
)
