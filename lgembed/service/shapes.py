"""The JSON shapes of LangGraph's Agent Server that the run manager and the API share.

Why this module exists: a run's events, a thread's state and a run's result must look
exactly as LangGraph's server shows them (the SDK's clients read them), whether the
manager builds them while a run executes or the API when a client asks later. Each shape
is built here once: assistant ids, `Command`s from a request, error payloads, interrupts,
checkpoints and thread state.
"""

from __future__ import annotations

import uuid
from typing import Any

from lgembed.service.records import jsonable

__all__ = (
    "NAMESPACE_GRAPH",
    "assistant_id_for",
    "checkpoint_of",
    "command_from_json",
    "debug_checkpoint",
    "error_payload",
    "interrupt_json",
    "output_from_state",
    "state_json",
    "thread_status",
)

NAMESPACE_GRAPH = uuid.UUID("6ba7b821-9dad-11d1-80b4-00c04fd430c8")
"""uuid5 namespace of assistant ids: LangGraph's server uses the same, so a graph served
by lgembed has the assistant id it would have there."""
_EMPTY_STATE = {
    "values": {},
    "next": [],
    "tasks": [],
    "metadata": None,
    "created_at": None,
    "checkpoint": None,
    "parent_checkpoint": None,
    "interrupts": [],
    "checkpoint_id": None,
    "parent_checkpoint_id": None,
}
# what `state_json` shows for a thread without a checkpoint


def assistant_id_for(graph_id: str) -> str:
    """The assistant id of a served graph: uuid5 of its id, as LangGraph's server makes it."""
    try:  # CPython's own SHA-1: `uuid.uuid5` would load hashlib and OpenSSL (~3.5 MB RSS)
        from _sha1 import sha1
    except ImportError:  # pragma: no cover - other Python implementations
        from hashlib import sha1
    digest = sha1(NAMESPACE_GRAPH.bytes + graph_id.encode("utf-8")).digest()
    return str(uuid.UUID(bytes=digest[:16], version=5))



_VISIBLE_ERRORS = (ValueError, TypeError, KeyError, AttributeError, RuntimeError, RecursionError, TimeoutError, OSError)
# exception classes whose message is shown to API clients (LangGraph shows builtins' messages)


def command_from_json(cmd: dict) -> Any:
    """The `Command` a request's `command` object names (LangGraph's server's `map_cmd`):
    `resume`, `update` (an object or a list of [key, value] pairs) and `goto` (a node
    name, a `{"node", "input"}` send, or a list of those)."""
    from lgembed.types import Command, Send

    goto = cmd.get("goto")
    if goto is not None and not isinstance(goto, list):
        goto = [goto]
    update = cmd.get("update")
    if isinstance(update, list) and all(
        isinstance(t, (list, tuple)) and len(t) == 2 and isinstance(t[0], str) for t in update
    ):
        update = [tuple(t) for t in update]
    args: dict = {"update": update, "resume": cmd.get("resume")}
    if goto:
        args["goto"] = [g if isinstance(g, str) else Send(g["node"], g.get("input")) for g in goto]
    return Command(**args)


def error_payload(error: BaseException) -> dict:
    """`{"error": class name, "message": text}`, as LangGraph's server reports a failed run.

    lgembed's own errors and the common builtins show their message (their messages say
    what failed and how to fix it); other exceptions show "An internal error occurred"
    (the full error is in the service's log).
    """
    name = type(error).__name__
    if isinstance(error, _VISIBLE_ERRORS) or type(error).__module__.startswith("lgembed"):
        return {"error": name, "message": str(error)}
    return {"error": name, "message": "An internal error occurred"}


def interrupt_json(interrupt: Any) -> dict:
    """An interrupt as LangGraph's server shows it in thread state: `{"id", "value"}`
    (and `response_schema` when the graph gave one)."""
    out = {"id": getattr(interrupt, "id", None), "value": jsonable(getattr(interrupt, "value", None))}
    schema = getattr(interrupt, "response_schema", None)
    if schema is not None:
        out["response_schema"] = jsonable(schema)
    return out


def thread_status(state: Any, error: Any, more_runs: bool) -> str:
    """A thread's status after a run: "busy" (more runs wait), "error", "interrupted"
    (the state has next nodes) or "idle"."""
    if more_runs:
        return "busy"
    if error:
        return "error"
    if state is not None and state.next:
        return "interrupted"
    return "idle"


def output_from_state(state: Any, error: Any, status: str | None) -> Any:
    """What `runs.wait` / `runs.join` return when no event of the run decided it: the
    error, the interrupts of an interrupted thread, or its values (LangGraph's server's
    answer from the thread)."""
    if error:
        return {"__error__": error}
    if state is None:
        return {}
    if status == "interrupted":
        interrupts = [interrupt_json(i) for t in state.tasks for i in t.interrupts]
        if interrupts:
            return {"__interrupt__": interrupts}
    values = jsonable(state.values)
    return values if values else {}


def checkpoint_of(config: Any) -> dict | None:
    """A RunnableConfig's checkpoint as the API shows it (`thread_id`, `checkpoint_ns`,
    `checkpoint_id`, `checkpoint_map` when present), or None."""
    if not config:
        return None
    conf = config.get("configurable") or {}
    if not conf.get("thread_id") or not conf.get("checkpoint_id"):
        return None
    out = {"checkpoint_id": conf["checkpoint_id"], "thread_id": conf["thread_id"]}
    if "checkpoint_ns" in conf:
        out["checkpoint_ns"] = conf["checkpoint_ns"] or ""
    if "checkpoint_map" in conf:
        out["checkpoint_map"] = conf["checkpoint_map"]
    return out


def debug_checkpoint(payload: Any) -> Any:
    """The payload of a "debug" stream's checkpoint event as LangGraph's server sends it:
    `checkpoint` / `parent_checkpoint` objects, and each task's subgraph state as its `checkpoint`."""
    if not isinstance(payload, dict):
        return payload
    tasks = []
    for t in payload.get("tasks") or ():
        t = dict(t)
        state = t.get("state")
        if isinstance(state, dict) and state.get("configurable"):
            t["checkpoint"] = state["configurable"]
            del t["state"]
        tasks.append(t)
    return {
        **payload,
        "checkpoint": checkpoint_of(payload.get("config")),
        "parent_checkpoint": checkpoint_of(payload.get("parent_config")),
        "tasks": tasks,
    }


def state_json(snapshot: Any) -> dict:
    """A `StateSnapshot` as LangGraph's server shows thread state."""
    if snapshot is None or checkpoint_of(snapshot.config) is None:
        return dict(_EMPTY_STATE)
    tasks = []
    for t in snapshot.tasks:
        state = t.state
        nested = state is not None and hasattr(state, "tasks") and hasattr(state, "values")
        tasks.append(
            {
                "id": t.id,
                "name": t.name,
                "path": jsonable(t.path),
                "error": jsonable(t.error),
                "interrupts": [interrupt_json(i) for i in t.interrupts],
                "checkpoint": (state.get("configurable") if isinstance(state, dict) else None),
                "state": state_json(state) if nested else None,
                "result": jsonable(getattr(t, "result", None)),
            }
        )
    metadata = jsonable(snapshot.metadata)
    if isinstance(metadata, dict) and metadata.get("checkpoint_ns") == "":
        metadata.pop("checkpoint_ns")
    conf = snapshot.config.get("configurable") or {}
    parent = (snapshot.parent_config or {}).get("configurable") or {}
    return {
        "values": jsonable(snapshot.values),
        "next": list(snapshot.next),
        "tasks": tasks,
        "metadata": metadata,
        "created_at": snapshot.created_at,
        "checkpoint": checkpoint_of(snapshot.config),
        "parent_checkpoint": checkpoint_of(snapshot.parent_config),
        "interrupts": [interrupt_json(i) for i in getattr(snapshot, "interrupts", ())],
        "checkpoint_id": conf.get("checkpoint_id"),
        "parent_checkpoint_id": parent.get("checkpoint_id") if snapshot.parent_config else None,
    }
