"""One run of a graph: the superstep state machine (docs/BEHAVIOUR.md §5).

`Run` holds the state of one invocation (channels, versions, versions-seen, step
counters, stream buffer) and implements the parts of the loop that do not depend
on how tasks are executed: `start` (input), `tick` (prepare tasks), `commit` (a
task finished), `after_tick` (apply writes) and `finish` (output). The sync and
async drivers in `lgembed.pregel.main` call these around task execution.
"""

from __future__ import annotations

from collections import deque
from functools import partial
from typing import Any

from lgembed._constants import (
    CONF,
    CONFIG_KEY_CHECKPOINT_MAP,
    CONFIG_KEY_TASK,
    DEFAULT_RECURSION_LIMIT,
    EXCLUDED_METADATA_KEYS,
    ERROR,
    ERROR_SOURCE_NODE,
    INPUT,
    INTERRUPT,
    NO_WRITES,
    PULL,
    PUSH,
    RETURN,
    TASKS,
)
from lgembed._algo import apply_writes, node_triggered, triggered_nodes
from lgembed._channels import Topic
from lgembed._typing import MISSING
from lgembed.errors import (
    RECURSION_LIMIT,
    EmptyInputError,
    GraphBubbleUp,
    GraphInterrupt,
    NodeError,
    GraphRecursionError,
)
from lgembed.config import _TASK
from lgembed.errors import add_note
from lgembed.pregel._task import Task
from lgembed.runtime import Runtime

_PUSH_TRIGGERS = (PUSH,)


class _InputTask:
    """The trigger-less pseudo task that applies graph input (L-8)."""

    __slots__ = ("writes",)
    name = INPUT
    triggers = ()
    path = ()
    order = ()

    def __init__(self, writes: list) -> None:
        self.writes = writes


class Run:
    """State of one graph invocation.

    Args:
        graph: the compiled Pregel graph.
        config: the merged run config.
        modes: stream modes to produce (a set).
        output_keys: output channels for `values` / `updates` (str or list).
        interrupt_before / interrupt_after: node names or "*".
        context: the run's context object (already coerced).
        parent_ns: checkpoint namespace of the parent task, "" at the root.
    """

    def __init__(
        self,
        graph: Any,
        config: dict,
        *,
        modes: frozenset,
        output_keys: Any,
        interrupt_before: Any = (),
        interrupt_after: Any = (),
        context: Any = None,
        parent_ns: str = "",
        ns: tuple = (),
        parent_sink: Any = None,
        parent_modes: frozenset = frozenset(),
        parent_task: Any = None,
        parent_writer: Any = None,
        store: Any = MISSING,
    ) -> None:
        self.graph = graph
        # the graph's indexes read every step, held here (no lookups on the graph per step)
        self.nodes = graph.nodes
        self.trigger_to_nodes = graph.trigger_to_nodes
        self.finishing = graph.finishing
        self.store = graph.store if store is MISSING else store
        self.config = config
        self.modes = modes
        self.output_keys = output_keys
        self.stream_keys = graph.stream_channels
        self.interrupt_before = interrupt_before
        self.interrupt_after = interrupt_after
        self.parent_ns = parent_ns
        self.ns = ns
        self.nested = parent_task is not None
        self.parent_task = parent_task
        self.parent_sink = parent_sink
        self.own_modes = modes
        if parent_sink is not None:
            self.parent_modes = parent_modes
            modes = modes | parent_modes
        else:
            self.parent_modes = _NO_MODES
        self.modes = modes
        self.child_sink: Any = None
        self._tap: Any = None
        self.resuming = False
        self.out: deque = deque()
        self.waker: Any = None
        # channels: fresh copies of the graph's channel prototypes (a checkpointed run
        # builds them from the loaded checkpoint instead)
        self.channels: dict = graph._empty_channels() if self._new_channels else {}
        # the state view (docs/DESIGN.md §3): the whole state as one dict kept current by
        # apply(), so a node or router that reads every key copies it in one C call
        # instead of walking every channel by name; None until first read
        self.view_keys = getattr(graph, "view_keys", None)
        self.view_set = getattr(graph, "view_set", _NO_MODES)
        self.view: dict | None = None
        self.view_src: dict | None = None
        # the view under a node's update, for routers ({**update, **state}: LangGraph's
        # key order, update first): {update's key order: dict}, for the view `unders_src`
        # (see view_under)
        self.unders: dict | None = None
        self.unders_src: dict | None = None
        self.under_last: Any = None
        self.versions: dict = {}
        self.seen: dict = {INPUT: {}}
        self.max_version: Any = None
        self.null_version: Any = 0
        self.live: set = set()
        self.updated: set | None = None
        limit = config.get("recursion_limit", DEFAULT_RECURSION_LIMIT)
        self.step = -1
        self.stop = self.step + limit + 1
        self.limit = limit
        self.tasks: list = []
        self.interrupts: list = []
        self.interrupted = False
        # a task of this step raised GraphInterrupt (maybe with no interrupts: a nested
        # graph stopped at a static breakpoint, I-11)
        self.pending_handlers: list = []
        self.static_interrupt = False
        self.error: BaseException | None = None
        self._checkpoint_id: str | None = None
        configurable = config.get(CONF) or {}
        self.thread_id = configurable.get("thread_id")
        self.run_id = str(config["run_id"]) if config.get("run_id") else None
        if "custom" in modes:
            writer = self._custom_writer
        elif parent_writer is not None:
            writer = parent_writer
        else:
            writer = _no_op
        self.stream_writer = writer
        self.context = context
        self._runtime = None
        self.output: Any = None
        self.values_emitted = False
        self.lazy_values = False
        if self.nested:
            self.ns_value = configurable.get("checkpoint_ns", "")
            self.parents = dict(configurable.get("checkpoint_map") or {})
        else:
            self.ns_value = ""
            self.parents = {}

    @property
    def checkpoint_id(self) -> str:
        """Id of the checkpoint the current step starts from. Without a checkpointer each
        step still has a fresh one, made on first use (task ids derive from it, L-23)."""
        cid = self._checkpoint_id
        if cid is None:
            from lgembed.checkpoint._id import uuid6_str

            cid = self._checkpoint_id = uuid6_str(self.step)
        return cid

    @checkpoint_id.setter
    def checkpoint_id(self, value: str) -> None:
        self._checkpoint_id = value

    @property
    def runtime(self) -> Runtime:
        """The run's Runtime (context, store, stream writer), built on first use."""
        rt = self._runtime
        if rt is None:
            rt = self._runtime = Runtime(context=self.context, store=self.store, stream_writer=self.stream_writer)
        return rt

    # --- streaming ---------------------------------------------------------------------

    def _custom_writer(self, chunk: Any) -> None:
        task = _TASK.get()
        ns = task.run.ns if task is not None else self.ns
        self.emit_from(ns, "custom", chunk)

    def emit(self, mode: str, payload: Any) -> None:
        if mode in self.own_modes:
            self.out.append((self.ns, mode, payload))
        if mode in self.parent_modes:
            self.parent_sink((self.ns, mode, payload))

    def emit_from(self, ns: tuple, mode: str, payload: Any) -> None:
        """A chunk produced by this run or a nested graph; thread-safe (deque append)."""
        if mode in self.own_modes:
            self.out.append((ns, mode, payload))
            waker = self.waker
            if waker is not None:
                waker.put(None)
        if mode in self.parent_modes:
            self.parent_sink((ns, mode, payload))

    def sink(self, item: tuple) -> None:
        """Receives chunks of nested graphs (stream(subgraphs=True))."""
        self.emit_from(item[0], item[1], item[2])

    def set_lazy_values(self, lazy: bool) -> None:
        """invoke(): remember that a values chunk was due instead of building it each step.

        Exact only when no output channel can be cleared by a later step, and when no
        parent graph streams this run's values.
        """
        if not lazy or "values" in self.parent_modes:
            return
        keys = self.output_keys
        keys = (keys,) if type(keys) is str else keys
        specs = self.graph._specs
        if any(specs[k]._lg_clears_on_empty for k in keys if k in specs):
            return
        self.lazy_values = True

    _new_channels = True
    # whether __init__ creates empty channels (CheckpointedRun loads them)

    def emit_values(self, payload_fn: Any) -> None:
        if self.lazy_values:
            self.values_emitted = True
        else:
            self.values_emitted = True
            self.emit("values", payload_fn())

    def read_output(self, keys: Any) -> Any:
        if keys is self.view_keys and keys is not None:
            return self.read_view()
        channels = self.channels
        if type(keys) is str:
            ch = channels[keys]
            return ch.get() if ch.is_available() else None
        out = {}
        for k in keys:
            ch = channels[k]
            if ch._lg_kind:  # LastValue / EphemeralValue: get() is `value`, MISSING when empty
                value = ch.value
                if value is not MISSING:
                    out[k] = value
            elif ch.is_available():
                out[k] = ch.get()
        return out

    # --- the state view ------------------------------------------------------------------

    def read_view(self) -> dict:
        """A new dict of the available channels of `view_keys`, in their order (what
        `read_input` of a node reading the whole state returns, without managed values).

        Strategy: the view is built once per channel set (here, in key order) and then
        kept current by `apply`; a read is one dict copy.
        """
        return self.current_view().copy()

    def current_view(self) -> dict:
        """The state view itself (not a copy: callers must not change it), rebuilt first
        when the run's channels were replaced."""
        view = self.view
        if view is None or self.view_src is not self.channels:
            view = self.build_view()
        return view

    def view_under(self, returned: dict, view: dict) -> dict:
        """A new dict `{**returned, **view}` (`view`: `current_view()`): the state under a
        node's update, in LangGraph's key order (the update's keys first, then the rest
        in state order).

        Building that order costs one dict insert per state key: CPython has no cheaper
        way to put keys in front. A node usually returns the same keys in the same order
        every step, so the dict of an order met twice in a row whose keys are all in the
        view (so its values are the state's) is kept, at most `_UNDERS` of them, current
        by `apply` as the view is; a read of a kept order is one dict copy.
        """
        if not returned:
            return view.copy()
        if len(view) < _UNDER_FROM:  # a few inserts cost less than keeping the order
            return {**returned, **view}
        order = tuple(returned)
        unders = self.unders
        if unders is not None and self.unders_src is view:
            under = unders.get(order)
            if under is not None:
                return under.copy()
        else:
            unders = self.unders = {}
            self.unders_src = view
        values = {**returned, **view}
        if order == self.under_last and len(unders) < _UNDERS:
            for k in order:
                if k not in view:  # the update's own value: not the state's, not kept
                    return values
            unders[order] = values
            return values.copy()
        self.under_last = order
        return values

    def build_view(self) -> dict:
        """(Re)builds the state view from the channels, in `view_keys` order."""
        channels = self.channels
        view = {}
        for key in self.view_keys:
            value = channels[key].value  # view channels are exact stable kinds: get() is `value`
            if value is not MISSING:
                view[key] = value
        self.view = view
        self.view_src = channels
        return view

    # --- versions ----------------------------------------------------------------------

    def next_version(self) -> Any:
        current = self.max_version
        v = 1 if current is None else current + 1
        self.max_version = v
        return v

    def extend_task_configurable(self, task: Task, configurable: dict) -> None:
        """Engine keys a task's config carries to nested graphs (G-1, G-4, S-2)."""
        configurable[CONFIG_KEY_CHECKPOINT_MAP] = {**self.parents, self.ns_value: self.checkpoint_id}
        configurable[CONFIG_KEY_TASK] = task
        configurable["__pregel_read_state"] = task.read_state  # LangGraph's CONFIG_KEY_READ_STATE
        configurable["__pregel_resuming"] = self.resuming
        if self.child_sink is not None:
            configurable["__pregel_stream"] = (self.child_sink, self.modes)
        elif "__pregel_stream" in configurable:
            del configurable["__pregel_stream"]

    def take_resume_for(self, task: Task, idx: int) -> Any:
        """A resume value for the `idx`-th interrupt() of `task`, or MISSING (I-1).

        Without a checkpointer of its own, a nested graph asks its parent task's run.
        """
        parent = self.parent_task
        if parent is not None:
            return parent.run.take_resume_for(parent, idx)
        return MISSING

    def allow_types(self, types: tuple) -> None:
        """Lets checkpoints hold these user classes (checkpointed runs only)."""

    def save_resume(self, task: Task) -> None:
        """Records a task's resume answers (persisted by checkpointed runs)."""

    # --- start ---------------------------------------------------------------------------

    def start(self, input: Any) -> None:
        """Applies graph input (L-8, L-9)."""
        if input is None:
            raise EmptyInputError(f"Received no input for {self.graph.input_channels}")
        writes = self.graph.map_input(input)
        if not writes:
            raise EmptyInputError(f"Received no input for {self.graph.input_channels}")
        self.updated = self.apply([_InputTask(writes)])
        self.step += 1

    # --- tick ---------------------------------------------------------------------------

    def check_limit(self) -> None:
        if self.step > self.stop:
            raise GraphRecursionError(RECURSION_LIMIT.format(limit=self.limit))

    def prepare(self) -> list:
        """Tasks of the next step: PUSH from Sends, then triggered PULL nodes (L-20…L-22)."""
        channels = self.channels
        nodes = self.nodes
        tasks: list = []
        step = self.step
        stop = self.stop
        tasks_ch = channels[TASKS]
        # an exact Topic (the graph's own) is available when its list is not empty
        if tasks_ch.values if type(tasks_ch) is Topic else tasks_ch.is_available():
            for idx, packet in enumerate(tasks_ch.get()):
                node = nodes.get(packet.node)
                if node is None:
                    import logging

                    logging.getLogger("lgembed.pregel").warning(
                        f"Ignoring unknown node name {packet.node} in pending sends"
                    )
                    continue
                path = (PUSH, idx, False)
                tasks.append(Task(self, packet.node, node, packet.arg, path, _PUSH_TRIGGERS, (1, idx)))
        updated = self.updated
        if updated:
            candidates = triggered_nodes(updated, self.trigger_to_nodes)
        elif not self.versions:
            candidates = ()
        else:
            candidates = self.graph.node_names
        versions = self.versions
        seen = self.seen
        null = self.null_version
        view_keys = self.view_keys
        for name in candidates:
            node = nodes[name]
            if node_triggered(node.triggers, channels, versions, seen.get(name), null):
                if node.reads is view_keys and view_keys is not None:
                    # the whole state: a copy of the view, then managed values (as read_input)
                    value = self.read_view()
                    for key, manager in node.managed:
                        value[key] = manager.get(step, stop)
                else:
                    value = node.read_input(channels, step, stop)
                    if value is MISSING:
                        continue
                mapper = node.mapper
                if mapper is not None:
                    try:
                        value = mapper(value)
                    except Exception as exc:
                        add_note(exc, f"Before task with name '{name}' and path '{(PULL, name)}'")
                        raise
                tasks.append(Task(self, name, node, value, node.pull_task_path, node.sorted_triggers, node.pull_order))
        return tasks

    def tick(self) -> list | None:
        """Prepares the next step (L-10…L-14); None when the run is done."""
        self.check_limit()
        tasks = self.prepare()
        self.tasks = tasks
        if not tasks:
            return None
        if self.interrupt_before and self._should_interrupt(self.interrupt_before, tasks):
            self.emit_static_interrupt()
            return None
        if "messages" in self.modes:
            self.mark_message_inputs(tasks)
        if "tasks" in self.modes or "debug" in self.modes:
            for task in tasks:
                if task.node is not None and task.node.hidden:
                    continue
                self._emit_task_event(task_start_payload(task), "task")
        if self.graph.cache is not None:  # hook: node caching (lgembed.pregel._cache)
            from lgembed.pregel._cache import match_cached_writes

            return match_cached_writes(self, tasks, emit=True)
        return tasks

    # --- messages mode (S-9) ----------------------------------------------------------------

    def message_tap(self) -> Any:
        """The seen-message ids of this stream call (shared with streamed subgraphs)."""
        tap = self._tap
        if tap is None:
            parent = self.parent_task
            if parent is not None and "messages" in self.parent_modes:
                tap = parent.run.message_tap()
            else:
                from lgembed.pregel._messages import MessageTap

                tap = MessageTap()
            self._tap = tap
        return tap

    def mark_message_inputs(self, tasks: list) -> None:
        tap = self.message_tap()
        for task in tasks:
            if not (task.node is not None and task.node.hidden):
                tap.mark_input(task.input)

    def _emit_messages(self, task: Task) -> None:
        found = self.message_tap().returned(task.returned)
        if found:
            metadata = dict(task.config.get("metadata") or {})
            # LangGraph's callback manager tags every run it traces
            metadata.setdefault("ls_integration", "langgraph")
            for message in found:
                self.emit("messages", (message, metadata))

    def _emit_task_event(self, payload: dict, kind: str) -> None:
        if "tasks" in self.modes:
            self.emit("tasks", payload)
        if "debug" in self.modes:
            import datetime

            ts = datetime.datetime.now(datetime.timezone.utc).isoformat()
            self.emit("debug", {"step": self.step, "timestamp": ts, "type": kind, "payload": payload})

    def _should_interrupt(self, names: Any, tasks: list) -> bool:
        if names == "*":
            return any(not (t.node is not None and t.node.hidden) for t in tasks)
        return any(t.name in names for t in tasks)

    def end_of_tasks(self) -> None:
        """`tick` found nothing to run, or stopped at a static breakpoint before running."""
        if self.static_interrupt and self.nested:
            raise GraphInterrupt(())

    def after_tasks(self) -> bool:
        """After a step's tasks ran: raise its error (L-32), stop at interrupts (L-33, I-5),
        or apply its writes and check interrupt_after (L-47). Returns True when the run is over.

        A nested graph raises its interrupts to the parent task instead of stopping quietly.
        """
        if self.error is not None:
            raise self.error
        if self.interrupted:
            if self.nested:
                raise GraphInterrupt(tuple(self.interrupts))
            self.apply_interrupted_step()
            return True
        self.after_tick()
        if self.interrupt_after and self._should_interrupt(self.interrupt_after, self.tasks):
            self.interrupt_after_hit()
            if self.nested:
                raise GraphInterrupt(())
            return True
        return False

    def interrupt_after_hit(self) -> None:
        """interrupt_after fired after the step that just ran (L-47)."""
        self.emit_static_interrupt()

    def emit_static_interrupt(self) -> None:
        self.static_interrupt = True
        # a nested graph's breakpoint shows as its parent task's interrupt, not in its namespace
        if "updates" in self.modes and not self.nested:
            self.emit("updates", {INTERRUPT: ()})

    # --- commit ----------------------------------------------------------------------------

    def commit(self, task: Task) -> None:
        """Records a finished task: its writes and stream chunks (L-31…L-33)."""
        task.done = True
        error = task.error
        node = task.node
        hidden = node is not None and node.hidden
        if error is None:
            writes = task.writes
            if self.graph.cache is not None:  # hook: node caching (lgembed.pregel._cache)
                from lgembed.pregel._cache import store_cached_writes

                store_cached_writes(self, task)
            if not writes:
                writes.append((NO_WRITES, None))
            if not hidden:
                if "messages" in self.modes:
                    self._emit_messages(task)
                if "updates" in self.modes:
                    self.emit("updates", self._updates_chunk(task))
                if "tasks" in self.modes or "debug" in self.modes:
                    self._task_result(task, None, [])
            return
        if isinstance(error, GraphInterrupt):
            interrupts = tuple(error.args[0]) if error.args else ()
            task.interrupts = interrupts
            # writes made before the interrupt stay in memory (applied to the returned
            # values, I-5) but are never saved (I-4)
            task.writes.append((INTERRUPT, interrupts))
            self.interrupts.extend(interrupts)
            self.interrupted = True
            if not hidden:
                if "updates" in self.modes:
                    self.emit("updates", {INTERRUPT: interrupts})
                if "values" in self.modes:
                    self.emit_values(partial(self._interrupt_values, interrupts))
                if "tasks" in self.modes or "debug" in self.modes:
                    from dataclasses import asdict

                    self._task_result(task, None, [asdict(i) for i in interrupts])
            return
        # L-32: writes made before the failure (a node's writes when its router raised)
        # stay with the error: they are streamed and saved, as LangGraph does
        task.writes.append((ERROR, error))
        handler_name = node.error_handler if node is not None else None
        if handler_name and not isinstance(error, GraphBubbleUp) and handler_name in self.graph.nodes:
            # E-9: the failure is handled by the node's error handler in this step
            task.writes.append((ERROR_SOURCE_NODE, task.name))
            task.handled = True
            handler = Task(
                self,
                handler_name,
                self.graph.nodes[handler_name],
                task.input,
                (PUSH, "node_error_handler", task.id),
                _PUSH_TRIGGERS,
                (2, task.id),
            )
            handler.node_error = NodeError(task.name, error)
            self.pending_handlers.append(handler)
        elif self.error is None:
            self.error = error
        if not hidden:
            if "updates" in self.modes and task.writes[0][0] != ERROR:
                self.emit("updates", self._updates_chunk(task))
            if "tasks" in self.modes or "debug" in self.modes:
                self._task_result(task, error, [])

    def _interrupt_values(self, interrupts: tuple) -> Any:
        current = self.read_output(self.output_keys)
        if isinstance(current, dict):
            current[INTERRUPT] = interrupts
            return current
        return {INTERRUPT: interrupts}

    def _task_result(self, task: Task, error: Any, interrupts: list) -> None:
        keys = self.stream_keys
        keys = (keys,) if type(keys) is str else keys
        # read from the writes, also those a failed task made before failing
        result = fold_writes((c, v) for c, v in task.writes if c in keys or c == RETURN)
        payload = {"id": task.id, "name": task.name, "error": error, "result": result, "interrupts": interrupts}
        self._emit_task_event(payload, "task_result")

    def _updates_chunk(self, task: Task, cached: bool = False) -> dict:
        """The `updates` chunk of one finished task (S-4): a returned value (RETURN write)
        as is, else the task's writes to the output keys, as a dict, or as a list of
        one-key dicts when a key was written twice."""
        keys = self.output_keys
        writes = task.writes
        update: Any = None
        if type(keys) is str:
            vals: Any = None
            for chan, value in writes:
                if chan == RETURN:
                    return {task.name: value}
                if chan == keys:
                    if vals is None:
                        vals = [value]
                    else:
                        vals.append(value)
            if vals is not None:
                update = vals[0] if len(vals) == 1 else vals
        else:
            twice = False
            for chan, value in writes:
                if chan == RETURN:
                    return {task.name: value}
                if chan in keys:
                    if update is None:
                        update = {chan: value}
                    elif chan in update:
                        twice = True
                    else:
                        update[chan] = value
            if twice:
                update = [{c: v} for c, v in writes if c in keys]
        chunk = {task.name: update}
        if cached:
            chunk["__metadata__"] = {"cached": True}
        return chunk

    # --- after tick -------------------------------------------------------------------------

    def after_tick(self) -> None:
        """Applies the step's writes, emits values, advances the step (L-40…L-47)."""
        tasks = self.tasks
        if len(tasks) > 1:
            tasks = sorted(tasks, key=_order)
        self.updated = updated = self.apply(tasks)
        if "values" in self.modes:
            self._maybe_emit_values(updated, tasks)
        self.end_step()

    def apply(self, tasks: list) -> set:
        """apply_writes over this run's channels, versions and versions-seen; returns the updated channels.

        Keeps the state view current: only channels of the view that tasks wrote can
        have changed (view channels neither clear on empty updates, nor consume, nor
        finish), so the cost follows the writes, not the size of the state.
        """
        view = self.view
        # dropped while applying: a write that raises leaves no half-updated view
        self.view = None
        updated = apply_writes(
            self.channels,
            self.versions,
            self.seen,
            tasks,
            self.next_version(),
            self.trigger_to_nodes,
            self.live,
            self.finishing,
        )
        if view is not None and self.view_src is self.channels:
            channels = self.channels
            view_set = self.view_set
            unders = self.unders if self.unders_src is view else None
            for task in tasks:
                for chan, _ in task.writes:
                    if chan in view_set:
                        value = channels[chan].value
                        if chan in view:
                            if value is MISSING:
                                del view[chan]
                                unders = self.unders = self.unders_src = None
                            else:
                                view[chan] = value
                                if unders:
                                    for under in unders.values():
                                        under[chan] = value
                        elif value is not MISSING:
                            # a key becoming available: rebuilt on next read, in key order
                            return updated
            self.view = view
        return updated

    def end_step(self) -> None:
        """Advances to the next step (checkpointed runs save a checkpoint here)."""
        self.step += 1
        self._checkpoint_id = None

    def close(self) -> None:
        """Called once when the run ends, however it ends."""

    def _maybe_emit_values(self, updated: set, tasks: list) -> None:
        if self.values_emitted and self.lazy_values:
            return
        keys = self.output_keys
        if type(keys) is str:
            if keys not in updated:
                return
            if not _wrote_to(tasks, keys):
                return
        else:
            # the whole state: its set, so both tests cost the step's writes
            names = self.view_set if keys is self.view_keys else keys
            if updated.isdisjoint(names) or not _wrote_to(tasks, names):
                return
        self.emit_values(partial(self.read_output, keys))

    def apply_interrupted_step(self) -> None:
        """On a dynamic interrupt at the root: apply the finished siblings' writes in memory (I-5)."""
        tasks = self.tasks
        if not any(c != INTERRUPT and c != ERROR for t in tasks for c, _ in t.writes):
            return
        tasks = sorted(tasks, key=_order)
        updated = self.apply(tasks)
        if "values" in self.modes:
            self._maybe_emit_values(updated, tasks)


_NO_MODES = frozenset()

_UNDERS = 4
_UNDER_FROM = 16
# the most key orders a run keeps the view under, and the fewest keys of a view worth
# keeping it under an order for (Run.view_under)


def _wrote_to(tasks: list, keys: Any) -> bool:
    """Whether one of `tasks` wrote to `keys` (a channel name, or a collection of names)."""
    single = type(keys) is str
    for task in tasks:
        for chan, _ in task.writes:
            if (chan == keys) if single else (chan in keys):
                return True
    return False


def _order(task: Any) -> tuple:
    return task.order


def fold_writes(writes: Any) -> dict:
    """`{channel: value}` of a task's `(channel, value)` writes; a channel written more
    than once maps to `{"$writes": [values]}` (LangGraph's map_task_result_writes)."""
    result: dict = {}
    for chan, value in writes:
        if chan in result:
            existing = result[chan]
            if isinstance(existing, dict) and isinstance(existing.get("$writes"), list):
                existing["$writes"].append(value)
            else:
                result[chan] = {"$writes": [existing, value]}
        else:
            result[chan] = value
    return result


def task_start_payload(task: Task) -> dict:
    """A task's start event (S-5): user metadata of its config, and its tags, ride along."""
    payload = {"id": task.id, "name": task.name, "input": task.input, "triggers": task.triggers}
    config = task.config
    md = {k: v for k, v in (config.get("metadata") or {}).items() if k not in EXCLUDED_METADATA_KEYS}
    tags = [t for t in config.get("tags") or () if not t.startswith("seq:step")]
    if tags:
        md["tags"] = tags
    if md:
        payload["metadata"] = md
    return payload


def _no_op(_chunk: Any) -> None:
    """Stream writer when the custom mode is off."""
