"""A run request: the options a client gives a run, checked, and the run record they make.

Why this module exists: a run's options (stream modes, multitask strategy, command,
config, metadata, context, checkpoint pins) arrive from the API, from triggers and from
tests. They are checked here once, before the run manager takes its lock, with
LangGraph's server's texts, and credential-like keys are left out of everything that is
stored (`scrub_secrets`). The run record keeps them in that server's shape (`kwargs`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lgembed.service.errors import BadRequest, Invalid
from lgembed.service.records import scrub_secrets

__all__ = ("MULTITASK_STRATEGIES", "STREAM_MODES", "RunRequest", "parse_run_request")

STREAM_MODES = ("values", "updates", "custom", "messages", "messages-tuple", "debug", "tasks", "checkpoints")
"""The stream modes a run accepts (LangGraph's "events", "tools" and "lifecycle" are not served)."""
MULTITASK_STRATEGIES = ("reject", "enqueue", "interrupt")
"""How a run created on a busy thread is handled ("rollback" is not supported)."""
_RESUME_MISSING = "You must provide a thread_id when resuming."


@dataclass
class RunRequest:
    """A checked run request.

    Attributes:
        modes: the stream modes (at least one).
        input: the graph input.
        command: the `command` object, or None.
        config: the config without `configurable` and `metadata`, scrubbed.
        configurable: `configurable`, scrubbed, with the checkpoint pins.
        run_metadata: the run's metadata, scrubbed.
        config_metadata: the config's metadata, scrubbed.
        context: the context as given (the graph gets it).
        stored_context: the context, scrubbed (the record keeps it), or None.
        interrupt_before: nodes to interrupt before.
        interrupt_after: nodes to interrupt after.
        subgraphs: stream the subgraphs' events too.
        temporary: a thread made for this run alone, deleted when it ends.
        multitask_strategy: what to do when the thread is busy.
        dropped: the credential-like keys that were left out (names only).
    """

    modes: list[str]
    input: Any
    command: dict | None
    config: dict
    configurable: dict
    run_metadata: dict
    config_metadata: dict
    context: Any
    stored_context: Any
    interrupt_before: Any
    interrupt_after: Any
    subgraphs: bool
    temporary: bool
    multitask_strategy: str
    dropped: set

    def thread_metadata(self, graph_id: str, assistant_id: str) -> dict:
        """The metadata of a thread this run creates."""
        return {"graph_id": graph_id, "assistant_id": assistant_id, **self.config_metadata, **self.run_metadata}

    def record(self, run_id: str, thread: dict, graph_id: str, assistant_id: str, now: str) -> dict:
        """The run record (status "pending") of this request on `thread` (its record)."""
        tid = thread["thread_id"]
        merged = {
            **{"created_by": "system"},
            **thread.get("metadata", {}),
            **self.config_metadata,
            **self.run_metadata,
            "assistant_id": assistant_id,
        }
        merged.setdefault("graph_id", graph_id)
        configurable = {
            **self.configurable,
            "run_id": run_id,
            "thread_id": tid,
            "graph_id": graph_id,
            "assistant_id": assistant_id,
        }
        return {
            "run_id": run_id,
            "thread_id": tid,
            "assistant_id": assistant_id,
            "metadata": merged,
            "status": "pending",
            "kwargs": {
                "input": self.input,
                "command": self.command,
                "config": {**self.config, "configurable": configurable, "metadata": merged},
                "context": self.stored_context if self.stored_context is not None else {},
                "stream_mode": self.modes,
                "interrupt_before": self.interrupt_before,
                "interrupt_after": self.interrupt_after,
                "subgraphs": self.subgraphs,
                "temporary": self.temporary,
                "durability": "sync",
            },
            "multitask_strategy": self.multitask_strategy,
            "created_at": now,
            "updated_at": now,
        }


def parse_run_request(
    thread_id: str | None,
    *,
    input: Any = None,
    command: dict | None = None,
    stream_mode: list[str] | str = "values",
    config: dict | None = None,
    metadata: dict | None = None,
    multitask_strategy: str = "reject",
    on_completion: str | None = None,
    context: Any = None,
    interrupt_before: Any = None,
    interrupt_after: Any = None,
    stream_subgraphs: bool = False,
    checkpoint: dict | None = None,
    checkpoint_id: str | None = None,
) -> RunRequest:
    """Checks a run's options (the keywords of `RunManager.create_run`).

    Args:
        thread_id: the thread, or None for a run on a new thread.
        on_completion: "delete" (default without a thread) or "keep": whether a thread
            made for this run is deleted when it ends.
        (the others: as LangGraph's `runs.create` takes them)

    Raises:
        Invalid: an unknown stream mode or multitask strategy, or a command, config or
            metadata that is not an object.
        BadRequest: a resume without a thread, or both configurable and context.
    """
    modes = [stream_mode] if isinstance(stream_mode, str) else list(stream_mode or ["values"])
    if not modes:
        modes = ["values"]
    for m in modes:
        if m not in STREAM_MODES:
            msg = f"stream_mode {m!r} is not supported by lgembed; use one or more of {', '.join(STREAM_MODES)}"
            raise Invalid(msg)
    if multitask_strategy not in MULTITASK_STRATEGIES:
        msg = (
            f"multitask_strategy must be one of {', '.join(MULTITASK_STRATEGIES)} (got {multitask_strategy!r}); "
            "lgembed does not roll back a running run's checkpoints"
        )
        raise Invalid(msg)
    if command is not None and not isinstance(command, dict):
        raise Invalid(f"'command' must be an object with resume, update or goto (got {type(command).__name__})")
    if thread_id is None and command and command.get("resume") is not None:
        raise BadRequest(_RESUME_MISSING)
    for name, value in (("config", config), ("metadata", metadata)):
        if value is not None and not isinstance(value, dict):
            msg = f"'{name}' must be an object (got {type(value).__name__})"
            raise Invalid(msg)
    config = dict(config or {})
    dropped: set = set()
    configurable = scrub_secrets(dict(config.pop("configurable", None) or {}), dropped)
    if configurable and context:
        raise BadRequest(
            "Cannot specify both configurable and context. Prefer setting context alone. Context was "
            "introduced in LangGraph 0.6.0 and is the long term planned replacement for configurable."
        )
    run_metadata = scrub_secrets(dict(metadata or {}), dropped)
    config_metadata = scrub_secrets(dict(config.pop("metadata", None) or {}), dropped)
    config = scrub_secrets(config, dropped)
    stored_context = scrub_secrets(context, dropped) if context is not None else None
    if checkpoint_id:
        configurable["checkpoint_id"] = str(checkpoint_id)
    if checkpoint:
        configurable.update(
            {k: v for k, v in checkpoint.items() if k in ("checkpoint_id", "checkpoint_ns", "checkpoint_map") and v}
        )
    return RunRequest(
        modes=modes,
        input=input,
        command=command,
        config=config,
        configurable=configurable,
        run_metadata=run_metadata,
        config_metadata=config_metadata,
        context=context,
        stored_context=stored_context,
        interrupt_before=interrupt_before,
        interrupt_after=interrupt_after,
        subgraphs=bool(stream_subgraphs),
        temporary=thread_id is None and (on_completion or "delete") == "delete",
        multitask_strategy=multitask_strategy,
        dropped=dropped,
    )
