"""Errors of `lgembed.models`, named as the `openai` SDK names them.

Programs written for langchain-openai catch `openai.APIStatusError`, `openai.RateLimitError`,
`openai.APIConnectionError`, `openai.APITimeoutError`; lgembed does not use that SDK, so
it defines classes with the same names and attributes (`status_code`, `body`, `message`)
here. Each text names the URL, the HTTP status and the server's own message, never the
API key. `APIConnectionError` is also a `ConnectionError`, `APITimeoutError` a `TimeoutError`.
"""

from __future__ import annotations

from typing import Any

__all__ = (
    "APIConnectionError",
    "APIError",
    "APIStatusError",
    "APITimeoutError",
    "BadRequestError",
    "RateLimitError",
    "OutputParserException",
)


class APIError(Exception):
    """Any failure talking to the model server; `url` is the request URL."""

    def __init__(self, text: str, *, url: str | None = None) -> None:
        super().__init__(text)
        self.url = url


class APIStatusError(APIError):
    """The server answered with an error status (`status_code`, parsed `body`, its `message`)."""

    def __init__(
        self, text: str, *, url: str | None = None, status_code: int = 0, body: Any = None, message: str | None = None
    ) -> None:
        super().__init__(text, url=url)
        self.status_code = status_code
        self.body = body
        self.message = message


class BadRequestError(APIStatusError):
    """HTTP 400 (a request the server refused: unknown field, bad grammar, context too long)."""


class RateLimitError(APIStatusError):
    """HTTP 429 after the retries (the server is busy; it may send Retry-After)."""


class APIConnectionError(APIError, ConnectionError):
    """No usable answer: connection refused or lost, or a stream cut before its end."""


class APITimeoutError(APIConnectionError, TimeoutError):
    """The server did not answer (or send the next event) within `timeout` seconds."""


class OutputParserException(ValueError):
    """A structured-output reply that does not parse (langchain-core's class name)."""
