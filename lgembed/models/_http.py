"""The HTTP client of `ChatOpenAI`: standard library only, keep-alive, retries, SSE.

Why this module exists: a device-side agent talks to a model server next to it (llama.cpp,
Ollama, vLLM, LM Studio) over OpenAI's chat-completions API. langchain-openai uses the
`openai` SDK on httpx; lgembed adds no runtime dependency, so this is a small client on
`http.client`:

- one persistent connection per thread and server (keep-alive; `http.client` connections
  are not thread-safe, so each thread that calls the model gets its own);
- `timeout` applies to connecting and to each read (a slow server raises `APITimeoutError`);
- retries with exponential backoff and jitter (the `openai` SDK's schedule: 0.5 s doubling,
  capped at 8 s, times a random factor in [0.75, 1]) on connection errors, timeouts, 408,
  409, 429 and 5xx; a `Retry-After` header (seconds or HTTP date, up to 60 s) is honoured;
- a request on a kept-alive connection that the server had closed meanwhile is resent once
  on a new connection without counting as a retry (nothing was received);
- errors name the method, the URL, the status and the server's message, never the key
  (the key is masked if a server echoes it back);
- `stream()` parses server-sent events (`data:` lines, `[DONE]`); a stream cut before
  `[DONE]` raises `APIConnectionError` (not retried: chunks were already delivered).
"""

from __future__ import annotations

import http.client
import json
import random
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from lgembed.models.errors import (
    APIConnectionError,
    APIStatusError,
    APITimeoutError,
    BadRequestError,
    RateLimitError,
)

__all__ = ("HTTPClient", "SSEDecoder")

INITIAL_BACKOFF = 0.5
# seconds before the first retry (doubled each time), as the openai SDK
MAX_BACKOFF = 8.0
# cap of the computed backoff
MAX_RETRY_AFTER = 60.0
# longest Retry-After honoured; a longer one is capped to this
RETRY_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504})
# statuses that are retried (the openai SDK retries 408, 409, 429 and >= 500)


class SSEDecoder:
    """Server-sent events, one line at a time (sans I/O): `feed(line)` returns the data
    of a completed event, or None. Comment lines (`:`) and fields other than `data`
    are ignored; several `data:` lines of one event are joined with newlines.
    """

    __slots__ = ("_data",)

    def __init__(self) -> None:
        self._data: list[str] = []

    def feed(self, line: str) -> str | None:
        """Feeds one line (without or with its line ending)."""
        line = line.rstrip("\r\n")
        if not line:
            if not self._data:
                return None
            data = "\n".join(self._data)
            self._data = []
            return data
        if line.startswith(":"):
            return None
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
        elif field == "error":
            # llama.cpp's server reports a failure mid-stream as an `error:` line
            self._data.append(json.dumps({"error": _loads(value) or {"message": value}}))
        return None

    def flush(self) -> str | None:
        """The data of an event left open when the stream ended, or None."""
        return self.feed("")


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _retry_after(headers: Any) -> float | None:
    value = headers.get("retry-after-ms") if headers is not None else None
    if value:
        try:
            return min(float(value) / 1000.0, MAX_RETRY_AFTER)
        except ValueError:
            pass
    value = headers.get("retry-after") if headers is not None else None
    if not value:
        return None
    try:
        return min(max(float(value), 0.0), MAX_RETRY_AFTER)
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return min(max(when.timestamp() - time.time(), 0.0), MAX_RETRY_AFTER)


def backoff(attempt: int, retry_after: float | None = None) -> float:
    """Seconds to wait before retry number `attempt` (0-based)."""
    if retry_after is not None:
        return retry_after
    return min(INITIAL_BACKOFF * (2.0**attempt), MAX_BACKOFF) * (1.0 - 0.25 * random.random())


class HTTPClient:
    """POSTs JSON to one server, keeping one connection per thread.

    Args:
        base_url: e.g. `http://127.0.0.1:8080/v1` (http or https).
        api_key: sent as `Authorization: Bearer ...` when not None.
        timeout: seconds for connecting and for each read (None: no timeout).
        max_retries: retries after the first attempt.
        headers: extra request headers.

    Raises:
        ValueError: a base URL that is not http(s)://host[:port][/path].
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        timeout: float | None,
        max_retries: int,
        headers: dict | None = None,
    ) -> None:
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            msg = f"ChatOpenAI: base_url must be an http:// or https:// URL (got {base_url!r})"
            raise ValueError(msg)
        self.base_url = base_url.rstrip("/")
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._prefix = parts.path.rstrip("/")
        self._key = api_key
        self.timeout = timeout
        self.max_retries = max_retries
        self._headers = {"Content-Type": "application/json", "Accept": "application/json", **(headers or {})}
        if api_key is not None:
            self._headers["Authorization"] = f"Bearer {api_key}"
        self._local = threading.local()
        self.connections_made = 0
        # how many TCP connections this client opened (tests check keep-alive with it)
        self.sleep = time.sleep
        # the wait between retries (tests replace it)

    # --- connections ---------------------------------------------------------------------

    def _conn(self) -> tuple[http.client.HTTPConnection, bool]:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            return conn, True
        cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
        conn = cls(self._host, self._port, timeout=self.timeout)
        self._local.conn = conn
        self.connections_made += 1
        return conn, False

    def _drop(self) -> None:
        conn = getattr(self._local, "conn", None)
        self._local.conn = None
        if conn is not None:
            conn.close()

    def close(self) -> None:
        """Closes this thread's connection."""
        self._drop()

    def _mask(self, text: str) -> str:
        key = self._key
        return text.replace(key, "***") if key and len(key) >= 4 else text

    # --- requests ------------------------------------------------------------------------

    def _send(self, path: str, payload: bytes) -> http.client.HTTPResponse:
        # one attempt: a kept-alive connection the server closed is retried once, fresh
        url = self.base_url + path
        for fresh_try in (False, True):
            conn, reused = self._conn()
            try:
                conn.request("POST", self._prefix + path, body=payload, headers=self._headers)
                return conn.getresponse()
            except (socket.timeout, TimeoutError) as e:
                self._drop()
                msg = f"POST {url}: timed out after {self.timeout} s ({e or 'no response'})"
                raise APITimeoutError(msg, url=url) from e
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as e:
                self._drop()
                if reused and not fresh_try:
                    continue
                msg = f"POST {url}: connection failed: {self._mask(str(e) or type(e).__name__)}"
                raise APIConnectionError(msg, url=url) from e
            except (OSError, http.client.HTTPException) as e:
                self._drop()
                msg = f"POST {url}: connection failed: {self._mask(str(e) or type(e).__name__)}"
                raise APIConnectionError(msg, url=url) from e
        raise AssertionError("unreachable")

    def _status_error(self, url: str, resp: http.client.HTTPResponse, raw: bytes) -> APIStatusError:
        body = _loads(raw.decode("utf-8", "replace"))
        message = None
        if isinstance(body, dict):
            err = body.get("error")
            if isinstance(err, dict):
                message = err.get("message")
            elif isinstance(err, str):
                message = err
            elif isinstance(body.get("message"), str):
                message = body["message"]
        if message is None:
            message = raw.decode("utf-8", "replace").strip()[:500] or resp.reason
        message = self._mask(str(message))
        text = f"POST {url}: HTTP {resp.status} {resp.reason}: {message}"
        cls = RateLimitError if resp.status == 429 else BadRequestError if resp.status == 400 else APIStatusError
        return cls(text, url=url, status_code=resp.status, body=body, message=message)

    def _open(self, path: str, body: dict) -> http.client.HTTPResponse:
        """Sends with retries; returns a 200 response whose body is still unread.

        Raises:
            APIStatusError: a non-200 reply (after retries when it is retryable).
            APIConnectionError, APITimeoutError: after retries.
        """
        url = self.base_url + path
        payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
        attempt = 0
        while True:
            try:
                resp = self._send(path, payload)
            except APIConnectionError:
                if attempt >= self.max_retries:
                    raise
                self.sleep(backoff(attempt))
                attempt += 1
                continue
            if resp.status == 200:
                return resp
            try:
                raw = resp.read()
            except (OSError, http.client.HTTPException):
                raw = b""
                self._drop()
            if resp.will_close:
                self._drop()
            error = self._status_error(url, resp, raw)
            if resp.status in RETRY_STATUS and attempt < self.max_retries:
                self.sleep(backoff(attempt, _retry_after(resp.headers)))
                attempt += 1
                continue
            raise error

    def post(self, path: str, body: dict) -> dict:
        """POSTs `body` as JSON; returns the decoded JSON reply.

        Raises:
            APIStatusError: the server answered with an error status.
            APIConnectionError: no answer (APITimeoutError when it timed out).
        """
        url = self.base_url + path
        resp = self._open(path, body)
        try:
            raw = resp.read()
        except (socket.timeout, TimeoutError) as e:
            self._drop()
            msg = f"POST {url}: timed out after {self.timeout} s reading the reply"
            raise APITimeoutError(msg, url=url) from e
        except (OSError, http.client.HTTPException) as e:
            self._drop()
            msg = f"POST {url}: connection lost reading the reply: {e or type(e).__name__}"
            raise APIConnectionError(msg, url=url) from e
        if resp.will_close:
            self._drop()
        data = _loads(raw.decode("utf-8", "replace"))
        if not isinstance(data, dict):
            msg = f"POST {url}: the reply is not a JSON object: {self._mask(raw[:200].decode('utf-8', 'replace'))!r}"
            raise APIConnectionError(msg, url=url)
        return data

    def stream(self, path: str, body: dict) -> Iterator[dict]:
        """POSTs `body` and yields each server-sent event's JSON data until `[DONE]`.

        Raises:
            APIStatusError: an error status, or an error event in the stream.
            APIConnectionError: no answer, or the stream ended before `[DONE]`
                (APITimeoutError when a read timed out).
        """
        url = self.base_url + path
        resp = self._open(path, body)
        decoder = SSEDecoder()
        done = False
        try:
            while True:
                try:
                    line = resp.readline()
                except (socket.timeout, TimeoutError) as e:
                    msg = f"POST {url}: timed out after {self.timeout} s waiting for the next event"
                    raise APITimeoutError(msg, url=url) from e
                except (OSError, http.client.HTTPException) as e:
                    msg = f"POST {url}: the connection was lost mid-stream: {e or type(e).__name__}"
                    raise APIConnectionError(msg, url=url) from e
                if not line:
                    data = decoder.flush()
                else:
                    data = decoder.feed(line.decode("utf-8", "replace"))
                if data is not None:
                    if data.strip() == "[DONE]":
                        done = True
                        break
                    event = _loads(data)
                    if isinstance(event, dict) and event.get("error"):
                        err = event["error"]
                        message = self._mask(str(err.get("message") if isinstance(err, dict) else err))
                        text = f"POST {url}: error in the event stream: {message}"
                        code = err.get("code") if isinstance(err, dict) else None
                        raise APIStatusError(
                            text, url=url, status_code=code if isinstance(code, int) else 200, body=event, message=message
                        )
                    if event is not None:
                        yield event
                if not line:
                    break
            if not done:
                msg = f"POST {url}: the server closed the event stream before [DONE]"
                raise APIConnectionError(msg, url=url)
            # drain the end of the chunked body so the connection can be reused
            try:
                while resp.read(8192):
                    pass
            except (OSError, http.client.HTTPException):
                done = False
        finally:
            if not done or resp.will_close:
                self._drop()
            else:
                resp.close() if not resp.isclosed() else None
