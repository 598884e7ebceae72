"""The routes and JSON shapes of lgembed's Agent Server API.

Why this module exists: `langgraph-sdk` (0.4.x) speaks to LangGraph's Agent Server; an
operator should drive a device with the same client code. This module maps that API's
requests (the ones the SDK's sync and async clients send for assistants, threads,
state, history and runs) onto a `RunManager`, and shapes the answers as LangGraph's
server does (checked against langgraph-api 0.16 with its in-memory runtime): the same
fields, the same error statuses and `{"detail": ...}` bodies, the same SSE events
(`metadata` first, then the requested modes, `error` on failure; the stream then ends),
the same `runs.wait` body (last values, or `{"__interrupt__": [...]}` /
`{"__error__": {...}}`).

It knows nothing of sockets: `Api.handle(Request)` returns a `Response` whose body is
bytes or an iterator of byte chunks (SSE, and the keep-alive newlines of `runs.wait`);
`lgembed.service.http` does the HTTP.

Deliberate differences from LangGraph's server (all more permissive or documented):
thread ids may be any string (LangGraph wants UUIDs; a device's named threads such as
"thermostat" are reachable), a graph id is accepted wherever an assistant id is, runs
always execute with durability "sync", `multitask_strategy="rollback"` and stream mode
"events" are refused with 422, assistants cannot be created or edited (one per served
graph), and `select`, `extract`, `ttl` and webhooks are ignored.

The route table (below) is read against the SDK's clients; the handlers live per resource
beside it: `api_assistants`, `api_threads` (with state and history), `api_runs`; the
request checks and the answer in `request`, the JSON shapes in `shapes`.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from urllib.parse import unquote

from lgembed.service.api_assistants import AssistantRoutes
from lgembed.service.api_runs import RunRoutes
from lgembed.service.api_threads import ThreadRoutes
from lgembed.service.errors import ServiceError
from lgembed.service.request import Request, Response
from lgembed.service.runs import RunManager
from lgembed.service.shapes import state_json

__all__ = ("Api", "Request", "Response", "state_json")

log = logging.getLogger("lgembed.service.api")


class Api:
    """Routes requests to a `RunManager` and shapes the answers.

    Args:
        manager: the run manager that owns the graphs, the records and the runs.

    Attributes:
        assistants, threads, runs: the route handlers of each resource.
    """

    def __init__(self, manager: RunManager) -> None:
        self.manager = manager
        self.records = manager.records
        self.assistants = assistants = AssistantRoutes(manager)
        self.threads = threads = ThreadRoutes(manager)
        self.runs = runs = RunRoutes(manager, threads)
        r = self._route
        self._routes: list[tuple[str, re.Pattern, Callable]] = []
        r("GET", "/ok", self.ok)
        r("GET", "/info", self.info)
        r("POST", "/assistants/search", assistants.search_assistants)
        r("POST", "/assistants/count", assistants.count_assistants)
        r("POST", "/assistants", assistants.create_assistant)
        r("GET", "/assistants/{aid}", assistants.get_assistant)
        r("GET", "/assistants/{aid}/graph", assistants.get_graph)
        r("GET", "/assistants/{aid}/schemas", assistants.get_schemas)
        r("GET", "/assistants/{aid}/subgraphs", assistants.get_subgraphs)
        r("GET", "/assistants/{aid}/subgraphs/{ns}", assistants.get_subgraphs)
        r("POST", "/threads", threads.create_thread)
        r("POST", "/threads/search", threads.search_threads)
        r("POST", "/threads/count", threads.count_threads)
        r("POST", "/threads/prune", threads.prune_threads)
        r("GET", "/threads/{tid}", threads.get_thread)
        r("PATCH", "/threads/{tid}", threads.patch_thread)
        r("DELETE", "/threads/{tid}", threads.delete_thread)
        r("POST", "/threads/{tid}/copy", threads.copy_thread)
        r("GET", "/threads/{tid}/state", threads.get_state)
        r("POST", "/threads/{tid}/state", threads.update_state)
        r("POST", "/threads/{tid}/state/checkpoint", threads.get_state_at_post)
        r("GET", "/threads/{tid}/state/{cid}", threads.get_state_at)
        r("GET", "/threads/{tid}/history", threads.get_history)
        r("POST", "/threads/{tid}/history", threads.post_history)
        r("POST", "/threads/{tid}/runs", runs.create_run)
        r("GET", "/threads/{tid}/runs", runs.list_runs)
        r("POST", "/threads/{tid}/runs/stream", runs.stream_run)
        r("POST", "/threads/{tid}/runs/wait", runs.wait_run)
        r("GET", "/threads/{tid}/runs/{rid}", runs.get_run)
        r("DELETE", "/threads/{tid}/runs/{rid}", runs.delete_run)
        r("POST", "/threads/{tid}/runs/{rid}/cancel", runs.cancel_run)
        r("GET", "/threads/{tid}/runs/{rid}/join", runs.join_run)
        r("GET", "/threads/{tid}/runs/{rid}/stream", runs.join_stream)
        r("POST", "/runs", runs.create_run)
        r("POST", "/runs/stream", runs.stream_run)
        r("POST", "/runs/wait", runs.wait_run)
        r("POST", "/runs/batch", runs.batch_runs)
        r("POST", "/runs/cancel", runs.cancel_runs)

    def _route(self, method: str, template: str, handler: Callable) -> None:
        pattern = "^" + re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]+)", template) + "$"
        self._routes.append((method, re.compile(pattern), handler))

    def handle(self, request: Request) -> Response:
        """Answers one request; never raises (errors become `{"detail": ...}` answers)."""
        allowed = False
        for method, pattern, handler in self._routes:
            m = pattern.match(request.path)
            if m is None:
                continue
            if method != request.method:
                allowed = True
                continue
            params = {k: unquote(v) for k, v in m.groupdict().items()}
            try:
                return handler(request, **params)
            except ServiceError as e:
                return Response.error(e.status, e.detail)
            except OSError as e:
                # LMDB errors (a full disk or map): the message names the directory and the fix
                name = type(e).__name__
                status = 507 if name in ("LmdbDiskFullError", "LmdbMapFullError") else 500
                log.error("%s %s failed: %s", request.method, request.path, e)
                return Response.error(status, str(e))
            except Exception as e:
                log.exception("%s %s failed", request.method, request.path)
                return Response.error(500, f"{type(e).__name__}: {e}")
        if allowed:
            return Response.error(405, "Method Not Allowed")
        return Response.error(404, "Not Found")

    # --- meta -------------------------------------------------------------------------------

    def ok(self, request: Request) -> Response:
        return Response.json({"ok": True})

    def info(self, request: Request) -> Response:
        import lgembed

        return Response.json(
            {
                "version": getattr(lgembed, "__version__", "0"),
                "lgembed": {"implementation": getattr(lgembed, "IMPLEMENTATION", None)},
                "flags": {"assistants": True, "crons": False, "langsmith": False},
            }
        )
