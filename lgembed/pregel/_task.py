"""One task of a superstep: a node run with its input, its writes and lazily built config."""

from __future__ import annotations

from typing import Any

from lgembed._constants import (
    CONF,
    CONFIG_KEY_CHECKPOINT_ID,
    CONFIG_KEY_CHECKPOINT_NS,
    CONFIG_KEY_RUNTIME,
    CONFIG_KEY_TASK_ID,
    INTERRUPT,
    NS_END,
    NS_SEP,
    PULL,
    PUSH,
    RESUME,
)
from lgembed._typing import MISSING



_NO_UPDATE: dict = {}
# `local_read_over`'s `returned` for the state alone (never changed)


def _local_value(ch: Any, vals: list) -> Any:
    """A view channel's value after `vals` were written to a copy of it (MISSING when
    empty): a single write to an exact LastValue is its value, no copy made."""
    if len(vals) == 1 and ch._lg_kind == 1:
        return vals[0]
    ch = ch.copy()
    ch.update(vals)
    return ch.value  # view channels: get() is `value`, MISSING when empty


class Task:
    """A node to run in a step.

    Attributes:
        name: node name.
        node: the PregelNode (None for a Send to an unknown node, never run).
        input: the value passed to the node.
        path: ("__pregel_pull", name) or ("__pregel_push", index, False).
        triggers: sorted trigger channels (PULL) or ("__pregel_push",).
        writes: (channel, value) pairs produced by the run.
        order: sort key equal to LangGraph's task-path order (L-40).
    """

    __slots__ = (
        "name",
        "node",
        "input",
        "path",
        "triggers",
        "writes",
        "order",
        "run",
        "_id",
        "_config",
        "_runtime",
        "node_error",
        "interrupt_idx",
        "resume_values",
        "error",
        "done",
        "interrupts",
        "cached",
        "handled",
        "resume_new",
        "subgraph_counter",
        "attempt",
        "first_attempt_time",
        "returned",
    )

    def __init__(self, run: Any, name: str, node: Any, value: Any, path: tuple, triggers: Any, order: tuple) -> None:
        self.run = run
        self.name = name
        self.node = node
        self.input = value
        self.path = path
        self.triggers = triggers
        self.order = order
        self.writes: list = []
        self._id: str | None = None
        self._config: dict | None = None
        self._runtime = None
        self.node_error = None
        self.interrupt_idx = 0
        self.resume_values: list | None = None
        self.error: BaseException | None = None
        self.done = False
        self.interrupts: tuple = ()
        self.cached = False
        self.handled = False
        self.resume_new = False
        self.subgraph_counter = 0
        self.attempt = 0
        self.returned: Any = None
        self.first_attempt_time: float | None = None

    # --- identity --------------------------------------------------------------------

    @property
    def id(self) -> str:
        tid = self._id
        if tid is None:
            task_id = _task_id or _load_task_id()
            run = self.run
            ns = f"{run.parent_ns}{NS_SEP}{self.name}" if run.parent_ns else self.name
            if self.path[0] == PULL:
                tid = task_id(run.checkpoint_id, ns, str(run.step), self.name, PULL, *self.triggers)
            else:
                tid = task_id(run.checkpoint_id, ns, str(run.step), self.name, PUSH, str(self.path[1]))
            self._id = tid
        return tid

    @property
    def checkpoint_ns(self) -> str:
        run = self.run
        ns = f"{run.parent_ns}{NS_SEP}{self.name}" if run.parent_ns else self.name
        return f"{ns}{NS_END}{self.id}"

    # --- runtime / config ----------------------------------------------------------------

    @property
    def stream_writer(self) -> Any:
        return self.run.stream_writer

    @property
    def runtime(self) -> Any:
        rt = self._runtime
        if rt is None:
            from lgembed.runtime import ExecutionInfo

            run = self.run
            rt = self._runtime = run.runtime.override(
                execution_info=ExecutionInfo(
                    checkpoint_id=run.checkpoint_id,
                    checkpoint_ns=self.checkpoint_ns,
                    task_id=self.id,
                    thread_id=run.thread_id,
                    run_id=run.run_id,
                    node_attempt=self.attempt or 1,
                    node_first_attempt_time=self.first_attempt_time,
                )
            )
        return rt

    @property
    def config(self) -> dict:
        cfg = self._config
        if cfg is None:
            run = self.run
            base = run.config
            metadata = dict(base.get("metadata") or {})
            metadata["langgraph_step"] = run.step
            metadata["langgraph_node"] = self.name
            metadata["langgraph_triggers"] = tuple(self.triggers)
            metadata["langgraph_path"] = self.path[:3]
            metadata["langgraph_checkpoint_ns"] = self.checkpoint_ns
            node = self.node
            if node is not None and node.metadata:
                metadata.update(node.metadata)
            configurable = dict(base.get(CONF) or {})
            configurable[CONFIG_KEY_TASK_ID] = self.id
            configurable[CONFIG_KEY_RUNTIME] = self.runtime
            configurable[CONFIG_KEY_CHECKPOINT_ID] = None
            configurable[CONFIG_KEY_CHECKPOINT_NS] = self.checkpoint_ns
            run.extend_task_configurable(self, configurable)
            cfg = dict(base)
            cfg["metadata"] = metadata
            cfg[CONF] = configurable
            # L-24: tags only when the run or the node has some; no run_name (as LangGraph)
            if node is not None and node.tags:
                cfg["tags"] = [*(base.get("tags") or ()), *node.tags]
            cfg.pop("run_id", None)
            cfg.pop("run_name", None)
            self._config = cfg
        return cfg

    # --- reads ------------------------------------------------------------------------

    def read_state(self) -> Any:
        """The state this task's node reads, after the task's own writes so far.

        Given to the task's config as `__pregel_read_state`, the key LangGraph's
        `ToolNode` reads the state through when it is called with tool calls only.
        """
        node = self.node
        if node is None:
            return {}
        reads = node.reads
        return self.local_read(reads if isinstance(reads, str) else list(reads), None)

    def local_read(self, select: Any, mapper: Any) -> Any:
        """State as this task sees it after its own writes so far (N-4)."""
        run = self.run
        if select is run.view_keys and select is not None:
            values = self.local_read_over(_NO_UPDATE)
            if values is not None:
                return mapper(values) if mapper is not None else values
        channels = run.channels
        writes = self.writes
        if type(select) is str:
            vals = [v for c, v in writes if c == select]
            if not vals:
                return channels[select].get()
            cc = channels[select].copy()
            cc.update(vals)
            return cc.get()
        updated = self._grouped_writes(select)
        if updated is None:
            updated = {}
        values = {}
        managed = run.graph.managed
        for k in select:
            if managed and k in managed:
                values[k] = managed[k].get(run.step, run.stop)
                continue
            ch = channels[k]
            vals = updated.get(k)
            if vals is not None:
                if len(vals) == 1 and ch._lg_kind == 1:  # an exact LastValue: its value
                    values[k] = vals[0]
                    continue
                ch = ch.copy()
                ch.update(vals)
            if ch._lg_kind:  # LastValue / EphemeralValue: get() is `value`, MISSING when empty
                value = ch.value
                if value is not MISSING:
                    values[k] = value
            elif ch.is_available():
                values[k] = ch.get()
        if mapper is not None:
            return mapper(values)
        return values

    def local_read_over(self, returned: dict) -> Any:
        """`{**returned, **state}`: the whole state after this task's writes (N-4), under
        `returned` (a router's input: the node's update first, LangGraph's key order;
        `{}` for the state alone). Built from the run's state view (`Run.view_under`:
        one dict copy, or one insert per key for an update order not kept), plus the
        writes. None when a write makes a key available that the view lacks (the
        caller's walk keeps the key order then)."""
        run = self.run
        view = run.current_view()
        updated = self._grouped_writes(run.view_set)
        if updated is not None:
            for k in updated:
                if k not in view:
                    return None
        values = run.view_under(returned, view)
        if updated is not None:
            channels = run.channels
            for k, vals in updated.items():
                value = _local_value(channels[k], vals)
                if value is not MISSING:
                    values[k] = value
                elif k in returned:  # absent from the state: the update's own value stays
                    values[k] = returned[k]
                else:
                    del values[k]
        return values

    def _grouped_writes(self, keys: Any) -> Any:
        # this task's writes to the channels in `keys`, grouped: {channel: [values]},
        # None when there are none
        updated = None
        for c, v in self.writes:
            if c in keys:
                if updated is None:
                    updated = {c: [v]}
                else:
                    vals = updated.get(c)
                    if vals is None:
                        updated[c] = [v]
                    else:
                        vals.append(v)
        return updated

    # --- interrupts ---------------------------------------------------------------------

    def interrupt(self, value: Any, response_schema: Any) -> Any:
        """Implements `interrupt()` for this task (I-1, I-2, I-3)."""
        from lgembed.errors import GraphInterrupt
        from lgembed.types import Interrupt

        adapter = None
        if response_schema is not None and not isinstance(response_schema, dict):
            from pydantic import TypeAdapter

            adapter = TypeAdapter(response_schema)
            if isinstance(response_schema, type):
                self.run.allow_types((response_schema,))
        idx = self.interrupt_idx
        self.interrupt_idx += 1
        resume = self.resume_values
        if resume and idx < len(resume):
            answer = resume[idx]
            validated = _validate_resume(adapter, answer) if adapter is not None else answer
            if self.resume_new and idx == len(resume) - 1:
                # an answer from a resume map: persist the task's answers (I-1, I-7)
                self.resume_new = False
                self.run.save_resume(self)
            return validated
        answer = self.run.take_resume_for(self, idx)
        if answer is not MISSING and answer is not None:
            validated = _validate_resume(adapter, answer) if adapter is not None else answer
            if self.resume_values is None:
                self.resume_values = []
            self.resume_values.append(answer)
            self.run.save_resume(self)
            return validated
        from lgembed._ids import interrupt_id

        iid = interrupt_id(self.checkpoint_ns, len(resume or ()))
        schema = adapter.json_schema() if adapter is not None else response_schema
        raise GraphInterrupt((Interrupt(value=value, id=iid, response_schema=schema),))


def _validate_resume(adapter: Any, value: Any) -> Any:
    """Validates a resume value against the interrupt's response schema (I-3)."""
    from pydantic import ValidationError

    try:
        return adapter.validate_python(value)
    except ValidationError as exc:
        setattr(exc, "_langgraph_invalid_resume", True)
        raise


INTERRUPT_KEYS = (INTERRUPT, RESUME)

_task_id: Any = None
# lgembed._ids.task_id, imported on first use (hashlib stays out of `import
# lgembed.graph`); a function-level import on every call costs about 10,000
# instructions in the compiled build


def _load_task_id() -> Any:
    global _task_id
    from lgembed._ids import task_id

    _task_id = task_id
    return task_id
