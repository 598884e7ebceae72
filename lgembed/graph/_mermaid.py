"""Mermaid text of a drawable graph, as langchain-core's `draw_mermaid()` writes it.

Why this module exists: users paste `get_graph().draw_mermaid()` into docs and compare
it in tests, so the text must match langchain-core's byte for byte; lgembed writes it
without langchain-core, and the front matter without PyYAML (the small emitter at the
end reproduces `yaml.dump(..., default_flow_style=False)` for what front matter holds).

This is the writer half of `lgembed.graph._draw` (see its docstring for how the nodes
and edges are found). It knows nodes and edges only by their attributes (`id`, `name`,
`metadata`; `source`, `target`, `data`, `conditional`) and imports nothing else of
lgembed, so the container (`_drawable`) can call it without an import cycle.
`CurveStyle` and `NodeStyles` live here because they are the writer's options.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from enum import Enum
from typing import Any


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
    nodes: Mapping[str, Any],
    edges: list,
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
    subgraph_nodes: dict[str, dict[str, Any]] = {}
    regular_nodes: dict[str, Any] = {}
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

    def render_node(key: str, node: Any) -> str:
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
    edge_groups: dict[str, list] = {}
    for edge in edges:
        common = ":".join(
            s for s, t in zip(edge.source.split(":"), edge.target.split(":")) if s == t
        )
        edge_groups.setdefault(common, []).append(edge)

    seen_subgraphs: set[str] = set()

    def add_subgraph(group: list, prefix: str) -> None:
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
