"""The drawable graph `get_graph()` returns: `Graph`, `Node`, `Edge` (langchain-core's API).

Why this module exists: LangGraph's `get_graph()` returns langchain-core's `Graph`;
lgembed returns this container instead, with the part of that API used to inspect and
draw graphs (`nodes`, `edges`, `first_node()`, `trim_*`, `reid()`, `to_json()`,
`draw_mermaid()`), without langchain-core. The nodes and edges are found by
`lgembed.graph._draw` (the simulation); the Mermaid text is written by
`lgembed.graph._mermaid`. `to_json()` reports node data as LangGraph's runnables:
lgembed stores the user's callable where LangGraph stores the `RunnableCallable`
wrapping it, so the id list is LangGraph's (`_runnable_id`), not the callable's class.
"""

from __future__ import annotations

import sys
from collections import defaultdict
from typing import Any, NamedTuple

from lgembed.graph._mermaid import CurveStyle, _draw_mermaid


_RUNNABLE_CALLABLE_ID = ["langgraph", "_internal", "_runnable", "RunnableCallable"]
# to_json() id of a node LangGraph wraps in its RunnableCallable: every function,
# lambda, method, partial or callable object, and the input node __start__


class _StartRunnable:
    """The data of the `__start__` node (LangGraph's input-writing RunnableCallable)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<__start__>"


_START_DATA = _StartRunnable()
# one shared instance: it holds nothing


class Node(NamedTuple):
    """A node of a drawn graph: `id`, display `name`, the callable (`data`) and `metadata`."""

    id: str
    name: str
    data: Any
    metadata: dict[str, Any] | None

    def copy(self, *, id: str | None = None, name: str | None = None) -> Node:
        """This node with another id and/or name."""
        return Node(id=id or self.id, name=name or self.name, data=self.data, metadata=self.metadata)


class Edge(NamedTuple):
    """An edge of a drawn graph; `data` is the label, `conditional` draws it dashed."""

    source: str
    target: str
    data: Any = None
    conditional: bool = False

    def copy(self, *, source: str | None = None, target: str | None = None) -> Edge:
        """This edge with another source and/or target."""
        return Edge(
            source=source or self.source,
            target=target or self.target,
            data=self.data,
            conditional=self.conditional,
        )


def _is_uuid(value: Any) -> bool:
    # what uuid.UUID(value) accepts, without importing uuid
    if not isinstance(value, str):
        return False
    h = value.replace("urn:", "").replace("uuid:", "").strip("{}").replace("-", "")
    if len(h) != 32:
        return False
    try:
        int(h, 16)
    except ValueError:
        return False
    return True


def _node_name(id: str, data: Any) -> str:
    # langchain-core's node_data_str: the id, unless the id is a generated uuid
    if not _is_uuid(id) or data is None:
        return id
    name = getattr(data, "name", None) or getattr(data, "__name__", None) or type(data).__name__
    return name[8:] if name.startswith("Runnable") else name


def _node_data_json(node: Node, with_schemas: bool) -> dict[str, Any]:
    # langchain-core's node_data_json; the name comes from the id, not node.name
    data = node.data
    json: dict[str, Any]
    if data is None:
        json = {}
    elif _is_pydantic_model_class(data):
        json = {
            "type": "schema",
            "data": data.model_json_schema() if with_schemas else _node_name(node.id, data),
        }
    else:
        json = {"type": "runnable", "data": {"id": _runnable_id(data), "name": _node_name(node.id, data)}}
    if node.metadata is not None:
        json["metadata"] = node.metadata
    return json


def _is_pydantic_model_class(data: Any) -> bool:
    pydantic = sys.modules.get("pydantic")
    return pydantic is not None and isinstance(data, type) and issubclass(data, pydantic.BaseModel)


def _runnable_id(data: Any) -> list[str]:
    """The `to_json()` id LangGraph gives the runnable it makes of this node data.

    LangGraph keeps a Runnable as it is (a compiled graph, `ToolNode`, a
    langchain-core Runnable) and wraps anything else in its `RunnableCallable`.
    lgembed's compiled graphs and `ToolNode` report the LangGraph class they
    stand for.
    """
    if data is _START_DATA:
        return list(_RUNNABLE_CALLABLE_ID)
    lgembed_runnables: list[type] = []
    for module_name, class_name in (("lgembed.pregel.main", "Pregel"), ("lgembed.prebuilt.tool_node", "ToolNode")):
        module = sys.modules.get(module_name)
        if module is not None:
            lgembed_runnables.append(getattr(module, class_name))
    if lgembed_runnables and isinstance(data, tuple(lgembed_runnables)):
        cls = type(data)
        path = cls.__module__.split(".")
        if path[0] == "lgembed":
            path[0] = "langgraph"
        return [*path, cls.__name__]
    lc_base = sys.modules.get("langchain_core.runnables.base")
    if lc_base is not None and isinstance(data, lc_base.Runnable):
        if isinstance(data, lc_base.RunnableSerializable):
            return data.lc_id()
        # langchain-core's to_json_not_implemented(data)["id"]
        named = data if hasattr(data, "__name__") else type(data)
        return [*named.__module__.split("."), named.__name__]
    return list(_RUNNABLE_CALLABLE_ID)


class Graph:
    """Nodes (`dict` id -> Node, insertion ordered) and edges (`list` of Edge).

    The object `CompiledStateGraph.get_graph()` returns; the API is the part of
    langchain-core's `Graph` used to inspect and draw graphs.
    """

    __slots__ = ("nodes", "edges")

    def __init__(self, nodes: dict[str, Node] | None = None, edges: list[Edge] | None = None) -> None:
        self.nodes: dict[str, Node] = {} if nodes is None else nodes
        self.edges: list[Edge] = [] if edges is None else edges

    def __repr__(self) -> str:
        return f"Graph(nodes={self.nodes!r}, edges={self.edges!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Graph):
            return NotImplemented
        return self.nodes == other.nodes and self.edges == other.edges

    def __bool__(self) -> bool:
        return bool(self.nodes)

    def add_node(self, data: Any, id: str | None = None, *, metadata: dict[str, Any] | None = None) -> Node:
        """Add a node (id defaults to a new uuid hex) and return it.

        Raises:
            ValueError: a node with this id exists.
        """
        if id is not None and id in self.nodes:
            msg = f"Node with id {id} already exists"
            raise ValueError(msg)
        if id is None:
            import uuid

            id = uuid.uuid4().hex
        node = Node(id=id, name=_node_name(id, data), data=data, metadata=metadata)
        self.nodes[id] = node
        return node

    def remove_node(self, node: Node) -> None:
        """Remove a node and every edge touching it."""
        self.nodes.pop(node.id)
        self.edges = [e for e in self.edges if node.id not in (e.source, e.target)]

    def add_edge(self, source: Node, target: Node, data: Any = None, conditional: bool = False) -> Edge:
        """Add an edge between two nodes of this graph and return it.

        Raises:
            ValueError: the source or target is not in the graph.
        """
        if source.id not in self.nodes:
            msg = f"Source node {source.id} not in graph"
            raise ValueError(msg)
        if target.id not in self.nodes:
            msg = f"Target node {target.id} not in graph"
            raise ValueError(msg)
        edge = Edge(source=source.id, target=target.id, data=data, conditional=conditional)
        self.edges.append(edge)
        return edge

    def extend(self, graph: Graph, *, prefix: str = "") -> tuple[Node | None, Node | None]:
        """Add the nodes and edges of `graph`, ids prefixed `prefix:`; return its first and last node."""
        if all(_is_uuid(n.id) for n in graph.nodes.values()):
            prefix = ""

        def prefixed(id_: str) -> str:
            return f"{prefix}:{id_}" if prefix else id_

        self.nodes.update({prefixed(k): v.copy(id=prefixed(k)) for k, v in graph.nodes.items()})
        self.edges.extend(
            e.copy(source=prefixed(e.source), target=prefixed(e.target)) for e in graph.edges
        )
        first, last = graph.first_node(), graph.last_node()
        return (
            first.copy(id=prefixed(first.id)) if first else None,
            last.copy(id=prefixed(last.id)) if last else None,
        )

    def reid(self) -> Graph:
        """A copy whose uuid node ids are replaced by the nodes' names (numbered if repeated)."""
        ids_by_name: dict[str, list[str]] = defaultdict(list)
        for node in self.nodes.values():
            ids_by_name[node.name].append(node.id)
        labels = {
            node_id: name if len(ids) == 1 else f"{name}_{i + 1}"
            for name, ids in ids_by_name.items()
            for i, node_id in enumerate(ids)
        }

        def new_id(node_id: str) -> str:
            return labels[node_id] if _is_uuid(node_id) else node_id

        return Graph(
            nodes={new_id(k): n.copy(id=new_id(k)) for k, n in self.nodes.items()},
            edges=[e.copy(source=new_id(e.source), target=new_id(e.target)) for e in self.edges],
        )

    def first_node(self) -> Node | None:
        """The only node that is no edge's target, or None if there is not exactly one."""
        return _first_node(self)

    def last_node(self) -> Node | None:
        """The only node that is no edge's source, or None if there is not exactly one."""
        return _last_node(self)

    def trim_first_node(self) -> None:
        """Remove the first node if another first node remains and it has one outgoing edge."""
        first = self.first_node()
        if (
            first
            and _first_node(self, exclude=[first.id])
            and len({e for e in self.edges if e.source == first.id}) == 1
        ):
            self.remove_node(first)

    def trim_last_node(self) -> None:
        """Remove the last node if another last node remains and it has one incoming edge."""
        last = self.last_node()
        if (
            last
            and _last_node(self, exclude=[last.id])
            and len({e for e in self.edges if e.target == last.id}) == 1
        ):
            self.remove_node(last)

    def to_json(self, *, with_schemas: bool = False) -> dict[str, list[dict[str, Any]]]:
        """`{"nodes": [...], "edges": [...]}`, as langchain-core's `Graph.to_json()`.

        A node with data is `{"id", "type": "runnable", "data": {"id": [...],
        "name"}}` plus `"metadata"` when set; the `id` list is the one LangGraph
        reports for the same node: `RunnableCallable` for plain callables and
        `__start__`, the LangGraph class path for compiled graphs and `ToolNode`.
        A node without data (`__end__`) is only `{"id"}`.

        Args:
            with_schemas: Give pydantic-model nodes their JSON schema instead of
                their name (langchain-core's option; StateGraph drawings have none).
        """
        stable = {n.id: i if _is_uuid(n.id) else n.id for i, n in enumerate(self.nodes.values())}
        edges = []
        for e in self.edges:
            d: dict[str, Any] = {"source": stable[e.source], "target": stable[e.target]}
            if e.data is not None:
                d["data"] = e.data
            if e.conditional:
                d["conditional"] = True
            edges.append(d)
        nodes = [{"id": stable[n.id], **_node_data_json(n, with_schemas)} for n in self.nodes.values()]
        return {"nodes": nodes, "edges": edges}

    def draw_mermaid(
        self,
        *,
        with_styles: bool = True,
        curve_style: CurveStyle | str = CurveStyle.LINEAR,
        node_colors: Any = None,
        wrap_label_n_words: int = 9,
        frontmatter_config: dict[str, Any] | None = None,
    ) -> str:
        """The graph as Mermaid flowchart text, identical to langchain-core's output.

        Args:
            with_styles: Include the front matter, node declarations and class styles.
            curve_style: Edge curve style (a `CurveStyle`, its value, or any enum
                with a `.value`, e.g. langchain-core's `CurveStyle`).
            node_colors: `NodeStyles` (or an object with `default`, `first`, `last`).
            wrap_label_n_words: Break edge labels into lines of this many words.
            frontmatter_config: Mermaid front matter (e.g. `{"config": {"theme": "neutral"}}`),
                written as YAML with `config.flowchart.curve` set from `curve_style`.

        Returns:
            The Mermaid text.

        Raises:
            ValueError: two subgraphs with the same name.
        """
        graph = self.reid()
        first = graph.first_node()
        last = graph.last_node()
        return _draw_mermaid(
            graph.nodes,
            graph.edges,
            first_node=first.id if first else None,
            last_node=last.id if last else None,
            with_styles=with_styles,
            curve_style=curve_style,
            node_styles=node_colors,
            wrap_label_n_words=wrap_label_n_words,
            frontmatter_config=frontmatter_config,
        )


def _first_node(graph: Graph, exclude: Any = ()) -> Node | None:
    targets = {e.target for e in graph.edges if e.source not in exclude}
    found = [n for n in graph.nodes.values() if n.id not in exclude and n.id not in targets]
    return found[0] if len(found) == 1 else None


def _last_node(graph: Graph, exclude: Any = ()) -> Node | None:
    sources = {e.source for e in graph.edges if e.target not in exclude}
    found = [n for n in graph.nodes.values() if n.id not in exclude and n.id not in sources]
    return found[0] if len(found) == 1 else None
