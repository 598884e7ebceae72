"""Behaviour tests for the StateGraph builder and the compiled channel layout.

Covers docs/BEHAVIOUR.md §1 (B-1…B-32) and the parts of §3
(K-1…K-6) that the public API shows: `app.channels` names and kinds, node names,
which keys a node reads and what `invoke`/`stream` return. Node triggers and
`trigger_to_nodes` are internal and not tested here.

Every test was first run against LangGraph 1.2.22 through an import alias
(`lgembed` -> `langgraph`), so the expected values are LangGraph's.
"""

import contextlib
import dataclasses
import functools
import inspect
import logging
import operator
import re
import warnings
from typing import Annotated, Any, Literal, Optional, TypedDict, Union

import pytest

try:
    from typing import NotRequired, Required
except ImportError:  # Python 3.10
    try:
        from typing_extensions import NotRequired, Required
    except ImportError:
        NotRequired = Required = None

from lgembed.channels import EphemeralValue, LastValue, Topic
from lgembed.graph import END, START, StateGraph
from lgembed.runtime import Runtime
from lgembed.types import Command, RetryPolicy, Send

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


def noop(state):
    return None


class S(TypedDict):
    x: int
    log: Annotated[list, operator.add]


def linear(*names: str, schema: Any = S) -> StateGraph:
    """START -> names[0] -> names[1] -> ...; each node appends its name to `log`."""
    g = StateGraph(schema)
    for name in names:
        g.add_node(name, lambda s, _n=name: {"log": [_n]})
    g.add_edge(START, names[0])
    for a, b in zip(names, names[1:]):
        g.add_edge(a, b)
    return g


def kinds(app) -> dict:
    """Channel name -> channel class name of a compiled graph (K-1)."""
    return {k: type(v).__name__ for k, v in app.channels.items()}


def edges(app) -> set:
    """(source, target, conditional) triples of the drawable graph."""
    return {(e.source, e.target, e.conditional) for e in app.get_graph().edges}


def warning_texts(caplog) -> list:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


SYNC_TIMEOUT = (
    "Node timeouts are only supported for async nodes because sync Python "
    "execution cannot be safely cancelled in-process. Node '{}' is sync."
)
NODE_AFTER_COMPILE = (
    "Adding a node to a graph that has already been compiled. This will "
    "not be reflected in the compiled graph."
)
EDGE_AFTER_COMPILE = (
    "Adding an edge to a graph that has already been compiled. This will "
    "not be reflected in the compiled graph."
)


def param_shape(func) -> list:
    return [(p.name, p.kind.name) for p in inspect.signature(func).parameters.values()]


# --- §1.1 constructor & schemas --------------------------------------------------


def test_constructor_signature():
    """B-1: StateGraph(state_schema, context_schema=None, *, input_schema=None, output_schema=None)."""
    assert param_shape(StateGraph.__init__) == [
        ("self", "POSITIONAL_OR_KEYWORD"),
        ("state_schema", "POSITIONAL_OR_KEYWORD"),
        ("context_schema", "POSITIONAL_OR_KEYWORD"),
        ("input_schema", "KEYWORD_ONLY"),
        ("output_schema", "KEYWORD_ONLY"),
        ("kwargs", "VAR_KEYWORD"),
    ]
    with pytest.raises(TypeError):
        StateGraph(S, None, S)  # input_schema is keyword-only


def test_input_and_output_schema_default_to_state_schema():
    """B-1: input/output schema default to the state schema (all keys in, all keys out)."""
    app = linear("a").compile()
    assert app.invoke({"x": 1, "log": ["i"]}) == {"x": 1, "log": ["i", "a"]}


class Full(TypedDict):
    q: str
    internal: str
    ans: str


class QIn(TypedDict):
    q: str


class AnsOut(TypedDict):
    ans: str


def _in_out_graph(**kwargs) -> StateGraph:
    g = StateGraph(Full, **kwargs)
    g.add_node("n1", lambda s: {"internal": s["q"] + "!"})
    g.add_node("n2", lambda s: {"ans": s["internal"] * 2})
    g.add_edge(START, "n1")
    g.add_edge("n1", "n2")
    return g


def test_input_and_output_schema():
    """B-1/K-5: input keys outside the input schema are dropped; invoke returns only output-schema keys."""
    app = _in_out_graph(input_schema=QIn, output_schema=AnsOut).compile()
    assert app.invoke({"q": "hi", "internal": "ignored"}) == {"ans": "hi!hi!"}
    assert sorted(k for k in app.channels if not k.startswith(("__", "branch:"))) == [
        "ans",
        "internal",
        "q",
    ]


def test_stream_values_uses_all_state_channels_not_output_schema():
    """K-5: stream channels are all state channels; only invoke filters by the output schema."""
    app = _in_out_graph(input_schema=QIn, output_schema=AnsOut).compile()
    assert list(app.stream({"q": "hi"}, stream_mode="values")) == [
        {"q": "hi"},
        {"q": "hi", "internal": "hi!"},
        {"q": "hi", "internal": "hi!", "ans": "hi!hi!"},
    ]
    assert list(app.stream({"q": "hi"}, stream_mode="updates")) == [
        {"n1": {"internal": "hi!"}},
        {"n2": {"ans": "hi!hi!"}},
    ]


@pytest.mark.parametrize(
    ("kwarg", "replacement"),
    [("input", "input_schema"), ("output", "output_schema")],
)
def test_deprecated_input_output_kwargs(kwarg, replacement):
    """B-1: deprecated `input`/`output` kwargs warn and act as input_schema/output_schema."""
    schema = QIn if kwarg == "input" else AnsOut
    text = (
        f"`{kwarg}` is deprecated and will be removed. Please use `{replacement}` instead."
        " Deprecated in LangGraph V0.5 to be removed in V2.0."
    )
    with pytest.warns(DeprecationWarning, match=exactly(text)) as record:
        g = _in_out_graph(**{kwarg: schema})
    assert len(record) == 1
    assert record[0].filename == __file__  # stacklevel=2: points at the caller
    app = g.compile()
    if kwarg == "input":
        out = app.invoke({"q": "a", "internal": "zz"})
        assert out == {"q": "a", "internal": "a!", "ans": "a!a!"}
    else:
        assert app.invoke({"q": "a"}) == {"ans": "a!a!"}


@dataclasses.dataclass
class Ctx:
    user: str
    lang: str = "en"


def test_deprecated_config_schema_kwarg_acts_as_context_schema():
    """B-1/B-8: `config_schema` warns and becomes the context schema (dict context coerced)."""
    text = (
        "`config_schema` is deprecated and will be removed. Please use `context_schema` instead."
        " Deprecated in LangGraph V1.0 to be removed in V2.0."
    )
    with pytest.warns(DeprecationWarning, match=exactly(text)) as record:
        g = StateGraph(S, config_schema=Ctx)
    assert record[0].filename == __file__
    seen = []

    def n(state, runtime: Runtime):
        seen.append(runtime.context)

    g.add_node("n", n)
    g.add_edge(START, "n")
    g.compile().invoke({"x": 1}, context={"user": "bob"})
    assert seen == [Ctx(user="bob", lang="en")]


def test_context_schema_dataclass_coerced_from_dict():
    """B-8: a dict context is coerced via schema(**ctx) for a dataclass context schema."""
    seen = []

    def n(state, runtime: Runtime[Ctx]):
        seen.append(runtime.context)
        return {"log": [runtime.context.user]}

    g = StateGraph(S, Ctx)  # context_schema is the second positional parameter
    g.add_node("n", n)
    g.add_edge(START, "n")
    app = g.compile()
    assert app.invoke({"x": 1}, context={"user": "dictbob"}) == {"x": 1, "log": ["dictbob"]}
    assert app.invoke({"x": 1}, context=Ctx(user="bob", lang="de")) == {"x": 1, "log": ["bob"]}
    assert seen == [Ctx("dictbob"), Ctx("bob", "de")]


class CtxTD(TypedDict):
    user: str


def test_context_schema_typeddict_passed_as_is():
    """B-8: for a TypedDict context schema the dict is passed through unchanged."""
    seen = []

    def n(state, runtime: Runtime[CtxTD]):
        seen.append(runtime.context)

    g = StateGraph(S, context_schema=CtxTD)
    g.add_node("n", n)
    g.add_edge(START, "n")
    ctx = {"user": "bob", "extra": 1}
    g.compile().invoke({"x": 1}, context=ctx)
    assert seen == [{"user": "bob", "extra": 1}]


def test_context_pydantic_coerced_from_dict():
    """B-8: a dict context is coerced via schema(**ctx) for a pydantic context schema."""
    pydantic = pytest.importorskip("pydantic")

    class PCtx(pydantic.BaseModel):
        user: str
        n: int = 3

    seen = []

    def node(state, runtime: Runtime[PCtx]):
        seen.append(runtime.context)

    g = StateGraph(S, context_schema=PCtx)
    g.add_node("node", node)
    g.add_edge(START, "node")
    g.compile().invoke({"x": 1}, context={"user": "u"})
    assert seen == [PCtx(user="u", n=3)]


def test_typeddict_schema_one_channel_per_field():
    """B-2/B-3: TypedDict fields become channels; plain fields LastValue, reducer fields BinaryOperatorAggregate."""
    app = linear("a").compile()
    k = kinds(app)
    assert k["x"] == "LastValue"
    assert k["log"] == "BinaryOperatorAggregate"


@dataclasses.dataclass
class DS:
    a: int
    log: Annotated[list, operator.add] = dataclasses.field(default_factory=list)


def test_dataclass_schema():
    """B-2/K-3: dataclass fields become channels; nodes receive a dataclass instance."""
    seen = []

    def inc(s: DS):
        seen.append(s)
        return {"a": s.a + 1}

    g = StateGraph(DS)
    g.add_node("inc", inc)
    g.add_edge(START, "inc")
    app = g.compile()
    assert kinds(app)["a"] == "LastValue"
    assert kinds(app)["log"] == "BinaryOperatorAggregate"
    assert app.invoke({"a": 5}) == {"a": 6, "log": []}
    assert seen == [DS(a=5, log=[])]
    assert type(seen[0]) is DS


def test_pydantic_schema():
    """B-2/K-3: pydantic fields become channels; nodes get a model built from the available channels."""
    pydantic = pytest.importorskip("pydantic")

    class PS(pydantic.BaseModel):
        a: int
        b: str = "dflt"
        log: Annotated[list, operator.add] = []

    seen = []

    def n(s: PS):
        seen.append(s)
        return {"a": s.a + 1, "log": [s.b]}

    g = StateGraph(PS)
    g.add_node("n", n)
    g.add_edge(START, "n")
    app = g.compile()
    assert {k for k in app.channels if not k.startswith(("__", "branch:"))} == {"a", "b", "log"}
    assert app.invoke({"a": 1}) == {"a": 2, "log": ["dflt"]}
    assert app.invoke(PS(a=5)) == {"a": 6, "b": "dflt", "log": ["dflt"]}
    assert type(seen[0]) is PS
    assert seen[0] == PS(a=1, b="dflt", log=[])


def test_pydantic_validation_error_raised_while_preparing_the_task():
    """K-3: the schema coercion happens when tasks are prepared; the error carries a 'Before task' note."""
    pydantic = pytest.importorskip("pydantic")

    class PS(pydantic.BaseModel):
        a: int

    g = StateGraph(PS)
    g.add_node("n", lambda s: {"a": s.a})
    g.add_edge(START, "n")
    with pytest.raises(pydantic.ValidationError) as exc:
        g.compile().invoke({"a": "notint"})
    assert "Before task with name 'n' and path '('__pregel_pull', 'n')'" in getattr(
        exc.value, "__notes__", []
    )


class Plain:
    a: int
    b: str


def test_plain_annotated_class_schema():
    """B-2/K-3: a plain annotated class gives one channel per annotation; nodes receive a plain dict."""
    seen = []

    def n(s):
        seen.append(s)
        return {"b": "B"}

    g = StateGraph(Plain)
    g.add_node("n", n)
    g.add_edge(START, "n")
    app = g.compile()
    assert kinds(app)["a"] == "LastValue" and kinds(app)["b"] == "LastValue"
    assert app.invoke({"a": 1}) == {"a": 1, "b": "B"}
    assert seen == [{"a": 1}]
    assert type(seen[0]) is dict


class Slotted:
    __slots__: tuple = ("a",)
    a: int


def test_slots_annotation_is_not_a_channel():
    """B-2: an annotated `__slots__` is ignored."""
    app = StateGraph(Slotted).add_node("n", noop).add_edge(START, "n").compile()
    assert "__slots__" not in app.channels
    assert kinds(app)["a"] == "LastValue"


def test_non_annotated_schema_is_single_root_channel():
    """B-2: a schema without annotations (int) is one `__root__` channel holding the whole state."""
    g = StateGraph(int)
    g.add_node("inc", lambda s: s + 1)
    g.add_edge(START, "inc")
    app = g.compile()
    assert kinds(app)["__root__"] == "LastValue"
    assert sorted(app.channels) == ["__pregel_tasks", "__root__", "__start__", "branch:to:inc"]
    assert app.invoke(1) == 2
    assert list(app.stream(1)) == [{"inc": 2}]
    assert list(app.stream(1, stream_mode="values")) == [1, 2]


def test_annotated_root_schema_uses_the_reducer():
    """B-2/B-3/B-6: StateGraph(Annotated[list, add]) is a reducer `__root__` channel, without warning."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = StateGraph(Annotated[list, operator.add])
    g.add_node("n", lambda s: ["x"])
    g.add_edge(START, "n")
    app = g.compile()
    assert kinds(app)["__root__"] == "BinaryOperatorAggregate"
    assert app.invoke(["a"]) == ["a", "x"]
    assert list(app.stream(["a"])) == [{"n": ["x"]}]


def test_invalid_state_schema_warns_but_continues():
    """B-6: a non-type schema without type args warns "Invalid state_schema: ..." and becomes `__root__`."""
    text = (
        "Invalid state_schema: None. Expected a type or Annotated[type, reducer]. "
        "Please provide a valid schema to ensure correct updates.\n"
        " See: https://langchain-ai.github.io/langgraph/reference/graphs/#stategraph"
    )
    with pytest.warns(UserWarning, match=exactly(text)):
        g = StateGraph(None)
    g.add_node("n", lambda s: 5)
    g.add_edge(START, "n")
    assert g.compile().invoke(1) == 5


def channel_kinds_schema() -> type:
    """A TypedDict with one field per B-3 rule (skips without Required/NotRequired)."""
    if Required is None:
        pytest.skip("typing.Required/NotRequired need Python 3.11 or typing_extensions")
    return TypedDict(
        "ChannelKinds",
        {
            "plain": int,
            "req": Required[int],
            "notreq": NotRequired[Annotated[list, operator.add]],
            "eph": Annotated[int, EphemeralValue],
            "inst": Annotated[list, Topic(int, accumulate=True)],
            "last_inst": Annotated[str, "doc", LastValue(str)],
            "kw_reducer": Annotated[int, lambda a, b, *, c=1: a + b],
        },
    )


def test_per_field_channel_selection():
    """B-3: Required/NotRequired stripped; channel class -> cls(T); channel instance; 2-arg reducer; else LastValue."""
    app = StateGraph(channel_kinds_schema()).add_node("n", noop).add_edge(START, "n").compile()
    k = kinds(app)
    assert k["plain"] == "LastValue"
    assert k["req"] == "LastValue"
    assert k["notreq"] == "BinaryOperatorAggregate"
    assert k["eph"] == "EphemeralValue"
    assert k["inst"] == "Topic"
    assert k["last_inst"] == "LastValue"
    assert k["kw_reducer"] == "BinaryOperatorAggregate"


def test_channel_instance_and_reducer_fields_in_a_run():
    """B-3: NotRequired reducer accumulates; a Topic(accumulate=True) instance collects values."""
    g = StateGraph(channel_kinds_schema())
    g.add_node("a", lambda s: {"notreq": ["a"], "inst": 1})
    g.add_node("b", lambda s: {"notreq": ["b"], "inst": [2, 3]})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    out = g.compile().invoke({"plain": 0, "notreq": ["i"]})
    assert out["notreq"] == ["i", "a", "b"]
    assert out["inst"] == [1, 2, 3]


def _reducer_schema(fn):
    return TypedDict("R", {"v": Annotated[list, fn]})


@pytest.mark.parametrize(
    ("fn", "sig"),
    [
        (lambda a: a, "(a)"),
        (lambda a, b, c: a, "(a, b, c)"),
        (lambda *args: args, "(*args)"),
        (lambda a, *, b: a, "(a, *, b)"),
    ],
    ids=["one", "three", "varargs", "kwonly"],
)
def test_invalid_reducer_signature(fn, sig):
    """B-3: a reducer without exactly two positional params -> ValueError with str(inspect.signature)."""
    with raises_exactly(ValueError, f"Invalid reducer signature. Expected (a, b) -> c. Got {sig}"):
        StateGraph(_reducer_schema(fn))


def test_managed_values_are_not_channels_and_are_computed_per_task():
    """B-3/K-1: RemainingSteps/IsLastStep are managed (keys in app.channels, not state); nodes read them."""
    from lgembed.managed import IsLastStep, RemainingSteps

    class M(TypedDict):
        x: int
        rem: RemainingSteps
        last: IsLastStep

    seen = []

    def a(s):
        seen.append(dict(s))
        return {"x": s["x"] + 1}

    g = StateGraph(M)
    g.add_node("a", a)
    g.add_edge(START, "a")
    app = g.compile()
    assert {"rem", "last"} <= set(app.channels)
    # managed keys are neither input nor output
    assert app.invoke({"x": 0, "rem": 3}, {"recursion_limit": 5}) == {"x": 1}
    assert seen == [{"x": 0, "rem": 4, "last": False}]


def test_managed_values_in_input_or_output_schema_rejected():
    """B-5: managed values in an input/output schema -> ValueError listing them."""
    from lgembed.managed import IsLastStep, RemainingSteps

    class M(TypedDict):
        x: int
        rem: RemainingSteps
        last: IsLastStep

    class MIn(TypedDict):
        x: int
        rem: RemainingSteps

    class MOut(TypedDict):
        x: int
        rem: RemainingSteps
        last: IsLastStep

    tail = " Managed channels are not permitted in Input/Output schema."
    with raises_exactly(ValueError, "Invalid managed channels detected in MIn: rem." + tail):
        StateGraph(M, input_schema=MIn)
    with raises_exactly(ValueError, "Invalid managed channels detected in MOut: rem, last." + tail):
        StateGraph(M, output_schema=MOut)
    # the state schema itself may hold managed values
    StateGraph(M)


class LogPlain(TypedDict):
    log: list


class LogAdd(TypedDict):
    log: Annotated[list, operator.add]


def _concat(a, b):
    return a + b


class LogConcat(TypedDict):
    log: Annotated[list, _concat]


class LogLambda(TypedDict):
    log: Annotated[list, lambda a, b: a + b]


def test_merge_reducer_over_lastvalue_conflicts():
    """B-4: a key already a LastValue, re-declared with a reducer -> "already exists with a different type"."""
    with raises_exactly(ValueError, "Channel 'log' already exists with a different type"):
        StateGraph(LogPlain, input_schema=LogAdd)


def test_merge_different_reducers_conflict():
    """B-4: two different reducer functions on one key conflict (node input schema merged at add_node)."""
    g = StateGraph(LogAdd)
    with raises_exactly(ValueError, "Channel 'log' already exists with a different type"):
        g.add_node("n", noop, input_schema=LogConcat)


def test_merge_lastvalue_after_reducer_is_ignored_first_wins():
    """B-4: a later LastValue for an existing key is ignored; the first (reducer) channel stays."""
    g = StateGraph(LogAdd, output_schema=LogPlain)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_edge(START, "a")
    app = g.compile()
    assert kinds(app)["log"] == "BinaryOperatorAggregate"
    assert app.invoke({"log": ["i"]}) == {"log": ["i", "a"]}


def test_merge_same_reducer_and_lambda_reducers_are_equal():
    """B-4: the same operator object is equal; any lambda reducer equals any reducer."""
    g = StateGraph(LogAdd)
    g.add_node("n", noop, input_schema=TypedDict("Other", {"log": Annotated[list, operator.add]}))
    g2 = StateGraph(LogConcat)
    g2.add_node("n", noop, input_schema=LogLambda)  # lambda vs named function: equal
    g3 = StateGraph(LogLambda)
    g3.add_node("n", noop, input_schema=LogAdd)
    assert kinds(g3.add_edge(START, "n").compile())["log"] == "BinaryOperatorAggregate"


@pytest.mark.parametrize(
    "key",
    [
        "checkpoint_id",
        "checkpoint_ns",
        "checkpoint_map",
        "configurable",
        "__interrupt__",
        "__input__",
        "__resume__",
        "__error__",
        "__pregel_send",
        "|",
        ":",
    ],
)
def test_reserved_channel_names(key):
    """B-7: reserved state keys fail at compile with "Channel name '<k>' is reserved"."""
    g = StateGraph(TypedDict("R", {key: int, "x": int}))  # construction is fine
    g.add_node("n", noop)
    g.add_edge(START, "n")
    with raises_exactly(ValueError, f"Channel name '{key}' is reserved"):
        g.compile()


def test_thread_id_is_an_allowed_channel_name():
    """B-7: `thread_id` is not reserved."""
    g = StateGraph(TypedDict("R", {"thread_id": str}))
    g.add_node("n", lambda s: {"thread_id": s["thread_id"] + "!"})
    g.add_edge(START, "n")
    assert g.compile().invoke({"thread_id": "t"}) == {"thread_id": "t!"}


def test_pregel_tasks_state_key_rejected():
    """B-7/K-1: a state key `__pregel_tasks` collides with the Send topic channel."""
    g = StateGraph(TypedDict("R", {"__pregel_tasks": int}))
    g.add_node("n", noop)
    g.add_edge(START, "n")
    with raises_exactly(ValueError, "Channel '__pregel_tasks' is reserved and cannot be used in the graph."):
        g.compile()


# --- §1.2 add_node ---------------------------------------------------------------


def test_add_node_signature_and_forms_return_builder():
    """B-10: add_node(node, action=None, *, options...) returns the builder in both forms."""
    assert param_shape(StateGraph.add_node) == [
        ("self", "POSITIONAL_OR_KEYWORD"),
        ("node", "POSITIONAL_OR_KEYWORD"),
        ("action", "POSITIONAL_OR_KEYWORD"),
        ("defer", "KEYWORD_ONLY"),
        ("metadata", "KEYWORD_ONLY"),
        ("input_schema", "KEYWORD_ONLY"),
        ("retry_policy", "KEYWORD_ONLY"),
        ("cache_policy", "KEYWORD_ONLY"),
        ("error_handler", "KEYWORD_ONLY"),
        ("destinations", "KEYWORD_ONLY"),
        ("timeout", "KEYWORD_ONLY"),
        ("trace_policy", "KEYWORD_ONLY"),
        ("kwargs", "VAR_KEYWORD"),
    ]
    g = StateGraph(S)

    def first(s):
        return {"log": ["first"]}

    assert g.add_node(first) is g
    assert g.add_node("second", lambda s: {"log": ["second"]}) is g
    app = g.add_edge(START, "first").add_edge("first", "second").compile()
    assert list(app.nodes) == ["__start__", "first", "second"]
    assert app.invoke({"x": 0}) == {"x": 0, "log": ["first", "second"]}


def test_add_node_keyword_options_accepted():
    """B-10: keyword options (defer, metadata, retry_policy list, destinations) are accepted."""
    g = StateGraph(S)
    g.add_node(
        "a",
        lambda s: {"log": ["a"]},
        metadata={"k": "v"},
        retry_policy=[RetryPolicy(max_attempts=2), RetryPolicy()],
    )
    g.add_node(
        "b", lambda s: {"log": ["b"]}, defer=True, retry_policy=RetryPolicy(), destinations=("a",)
    )
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    assert g.compile().invoke({"x": 0}) == {"x": 0, "log": ["a", "b"]}


class CallMe:
    def __call__(self, state):
        return {"log": ["called"]}


class Holder:
    def method(self, state):
        return {"log": ["method"]}


def named_fn(state):
    return {"log": ["fn"]}


def _with_k(state, k):
    return {"log": [k]}


@pytest.mark.parametrize(
    ("action", "name"),
    [
        (named_fn, "named_fn"),
        (lambda s: {"log": ["l"]}, "<lambda>"),
        (functools.partial(_with_k, k="p"), "partial"),
        (CallMe(), "CallMe"),
        (Holder().method, "method"),
    ],
    ids=["function", "lambda", "partial", "callable-instance", "bound-method"],
)
def test_add_node_name_inference(action, name):
    """B-11: inferred node name = __name__, else class name."""
    g = StateGraph(S).add_node(action)
    app = g.add_edge(START, name).compile()
    assert list(app.nodes) == ["__start__", name]
    assert len(app.invoke({"x": 0})["log"]) == 1


def test_add_node_compiled_graph_name():
    """B-11/B-32: a compiled graph added as a node is named after its `name` (default "LangGraph")."""
    inner = StateGraph(S).add_node("i", lambda s: {"log": ["i"]}).add_edge(START, "i")
    g = StateGraph(S)
    g.add_node(inner.compile())
    g.add_node(inner.compile(name="sub"))
    app = g.add_edge(START, "LangGraph").add_edge("LangGraph", "sub").compile()
    assert list(app.nodes) == ["__start__", "LangGraph", "sub"]


def test_add_node_duplicate():
    """B-12: duplicate node name."""
    g = StateGraph(S).add_node(named_fn)
    with raises_exactly(ValueError, "Node `named_fn` already present."):
        g.add_node("named_fn", noop)
    with raises_exactly(ValueError, "Node `named_fn` already present."):
        g.add_node(named_fn)


@pytest.mark.parametrize("name", [START, END])
def test_add_node_reserved_start_end(name):
    """B-12: START/END are reserved node names."""
    with raises_exactly(ValueError, f"Node `{name}` is reserved."):
        StateGraph(S).add_node(name, noop)


@pytest.mark.parametrize(
    ("name", "char"),
    [("a|b", "|"), ("a:b", ":"), ("a:b|c", "|"), ("x|y:z", "|")],
)
def test_add_node_reserved_characters_pipe_checked_before_colon(name, char):
    """B-12: '|' and ':' are rejected in node names; '|' is checked first whatever its position."""
    with raises_exactly(ValueError, f"'{char}' is a reserved character and is not allowed in the node names."):
        StateGraph(S).add_node(name, noop)


def test_add_node_errors_leave_builder_unchanged():
    """B-12: a rejected add_node adds nothing; the graph still compiles with the earlier nodes."""
    g = StateGraph(S).add_node("a", lambda s: {"log": ["a"]}).add_edge(START, "a")
    for bad in ("a", START, END, "p|q"):
        with pytest.raises(ValueError):
            g.add_node(bad, noop)
    app = g.compile()
    assert list(app.nodes) == ["__start__", "a"]


@pytest.mark.parametrize("name", ["configurable", "checkpoint_ns", "__interrupt__", "__pregel_read"])
def test_reserved_node_names_fail_at_compile(name):
    """B-12: names reserved by B-7 are accepted by add_node and rejected at compile."""
    g = StateGraph(S).add_node(name, noop).add_edge(START, name)
    with raises_exactly(ValueError, f"Node name '{name}' is reserved"):
        g.compile()


class Priv(TypedDict):
    secret: str


def test_input_schema_inferred_from_first_parameter_annotation():
    """B-13: first-param type hint = node input schema; its fields are added as (private) channels."""
    seen = []

    def w(s: S):
        return {"secret": "42", "log": ["w"]}

    def r(s: Priv):
        seen.append(s)
        return {"log": ["r:" + s["secret"]]}

    g = StateGraph(S)
    g.add_node("w", w)
    g.add_node("r", r)
    g.add_edge(START, "w")
    g.add_edge("w", "r")
    app = g.compile()
    assert "secret" in app.channels
    assert app.invoke({"x": 1}) == {"x": 1, "log": ["w", "r:42"]}
    assert seen == [{"secret": "42"}]


def test_input_schema_inferred_for_callable_instance():
    """B-13: the first parameter of `__call__` of a callable instance is used too."""
    seen = []

    class Reader:
        def __call__(self, s: Priv):
            seen.append(s)

    g = StateGraph(S)
    g.add_node("w", lambda s: {"secret": "s"})
    g.add_node("r", Reader())
    g.add_edge(START, "w")
    g.add_edge("w", "r")
    g.compile().invoke({"x": 1})
    assert seen == [{"secret": "s"}]


def test_explicit_input_schema_wins_over_annotation():
    """B-13: `input_schema=` overrides the annotation; unannotated / non-class hints give the full state."""
    seen = []

    def r(s: Priv):
        seen.append(("r", s))

    def full(s: dict):
        seen.append(("full", s))

    g = StateGraph(S)
    g.add_node("r", r, input_schema=TypedDict("OnlyX", {"x": int}))
    g.add_node("full", full)
    g.add_edge(START, "r")
    g.add_edge(START, "full")
    app = g.compile()
    assert "secret" not in app.channels
    app.invoke({"x": 3})
    assert sorted(seen, key=str) == [("full", {"x": 3, "log": []}), ("r", {"x": 3})]


def test_private_input_keys_are_not_graph_input_or_output():
    """B-13/K-5: private channels are neither accepted as graph input nor returned."""
    g = StateGraph(S)
    seen = []
    g.add_node("r", lambda s: seen.append(s), input_schema=Priv)
    g.add_edge(START, "r")
    app = g.compile()
    assert app.invoke({"x": 1, "secret": "in"}) == {"x": 1, "log": []}
    assert seen == [{}]


def cmd_node(s: S) -> Command[Literal["b", "c"]]:
    return Command(goto="c")


def union_node(s: S) -> Union[Command[Literal["b"]], dict]:
    return Command(goto="c")


def _ends_graph(node, **kw) -> StateGraph:
    g = StateGraph(S)
    g.add_node("a", node, **kw)
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_node("c", lambda s: {"log": ["c"]})
    g.add_edge(START, "a")
    return g


def test_command_literal_return_annotation_sets_ends():
    """B-14: `-> Command[Literal["b","c"]]` gives conditional edges a->b, a->c in the drawing."""
    app = _ends_graph(cmd_node).compile()
    assert edges(app) == {
        ("__start__", "a", False),
        ("a", "b", True),
        ("a", "c", True),
        ("b", "__end__", False),
        ("c", "__end__", False),
    }


def test_command_literal_inside_union_sets_ends():
    """B-14: a Command[Literal] inside a Union return annotation is found."""
    app = _ends_graph(union_node).compile()
    assert ("a", "b", True) in edges(app)
    assert ("a", "c", True) not in edges(app)


def test_destinations_override_annotation():
    """B-14: `destinations=` (tuple or dict) overrides the return annotation."""
    app = _ends_graph(cmd_node, destinations=("c",)).compile()
    assert ("a", "c", True) in edges(app)
    assert ("a", "b", True) not in edges(app)
    app = _ends_graph(noop, destinations={"b": "to b"}).compile()
    assert ("a", "b", True) in edges(app)


def test_ends_do_not_affect_execution():
    """B-14: ends never restrict execution: goto outside the declared ends still runs."""
    app = _ends_graph(union_node).compile()  # ends ('b',), goes to c
    assert app.invoke({"x": 0}) == {"x": 0, "log": ["c"]}


def test_ends_validated_as_targets():
    """B-14/B-31: declared ends must be nodes: "Found edge ending at unknown node `zz`"."""

    def bad(s: S) -> Command[Literal["b", "zz"]]:
        return Command()

    with raises_exactly(ValueError, "Found edge ending at unknown node `zz`"):
        _ends_graph(bad).compile()
    with raises_exactly(ValueError, "Found edge ending at unknown node `qq`"):
        _ends_graph(noop, destinations=("qq",)).compile()


def test_add_node_after_compile_logs_warning_and_compiled_graph_unaffected(caplog):
    """B-15: adding nodes/edges after compile() only logs a warning; the compiled graph is unchanged."""
    caplog.set_level(logging.WARNING)
    g = linear("a")
    app = g.compile()
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_edge("a", "b")
    g.add_conditional_edges("a", lambda s: END)
    assert warning_texts(caplog) == [NODE_AFTER_COMPILE, EDGE_AFTER_COMPILE, EDGE_AFTER_COMPILE]
    assert list(app.nodes) == ["__start__", "a"]
    assert app.invoke({"x": 0}) == {"x": 0, "log": ["a"]}
    # a fresh compile sees the additions
    assert g.compile().invoke({"x": 0}) == {"x": 0, "log": ["a", "b"]}


def test_add_node_after_compile_warning_precedes_validation(caplog):
    """B-15/B-12: the after-compile warning is logged even when the add_node call then fails."""
    caplog.set_level(logging.WARNING)
    g = linear("a")
    g.compile()
    with raises_exactly(ValueError, "Node `a` already present."):
        g.add_node("a", noop)
    assert warning_texts(caplog) == [NODE_AFTER_COMPILE]


def test_no_warning_before_compile(caplog):
    """B-15: building before compile logs nothing."""
    caplog.set_level(logging.WARNING)
    linear("a", "b").add_conditional_edges("b", lambda s: END)
    assert warning_texts(caplog) == []


def test_deprecated_add_node_kwargs_warn():
    """B-10: add_node's deprecated `input` and `retry` kwargs warn and still apply."""
    seen = []
    g = StateGraph(S)
    with pytest.warns(DeprecationWarning, match=exactly(
        "`input` is deprecated and will be removed. Please use `input_schema` instead."
        " Deprecated in LangGraph V0.5 to be removed in V2.0."
    )):
        g.add_node("r", lambda s: seen.append(s), input=Priv)
    with pytest.warns(DeprecationWarning, match=exactly(
        "`retry` is deprecated and will be removed. Please use `retry_policy` instead."
        " Deprecated in LangGraph V0.5 to be removed in V2.0."
    )):
        g.add_node("q", noop, retry=RetryPolicy())
    g.add_edge(START, "r")
    assert "secret" in g.compile().channels
    g.compile().invoke({"x": 1})
    assert seen == [{}]


# --- B-16 injection --------------------------------------------------------------


def _run_one(fn, **compile_kw):
    g = StateGraph(S)
    g.add_node("n", fn)
    g.add_edge(START, "n")
    return g.compile(**compile_kw)


def test_inject_config():
    """B-16: an unannotated `config` is injected; another annotation warns and is not injected."""
    seen = []

    def a(state, config):
        seen.append(config["configurable"]["user_key"])

    def b(state, config: Optional[dict] = None):  # other annotation: warns, not injected
        seen.append(config)

    _run_one(a).invoke({"x": 1}, {"configurable": {"user_key": "u1"}})
    with pytest.warns(UserWarning, match=re.escape("The 'config' parameter should be typed as ")):
        app = _run_one(b)
    app.invoke({"x": 1}, {"configurable": {"user_key": "u2"}})
    assert seen == ["u1", None]


def test_inject_config_wrong_annotation_without_default_fails_at_call():
    """B-16: a `config: dict` param is not injected, so the call lacks an argument."""
    def n(state, config: dict):
        return None

    text = (
        "The 'config' parameter should be typed as 'RunnableConfig' or "
        "'RunnableConfig | None', not '<class 'dict'>'. "
    )
    with pytest.warns(UserWarning, match=exactly(text)):
        app = _run_one(n)
    with pytest.raises(TypeError, match=re.escape("missing 1 required positional argument: 'config'")):
        app.invoke({"x": 1})


def test_inject_runtime_writer_and_keyword_only():
    """B-16: `runtime` gets the Runtime; `writer` emits custom chunks (no-op when custom mode is off)."""
    seen = []

    def n(state, *, writer, runtime: Runtime):
        seen.append(type(runtime).__name__)
        writer({"w": state["x"]})
        return {"x": state["x"] + 1}

    app = _run_one(n)
    assert list(app.stream({"x": 1}, stream_mode=["custom", "updates"])) == [
        ("custom", {"w": 1}),
        ("updates", {"n": {"x": 2}}),
    ]
    assert app.invoke({"x": 1}) == {"x": 2, "log": []}
    assert seen == ["Runtime", "Runtime"]


def test_inject_store_none_without_store():
    """B-16: `store` (BaseStore, Optional[BaseStore] or unannotated) is None when the graph has no store."""
    from lgembed.store.base import BaseStore

    seen = []

    def a(state, store: BaseStore):
        seen.append(store)

    def b(state, store: Optional[BaseStore]):
        seen.append(store)

    def c(state, store):
        seen.append(store)

    for fn in (a, b, c):
        _run_one(fn).invoke({"x": 1})
    assert seen == [None, None, None]


def test_inject_store_given_to_compile():
    """B-16: the injected store is the one passed to compile(store=...)."""
    from lgembed.store.base import BaseStore
    from lgembed.store.memory import InMemoryStore

    store = InMemoryStore()
    seen = []

    def n(state, store: BaseStore, runtime: Runtime):
        seen.append((store, runtime.store))

    _run_one(n, store=store).invoke({"x": 1})
    assert seen == [(store, store)]


def test_sync_node_timeout_rejected_at_compile():
    """B-17: timeout= on a sync node -> ValueError at compile (not at add_node)."""
    g = StateGraph(S).add_node("a", noop, timeout=1.0).add_edge(START, "a")
    with raises_exactly(ValueError, SYNC_TIMEOUT.format("a")):
        g.compile()


def test_async_node_timeout_accepted():
    """B-17: timeout= on an async node compiles."""
    async def an(state):
        return None

    StateGraph(S).add_node("an", an, timeout=1.0).add_edge(START, "an").compile()


def test_default_timeout_names_first_sync_node():
    """B-17/B-18: set_node_defaults(timeout=) applies at compile; the first sync node is named."""
    async def an(state):
        return None

    g = StateGraph(S).add_node("an", an).add_node("b", noop).add_node("c", noop).add_edge(START, "an")
    assert g.set_node_defaults(timeout=2) is g
    with raises_exactly(ValueError, SYNC_TIMEOUT.format("b")):
        g.compile()


def test_error_handler_creates_node():
    """B-18: error_handler= adds a node `__error_handler__{name}`; a default handler adds `__default_error_handler__`."""
    g = StateGraph(S).add_node("a", noop, error_handler=noop).add_edge(START, "a")
    assert list(g.compile().nodes) == ["__start__", "__error_handler__a", "a"]
    g = StateGraph(S).add_node("a", noop).add_edge(START, "a").set_node_defaults(error_handler=noop)
    assert list(g.compile().nodes) == ["__start__", "a", "__default_error_handler__"]


def test_error_handler_node_name_clash():
    """B-18: the generated handler node names must be free ("Auto-generated ... already exists.")."""
    g = StateGraph(S).add_node("__error_handler__a", noop)
    with raises_exactly(ValueError, "Auto-generated error handler node `__error_handler__a` already exists."):
        g.add_node("a", noop, error_handler=noop)
    g.add_edge(START, "__error_handler__a")
    assert list(g.compile().nodes) == ["__start__", "__error_handler__a"]  # "a" was not added
    g = StateGraph(S).add_node("__default_error_handler__", noop).add_edge(START, "__default_error_handler__")
    g.set_node_defaults(error_handler=noop)
    with raises_exactly(
        ValueError, "Auto-generated default error handler node `__default_error_handler__` already exists."
    ):
        g.compile()


# --- §1.3 edges ------------------------------------------------------------------


def test_add_edge_end_as_start():
    """B-20: END cannot be a start node."""
    with raises_exactly(ValueError, "END cannot be a start node"):
        StateGraph(S).add_edge(END, "a")


def test_add_edge_start_as_end():
    """B-20: START cannot be an end node."""
    with raises_exactly(ValueError, "START cannot be an end node"):
        StateGraph(S).add_edge("a", START)
    # the start is checked first
    with raises_exactly(ValueError, "END cannot be a start node"):
        StateGraph(S).add_edge(END, START)


def test_add_edge_does_not_check_node_existence():
    """B-20: unknown nodes are accepted by add_edge and only rejected at compile."""
    g = StateGraph(S)
    assert g.add_edge("zz", "yy") is g
    assert g.add_edge(START, "a") is g
    g.add_node("a", noop)
    with raises_exactly(ValueError, "Found edge starting at unknown node 'zz'"):
        g.compile()


def test_duplicate_edges_collapse():
    """B-20: duplicate edges collapse; the target runs once."""
    g = linear("a", "b")
    g.add_edge("a", "b")
    g.add_edge(START, "a")
    assert list(g.compile().stream({"x": 0})) == [{"a": {"log": ["a"]}}, {"b": {"log": ["b"]}}]


def test_waiting_edge_join():
    """B-21: add_edge([b, c2], d) runs d once, after both starts completed (even on paths of different length)."""
    g = StateGraph(S)
    for n in ("b", "c1", "c2", "d"):
        g.add_node(n, lambda s, _n=n: {"log": [_n]})
    g.add_edge(START, "b")
    g.add_edge(START, "c1")
    g.add_edge("c1", "c2")
    assert g.add_edge(["b", "c2"], "d") is g
    app = g.compile()
    assert app.invoke({"x": 0}) == {"x": 0, "log": ["b", "c1", "c2", "d"]}
    chunks = list(app.stream({"x": 0}))
    assert chunks[-1] == {"d": {"log": ["d"]}}
    assert [list(c)[0] for c in chunks].count("d") == 1


def test_waiting_edge_to_end_is_noop():
    """B-21: a join whose end is END adds nothing."""
    g = linear("a").add_node("b", noop).add_edge(START, "b")
    g.add_edge(["a", "b"], END)
    app = g.compile()
    assert not any(k.startswith("join:") for k in app.channels)
    assert app.invoke({"x": 0}) == {"x": 0, "log": ["a"]}


def test_waiting_edge_errors_and_order():
    """B-21: starts checked in order (END, then existence), then end START, then end existence."""
    g = StateGraph(S).add_node("a", noop)
    with raises_exactly(ValueError, "Need to add_node `b` first"):
        g.add_edge(["a", "b"], "a")
    with raises_exactly(ValueError, "END cannot be a start node"):
        g.add_edge(["a", END], "a")
    with raises_exactly(ValueError, "Need to add_node `zz` first"):
        g.add_edge(["zz", END], START)
    with raises_exactly(ValueError, "START cannot be an end node"):
        g.add_edge(["a"], START)
    with raises_exactly(ValueError, "Need to add_node `q` first"):
        g.add_edge(["a"], "q")
    # START is not a node, so it cannot start a join
    with raises_exactly(ValueError, "Need to add_node `__start__` first"):
        g.add_edge([START], "a")


def _branch_graph() -> StateGraph:
    g = StateGraph(S)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_edge(START, "a")
    return g


def route_b(s):
    return "b"


class RouteObj:
    def __call__(self, s):
        return "zz"


@pytest.mark.parametrize(
    ("path", "name"),
    [
        (route_b, "route_b"),
        (lambda s: "zz", "condition"),
        (functools.partial(route_b), "condition"),
        (RouteObj(), "condition"),
    ],
    ids=["function", "lambda", "partial", "callable-instance"],
)
def test_branch_name(path, name):
    """B-22: branch name = function __name__; lambdas (and other callables) -> "condition"."""
    g = _branch_graph()
    assert g.add_conditional_edges("a", path, {"x": "zz"}) is g
    with raises_exactly(ValueError, f"At 'a' node, '{name}' branch found unknown target 'zz'"):
        g.compile()


def test_duplicate_branch_name():
    """B-22: a second branch with the same name on the same source is rejected."""
    g = _branch_graph().add_conditional_edges("a", route_b)
    with raises_exactly(ValueError, "Branch with name `route_b` already exists for node `a`"):
        g.add_conditional_edges("a", route_b)
    # same name on another source is fine
    g.add_conditional_edges("b", route_b)


def test_duplicate_lambda_branch_message_says_none():
    """B-22: for two lambda branches the message shows the runnable's name, which is None."""
    g = _branch_graph().add_conditional_edges("a", lambda s: END)
    with raises_exactly(ValueError, "Branch with name `None` already exists for node `a`"):
        g.add_conditional_edges("a", lambda s: END)


def test_path_map_dict_list_and_none():
    """B-22: path_map as dict (label -> node), list (identity) or None (results are node names)."""
    for path, path_map in [
        (lambda s: "go", {"go": "b"}),
        (lambda s: "b", ["b"]),
        (lambda s: "b", None),
    ]:
        g = _branch_graph().add_conditional_edges("a", path, path_map)
        assert g.compile().invoke({"x": 0}) == {"x": 0, "log": ["a", "b"]}


def test_path_map_inferred_from_literal_return():
    """B-22: without path_map a `Literal[...]` return annotation is the (identity) path map."""

    def r(s) -> Literal["b", "zz"]:
        return "b"

    g = _branch_graph().add_conditional_edges("a", r)
    with raises_exactly(ValueError, "At 'a' node, 'r' branch found unknown target 'zz'"):
        g.compile()

    def ok(s) -> Literal["b", "__end__"]:
        return "b"

    app = _branch_graph().add_conditional_edges("a", ok).compile()
    assert {("a", "b", True), ("a", "__end__", True)} <= edges(app)
    assert app.invoke({"x": 0}) == {"x": 0, "log": ["a", "b"]}


def test_branch_without_map_can_go_anywhere():
    """B-22: no path_map and no Literal -> "could go anywhere": any node name is valid at compile."""
    g = _branch_graph().add_conditional_edges("a", lambda s: "zz")
    g.compile()  # no validation error


def test_add_sequence():
    """B-23: add_sequence chains nodes in order (tuple form names a node) and adds no START edge."""
    g = StateGraph(S)
    assert g.add_sequence([named_fn, ("second", lambda s: {"log": ["2"]}), CallMe()]) is g
    with raises_exactly(ValueError, "Graph must have an entrypoint: add at least one edge from START to another node"):
        g.compile()
    app = g.add_edge(START, "named_fn").compile()
    assert list(app.nodes) == ["__start__", "named_fn", "second", "CallMe"]
    assert app.invoke({"x": 0}) == {"x": 0, "log": ["fn", "2", "called"]}


def test_add_sequence_empty():
    """B-23: empty sequence."""
    with raises_exactly(ValueError, "Sequence requires at least one node."):
        StateGraph(S).add_sequence([])


DUP_SEQ = (
    "Node names must be unique: node with the name '{}' already exists. If you need to use "
    "two different runnables/callables with the same name (for example, using `lambda`), "
    "please provide them as tuples (name, runnable/callable)."
)


def test_add_sequence_duplicates():
    """B-23: two lambdas, or a name already in the graph, -> the "Node names must be unique" text."""
    with raises_exactly(ValueError, DUP_SEQ.format("<lambda>")):
        StateGraph(S).add_sequence([lambda s: None, lambda s: None])
    g = StateGraph(S).add_node("x1", noop)
    with raises_exactly(ValueError, DUP_SEQ.format("x1")):
        g.add_sequence([("x1", noop)])
    # tuples resolve the lambda clash
    g = StateGraph(S).add_sequence([("l1", lambda s: {"log": [1]}), ("l2", lambda s: {"log": [2]})])
    assert g.set_entry_point("l1").compile().invoke({"x": 0}) == {"x": 0, "log": [1, 2]}


def test_set_entry_and_finish_point():
    """B-24: set_entry_point(k) = add_edge(START, k); set_finish_point(k) = add_edge(k, END)."""
    g = StateGraph(S).add_node("a", lambda s: {"log": ["a"]})
    assert g.set_entry_point("a") is g
    assert g.set_finish_point("a") is g
    app = g.compile()
    assert edges(app) == {("__start__", "a", False), ("a", "__end__", False)}
    assert app.invoke({"x": 0}) == {"x": 0, "log": ["a"]}
    with raises_exactly(ValueError, "START cannot be an end node"):
        StateGraph(S).set_entry_point(START)
    with raises_exactly(ValueError, "END cannot be a start node"):
        StateGraph(S).set_finish_point(END)


def test_set_conditional_entry_point():
    """B-24: set_conditional_entry_point(path, map) = add_conditional_edges(START, path, map)."""
    g = StateGraph(S).add_node("a", lambda s: {"log": ["a"]}).add_node("b", lambda s: {"log": ["b"]})
    assert g.set_conditional_entry_point(lambda s: "k" if s["x"] else "j", {"k": "b", "j": "a"}) is g
    app = g.compile()
    assert app.invoke({"x": 1}) == {"x": 1, "log": ["b"]}
    assert app.invoke({"x": 0}) == {"x": 0, "log": ["a"]}
    g2 = StateGraph(S).add_node("a", noop).set_conditional_entry_point(lambda s: "a", {"a": "qq"})
    with raises_exactly(ValueError, "At '__start__' node, 'condition' branch found unknown target 'qq'"):
        g2.compile()


# --- §1.4 compile / validation ---------------------------------------------------


def test_compile_signature():
    """B-30: compile(checkpointer=None, *, cache, store, interrupt_before, interrupt_after, debug, name, transformers)."""
    assert param_shape(StateGraph.compile) == [
        ("self", "POSITIONAL_OR_KEYWORD"),
        ("checkpointer", "POSITIONAL_OR_KEYWORD"),
        ("cache", "KEYWORD_ONLY"),
        ("store", "KEYWORD_ONLY"),
        ("interrupt_before", "KEYWORD_ONLY"),
        ("interrupt_after", "KEYWORD_ONLY"),
        ("debug", "KEYWORD_ONLY"),
        ("name", "KEYWORD_ONLY"),
        ("transformers", "KEYWORD_ONLY"),
    ]


@pytest.mark.parametrize(
    ("bad", "tname"), [(object(), "object"), ("saver", "str"), ([], "list"), (2, "int")]
)
def test_compile_invalid_checkpointer(bad, tname):
    """B-30: a checkpointer that is not None/True/False/BaseCheckpointSaver -> TypeError."""
    text = (
        "Invalid checkpointer provided. Expected an instance of `BaseCheckpointSaver`, `True`, "
        f"`False`, or `None`. Received {tname}. Pass a proper saver (e.g., InMemorySaver, "
        "AsyncPostgresSaver)."
    )
    with raises_exactly(TypeError, text):
        linear("a").compile(bad)


@pytest.mark.parametrize("ok", [None, False, True, 0, 1])
def test_compile_accepted_checkpointer_flags(ok):
    """B-30: None, True and False are accepted at compile (0 and 1 too: the check is `in (None, True, False)`)."""
    linear("a").compile(checkpointer=ok)


def test_compile_checkpointer_checked_before_graph_validation():
    """B-30/B-31: the checkpointer type check precedes graph validation."""
    g = StateGraph(S).add_node("a", noop)  # no entrypoint
    with pytest.raises(TypeError, match=re.escape("Invalid checkpointer provided.")):
        g.compile(object())


def test_validation_unknown_source():
    """B-31.1: edge, branch or join source must be a node or START."""
    g = linear("a").add_edge("zz", "a")
    with raises_exactly(ValueError, "Found edge starting at unknown node 'zz'"):
        g.compile()
    g = linear("a").add_conditional_edges("yy", lambda s: END)
    with raises_exactly(ValueError, "Found edge starting at unknown node 'yy'"):
        g.compile()


def test_validation_no_entrypoint():
    """B-31.2: START must be the source of some edge or branch."""
    g = StateGraph(S).add_node("a", noop)
    with raises_exactly(ValueError, "Graph must have an entrypoint: add at least one edge from START to another node"):
        g.compile()


def test_validation_branch_unknown_target():
    """B-31.3: branch path_map targets must be nodes or END."""
    g = linear("a").add_conditional_edges("a", lambda s: "k", {"k": "qq", "e": END})
    with raises_exactly(ValueError, "At 'a' node, 'condition' branch found unknown target 'qq'"):
        g.compile()


@pytest.mark.parametrize("target", [START, None])
def test_validation_branch_target_start_or_none(target):
    """B-31.3: START (or None) as a path_map target is an unknown branch target."""
    g = linear("a").add_conditional_edges("a", lambda s: "k", {"k": target})
    with raises_exactly(ValueError, f"At 'a' node, 'condition' branch found unknown target '{target}'"):
        g.compile()


def test_validation_edge_unknown_target():
    """B-31.4: edge targets must be nodes or END."""
    g = linear("a").add_edge("a", "zz")
    with raises_exactly(ValueError, "Found edge ending at unknown node `zz`"):
        g.compile()


@pytest.mark.parametrize("which", ["interrupt_before", "interrupt_after"])
def test_validation_interrupt_nodes(which):
    """B-31.5: interrupt node names must exist ("*" is not checked)."""
    with raises_exactly(ValueError, "Interrupt node `zz` not found"):
        linear("a").compile(**{which: ["a", "zz"]})
    linear("a").compile(**{which: "*"})


def test_validation_interrupt_before_checked_before_after():
    """B-31.5: interrupt_before names are checked before interrupt_after names."""
    with raises_exactly(ValueError, "Interrupt node `zz` not found"):
        linear("a").compile(interrupt_before=["zz"], interrupt_after=["yy"])
    with raises_exactly(ValueError, "Interrupt node `yy` not found"):
        linear("a").compile(interrupt_before="*", interrupt_after=["yy"])


def test_validation_interrupt_before_with_after_star_checked_later():
    """B-31.5: with interrupt_after="*" the builder skips interrupt_before; the later graph check says "Node zz not in nodes"."""
    with raises_exactly(ValueError, "Node zz not in nodes"):
        linear("a").compile(interrupt_before=["zz"], interrupt_after="*")


def test_validation_order_source_before_entrypoint():
    """B-31: rule 1 (unknown source) is reported before rule 2 (no entrypoint)."""
    g = StateGraph(S).add_node("a", noop).add_edge("zz", "a")
    with raises_exactly(ValueError, "Found edge starting at unknown node 'zz'"):
        g.compile()


def test_validation_order_entrypoint_before_branch_target():
    """B-31: rule 2 (no entrypoint) before rule 3 (branch target)."""
    g = StateGraph(S).add_node("a", noop).add_conditional_edges("a", lambda s: "k", {"k": "qq"})
    with pytest.raises(ValueError, match=re.escape("Graph must have an entrypoint")):
        g.compile()


def test_validation_order_branch_target_before_edge_target():
    """B-31: rule 3 (branch target) before rule 4 (edge target), whatever the insertion order."""
    g = linear("a").add_edge("a", "zz").add_conditional_edges("a", lambda s: "k", {"k": "qq"})
    with raises_exactly(ValueError, "At 'a' node, 'condition' branch found unknown target 'qq'"):
        g.compile()


def test_validation_order_edge_target_before_interrupts():
    """B-31: rule 4 (edge target) before rule 5 (interrupt names)."""
    g = linear("a").add_edge("a", "zz")
    with raises_exactly(ValueError, "Found edge ending at unknown node `zz`"):
        g.compile(interrupt_before=["yy"])


def test_validation_order_interrupts_before_reserved_node_names():
    """B-31/B-12: the builder's checks (rule 5) come before the reserved-name check."""
    g = StateGraph(S).add_node("configurable", noop).add_edge(START, "configurable")
    with raises_exactly(ValueError, "Interrupt node `zz` not found"):
        g.compile(interrupt_after=["zz"])


def test_validation_order_timeout_before_reserved_channel_before_reserved_node():
    """B-17/B-7/B-12: after the builder checks: sync timeout, then reserved channel, then reserved node name."""
    R = TypedDict("R", {"checkpoint_id": int, "x": int})
    g = StateGraph(R).add_node("configurable", noop, timeout=1.0).add_edge(START, "configurable")
    with raises_exactly(ValueError, SYNC_TIMEOUT.format("configurable")):
        g.compile()
    g = StateGraph(R).add_node("configurable", noop).add_edge(START, "configurable")
    with raises_exactly(ValueError, "Channel name 'checkpoint_id' is reserved"):
        g.compile()


def test_validation_order_graph_errors_before_timeout():
    """B-31/B-17: the builder validation runs before the sync-timeout check."""
    g = StateGraph(S).add_node("a", noop, timeout=1.0)
    with pytest.raises(ValueError, match=re.escape("Graph must have an entrypoint")):
        g.compile()


def test_node_without_outgoing_edge_is_legal():
    """B-31: a node with no outgoing edge simply ends its path."""
    g = StateGraph(S).add_node("a", lambda s: {"log": ["a"]}).add_edge(START, "a")
    assert g.compile().invoke({"x": 0}) == {"x": 0, "log": ["a"]}


def test_unreachable_node_is_legal_and_never_runs():
    """B-31: unreachable nodes compile and do not run."""
    g = linear("a").add_node("island", lambda s: {"log": ["island"]}).add_edge("island", "a")
    assert g.compile().invoke({"x": 0}) == {"x": 0, "log": ["a"]}


def test_compiled_graph_name():
    """B-32: compiled graph name defaults to "LangGraph"; compile(name=...) sets it."""
    assert linear("a").compile().name == "LangGraph"
    assert linear("a").compile(name="mine").name == "mine"


def test_builder_methods_chain():
    """B-10/B-20/B-22/B-24: builder methods return the builder."""
    g = StateGraph(S)
    out = (
        g.add_node("a", lambda s: {"log": ["a"]})
        .add_node("b", lambda s: {"log": ["b"]})
        .set_entry_point("a")
        .add_edge("a", "b")
        .add_conditional_edges("b", lambda s: END)
        .set_finish_point("b")
    )
    assert out is g
    assert out.compile().invoke({"x": 0}) == {"x": 0, "log": ["a", "b"]}


# --- §3 compilation layout -------------------------------------------------------


def _o1_graph(**d_kwargs) -> StateGraph:
    g = StateGraph(S)
    g.add_node("a", lambda s: {"x": s["x"] + 1, "log": ["a"]})
    g.add_node("b", lambda s: {"log": ["b"]})
    g.add_node("c", lambda s: {"log": ["c"]})
    g.add_node("d", lambda s: None, **d_kwargs)
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("a", "c")
    g.add_edge(["b", "c"], "d")
    g.add_edge("d", END)
    return g


def test_o1_channels():
    """K-1: state channels + __start__ + branch:to:<node> + join:<starts>:<end> + __pregel_tasks (O-1)."""
    app = _o1_graph().compile()
    assert sorted(app.channels) == [
        "__pregel_tasks",
        "__start__",
        "branch:to:a",
        "branch:to:b",
        "branch:to:c",
        "branch:to:d",
        "join:b+c:d",
        "log",
        "x",
    ]
    assert kinds(app) == {
        "x": "LastValue",
        "log": "BinaryOperatorAggregate",
        "__start__": "EphemeralValue",
        "__pregel_tasks": "Topic",
        "branch:to:a": "EphemeralValue",
        "branch:to:b": "EphemeralValue",
        "branch:to:c": "EphemeralValue",
        "branch:to:d": "EphemeralValue",
        "join:b+c:d": "NamedBarrierValue",
    }
    assert app.channels["__start__"].guard is True
    assert app.channels["branch:to:a"].guard is False
    assert app.channels["join:b+c:d"].names == {"b", "c"}


def test_o1_run():
    """K-1/K-4: O-1 invoke and updates stream; the join node runs once, after b and c."""
    app = _o1_graph().compile()
    assert app.invoke({"x": 1, "log": []}) == {"x": 2, "log": ["a", "b", "c"]}
    chunks = list(app.stream({"x": 1}))
    assert chunks[0] == {"a": {"x": 2, "log": ["a"]}}
    assert sorted(chunks[1:3], key=str) == [{"b": {"log": ["b"]}}, {"c": {"log": ["c"]}}]
    assert chunks[3:] == [{"d": None}]


def test_deferred_node_channels():
    """K-1: defer=True -> branch:to:X is LastValueAfterFinish and a join into X is NamedBarrierValueAfterFinish."""
    app = _o1_graph(defer=True).compile()
    k = kinds(app)
    assert k["branch:to:d"] == "LastValueAfterFinish"
    assert k["join:b+c:d"] == "NamedBarrierValueAfterFinish"
    assert k["branch:to:a"] == "EphemeralValue"


def test_join_channel_name_keeps_start_order():
    """K-1: the join channel name joins the starts in the order given."""
    g = StateGraph(S)
    for n in ("a", "b", "c"):
        g.add_node(n, noop)
    g.add_edge(START, "a").add_edge(START, "b").add_edge(["b", "a"], "c")
    assert "join:b+a:c" in g.compile().channels


def test_branch_channels_for_every_node_including_unreachable():
    """K-1: every node gets a branch:to:<node> channel; no channel for START/END."""
    g = linear("a").add_node("island", noop)
    names = sorted(k for k in g.compile().channels if k.startswith("branch:"))
    assert names == ["branch:to:a", "branch:to:island"]


def test_start_node_first_and_hidden():
    """K-2: the hidden `__start__` node comes first; it never appears in updates."""
    app = linear("a", "b").compile()
    assert list(app.nodes) == ["__start__", "a", "b"]
    assert [list(c) for c in app.stream({"x": 0})] == [["a"], ["b"]]


def test_node_reads_only_available_channels():
    """K-3: a node's input contains only available channels; reducer channels read their default."""
    seen = []

    class XY(TypedDict):
        x: int
        y: int
        log: Annotated[list, operator.add]

    g = StateGraph(XY).add_node("n", lambda s: seen.append(dict(s))).add_edge(START, "n")
    g.compile().invoke({"x": 1})
    assert seen == [{"x": 1, "log": []}]


def test_root_node_reads_root_value():
    """K-3/K-5: a `__root__` graph node receives the bare value; output is the bare value."""
    seen = []

    def n(s):
        seen.append(s)
        return s * 10

    app = StateGraph(int).add_node("n", n).add_edge(START, "n").compile()
    assert app.invoke(3) == 30
    assert seen == [3]


def test_writer_order_command_sends_then_branch_sends_in_insertion_order():
    """K-4: a node's writers run in order: its return/Command, static edges, then routers in insertion order."""

    def run(first_r1: bool):
        g = StateGraph(S)
        g.add_node("a", lambda s: Command(goto=Send("c", "cmd")))
        g.add_node("c", lambda s: {"log": [s]})
        g.add_edge(START, "a")

        def one(s):
            return Send("c", "r1")

        def two(s):
            return Send("c", "r2")

        for r in ((one, two) if first_r1 else (two, one)):
            g.add_conditional_edges("a", r)
        return g.compile().invoke({"x": 0})["log"]

    assert run(True) == ["cmd", "r1", "r2"]
    assert run(False) == ["cmd", "r2", "r1"]
