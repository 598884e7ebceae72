"""The API's run routes: create, stream, wait for, join, list, cancel and delete runs.

Why this module exists: a run is started by one request and watched by others; these
routes answer the SDK's `runs.*` calls by handing the run to the `RunManager` and sending
what it produces in LangGraph's shapes: SSE events (`metadata` first, then the requested
modes, `error` on failure; the stream then ends) or the `runs.wait` body, with keep-alive
bytes while a client waits. A client that goes away with `on_disconnect="cancel"` (or
`cancel_on_disconnect`) cancels its run.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

from lgembed.service.api_threads import ThreadRoutes
from lgembed.service.errors import Invalid, NotFound, ServiceError
from lgembed.service.records import dumps
from lgembed.service.request import Request, Response, check_thread_id, flag, int_value, object_field
from lgembed.service.runs import RunManager

__all__ = ("HEARTBEAT_SECONDS", "RunRoutes")

log = logging.getLogger("lgembed.service.api")

HEARTBEAT_SECONDS = 5.0
"""Seconds between keep-alive bytes on a long `runs.wait` (a newline) or SSE stream (a
comment), as LangGraph's server sends them, so proxies and read timeouts see traffic."""
_SSE_HEARTBEAT = b": heartbeat\r\n\r\n"


def _stream_modes(value: str | None) -> list[str]:
    """`stream_mode` of a join: one mode, or a JSON array of modes (the SDK's forms)."""
    if not value:
        return []
    if value.startswith("["):
        try:
            parsed = json.loads(value)
            if isinstance(parsed, list):
                return [str(m) for m in parsed]
        except ValueError:
            pass
    return [value]


def _mode_matches(event: str, modes: list[str]) -> bool:
    """Whether a joined stream asking for `modes` gets `event` (a subgraph's "mode|ns" too)."""
    if not modes or event in modes:
        return True
    if ("messages" in modes or "messages-tuple" in modes) and event.startswith("messages"):
        return True
    return "|" in event and event.partition("|")[0] in modes


class RunRoutes:
    """The `/runs` and `/threads/{id}/runs` routes.

    Args:
        manager: the run manager that executes the runs.
        threads: the thread routes (for a thread's record).
    """

    def __init__(self, manager: RunManager, threads: ThreadRoutes) -> None:
        self.manager = manager
        self.threads = threads

    def _run_kwargs(self, payload: dict, tid: str | None) -> dict:
        """The `RunManager.create_run` keywords of a run request's body (LangGraph's defaults).

        Raises:
            Invalid: a bad thread id, no assistant_id, or a field that must be an object and is not.
        """
        if tid is not None:
            check_thread_id(tid)
        if "assistant_id" not in payload:
            raise Invalid('"assistant_id" is a required property')
        strategy = payload.get("multitask_strategy") or "enqueue"
        return {
            "input": payload.get("input"),
            "command": payload.get("command"),
            "stream_mode": payload.get("stream_mode") or "values",
            "config": object_field(payload, "config"),
            "metadata": object_field(payload, "metadata"),
            "context": payload.get("context"),
            "if_not_exists": "create" if tid is None else (payload.get("if_not_exists") or "reject"),
            "multitask_strategy": strategy,
            "on_completion": payload.get("on_completion") or ("delete" if tid is None else "keep"),
            "interrupt_before": payload.get("interrupt_before"),
            "interrupt_after": payload.get("interrupt_after"),
            "stream_subgraphs": bool(payload.get("stream_subgraphs")),
            "checkpoint": object_field(payload, "checkpoint"),
            "checkpoint_id": payload.get("checkpoint_id"),
        }

    @staticmethod
    def _locations(record: dict, tail: str, stateless: bool) -> dict[str, str]:
        tid, rid = record["thread_id"], record["run_id"]
        base = f"/runs/{rid}" if stateless else f"/threads/{tid}/runs/{rid}"
        return {"Location": base + tail, "Content-Location": base}

    def create_run(self, request: Request, tid: str | None = None) -> Response:
        payload = request.json()
        kwargs = self._run_kwargs(payload, tid)
        record = self.manager.create_run(tid, payload["assistant_id"], **kwargs)
        loc = self._locations(record, "", tid is None)
        return Response.json(record, headers={"Content-Location": loc["Content-Location"]})

    def batch_runs(self, request: Request) -> Response:
        try:
            payloads = json.loads(request.body or b"[]")
        except ValueError:
            raise Invalid("Invalid JSON in request body") from None
        if not isinstance(payloads, list) or not all(isinstance(p, dict) for p in payloads):
            raise Invalid("the body of /runs/batch must be a list of run objects")
        records = [self.manager.create_run(None, p.get("assistant_id"), **self._run_kwargs(p, None)) for p in payloads]
        return Response.json(records)

    def stream_run(self, request: Request, tid: str | None = None) -> Response:
        payload = request.json()
        kwargs = self._run_kwargs(payload, tid)
        handle = self.manager.stream_run(tid, payload["assistant_id"], events=True, **kwargs)
        return self._sse_response(handle, [], payload.get("on_disconnect") == "cancel", tid is None)

    def _sse_response(self, handle: Any, modes: list[str], cancel_on_disconnect: bool, stateless: bool) -> Response:
        """A run's events as an SSE stream (all of them when `modes` is empty)."""
        return Response(
            200,
            headers={
                "Content-Type": "text/event-stream; charset=utf-8",
                "Cache-Control": "no-store",
                **self._locations(handle.record, "/stream", stateless),
            },
            chunks=self._sse(handle, modes, cancel_on_disconnect),
        )

    def _sse(self, handle: Any, modes: list[str], cancel_on_disconnect: bool) -> Iterator[bytes]:
        finished = False
        try:
            while True:
                try:
                    item = handle.next_event(HEARTBEAT_SECONDS)
                except StopIteration:
                    finished = True
                    return
                if item is None:
                    yield _SSE_HEARTBEAT
                    continue
                event, data = item
                if _mode_matches(event, modes) or event in ("metadata", "error"):
                    yield b"event: " + event.encode() + b"\r\ndata: " + data + b"\r\n\r\n"
        finally:
            handle.close()
            if cancel_on_disconnect and not finished:
                self._cancel_quietly(handle.record)

    def _cancel_quietly(self, record: dict) -> None:
        try:
            self.manager.cancel(record["thread_id"], record["run_id"])
            log.info("run %s cancelled: its client disconnected (on_disconnect=cancel)", record["run_id"])
        except ServiceError:
            pass

    def _wait_body(self, handle: Any, cancel_on_disconnect: bool) -> Iterator[bytes]:
        finished = False
        try:
            while not handle.wait(HEARTBEAT_SECONDS):
                yield b"\n"
            finished = True
            yield dumps(handle.output())
        finally:
            handle.close()
            if cancel_on_disconnect and not finished:
                self._cancel_quietly(handle.record)

    def wait_run(self, request: Request, tid: str | None = None) -> Response:
        payload = request.json()
        kwargs = self._run_kwargs(payload, tid)
        handle = self.manager.stream_run(tid, payload["assistant_id"], events=False, **kwargs)
        return self._wait_response(handle, payload.get("on_disconnect") == "cancel")

    def _wait_response(self, handle: Any, cancel_on_disconnect: bool) -> Response:
        """A run's output once it ends (`runs.wait`'s body), with keep-alive newlines until then."""
        return Response(
            200,
            headers={"Content-Type": "application/json", **self._locations(handle.record, "/join", False)},
            chunks=self._wait_body(handle, cancel_on_disconnect),
        )

    def list_runs(self, request: Request, tid: str) -> Response:
        runs = self.manager.list_runs(
            tid,
            limit=int_value(request.arg("limit"), "limit", 10, 1),
            offset=int_value(request.arg("offset"), "offset", 0),
            status=request.arg("status"),
        )
        return Response.json(runs)

    def get_run(self, request: Request, tid: str, rid: str) -> Response:
        self.threads.thread_rec(tid)
        return Response.json(self.manager.get_run(tid, rid))

    def delete_run(self, request: Request, tid: str, rid: str) -> Response:
        self.manager.delete_run(tid, rid)
        return Response(204)

    def cancel_run(self, request: Request, tid: str, rid: str) -> Response:
        action = request.arg("action") or "interrupt"
        wait = flag(request.arg("wait"))
        handle = self.manager.join(tid, rid) if wait else None
        try:
            self.manager.cancel(tid, rid, action=action)
        except ServiceError:
            if handle is not None:
                handle.close()
            raise
        if handle is None:
            return Response(202)
        return self._wait_response(handle, False)

    def cancel_runs(self, request: Request) -> Response:
        payload = request.json()
        action = request.arg("action") or "interrupt"
        status = payload.get("status")
        if status:
            if status not in ("pending", "running", "all"):
                raise Invalid("Invalid status: must be 'pending', 'running', or 'all'")
            targets = [(tid, rid) for tid, rid, state in self.manager.in_flight() if status in ("all", state)]
        else:
            tid, ids = payload.get("thread_id"), payload.get("run_ids")
            if not tid or not isinstance(ids, list):
                raise Invalid("Must provide either a status, or both 'thread_id' and 'run_ids'")
            targets = [(tid, rid) for rid in ids]
        found = 0
        for tid, rid in targets:
            try:
                self.manager.cancel(tid, rid, action=action)
                found += 1
            except NotFound:
                pass
        if targets and not found:
            raise NotFound("No runs found to cancel.")
        return Response(204)

    def join_run(self, request: Request, tid: str, rid: str) -> Response:
        self.threads.thread_rec(tid)
        handle = self.manager.join(tid, rid)
        return self._wait_response(handle, flag(request.arg("cancel_on_disconnect")))

    def join_stream(self, request: Request, tid: str, rid: str) -> Response:
        self.threads.thread_rec(tid)
        handle = self.manager.join(tid, rid, events=True)
        modes = _stream_modes(request.arg("stream_mode"))
        return self._sse_response(handle, modes, flag(request.arg("cancel_on_disconnect")), False)
