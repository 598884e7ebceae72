"""A compiled node: what triggers it, what it reads, how its return becomes writes (K-3, K-4, N-1).

Strategy: everything that can be decided at compile time is decided there (read
keys, mapper, injected kwargs, static edge writes), so running a task is a call
plus a few list appends.
"""

from __future__ import annotations

from typing import Any, Sequence

from lgembed._constants import END, PULL, ROOT, TASKS
from lgembed._typing import MISSING
from lgembed.errors import NODE_RETURN, InvalidUpdateError, ParentCommand
from lgembed.types import Command, Send

_PARENT = Command.PARENT


class PregelNode:
    """One node of a compiled graph.

    Attributes:
        name: node name.
        triggers: channels whose update makes the node run (branch:to:X, joins).
        reads: state keys read into the node input (list), or the single channel name (str).
        managed: (key, ManagedValue class) pairs added to the input.
        mapper: turns the read dict into the input schema class, or None.
        proc: the NodeCallable (None for the hidden __start__ node, which passes input through).
        output_keys: channels a returned dict may write (others are dropped, N-1).
        root: whether the state is a single `__root__` value.
        edge_writes: static writes after the state update (branch:to:Y, join channels).
        branches: CompiledBranch routers, in insertion order.
    """

    __slots__ = (
        "name",
        "triggers",
        "reads",
        "managed",
        "mapper",
        "proc",
        "output_keys",
        "output_list",
        "root",
        "edge_writes",
        "branches",
        "retry_policy",
        "cache_policy",
        "metadata",
        "tags",
        "defer",
        "ends",
        "hidden",
        "timeout",
        "error_handler",
        "is_error_handler",
        "subgraphs",
        "sorted_triggers",
        "pull_path",
        "pull_task_path",
        "pull_order",
    )

    def __init__(self, name: str, *, triggers: list, reads: Any, proc: Any, output_keys: Sequence[str]) -> None:
        self.name = name
        self.triggers = triggers
        self.reads = reads
        self.managed: tuple = ()
        self.mapper = None
        self.proc = proc
        self.output_list = list(output_keys)
        self.output_keys = frozenset(output_keys)
        self.root = self.output_list == [ROOT]
        self.edge_writes: list[tuple[str, Any]] = []
        self.branches: list = []
        self.retry_policy: tuple = ()
        self.cache_policy = None
        self.metadata: dict | None = None
        self.tags: list | None = None
        self.defer = False
        self.ends: Any = ()
        self.hidden = False
        self.timeout = None
        self.error_handler = None
        self.is_error_handler = False
        self.subgraphs: tuple = ()
        self.sorted_triggers: tuple = tuple(sorted(triggers))
        self.pull_path = f"~__pregel_pull, {name}"
        # LangGraph's task_path_str of this node's PULL tasks (P-5 write order)
        self.pull_task_path = (PULL, name)
        self.pull_order = (0, name)
        # path and sort key (L-40) of this node's PULL tasks, made once

    # --- input ---------------------------------------------------------------------

    def read_input(self, channels: dict, step: int, stop: int) -> Any:
        """The task input read from `channels`, or MISSING when a single-channel read is empty (L-21)."""
        reads = self.reads
        if type(reads) is str:
            ch = channels.get(reads)
            if ch is None or not ch.is_available():
                return MISSING
            return ch.get()
        val = {}
        for key in reads:
            ch = channels[key]
            if ch._lg_kind:
                # LastValue / EphemeralValue: get() is the `value` slot (MISSING: empty)
                value = ch.value
                if value is not MISSING:
                    val[key] = value
            elif ch.is_available():
                val[key] = ch.get()
        for key, manager in self.managed:
            val[key] = manager.get(step, stop)
        return val

    # --- output ----------------------------------------------------------------------

    def state_writes(self, value: Any) -> list:
        """Writes of a node return value to state channels (N-1)."""
        if self.root:
            return _root_writes(value)
        if value is None:
            return []
        keys = self.output_keys
        if type(value) is dict:
            return [(k, v) for k, v in value.items() if k in keys]
        if isinstance(value, dict):
            return [(k, v) for k, v in value.items() if k in keys]
        if isinstance(value, Command):
            if value.graph == _PARENT:
                return []
            return [(k, v) for k, v in value._update_as_tuples() if k in keys]
        if isinstance(value, (list, tuple)) and value and _has_command(value):
            out: list = []
            for item in value:
                if isinstance(item, Command):
                    if item.graph == _PARENT:
                        continue
                    out.extend([(k, v) for k, v in item._update_as_tuples() if k in keys])
                else:
                    out.extend(self.state_writes(item))
            return out
        # imported here: lgembed.graph imports this module's importers (_loop needs
        # PregelNode at its own import in the compiled build)
        from lgembed._schema import annotated_keys, update_tuples

        if annotated_keys(type(value)):
            return update_tuples(value, self.output_list)
        raise InvalidUpdateError(NODE_RETURN.format(value=value))

    def writes_for(self, value: Any) -> list:
        """State writes, control writes (Command goto / Send) and static edge writes (K-4)."""
        writes = self.state_writes(value)
        if value is not None and type(value) is not dict:
            control_writes(value, writes)
        if self.edge_writes:
            writes.extend(self.edge_writes)
        return writes


def _has_command(items: Any) -> bool:
    """Whether a returned list or tuple holds a Command."""
    for item in items:
        if isinstance(item, Command):
            return True
    return False


def _root_writes(value: Any) -> list:
    if isinstance(value, Command):
        if value.graph == _PARENT:
            return []
        return list(value._update_as_tuples())
    if isinstance(value, (list, tuple)) and value and _has_command(value):
        out: list = []
        for item in value:
            if isinstance(item, Command):
                if item.graph == _PARENT:
                    continue
                out.extend(item._update_as_tuples())
            else:
                out.append((ROOT, item))
        return out
    if value is not None:
        return [(ROOT, value)]
    return []


def control_writes(value: Any, writes: list) -> None:
    """Appends the writes of Command.goto / a returned Send (N-6); raises ParentCommand (N-8)."""
    if isinstance(value, Send):
        writes.append((TASKS, value))
        return
    if isinstance(value, Command):
        commands = (value,)
    elif isinstance(value, (list, tuple)):
        commands = tuple(c for c in value if isinstance(c, Command))
    else:
        return
    for command in commands:
        if command.graph == _PARENT:
            raise ParentCommand(command)
        goto = command.goto
        targets = [goto] if isinstance(goto, (Send, str)) else goto
        for go in targets:
            if isinstance(go, Send):
                writes.append((TASKS, go))
            elif isinstance(go, str) and go != END:
                writes.append((f"branch:to:{go}", None))
