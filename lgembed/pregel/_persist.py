"""Checkpointed runs: loading, saving, pending writes, resume and time travel (§6, §9).

`CheckpointedRun` extends `Run` with everything a run does when the graph has a
checkpointer. Runs without one never touch this module, so they build no checkpoint
objects and pay nothing for persistence (docs/DESIGN.md §3).

Why over 600 lines: loading, input vs resume vs fork, pending writes, resume values,
checkpoint events and saving are one state machine over the same run fields; split
across modules they would reach into each other's privates.
"""

from __future__ import annotations

import threading
from dataclasses import asdict
from typing import Any, Iterable, Sequence

from lgembed._constants import (
    CONF,
    CONFIG_KEY_CHECKPOINT_ID,
    CONFIG_KEY_CHECKPOINT_MAP,
    CONFIG_KEY_TASK,
    CONFIG_KEY_CHECKPOINT_NS,
    ERROR,
    ERROR_SOURCE_NODE,
    INPUT,
    INTERRUPT,
    NULL_TASK_ID,
    RESUME,
    RETURN,
)
from lgembed._typing import MISSING
from lgembed.errors import EmptyInputError, GraphBubbleUp, GraphInterrupt, UnknownInterruptError
from lgembed.pregel._loop import Run, _InputTask, fold_writes, task_start_payload
from lgembed.pregel._paths import path_str as _path_str, task_path as _task_path
from lgembed.pregel._subgraphs import node_subgraph
from lgembed.checkpoint._id import now_iso, uuid6_str
from lgembed.pregel._task import Task
from lgembed.types import Command, PregelTask

CONTROL_WRITES = frozenset((ERROR, ERROR_SOURCE_NODE, INTERRUPT, RESUME))
_FIXED_SLOT = frozenset((ERROR, INTERRUPT, RESUME, "__scheduled__"))
# writes a saver keeps one of per task (newer replaces older, P-5)
# writes that say what happened to a task rather than what it produced
_RESUME_MAP_KEY = "__pregel_resume_map"
_MULTIPLE_PENDING = (
    "When there are multiple pending interrupts, you must specify the interrupt id when resuming. "
    "Docs: https://docs.langchain.com/oss/python/langgraph/interrupts#handling-multiple-interrupts."
)


class TaskStatus:
    """What the pending writes of one step say about one task."""

    __slots__ = ("output", "interrupts", "error")

    def __init__(self) -> None:
        self.output: list = []
        self.interrupts: list = []
        self.error: Any = None

    @property
    def finished(self) -> bool:
        return bool(self.output)

    @property
    def pending_interrupts(self) -> tuple:
        return () if self.output else tuple(self.interrupts)


def read_task_statuses(pending_writes: Iterable[tuple]) -> dict[str, TaskStatus]:
    """Status of every task that recorded writes (null-task writes excluded)."""
    out: dict[str, TaskStatus] = {}
    for task_id, channel, value in pending_writes:
        if task_id == NULL_TASK_ID:
            continue
        status = out.get(task_id)
        if status is None:
            status = out[task_id] = TaskStatus()
        if channel == INTERRUPT:
            status.interrupts.extend(value if isinstance(value, (list, tuple)) else [value])
        elif channel == ERROR:
            if status.error is None:
                status.error = value
        elif channel not in CONTROL_WRITES:
            status.output.append((channel, value))
    return out


def is_interrupt_id(key: Any) -> bool:
    """Whether `key` looks like an interrupt id (32 lowercase hex digits)."""
    if not isinstance(key, str) or len(key) != 32:
        return False
    try:
        int(key, 16)
    except ValueError:
        return False
    return key == key.lower()


def result_of(output: Sequence[tuple], keys: Any) -> Any:
    """A task's writes as shown in `PregelTask.result` / checkpoint task events (P-21)."""
    rtn = next((v for c, v in output if c == RETURN), MISSING)
    if rtn is not MISSING:
        return rtn
    writes = [(c, v) for c, v in output if c != RETURN]
    if isinstance(keys, str):
        vals = [v for c, v in writes if c == keys]
        if not vals:
            return None
        return vals[0] if len(vals) == 1 else {"$writes": vals}
    return fold_writes((c, v) for c, v in writes if c in keys)


def tasks_with_writes(tasks: Iterable[Any], pending_writes: list, states: dict | None, keys: Any, *, live: bool = False) -> tuple:
    """PregelTask records for a snapshot (P-21, P-22)."""
    statuses = read_task_statuses(pending_writes or [])
    out = []
    for task in tasks:
        status = statuses.get(task.id)
        if status is None:
            status = TaskStatus()
        result = result_of(status.output, keys) if status.finished else None
        out.append(
            PregelTask(
                task.id,
                task.name,
                task.path,
                status.error,
                status.pending_interrupts if live else tuple(status.interrupts),
                states.get(task.id) if states else None,
                result,
            )
        )
    return tuple(out)


def empty_checkpoint() -> dict:
    return {
        "v": 4,
        "id": uuid6_str(-2),
        "ts": now_iso(),
        "channel_values": {},
        "channel_versions": {},
        "versions_seen": {},
        "updated_channels": None,
    }


class CheckpointedRun(Run):
    """A run of a graph with a checkpointer (L-2…L-9, L-13, P-5, P-14, P-40)."""

    _new_channels = False

    def __init__(self, graph: Any, config: dict, *, saver: Any, durability: Any, **kwargs: Any) -> None:
        super().__init__(graph, config, **kwargs)
        self.saver = saver
        inherited = config[CONF].get("__pregel_durability")
        self.durability = durability or inherited or "async"
        if durability:
            # savers read the run's durability from the configs they receive (LmdbSaver
            # fsyncs "sync" runs); nested graphs inherit it
            config[CONF]["__pregel_durability"] = durability
        self.pending_writes: list = []
        self.deferred_writes: list = []
        self.lock = threading.Lock()
        self.resuming = False
        self.reapplies = True
        self.first_tick = True
        self.exit_dirty = False
        configurable = config[CONF]
        if not any(k in configurable for k in ("thread_id", "checkpoint_ns", "checkpoint_id")):
            raise ValueError(
                "Checkpointer requires one or more of the following 'configurable' keys: "
                "thread_id, checkpoint_ns, checkpoint_id"
            )
        self.ns_value = configurable.get(CONFIG_KEY_CHECKPOINT_NS, "")
        self.addressed = bool(configurable.get(CONFIG_KEY_CHECKPOINT_ID))
        self.thread_id = configurable.get("thread_id")
        if self.thread_id is not None and not isinstance(self.thread_id, str):
            self.thread_id = str(self.thread_id)
        self.resume_map = None
        self.null_resume: Any = MISSING
        self.exit_parent: Any = MISSING  # durability="exit": the parent of the checkpoint saved at the end
        self.prev_checkpoint_id: Any = None
        # the checkpoint fields (checkpoint, superseded, saved_mark, ...) are set by load_saved

    # --- loading ---------------------------------------------------------------------

    def _load(self) -> None:
        configurable = self.config[CONF]
        # L-1: a config without thread_id reaches the saver as is (LangGraph's savers
        # raise KeyError('thread_id'))
        lookup = {"checkpoint_ns": self.ns_value}
        if "thread_id" in configurable:
            lookup["thread_id"] = self.thread_id
        if configurable.get(CONFIG_KEY_CHECKPOINT_ID):
            lookup[CONFIG_KEY_CHECKPOINT_ID] = configurable[CONFIG_KEY_CHECKPOINT_ID]
        saved = self.saver.get_tuple({CONF: lookup})
        self.load_saved(saved)
        if saved is not None and self.addressed:
            latest = self.saver.get_tuple({CONF: {"thread_id": self.thread_id, "checkpoint_ns": self.ns_value}})
            self.superseded = latest is not None and latest.checkpoint["id"] != saved.checkpoint["id"]

    def load_saved(self, saved: Any) -> None:
        """Restores channels, versions and step counters from a CheckpointTuple (or a new thread)."""
        configurable = self.config[CONF]
        self.superseded = False
        if saved is None:
            checkpoint = empty_checkpoint()
            metadata: dict = {"step": -2}
            pending: list = []
        else:
            checkpoint = saved.checkpoint
            metadata = saved.metadata or {}
            pending = list(saved.pending_writes or [])
        self.checkpoint = checkpoint
        self.checkpoint_metadata = metadata
        self.checkpoint_id = checkpoint["id"]
        self.pending_writes = pending
        parent_config = saved.parent_config if saved is not None else None
        self.prev_checkpoint_id = parent_config[CONF].get(CONFIG_KEY_CHECKPOINT_ID) if parent_config else None
        values = checkpoint.get("channel_values") or {}
        if saved is None:
            # a new thread: empty channels, maybe those a finished run gave back
            self.channels = self.graph._empty_channels()
        else:
            self.channels = {k: spec.from_checkpoint(values.get(k, MISSING)) for k, spec in self.graph._specs.items()}
        self.versions = dict(checkpoint.get("channel_versions") or {})
        self.seen = {k: dict(v) for k, v in (checkpoint.get("versions_seen") or {}).items()}
        self.seen.setdefault(INPUT, {})
        self.loaded_versions = dict(self.versions)
        self.max_version = max(self.versions.values()) if self.versions else None
        self.saved_mark = self.max_version
        self._put_base = None
        self._set_null_version()
        updated = checkpoint.get("updated_channels")
        self.updated = set(updated) if updated else None
        self.live = {
            k
            for k, ch in self.channels.items()
            if ch._lg_clears_on_empty and (ch.value is not MISSING if ch._lg_kind else ch.is_available())
        }
        self.step = metadata.get("step", -2) + 1
        self.stop = self.step + self.limit + 1
        self.parents = dict(configurable.get(CONFIG_KEY_CHECKPOINT_MAP) or {})

    def _set_null_version(self) -> None:
        for v in self.versions.values():
            self.null_version = type(v)()
            return
        self.null_version = 0

    def next_version(self) -> Any:
        v = self.saver.get_next_version(self.max_version, None)
        self.max_version = v
        if not isinstance(self.null_version, type(v)):
            self.null_version = type(v)()
        return v

    # --- run start ----------------------------------------------------------------------

    def start(self, input: Any) -> None:
        """Loads the thread and applies input, a Command, or resumes (L-2…L-9, P-40)."""
        self._load()
        is_command = isinstance(input, Command)
        default_resuming = input is None or is_command
        if self.nested:
            default_resuming = self.config[CONF].get("__pregel_resuming", default_resuming)
            self.resume_map = self.config[CONF].get("__pregel_resume_map")
        is_resuming = bool(self.versions) and bool(default_resuming)
        resume_given = is_command and input.resume is not None
        time_travel = self.addressed and not resume_given
        self.resuming = is_resuming
        self.reapplies = not (time_travel or self.superseded)
        if time_travel:
            self.pending_writes = [w for w in self.pending_writes if w[1] != RESUME]
        forks = (
            is_resuming
            and time_travel
            and (self.checkpoint_metadata.get("source") not in ("update", "fork") or self.superseded)
        )
        carried: list = []
        if is_command:
            resume_is_map = False
            if resume_given:
                resume = input.resume
                strict = bool(self.config[CONF].get("__pregel_strict_resume")) and not self.nested and not self.superseded
                if isinstance(resume, dict) and all(is_interrupt_id(k) for k in resume):
                    resume_is_map = True
                    if strict:
                        pending = self.pending_interrupt_ids()
                        if not resume:
                            raise UnknownInterruptError(
                                "The resume map names no interrupt", reason="empty_map", pending_ids=sorted(pending)
                            )
                        unknown = sorted(resume.keys() - pending)
                        if unknown:
                            raise UnknownInterruptError(
                                f"Unknown or already-consumed interrupt: {unknown[0]}",
                                reason="not_pending",
                                interrupt_ids=unknown,
                                pending_ids=sorted(pending),
                            )
                    self.resume_map = resume
                    self.config[CONF]["__pregel_resume_map"] = resume
                else:
                    pending = self.pending_interrupt_ids()
                    if len(pending) > 1:
                        if strict:
                            raise UnknownInterruptError(_MULTIPLE_PENDING, reason="ambiguous", pending_ids=sorted(pending))
                        raise RuntimeError(_MULTIPLE_PENDING)
            writes = [w for w in self.graph._command_writes(input) if not (w[0] == RESUME and resume_is_map)]
            if not writes and not resume_is_map:
                raise EmptyInputError("Received empty Command input")
            if writes:
                if forks:
                    carried.extend((NULL_TASK_ID, c, v) for c, v in writes)
                else:
                    self.put_writes(NULL_TASK_ID, writes)
        null_writes = [(c, v) for t, c, v in (*self.pending_writes, *carried) if t == NULL_TASK_ID]
        for c, v in null_writes:
            if c == RESUME:
                self.null_resume = v
        if null_writes:
            updated = self.apply([_InputTask(null_writes)])
            if self.updated is not None:
                self.updated |= updated
        if is_resuming:
            self.seen[INTERRUPT] = dict(self.versions)
            if forks:
                self.pending_writes = [w for w in self.pending_writes if w[1] != INTERRUPT]
                self.pending_writes.extend(carried)
                self.put_checkpoint("fork")
                if carried and self.durability != "exit":
                    self._save_writes(NULL_TASK_ID, [(c, v) for _, c, v in carried])
            if "values" in self.modes:
                self.emit_values(lambda: self.read_output(self.output_keys))
            return
        input_writes = self.graph.map_input(input) if input is not None else []
        if not input_writes:
            raise EmptyInputError(f"Received no input for {self.graph.input_channels}")
        # L-8: the tasks the saved checkpoint would run next are abandoned
        discard = self.prepare() if self.versions else []
        self.updated = self.apply([*sorted(discard, key=_order), _InputTask(input_writes)])
        self.put_checkpoint("input")
        # a resume value given to a thread that was not waiting belonged to the replaced
        # checkpoint's pending writes: the new one has none (I-1)
        self.null_resume = MISSING

    # --- pending writes ----------------------------------------------------------------

    def _write_config(self) -> dict:
        return {
            CONF: {
                "thread_id": self.thread_id,
                CONFIG_KEY_CHECKPOINT_NS: self.ns_value,
                CONFIG_KEY_CHECKPOINT_ID: self.checkpoint_id,
                "__pregel_durability": self.durability,
            }
        }

    def put_writes(self, task_id: str, writes: list, task_path: str = "", *, defer: bool = False) -> None:
        """Records a task's writes against the checkpoint its step started from (P-5).

        With `defer`, the saver gets them together with the step's checkpoint
        (`put_step`, one transaction), unless the step fails first (then they are
        saved at once, see `after_tick`).
        """
        lock = self.lock
        lock.acquire()  # (a `with` looks up __enter__ and __exit__ on every call)
        try:
            special = [c for c, _ in writes if c in _FIXED_SLOT]
            if special:
                self.pending_writes = [w for w in self.pending_writes if not (w[0] == task_id and w[1] in special)]
            self.pending_writes.extend([(task_id, c, v) for c, v in writes])
        finally:
            lock.release()
        if self.durability == "exit":
            self.exit_dirty = True
        elif defer:
            untracked = self.graph.untracked
            if untracked:
                writes = [(c, v) for c, v in writes if c not in untracked]
            self.deferred_writes.append((task_id, writes, task_path))
        else:
            self._save_writes(task_id, writes, task_path)

    def flush_deferred(self) -> None:
        """Saves writes held for the step's checkpoint now (the step did not reach it)."""
        deferred = self.deferred_writes
        self.deferred_writes = []
        for task_id, writes, task_path in deferred:
            self.saver.put_writes(self._write_config(), writes, task_id, task_path)

    def _save_writes(self, task_id: str, writes: list, task_path: str = "") -> None:
        untracked = self.graph.untracked
        if untracked:
            writes = [(c, v) for c, v in writes if c not in untracked]
        self.saver.put_writes(self._write_config(), writes, task_id, task_path)

    def pending_interrupt_ids(self) -> set:
        ids = set()
        for status in read_task_statuses(self.pending_writes).values():
            for intr in status.pending_interrupts:
                ids.add(intr.id)
        return ids

    # --- checkpoints ------------------------------------------------------------------

    def put_checkpoint(self, source: str) -> None:
        """Saves the current state as a new checkpoint, then advances the step (L-47, P-1, P-2)."""
        live = self.durability != "exit" and getattr(self.saver, "_lg_serializes_on_put", False)
        # Why `live`: savers that serialize inside put() (ours) get the run's own dicts
        # and only the values of channels with a new version (the only ones they store);
        # others, and durability="exit" (saved later), get complete copies.
        new_versions = None
        if self.durability != "exit":
            mark = self.saved_mark
            if mark is None:
                new_versions = dict(self.versions)
            else:
                new_versions = {k: v for k, v in self.versions.items() if v > mark}
        channels = self.channels
        values = {}
        untracked = self.graph.untracked
        for k in new_versions if live else self.versions:
            ch = channels.get(k)
            if ch is None or k in untracked:
                continue
            data = ch.value if ch._lg_kind else ch.checkpoint()  # their checkpoint() is `value`
            if data is not MISSING:
                values[k] = data
        updated = self.updated
        checkpoint = {
            "v": 4,
            "id": uuid6_str(self.step),
            "ts": now_iso(),
            "channel_values": values,
            "channel_versions": self.versions if live else dict(self.versions),
            "versions_seen": self.seen if live else {k: dict(v) for k, v in self.seen.items()},
            "updated_channels": sorted(updated) if updated is not None else None,
        }
        metadata = {"source": source, "step": self.step, "parents": self.parents}
        if new_versions is not None:
            deferred = self.deferred_writes
            if deferred:
                self.deferred_writes = []
                self.saver.put_step(self._put_config(), checkpoint, metadata, new_versions, deferred)
            else:
                self.saver.put(self._put_config(), checkpoint, metadata, new_versions)
            self.saved_mark = self.max_version
        else:
            self.exit_dirty = True
            if self.exit_parent is MISSING:
                self.exit_parent = self.checkpoint_id if self.checkpoint_metadata.get("step", -2) != -2 else None
        self.prev_checkpoint_id = self.checkpoint_id if self.checkpoint_metadata.get("step", -2) != -2 else None
        self.checkpoint = checkpoint
        self.checkpoint_metadata = metadata
        self.checkpoint_id = checkpoint["id"]
        self.pending_writes = []
        self.step += 1

    def _put_config(self) -> dict:
        base = self._put_base
        if base is None:
            configurable = {
                k: v for k, v in self.config[CONF].items() if k != CONFIG_KEY_CHECKPOINT_ID and k != CONFIG_KEY_TASK
            }
            configurable["thread_id"] = self.thread_id
            configurable[CONFIG_KEY_CHECKPOINT_NS] = self.ns_value
            base = self._put_base = (self.config.get("metadata") or {}, configurable)
        configurable = base[1]
        if self.checkpoint_metadata.get("step", -2) != -2:
            configurable = {**configurable, CONFIG_KEY_CHECKPOINT_ID: self.checkpoint_id}
        return {"metadata": base[0], CONF: configurable}

    def _close_exit(self) -> None:
        """Run end: with durability="exit", saves the last checkpoint and its pending writes once (P-14)."""
        if self.durability != "exit" or not self.exit_dirty:
            return
        self.exit_dirty = False
        checkpoint = self.checkpoint
        new_versions = {
            k: v for k, v in checkpoint["channel_versions"].items() if self.loaded_versions.get(k) != v
        }
        cfg = dict(self.config)
        configurable = dict(cfg[CONF])
        configurable["thread_id"] = self.thread_id
        configurable[CONFIG_KEY_CHECKPOINT_NS] = self.ns_value
        configurable.pop(CONFIG_KEY_CHECKPOINT_ID, None)
        if self.exit_parent not in (MISSING, None):
            configurable[CONFIG_KEY_CHECKPOINT_ID] = self.exit_parent
        cfg[CONF] = configurable
        self.saver.put(cfg, checkpoint, self.checkpoint_metadata, new_versions)
        by_task: dict = {}
        for tid, c, v in self.pending_writes:
            by_task.setdefault(tid, []).append((c, v))
        for tid, writes in by_task.items():
            self._save_writes(tid, writes)

    # --- ticks ----------------------------------------------------------------------------

    def prepare(self) -> list:
        tasks = Run.prepare(self)  # (the compiled cpdef has no zero-argument super())
        if self.pending_writes:
            for task in tasks:
                for tid, c, v in self.pending_writes:
                    if tid == task.id and c == RESUME:
                        task.resume_values = list(v) if isinstance(v, list) else [v]
        if self.resume_map:
            from lgembed._ids import interrupt_id

            for task in tasks:
                answers = task.resume_values or []
                nxt = interrupt_id(task.checkpoint_ns, len(answers))
                first = interrupt_id(task.checkpoint_ns, 0)
                if nxt in self.resume_map:
                    task.resume_values = [*answers, self.resume_map[nxt]]
                    task.resume_new = True
                elif first in self.resume_map and not answers:
                    task.resume_values = [self.resume_map[first]]
                    task.resume_new = True
        return tasks

    def tick(self) -> list | None:
        self.check_limit_with_event()
        tasks = self.prepare()
        self.tasks = tasks
        self._emit_checkpoint_event(tasks)
        if not tasks:
            return None
        if self.first_tick and self.reapplies and self.pending_writes:
            ids = {t.id for t in tasks}
            statuses = read_task_statuses([w for w in self.pending_writes if w[0] in ids])
            for task in tasks:
                status = statuses.get(task.id)
                if status is not None and status.finished:
                    task.writes = list(status.output)
                    task.cached = True
                    task.done = True
        self.first_tick = False
        if self.interrupt_before and self._should_interrupt(self.interrupt_before, tasks):
            self.emit_static_interrupt()
            return None
        if "tasks" in self.modes or "debug" in self.modes:
            self._emit_task_starts(tasks)
        if self.graph.cache is not None:  # hook: node caching (lgembed.pregel._cache)
            from lgembed.pregel._cache import match_cached_writes

            match_cached_writes(self, tasks, emit=False)
        if "messages" in self.modes:
            self.mark_message_inputs([t for t in tasks if not t.cached])
        for task in tasks:
            if task.cached and "updates" in self.modes and not (task.node is not None and task.node.hidden):
                self.emit("updates", self._updates_chunk(task, cached=True))
        return [t for t in tasks if not t.cached]

    def interrupt_after_hit(self) -> None:
        # L-47: the next step's tasks are prepared and shown in one more checkpoint event
        if "checkpoints" in self.modes or "debug" in self.modes:
            self._emit_checkpoint_event(self.prepare())
        super().interrupt_after_hit()

    def check_limit_with_event(self) -> None:
        if self.step > self.stop:
            self._emit_checkpoint_event(self.prepare())
        self.check_limit()

    def _should_interrupt(self, names: Any, tasks: list) -> bool:
        seen = self.seen.get(INTERRUPT, {})
        null = self.null_version
        if not any(v > seen.get(k, null) for k, v in self.versions.items()):
            return False
        return super()._should_interrupt(names, tasks)

    def _emit_checkpoint_event(self, tasks: list) -> None:
        if "checkpoints" not in self.modes and "debug" not in self.modes:
            return
        payload = self.checkpoint_payload(tasks)
        if "checkpoints" in self.modes:
            self.emit("checkpoints", payload)
        if "debug" in self.modes:
            self.emit(
                "debug",
                {
                    "step": self.checkpoint_metadata.get("step"),
                    "timestamp": self.checkpoint["ts"],
                    "type": "checkpoint",
                    "payload": payload,
                },
            )

    def _public_config(self, checkpoint_id: str | None) -> dict | None:
        if checkpoint_id is None:
            return None
        conf = {CONFIG_KEY_CHECKPOINT_NS: self.ns_value, "thread_id": self.thread_id, CONFIG_KEY_CHECKPOINT_ID: checkpoint_id}
        if self.parents:
            conf[CONFIG_KEY_CHECKPOINT_MAP] = {**self.parents, self.ns_value: checkpoint_id}
        return {CONF: conf}

    def checkpoint_payload(self, tasks: list) -> dict:
        states = {}
        for task in tasks:
            # a subgraph node, or a graph the node's function calls; not checkpointer=False
            if node_subgraph(task.node) is not None:
                ns = f"{self.ns_value}|{task.name}:{task.id}" if self.ns_value else f"{task.name}:{task.id}"
                states[task.id] = {CONF: {"thread_id": self.thread_id, CONFIG_KEY_CHECKPOINT_NS: ns}}
        records = tasks_with_writes(tasks, self.pending_writes, states, self.stream_keys)
        out_tasks = []
        for t in records:
            if t.error:
                out_tasks.append({"id": t.id, "name": t.name, "error": t.error, "state": t.state})
            elif t.result:
                out_tasks.append(
                    {"id": t.id, "name": t.name, "result": t.result, "interrupts": tuple(asdict(i) for i in t.interrupts), "state": t.state}
                )
            else:
                out_tasks.append({"id": t.id, "name": t.name, "interrupts": tuple(asdict(i) for i in t.interrupts), "state": t.state})
        return {
            "config": self._public_config(self.checkpoint_id),
            "parent_config": self._public_config(self.prev_checkpoint_id),
            "values": self.read_output(self.stream_keys),
            "metadata": self.checkpoint_metadata,
            "next": [t.name for t in tasks],
            "tasks": out_tasks,
        }

    def _emit_task_starts(self, tasks: list) -> None:
        for task in tasks:
            # S-5: tasks whose saved writes are reused still show their start (not a result)
            if task.node is not None and task.node.hidden:
                continue
            self._emit_task_event(task_start_payload(task), "task")

    # --- commits ----------------------------------------------------------------------------

    def commit(self, task: Task) -> None:
        Run.commit(self, task)
        error = task.error
        if error is None:
            # a lone task's writes travel with the step's checkpoint (one saver transaction)
            defer = len(self.tasks) == 1 and self.durability == "async" and not self.pending_handlers
            self.put_writes(task.id, list(task.writes), _task_path(task), defer=defer)
        elif isinstance(error, GraphInterrupt):
            writes = [(INTERRUPT, task.interrupts)] if task.interrupts else []
            if writes:
                if task.resume_values:
                    writes.append((RESUME, list(task.resume_values)))
                self.put_writes(task.id, writes, _task_path(task))
        elif not isinstance(error, GraphBubbleUp):
            self.put_writes(task.id, list(task.writes), _task_path(task))

    def end_step(self) -> None:
        self.put_checkpoint("loop")

    def after_tick(self) -> None:
        try:
            Run.after_tick(self)
        except BaseException:
            if self.deferred_writes:
                self.flush_deferred()
            raise

    def close(self) -> None:
        if self.deferred_writes:
            self.flush_deferred()
        self._close_exit()

    def apply_interrupted_step(self) -> None:
        # the checkpoint stays at the step start; siblings' writes are applied in memory (I-5)
        super().apply_interrupted_step()

    # --- resume values --------------------------------------------------------------------

    def take_resume_for(self, task: Task, idx: int) -> Any:
        with self.lock:
            value = self.null_resume
            if value is not MISSING:
                self.null_resume = MISSING
                self.pending_writes = [
                    w for w in self.pending_writes if not (w[0] == NULL_TASK_ID and w[1] == RESUME)
                ]
                return value
        parent = self.parent_task
        if parent is not None:
            return parent.run.take_resume_for(parent, idx)
        return MISSING

    def allow_types(self, types: tuple) -> None:
        allow = getattr(self.saver, "with_allowlist", None)
        if allow is None:
            return
        with self.lock:
            saver = allow(types)
            if saver is not self.saver:
                if self.graph.checkpointer is self.saver:
                    self.graph.checkpointer = saver
                self.saver = saver

    def extend_task_configurable(self, task: Task, configurable: dict) -> None:
        super().extend_task_configurable(task, configurable)
        configurable["__pregel_checkpointer"] = self.saver
        if self.resume_map:
            configurable["__pregel_resume_map"] = self.resume_map

    def save_resume(self, task: Task) -> None:
        self.put_writes(task.id, [(RESUME, list(task.resume_values or ()))], _task_path(task))


def _order(task: Any) -> tuple:
    return task.order
