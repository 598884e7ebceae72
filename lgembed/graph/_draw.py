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

`to_json()` reports node data as LangGraph's runnables: lgembed stores the user's
callable where LangGraph stores the `RunnableCallable` wrapping it, so the id list
is LangGraph's (`_runnable_id`), not the callable's class.

Why over 600 lines: three parts that are only ever used together by
`get_graph()` -- the `Graph` container (langchain-core's API), the Mermaid writer
with its small YAML emitter, and the simulation with the xray assembly. They are
private and separated by section comments; the Mermaid half can move to its own
module if another caller appears.
"""

from __future__ import annotations

import math
import re
import sys
from collections import defaultdict
from collections.abc import Mapping
from enum import Enum
from typing import Any, NamedTuple

from lgembed.constants import END, START

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

# --- Graph: nodes, edges, Mermaid -------------------------------------------------


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


class CurveStyle(Enum):
    """Edge curve styles Mermaid supports (`draw_mermaid(curve_style=...)`)."""

    BASIS = "basis"
    BUMP_X = "bumpX"
    BUMP_Y = "bumpY"
    CARDINAL = "cardinal"
    CATMULL_ROM = "catmullRom"
    LINEAR = "linear"
    MONOTONE_X = "monotoneX"
    MONOTONE_Y = "monotoneY"
    NATURAL = "natural"
    STEP = "step"
    STEP_AFTER = "stepAfter"
    STEP_BEFORE = "stepBefore"


class NodeStyles:
    """Mermaid class styles of ordinary, first and last nodes."""

    __slots__ = ("default", "first", "last")

    def __init__(
        self,
        default: str = "fill:#f2f0ff,line-height:1.2",
        first: str = "fill-opacity:0",
        last: str = "fill:#bfb6fc",
    ) -> None:
        self.default = default
        self.first = first
        self.last = last

    def __repr__(self) -> str:
        return f"NodeStyles(default={self.default!r}, first={self.first!r}, last={self.last!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NodeStyles):
            return NotImplemented
        return (self.default, self.first, self.last) == (other.default, other.first, other.last)


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


_MARKDOWN_SPECIAL_CHARS = "*_`"
# a node name starting and ending with one of these is wrapped in <p> (else Mermaid
# renders it as Markdown emphasis); that is why __start__ prints as <p>__start__</p>

_LABEL_ESCAPES = (
    ("[", "#91;"),
    ("]", "#93;"),
    ("(", "#40;"),
    (")", "#41;"),
    ("{", "#123;"),
    ("}", "#125;"),
    ('"', "#quot;"),
    ("<", "#60;"),
    (">", "#62;"),
    ("|", "#124;"),
)
# Mermaid entity codes for metadata lines ("#" itself becomes "#35;" first)

_SAFE_ID_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")


def _escape_label(text: str) -> str:
    text = text.replace("#", "#35;")
    for ch, entity in _LABEL_ESCAPES:
        text = text.replace(ch, entity)
    return text


def _format_metadata_value(value: Any) -> str | None:
    scalars = (str, int, float, bool)
    if isinstance(value, scalars):
        return str(value)
    if isinstance(value, (list, tuple, set)) and all(isinstance(v, scalars) for v in value):
        items = [str(v) for v in value]
        return ", ".join(sorted(items) if isinstance(value, set) else items)
    return None  # other values are not shown


def _metadata_lines(metadata: dict[str, Any]) -> list[str]:
    lines = []
    for key, value in metadata.items():
        text = _format_metadata_value(value)
        if text is not None:
            lines.append(_escape_label(f"{key} = {text}"))
    return lines


def _safe_id(label: str) -> str:
    # [A-Za-z0-9_-] kept, any other character -> backslash + lowercase hex code point
    return "".join(ch if ch in _SAFE_ID_CHARS else "\\" + format(ord(ch), "x") for ch in label)


def _style_items(node_styles: Any) -> list[tuple[str, str]]:
    if node_styles is None:
        node_styles = NodeStyles()
    if isinstance(node_styles, NodeStyles):
        return [(k, getattr(node_styles, k)) for k in NodeStyles.__slots__]
    fields = getattr(node_styles, "__dataclass_fields__", None)
    if fields is not None:  # e.g. langchain-core's NodeStyles dataclass
        return [(k, getattr(node_styles, k)) for k in fields]
    return [(k, getattr(node_styles, k)) for k in ("default", "first", "last")]


def _draw_mermaid(
    nodes: dict[str, Node],
    edges: list[Edge],
    *,
    first_node: str | None,
    last_node: str | None,
    with_styles: bool,
    curve_style: Any,
    node_styles: Any,
    wrap_label_n_words: int,
    frontmatter_config: dict[str, Any] | None,
) -> str:
    curve = getattr(curve_style, "value", curve_style)
    given = frontmatter_config or {}
    given_config = given.get("config", {})
    front = {
        **given,
        "config": {**given_config, "flowchart": {**given_config.get("flowchart", {}), "curve": curve}},
    }
    out = ["---\n" + _yaml_dump(front) + "---\ngraph TD;\n" if with_styles else "graph TD;\n"]

    # nodes whose id has ":" belong to the subgraph named by the id's prefix
    subgraph_nodes: dict[str, dict[str, Node]] = {}
    regular_nodes: dict[str, Node] = {}
    for key, node in nodes.items():
        if ":" in key:
            subgraph_nodes.setdefault(key.rsplit(":", 1)[0], {})[key] = node
        else:
            regular_nodes[key] = node

    formats = {"default": "{0}({1})"}
    if first_node is not None:
        formats[first_node] = "{0}([{1}]):::first"
    if last_node is not None:
        formats[last_node] = "{0}([{1}]):::last"

    def render_node(key: str, node: Node) -> str:
        name = node.name.split(":")[-1]
        label = (
            f"<p>{name}</p>"
            if name.startswith(tuple(_MARKDOWN_SPECIAL_CHARS)) and name.endswith(tuple(_MARKDOWN_SPECIAL_CHARS))
            else name
        )
        meta = _metadata_lines(node.metadata or {})
        if meta:
            label = f"{label}<hr/><small><em>" + "\n".join(meta) + "</em></small>"
        return "\t" + formats.get(key, formats["default"]).format(_safe_id(key), label) + "\n"

    if with_styles:
        for key, node in regular_nodes.items():
            out.append(render_node(key, node))

    # edges grouped by the common prefix of their source and target ids
    edge_groups: dict[str, list[Edge]] = {}
    for edge in edges:
        common = ":".join(
            s for s, t in zip(edge.source.split(":"), edge.target.split(":")) if s == t
        )
        edge_groups.setdefault(common, []).append(edge)

    seen_subgraphs: set[str] = set()

    def add_subgraph(group: list[Edge], prefix: str) -> None:
        self_loop = len(group) == 1 and group[0].source == group[0].target
        if prefix and not self_loop:
            name = prefix.rsplit(":", 1)[-1]
            if name in seen_subgraphs:
                msg = (
                    f"Found duplicate subgraph '{name}' -- this likely means that "
                    "you're reusing a subgraph node with the same name. "
                    "Please adjust your graph to have subgraph nodes with unique names."
                )
                raise ValueError(msg)
            seen_subgraphs.add(name)
            out.append(f"\tsubgraph {name}\n")
            if with_styles and prefix in subgraph_nodes:
                for key, node in subgraph_nodes[prefix].items():
                    out.append(render_node(key, node))
        for edge in group:
            if edge.data is not None:
                text = edge.data
                words = str(text).split()
                if len(words) > wrap_label_n_words:
                    text = "&nbsp<br>&nbsp".join(
                        " ".join(words[i : i + wrap_label_n_words])
                        for i in range(0, len(words), wrap_label_n_words)
                    )
                arrow = f" -. &nbsp;{text}&nbsp; .-> " if edge.conditional else f" -- &nbsp;{text}&nbsp; --> "
            else:
                arrow = " -.-> " if edge.conditional else " --> "
            out.append(f"\t{_safe_id(edge.source)}{arrow}{_safe_id(edge.target)};\n")
        for nested, nested_edges in edge_groups.items():
            if not nested.startswith(prefix + ":") or nested == prefix:
                continue
            if ":" in nested[len(prefix) + 1 :]:
                continue  # only first-level subgraphs
            add_subgraph(nested_edges, nested)
        if prefix and not self_loop:
            out.append("\tend\n")

    add_subgraph(edge_groups.get("", []), "")
    for prefix, group in edge_groups.items():
        if not prefix or ":" in prefix:
            continue
        add_subgraph(group, prefix)
        seen_subgraphs.add(prefix)

    if with_styles:
        # subgraphs without internal edges
        for prefix, members in subgraph_nodes.items():
            if ":" not in prefix and prefix not in seen_subgraphs:
                out.append(f"\tsubgraph {prefix}\n")
                for key, node in members.items():
                    out.append(render_node(key, node))
                out.append("\tend\n")
                seen_subgraphs.add(prefix)
        for class_name, style in _style_items(node_styles):
            out.append(f"\tclassDef {class_name} {style}\n")
    return "".join(out)


# --- minimal YAML emitter for the front matter -------------------------------------
# Reproduces PyYAML's yaml.dump(obj, default_flow_style=False) for what front matter
# holds: nested dicts (keys sorted), lists, str, int, float, bool and None.
# Not reproduced: PyYAML's folding of scalars longer than 80 columns, keys longer
# than 128 characters, multi-line strings (PyYAML single-quotes them with folded
# breaks; we double-quote them with \n escapes) and its python/* tags for other
# types (a tuple is written as a list, an Enum as its value, other objects as str()).

_YAML_IMPLICIT = re.compile(
    r"""^(?:
        yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF
      | ~|null|Null|NULL
      | [-+]?0b[0-1_]+
      | [-+]?0[0-7_]+
      | [-+]?(?:0|[1-9][0-9_]*)
      | [-+]?0x[0-9a-fA-F_]+
      | [-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+
      | [-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?
      | \.[0-9_]+(?:[eE][-+][0-9]+)?
      | [-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
      | [-+]?\.(?:inf|Inf|INF)
      | \.(?:nan|NaN|NAN)
      | <<
      | =
      | [0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?
        (?:(?:[Tt]|[\ \t]+)[0-9][0-9]?:[0-9][0-9]:[0-9][0-9](?:\.[0-9]*)?
        (?:[\ \t]*(?:Z|[-+][0-9][0-9]?(?::[0-9][0-9])?))?)?
    )$""",
    re.X,
)
# plain scalars PyYAML's (YAML 1.1) resolver would read as something other than a str

_YAML_ESCAPES = {
    "\0": "0",
    "\x07": "a",
    "\x08": "b",
    "\x09": "t",
    "\x0a": "n",
    "\x0b": "v",
    "\x0c": "f",
    "\x0d": "r",
    "\x1b": "e",
    '"': '"',
    "\\": "\\",
    "\x85": "N",
    "\xa0": "_",
    "\u2028": "L",
    "\u2029": "P",
}


def _yaml_str(s: str) -> str:
    if s == "":
        return "''"
    if any(not (" " <= ch <= "~") for ch in s):
        # line breaks, control or non-ASCII characters: double-quoted with escapes
        parts = []
        for ch in s:
            if ch in _YAML_ESCAPES:
                parts.append("\\" + _YAML_ESCAPES[ch])
            elif " " <= ch <= "~":
                parts.append(ch)
            elif ord(ch) <= 0xFF:
                parts.append("\\x%02X" % ord(ch))
            elif ord(ch) <= 0xFFFF:
                parts.append("\\u%04X" % ord(ch))
            else:
                parts.append("\\U%08X" % ord(ch))
        return '"' + "".join(parts) + '"'
    plain = not (
        _YAML_IMPLICIT.match(s)
        or s[0] in "#,[]{}&*!|>'\"%@`"
        or (s[0] in "?:-" and (len(s) == 1 or s[1] == " "))
        or s[0] == " "
        or s[-1] == " "
        or ": " in s
        or s.endswith(":")
        or " #" in s
        or s.startswith("---")
        or s.startswith("...")
    )
    return s if plain else "'" + s.replace("'", "''") + "'"


def _yaml_scalar(value: Any) -> str:
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return ".nan"
        if math.isinf(value):
            return ".inf" if value > 0 else "-.inf"
        text = repr(value).lower()
        if "." not in text and "e" in text:
            text = text.replace("e", ".0e", 1)
        return text
    if isinstance(value, Enum):
        return _yaml_scalar(value.value)
    return _yaml_str(str(value))


def _yaml_value(value: Any, indent: int, lines: list[str], head: str, in_seq: bool = False) -> None:
    if isinstance(value, Mapping):
        if not value:
            lines.append(head + " {}")
        elif in_seq:
            # "- k: v" then the other keys aligned under k
            keys = _yaml_keys(value)
            child = indent + 2
            _yaml_value(value[keys[0]], child, lines, head + " " + _yaml_scalar(keys[0]) + ":")
            for k in keys[1:]:
                _yaml_value(value[k], child, lines, " " * child + _yaml_scalar(k) + ":")
        else:
            lines.append(head)
            child = indent + 2
            for k in _yaml_keys(value):
                _yaml_value(value[k], child, lines, " " * child + _yaml_scalar(k) + ":")
    elif isinstance(value, (list, tuple)):
        if not value:
            lines.append(head + " []")
        elif in_seq:
            # "- - item": nested sequence starts on the dash line
            items = list(value)
            child = indent + 2
            _yaml_value(items[0], child, lines, head + " -", in_seq=True)
            for item in items[1:]:
                _yaml_value(item, child, lines, " " * child + "-", in_seq=True)
        else:
            lines.append(head)
            # a sequence inside a mapping is not indented further (PyYAML's default)
            for item in value:
                _yaml_value(item, indent, lines, " " * indent + "-", in_seq=True)
    else:
        lines.append(head + " " + _yaml_scalar(value))


def _yaml_keys(mapping: Mapping) -> list:
    # PyYAML sorts keys, and keeps insertion order when they do not compare
    try:
        return sorted(mapping)
    except TypeError:
        return list(mapping)


def _yaml_dump(data: dict[str, Any]) -> str:
    lines: list[str] = []
    for k in _yaml_keys(data):
        _yaml_value(data[k], 0, lines, _yaml_scalar(k) + ":")
    return "\n".join(lines) + "\n"


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
