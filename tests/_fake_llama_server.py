"""A scripted HTTP server on 127.0.0.1 that answers like llama.cpp's `/v1/chat/completions`.

Why this exists: `lgembed.models.ChatOpenAI` is tested against a real socket (keep-alive,
timeouts, dropped connections, SSE framing), not a mocked client. Each test scripts the
replies; the server records every request (body, headers, connection number) so tests can
check what the client sent (the `grammar` field, `stream_options`, the key never leaking).

The shapes follow llama.cpp's server (b4xxx+, OpenAI-compatible): a non-streaming
`chat.completion` with `usage`; a streaming sequence of `chat.completion.chunk`s whose first
delta carries the role, tool-call deltas split into `id`+`name` first then argument
fragments, a final chunk with `finish_reason`, and, when the request asked for
`stream_options.include_usage`, one more chunk with `choices: []` and `usage`, then
`data: [DONE]`. Errors are `{"error": {"code", "message", "type"}}`.

A reply in the script is a dict:
    content: str                         the assistant text (default "")
    pieces: list[str]                    how to split the content when streaming
    tool_calls: list of {"id", "name", "arguments" (str), "arg_pieces" (list[str], optional)}
    usage: {"prompt_tokens", "completion_tokens"} (default 10 / 5)
    finish_reason: str                   (default "tool_calls" when there are calls, else "stop")
    status: int, error: dict, headers: dict   an error reply (any non-200 status)
    delay: float                         seconds to sleep before answering
    drop: True                           close the connection without answering
    drop_after_chunks: int               streaming: close the connection after n chunks
    raw: str                             send this body as is (status 200, JSON content type)
When the script runs out, the server answers 500 with an error body saying so.

Run it by hand (the example uses it): `python tests/_fake_llama_server.py script.json`.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CREATED = 1700000000
# fixed `created` timestamp, so recorded responses are reproducible


class FakeLlamaServer:
    """The server; use as a context manager. `url` is the base URL (`.../v1`)."""

    def __init__(self, script: list[dict] | None = None, *, model_default: str = "fake-llama") -> None:
        self.script: list[dict] = list(script or [])
        self.requests: list[dict] = []
        self.connections = 0
        self.model_default = model_default
        self._lock = threading.Lock()
        self._served = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                with server._lock:
                    server.connections += 1
                    self.conn_no = server.connections

            def log_message(self, *args: Any) -> None:  # quiet
                pass

            def do_GET(self) -> None:  # noqa: N802
                body = json.dumps({"object": "list", "data": [{"id": server.model_default, "object": "model"}]})
                self._send(200, body.encode())

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = None
                with server._lock:
                    server.requests.append(
                        {"path": self.path, "headers": dict(self.headers), "body": body, "connection": self.conn_no}
                    )
                    reply = server.script.pop(0) if server.script else None
                    server._served += 1
                    serial = server._served
                if reply is None:
                    self._error(500, {"code": 500, "message": "fake server: script exhausted", "type": "server_error"})
                    return
                if reply.get("delay"):
                    time.sleep(reply["delay"])
                if reply.get("drop"):
                    self._drop()
                    return
                if "status" in reply and reply["status"] != 200:
                    self._error(reply["status"], reply.get("error"), reply.get("headers"))
                    return
                if "raw" in reply:
                    self._send(200, reply["raw"].encode())
                    return
                if not self.path.endswith("/chat/completions"):
                    self._error(404, {"code": 404, "message": "File Not Found", "type": "not_found_error"})
                    return
                model = (body or {}).get("model") or server.model_default
                if (body or {}).get("stream"):
                    include_usage = bool(((body or {}).get("stream_options") or {}).get("include_usage"))
                    self._stream(reply, model, serial, include_usage)
                else:
                    self._send(200, json.dumps(completion(reply, model, serial)).encode())

            def _send(self, status: int, data: bytes, headers: dict | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                for k, v in (headers or {}).items():
                    self.send_header(k, str(v))
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()

            def _error(self, status: int, error: dict | None, headers: dict | None = None) -> None:
                error = error or {"code": status, "message": f"error {status}", "type": "server_error"}
                self._send(status, json.dumps({"error": error}).encode(), headers)

            def _drop(self) -> None:
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

            def _stream(self, reply: dict, model: str, serial: int, include_usage: bool) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                drop_after = reply.get("drop_after_chunks")
                events = list(stream_chunks(reply, model, serial, include_usage))
                for n, event in enumerate(events):
                    if drop_after is not None and n >= drop_after:
                        self.wfile.flush()
                        self._drop()
                        return
                    self._chunk(f"data: {json.dumps(event)}\n\n".encode())
                self._chunk(b"data: [DONE]\n\n")
                self._chunk(b"")
                self.wfile.flush()

            def _chunk(self, data: bytes) -> None:
                self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._thread: threading.Thread | None = None

    def add(self, *replies: dict) -> None:
        """Appends replies to the script."""
        with self._lock:
            self.script.extend(replies)

    def start(self) -> FakeLlamaServer:
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="fake-llama", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> FakeLlamaServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def _usage(reply: dict) -> dict:
    u = reply.get("usage") or {}
    p, c = u.get("prompt_tokens", 10), u.get("completion_tokens", 5)
    return {"completion_tokens": c, "prompt_tokens": p, "total_tokens": p + c}


def _finish(reply: dict) -> str:
    return reply.get("finish_reason") or ("tool_calls" if reply.get("tool_calls") else "stop")


def completion(reply: dict, model: str, serial: int) -> dict:
    """The non-streaming `chat.completion` body for a scripted reply."""
    message: dict = {"role": "assistant", "content": reply.get("content", "")}
    if reply.get("tool_calls"):
        message["content"] = reply.get("content") or None
        message["tool_calls"] = [
            {"type": "function", "function": {"name": tc["name"], "arguments": tc["arguments"]}, "id": tc["id"]}
            for tc in reply["tool_calls"]
        ]
    return {
        "choices": [{"finish_reason": _finish(reply), "index": 0, "message": message}],
        "created": CREATED,
        "model": model,
        "system_fingerprint": "b0000-fake",
        "object": "chat.completion",
        "usage": _usage(reply),
        "id": f"chatcmpl-{serial}",
    }


def _split(text: str, size: int = 4) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)] or []


def stream_chunks(reply: dict, model: str, serial: int, include_usage: bool) -> list[dict]:
    """The `chat.completion.chunk` events for a scripted reply (without `[DONE]`)."""

    def chunk(delta: dict | None, finish: str | None = None) -> dict:
        return {
            "choices": [{"finish_reason": finish, "index": 0, "delta": delta}],
            "created": CREATED,
            "id": f"chatcmpl-{serial}",
            "model": model,
            "system_fingerprint": "b0000-fake",
            "object": "chat.completion.chunk",
        }

    events = [chunk({"role": "assistant", "content": None})]
    content = reply.get("content", "")
    for piece in reply.get("pieces") or _split(content):
        events.append(chunk({"content": piece}))
    for i, tc in enumerate(reply.get("tool_calls") or ()):
        events.append(
            chunk({"tool_calls": [{"index": i, "id": tc["id"], "type": "function", "function": {"name": tc["name"], "arguments": ""}}]})
        )
        for frag in tc.get("arg_pieces") or _split(tc["arguments"], 7):
            events.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": frag}}]}))
    events.append(chunk({}, _finish(reply)))
    if include_usage:
        last = chunk(None)
        last["choices"] = []
        last["usage"] = _usage(reply)
        events.append(last)
    return events


def main(argv: list[str]) -> None:
    """Serves the script in the JSON file argv[0] until interrupted; prints the base URL."""
    with open(argv[0], encoding="utf-8") as f:
        script = json.load(f)
    with FakeLlamaServer(script) as server:
        print(server.url, flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main(sys.argv[1:])
