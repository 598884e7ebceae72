"""Behaviour tests for node execution: inputs, return values -> writes, routing.

Covers docs/BEHAVIOUR.md §4 (N-1…N-9): every return form of a
node, graph-input rules, the node-local view a conditional edge reads, router
results, `Command.goto`, `Send`, `Command(graph=PARENT)` at the root and
`Command.__repr__`. N-10 (a ChannelWrite to the reserved TASKS channel) cannot be
reached through the public API and is left to kernel tests.

Every test was first run against LangGraph 1.2.22 through an import alias
(`lgembed` -> `langgraph`), so the expected values are LangGraph's. Task ids are
never pinned.
"""

import contextlib
import dataclasses
import logging
import operator
import re
from typing import Annotated, Any, Optional, TypedDict

import pytest

from lgembed.errors import EmptyInputError, GraphBubbleUp, InvalidUpdateError, ParentCommand
from lgembed.graph import END, START, StateGraph
from lgembed.types import Command, Send

# --- shared helpers ------------------------------------------------------------


@contextlib.contextmanager
def raises_exactly(exc_type, text: str):
    """`pytest.raises(exc_type, match=re.escape(text))` plus `str(exc) == text` exactly.

    (pytest matches against the message *and* `__notes__`, so the equality check is
    what pins the message itself.)
    """
    with pytest.raises(exc_type, match=re.escape(text)) as exc:
        yield exc
    assert str(exc.value) == text


def exactly(text: str) -> str:
    """A `match=` pattern that accepts `text` and nothing longer or shorter."""
    return "^" + re.escape(text) + r"\Z"


RETURN_URL = (
    "\nFor troubleshooting, visit: "
    "https://docs.langchain.com/oss/python/langgraph/errors/INVALID_GRAPH_NODE_RETURN_VALUE"
)


def expected_dict(got: str) -> str:
    """N-1's InvalidUpdateError text for a return value whose str() is `got`."""
    return f"Expected dict, got {got}{RETURN_URL}"


class S(TypedDict):
    x: int
    log: Annotated[list, operator.add]


def graph(ret: Any, *, schema: Any = S, edge_to_b: bool = True) -> Any:
    """START -> a (returns `ret`, or calls it if callable) [-> b]; b and c append to `log`."""
    g = StateGraph(schema)
    g.add_node("a", ret if callable(ret) and not isinstance(ret, type) else (lambda s: ret))
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_node("c", lambda s: {"log": [f"c:{s!r}"]})
    g.add_edge(START, "a")
    if edge_to_b:
        g.add_edge("a", "b")
    return g.compile()


def warning_texts(caplog) -> list:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def unknown_channel(channel: str, node: str = "a") -> str:
    return f"Task {node} with path ('__pregel_pull', '{node}') wrote to unknown channel {channel}, ignoring it."


# --- N-1 return values -----------------------------------------------------------


def test_return_none_writes_nothing_edges_fire():
    """N-1: None -> no state writes, static edges still fire; the updates chunk is None."""
    app = graph(None)
    assert list(app.stream({"x": 1})) == [{"a": None}, {"b": {"log": ["b"]}}]
    assert app.invoke({"x": 1}) == {"x": 1, "log": ["b"]}


def test_return_empty_dict_is_like_none():
    """N-1: {} behaves like None."""
    app = graph({})
    assert list(app.stream({"x": 1})) == [{"a": None}, {"b": {"log": ["b"]}}]


def test_return_dict_unknown_keys_dropped(caplog):
    """N-1: keys that are not state channels are dropped silently (no warning)."""
    caplog.set_level(logging.WARNING)
    app = graph({"y": 5, "x": 3})
    assert list(app.stream({"x": 0})) == [{"a": {"x": 3}}, {"b": {"log": ["b"]}}]
    assert app.invoke({"x": 0}) == {"x": 3, "log": ["b"]}
    assert warning_texts(caplog) == []


def test_return_dict_writes_each_key_reducers_apply():
    """N-1: one write per state key; reducer channels combine the write with the value."""
    app = graph({"x": 2, "log": ["a"]})
    assert app.invoke({"x": 0, "log": ["i"]}) == {"x": 2, "log": ["i", "a", "b"]}


def test_return_managed_key_is_ignored_with_warning(caplog):
    """N-1: a managed-value key passes the key filter, then is ignored with the unknown-channel warning."""
    from lgembed.managed import RemainingSteps

    class M(TypedDict):
        x: int
        rem: RemainingSteps

    caplog.set_level(logging.WARNING)
    app = graph({"x": 1, "rem": 99}, schema=M, edge_to_b=False)
    assert app.invoke({"x": 0}) == {"x": 1}
    assert warning_texts(caplog) == [unknown_channel("rem")]


@pytest.mark.parametrize(
    ("ret", "text"),
    [
        (5, "5"),
        (["x"], "['x']"),
        (("x",), "('x',)"),
        ("abc", "abc"),
        ([], "[]"),
        ([Send("c", 3)], "[Send(node='c', arg=3)]"),
    ],
    ids=["int", "list", "tuple", "str", "empty-list", "list-of-send"],
)
def test_return_invalid_value(ret, text):
    """N-1: anything else -> InvalidUpdateError("Expected dict, got {value!s}" + troubleshooting link)."""
    app = graph(ret)
    with raises_exactly(InvalidUpdateError, expected_dict(text)) as exc:
        app.invoke({"x": 0})
    assert type(exc.value) is InvalidUpdateError
    assert InvalidUpdateError.__mro__[1] is Exception
    with raises_exactly(InvalidUpdateError, expected_dict(text)):
        list(app.stream({"x": 0}))


def test_invalid_return_error_note_names_the_task():
    """N-1/L-32: the error carries the note "During task with name 'a' and id '<task id>'"."""
    with pytest.raises(InvalidUpdateError) as exc:
        graph(5).invoke({"x": 0})
    notes = getattr(exc.value, "__notes__", [])
    assert len(notes) == 1
    assert re.fullmatch(r"During task with name 'a' and id '[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}'", notes[0])


def test_invalid_return_stops_the_run_before_later_steps():
    """N-1: the failing step's writes are not applied and later nodes do not run."""
    chunks = []
    with pytest.raises(InvalidUpdateError):
        for c in graph(5).stream({"x": 0}):
            chunks.append(c)
    assert chunks == []


@dataclasses.dataclass
class DState:
    a: int = 0
    b: Optional[str] = None
    c: Optional[str] = "dflt"
    log: Annotated[list, operator.add] = dataclasses.field(default_factory=list)


def test_return_dataclass_object_writes_every_field_even_none():
    """N-1: a dataclass return writes every state key it has, None values included (no default filter)."""
    g = StateGraph(DState)
    g.add_node("n", lambda s: DState(a=1, c=None))
    g.add_edge(START, "n")
    app = g.compile()
    inp = {"a": 0, "b": "B", "c": "C", "log": ["i"]}
    assert list(app.stream(inp)) == [{"n": {"a": 1, "b": None, "c": None, "log": []}}]
    assert app.invoke(inp) == {"a": 1, "b": None, "c": None, "log": ["i"]}


def test_return_pydantic_object_none_default_rule():
    """N-1: pydantic return writes a field if its value is not None, its default is not None, or it was set."""
    pydantic = pytest.importorskip("pydantic")

    class P(pydantic.BaseModel):
        a: int = 0
        b: Optional[str] = None
        c: Optional[str] = "dflt"
        d: Optional[str] = None
        log: Annotated[list, operator.add] = []

    g = StateGraph(P)
    g.add_node("n", lambda s: P(a=1, d=None))
    g.add_edge(START, "n")
    app = g.compile()
    inp = {"a": 0, "b": "B", "c": "C", "d": "D"}
    # b: None, default None, not set -> skipped; c: default "dflt" written; d: set -> written
    assert list(app.stream(inp)) == [{"n": {"a": 1, "c": "dflt", "d": None, "log": []}}]
    assert app.invoke(inp) == {"a": 1, "b": "B", "c": "dflt", "d": None, "log": []}

    g = StateGraph(P)
    g.add_node("n", lambda s: P(c=None))  # explicit None over a non-None default
    g.add_edge(START, "n")
    assert list(g.compile().stream({"a": 5, "c": "C"})) == [{"n": {"a": 0, "c": None, "log": []}}]


@dataclasses.dataclass
class XUpdate:
    x: int
    other: str = "o"


class PlainUpdate:
    x: int

    def __init__(self):
        self.x = 9


def test_return_annotated_object_of_another_class():
    """N-1: any object whose class has annotations writes the state keys it carries as attributes."""
    assert list(graph(XUpdate(x=7), edge_to_b=False).stream({"x": 0})) == [{"a": {"x": 7}}]
    assert list(graph(PlainUpdate(), edge_to_b=False).stream({"x": 0})) == [{"a": {"x": 9}}]


def test_return_bare_send_starts_a_push_task():
    """N-1/N-7: a bare Send return writes no state and creates a task for its node with the arg."""
    app = graph(Send("c", 3), edge_to_b=False)
    assert list(app.stream({"x": 0})) == [{"a": None}, {"c": {"log": ["c:3"]}}]


def test_return_command_dict_update():
    """N-1: a Command's dict update becomes writes; unknown keys dropped."""
    app = graph(Command(update={"x": 4, "log": ["a"], "zz": 1}))
    assert list(app.stream({"x": 0})) == [{"a": {"x": 4, "log": ["a"]}}, {"b": {"log": ["b"]}}]


def test_return_command_list_of_tuples_keeps_order_and_duplicates():
    """N-1: list of (str, value) 2-tuples kept in order, duplicates allowed; the updates chunk is a list."""
    app = graph(Command(update=[("log", ["t1"]), ("log", ["t2"]), ("zz", 1)]))
    assert list(app.stream({"x": 0})) == [
        {"a": [{"log": ["t1"]}, {"log": ["t2"]}]},
        {"b": {"log": ["b"]}},
    ]
    assert app.invoke({"x": 0}) == {"x": 0, "log": ["t1", "t2", "b"]}


def test_return_command_list_not_all_pairs_goes_to_root_and_is_dropped():
    """N-1: an update list that is not all (str, v) 2-tuples is a `__root__` write, dropped for a dict state."""
    app = graph(Command(update=[("log", ["t1"]), ("x", 1, 2)]))
    assert list(app.stream({"x": 0})) == [{"a": None}, {"b": {"log": ["b"]}}]


def test_return_command_scalar_update_dropped_for_dict_state(caplog):
    """N-1: Command(update=5) is a `__root__` write; a dict state has no such key, so nothing is written."""
    caplog.set_level(logging.WARNING)
    app = graph(Command(update=5))
    assert list(app.stream({"x": 0})) == [{"a": None}, {"b": {"log": ["b"]}}]
    assert warning_texts(caplog) == []


def test_return_command_object_update():
    """N-1: a Command whose update is an annotated object follows the object rule."""
    app = graph(Command(update=XUpdate(x=6)), edge_to_b=False)
    assert list(app.stream({"x": 0})) == [{"a": {"x": 6}}]


def test_return_list_with_commands():
    """N-1: a list containing a Command: Commands and dicts each contribute writes, in order."""
    app = graph([Command(update={"log": ["x"]}, goto="c"), {"log": ["y"]}], edge_to_b=False)
    chunks = list(app.stream({"x": 0}))
    assert chunks[0] == {"a": [{"log": ["x"]}, {"log": ["y"]}]}
    assert chunks[1] == {"c": {"log": ["c:{'x': 0, 'log': ['x', 'y']}"]}}
    assert len(chunks) == 2


def test_return_list_with_command_and_invalid_element():
    """N-1: a non-dict, non-Command element of such a list -> "Expected dict, got <element>"."""
    with raises_exactly(InvalidUpdateError, expected_dict("5")):
        graph([Command(update={"log": ["x"]}), 5]).invoke({"x": 0})


def test_return_tuple_with_commands():
    """N-1: a tuple containing Commands is handled like a list."""
    app = graph((Command(goto="c"), Command(update={"x": 3})), edge_to_b=False)
    assert app.invoke({"x": 0}) == {"x": 3, "log": ["c:{'x': 3, 'log': []}"]}


def test_return_runnable_is_invoked():
    """N-2: a node returning a compiled graph has it invoked with the node input; its output is the update."""
    inner = StateGraph(S)
    inner.add_node("i", lambda s: {"x": s["x"] * 10, "log": ["i"]})
    inner.add_edge(START, "i")
    inner_app = inner.compile()
    app = graph(lambda s: inner_app, edge_to_b=False)
    assert list(app.stream({"x": 2, "log": ["o"]})) == [{"a": {"x": 20, "log": ["o", "i"]}}]
    assert app.invoke({"x": 2, "log": ["o"]}) == {"x": 20, "log": ["o", "o", "i"]}


# --- root (`__root__`) state -----------------------------------------------------


def test_root_state_any_non_none_return_is_new_value():
    """N-1: with a `__root__` state any non-None return (0, a dict, ...) is the new value; None keeps it."""
    for ret, expected in [(0, 0), ({"x": 1}, {"x": 1}), ("s", "s"), (None, 7)]:
        app = graph(ret, schema=int, edge_to_b=False)
        assert app.invoke(7) == expected


def test_root_state_int():
    """N-1/K-5: StateGraph(int): invoke(1) -> 2, stream -> [{'inc': 2}]."""
    g = StateGraph(int)
    g.add_node("inc", lambda s: s + 1)
    g.add_edge(START, "inc")
    app = g.compile()
    assert app.invoke(1) == 2
    assert list(app.stream(1)) == [{"inc": 2}]


def test_root_state_command_update():
    """N-1: in a root state a Command's non-dict update goes to `__root__`."""
    g = StateGraph(int)
    g.add_node("a", lambda s: None)
    g.add_node("b", lambda s: Command(update=s + 5))
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    app = g.compile()
    assert list(app.stream(1)) == [{"a": None}, {"b": 6}]
    assert app.invoke(1) == 6


def test_root_state_command_dict_update_is_key_writes(caplog):
    """N-1: a Command's dict update is (key, value) writes even in a root state: unknown channel warning."""
    caplog.set_level(logging.WARNING)
    g = StateGraph(int)
    g.add_node("a", lambda s: Command(update={"x": 1}))
    g.add_edge(START, "a")
    assert g.compile().invoke(1) == 1
    assert warning_texts(caplog) == [unknown_channel("x")]


def test_root_state_list_with_commands_uses_reducer():
    """N-1: in a root state each element of a Command-containing list is one `__root__` write."""
    g = StateGraph(Annotated[list, operator.add])
    g.add_node("a", lambda s: [Command(update=["c"]), ["d"]])
    g.add_edge(START, "a")
    app = g.compile()
    assert list(app.stream(["z"])) == [{"a": [["c"], ["d"]]}]
    assert app.invoke(["z"]) == ["z", "c", "d"]


def test_root_state_list_with_commands_lastvalue_conflict():
    """N-1/C-1: two `__root__` writes in one step to a LastValue root fail."""
    g = StateGraph(list)
    g.add_node("a", lambda s: [Command(update=["c"]), ["d"]])
    g.add_edge(START, "a")
    text = (
        "At key '__root__': Can receive only one value per step. Use an Annotated key to "
        "handle multiple values.\nFor troubleshooting, visit: "
        "https://docs.langchain.com/oss/python/langgraph/errors/INVALID_CONCURRENT_GRAPH_UPDATE"
    )
    with raises_exactly(InvalidUpdateError, text):
        g.compile().invoke(["z"])


# --- N-3 graph input -------------------------------------------------------------


def test_input_unknown_keys_dropped():
    """N-3: unknown input keys are silently dropped."""
    g = StateGraph(S)
    seen = []
    g.add_node("a", lambda s: seen.append(dict(s)) or {"x": s["x"] + 3})
    g.add_edge(START, "a")
    assert g.compile().invoke({"x": 0, "zz": 1}) == {"x": 3, "log": []}
    assert seen == [{"x": 0, "log": []}]


@pytest.mark.parametrize(("inp", "text"), [(5, "5"), (["x"], "['x']"), ("s", "s")])
def test_input_non_dict_fails(inp, text):
    """N-3: a non-dict input for a TypedDict state fails like a bad node return."""
    app = graph(None)
    with raises_exactly(InvalidUpdateError, expected_dict(text)):
        app.invoke(inp)


def test_input_empty_dict_is_valid():
    """N-3: invoke({}) is valid input; START edges fire."""
    g = StateGraph(S)
    g.add_node("a", lambda s: {"x": s.get("x", 0) + 1})
    g.add_edge(START, "a")
    assert g.compile().invoke({}) == {"x": 1, "log": []}


def test_input_empty_dict_and_no_writes_returns_none():
    """N-3/N-1: with {} input and a node that writes nothing, invoke returns None (no values chunk)."""
    assert graph({}, edge_to_b=False).invoke({}) is None


def test_input_none_without_checkpointer():
    """N-3: None is not input: EmptyInputError."""
    with raises_exactly(EmptyInputError, "Received no input for __start__"):
        graph(None).invoke(None)


def test_input_annotated_object():
    """N-3: an annotated object as input is mapped like a node return (its state attributes)."""
    assert graph(None, edge_to_b=False).invoke(XUpdate(x=4)) == {"x": 4, "log": []}


# --- N-4 conditional edge view ---------------------------------------------------


class XY(TypedDict):
    x: int
    y: int
    log: Annotated[list, operator.add]


def _view_graph(a_ret, router, schema=XY):
    g = StateGraph(schema)
    g.add_node("a", lambda s: a_ret)
    g.add_node("b", lambda s: {"y": 7, "log": ["b"]})
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    g.add_conditional_edges("a", router)
    return g.compile()


def test_branch_view_own_writes_reducers_and_extra_keys_no_siblings():
    """N-4: the router sees this task's writes (reducer applied) plus non-state keys it returned; not b's writes."""
    seen = []

    def r(s):
        seen.append(s)
        return END

    app = _view_graph({"x": 5, "log": ["a"], "extra": "E"}, r)
    assert app.invoke({"x": 0, "y": 0, "log": ["i"]}) == {"x": 5, "y": 7, "log": ["i", "a", "b"]}
    assert seen == [{"x": 5, "log": ["i", "a"], "extra": "E", "y": 0}]


def test_branch_view_none_return_sees_state():
    """N-4: when the node returns None the router reads the state as of the step start."""
    seen = []
    app = _view_graph(None, lambda s: seen.append(s) or END)
    app.invoke({"x": 0, "y": 0, "log": ["i"]})
    assert seen == [{"x": 0, "y": 0, "log": ["i"]}]


def test_branch_view_command_update_applied():
    """N-4: a Command return's update is visible to the router (no passthrough of the Command itself)."""
    seen = []
    app = _view_graph(Command(update={"x": 9, "log": ["cmd"]}), lambda s: seen.append(s) or END)
    app.invoke({"x": 0, "y": 0, "log": ["i"]})
    assert seen == [{"x": 9, "y": 0, "log": ["i", "cmd"]}]


class XOnly(TypedDict):
    x: int


def test_branch_input_schema_no_passthrough():
    """N-4: a router annotated with its own schema reads only those keys, without the node's extra keys."""
    seen = []

    def r(s: XOnly):
        seen.append(s)
        return END

    _view_graph({"x": 5, "log": ["a"], "extra": "E"}, r).invoke({"x": 0, "y": 0, "log": ["i"]})
    assert seen == [{"x": 5}]


def test_branch_view_uses_node_input_schema():
    """N-4: without a branch schema the router reads the node's input schema (plus the node's returned keys)."""
    seen = []

    def a(s: XOnly):
        return {"x": s["x"] + 1, "extra": 1}

    g = StateGraph(XY)
    g.add_node("a", a)
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: seen.append(s) or END)
    g.compile().invoke({"x": 0, "y": 0})
    assert seen == [{"x": 1, "extra": 1}]


def test_branch_view_root_state():
    """N-4: in a root state the router gets the node-local root value."""
    seen = []
    g = StateGraph(int)
    g.add_node("a", lambda s: s + 1)
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: seen.append(s) or END)
    assert g.compile().invoke(1) == 2
    assert seen == [2]


def test_branch_view_pydantic_state_is_model_without_extras():
    """N-4: a pydantic state router receives a model instance; extra returned keys are not passed through."""
    pydantic = pytest.importorskip("pydantic")

    class P(pydantic.BaseModel):
        x: int
        log: Annotated[list, operator.add] = []

    seen = []
    g = StateGraph(P)
    g.add_node("a", lambda s: {"x": 5, "extra": 1})
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: seen.append(s) or END)
    assert g.compile().invoke({"x": 1}) == {"x": 5, "log": []}
    assert seen == [P(x=5, log=[])]
    assert type(seen[0]) is P


# --- N-5 router results ----------------------------------------------------------


def _route(result, path_map=None):
    """a (writes log a) -> router(result); b parallel from START; c is a routing target."""
    g = StateGraph(XY)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_node("c", lambda s: {"log": [f"c:{s!r}" if not isinstance(s, dict) else "c"]})
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: result, path_map)
    return g.compile()


@pytest.mark.parametrize(
    ("result", "path_map"),
    [
        ("c", None),
        (["c"], None),
        (("c",), None),
        (["c", END, "c"], None),
        ("k", {"k": "c"}),
        (["k", "j"], {"k": "c", "j": END}),
        ("c", ["c"]),
        (None, {None: "c"}),
    ],
    ids=["scalar", "list", "tuple", "duplicates-and-end", "map", "map-list", "list-map", "none-label"],
)
def test_router_results_route_to_c_once(result, path_map):
    """N-5: scalar -> [result]; path_map lookup per result; END writes nothing; duplicates run once."""
    app = _route(result, path_map)
    assert list(app.stream({"x": 0, "y": 0, "log": []})) == [{"a": {"log": ["a"]}}, {"c": {"log": ["c"]}}]


@pytest.mark.parametrize("result", [END, [], [END, END]])
def test_router_end_or_nothing(result):
    """N-5: END (or no destination) ends the path."""
    assert list(_route(result).stream({"x": 0})) == [{"a": {"log": ["a"]}}]


@pytest.mark.parametrize(("result", "path_map"), [("q", ["c"]), ("q", {"k": "c"}), (["k", "q"], {"k": "c"})])
def test_router_missing_path_map_key(result, path_map):
    """N-5: a result missing from the path_map -> KeyError(result)."""
    with pytest.raises(KeyError) as exc:
        _route(result, path_map).invoke({"x": 0})
    assert exc.value.args == ("q",)
    assert str(exc.value) == "'q'"


@pytest.mark.parametrize(
    ("result", "path_map"),
    [(None, None), (START, None), ([None], None), (["c", None], None)],
    ids=["none", "start", "list-none", "list-c-none"],
)
def test_router_invalid_destination(result, path_map):
    """N-5: any None or START destination (after the path_map lookup) -> ValueError."""
    app = _route(result, path_map)
    with raises_exactly(ValueError, "Branch did not return a valid destination") as exc:
        app.invoke({"x": 0})
    assert type(exc.value) is ValueError


@pytest.mark.parametrize("result", [Send(END, 1), ["c", Send(END, 1)]])
def test_router_send_to_end(result):
    """N-5: a Send to END from a router -> InvalidUpdateError."""
    with raises_exactly(InvalidUpdateError, "Cannot send a packet to the END node"):
        _route(result).invoke({"x": 0})


def test_router_unknown_destination_warns_and_is_ignored(caplog):
    """N-5: an unknown node name is written to a nonexistent channel: logged warning, ignored."""
    caplog.set_level(logging.WARNING)
    app = _route("zzz")
    assert list(app.stream({"x": 1})) == [{"a": {"log": ["a"]}}]
    assert warning_texts(caplog) == [unknown_channel("branch:to:zzz")]
    assert app.invoke({"x": 1}) == {"x": 1, "log": ["a"]}


def test_router_sends_bypass_path_map():
    """N-5: Send results are not looked up in the path_map; each Send creates a task with its arg."""
    app = _route([Send("c", 1), Send("c", 1), "k"], {"k": "b"})
    assert app.invoke({"x": 0}) == {"x": 0, "log": ["a", "b", "c:1", "c:1"]}


def test_router_error_propagates_from_invoke():
    """N-5: an exception raised inside the router fails the run with that exception."""

    def boom(s):
        raise RuntimeError("router failed")

    g = StateGraph(S)
    g.add_node("a", lambda s: None)
    g.add_edge(START, "a")
    g.add_conditional_edges("a", boom)
    with raises_exactly(RuntimeError, "router failed"):
        g.compile().invoke({"x": 0})


def test_send_map_reduce_from_start():
    """N-5/N-7: a router on START returning Sends fans out; writes are applied in Send order (O-2)."""
    J = TypedDict("J", {"subjects": list, "jokes": Annotated[list, operator.add]})
    g = StateGraph(J)
    g.add_node("gen", lambda s: {"jokes": [f"joke {s['subject']}"]})
    g.add_conditional_edges(START, lambda s: [Send("gen", {"subject": x}) for x in s["subjects"]])
    app = g.compile()
    assert app.invoke({"subjects": ["a", "b", "c"]}) == {
        "subjects": ["a", "b", "c"],
        "jokes": ["joke a", "joke b", "joke c"],
    }
    chunks = list(app.stream({"subjects": ["a", "b", "c"]}))
    assert sorted(chunks, key=str) == [
        {"gen": {"jokes": ["joke a"]}},
        {"gen": {"jokes": ["joke b"]}},
        {"gen": {"jokes": ["joke c"]}},
    ]


# --- N-6 Command.goto ------------------------------------------------------------


@pytest.mark.parametrize("goto", ["c", ["c"], ("c",), [END, "c"]], ids=["str", "list", "tuple", "with-end"])
def test_goto_node_names(goto):
    """N-6: goto as a str or a sequence of names; END is ignored."""
    app = graph(Command(goto=goto), edge_to_b=False)
    assert list(app.stream({"x": 0})) == [{"a": None}, {"c": {"log": ["c:{'x': 0, 'log': []}"]}}]


def test_goto_several_nodes_run_in_the_next_step():
    """N-6: every goto target runs in the next step; PULL writes are applied by node name."""
    app = graph(Command(goto=["c", "b"]), edge_to_b=False)
    assert app.invoke({"x": 0}) == {"x": 0, "log": ["b", "c:{'x': 0, 'log': []}"]}


@pytest.mark.parametrize("goto", [END, [END]])
def test_goto_end_only(goto):
    """N-6: goto END writes nothing."""
    assert list(graph(Command(goto=goto), edge_to_b=False).stream({"x": 0})) == [{"a": None}]


def test_goto_end_does_not_suppress_static_edge():
    """N-6: Command(goto=END) on a node with a static edge a->b still runs b."""
    app = graph(Command(update={"log": ["a2"]}, goto=END))
    assert app.invoke({"x": 0}) == {"x": 0, "log": ["a2", "b"]}


def test_goto_plus_static_edge_to_same_node_runs_it_once():
    """N-6: goto b plus the edge a->b: b runs once."""
    assert list(graph(Command(goto="b")).stream({"x": 0})) == [{"a": None}, {"b": {"log": ["b"]}}]


def test_goto_send():
    """N-6/N-7: goto=Send(...) creates a PUSH task whose input is the arg, verbatim (unknown keys kept)."""
    app = graph(Command(goto=Send("c", {"log": ["sent"], "zz": 1})), edge_to_b=False)
    assert list(app.stream({"x": 0})) == [{"a": None}, {"c": {"log": ["c:{'log': ['sent'], 'zz': 1}"]}}]


def test_goto_mixed_sends_and_names_pull_applied_before_push():
    """N-6: a sequence of Sends and names; PULL writes are applied before PUSH writes, Sends by index (O-11)."""
    app = graph(Command(update={"log": ["a"]}, goto=[Send("c", 5), Send("c", 6), "b"]), edge_to_b=False)
    assert app.invoke({"x": 0}) == {"x": 0, "log": ["a", "b", "c:5", "c:6"]}


def test_goto_unknown_node_warns_and_is_ignored(caplog):
    """N-6: goto to an unknown name writes branch:to:<name>, which is ignored with a warning."""
    caplog.set_level(logging.WARNING)
    assert list(graph(Command(goto="zzz"), edge_to_b=False).stream({"x": 0})) == [{"a": None}]
    assert warning_texts(caplog) == [unknown_channel("branch:to:zzz")]


def test_goto_non_str_elements_in_a_node_return_are_skipped():
    """N-6: inside a node's Command, goto elements that are neither str nor Send are ignored."""
    assert list(graph(Command(goto=["c", 5]), edge_to_b=False).stream({"x": 0}))[-1] == {
        "c": {"log": ["c:{'x': 0, 'log': []}"]}
    }


def test_goto_int_in_a_node_return_is_a_type_error():
    """N-6: a bare non-iterable goto in a node's Command fails with Python's iteration TypeError."""
    with raises_exactly(TypeError, "'int' object is not iterable"):
        graph(Command(goto=5), edge_to_b=False).invoke({"x": 0})


def test_goto_invalid_type_in_command_input():
    """N-6: as graph input, a goto that is not Send/str -> TypeError("In Command.goto, expected Send/str, got int")."""
    with raises_exactly(TypeError, "In Command.goto, expected Send/str, got int"):
        graph(None).invoke(Command(goto=5))


def test_goto_send_to_end_from_node_is_ignored_with_warning(caplog):
    """N-6/N-7: a Send to END in a node's goto (unlike a router's) is only an unknown-node warning."""
    caplog.set_level(logging.WARNING)
    assert list(graph(Command(goto=Send(END, 1)), edge_to_b=False).stream({"x": 0})) == [{"a": None}]
    assert warning_texts(caplog) == ["Ignoring unknown node name __end__ in pending sends"]


# --- N-7 Send --------------------------------------------------------------------


def test_send_arg_verbatim_non_dict_and_private_schema():
    """N-7: the PUSH task input is the arg verbatim, even for a node with its own input schema."""
    seen = []

    class Priv(TypedDict):
        secret: str

    def c(s: Priv):
        seen.append(s)

    g = StateGraph(S)
    g.add_node("a", lambda s: Command(goto=[Send("c", 42), Send("c", {"x": 1, "other": 2})]))
    g.add_node("c", c)
    g.add_edge(START, "a")
    assert g.compile().invoke({"x": 1}) == {"x": 1, "log": []}
    assert seen == [42, {"x": 1, "other": 2}]


def test_send_arg_not_coerced_for_pydantic_state():
    """N-7: a node of a pydantic-state graph receives a Send's dict arg as a plain dict."""
    pydantic = pytest.importorskip("pydantic")

    class P(pydantic.BaseModel):
        x: int = 0

    seen = []
    g = StateGraph(P)
    g.add_node("a", lambda s: Send("c", {"raw": 1}))
    g.add_node("c", lambda s: seen.append(s))
    g.add_edge(START, "a")
    assert g.compile().invoke({"x": 1}) == {"x": 1}
    assert seen == [{"raw": 1}]
    assert type(seen[0]) is dict


def test_send_command_goto_and_update_o11():
    """N-7/O-11: Command(update, goto=[name, Send]) -> b (PULL) applied before c (PUSH, received the arg)."""

    def c(s):
        return {"log": [f"c:{s['log']}:{s['v']}"]}

    V = TypedDict("V", {"log": Annotated[list, operator.add], "v": int})
    g = StateGraph(V)
    g.add_node("a", lambda s: Command(update={"log": ["a"]}, goto=["b", Send("c", {"log": ["sent"], "v": 9})]))
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_node("c", c)
    g.add_edge(START, "a")
    app = g.compile()
    assert app.invoke({"log": []}) == {"log": ["a", "b", "c:['sent']:9"]}


def test_send_to_unknown_node_warns_no_task(caplog):
    """N-7: Send to an unknown node -> warning "Ignoring unknown node name zz in pending sends", no task."""
    caplog.set_level(logging.WARNING)
    g = StateGraph(S)
    g.add_node("a", lambda s: None)
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: [Send("zz", 1)])
    app = g.compile()
    assert list(app.stream({"x": 1})) == [{"a": None}]
    assert warning_texts(caplog) == ["Ignoring unknown node name zz in pending sends"]


def test_send_same_packet_twice_runs_twice():
    """N-7: equal Sends are separate tasks (unlike duplicate node names)."""
    g = StateGraph(S)
    g.add_node("a", lambda s: None)
    g.add_node("c", lambda s: {"log": [s]})
    g.add_edge(START, "a")
    g.add_conditional_edges("a", lambda s: [Send("c", 1), Send("c", 1)])
    assert g.compile().invoke({"x": 1}) == {"x": 1, "log": [1, 1]}


def test_send_equality_and_repr():
    """N-7: Sends are equal when node, arg and timeout are equal; repr Send(node=..., arg=...)."""
    assert Send("b", {"a": [1]}) == Send("b", {"a": [1]})
    assert Send("b", 1) != Send("b", 2)
    assert Send("b", 1) != Send("c", 1)
    assert Send("b", 1) != ("b", 1)
    assert Send("b", 1, timeout=2.0) != Send("b", 1)
    assert repr(Send("b", 1)) == "Send(node='b', arg=1)"
    assert repr(Send("b", {"k": [1]})) == "Send(node='b', arg={'k': [1]})"
    s = Send("b", 1)
    assert (s.node, s.arg) == ("b", 1)


# --- N-8 Command(graph=PARENT) ---------------------------------------------------


def test_parent_command_at_root_graph():
    """N-8: Command(graph=PARENT) returned in a root graph surfaces as ParentCommand "Command(goto='b')"."""
    app = graph(Command(graph=Command.PARENT, goto="b"), edge_to_b=False)
    with pytest.raises(ParentCommand) as exc:
        app.invoke({"x": 0})
    assert str(exc.value) == "Command(goto='b')"
    (cmd,) = exc.value.args
    assert type(cmd) is Command
    # graph=PARENT was rewritten to the parent's namespace: "" at the root, hidden by repr
    assert (cmd.graph, cmd.update, cmd.goto) == ("", None, "b")
    assert ParentCommand.__mro__[1] is GraphBubbleUp
    assert GraphBubbleUp.__mro__[1] is Exception
    with raises_exactly(ParentCommand, "Command(update={'x': 1}, goto='b')"):
        list(graph(Command(graph=Command.PARENT, goto="b", update={"x": 1})).stream({"x": 0}))


def test_parent_command_as_input():
    """N-8: Command(graph=PARENT) as graph input -> InvalidUpdateError("There is no parent graph")."""
    with raises_exactly(InvalidUpdateError, "There is no parent graph"):
        graph(None).invoke(Command(graph=Command.PARENT, goto="b"))


def test_parent_constant():
    """N-8: Command.PARENT is the string "__parent__"."""
    assert Command.PARENT == "__parent__"


# --- N-9 Command repr ------------------------------------------------------------


@pytest.mark.parametrize(
    ("cmd", "text"),
    [
        (Command(update={"a": 1}, goto="x"), "Command(update={'a': 1}, goto='x')"),
        (Command(), "Command()"),
        (Command(resume=0, update={}, goto=[]), "Command()"),
        (Command(resume="r"), "Command(resume='r')"),
        (Command(graph=Command.PARENT, goto="b"), "Command(graph='__parent__', goto='b')"),
        (Command(goto=Send("b", {"k": 1})), "Command(goto=Send(node='b', arg={'k': 1}))"),
        (Command(goto=["a", Send("b", 1)]), "Command(goto=['a', Send(node='b', arg=1)])"),
        (
            Command(graph=Command.PARENT, update={"a": 1}, resume={"i": 2}, goto="g"),
            "Command(graph='__parent__', update={'a': 1}, resume={'i': 2}, goto='g')",
        ),
    ],
)
def test_command_repr(cmd, text):
    """N-9: Command.__repr__ lists only truthy fields, in field order graph, update, resume, goto."""
    assert repr(cmd) == text


def test_command_defaults_and_equality():
    """N-9: Command fields default to None/None/None/() and compare by value."""
    c = Command()
    assert (c.graph, c.update, c.resume, c.goto) == (None, None, None, ())
    assert Command(update={"a": 1}, goto="x") == Command(update={"a": 1}, goto="x")
    assert Command(goto="x") != Command(goto="y")


class ABCLog(TypedDict, total=False):
    a: int
    b: int
    c: int
    log: Annotated[list, operator.add]


@pytest.mark.parametrize(
    ("returned", "inp", "want"),
    [
        # observed with LangGraph 1.2.22: the node's update first, in its order, then the
        # rest of the state in schema order (`{**returned, **state}`)
        ({"c": 1, "b": 2}, {"a": 0, "b": 0, "c": 0}, [("c", 1), ("b", 2), ("a", 0), ("log", [])]),
        ({"log": ["x"], "zz": 9, "a": 3}, {"a": 0, "b": 0, "log": ["i"]},
         [("log", ["i", "x"]), ("zz", 9), ("a", 3), ("b", 0)]),
        ({"c": 5}, {"a": 0, "b": 0}, [("c", 5), ("a", 0), ("b", 0), ("log", [])]),  # c empty before
        ({}, {"a": 0, "c": 1}, [("a", 0), ("c", 1), ("log", [])]),
        ({"zz": 1}, {"b": 2, "a": 1}, [("zz", 1), ("a", 1), ("b", 2), ("log", [])]),
    ],
)
def test_branch_view_key_order_is_update_then_state(returned, inp, want):
    """N-4: the router's dict lists the node's update first, then the state's other keys."""
    seen = []

    def route(s):
        seen.append(list(s.items()))
        return END

    g = StateGraph(ABCLog)
    g.add_node("n", lambda s: returned)
    g.add_edge(START, "n")
    g.add_conditional_edges("n", route)
    g.compile().invoke(inp)
    assert seen == [want]


WIDE_KEYS = [f"k{i}" for i in range(24)]
WideLog = TypedDict("WideLog", {**{k: int for k in WIDE_KEYS}, "log": Annotated[list, operator.add]})


def _wide_updates():
    # update key orders repeated, alternating, more than a run keeps, with a key not in
    # the state (zz), a key that becomes available (k23, absent from the input) and a
    # reducer channel (log)
    ups = [{"k3": 1, "k1": 1}, {"k3": 2, "k1": 2}, {"k3": 3, "k1": 3}]
    ups += [{"k1": 4, "k3": 4}, {"k1": 5, "k3": 5}, {"k3": 6, "k1": 6}]
    ups += [{"zz": 7, "k5": 7}, {"zz": 8, "k5": 8}, {"zz": 9, "k5": 9}]
    ups += [{"k3": 10, "k1": 10}, {"k23": 11}, {"k23": 12}, {"k23": 13, "log": ["x"]}]
    ups += [{"k23": 14, "log": ["y"]}, {"k23": 15, "log": ["z"]}]
    for rnd in range(2):
        for i in range(6, 12):
            ups += [{f"k{i}": 100 * rnd + i, "k0": i}, {f"k{i}": 100 * rnd + i + 1, "k0": i}]
    ups += [{"k3": 50, "k1": 50}, {"k3": 51, "k1": 51}]
    return ups


def test_branch_view_key_order_over_many_steps_of_a_wide_state():
    """N-4 over a run: every step's router dict is `{**update, **state}` in that key order
    with the state's current values, whether the update's key order repeats, alternates
    or changes, with keys outside the state, keys becoming available and reducers; a
    router changing its dict changes nothing after it. (The same program gives the same
    dicts on LangGraph 1.2.22.)"""
    ups = _wide_updates()
    seen = []

    def node(s):
        return ups[len(seen)]

    def route(s):
        seen.append(list(s.items()))
        s["k0"] = -1
        del s["k2"]
        return "n" if len(seen) < len(ups) else END

    g = StateGraph(WideLog)
    g.add_node("n", node)
    g.add_edge(START, "n")
    g.add_conditional_edges("n", route, ["n", END])
    inp = {k: 0 for k in WIDE_KEYS[:23]}
    inp["log"] = ["i"]
    out = g.compile().invoke(inp, {"recursion_limit": 200})

    state = dict(inp)
    want = []
    for up in ups:
        for k, v in up.items():
            if k == "log":
                state[k] = state[k] + v
            elif k in WIDE_KEYS:
                state[k] = v
        ordered = {k: state[k] for k in [*WIDE_KEYS, "log"] if k in state}
        want.append(list({**up, **ordered}.items()))
    assert len(seen) == len(ups)
    for step, (got, exp) in enumerate(zip(seen, want)):
        assert got == exp, f"step {step}: update {ups[step]}"
    assert out == {k: state[k] for k in [*WIDE_KEYS, "log"]}


def test_branch_views_of_parallel_nodes_in_a_wide_state():
    """N-4: two nodes of one step with their routers, each over its own update (two
    update key orders kept side by side, each repeated): each router sees its own node's
    update first and only its own writes; the next step sees both."""
    seen = {"a": [], "b": []}
    rounds = 5

    def a(s):
        return {"k1": s["k1"] + 1, "k2": s["k2"] + 1}

    def b(s):
        return {"k4": s["k4"] + 10, "k3": 7}

    def route_a(s):
        seen["a"].append(list(s)[:3] + [s["k1"], s["k4"]])
        return "a" if len(seen["a"]) < rounds else END

    def route_b(s):
        seen["b"].append(list(s)[:3] + [s["k1"], s["k4"]])
        return "b" if len(seen["b"]) < rounds else END

    g = StateGraph(WideLog)
    g.add_node("a", a)
    g.add_node("b", b)
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    g.add_conditional_edges("a", route_a, ["a", END])
    g.add_conditional_edges("b", route_b, ["b", END])
    out = g.compile().invoke({k: 0 for k in WIDE_KEYS})
    assert seen["a"] == [["k1", "k2", "k0", i + 1, 10 * i] for i in range(rounds)]
    assert seen["b"] == [["k4", "k3", "k0", i, 10 * (i + 1)] for i in range(rounds)]
    assert (out["k1"], out["k2"], out["k3"], out["k4"]) == (rounds, rounds, 7, 10 * rounds)
