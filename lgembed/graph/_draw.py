"""Drawable structure of a compiled StateGraph: `get_graph()` and `draw_mermaid()`.

Why this module exists: LangGraph's `get_graph()` returns langchain-core's `Graph`,
whose `draw_mermaid()` text users paste into docs and compare in tests. lgembed
builds the same nodes and edges and prints the same Mermaid text without
langchain-core (or PyYAML, which langchain-core uses for the front matter).

How LangGraph 1.2 finds the edges (and so how we do): it does not read the builder's
edge lists directly. It *simulates* the compiled graph for up to 250 supersteps with
an empty input: every node "writes" its static edges (plain edges, joins) each time
it runs, and the first time it runs it also declares the writes of its conditional
edges that have a path map and of its `Command` destinations (`ends`). Edges are
then inferred from which node's writes triggered which node. Consequences, all
reproduced here:

- a conditional edge without a path map (no `Literal` return hint either) adds no
  edge at all; its source is drawn with an edge to END when it has no other
  outgoing edge, and nodes reachable only through it are drawn unconnected;
- an explicit `node -> END` edge is only drawn when `node` has no other outgoing
  edge (END edges come from "nodes that are targets but never sources");
- when the simulation ends with a single node still running (a loop that never
  leaves), that node gets a dashed edge to END;
- END is not drawn when nothing leads to it;
- several labels for one target: the smallest label (string order) is drawn;
- a plain/`Command` edge and a labelled conditional edge between the same two
  nodes make `sorted()` compare `None` with a str and raise `TypeError`, as
  LangGraph does.

Only the channels that decide which node runs are simulated (`__start__`, each
node's `branch:to:<node>` trigger, joins); state channels are never written in a
LangGraph simulation, so they cannot trigger anything.

`xray` (LangGraph's `get_graph(xray=...)`): each subgraph from `get_subgraphs()` is
drawn on its own (with `xray - 1` levels, or all levels for `True`), trimmed of its
`__start__`/`__end__` when that leaves a single first/last node, and put in place of
its node with ids prefixed `node:`; the Mermaid writer groups prefixed ids into
`subgraph node ... end` blocks. A subgraph without a single first and last node,
or with only one node, stays one node.

Three modules, used together by `get_graph()`: this one (the simulation and the
xray assembly), `_drawable` (the `Graph` container with langchain-core's API) and
`_mermaid` (the Mermaid writer and its small YAML emitter). Each imports only the
ones after it in that list. The public names stay importable from here.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from typing import Any, NamedTuple

from lgembed.constants import END, START
from lgembed.graph._drawable import _START_DATA, Edge, Graph, Node  # Edge, Node: re-exported
from lgembed.graph._mermaid import CurveStyle, NodeStyles  # re-exported (__all__)

__all__ = (
    "CurveStyle",
    "Edge",
    "Graph",
    "Node",
    "NodeStyles",
    "draw_graph",
    "get_graph",
)

_SIMULATION_LIMIT = 250
# supersteps LangGraph's get_graph() simulates (draw_graph(limit=250))


# --- get_graph(): simulate the compiled graph -------------------------------------


class _Ephemeral:
    """A node's `branch:to:<node>` trigger (and `__start__`): holds a value for one step."""

    __slots__ = ("has",)

    def __init__(self) -> None:
        self.has = False

    def update(self, values: list) -> bool:
        if not values:
            if self.has:
                self.has = False
                return True
            return False
        self.has = True
        return True

    def available(self) -> bool:
        return self.has

    def consume(self) -> bool:
        return False

    def finish(self) -> bool:
        return False


class _AfterFinish:
    """The trigger of a deferred node: available only once the run would otherwise end."""

    __slots__ = ("has", "finished")

    def __init__(self) -> None:
        self.has = False
        self.finished = False

    def update(self, values: list) -> bool:
        if not values:
            return False
        self.finished = False
        self.has = True
        return True

    def available(self) -> bool:
        return self.has and self.finished

    def consume(self) -> bool:
        if self.finished:
            self.finished = False
            self.has = False
            return True
        return False

    def finish(self) -> bool:
        if not self.finished and self.has:
            self.finished = True
            return True
        return False


class _Barrier:
    """A join's trigger: available once every start node has written its name."""

    __slots__ = ("names", "seen", "after_finish", "finished")

    def __init__(self, names: frozenset, after_finish: bool) -> None:
        self.names = names
        self.seen: set = set()
        self.after_finish = after_finish
        self.finished = False

    def update(self, values: list) -> bool:
        updated = False
        for v in values:
            if v not in self.seen:
                self.seen.add(v)
                updated = True
        return updated

    def available(self) -> bool:
        full = self.seen == self.names
        return full and self.finished if self.after_finish else full

    def consume(self) -> bool:
        if self.available():
            self.seen = set()
            self.finished = False
            return True
        return False

    def finish(self) -> bool:
        if self.after_finish and not self.finished and self.seen == self.names:
            self.finished = True
            return True
        return False


class _Writer:
    """What one writer of a node does in the simulation.

    `writes` are written every time the node runs (plain edges, joins); `static`
    (channel, value, label) triples are declared once, the first time the node runs
    (conditional edges with a path map, `Command` destinations).
    """

    __slots__ = ("writes", "static")

    def __init__(self, writes: tuple = (), static: tuple | None = None) -> None:
        self.writes = writes
        self.static = static


class _Edge(NamedTuple):
    source: str
    target: str
    conditional: bool
    label: str | None


class _Trigger(NamedTuple):
    name: str  # a channel (as a node's output) or a node (as a channel's source)
    conditional: bool
    label: str | None


def _branch_to(node: str) -> str:
    return f"branch:to:{node}"


def _ends_static(ends: Any) -> tuple | None:
    # a node's Command destinations: tuple of targets, or dict target -> label
    if not ends:
        return None
    if isinstance(ends, Mapping):
        return tuple((k if k == END else _branch_to(k), None, label) for k, label in ends.items())
    return tuple((e if e == END else _branch_to(e), None, None) for e in ends)


def get_graph(graph: Any, config: Any = None, *, xray: int | bool = False) -> Graph:
    """`CompiledStateGraph.get_graph()`: the drawable graph, subgraphs expanded by `xray`.

    Args:
        graph: The compiled graph (its `builder`, interrupt nodes and
            `get_subgraphs()` are read).
        config: Passed on to the subgraphs' `get_graph()`, as LangGraph does.
        xray: False/0 draws subgraphs as single nodes. True expands them at every
            depth; an int N expands N levels (each subgraph is drawn with N - 1).
            Expanded node ids are prefixed with the subgraph node's name
            (`sub:s1`), which `draw_mermaid()` turns into `subgraph sub ... end`.

    Returns:
        The Graph.

    Raises:
        TypeError: see `draw_graph`.
    """
    subgraphs: dict[str, Graph] = {}
    if xray:
        # LangGraph's expression: True stays True, N > 0 counts down, N <= 0 stays
        sub_xray = xray if isinstance(xray, bool) or xray <= 0 else xray - 1
        for name, sub in graph.get_subgraphs():
            if getattr(sub, "checkpointer", None) is False:
                # LangGraph's get_subgraphs() does not list a subgraph compiled
                # with checkpointer=False, so it stays one node
                continue
            subgraphs[name] = sub.get_graph(config, xray=sub_xray)
    return draw_graph(
        _BuilderView(graph),
        interrupt_before=graph.interrupt_before_nodes or (),
        interrupt_after=graph.interrupt_after_nodes or (),
        subgraphs=subgraphs,
    )


class _BuilderView:
    """The builder as LangGraph's `get_graph()` sees it after `compile()`.

    Why: LangGraph's `compile()` adds the default error handler node
    (`set_node_defaults(error_handler=...)`) to `builder.nodes`, after the other
    nodes, so it is drawn; lgembed's `compile()` leaves the builder as it is.
    """

    __slots__ = ("branches", "edges", "nodes", "waiting_edges")

    def __init__(self, graph: Any) -> None:
        builder = graph.builder
        self.nodes = dict(builder.nodes)
        self.edges = builder.edges
        self.waiting_edges = builder.waiting_edges
        self.branches = builder.branches
        handler = getattr(getattr(builder, "_node_defaults", None), "error_handler", None)
        if handler is not None and _DEFAULT_ERROR_HANDLER_NODE in graph.nodes:
            self.nodes.setdefault(_DEFAULT_ERROR_HANDLER_NODE, _HandlerSpec(handler))


class _HandlerSpec(NamedTuple):
    """The spec `draw_graph` reads for the default error handler node."""

    runnable: Any
    metadata: Any = None
    ends: Any = None
    defer: bool = False


_DEFAULT_ERROR_HANDLER_NODE = "__default_error_handler__"
# the node lgembed.graph.state adds for set_node_defaults(error_handler=...)


def draw_graph(
    spec: Any,
    *,
    interrupt_before: Any = (),
    interrupt_after: Any = (),
    subgraphs: Mapping[str, Graph] | None = None,
) -> Graph:
    """The drawable graph of a StateGraph builder, as LangGraph 1.2's `get_graph()` builds it.

    Args:
        spec: The builder (or any object with the same attributes): `nodes`
            (name -> spec with `metadata`, `ends`, `defer` and optionally
            `runnable`, in insertion order), `edges` (set of (start, end)),
            `waiting_edges` (set of (starts tuple, end)) and `branches`
            (source -> branch name -> spec with `ends`: label -> target, or None).
        interrupt_before: The compiled graph's `interrupt_before` nodes (a list, or
            "*", which like LangGraph's `name in "*"` test marks nothing).
        interrupt_after: Likewise for `interrupt_after`.
        subgraphs: Drawn subgraphs by node name, for `xray` drawings; each replaces
            its node (ids prefixed `node:`).

    Returns:
        The Graph: START, the nodes in insertion order, END when some edge reaches
        it; node metadata gains `defer`, `__interrupt` and `__tools` like LangGraph's.

    Raises:
        TypeError: edges between the same two nodes with a `None` and a str label
            (LangGraph's own `sorted()` failure).
    """
    node_specs: dict[str, Any] = dict(spec.nodes)
    names = [START, *node_specs]

    # channels and triggers, as StateGraph.compile lays them out
    channels: dict[str, Any] = {START: _Ephemeral()}
    triggers: dict[str, list[str]] = {START: [START]}
    writers: dict[str, list[_Writer]] = {START: [_Writer()]}
    deferred = set()
    for name, ns in node_specs.items():
        defer = bool(getattr(ns, "defer", False))
        if defer:
            deferred.add(name)
        channels[_branch_to(name)] = _AfterFinish() if defer else _Ephemeral()
        triggers[name] = [_branch_to(name)]
        writers[name] = [_Writer(static=_ends_static(getattr(ns, "ends", None)))]
    for start, end in spec.edges:
        if end != END and start in writers:
            writers[start].append(_Writer(writes=((_branch_to(end), None),)))
    for starts, end in spec.waiting_edges:
        if end == END:
            continue
        chan = f"join:{'+'.join(starts)}:{end}"
        channels[chan] = _Barrier(frozenset(starts), end in deferred)
        triggers[end].append(chan)
        for start in starts:
            writers[start].append(_Writer(writes=((chan, start),)))
    for source, branches in spec.branches.items():
        for branch in branches.values():
            ends = branch.ends
            static = (
                tuple(
                    (target if target == END else _branch_to(target), None, str(label))
                    for label, target in ends.items()
                )
                if ends
                else None
            )
            # not a plain writer: declares its static writes only
            writers[source].append(_Writer(static=static))
    trigger_to_nodes: dict[str, list[str]] = defaultdict(list)
    for name in names:
        for t in triggers[name]:
            trigger_to_nodes[t].append(name)
    sorted_triggers = {name: tuple(sorted(t)) for name, t in triggers.items()}

    versions: dict[str, int] = {}
    seen: dict[str, dict[str, int]] = {}

    def apply_writes(tasks: list[tuple[str, list]]) -> set[str]:
        bump_step = bool(tasks)  # every task here has triggers
        for name, _ in tasks:
            node_seen = seen.setdefault(name, {})
            for chan in sorted_triggers[name]:
                if chan in versions:
                    node_seen[chan] = versions[chan]
        next_version = max(versions.values()) + 1 if versions else 1
        for chan in {c for name, _ in tasks for c in sorted_triggers[name]}:
            if chan in channels and channels[chan].consume():
                versions[chan] = next_version
        pending: dict[str, list] = defaultdict(list)
        for _, writes in tasks:
            for chan, value in writes:
                if chan in channels:  # anything else is a state key (never written here)
                    pending[chan].append(value)
        updated: set[str] = set()
        for chan, values in pending.items():
            if channels[chan].update(values):
                versions[chan] = next_version
                if channels[chan].available():
                    updated.add(chan)
        if bump_step:
            for chan, ch in channels.items():
                if ch.available() and chan not in updated and ch.update([]):
                    versions[chan] = next_version
                    if ch.available():
                        updated.add(chan)
            if updated.isdisjoint(trigger_to_nodes):
                for chan, ch in channels.items():
                    if ch.finish():
                        versions[chan] = next_version
                        if ch.available():
                            updated.add(chan)
        return updated

    def prepare_tasks(updated: set[str]) -> list[tuple[str, list]]:
        if updated:
            candidates: Any = sorted({n for chan in updated for n in trigger_to_nodes.get(chan, ())})
        elif not versions:
            candidates = ()
        else:
            candidates = names
        tasks = []
        for name in candidates:
            node_seen = seen.get(name)
            for chan in triggers[name]:
                if channels[chan].available() and (
                    node_seen is None or versions.get(chan, 0) > node_seen.get(chan, 0)
                ):
                    tasks.append((name, []))
                    break
        return tasks

    # the input: one write to __start__, from a task without triggers
    channels[START].update([{}])
    versions[START] = 1
    tasks = prepare_tasks({START})

    edges: set[_Edge] = set()
    static_seen: set[int] = set()
    sources: dict[str, set[_Trigger]] = {}
    step_sources: dict[str, set[_Trigger]] = {}
    declared: dict[str, set[_Trigger]] = defaultdict(set)
    for _ in range(_SIMULATION_LIMIT + 1):
        if not tasks:
            break
        conditionals: dict[tuple[str, str, Any], str | None] = {}
        for name, writes in tasks:
            for w in writers[name]:
                writes.extend(w.writes)
                if id(w) in static_seen:
                    continue
                static_seen.add(id(w))
                if not w.static:
                    continue
                for chan, _value, label in w.static:
                    if chan == END:  # END is not a channel: the edge is recorded directly
                        edges.add(_Edge(name, END, True, label))
                others = [t for t in w.static if t[0] != END]
                conditionals.update({(name, chan, value or None): label for chan, value, label in others})
                for chan, _value, label in others:
                    declared[name].add(_Trigger(chan, True, label))
                writes.extend((chan, value) for chan, value, _label in others)
        step_sources = {}
        for name, writes in tasks:
            out = {
                _Trigger(
                    chan,
                    (name, chan, value or None) in conditionals,
                    conditionals.get((name, chan, value or None)),
                )
                for chan, value in writes
            }
            out |= declared.get(name, set())
            step_sources[name] = out
        sources.update(step_sources)
        trigger_to_sources: dict[str, set[_Trigger]] = defaultdict(set)
        for src, outs in sources.items():
            for chan, cond, label in outs:
                trigger_to_sources[chan].add(_Trigger(src, cond, label))
        updated = apply_writes(tasks)
        tasks = prepare_tasks(updated)
        for name, _ in tasks:
            added = False
            for chan in sorted_triggers[name]:
                for src, cond, label in sorted(trigger_to_sources[chan]):
                    edges.add(_Edge(src, name, cond, label))
                    if _Trigger(chan, cond, label) in step_sources.get(src, ()):
                        added = True
                    else:
                        sources[src].discard(_Trigger(chan, cond, label))
            if not added:
                # nothing of the last step explains this task: every task of it may have
                for src in step_sources:
                    edges.add(_Edge(src, name, True, None))

    graph = Graph()
    for name in names:
        ns = node_specs.get(name)
        data = getattr(ns, "runnable", None) if ns is not None else _START_DATA
        metadata = dict(getattr(ns, "metadata", None) or {}) if ns is not None else {}
        if name in deferred:
            metadata["defer"] = True
        if name in interrupt_before and name in interrupt_after:
            metadata["__interrupt"] = "before,after"
        elif name in interrupt_before:
            metadata["__interrupt"] = "before"
        elif name in interrupt_after:
            metadata["__interrupt"] = "after"
        tools_by_name = getattr(data, "tools_by_name", None)
        if isinstance(tools_by_name, Mapping) and tools_by_name:
            metadata["__tools"] = list(tools_by_name)
        graph.add_node(data, name, metadata=metadata or None)
    for src, dest, cond, label in sorted(edges):
        _add_edge(graph, src, dest, data=label if label != dest else None, conditional=cond)
    termini = {e.target for e in edges if e.target != END}.difference(e.source for e in edges)
    if termini:
        for src in sorted(termini):
            _add_edge(graph, src, END)
    elif len(step_sources) == 1 and not any(e.target == END for e in edges):
        for src in sorted(step_sources):
            _add_edge(graph, src, END, conditional=True)
    for name, sub in (subgraphs or {}).items():
        _replace_with_subgraph(graph, name, sub)
    return graph


def _add_edge(graph: Graph, source: str, target: str, *, data: Any = None, conditional: bool = False) -> None:
    # one edge per (source, target): the first one (in sorted order) wins
    for e in graph.edges:
        if e.source == source and e.target == target:
            return
    if target not in graph.nodes and target == END:
        graph.add_node(None, END)
    graph.add_edge(graph.nodes[source], graph.nodes[target], data, conditional)


def _replace_with_subgraph(graph: Graph, name: str, sub: Graph) -> None:
    if len(sub.nodes) > 1 and name in graph.nodes and sub.first_node() and sub.last_node():
        sub.trim_first_node()
        sub.trim_last_node()
        graph.nodes.pop(name)
        first, last = graph.extend(sub, prefix=name)
        for idx, edge in enumerate(graph.edges):
            if edge.source == name:
                edge = edge.copy(source=last.id)  # type: ignore[union-attr]
            if edge.target == name:
                edge = edge.copy(target=first.id)  # type: ignore[union-attr]
            graph.edges[idx] = edge
