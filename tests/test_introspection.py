"""get_graph(xray=...), Graph.to_json() and the input/output/context JSON schemas.

Every expected value here was printed by LangGraph 1.2.22 (langchain-core 1.8.3,
pydantic 2.14.4) for the same program: the builders of the "cases" section were run
unchanged on LangGraph (imports `lgembed` -> `langgraph`) and their results pasted.
The drawing tests go through `CompiledStateGraph.get_graph()`; the schema tests
through `get_input_jsonschema()`, `get_output_jsonschema()` and
`get_context_jsonschema()`, which build with pydantic (skipped without it).

Why over 600 lines: most of it is LangGraph's pasted output (graph structures, Mermaid
text, JSON schemas), kept literal so a reader sees exactly what is pinned.
"""

import functools
import hashlib
import itertools
import json
import operator
import subprocess
import sys
from dataclasses import dataclass, field
from typing import Annotated, Literal, Optional

import pytest

try:
    from typing_extensions import NotRequired, Required, TypedDict
except ImportError:  # comes with pydantic, which is optional: the schema tests skip then
    from typing import NotRequired, Required, TypedDict

from lgembed.graph import END, START, MessagesState, StateGraph
from lgembed.managed import RemainingSteps
from lgembed.prebuilt import ToolNode

# --- cases ----------------------------------------------------------------------------


class S(TypedDict):
    x: int
    log: Annotated[list, operator.add]


def _noop(state):
    return {}


class _CallableObject:
    def __call__(self, state):
        return {}


class _Holder:
    def method(self, state):
        return {}


async def _anoop(state):
    return {}


def _add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def _chain(*names, subgraphs=None, **compile_kwargs):
    """A StateGraph START -> names[0] -> ... -> names[-1] -> END; `subgraphs` maps a name to its node."""
    g = StateGraph(S)
    for name in names:
        g.add_node(name, (subgraphs or {}).get(name, _noop))
    g.add_edge(START, names[0])
    for a, b in itertools.pairwise(names):
        g.add_edge(a, b)
    g.add_edge(names[-1], END)
    return g.compile(**compile_kwargs)


def build_qa_subgraph():
    """The QA scenario graph_draw_mermaid 'subgraph': a conditional edge inside the subgraph."""
    sub = StateGraph(S)
    sub.add_node("s1", _noop)
    sub.add_node("s2", _noop)
    sub.add_edge(START, "s1")
    sub.add_conditional_edges("s1", lambda s: "s2", ["s2", END])
    sub.add_edge("s2", END)
    g = StateGraph(S)
    g.add_node("pre", _noop)
    g.add_node("sub", sub.compile())
    g.add_edge(START, "pre")
    g.add_edge("pre", "sub")
    g.add_edge("sub", END)
    return g.compile(interrupt_before=["sub"])


def build_nested():
    """outer: a -> top; top: b1 -> mid; mid: c1 -> deep (-> c1 | END); deep: d1 -> d2."""
    deep = _chain("d1", "d2")
    mid = StateGraph(S)
    mid.add_node("c1", _noop)
    mid.add_node("deep", deep)
    mid.add_edge(START, "c1")
    mid.add_edge("c1", "deep")

    def again(state) -> Literal["c1", "__end__"]:
        return END

    mid.add_conditional_edges("deep", again)
    top = StateGraph(S)
    top.add_node("b1", _noop, metadata={"k": 1})
    top.add_node("mid", mid.compile())
    top.add_edge(START, "b1")
    top.add_edge("b1", "mid")
    g = StateGraph(S)
    g.add_node("a", _noop)
    g.add_node("top", top.compile(interrupt_after=["b1"]))
    g.add_node("one", _chain("only"))
    g.add_node("my sub", _chain("u v", "w"))
    g.add_node("nockpt", _chain("z", "z2", checkpointer=False))
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: "top", {"top": "top", "one": "one", "sp": "my sub"})
    g.add_edge("top", "nockpt")
    g.add_edge("one", END)
    return g.compile()


def build_duplicate_names():
    inner = StateGraph(S)
    inner.add_node("o", _noop)
    inner.add_node("dup", _chain("n1", "n2"))
    inner.add_edge(START, "o")
    inner.add_edge("o", "dup")
    g = StateGraph(S)
    g.add_node("dup", inner.compile())
    g.add_edge(START, "dup")
    return g.compile()


def build_dangling_subgraph():
    """A subgraph without a single last node stays one node under xray."""
    sub = StateGraph(S)
    sub.add_node("s1", _noop)
    sub.add_node("s2", _noop)
    sub.add_edge(START, "s1")
    sub.add_conditional_edges("s1", lambda s: "s2")
    g = StateGraph(S)
    g.add_node("sub", sub.compile())
    g.add_node("after", _noop)
    g.add_edge(START, "sub")
    g.add_edge("sub", "after")
    return g.compile()


def build_error_handlers():
    def handler(state, error=None):
        return {}

    g = StateGraph(S)
    g.add_node("a", _noop, error_handler=handler)
    g.add_node("b", _noop)
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.set_node_defaults(error_handler=handler)
    return g.compile()


def build_node_kinds():
    g = StateGraph(S)
    g.add_node("fn", _noop)
    g.add_node("lam", lambda s: {})
    g.add_node("obj", _CallableObject())
    g.add_node("afn", _anoop)
    g.add_node("part", functools.partial(_noop))
    g.add_node("meth", _Holder().method)
    g.add_node("tools", ToolNode([_add]))
    g.add_node("sub", _chain("s1", "s2"), metadata={"m": 1})
    names = ["fn", "lam", "obj", "afn", "part", "meth", "tools", "sub"]
    g.add_edge(START, names[0])
    for a, b in itertools.pairwise(names):
        g.add_edge(a, b)
    return g.compile(interrupt_before=["sub"])


def structure(graph):
    """Node ids and edges of a drawn graph, in the graph's order."""
    return {
        "nodes": list(graph.nodes),
        "edges": [[e.source, e.target, e.data, e.conditional] for e in graph.edges],
    }


def schemas(app):
    """Input, output and context JSON schema of a compiled graph (errors as [type, message])."""
    out = {}
    for kind in ("input", "output", "context"):
        try:
            out[kind] = getattr(app, f"get_{kind}_jsonschema")()
        except Exception as e:  # noqa: BLE001 - the error is the expectation
            out[kind] = [type(e).__name__, str(e)]
    return out


def _single(state_schema, name=None, **kwargs):
    g = StateGraph(state_schema, **kwargs)
    g.add_node("n", _noop)
    g.add_edge(START, "n")
    return g.compile(name=name) if name is not None else g.compile()


class Inner(TypedDict):
    a: int


class TD(TypedDict):
    """Doc of TD."""

    x: int
    y: Annotated[list[str], operator.add]
    z: Optional[str]  # noqa: UP045 - typing.Optional as LangGraph programs write it
    lit: Literal["a", "b"]
    d: dict[str, int]
    inner: Inner
    nr: NotRequired[float]
    steps: RemainingSteps


class Partial(TypedDict, total=False):
    p: int
    q: Required[str]


@dataclass
class DC:
    """Dataclass state."""

    x: int
    y: Annotated[list[str], operator.add] = field(default_factory=list)
    z: str | None = None
    w: str = "w"
    lit: Literal["a", "b"] = "a"
    _priv: int = 0
    schema: int = 2
    model_x: str = "m"
    steps: RemainingSteps = 10


@dataclass
class DCIn:
    x: int


@dataclass
class Ctx:
    """Context doc."""

    user: str
    level: int = 1


class CtxTD(TypedDict):
    user: str


class Chat(MessagesState):
    """Chat state."""

    summary: NotRequired[str]


def digest(value):
    return hashlib.sha256(json.dumps(value).encode()).hexdigest()


def _pydantic_state():
    """A pydantic state with a nested model, descriptions and a reducer."""
    pytest.importorskip("pydantic")
    from pydantic import BaseModel, Field

    class PInner(BaseModel):
        """Inner model."""

        v: int = 3

    class PM(BaseModel):
        """A pydantic state."""

        a: int
        b: Optional[str] = None  # noqa: UP045
        c: Annotated[list[int], operator.add] = Field(default_factory=list, description="the c")
        inner: Optional[PInner] = None  # noqa: UP045

    return PM


def _needs_pydantic():
    pytest.importorskip("pydantic")


# --- get_graph(xray=...) ------------------------------------------------------------------


def test_xray_true_draws_the_subgraph_inside_a_mermaid_block():
    """xray=True replaces the subgraph node by its nodes (ids `sub:s1`, trimmed of
    __start__); draw_mermaid() groups them in `subgraph sub ... end` with escaped ids."""
    graph = build_qa_subgraph().get_graph(xray=True)
    assert structure(graph) == {
        "nodes": ["__start__", "pre", "__end__", "sub:s1", "sub:s2", "sub:__end__"],
        "edges": [
            ["__start__", "pre", None, False],
            ["pre", "sub:s1", None, False],
            ["sub:__end__", "__end__", None, False],
            ["sub:s1", "sub:__end__", None, True],
            ["sub:s1", "sub:s2", None, True],
            ["sub:s2", "sub:__end__", None, False],
        ],
    }
    assert graph.draw_mermaid() == (
        "---\n"
        "config:\n"
        "  flowchart:\n"
        "    curve: linear\n"
        "---\n"
        "graph TD;\n"
        "\t__start__([<p>__start__</p>]):::first\n"
        "\tpre(pre)\n"
        "\t__end__([<p>__end__</p>]):::last\n"
        "\t__start__ --> pre;\n"
        "\tpre --> sub\\3as1;\n"
        "\tsub\\3a__end__ --> __end__;\n"
        "\tsubgraph sub\n"
        "\tsub\\3as1(s1)\n"
        "\tsub\\3as2(s2)\n"
        "\tsub\\3a__end__(<p>__end__</p>)\n"
        "\tsub\\3as1 -.-> sub\\3a__end__;\n"
        "\tsub\\3as1 -.-> sub\\3as2;\n"
        "\tsub\\3as2 --> sub\\3a__end__;\n"
        "\tend\n"
        "\tclassDef default fill:#f2f0ff,line-height:1.2\n"
        "\tclassDef first fill-opacity:0\n"
        "\tclassDef last fill:#bfb6fc\n"
    )


@pytest.mark.parametrize(
    ("xray", "expected"),
    [
        (
            False,
            {
                "nodes": ["__start__", "a", "top", "one", "my sub", "nockpt", "__end__"],
                "edges": [
                    ["__start__", "a", None, False],
                    ["a", "my sub", "sp", True],
                    ["a", "one", None, True],
                    ["a", "top", None, True],
                    ["top", "nockpt", None, False],
                    ["my sub", "__end__", None, False],
                    ["nockpt", "__end__", None, False],
                    ["one", "__end__", None, False],
                ],
            },
        ),
        (
            True,
            {
                "nodes": [
                    "__start__",
                    "a",
                    "nockpt",
                    "__end__",
                    "top:b1",
                    "top:mid:__start__",
                    "top:mid:c1",
                    "top:mid:__end__",
                    "top:mid:deep:d1",
                    "top:mid:deep:d2",
                    "one:only",
                    "my sub:u v",
                    "my sub:w",
                ],
                "edges": [
                    ["__start__", "a", None, False],
                    ["a", "my sub:u v", "sp", True],
                    ["a", "one:only", None, True],
                    ["a", "top:b1", None, True],
                    ["top:mid:__end__", "nockpt", None, False],
                    ["my sub:w", "__end__", None, False],
                    ["nockpt", "__end__", None, False],
                    ["one:only", "__end__", None, False],
                    ["top:b1", "top:mid:__start__", None, False],
                    ["top:mid:__start__", "top:mid:c1", None, False],
                    ["top:mid:c1", "top:mid:deep:d1", None, False],
                    ["top:mid:deep:d2", "top:mid:__end__", None, True],
                    ["top:mid:deep:d2", "top:mid:c1", None, True],
                    ["top:mid:deep:d1", "top:mid:deep:d2", None, False],
                    ["my sub:u v", "my sub:w", None, False],
                ],
            },
        ),
        (
            1,
            {
                "nodes": [
                    "__start__",
                    "a",
                    "nockpt",
                    "__end__",
                    "top:b1",
                    "top:mid",
                    "one:only",
                    "my sub:u v",
                    "my sub:w",
                ],
                "edges": [
                    ["__start__", "a", None, False],
                    ["a", "my sub:u v", "sp", True],
                    ["a", "one:only", None, True],
                    ["a", "top:b1", None, True],
                    ["top:mid", "nockpt", None, False],
                    ["my sub:w", "__end__", None, False],
                    ["nockpt", "__end__", None, False],
                    ["one:only", "__end__", None, False],
                    ["top:b1", "top:mid", None, False],
                    ["my sub:u v", "my sub:w", None, False],
                ],
            },
        ),
        (
            2,
            {
                "nodes": [
                    "__start__",
                    "a",
                    "nockpt",
                    "__end__",
                    "top:b1",
                    "top:mid:__start__",
                    "top:mid:c1",
                    "top:mid:deep",
                    "top:mid:__end__",
                    "one:only",
                    "my sub:u v",
                    "my sub:w",
                ],
                "edges": [
                    ["__start__", "a", None, False],
                    ["a", "my sub:u v", "sp", True],
                    ["a", "one:only", None, True],
                    ["a", "top:b1", None, True],
                    ["top:mid:__end__", "nockpt", None, False],
                    ["my sub:w", "__end__", None, False],
                    ["nockpt", "__end__", None, False],
                    ["one:only", "__end__", None, False],
                    ["top:b1", "top:mid:__start__", None, False],
                    ["top:mid:__start__", "top:mid:c1", None, False],
                    ["top:mid:c1", "top:mid:deep", None, False],
                    ["top:mid:deep", "top:mid:__end__", None, True],
                    ["top:mid:deep", "top:mid:c1", None, True],
                    ["my sub:u v", "my sub:w", None, False],
                ],
            },
        ),
    ],
    ids=["false", "true", "1", "2"],
)
def test_xray_depth(xray, expected):
    """xray=N expands N levels, True all; a one-node subgraph ("one") is expanded too, a
    subgraph compiled with checkpointer=False ("nockpt") never; the subgraph node's
    own metadata and interrupts go, its nodes keep theirs."""
    assert structure(build_nested().get_graph(xray=xray)) == expected


def test_xray_nested_mermaid():
    """Nested subgraphs become nested `subgraph` blocks; ids keep every prefix."""
    assert build_nested().get_graph(xray=True).draw_mermaid() == (
        "---\n"
        "config:\n"
        "  flowchart:\n"
        "    curve: linear\n"
        "---\n"
        "graph TD;\n"
        "\t__start__([<p>__start__</p>]):::first\n"
        "\ta(a)\n"
        "\tnockpt(nockpt)\n"
        "\t__end__([<p>__end__</p>]):::last\n"
        "\t__start__ --> a;\n"
        "\ta -. &nbsp;sp&nbsp; .-> my\\20sub\\3au\\20v;\n"
        "\ta -.-> one\\3aonly;\n"
        "\ta -.-> top\\3ab1;\n"
        "\ttop\\3amid\\3a__end__ --> nockpt;\n"
        "\tmy\\20sub\\3aw --> __end__;\n"
        "\tnockpt --> __end__;\n"
        "\tone\\3aonly --> __end__;\n"
        "\tsubgraph top\n"
        "\ttop\\3ab1(b1<hr/><small><em>k = 1\n"
        "__interrupt = after</em></small>)\n"
        "\ttop\\3ab1 --> top\\3amid\\3a__start__;\n"
        "\tsubgraph mid\n"
        "\ttop\\3amid\\3a__start__(<p>__start__</p>)\n"
        "\ttop\\3amid\\3ac1(c1)\n"
        "\ttop\\3amid\\3a__end__(<p>__end__</p>)\n"
        "\ttop\\3amid\\3a__start__ --> top\\3amid\\3ac1;\n"
        "\ttop\\3amid\\3ac1 --> top\\3amid\\3adeep\\3ad1;\n"
        "\ttop\\3amid\\3adeep\\3ad2 -.-> top\\3amid\\3a__end__;\n"
        "\ttop\\3amid\\3adeep\\3ad2 -.-> top\\3amid\\3ac1;\n"
        "\tsubgraph deep\n"
        "\ttop\\3amid\\3adeep\\3ad1(d1)\n"
        "\ttop\\3amid\\3adeep\\3ad2(d2)\n"
        "\ttop\\3amid\\3adeep\\3ad1 --> top\\3amid\\3adeep\\3ad2;\n"
        "\tend\n"
        "\tend\n"
        "\tend\n"
        "\tsubgraph my sub\n"
        "\tmy\\20sub\\3au\\20v(u v)\n"
        "\tmy\\20sub\\3aw(w)\n"
        "\tmy\\20sub\\3au\\20v --> my\\20sub\\3aw;\n"
        "\tend\n"
        "\tsubgraph one\n"
        "\tone\\3aonly(only)\n"
        "\tend\n"
        "\tclassDef default fill:#f2f0ff,line-height:1.2\n"
        "\tclassDef first fill-opacity:0\n"
        "\tclassDef last fill:#bfb6fc\n"
    )


def test_xray_duplicate_subgraph_name():
    """A nested subgraph named like its parent: draw_mermaid() raises LangGraph's error
    with xray=True; with xray=1 the inner one is not expanded and drawing works."""
    app = build_duplicate_names()
    graph = app.get_graph(xray=True)
    with pytest.raises(ValueError) as info:
        graph.draw_mermaid()
    assert [type(info.value).__name__, str(info.value)] == [
        "ValueError",
        "Found duplicate subgraph 'dup' -- this likely means that you're reusing a subgraph node with the same name. Please adjust your graph to have subgraph nodes with unique names.",
    ]
    graph = app.get_graph(xray=1)
    assert structure(graph) == {
        "nodes": ["__start__", "__end__", "dup:o", "dup:dup"],
        "edges": [
            ["__start__", "dup:o", None, False],
            ["dup:dup", "__end__", None, False],
            ["dup:o", "dup:dup", None, False],
        ],
    }
    assert "\tsubgraph dup\n" in graph.draw_mermaid()


def test_xray_keeps_a_subgraph_without_a_single_last_node():
    """A subgraph whose drawing has two last nodes cannot be spliced in: it stays a node."""
    assert structure(build_dangling_subgraph().get_graph(xray=True)) == {
        "nodes": ["__start__", "sub", "after", "__end__"],
        "edges": [
            ["__start__", "sub", None, False],
            ["sub", "after", None, False],
            ["after", "__end__", None, False],
        ],
    }


def test_default_error_handler_node_is_drawn():
    """LangGraph's compile() adds the set_node_defaults(error_handler=...) node to the
    builder's nodes, so get_graph() draws it after the other nodes."""
    graph = build_error_handlers().get_graph()
    assert structure(graph) == {
        "nodes": ["__start__", "__error_handler__a", "a", "b", "__default_error_handler__", "__end__"],
        "edges": [["__start__", "a", None, False], ["a", "b", None, False], ["b", "__end__", None, False]],
    }
    assert graph.to_json() == {
        "nodes": [
            {
                "id": "__start__",
                "type": "runnable",
                "data": {
                    "id": ["langgraph", "_internal", "_runnable", "RunnableCallable"],
                    "name": "__start__",
                },
            },
            {
                "id": "__error_handler__a",
                "type": "runnable",
                "data": {
                    "id": ["langgraph", "_internal", "_runnable", "RunnableCallable"],
                    "name": "__error_handler__a",
                },
            },
            {
                "id": "a",
                "type": "runnable",
                "data": {"id": ["langgraph", "_internal", "_runnable", "RunnableCallable"], "name": "a"},
            },
            {
                "id": "b",
                "type": "runnable",
                "data": {"id": ["langgraph", "_internal", "_runnable", "RunnableCallable"], "name": "b"},
            },
            {
                "id": "__default_error_handler__",
                "type": "runnable",
                "data": {
                    "id": ["langgraph", "_internal", "_runnable", "RunnableCallable"],
                    "name": "__default_error_handler__",
                },
            },
            {"id": "__end__"},
        ],
        "edges": [
            {"source": "__start__", "target": "a"},
            {"source": "a", "target": "b"},
            {"source": "b", "target": "__end__"},
        ],
    }


# --- to_json() ---------------------------------------------------------------------------


def test_to_json_node_data_is_langgraphs_runnable():
    """Functions, lambdas, callable objects, coroutines, partials and methods are
    RunnableCallable nodes (so is __start__); ToolNode and compiled graphs report their
    LangGraph class; __end__ has no data."""
    assert build_node_kinds().get_graph().to_json() == {
        "nodes": [
            {
                "id": "__start__",
                "type": "runnable",
                "data": {
                    "id": ["langgraph", "_internal", "_runnable", "RunnableCallable"],
                    "name": "__start__",
                },
            },
            {
                "id": "fn",
                "type": "runnable",
                "data": {"id": ["langgraph", "_internal", "_runnable", "RunnableCallable"], "name": "fn"},
            },
            {
                "id": "lam",
                "type": "runnable",
                "data": {"id": ["langgraph", "_internal", "_runnable", "RunnableCallable"], "name": "lam"},
            },
            {
                "id": "obj",
                "type": "runnable",
                "data": {"id": ["langgraph", "_internal", "_runnable", "RunnableCallable"], "name": "obj"},
            },
            {
                "id": "afn",
                "type": "runnable",
                "data": {"id": ["langgraph", "_internal", "_runnable", "RunnableCallable"], "name": "afn"},
            },
            {
                "id": "part",
                "type": "runnable",
                "data": {"id": ["langgraph", "_internal", "_runnable", "RunnableCallable"], "name": "part"},
            },
            {
                "id": "meth",
                "type": "runnable",
                "data": {"id": ["langgraph", "_internal", "_runnable", "RunnableCallable"], "name": "meth"},
            },
            {
                "id": "tools",
                "type": "runnable",
                "data": {"id": ["langgraph", "prebuilt", "tool_node", "ToolNode"], "name": "tools"},
                "metadata": {"__tools": ["_add"]},
            },
            {
                "id": "sub",
                "type": "runnable",
                "data": {"id": ["langgraph", "graph", "state", "CompiledStateGraph"], "name": "sub"},
                "metadata": {"m": 1, "__interrupt": "before"},
            },
            {"id": "__end__"},
        ],
        "edges": [
            {"source": "__start__", "target": "fn"},
            {"source": "afn", "target": "part"},
            {"source": "fn", "target": "lam"},
            {"source": "lam", "target": "obj"},
            {"source": "meth", "target": "tools"},
            {"source": "obj", "target": "afn"},
            {"source": "part", "target": "meth"},
            {"source": "tools", "target": "sub"},
            {"source": "sub", "target": "__end__"},
        ],
    }


def test_to_json_xray_names_are_prefixed_ids():
    """With xray the data name is the prefixed id ("sub:s1"), not the node's name."""
    assert build_node_kinds().get_graph(xray=True).to_json() == {
        "nodes": [
            {
                "id": "__start__",
                "type": "runnable",
                "data": {
                    "id": ["langgraph", "_internal", "_runnable", "RunnableCallable"],
                    "name": "__start__",
                },
            },
            {
                "id": "fn",
                "type": "runnable",
                "data": {"id": ["langgraph", "_internal", "_runnable", "RunnableCallable"], "name": "fn"},
            },
            {
                "id": "lam",
                "type": "runnable",
                "data": {"id": ["langgraph", "_internal", "_runnable", "RunnableCallable"], "name": "lam"},
            },
            {
                "id": "obj",
                "type": "runnable",
                "data": {"id": ["langgraph", "_internal", "_runnable", "RunnableCallable"], "name": "obj"},
            },
            {
                "id": "afn",
                "type": "runnable",
                "data": {"id": ["langgraph", "_internal", "_runnable", "RunnableCallable"], "name": "afn"},
            },
            {
                "id": "part",
                "type": "runnable",
                "data": {"id": ["langgraph", "_internal", "_runnable", "RunnableCallable"], "name": "part"},
            },
            {
                "id": "meth",
                "type": "runnable",
                "data": {"id": ["langgraph", "_internal", "_runnable", "RunnableCallable"], "name": "meth"},
            },
            {
                "id": "tools",
                "type": "runnable",
                "data": {"id": ["langgraph", "prebuilt", "tool_node", "ToolNode"], "name": "tools"},
                "metadata": {"__tools": ["_add"]},
            },
            {"id": "__end__"},
            {
                "id": "sub:s1",
                "type": "runnable",
                "data": {"id": ["langgraph", "_internal", "_runnable", "RunnableCallable"], "name": "sub:s1"},
            },
            {
                "id": "sub:s2",
                "type": "runnable",
                "data": {"id": ["langgraph", "_internal", "_runnable", "RunnableCallable"], "name": "sub:s2"},
            },
        ],
        "edges": [
            {"source": "__start__", "target": "fn"},
            {"source": "afn", "target": "part"},
            {"source": "fn", "target": "lam"},
            {"source": "lam", "target": "obj"},
            {"source": "meth", "target": "tools"},
            {"source": "obj", "target": "afn"},
            {"source": "part", "target": "meth"},
            {"source": "tools", "target": "sub:s1"},
            {"source": "sub:s2", "target": "__end__"},
            {"source": "sub:s1", "target": "sub:s2"},
        ],
    }


def test_to_json_schema_node():
    """A pydantic model as node data: "schema" with its name, or its JSON schema."""
    pytest.importorskip("pydantic")
    from pydantic import BaseModel

    from lgembed.graph._draw import Graph

    class M(BaseModel):
        """M doc."""

        a: int = 1

    graph = Graph()
    graph.add_edge(graph.add_node(M, "m"), graph.add_node(None, "e"), "lbl", True)
    assert graph.to_json() == {
        "nodes": [{"id": "m", "type": "schema", "data": "m"}, {"id": "e"}],
        "edges": [{"source": "m", "target": "e", "data": "lbl", "conditional": True}],
    }
    assert graph.to_json(with_schemas=True)["nodes"][0] == {
        "id": "m",
        "type": "schema",
        "data": {
            "description": "M doc.",
            "properties": {"a": {"default": 1, "title": "A", "type": "integer"}},
            "title": "M",
            "type": "object",
        },
    }


# --- JSON schemas ------------------------------------------------------------------------


def test_jsonschema_typeddict():
    """TypedDict schemas: pydantic's TypeAdapter (reducers and managed values ignored,
    NotRequired not required, nested TypedDicts in $defs, the docstring as description)."""
    _needs_pydantic()
    assert schemas(_single(TD)) == {
        "input": {
            "$defs": {
                "Inner": {
                    "properties": {"a": {"title": "A", "type": "integer"}},
                    "required": ["a"],
                    "title": "Inner",
                    "type": "object",
                }
            },
            "description": "Doc of TD.",
            "properties": {
                "x": {"title": "X", "type": "integer"},
                "y": {"items": {"type": "string"}, "title": "Y", "type": "array"},
                "z": {"anyOf": [{"type": "string"}, {"type": "null"}], "title": "Z"},
                "lit": {"enum": ["a", "b"], "title": "Lit", "type": "string"},
                "d": {"additionalProperties": {"type": "integer"}, "title": "D", "type": "object"},
                "inner": {"$ref": "#/$defs/Inner"},
                "nr": {"title": "Nr", "type": "number"},
                "steps": {"title": "Steps", "type": "integer"},
            },
            "required": ["x", "y", "z", "lit", "d", "inner", "steps"],
            "title": "TD",
            "type": "object",
        },
        "output": {
            "$defs": {
                "Inner": {
                    "properties": {"a": {"title": "A", "type": "integer"}},
                    "required": ["a"],
                    "title": "Inner",
                    "type": "object",
                }
            },
            "description": "Doc of TD.",
            "properties": {
                "x": {"title": "X", "type": "integer"},
                "y": {"items": {"type": "string"}, "title": "Y", "type": "array"},
                "z": {"anyOf": [{"type": "string"}, {"type": "null"}], "title": "Z"},
                "lit": {"enum": ["a", "b"], "title": "Lit", "type": "string"},
                "d": {"additionalProperties": {"type": "integer"}, "title": "D", "type": "object"},
                "inner": {"$ref": "#/$defs/Inner"},
                "nr": {"title": "Nr", "type": "number"},
                "steps": {"title": "Steps", "type": "integer"},
            },
            "required": ["x", "y", "z", "lit", "d", "inner", "steps"],
            "title": "TD",
            "type": "object",
        },
        "context": None,
    }


def test_jsonschema_typeddict_total_false():
    _needs_pydantic()
    assert schemas(_single(Partial)) == {
        "input": {
            "properties": {"p": {"title": "P", "type": "integer"}, "q": {"title": "Q", "type": "string"}},
            "required": ["q"],
            "title": "Partial",
            "type": "object",
        },
        "output": {
            "properties": {"p": {"title": "P", "type": "integer"}, "q": {"title": "Q", "type": "string"}},
            "required": ["q"],
            "title": "Partial",
            "type": "object",
        },
        "context": None,
    }


def test_jsonschema_dataclass():
    """Other schemas: a model named after the graph ("LangGraphInput") with each
    channel's type and LangGraph's defaults; managed values left out, names starting
    with "_" or clashing with BaseModel attributes aliased."""
    _needs_pydantic()
    assert schemas(_single(DC)) == {
        "input": {
            "properties": {
                "x": {"title": "X", "type": "integer"},
                "y": {"default": [], "items": {"type": "string"}, "title": "Y", "type": "array"},
                "z": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "title": "Z"},
                "w": {"default": "w", "title": "W", "type": "string"},
                "lit": {"default": "a", "enum": ["a", "b"], "title": "Lit", "type": "string"},
                "_priv": {"default": 0, "title": "Priv", "type": "integer"},
                "schema": {"default": 2, "title": "Schema", "type": "integer"},
                "model_x": {"default": "m", "title": "Model X", "type": "string"},
            },
            "required": ["x"],
            "title": "LangGraphInput",
            "type": "object",
        },
        "output": {
            "properties": {
                "x": {"title": "X", "type": "integer"},
                "y": {"default": [], "items": {"type": "string"}, "title": "Y", "type": "array"},
                "z": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "title": "Z"},
                "w": {"default": "w", "title": "W", "type": "string"},
                "lit": {"default": "a", "enum": ["a", "b"], "title": "Lit", "type": "string"},
                "_priv": {"default": 0, "title": "Priv", "type": "integer"},
                "schema": {"default": 2, "title": "Schema", "type": "integer"},
                "model_x": {"default": "m", "title": "Model X", "type": "string"},
            },
            "required": ["x"],
            "title": "LangGraphOutput",
            "type": "object",
        },
        "context": None,
    }


def test_jsonschema_title_follows_runnable_get_name():
    """A lower-case graph name gets "_input"/"_output" (langchain-core's get_name)."""
    _needs_pydantic()
    assert schemas(_single(DC, name="outer")) == {
        "input": {
            "properties": {
                "x": {"title": "X", "type": "integer"},
                "y": {"default": [], "items": {"type": "string"}, "title": "Y", "type": "array"},
                "z": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "title": "Z"},
                "w": {"default": "w", "title": "W", "type": "string"},
                "lit": {"default": "a", "enum": ["a", "b"], "title": "Lit", "type": "string"},
                "_priv": {"default": 0, "title": "Priv", "type": "integer"},
                "schema": {"default": 2, "title": "Schema", "type": "integer"},
                "model_x": {"default": "m", "title": "Model X", "type": "string"},
            },
            "required": ["x"],
            "title": "outer_input",
            "type": "object",
        },
        "output": {
            "properties": {
                "x": {"title": "X", "type": "integer"},
                "y": {"default": [], "items": {"type": "string"}, "title": "Y", "type": "array"},
                "z": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "title": "Z"},
                "w": {"default": "w", "title": "W", "type": "string"},
                "lit": {"default": "a", "enum": ["a", "b"], "title": "Lit", "type": "string"},
                "_priv": {"default": 0, "title": "Priv", "type": "integer"},
                "schema": {"default": 2, "title": "Schema", "type": "integer"},
                "model_x": {"default": "m", "title": "Model X", "type": "string"},
            },
            "required": ["x"],
            "title": "outer_output",
            "type": "object",
        },
        "context": None,
    }


def test_jsonschema_input_and_output_schemas_differ_from_state():
    _needs_pydantic()
    assert schemas(_single(DC, input_schema=DCIn, output_schema=Partial)) == {
        "input": {
            "properties": {"x": {"title": "X", "type": "integer"}},
            "required": ["x"],
            "title": "LangGraphInput",
            "type": "object",
        },
        "output": {
            "properties": {"p": {"title": "P", "type": "integer"}, "q": {"title": "Q", "type": "string"}},
            "required": ["q"],
            "title": "Partial",
            "type": "object",
        },
        "context": None,
    }


def test_jsonschema_root_state():
    """A state without fields (here `int`) is a root model with default None."""
    _needs_pydantic()
    assert schemas(_single(int)) == {
        "input": {"default": None, "title": "LangGraphInput", "type": "integer"},
        "output": {"default": None, "title": "LangGraphOutput", "type": "integer"},
        "context": None,
    }


def test_jsonschema_pydantic_state():
    """A pydantic state is its own model_json_schema(), $defs included."""
    assert schemas(_single(_pydantic_state())) == {
        "input": {
            "$defs": {
                "PInner": {
                    "description": "Inner model.",
                    "properties": {"v": {"default": 3, "title": "V", "type": "integer"}},
                    "title": "PInner",
                    "type": "object",
                }
            },
            "description": "A pydantic state.",
            "properties": {
                "a": {"title": "A", "type": "integer"},
                "b": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "title": "B"},
                "c": {"description": "the c", "items": {"type": "integer"}, "title": "C", "type": "array"},
                "inner": {"anyOf": [{"$ref": "#/$defs/PInner"}, {"type": "null"}], "default": None},
            },
            "required": ["a"],
            "title": "PM",
            "type": "object",
        },
        "output": {
            "$defs": {
                "PInner": {
                    "description": "Inner model.",
                    "properties": {"v": {"default": 3, "title": "V", "type": "integer"}},
                    "title": "PInner",
                    "type": "object",
                }
            },
            "description": "A pydantic state.",
            "properties": {
                "a": {"title": "A", "type": "integer"},
                "b": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None, "title": "B"},
                "c": {"description": "the c", "items": {"type": "integer"}, "title": "C", "type": "array"},
                "inner": {"anyOf": [{"$ref": "#/$defs/PInner"}, {"type": "null"}], "default": None},
            },
            "required": ["a"],
            "title": "PM",
            "type": "object",
        },
        "context": None,
    }


def test_context_jsonschema():
    _needs_pydantic()
    assert _single(Partial).get_context_jsonschema() is None
    assert schemas(_single(Partial, context_schema=Ctx))["context"] == {
        "description": "Context doc.",
        "properties": {
            "user": {"title": "User", "type": "string"},
            "level": {"default": 1, "title": "Level", "type": "integer"},
        },
        "required": ["user"],
        "title": "Ctx",
        "type": "object",
    }
    assert schemas(_single(Partial, context_schema=CtxTD))["context"] == {
        "properties": {"user": {"title": "User", "type": "string"}},
        "required": ["user"],
        "title": "CtxTD",
        "type": "object",
    }
    assert schemas(_single(Partial, context_schema=int))["context"] == [
        "ValueError",
        "Invalid context schema type: <class 'int'>. Must be a BaseModel, TypedDict or dataclass.",
    ]


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="pydantic accepts typing.TypedDict from 3.12")
def test_jsonschema_typing_typeddict_is_rejected_by_pydantic():
    """As in LangGraph, a `typing.TypedDict` schema raises pydantic's error on Python < 3.12."""
    _needs_pydantic()
    import typing

    class Plain(typing.TypedDict):
        x: int

    result = schemas(_single(Plain))
    expected = {
        "input": [
            "PydanticUserError",
            "Please use `typing_extensions.TypedDict` instead of `typing.TypedDict` on Python < 3.12.\n\nFor further information visit https://errors.pydantic.dev/2.14/u/typed-dict-version",
        ],
        "output": [
            "PydanticUserError",
            "Please use `typing_extensions.TypedDict` instead of `typing.TypedDict` on Python < 3.12.\n\nFor further information visit https://errors.pydantic.dev/2.14/u/typed-dict-version",
        ],
        "context": None,
    }
    assert result["context"] is None
    for kind in ("input", "output"):
        assert result[kind][0] == expected[kind][0]
        # the message ends with a documentation link naming the pydantic version
        assert result[kind][1].split("\n")[0] == expected[kind][1].split("\n")[0]


@pytest.mark.parametrize(
    ("state", "expected"),
    [
        (
            "MessagesState",
            {
                "top": {
                    "properties": {
                        "messages": {
                            "items": {
                                "oneOf": [
                                    {"$ref": "#/$defs/AIMessage"},
                                    {"$ref": "#/$defs/HumanMessage"},
                                    {"$ref": "#/$defs/ChatMessage"},
                                    {"$ref": "#/$defs/SystemMessage"},
                                    {"$ref": "#/$defs/FunctionMessage"},
                                    {"$ref": "#/$defs/ToolMessage"},
                                    {"$ref": "#/$defs/AIMessageChunk"},
                                    {"$ref": "#/$defs/HumanMessageChunk"},
                                    {"$ref": "#/$defs/ChatMessageChunk"},
                                    {"$ref": "#/$defs/SystemMessageChunk"},
                                    {"$ref": "#/$defs/FunctionMessageChunk"},
                                    {"$ref": "#/$defs/ToolMessageChunk"},
                                ]
                            },
                            "title": "Messages",
                            "type": "array",
                        }
                    },
                    "required": ["messages"],
                    "title": "MessagesState",
                    "type": "object",
                },
                "defs": [
                    "AIMessage",
                    "AIMessageChunk",
                    "ChatMessage",
                    "ChatMessageChunk",
                    "FunctionMessage",
                    "FunctionMessageChunk",
                    "HumanMessage",
                    "HumanMessageChunk",
                    "InputTokenDetails",
                    "InvalidToolCall",
                    "OutputTokenDetails",
                    "SystemMessage",
                    "SystemMessageChunk",
                    "ToolCall",
                    "ToolCallChunk",
                    "ToolMessage",
                    "ToolMessageChunk",
                    "UsageMetadata",
                ],
                "digest": "f4a5feb774af0b57addddf0a1939aa63681445bf759a036f8a7502193edd3d6d",
                "output_same": True,
                "tool_call": {
                    "additionalProperties": True,
                    "description": 'Represents an AI\'s request to call a tool.\n\nExample:\n    ```python\n    {"name": "foo", "args": {"a": 1}, "id": "123"}\n    ```\n\n    This represents a request to call the tool named `\'foo\'` with arguments\n    `{"a": 1}` and an identifier of `\'123\'`.\n\n!!! note "Factory function"\n\n    `tool_call` may also be used as a factory to create a `ToolCall`. Benefits\n    include:\n\n    * Required arguments strictly validated at creation time',
                    "properties": {
                        "name": {"title": "Name", "type": "string"},
                        "args": {"additionalProperties": True, "title": "Args", "type": "object"},
                        "id": {"anyOf": [{"type": "string"}, {"type": "null"}], "title": "Id"},
                        "type": {"const": "tool_call", "title": "Type", "type": "string"},
                    },
                    "required": ["name", "args", "id"],
                    "title": "ToolCall",
                    "type": "object",
                },
            },
        ),
        (
            "Chat",
            {
                "top": {
                    "description": "Chat state.",
                    "properties": {
                        "messages": {
                            "items": {
                                "oneOf": [
                                    {"$ref": "#/$defs/AIMessage"},
                                    {"$ref": "#/$defs/HumanMessage"},
                                    {"$ref": "#/$defs/ChatMessage"},
                                    {"$ref": "#/$defs/SystemMessage"},
                                    {"$ref": "#/$defs/FunctionMessage"},
                                    {"$ref": "#/$defs/ToolMessage"},
                                    {"$ref": "#/$defs/AIMessageChunk"},
                                    {"$ref": "#/$defs/HumanMessageChunk"},
                                    {"$ref": "#/$defs/ChatMessageChunk"},
                                    {"$ref": "#/$defs/SystemMessageChunk"},
                                    {"$ref": "#/$defs/FunctionMessageChunk"},
                                    {"$ref": "#/$defs/ToolMessageChunk"},
                                ]
                            },
                            "title": "Messages",
                            "type": "array",
                        },
                        "summary": {"title": "Summary", "type": "string"},
                    },
                    "required": ["messages"],
                    "title": "Chat",
                    "type": "object",
                },
                "defs": [
                    "AIMessage",
                    "AIMessageChunk",
                    "ChatMessage",
                    "ChatMessageChunk",
                    "FunctionMessage",
                    "FunctionMessageChunk",
                    "HumanMessage",
                    "HumanMessageChunk",
                    "InputTokenDetails",
                    "InvalidToolCall",
                    "OutputTokenDetails",
                    "SystemMessage",
                    "SystemMessageChunk",
                    "ToolCall",
                    "ToolCallChunk",
                    "ToolMessage",
                    "ToolMessageChunk",
                    "UsageMetadata",
                ],
                "digest": "9e30ff3a8e222d41f53ce053e1fe80baaefc94776e629f78b94bc574865163fe",
                "output_same": True,
                "tool_call": {
                    "additionalProperties": True,
                    "description": 'Represents an AI\'s request to call a tool.\n\nExample:\n    ```python\n    {"name": "foo", "args": {"a": 1}, "id": "123"}\n    ```\n\n    This represents a request to call the tool named `\'foo\'` with arguments\n    `{"a": 1}` and an identifier of `\'123\'`.\n\n!!! note "Factory function"\n\n    `tool_call` may also be used as a factory to create a `ToolCall`. Benefits\n    include:\n\n    * Required arguments strictly validated at creation time',
                    "properties": {
                        "name": {"title": "Name", "type": "string"},
                        "args": {"additionalProperties": True, "title": "Args", "type": "object"},
                        "id": {"anyOf": [{"type": "string"}, {"type": "null"}], "title": "Id"},
                        "type": {"const": "tool_call", "title": "Type", "type": "string"},
                    },
                    "required": ["name", "args", "id"],
                    "title": "ToolCall",
                    "type": "object",
                },
            },
        ),
    ],
    ids=["MessagesState", "subclass"],
)
def test_jsonschema_messages_state(state, expected):
    """The messages field is langchain-core's AnyMessage union with its 18 definitions
    (the digest pins the whole document, definitions included)."""
    _needs_pydantic()
    app = _single(MessagesState if state == "MessagesState" else Chat)
    schema = app.get_input_jsonschema()
    assert {k: v for k, v in schema.items() if k != "$defs"} == expected["top"]
    assert list(schema["$defs"]) == expected["defs"]
    assert schema["$defs"]["ToolCall"] == expected["tool_call"]
    assert digest(schema) == expected["digest"]
    assert (app.get_output_jsonschema() == schema) is expected["output_same"]


def test_jsonschema_without_pydantic(monkeypatch):
    """Without pydantic the schema methods raise an ImportError naming the method; a
    graph without a context schema still answers None."""
    monkeypatch.setitem(sys.modules, "pydantic", None)
    app = _single(Partial, context_schema=Ctx)
    for method in ("get_input_jsonschema", "get_output_jsonschema", "get_context_jsonschema"):
        with pytest.raises(ImportError, match=rf"^{method}\(\) needs pydantic, which is not installed"):
            getattr(app, method)()
    assert _single(Partial).get_context_jsonschema() is None


def test_drawing_and_importing_do_not_load_pydantic():
    code = (
        "import sys, operator\n"
        "from typing import Annotated, TypedDict\n"
        "from lgembed.graph import StateGraph, START\n"
        "class S(TypedDict):\n"
        "    x: Annotated[list, operator.add]\n"
        "g = StateGraph(S); g.add_node('a', lambda s: {}); g.add_edge(START, 'a')\n"
        "gr = g.compile().get_graph(xray=True); gr.draw_mermaid(); gr.to_json()\n"
        "assert 'pydantic' not in sys.modules, 'pydantic imported'\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
