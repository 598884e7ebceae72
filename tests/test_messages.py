"""Messages and the `add_messages` reducer (docs/BEHAVIOUR.md §13 M-1, M-2 and §16 O-15).

Every expected value below was first observed with LangGraph 1.2.22 and
langchain-core 1.8.3 (the reference install). Tests named `test_lgembed_*` pin
lgembed-only behaviour (import cost, documented deviations, interop rules).
"""

import functools
import re
import subprocess
import sys
import uuid
import warnings
from typing import Annotated, Union, get_args, get_origin, get_type_hints

import pytest

from lgembed.graph.message import REMOVE_ALL_MESSAGES, MessagesState, add_messages
from lgembed.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    FunctionMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
    convert_to_messages,
)

COERCION_DOCS = (
    "\nFor troubleshooting, visit: https://docs.langchain.com/oss/python/langchain"
    "/errors/MESSAGE_COERCION_FAILURE "
)


def _is_uuid4(value):
    return isinstance(value, str) and str(uuid.UUID(value)) == value and uuid.UUID(value).version == 4


def _summary(messages):
    return [(type(m).__name__, m.content, m.id) for m in messages]


# --- O-15: the add_messages lines -------------------------------------------------


def test_o15_append_assigns_uuid4_ids():
    """M-1 / O-15: add_messages([Human("a",id="1")], [AI("b")])."""
    out = add_messages([HumanMessage("a", id="1")], [AIMessage("b")])
    assert [(type(m).__name__, m.content) for m in out] == [("HumanMessage", "a"), ("AIMessage", "b")]
    assert out[0].id == "1"
    assert _is_uuid4(out[1].id)


def test_o15_replace_and_remove():
    """M-1 / O-15: same id replaces in place, RemoveMessage deletes."""
    left = [HumanMessage("a", id="1"), HumanMessage("b", id="2")]
    out = add_messages(left, [HumanMessage("a2", id="1"), RemoveMessage(id="2")])
    assert [(m.content, m.id) for m in out] == [("a2", "1")]


def test_o15_coercion():
    """M-1 / O-15: dicts, (role, content) tuples and strings become messages."""
    out = add_messages(
        [{"role": "user", "content": "a"}],
        [("user", "hi"), {"role": "assistant", "content": "yo"}, "plain"],
    )
    assert [(type(m).__name__, m.content) for m in out] == [
        ("HumanMessage", "a"),
        ("HumanMessage", "hi"),
        ("AIMessage", "yo"),
        ("HumanMessage", "plain"),
    ]
    assert all(_is_uuid4(m.id) for m in out)


def test_o15_remove_all():
    """M-1 / O-15: RemoveMessage(id=REMOVE_ALL_MESSAGES) keeps only what follows it."""
    out = add_messages(
        [HumanMessage("a", id="1")],
        [HumanMessage("b", id="2"), RemoveMessage(id=REMOVE_ALL_MESSAGES), HumanMessage("z", id="9")],
    )
    assert [(m.content, m.id) for m in out] == [("z", "9")]
    assert REMOVE_ALL_MESSAGES == "__remove_all__"


def test_o15_remove_missing_id_raises():
    """M-1 / O-15: deleting an unknown id."""
    with pytest.raises(
        ValueError, match=re.escape("Attempting to delete a message with an ID that doesn't exist ('zz')")
    ):
        add_messages([HumanMessage("a", id="1")], [RemoveMessage(id="zz")])


# --- M-1: merge rules -------------------------------------------------------------


def test_m1_ids_assigned_in_place_on_both_sides():
    """M-1: missing ids get str(uuid4()) on the caller's objects; the result is a new list."""
    left = [HumanMessage("a")]
    right = HumanMessage("b")
    out = add_messages(left, right)
    assert _is_uuid4(left[0].id) and _is_uuid4(right.id)
    assert out[0] is left[0] and out[1] is right
    assert out is not left
    assert left == [out[0]]


def test_m1_single_message_on_either_side():
    """M-1: a single (non-list) value on either side is a one-item list."""
    out = add_messages(HumanMessage("a", id="1"), AIMessage("b", id="2"))
    assert _summary(out) == [("HumanMessage", "a", "1"), ("AIMessage", "b", "2")]
    out = add_messages("hi", "yo")
    assert [(type(m).__name__, m.content) for m in out] == [("HumanMessage", "hi"), ("HumanMessage", "yo")]


def test_m1_tuple_left_is_one_message():
    """M-1: only a list is a list; a tuple is one (role, content) message."""
    out = add_messages(("user", "hi"), [])
    assert [(type(m).__name__, m.content) for m in out] == [("HumanMessage", "hi")]


def test_m1_empty_lists():
    """M-1: two empty lists merge to an empty list."""
    assert add_messages([], []) == []


@pytest.mark.parametrize(
    ("right", "expected"),
    [
        # remove then re-add the same id: the new message replaces the old one
        ([RemoveMessage(id="1"), HumanMessage("a3", id="1")], [("HumanMessage", "a3", "1")]),
        # replace then remove: removed
        ([HumanMessage("a3", id="1"), RemoveMessage(id="1")], []),
        # append then replace the appended message in place
        (
            [HumanMessage("n", id="2"), AIMessage("n2", id="2")],
            [("HumanMessage", "a", "1"), ("AIMessage", "n2", "2")],
        ),
        # append then remove it
        ([HumanMessage("n", id="2"), RemoveMessage(id="2")], [("HumanMessage", "a", "1")]),
        # a remove given as a dict
        ([{"type": "remove", "id": "1", "content": ""}], []),
    ],
)
def test_m1_merge_sequences(right, expected):
    """M-1: merge order of replace/remove/append within one update."""
    assert _summary(add_messages([HumanMessage("a", id="1")], right)) == expected


def test_m1_duplicate_ids_in_left_replace_the_last():
    """M-1: the id index is built from left; a duplicate id maps to its last position."""
    left = [HumanMessage("a", id="1"), HumanMessage("b", id="1")]
    out = add_messages(left, [HumanMessage("c", id="1")])
    assert _summary(out) == [("HumanMessage", "a", "1"), ("HumanMessage", "c", "1")]


def test_m1_dict_roles():
    """M-1: dict roles user/assistant/system/developer/tool/function and their fields."""
    out = add_messages(
        [{"role": "user", "content": "u", "id": "1"}],
        [
            {"role": "assistant", "content": "a", "id": "2"},
            {"type": "system", "content": "s", "id": "3"},
            {"role": "developer", "content": "d", "id": "4"},
            {"role": "tool", "content": "t", "tool_call_id": "c1", "id": "5", "status": "error", "artifact": {"x": 1}},
            {"role": "function", "content": "f", "name": "fn", "id": "6"},
        ],
    )
    assert repr(out) == (
        "[HumanMessage(content='u', additional_kwargs={}, response_metadata={}, id='1'), "
        "AIMessage(content='a', additional_kwargs={}, response_metadata={}, id='2', tool_calls=[], invalid_tool_calls=[]), "
        "SystemMessage(content='s', additional_kwargs={}, response_metadata={}, id='3'), "
        "SystemMessage(content='d', additional_kwargs={'__openai_role__': 'developer'}, response_metadata={}, id='4'), "
        "ToolMessage(content='t', id='5', tool_call_id='c1', artifact={'x': 1}, status='error'), "
        "FunctionMessage(content='f', additional_kwargs={}, response_metadata={}, name='fn', id='6')]"
    )


def test_m1_dict_extra_keys():
    """M-1: unknown keys -> additional_kwargs (nested ones merged), None content -> ''."""
    out = add_messages(
        [],
        [
            {
                "role": "user",
                "content": None,
                "id": "1",
                "foo": 1,
                "response_metadata": {"r": 1},
                "additional_kwargs": {"z": 2},
                "name": "bob",
                "example": True,
            }
        ],
    )
    assert repr(out) == (
        "[HumanMessage(content='', additional_kwargs={'foo': 1, 'z': 2}, response_metadata={'r': 1}, "
        "name='bob', id='1', example=True)]"
    )


def test_m1_dict_tool_calls_openai_and_langchain_format():
    """M-1: tool_calls in a dict may use OpenAI's {"function": {...}} form."""
    out = add_messages(
        [],
        [
            {
                "role": "assistant",
                "content": "",
                "id": "1",
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1}'}},
                    {"name": "x", "args": {}, "id": "c2"},
                ],
            }
        ],
    )
    assert out[0].tool_calls == [
        {"name": "add", "args": {"a": 1}, "id": "c1", "type": "tool_call"},
        {"name": "x", "args": {}, "id": "c2", "type": "tool_call"},
    ]


def test_m1_tuple_roles_and_list_pairs():
    """M-1: (role, content) with human/user/ai/assistant/system, and a 2-item list."""
    out = add_messages(
        [("user", "hi")], [("ai", "yo"), ("human", "h"), ("assistant", "a"), ("system", "s"), ["user", "listform"]]
    )
    assert [(type(m).__name__, m.content) for m in out] == [
        ("HumanMessage", "hi"),
        ("AIMessage", "yo"),
        ("HumanMessage", "h"),
        ("AIMessage", "a"),
        ("SystemMessage", "s"),
        ("HumanMessage", "listform"),
    ]


def test_m1_numeric_id_becomes_str():
    """M-1: message ids are coerced to str."""
    out = add_messages([], [{"role": "user", "content": "x", "id": 5}])
    assert out[0].id == "5"


@pytest.mark.parametrize(
    ("item", "exc", "text"),
    [
        (
            ("robot", "x"),
            ValueError,
            "Unexpected message type: 'robot'. Use one of 'human', 'user', 'ai', 'assistant', "
            "'function', 'tool', 'system', or 'developer'." + COERCION_DOCS,
        ),
        (
            {"content": "x"},
            ValueError,
            "Message dict must contain 'role' and 'content' keys, got {'content': 'x'}" + COERCION_DOCS,
        ),
        (
            {"role": "user"},
            ValueError,
            "Message dict must contain 'role' and 'content' keys, got {'role': 'user'}" + COERCION_DOCS,
        ),
        (("a", "b", "c"), NotImplementedError, "Message as a sequence must be (role string, template)"),
        (5, NotImplementedError, "Unsupported message type: <class 'int'>" + COERCION_DOCS),
        (None, NotImplementedError, "Unsupported message type: <class 'NoneType'>" + COERCION_DOCS),
    ],
)
def test_m1_coercion_errors(item, exc, text):
    """M-1: langchain-core's coercion errors, texts included."""
    with pytest.raises(exc, match=re.escape(text) + "$"):
        add_messages([], [item])


def test_m1_tool_dict_without_tool_call_id():
    """M-1: a tool message without tool_call_id fails with KeyError('tool_call_id')."""
    with pytest.raises(KeyError, match="tool_call_id"):
        add_messages([], [{"role": "tool", "content": "x"}])


@pytest.mark.parametrize(
    ("left", "right", "named"),
    [
        ([HumanMessage("a")], None, "left"),
        (None, [HumanMessage("a")], "right"),
        (None, [], "right"),
        # LangGraph tests truthiness: an empty left is reported as 'right'
        ([], None, "right"),
        ("", None, "right"),
    ],
)
def test_m1_one_argument_raises(left, right, named):
    """M-1: calling with only one side."""
    text = f"Must specify non-null arguments for both 'left' and 'right'. Only received: '{named}'."
    with pytest.raises(ValueError, match=re.escape(text)):
        add_messages(left, right)


def test_m1_one_argument_by_keyword_raises():
    """M-1: add_messages(left=...) alone."""
    with pytest.raises(ValueError, match=re.escape("Only received: 'left'.")):
        add_messages(left=[HumanMessage("a")])


def test_m1_no_argument_returns_partial():
    """M-1: add_messages() / add_messages(format=...) return the reducer as a partial."""
    reducer = add_messages()
    assert isinstance(reducer, functools.partial)
    assert reducer.keywords == {}
    assert "function add_messages" in repr(reducer)
    assert _summary(reducer([HumanMessage("a", id="1")], [HumanMessage("b", id="2")])) == [
        ("HumanMessage", "a", "1"),
        ("HumanMessage", "b", "2"),
    ]
    bound = add_messages(format="langchain-openai")
    assert isinstance(bound, functools.partial)
    assert bound.keywords == {"format": "langchain-openai"}


def test_m1_unknown_format_raises_after_merge():
    """M-1: an unknown format is rejected, but only on the merge path (not after REMOVE_ALL)."""
    with pytest.raises(ValueError, match=re.escape("Unrecognized format='bogus'. Expected one of 'langchain-openai', None.")):
        add_messages([HumanMessage("a", id="1")], [], format="bogus")
    assert add_messages([HumanMessage("a", id="1")], [RemoveMessage(id=REMOVE_ALL_MESSAGES)], format="bogus") == []


# --- M-2 --------------------------------------------------------------------------


def test_m2_messages_state():
    """M-2: MessagesState = TypedDict(messages: Annotated[list[AnyMessage], add_messages])."""
    hints = get_type_hints(MessagesState, include_extras=True)
    assert list(hints) == ["messages"]
    ann = hints["messages"]
    assert get_origin(ann) is Annotated
    inner, reducer = get_args(ann)
    assert reducer is add_messages
    assert get_origin(inner) is list and get_args(inner) == (AnyMessage,)
    assert MessagesState.__required_keys__ == frozenset({"messages"})


def test_lgembed_any_message_members():
    """M-2: AnyMessage is the union of lgembed's concrete message classes (not RemoveMessage;
    langchain-core's also lists ChatMessage and the chunk classes, which lgembed has not)."""
    assert get_origin(AnyMessage) is Union
    assert set(get_args(AnyMessage)) == {AIMessage, HumanMessage, SystemMessage, FunctionMessage, ToolMessage}


# --- message classes (langchain-core's shapes) -------------------------------------


@pytest.mark.parametrize(
    ("make", "text"),
    [
        (lambda: HumanMessage("hi", id="1"), "HumanMessage(content='hi', additional_kwargs={}, response_metadata={}, id='1')"),
        (
            lambda: HumanMessage("hi", name="n", id="1", example=True),
            "HumanMessage(content='hi', additional_kwargs={}, response_metadata={}, name='n', id='1', example=True)",
        ),
        (
            lambda: AIMessage("hi"),
            "AIMessage(content='hi', additional_kwargs={}, response_metadata={}, tool_calls=[], invalid_tool_calls=[])",
        ),
        (
            lambda: AIMessage(
                "",
                tool_calls=[{"name": "add", "args": {"a": 1}, "id": "t1"}],
                usage_metadata={"input_tokens": 1, "output_tokens": 2, "total_tokens": 3},
            ),
            "AIMessage(content='', additional_kwargs={}, response_metadata={}, tool_calls=[{'name': 'add', "
            "'args': {'a': 1}, 'id': 't1', 'type': 'tool_call'}], invalid_tool_calls=[], usage_metadata="
            "{'input_tokens': 1, 'output_tokens': 2, 'total_tokens': 3})",
        ),
        (lambda: SystemMessage("s"), "SystemMessage(content='s', additional_kwargs={}, response_metadata={})"),
        (lambda: ToolMessage("r", tool_call_id="t1"), "ToolMessage(content='r', tool_call_id='t1')"),
        (
            lambda: ToolMessage("r", tool_call_id="t1", status="error", artifact=[1], name="add"),
            "ToolMessage(content='r', name='add', tool_call_id='t1', artifact=[1], status='error')",
        ),
        (lambda: RemoveMessage(id="x"), "RemoveMessage(content='', additional_kwargs={}, response_metadata={}, id='x')"),
        (
            lambda: RemoveMessage("x", name="n"),
            "RemoveMessage(content='', additional_kwargs={}, response_metadata={}, name='n', id='x')",
        ),
        (
            lambda: HumanMessage(content=["a", {"type": "text", "text": "b"}]),
            "HumanMessage(content=['a', {'type': 'text', 'text': 'b'}], additional_kwargs={}, response_metadata={})",
        ),
        (lambda: HumanMessage(("a", "b")), "HumanMessage(content=['a', 'b'], additional_kwargs={}, response_metadata={})"),
        (lambda: HumanMessage("x", id=5), "HumanMessage(content='x', additional_kwargs={}, response_metadata={}, id='5')"),
        (lambda: HumanMessage("x", type="human"), "HumanMessage(content='x', additional_kwargs={}, response_metadata={})"),
        (
            lambda: HumanMessage(content_blocks=[{"type": "text", "text": "x"}]),
            "HumanMessage(content=[{'type': 'text', 'text': 'x'}], additional_kwargs={}, response_metadata={})",
        ),
        (lambda: ToolMessage(5, tool_call_id=1), "ToolMessage(content='5', tool_call_id='1')"),
        (lambda: ToolMessage([1, "a", {"k": 1}], tool_call_id=1.5), "ToolMessage(content=['1', 'a', {'k': 1}], tool_call_id='1.5')"),
        (lambda: ToolMessage(("a", 2), tool_call_id="x"), "ToolMessage(content=['a', '2'], tool_call_id='x')"),
        (lambda: ToolMessage(None, tool_call_id="x"), "ToolMessage(content='None', tool_call_id='x')"),
        (
            lambda: AIMessage("", tool_calls=[{"name": "a", "args": {}, "id": "1", "type": "tool_call", "extras": {"q": 1}}]),
            "AIMessage(content='', additional_kwargs={}, response_metadata={}, tool_calls=[{'name': 'a', 'args': {}, "
            "'id': '1', 'type': 'tool_call'}], invalid_tool_calls=[])",
        ),
        (
            lambda: AIMessage("", invalid_tool_calls=[{"name": "a"}]),
            "AIMessage(content='', additional_kwargs={}, response_metadata={}, tool_calls=[], invalid_tool_calls="
            "[{'type': 'invalid_tool_call', 'id': None, 'name': 'a', 'args': None, 'error': None}])",
        ),
        (
            lambda: AIMessage(
                "",
                additional_kwargs={
                    "tool_calls": [
                        {"id": "c1", "function": {"name": "f", "arguments": '{"a": 1}'}, "type": "function"},
                        {"id": "c2", "function": {"name": "g", "arguments": "{bad"}, "type": "function"},
                    ]
                },
            ),
            "AIMessage(content='', additional_kwargs={'tool_calls': [{'id': 'c1', 'function': {'name': 'f', "
            "'arguments': '{\"a\": 1}'}, 'type': 'function'}, {'id': 'c2', 'function': {'name': 'g', 'arguments': "
            "'{bad'}, 'type': 'function'}]}, response_metadata={}, tool_calls=[{'name': 'f', 'args': {'a': 1}, "
            "'id': 'c1', 'type': 'tool_call'}], invalid_tool_calls=[{'type': 'invalid_tool_call', 'id': 'c2', "
            "'name': 'g', 'args': '{bad', 'error': None}])",
        ),
    ],
)
def test_message_reprs(make, text):
    """Message constructors and reprs match langchain-core's (M-1 outputs print like this)."""
    assert repr(make()) == text


def test_message_str_and_model_dump():
    """`str()` is the repr's field list; model_dump lists fields then extras."""
    m = HumanMessage("x", id="1", foo=2)
    assert str(HumanMessage("x", id="1")) == "content='x' additional_kwargs={} response_metadata={} id='1'"
    assert m.model_dump() == {
        "content": "x",
        "additional_kwargs": {},
        "response_metadata": {},
        "type": "human",
        "name": None,
        "id": "1",
        "foo": 2,
    }
    assert list(m.model_dump()) == ["content", "additional_kwargs", "response_metadata", "type", "name", "id", "foo"]
    assert list(AIMessage("x").model_dump())[-3:] == ["tool_calls", "invalid_tool_calls", "usage_metadata"]
    assert list(ToolMessage("x", tool_call_id="1").model_dump())[-3:] == ["tool_call_id", "artifact", "status"]
    assert m.foo == 2


def test_message_equality_and_hash():
    """Equality compares class and fields (extras included); messages are unhashable."""
    m = HumanMessage("x", id="1", foo=2)
    assert m == HumanMessage("x", id="1", foo=2)
    assert m != HumanMessage("x", id="1", foo=3)
    assert m != HumanMessage("x", id="1")
    assert HumanMessage("hi") != AIMessage("hi")
    assert HumanMessage("hi") == HumanMessage(content="hi", additional_kwargs={})
    assert HumanMessage("x") != {"content": "x"}
    with pytest.raises(TypeError):
        hash(HumanMessage("x"))


def test_message_attribute_assignment():
    """Fields and extra attributes can be assigned (no validation, like pydantic models)."""
    m = HumanMessage("x")
    m.id = 5
    m.bar = 1
    assert repr(m) == "HumanMessage(content='x', additional_kwargs={}, response_metadata={}, id=5, bar=1)"
    assert HumanMessage("x").model_copy(update={"content": "y"}).content == "y"


def test_message_types():
    """`.type` of each message class."""
    made = [
        HumanMessage("x"),
        AIMessage("x"),
        SystemMessage("x"),
        ToolMessage("x", tool_call_id="1"),
        RemoveMessage("1"),
        FunctionMessage("x", name="f"),
    ]
    assert [m.type for m in made] == [
        "human",
        "ai",
        "system",
        "tool",
        "remove",
        "function",
    ]
    assert all(issubclass(c, BaseMessage) for c in (HumanMessage, AIMessage, ToolMessage, RemoveMessage))


@pytest.mark.parametrize(
    ("make", "exc", "text"),
    [
        (lambda: ToolMessage("x"), KeyError, "'tool_call_id'"),
        (
            lambda: AIMessage("", tool_calls=[{"name": "a", "args": {}}]),
            TypeError,
            "tool_call() missing 1 required keyword-only argument: 'id'",
        ),
        (
            lambda: AIMessage("", tool_calls=[{"name": "a", "args": {}, "id": "1", "index": 0}]),
            TypeError,
            "tool_call() got an unexpected keyword argument 'index'",
        ),
        (
            lambda: AIMessage("", tool_calls=[{"name": "a", "id": "1"}]),
            TypeError,
            "tool_call() missing 1 required keyword-only argument: 'args'",
        ),
        (lambda: RemoveMessage(id="x", content="y"), ValueError, "RemoveMessage does not support 'content' field."),
        (lambda: RemoveMessage(), TypeError, "missing 1 required positional argument: 'id'"),
    ],
)
def test_message_constructor_errors(make, exc, text):
    """Constructor errors that langchain-core raises with the same class and text."""
    with pytest.raises(exc, match=re.escape(text)):
        make()


@pytest.mark.parametrize(
    "make",
    [
        lambda: HumanMessage(),
        lambda: HumanMessage(5),
        lambda: HumanMessage("x", type="ai"),
        lambda: ToolMessage("x", tool_call_id="1", status="bad"),
        lambda: FunctionMessage("x"),
    ],
)
def test_lgembed_validation_errors_are_value_errors(make):
    """Deviation: where langchain-core raises pydantic's ValidationError (a ValueError
    subclass), lgembed raises a plain ValueError with its own text."""
    with pytest.raises(ValueError):
        make()


def test_message_text_and_pretty_repr():
    """`.text` (property, also callable) and pretty_repr layouts."""
    assert AIMessage("x").text == "x"
    assert AIMessage("x").text() == "x"
    assert AIMessage(["a", {"type": "text", "text": "b"}, {"type": "image"}]).text == "ab"
    assert AIMessage("hi", tool_calls=[{"name": "f", "args": {"a": 1}, "id": "1"}], name="bot").pretty_repr() == (
        "================================== Ai Message ==================================\n"
        "Name: bot\n\nhi\nTool Calls:\n  f (1)\n Call ID: 1\n  Args:\n    a: 1"
    )
    assert ToolMessage("r", tool_call_id="1", name="f").pretty_repr() == (
        "================================= Tool Message =================================\nName: f\n\nr"
    )
    assert HumanMessage("h").pretty_repr() == (
        "================================ Human Message =================================\n\nh"
    )


def test_convert_to_messages_keeps_messages():
    """The coercion helper returns message objects unchanged."""
    m = HumanMessage("a")
    out = convert_to_messages([m, "b", ("ai", "c")])
    assert out[0] is m
    assert [(type(x).__name__, x.content) for x in out] == [("HumanMessage", "a"), ("HumanMessage", "b"), ("AIMessage", "c")]


# --- lgembed-only -----------------------------------------------------------------


def test_lgembed_import_is_light():
    """`import lgembed.messages` pulls in no pydantic, langchain_core, msgpack, uuid or json."""
    code = (
        "import sys, lgembed.messages; "
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "('pydantic', 'langchain_core', 'msgpack', 'uuid', 'json', 'lmdb')]; "
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_lgembed_messages_without_langchain_core_are_lgembed_classes():
    """Rule 2/3 of lgembed.graph.message: without langchain-core, coercion gives lgembed classes."""
    if "langchain_core.messages" in sys.modules:
        pytest.skip("langchain-core is imported in this process")
    out = add_messages([], [{"role": "user", "content": "x"}, ("ai", "y"), "z"])
    assert all(type(m).__module__ == "lgembed.messages" for m in out)


def test_lgembed_openai_format_without_langchain_core_warns():
    """Deviation: format='langchain-openai' needs langchain-core imported by the program."""
    if "langchain_core.messages" in sys.modules:
        pytest.skip("langchain-core is imported in this process")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = add_messages([HumanMessage("a", id="1")], [], format="langchain-openai")
    assert _summary(out) == [("HumanMessage", "a", "1")]
    assert "format='langchain-openai' needs langchain-core" in str(caught[0].message)


# --- langchain-core interop (runs only where langchain-core is installed) ---------


@pytest.fixture
def lc():
    return pytest.importorskip("langchain_core.messages")


def test_lgembed_lc_messages_kept_and_dicts_coerced_to_lc(lc):
    """Rule 1: with langchain-core messages in the history, new dicts become langchain-core messages."""
    left = [lc.HumanMessage("a", id="1")]
    out = add_messages(left, [{"role": "assistant", "content": "x"}, ("user", "u"), "s"])
    assert out[0] is left[0]
    assert [type(m) for m in out] == [lc.HumanMessage, lc.AIMessage, lc.HumanMessage, lc.HumanMessage]
    assert all(m.id for m in out)


def test_lgembed_lgembed_history_stays_lgembed_with_lc_imported(lc):
    """Rule 2: an lgembed history keeps coercing to lgembed classes even with langchain-core loaded."""
    out = add_messages([HumanMessage("a", id="1")], [{"role": "assistant", "content": "x"}])
    assert [type(m) for m in out] == [HumanMessage, AIMessage]


def test_lgembed_only_dicts_with_lc_imported_become_lc(lc):
    """Rule 3: no message objects at all and langchain-core imported -> langchain-core classes."""
    out = add_messages([], [{"role": "assistant", "content": "x"}])
    assert type(out[0]) is lc.AIMessage


def test_lgembed_lc_chunk_becomes_message_and_mixed_remove(lc):
    """M-1: chunks become full messages; RemoveMessage works across both kinds."""
    out = add_messages([HumanMessage("a", id="1")], [lc.AIMessageChunk("chunk", id="2"), lc.RemoveMessage(id="1")])
    assert [(type(m), m.content, m.id) for m in out] == [(lc.AIMessage, "chunk", "2")]
    out = add_messages([lc.HumanMessage("a", id="1")], [RemoveMessage(id="1"), AIMessage("z", id="3")])
    assert [(type(m), m.id) for m in out] == [(AIMessage, "3")]


def test_lgembed_lc_coercion_errors_are_langchain_core_s(lc):
    """Coercion into langchain-core classes uses langchain-core itself (same texts)."""
    with pytest.raises(ValueError, match=re.escape("Unexpected message type: 'robot'.")):
        add_messages([lc.HumanMessage("a")], [("robot", "x")])


def test_lgembed_openai_format_with_lc(lc):
    """M-1 format='langchain-openai': lgembed messages are converted, then formatted by langchain-core."""
    out = add_messages(
        [AIMessage("", id="a", tool_calls=[{"name": "f", "args": {}, "id": "c"}])],
        [ToolMessage("r", tool_call_id="c", id="t")],
        format="langchain-openai",
    )
    assert repr(out) == (
        "[AIMessage(content='', additional_kwargs={}, response_metadata={}, tool_calls=[{'name': 'f', "
        "'args': {}, 'id': 'c', 'type': 'tool_call'}], invalid_tool_calls=[]), ToolMessage(content='r', tool_call_id='c')]"
    )
    assert [type(m) for m in out] == [lc.AIMessage, lc.ToolMessage]


def test_add_messages_append_paths_match_the_general_merge():
    # the append shortcut (all ids of `left` set) must give what the by-id merge gives
    from lgembed.graph.message import add_messages
    from lgembed.messages import AIMessage, HumanMessage, RemoveMessage

    left = [HumanMessage("a", id="1"), AIMessage("b", id="2")]
    # fresh ids: appended, ids assigned in place, a new list
    new = [AIMessage("c"), HumanMessage("d")]
    out = add_messages(left, new)
    assert [m.content for m in out] == ["a", "b", "c", "d"] and out is not left
    assert all(m.id for m in new) and new[0].id != new[1].id
    # given ids not in left: appended
    out = add_messages(left, [AIMessage("e", id="3")])
    assert [(m.id, m.content) for m in out] == [("1", "a"), ("2", "b"), ("3", "e")]
    # an id of left: replaced in place
    out = add_messages(left, [AIMessage("B", id="2"), HumanMessage("f", id="4")])
    assert [(m.id, m.content) for m in out] == [("1", "a"), ("2", "B"), ("4", "f")]
    # the same new id twice in right: the second replaces the first
    out = add_messages(left, [AIMessage("g", id="5"), AIMessage("h", id="5")])
    assert [(m.id, m.content) for m in out] == [("1", "a"), ("2", "b"), ("5", "h")]
    # removal, and a removal of an unknown id
    out = add_messages(left, [RemoveMessage(id="1")])
    assert [m.id for m in out] == ["2"]
    with pytest.raises(ValueError, match="Attempting to delete a message with an ID that doesn't exist \\('9'\\)"):
        add_messages(left, [AIMessage("x"), RemoveMessage(id="9")])
    # a left message without an id gets one too
    bare = HumanMessage("z")
    out = add_messages([bare], [AIMessage("y")])
    assert bare.id and [m.content for m in out] == ["z", "y"]
    # a single message, dicts and format checks still go through
    assert [m.content for m in add_messages(left, AIMessage("s"))][-1] == "s"
    assert add_messages(left, {"role": "user", "content": "u"})[-1].type == "human"
    with pytest.raises(ValueError, match="Unrecognized format='x'"):
        add_messages(left, [AIMessage("q")], format="x")


def test_add_messages_turns_a_chunk_into_the_message_it_completes():
    """As LangGraph's add_messages (message_chunk_to_message): a returned AIMessageChunk is
    stored as an AIMessage, whether appended or replacing by id."""
    from lgembed.messages import AIMessageChunk

    out = add_messages([HumanMessage("hi", id="1")], [AIMessageChunk(content="a", id="2")])
    assert [type(m) for m in out] == [HumanMessage, AIMessage] and out[1].content == "a"
    out = add_messages([HumanMessage("hi", id="1")], AIMessageChunk(content="b", id="1"))
    assert [type(m) for m in out] == [AIMessage] and out[0].content == "b"


# --- lgembed: the memo of recent merges (lgembed.graph.message._RECENT) -------------------
# A merge remembers its result; when that list comes back as `left` unchanged, its
# coercion scan and id pass are skipped. A list changed in place since (an element
# replaced, appended, removed) must be merged exactly as an unknown list would be.


def _history():
    out = add_messages([HumanMessage("a")], [AIMessage("b")])
    return add_messages(out, [ToolMessage("c", tool_call_id="1")])


def test_lgembed_memo_history_with_a_replaced_element_is_coerced_again():
    history = _history()
    history[1] = ("ai", "replaced")  # a tuple in place of a message: must be coerced
    out = add_messages(history, [HumanMessage("d")])
    assert [type(m).__name__ for m in out] == ["HumanMessage", "AIMessage", "ToolMessage", "HumanMessage"]
    assert out[1].content == "replaced" and _is_uuid4(out[1].id)


def test_lgembed_memo_history_with_an_appended_message_without_id_gets_one():
    history = _history()
    extra = HumanMessage("x")
    history.append(extra)
    out = add_messages(history, [HumanMessage("d")])
    assert out[-2] is extra and _is_uuid4(extra.id)
    assert len({m.id for m in out}) == 5


def test_lgembed_memo_replacing_a_remembered_message_by_id():
    history = _history()
    again = add_messages(history, [AIMessage("b2", id=history[1].id)])
    assert _summary(again) == [
        ("HumanMessage", "a", history[0].id), ("AIMessage", "b2", history[1].id), ("ToolMessage", "c", history[2].id)
    ]
    # and a message removed from the list in place is no longer there to replace
    del history[1]
    out = add_messages(history, [AIMessage("b3", id=again[1].id)])
    assert [m.content for m in out] == ["a", "c", "b3"]


def test_lgembed_memo_same_append_twice_gives_equal_new_lists():
    history = _history()
    update = [HumanMessage("d")]
    first = add_messages(history, update)  # a router's fresh read
    second = add_messages(history, update)  # the step's apply
    assert first == second and first is not second and first is not history
    assert _summary(second)[-1] == ("HumanMessage", "d", update[0].id)
    # the same update list with a message replaced in place is merged afresh
    update[0] = HumanMessage("e", id=history[0].id)
    third = add_messages(history, update)
    assert [m.content for m in third] == ["e", "b", "c"]


def test_lgembed_new_ids_are_distinct_uuid4s():
    from lgembed.graph.message import _new_id

    ids = [_new_id() for _ in range(1000)]
    assert len(set(ids)) == 1000 and all(_is_uuid4(i) for i in ids)
    assert {i[19] for i in ids} == set("89ab")  # the RFC 4122 variant, all four digits seen
