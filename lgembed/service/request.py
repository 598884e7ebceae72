"""A request as the API sees it, the answer it gives, and the checks of request values.

Why this module exists: every route of the Agent Server API reads a JSON body or query
parameters and answers JSON or a stream; they must refuse a bad value with the same
status (422) and the same kind of text, and page their lists the same way. The HTTP side
(`lgembed.service.http`) builds a `Request` and sends the `Response`; the routes
(`lgembed.service.api_*`) use the checks.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from lgembed.service.errors import Invalid
from lgembed.service.records import dumps

__all__ = (
    "Request",
    "Response",
    "check_thread_id",
    "contains",
    "descending",
    "flag",
    "int_value",
    "object_field",
    "page",
    "pagination",
)

_THREAD_ID = re.compile(r"^[^\x00-\x1f\x7f/]{1,256}$")
# thread ids: 1..256 characters, no control characters or slashes


class Request:
    """One HTTP request, as `lgembed.service.http` hands it over.

    Attributes:
        method: "GET", "POST", ...
        path: the path without the query, still percent-encoded.
        query: query parameters (name -> list of values).
        headers: header names in lower case -> value.
        body: the raw body (b"" when there is none).
    """

    __slots__ = ("method", "path", "query", "headers", "body")

    def __init__(
        self, method: str, path: str, query: dict[str, list[str]], headers: dict[str, str], body: bytes
    ) -> None:
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body

    def arg(self, name: str, default: str | None = None) -> str | None:
        """The first value of a query parameter."""
        values = self.query.get(name)
        return values[0] if values else default

    def json(self) -> dict:
        """The body as a JSON object (an empty body is `{}`).

        Raises:
            Invalid: when the body is not JSON, or not an object.
        """
        if not self.body.strip():
            return {}
        try:
            data = json.loads(self.body)
        except (ValueError, UnicodeDecodeError):
            raise Invalid("Invalid JSON in request body") from None
        if not isinstance(data, dict):
            msg = f'{self.body[:80].decode("utf-8", "replace")} is not of type "object"'
            raise Invalid(msg)
        return data


class Response:
    """An answer: `status`, `headers`, and `body` (bytes) or `chunks` (an iterator of bytes
    sent with chunked transfer encoding; closing it stops the work behind it)."""

    __slots__ = ("status", "headers", "body", "chunks")

    def __init__(
        self,
        status: int = 200,
        body: bytes = b"",
        headers: dict[str, str] | None = None,
        chunks: Iterator[bytes] | None = None,
    ) -> None:
        self.status = status
        self.body = body
        self.headers = headers or {}
        self.chunks = chunks

    @classmethod
    def json(cls, data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
        """A JSON answer."""
        return cls(status, dumps(data), {"Content-Type": "application/json", **(headers or {})})

    @classmethod
    def error(cls, status: int, detail: str) -> Response:
        """A `{"detail": ...}` error answer, as LangGraph's server sends them."""
        return cls.json({"detail": detail}, status)


def contains(superset: Any, subset: dict) -> bool:
    """Postgres' @> on objects, as LangGraph filters metadata and values."""
    if not isinstance(superset, dict):
        return False
    for key, value in subset.items():
        if key not in superset:
            return False
        if isinstance(value, dict) and isinstance(superset[key], dict):
            if not contains(superset[key], value):
                return False
        elif superset[key] != value:
            return False
    return True


def int_value(value: Any, name: str, default: int, minimum: int = 0) -> int:
    """A request value as an int of at least `minimum` (`default` when absent).

    Raises:
        Invalid: not an integer, or below `minimum`.
    """
    if value is None:
        return default
    try:
        n = int(value)
    except (TypeError, ValueError):
        msg = f"'{name}' must be an integer (got {value!r})"
        raise Invalid(msg) from None
    if n < minimum:
        msg = f"'{name}' must be at least {minimum} (got {n})"
        raise Invalid(msg)
    return n


def object_field(payload: dict, name: str) -> dict | None:
    """`payload[name]` when it is an object (None when absent).

    Raises:
        Invalid: it is present and not an object.
    """
    value = payload.get(name)
    if value is not None and not isinstance(value, dict):
        msg = f"'{name}' must be an object (got {type(value).__name__})"
        raise Invalid(msg)
    return value


def check_thread_id(value: Any) -> str:
    """A thread id from a request (any string of 1 to 256 characters without control characters or '/').

    Raises:
        Invalid: anything else.
    """
    if not isinstance(value, str) or not _THREAD_ID.match(value):
        msg = f"Invalid thread ID: must be 1 to 256 characters without control characters or '/' (got {value!r})"
        raise Invalid(msg)
    return value


def flag(value: str | None) -> bool:
    """A boolean query parameter: "1", "true" or "yes" (any case) is true."""
    return (value or "").lower() in ("1", "true", "yes")


def pagination(total: int, offset: int, limit: int) -> dict[str, str]:
    """The pagination headers of a page of a list of `total` items, as LangGraph's server sends them."""
    if offset + limit < total:
        return {"X-Pagination-Total": str(offset + limit + 1), "X-Pagination-Next": str(offset + limit)}
    return {"X-Pagination-Total": str(total)}


def page(items: list, payload: dict) -> tuple[list, dict[str, str]]:
    """The page of `items` a search body asks for (`offset`, `limit`: default 10) and its
    pagination headers.

    Raises:
        Invalid: an offset or limit that is not an integer, or too small.
    """
    offset = int_value(payload.get("offset"), "offset", 0)
    limit = int_value(payload.get("limit"), "limit", 10, 1)
    return items[offset : offset + limit], pagination(len(items), offset, limit)


def descending(payload: dict) -> bool:
    """Whether a search body asks for descending order (`sort_order`, default "desc")."""
    return (payload.get("sort_order") or "desc").lower() != "asc"
