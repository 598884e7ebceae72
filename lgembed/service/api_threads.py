"""The API's thread routes: threads (create, search, read, update, delete, copy, prune),
their state and their history.

Why this module exists: a thread is what an operator looks at on a device ("what is
door-1 waiting for?") and changes between runs (metadata, a state update, a deletion);
these routes answer the SDK's `threads.*` calls in LangGraph's shapes, reading the
records (`lgembed.service.records`) and the graph's checkpoints. A thread with a run in
flight is busy: changing its state or deleting it waits for, or refuses, the run.
"""

from __future__ import annotations

from typing import Any

from lgembed.service.errors import BadRequest, Conflict, Invalid, NotFound
from lgembed.service.records import jsonable, now_iso, scrub_secrets, thread_record, uuid7
from lgembed.service.request import (
    Request,
    Response,
    check_thread_id,
    contains,
    descending,
    flag,
    int_value,
    object_field,
    page,
)
from lgembed.service.runs import RunManager
from lgembed.service.shapes import checkpoint_of, command_from_json, interrupt_json, state_json

__all__ = ("ThreadRoutes",)

_THREAD_SORT = ("thread_id", "status", "created_at", "updated_at", "state_updated_at")
# the fields threads can be sorted by
_NO_GRAPH = (
    "Thread '{tid}' has no assigned graph ID. This usually occurs when no runs have been made on this particular "
    "thread. This operation requires a graph ID. Please ensure a run has been made for the thread or manually "
    "update the thread metadata (by setting the 'graph_id' field) before running this operation."
)
# LangGraph's server's text for a state update on a thread no run has touched


class ThreadRoutes:
    """The `/threads` routes (without the runs of a thread: `lgembed.service.api_runs`).

    Args:
        manager: the run manager that owns the graphs, the records and the runs.
    """

    def __init__(self, manager: RunManager) -> None:
        self.manager = manager
        self.records = manager.records

    def thread_rec(self, tid: str) -> dict:
        """The thread record.

        Raises:
            NotFound: there is no such thread.
        """
        rec = self.records.get_thread(tid)
        if rec is None:
            raise NotFound(f"Thread with ID {tid} not found")
        return rec

    def graph_for(self, rec: dict) -> Any:
        """The served graph of a thread record (its metadata's graph_id), or None."""
        return self.manager.graphs.get((rec.get("metadata") or {}).get("graph_id"))

    def snapshot(self, rec: dict, config: dict | None = None, subgraphs: bool = False) -> Any:
        """The thread's `StateSnapshot` (at `config`'s checkpoint, if any), or None without a graph."""
        graph = self.graph_for(rec)
        if graph is None:
            return None
        cfg = {
            "configurable": {
                "checkpoint_ns": "",
                **((config or {}).get("configurable") or {}),
                "thread_id": rec["thread_id"],
            }
        }
        return graph.get_state(cfg, subgraphs=subgraphs)

    def thread_json(self, rec: dict, with_state: bool = True) -> dict:
        """A thread record as LangGraph's server shows it, with its current values and interrupts."""
        out = {k: v for k, v in rec.items() if not k.startswith("_")}
        if self.manager.is_busy(rec["thread_id"]):
            out["status"] = "busy"
        out.setdefault("config", {})
        out.setdefault("error", None)
        values = None
        interrupts: dict = {}
        if with_state:
            snapshot = self.snapshot(rec)
            if snapshot is not None and checkpoint_of(snapshot.config) is not None:
                values = jsonable(snapshot.values)
                interrupts = {t.id: [interrupt_json(i) for i in t.interrupts] for t in snapshot.tasks if t.interrupts}
        out["values"] = values
        out["interrupts"] = interrupts
        return out

    def create_thread(self, request: Request) -> Response:
        payload = request.json()
        tid = check_thread_id(payload["thread_id"]) if payload.get("thread_id") else uuid7()
        dropped: set = set()
        metadata = scrub_secrets(object_field(payload, "metadata") or {}, dropped)
        if_exists = payload.get("if_exists") or "raise"
        if if_exists not in ("raise", "do_nothing"):
            raise Invalid(f"'if_exists' must be 'raise' or 'do_nothing' (got {if_exists!r})")
        supersteps = payload.get("supersteps")
        with self.manager.lock, self.records.lock:
            existing = self.records.get_thread(tid)
            if existing is not None:
                if if_exists == "raise":
                    raise Conflict(f"Thread with ID {tid} already exists")
                return Response.json(self.thread_json(existing))
            rec = thread_record(tid, metadata, "idle", now_iso())
            self.records.write(thread=rec)
        if supersteps:
            self._bulk_update(rec, supersteps)
            rec = self.thread_rec(tid)
        return Response.json(self.thread_json(rec))

    def _bulk_update(self, rec: dict, supersteps: Any) -> None:
        from lgembed.types import StateUpdate

        graph = self.graph_for(rec)
        if graph is None:
            raise BadRequest(_NO_GRAPH.format(tid=rec["thread_id"]))
        try:
            steps = [
                [
                    StateUpdate(
                        command_from_json(u["command"]) if u.get("command") else u.get("values"), u.get("as_node")
                    )
                    for u in s.get("updates", [])
                ]
                for s in supersteps
            ]
        except (TypeError, KeyError, AttributeError) as e:
            raise Invalid(f"'supersteps' must be a list of {{'updates': [{{'values', 'as_node'}}]}} ({e})") from None
        try:
            graph.bulk_update_state({"configurable": {"thread_id": rec["thread_id"], "checkpoint_ns": ""}}, steps)
        except (ValueError, TypeError, KeyError) as e:
            raise BadRequest(
                f"Thread {rec['thread_id']} was created, but there were problems updating the state: {e}"
            ) from None
        self.refresh_status(rec["thread_id"])

    def refresh_status(self, tid: str) -> None:
        """Sets the thread's status from its state after a change: "interrupted" or "idle"."""
        rec = self.records.get_thread(tid)
        if rec is None:
            return
        snapshot = self.snapshot(rec)
        status = "interrupted" if snapshot is not None and snapshot.next else "idle"
        now = now_iso()

        def change(t: dict) -> None:
            t["status"] = status
            t["updated_at"] = t["state_updated_at"] = now

        self.records.update_thread(tid, change)

    def _threads(self, payload: dict) -> list[dict]:
        metadata = object_field(payload, "metadata")
        values = object_field(payload, "values")
        status = payload.get("status")
        ids = payload.get("ids")
        out = []
        for rec in self.records.threads():
            if ids and rec["thread_id"] not in ids:
                continue
            if metadata and not contains(rec.get("metadata") or {}, metadata):
                continue
            if status and ("busy" if self.manager.is_busy(rec["thread_id"]) else rec.get("status")) != status:
                continue
            if values:
                snapshot = self.snapshot(rec)
                if snapshot is None or not contains(jsonable(snapshot.values), values):
                    continue
            out.append(rec)
        return out

    def search_threads(self, request: Request) -> Response:
        payload = request.json()
        found = self._threads(payload)
        sort_by = payload.get("sort_by") or "updated_at"
        if sort_by not in _THREAD_SORT:
            msg = f"'sort_by' must be one of {', '.join(_THREAD_SORT)} (got {sort_by!r})"
            raise Invalid(msg)
        found.sort(key=lambda t: t.get(sort_by) or "", reverse=descending(payload))
        items, headers = page(found, payload)
        return Response.json([self.thread_json(t) for t in items], headers=headers)

    def count_threads(self, request: Request) -> Response:
        return Response.json(len(self._threads(request.json())))

    def get_thread(self, request: Request, tid: str) -> Response:
        return Response.json(self.thread_json(self.thread_rec(tid)))

    def patch_thread(self, request: Request, tid: str) -> Response:
        payload = request.json()
        metadata = scrub_secrets(object_field(payload, "metadata") or {})
        now = now_iso()

        def change(t: dict) -> None:
            t["metadata"] = {**(t.get("metadata") or {}), **metadata}
            t["updated_at"] = now

        rec = self.records.update_thread(tid, change)
        if rec is None:
            raise NotFound(f"Thread with ID {tid} not found")
        if request.headers.get("prefer") == "return=minimal":
            return Response(204)
        return Response.json(self.thread_json(rec))

    def delete_thread(self, request: Request, tid: str) -> Response:
        if not self.delete_thread_now(tid):
            raise NotFound(f"Thread with ID {tid} not found")
        return Response(204)

    def delete_thread_now(self, tid: str) -> bool:
        """Cancels the thread's runs, waits for them (30 s each), then deletes the thread's
        records and checkpoints; True when it existed.

        Raises:
            Conflict: a run is still in a superstep.
        """
        manager = self.manager
        pending = manager.pending_runs(tid)
        for rid in pending:
            try:
                manager.cancel(tid, rid)
            except NotFound:
                pass
        for rid in pending:
            try:
                with manager.join(tid, rid) as h:
                    h.wait(30)
            except NotFound:
                pass
        with manager.lock:
            if manager.is_busy(tid):
                raise Conflict(f"Thread {tid} still has a run in a superstep; retry the delete once it stopped")
            existed = self.records.delete_thread(tid)
            if existed:
                manager.saver.delete_thread(tid)
        return existed

    def prune_threads(self, request: Request) -> Response:
        payload = request.json()
        ids = payload.get("thread_ids") or []
        strategy = payload.get("strategy", "delete")
        if strategy not in ("delete", "keep_latest"):
            raise Invalid(f"Invalid strategy: {strategy}. Expected 'delete' or 'keep_latest'.")
        pruned = 0
        for tid in ids:
            if strategy == "delete":
                try:
                    pruned += bool(self.delete_thread_now(str(tid)))
                except Conflict:
                    pass
            elif self.records.get_thread(str(tid)) is not None and not self.manager.is_busy(str(tid)):
                self.manager.saver.prune([str(tid)], strategy="keep_latest")
                pruned += 1
        return Response.json({"pruned_count": pruned})

    def copy_thread(self, request: Request, tid: str) -> Response:
        rec = self.thread_rec(tid)
        new = uuid7()
        self.manager.saver.copy_thread(tid, new)
        now = now_iso()
        copy = {**rec, "thread_id": new, "created_at": now, "updated_at": now, "state_updated_at": now, "_runs": 0}
        if copy.get("status") == "busy":
            copy["status"] = "idle"
        self.records.write(thread=copy)
        return Response.json(self.thread_json(copy))

    # --- state ----------------------------------------------------------------------------------

    def get_state(self, request: Request, tid: str) -> Response:
        rec = self.thread_rec(tid)
        return Response.json(state_json(self.snapshot(rec, subgraphs=flag(request.arg("subgraphs")))))

    def get_state_at(self, request: Request, tid: str, cid: str) -> Response:
        rec = self.thread_rec(tid)
        cfg = {"configurable": {"checkpoint_id": cid}}
        return Response.json(state_json(self.snapshot(rec, cfg, subgraphs=flag(request.arg("subgraphs")))))

    def get_state_at_post(self, request: Request, tid: str) -> Response:
        payload = request.json()
        rec = self.thread_rec(tid)
        checkpoint = object_field(payload, "checkpoint") or {}
        cfg = {"configurable": {k: v for k, v in checkpoint.items() if k != "thread_id"}}
        return Response.json(state_json(self.snapshot(rec, cfg, subgraphs=bool(payload.get("subgraphs")))))

    def update_state(self, request: Request, tid: str) -> Response:
        payload = request.json()
        manager = self.manager
        with manager.lock:
            rec = self.thread_rec(tid)
            if manager.is_busy(tid):
                raise Conflict(f"Thread {tid} has in-flight runs: {manager.pending_runs(tid)}")
            graph = self.graph_for(rec)
            if graph is None:
                raise BadRequest(_NO_GRAPH.format(tid=tid))
            configurable = {"thread_id": tid, "checkpoint_ns": ""}
            if payload.get("checkpoint_id"):
                configurable["checkpoint_id"] = payload["checkpoint_id"]
            configurable.update({k: v for k, v in (object_field(payload, "checkpoint") or {}).items() if k != "thread_id"})
            try:
                next_config = graph.update_state(
                    {"configurable": configurable}, payload.get("values"), as_node=payload.get("as_node")
                )
            except (ValueError, TypeError, KeyError) as e:
                raise BadRequest(f"Updating the state of thread {tid} failed: {type(e).__name__}: {e}") from None
            self.refresh_status(tid)
        conf = jsonable(next_config["configurable"])
        return Response.json({"checkpoint": conf, "configurable": conf, "checkpoint_id": conf.get("checkpoint_id")})

    def _history(self, tid: str, limit: int, before: Any, metadata: dict | None, checkpoint: dict | None) -> Response:
        rec = self.thread_rec(tid)
        graph = self.graph_for(rec)
        if graph is None:
            return Response.json([])
        if isinstance(before, str):
            before = {"configurable": {"checkpoint_id": before}}
        elif isinstance(before, dict) and "configurable" not in before:
            before = {"configurable": before}
        configurable = {
            "checkpoint_ns": "",
            **{k: v for k, v in (checkpoint or {}).items() if k != "thread_id"},
            "thread_id": tid,
        }
        states = graph.get_state_history(
            {"configurable": configurable}, filter=metadata or None, before=before, limit=limit
        )
        return Response.json([state_json(s) for s in states])

    def post_history(self, request: Request, tid: str) -> Response:
        payload = request.json()
        return self._history(
            tid,
            int_value(payload.get("limit"), "limit", 1, 1),
            payload.get("before"),
            object_field(payload, "metadata"),
            object_field(payload, "checkpoint"),
        )

    def get_history(self, request: Request, tid: str) -> Response:
        return self._history(tid, int_value(request.arg("limit"), "limit", 1, 1), request.arg("before"), None, None)
