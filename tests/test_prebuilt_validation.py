"""`lgembed.prebuilt.ValidationNode` (LangGraph's langgraph/prebuilt/tool_validator.py).

Every expected value below was first observed with LangGraph 1.2.22 + langchain-core
1.8.3 + pydantic 2.14 (the reference install), running the same program with
langchain-core messages and `@tool` (script: the scenarios of `test_reference_scenario`);
the pydantic error texts come from pydantic itself, so the version in the URL lines is
read from the installed pydantic. Tests named `test_lgembed_*` pin lgembed-only behaviour.
"""

import asyncio
import subprocess
import sys
import warnings
from typing import Optional

import pytest

pydantic = pytest.importorskip("pydantic")
from pydantic import BaseModel, field_validator  # noqa: E402

from lgembed.graph import END, START, MessagesState, StateGraph  # noqa: E402
from lgembed.messages import AIMessage, HumanMessage, ToolMessage  # noqa: E402
from lgembed.prebuilt import ValidationNode  # noqa: E402
from lgembed.tools import tool  # noqa: E402
from lgembed.warnings import LangGraphDeprecatedSinceV10  # noqa: E402

V = ".".join(pydantic.VERSION.split(".")[:2])
URL = f"    For further information visit https://errors.pydantic.dev/{V}/v/"
TAIL = "\n\nRespond after fixing all validation errors."


class SelectNumber(BaseModel):
    a: int

    @field_validator("a")
    @classmethod
    def a_must_be_meaningful(cls, v):
        if v != 37:
            msg = "Only 37 is allowed"
            raise ValueError(msg)
        return v


def pick(x: int, label: str = "none", ratio: Optional[float] = None) -> str:  # noqa: UP045 - as users write it
    """Pick something."""
    return "x"


@tool
def mul(a: int, b: int) -> int:
    """Multiply."""
    return a * b


CALLS = [
    {"name": "SelectNumber", "args": {"a": 37}, "id": "1"},
    {"name": "SelectNumber", "args": {"a": 3}, "id": "2"},
    {"name": "SelectNumber", "args": {"a": "x"}, "id": "3"},
    {"name": "pick", "args": {"x": "5", "extra": 1}, "id": "4"},
    {"name": "pick", "args": {"label": 3}, "id": "5"},
    {"name": "mul", "args": {"a": 2, "b": 3}, "id": "6"},
    {"name": "mul", "args": {"a": 2}, "id": "7"},
]

EXPECTED = [
    ("ToolMessage", '{"a":37}', "SelectNumber", "1", {}),
    (
        "ToolMessage",
        "1 validation error for SelectNumber\na\n  Value error, Only 37 is allowed "
        f"[type=value_error, input_value=3, input_type=int]\n{URL}value_error{TAIL}",
        "SelectNumber",
        "2",
        {"is_error": True},
    ),
    (
        "ToolMessage",
        "1 validation error for SelectNumber\na\n  Input should be a valid integer, unable to parse string as an "
        f"integer [type=int_parsing, input_value='x', input_type=str]\n{URL}int_parsing{TAIL}",
        "SelectNumber",
        "3",
        {"is_error": True},
    ),
    ("ToolMessage", '{"x":5,"label":"none","ratio":null}', "pick", "4", {}),
    (
        "ToolMessage",
        "2 validation errors for Validation\nx\n  Field required [type=missing, input_value={'label': 3}, "
        f"input_type=dict]\n{URL}missing\nlabel\n  Input should be a valid string [type=string_type, "
        f"input_value=3, input_type=int]\n{URL}string_type{TAIL}",
        "pick",
        "5",
        {"is_error": True},
    ),
    ("ToolMessage", '{"a":2,"b":3}', "mul", "6", {}),
    (
        "ToolMessage",
        "1 validation error for mul\nb\n  Field required [type=missing, input_value={'a': 2}, input_type=dict]\n"
        f"{URL}missing{TAIL}",
        "mul",
        "7",
        {"is_error": True},
    ),
]


def rows(messages):
    return [(type(m).__name__, m.content, m.name, m.tool_call_id, m.additional_kwargs) for m in messages]


@pytest.fixture
def node():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)
        return ValidationNode([SelectNumber, pick, mul])


def test_deprecation_warning_category_and_text():
    """LangGraph's category and first sentence; the rest says what lgembed offers."""
    with pytest.warns(LangGraphDeprecatedSinceV10) as rec:
        ValidationNode([SelectNumber])
    assert str(rec[0].message) == (
        "ValidationNode is deprecated. LangGraph 1.x points to `create_agent` from `langchain.agents` with "
        "custom tool error handling; lgembed does not ship `langchain.agents` and keeps "
        "`lgembed.prebuilt.ValidationNode` working. Deprecated in LangGraph V1.0 to be removed in V2.0."
    )
    assert rec[0].filename == __file__


def test_schemas_by_name(node):
    """Models by class name, functions by function name (model "Validation"), tools by tool name."""
    assert node.name == "validation"
    assert sorted(node.schemas_by_name) == ["SelectNumber", "mul", "pick"]
    assert [s.__name__ for s in node.schemas_by_name.values()] == ["SelectNumber", "Validation", "mul"]


def test_list_input_gives_list(node):
    out = node.invoke([HumanMessage("hi"), AIMessage("", tool_calls=CALLS)])
    assert rows(out) == EXPECTED
    assert all(isinstance(m, ToolMessage) and m.status == "success" for m in out)


def test_dict_input_gives_messages_update(node):
    out = node.invoke({"messages": [AIMessage("", tool_calls=CALLS)]})
    assert list(out) == ["messages"]
    assert rows(out["messages"]) == EXPECTED


def test_ainvoke(node):
    out = asyncio.run(node.ainvoke({"messages": [AIMessage("", tool_calls=CALLS[:2])]}))
    assert rows(out["messages"]) == EXPECTED[:2]


def test_format_error_name_tags():
    def fe(e, call, schema):
        return f"custom {type(e).__name__} {call['id']} {schema.__name__} {e.error_count()}"

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)
        n = ValidationNode([SelectNumber], format_error=fe, name="v2", tags=["t"])
    assert n.name == "v2"
    out = n.invoke({"messages": [AIMessage("", tool_calls=CALLS[:3])]})
    assert [m.content for m in out["messages"]] == [
        '{"a":37}',
        "custom ValidationError 2 SelectNumber 1",
        "custom ValidationError 3 SelectNumber 1",
    ]


@pytest.mark.parametrize(
    ("bad", "exc", "text"),
    [
        ([], IndexError, "list index out of range"),
        ({"messages": []}, ValueError, "No message found in input"),
        ({"x": 1}, ValueError, "No message found in input"),
        ([HumanMessage("h")], ValueError, "Last message is not an AIMessage"),
        (
            {"messages": [AIMessage("", tool_calls=[{"name": "nope", "args": {}, "id": "z"}])]},
            KeyError,
            "'nope'",
        ),
    ],
)
def test_bad_input(node, bad, exc, text):
    with pytest.raises(exc) as info:
        node.invoke(bad)
    assert str(info.value) == text


@pytest.mark.parametrize("bad", [42, "s"])
def test_unsupported_schema(bad):
    with pytest.warns(LangGraphDeprecatedSinceV10), pytest.raises(ValueError) as info:
        ValidationNode([bad])
    assert str(info.value) == (
        f"Unsupported input to ValidationNode. Expected BaseModel, tool or function. Got: {type(bad)}."
    )


def test_tool_with_json_schema_args_is_refused():
    @tool(
        args_schema={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]},
        description="d",
    )
    def dtool(q: str) -> str:
        return q

    with pytest.warns(LangGraphDeprecatedSinceV10), pytest.raises(ValueError) as info:
        ValidationNode([dtool])
    assert str(info.value) == (
        "Validation node only works with tools that have a pydantic BaseModel args_schema. Got dtool with "
        "args_schema: {'type': 'object', 'properties': {'q': {'type': 'string'}}, 'required': ['q']}."
    )


def test_tool_with_pydantic_args_schema():
    @tool(args_schema=SelectNumber)
    def choose(a: int) -> int:
        """Choose."""
        return a

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)
        n = ValidationNode([choose])
    assert n.schemas_by_name == {"choose": SelectNumber}


def test_in_a_graph_default_node_name():
    """`add_node(ValidationNode(...))` names the node "validation"; updates as LangGraph's."""
    builder = StateGraph(MessagesState)
    builder.add_node("model", lambda s: {"messages": [AIMessage("", tool_calls=CALLS[:2])]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)
        builder.add_node(ValidationNode([SelectNumber]))
    builder.add_edge(START, "model")
    builder.add_edge("model", "validation")
    builder.add_edge("validation", END)
    g = builder.compile()
    assert list(g.nodes) == ["__start__", "model", "validation"]
    ups = list(g.stream({"messages": [HumanMessage("hi")]}, stream_mode="updates"))
    assert [list(u) for u in ups] == [["model"], ["validation"]]
    assert [(m.content, m.additional_kwargs) for m in ups[1]["validation"]["messages"]] == [
        ('{"a":37}', {}),
        (EXPECTED[1][1], {"is_error": True}),
    ]


def test_reprompt_loop():
    """LangGraph's docstring example: re-prompt the model until its call validates."""
    answers = iter([3, 37])

    def model(state):
        return {"messages": [AIMessage("", tool_calls=[{"name": "SelectNumber", "args": {"a": next(answers)}, "id": "c"}])]}

    def should_reprompt(state):
        for msg in state["messages"][::-1]:
            if msg.type == "ai":
                return END
            if msg.additional_kwargs.get("is_error"):
                return "model"
        return END

    builder = StateGraph(MessagesState)
    builder.add_node("model", model)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)
        builder.add_node(ValidationNode([SelectNumber]))
    builder.add_edge(START, "model")
    builder.add_edge("model", "validation")
    builder.add_conditional_edges("validation", should_reprompt)
    out = builder.compile().invoke({"messages": [HumanMessage("pick")]})
    assert [(m.type, m.additional_kwargs.get("is_error")) for m in out["messages"]] == [
        ("human", None),
        ("ai", None),
        ("tool", True),
        ("ai", None),
        ("tool", None),
    ]
    assert out["messages"][-1].content == '{"a":37}'


def test_function_schema_like_create_schema_from_function():
    """Methods drop self, callbacks/run_manager are left out, *args/**kwargs are optional fields."""

    class Holder:
        def method(self, a: int, callbacks=None, run_manager=None, *rest: int, **extra: str) -> None:
            """Doc."""

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LangGraphDeprecatedSinceV10)
        n = ValidationNode([Holder().method])
    schema = n.schemas_by_name["method"]
    assert list(schema.model_fields) == ["a", "rest", "extra"]
    assert schema.model_validate({"a": "1"}).model_dump() == {"a": 1, "rest": None, "extra": None}


def test_lgembed_without_pydantic_a_clear_error():
    """pydantic is optional: importing works, constructing says what to install."""
    code = (
        "import sys, warnings; sys.modules['pydantic'] = None\n"
        "warnings.simplefilter('ignore')\n"
        "from lgembed.prebuilt import ValidationNode\n"
        "try:\n"
        "    ValidationNode([])\n"
        "except ImportError as e:\n"
        "    print(type(e).__name__, e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == (
        "ImportError ValidationNode validates tool calls with pydantic, which is not installed: install it with "
        "`pip install 'lgembed[pydantic]'` (or `pip install 'pydantic>=2'`)."
    )


def test_lgembed_import_does_not_load_pydantic():
    code = "import sys, lgembed.prebuilt; print('pydantic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
