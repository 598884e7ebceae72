"""ApiServer: the threaded HTTP/1.1 server of the local Agent Server API.

Why this module exists: the API must run on a device with nothing but the standard
library (lgembed's runtime dependencies are msgpack and lmdb), and stay small: an idle
`lgembed serve` is meant to fit in 30 MB. `http.server` would cost about 8 MB of RSS
on its own (it imports `http.client`, hence `ssl` and the `email` package), so this
module speaks the little HTTP/1.1 the SDK's httpx client needs directly on
`socketserver.ThreadingTCPServer`: one daemon thread per connection, keep-alive,
`Content-Length` request bodies (and chunked ones), fixed-length responses and chunked
responses for SSE streams and long `runs.wait` bodies.

Limits: a request's header block is at most `MAX_HEADER_BYTES` (else 431), its body at
most `max_body` bytes (else 413, and the connection is closed since the body was not
read). An idle keep-alive connection is closed after `IDLE_SECONDS`.

Authentication: with a `token`, every request but `GET /ok` must carry
`x-api-key: TOKEN` (what the SDK sends when given `api_key=`) or
`Authorization: Bearer TOKEN`; none gives 401, a wrong one 403, both with a JSON
`{"detail": ...}` body. Tokens are compared in constant time and never logged. A server
bound to anything but a loopback address refuses to start without a token.

Request logs go to logger `lgembed.service.http` at DEBUG (method, path, status), never
headers or bodies.
"""

from __future__ import annotations

import logging
import socket
import socketserver
import threading
import time
from typing import Any
from urllib.parse import parse_qs, urlsplit

try:  # the C function hmac.compare_digest falls back to, without loading OpenSSL (~3 MB RSS)
    from _operator import _compare_digest as compare_digest
except ImportError:  # pragma: no cover - other Python implementations
    from hmac import compare_digest

from lgembed.service.api import Api
from lgembed.service.config import is_loopback
from lgembed.service.request import Request, Response
from lgembed.service.runs import RunManager

__all__ = ("ApiServer", "is_loopback")

log = logging.getLogger("lgembed.service.http")

MAX_HEADER_BYTES = 64 * 1024
"""Largest request line plus header block accepted (larger: 431 and the connection closes)."""
IDLE_SECONDS = 300.0
"""Seconds a keep-alive connection may stay idle between requests before it is closed."""
_OPEN_PATHS = frozenset({"/ok"})
# paths served without a token (health checks)
_REASONS = {
    200: "OK",
    202: "Accepted",
    204: "No Content",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    413: "Content Too Large",
    422: "Unprocessable Entity",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    501: "Not Implemented",
    503: "Service Unavailable",
    505: "HTTP Version Not Supported",
    507: "Insufficient Storage",
}
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_METHODS = frozenset({"GET", "POST", "PATCH", "PUT", "DELETE", "HEAD", "OPTIONS"})


def _http_date() -> str:
    """The current time as an HTTP Date header wants it (English names whatever the locale)."""
    t = time.gmtime()
    clock = f"{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}"
    return f"{_DAYS[t.tm_wday]}, {t.tm_mday:02d} {_MONTHS[t.tm_mon - 1]} {t.tm_year} {clock} GMT"


class _BadRequest(Exception):
    """The bytes received are not an HTTP request this server can parse."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def __init__(self, address: tuple, api: Api, token: str | None, max_body: int) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.api = api
        self.token = token
        self.max_body = max_body
        super().__init__(address, _Handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # a client that went away mid-answer is not an error of the service
        log.debug("connection from %s ended with an error", client_address, exc_info=True)


class _Handler(socketserver.StreamRequestHandler):
    rbufsize = 64 * 1024
    server: _Server

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(IDLE_SECONDS)
        # Why: an answer goes out in a few sends; with Nagle's algorithm the client's
        # delayed ACK would hold each second send for ~40 ms
        try:
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass

    def handle(self) -> None:
        try:
            while self._one():
                pass
        except (OSError, ValueError):
            # the client went away, or the idle timeout closed a keep-alive connection
            pass

    # --- one request --------------------------------------------------------------------------

    def _one(self) -> bool:
        """Reads and answers one request; returns whether the connection stays open."""
        try:
            head = self._read_head()
        except _BadRequest as e:
            self._send(Response.error(e.status, e.detail), "GET", keep=False)
            return False
        if head is None:
            return False
        method, target, version, headers = head
        keep = _keep_alive(version, headers)
        parts = urlsplit(target)
        srv = self.server
        if srv.token is not None and parts.path not in _OPEN_PATHS:
            denied = _check_token(headers, srv.token)
            if denied is not None:
                keep = keep and self._skip_body(headers)
                self._send(denied, method, keep)
                log.debug("%s %s -> %s", method, parts.path, denied.status)
                return keep
        if headers.get("expect", "").lower() == "100-continue":
            self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        try:
            body = self._read_body(headers, srv.max_body)
        except _BadRequest as e:
            self._send(Response.error(e.status, e.detail), method, keep=False)
            return False
        request = Request(method, parts.path, parse_qs(parts.query), headers, body)
        response = srv.api.handle(request)
        log.debug("%s %s -> %s", method, parts.path, response.status)
        self._send(response, method, keep)
        return keep

    def _read_head(self) -> tuple[str, str, str, dict[str, str]] | None:
        rfile = self.rfile
        line = rfile.readline(MAX_HEADER_BYTES + 1)
        while line in (b"\r\n", b"\n"):  # tolerated empty lines between requests
            line = rfile.readline(MAX_HEADER_BYTES + 1)
        if not line:
            return None
        if len(line) > MAX_HEADER_BYTES:
            raise _BadRequest(431, "Request line too long")
        try:
            method, target, version = line.decode("latin-1").rstrip("\r\n").split(" ")
        except ValueError:
            raise _BadRequest(400, "Malformed request line") from None
        if not version.startswith("HTTP/1."):
            raise _BadRequest(505, f"HTTP version {version!r} is not supported; use HTTP/1.1")
        if method not in _METHODS:
            raise _BadRequest(405, "Method Not Allowed")
        headers: dict[str, str] = {}
        total = len(line)
        while True:
            line = rfile.readline(MAX_HEADER_BYTES + 1)
            total += len(line)
            if total > MAX_HEADER_BYTES:
                raise _BadRequest(431, f"Request header fields too large: the limit is {MAX_HEADER_BYTES} bytes")
            if line in (b"\r\n", b"\n", b""):
                break
            name, sep, value = line.decode("latin-1").partition(":")
            if not sep:
                raise _BadRequest(400, "Malformed header line")
            key = name.strip().lower()
            value = value.strip()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        return method, target, version, headers

    def _read_body(self, headers: dict[str, str], limit: int) -> bytes:
        if "chunked" in headers.get("transfer-encoding", "").lower():
            data = bytearray()
            while True:
                line = self.rfile.readline(1024)
                try:
                    size = int(line.split(b";")[0].strip() or b"x", 16)
                except ValueError:
                    raise _BadRequest(400, "Malformed chunked request body") from None
                if size == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(data)
                if len(data) + size > limit:
                    raise _BadRequest(413, f"Request body too large: the limit is {limit} bytes")
                data += self.rfile.read(size)
                self.rfile.readline(8)
        length = headers.get("content-length")
        if not length:
            return b""
        if not length.isdigit():
            raise _BadRequest(400, f"Invalid Content-Length header: {length!r}")
        n = int(length)
        if n > limit:
            raise _BadRequest(413, f"Request body too large: the limit is {limit} bytes")
        body = self.rfile.read(n)
        if len(body) != n:
            raise OSError("the client closed the connection in the middle of the body")
        return body

    def _skip_body(self, headers: dict[str, str]) -> bool:
        """Reads and drops a refused request's body; False when it cannot (then close)."""
        length = headers.get("content-length")
        if length and length.isdigit() and int(length) <= self.server.max_body:
            self.rfile.read(int(length))
            return True
        return not length and "transfer-encoding" not in headers

    # --- answers ------------------------------------------------------------------------------

    def _send(self, response: Response, method: str, keep: bool) -> None:
        status = response.status
        head = [f"HTTP/1.1 {status} {_REASONS.get(status, 'Unknown')}", f"Date: {_http_date()}", "Server: lgembed"]
        head += [f"{k}: {v}" for k, v in response.headers.items()]
        if not keep:
            head.append("Connection: close")
        if response.chunks is None:
            if status not in (204, 304):
                head.append(f"Content-Length: {len(response.body)}")
            body = response.body if method != "HEAD" and status not in (204, 304) else b""
            self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
            return
        head.append("Transfer-Encoding: chunked")
        chunks = response.chunks
        try:
            self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
            for chunk in chunks:
                if chunk:
                    self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.write(b"0\r\n\r\n")
        finally:
            close = getattr(chunks, "close", None)
            if close is not None:
                close()


def _keep_alive(version: str, headers: dict[str, str]) -> bool:
    connection = headers.get("connection", "").lower()
    if version == "HTTP/1.0":
        return "keep-alive" in connection
    return "close" not in connection


def _check_token(headers: dict[str, str], token: str) -> Response | None:
    given = headers.get("x-api-key")
    if given is None:
        scheme, _, value = headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and value.strip():
            given = value.strip()
    if given is None:
        return Response.error(
            401, "Missing authentication: send the service's token as 'x-api-key' or 'Authorization: Bearer'"
        )
    if not compare_digest(given.encode(), token.encode()):
        return Response.error(403, "Invalid authentication token")
    return None


class ApiServer:
    """The local Agent Server API over HTTP, in front of a `RunManager`.

    Args:
        manager: the run manager to serve.
        host: address to bind; loopback by default.
        port: port to bind; 0 picks a free one (see `address`).
        token: the API token; required when `host` is not a loopback address.
        max_body: largest request body accepted, in bytes (larger: 413).

    Raises:
        ValueError: when a non-loopback host is given without a token, or for an
            empty token or a `max_body` below 1.
        OSError: when the address cannot be bound.
    """

    def __init__(
        self,
        manager: RunManager,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        token: str | None = None,
        max_body: int = 1 << 20,
    ) -> None:
        if token is not None and not token.strip():
            raise ValueError("ApiServer: 'token' must not be empty (got an empty string); pass None for no token")
        if not is_loopback(host) and token is None:
            msg = (
                f"ApiServer: binding {host!r} exposes the API beyond this machine, which needs a token "
                "(got none). Pass token=... (clients send it as x-api-key or Authorization: Bearer), "
                "or bind 127.0.0.1."
            )
            raise ValueError(msg)
        if max_body < 1:
            msg = f"ApiServer: 'max_body' must be at least 1 byte (got {max_body!r})"
            raise ValueError(msg)
        self.manager = manager
        self.api = Api(manager)
        self._server = _Server((host, port), self.api, token, max_body)
        self.address: tuple[str, int] = self._server.server_address[:2]
        """The bound address (with port 0, the port the system picked)."""
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The base URL clients use (`http://host:port`)."""
        host, port = self.address
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{port}"

    def start(self) -> None:
        """Serves in a daemon thread (returns at once)."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.2}, name="lgembed-http", daemon=True
        )
        self._thread.start()
        log.info("API listening on %s", self.url)

    def stop(self) -> None:
        """Stops accepting connections and closes the socket; requests in flight finish
        on their own threads."""
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()
