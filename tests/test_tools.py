"""`lgembed.tools`: the `@tool` decorator, `Tool.invoke` validation and output formatting.

These are the tool semantics LangGraph's ToolNode relies on (docs/BEHAVIOUR.md §13 M-3, M-4;
§16 O-15). Every expected value was first observed with langchain-core 1.8.3 +
pydantic 2.14 (the reference install), on the same functions written with
`langchain_core.tools.tool`. Tests named `test_lgembed_*` pin lgembed-only behaviour
(documented deviations: no pydantic URL lines, our own ValidationError class).
"""

# ruff: noqa: UP007, UP045 - typing.Union/Optional are test inputs here, next to their PEP 604 forms

import asyncio
import dataclasses
import enum
import json
import re
import subprocess
import sys
from collections import deque
from collections.abc import Sequence
from typing import Annotated, Any, Literal, Optional, TypedDict, Union

import pytest

from lgembed.messages import ToolMessage
from lgembed.tools import (
    InjectedToolCallId,
    StructuredTool,
    Tool,
    ValidationError,
    convert_to_openai_tool,
    tool,
)
from lgembed.types import Command


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _call(name, args, id="i"):
    return {"name": name, "args": args, "id": id, "type": "tool_call"}


# --- the decorator ----------------------------------------------------------------------


def test_tool_from_function_name_description_args():
    """M-3: a plain function becomes a tool named after it, described by its docstring."""
    t = tool(add)
    assert isinstance(t, StructuredTool) and isinstance(t, Tool)
    assert t.name == "add"
    assert t.description == "Add two integers."
    assert t.return_direct is False
    assert t.args == {"a": {"title": "A", "type": "integer"}, "b": {"title": "B", "type": "integer"}}
    assert t.func is add and t.coroutine is None


def test_tool_decorator_forms():
    """`@tool`, `@tool("name")`, `@tool(description=..., return_direct=True)`."""

    @tool
    def plain(x: int) -> int:
        """Plain."""
        return x

    @tool("renamed2")
    def named(x: int) -> int:
        """D3"""
        return x

    @tool("renamed", description="desc!", return_direct=True)
    def nodoc(x: int) -> int:
        return x

    assert (plain.name, plain.description) == ("plain", "Plain.")
    assert (named.name, named.description) == ("renamed2", "D3")
    assert (nodoc.name, nodoc.description, nodoc.return_direct) == ("renamed", "desc!", True)


def test_description_is_the_stripped_docstring():
    """langchain-core uses `__doc__.strip()`: inner indentation is kept."""

    def f(x: int) -> int:
        """Weather.

        Args:
            city: the c
        """
        return x

    assert tool(f).description == f.__doc__.strip()
    if sys.version_info < (3, 13):  # Python 3.13 dedents docstrings when compiling
        assert tool(f).description == "Weather.\n\n        Args:\n            city: the c"


def test_tool_errors():
    """langchain-core's texts for a missing docstring and a bad first argument."""

    def nodoc(x: int):
        return x

    with pytest.raises(ValueError, match=re.escape("Function must have a docstring if description not provided.")):
        tool(nodoc)
    with pytest.raises(ValueError, match=re.escape("Function must have a docstring if description not provided.")):
        tool(return_direct=True)(nodoc)
    with pytest.raises(
        ValueError,
        match=re.escape(
            "The first argument must be a string or a callable with a __name__ for tool decorator. Got <class 'int'>"
        ),
    ):
        tool(123)
    with pytest.raises(TypeError, match=re.escape("'b' is not a callable object")):
        tool("a", "b")


def test_args_schema_fragments():
    """`.args` has pydantic's JSON-schema fragments: titles, defaults, anyOf, enum, items."""

    def f(
        x: float,
        s: str,
        flag: bool,
        items: list,
        d: dict,
        o: int | None = None,
        lit: Literal["a", "b"] = "a",
        li: list[int] = [],  # noqa: B006
        n: int = 3,
    ) -> str:
        """Doc."""
        return ""

    assert tool(f).args == {
        "x": {"title": "X", "type": "number"},
        "s": {"title": "S", "type": "string"},
        "flag": {"title": "Flag", "type": "boolean"},
        "items": {"items": {}, "title": "Items", "type": "array"},
        "d": {"additionalProperties": True, "title": "D", "type": "object"},
        "o": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None, "title": "O"},
        "lit": {"default": "a", "enum": ["a", "b"], "title": "Lit", "type": "string"},
        "li": {"default": [], "items": {"type": "integer"}, "title": "Li", "type": "array"},
        "n": {"default": 3, "title": "N", "type": "integer"},
    }


def test_args_schema_more_types():
    """Tuples, sets, bytes, unions, Sequence, dict[str, int], Any, no annotation, snake_case titles."""

    def f(
        l1: Literal["a"],
        tp: tuple[int, str],
        tv: tuple[int, ...],
        st: set[int],
        b: bytes,
        u: int | str,
        seq: Sequence[int],
        some_arg_name: int = 1,
        nd: dict[str, int] = {},  # noqa: B006
        fl: float = 1.5,
        an: Any = None,
        no=None,
    ) -> str:
        """F."""
        return ""

    assert tool(f).args == {
        "l1": {"const": "a", "title": "L1", "type": "string"},
        "tp": {
            "maxItems": 2,
            "minItems": 2,
            "prefixItems": [{"type": "integer"}, {"type": "string"}],
            "title": "Tp",
            "type": "array",
        },
        "tv": {"items": {"type": "integer"}, "title": "Tv", "type": "array"},
        "st": {"items": {"type": "integer"}, "title": "St", "type": "array", "uniqueItems": True},
        "b": {"format": "binary", "title": "B", "type": "string"},
        "u": {"anyOf": [{"type": "integer"}, {"type": "string"}], "title": "U"},
        "seq": {"items": {"type": "integer"}, "title": "Seq", "type": "array"},
        "some_arg_name": {"default": 1, "title": "Some Arg Name", "type": "integer"},
        "nd": {"additionalProperties": {"type": "integer"}, "default": {}, "title": "Nd", "type": "object"},
        "fl": {"default": 1.5, "title": "Fl", "type": "number"},
        "an": {"default": None, "title": "An"},
        "no": {"default": None, "title": "No"},
    }


def test_annotated_description_and_keyword_only_args():
    """`Annotated[str, "the city"]` becomes the field description."""

    @tool
    def a1(city: Annotated[str, "the city"], n: int = 2, *, flag: bool = False) -> str:
        """Weather."""
        return city

    assert a1.args == {
        "city": {"description": "the city", "title": "City", "type": "string"},
        "n": {"default": 2, "title": "N", "type": "integer"},
        "flag": {"default": False, "title": "Flag", "type": "boolean"},
    }
    assert convert_to_openai_tool(a1) == {
        "type": "function",
        "function": {
            "name": "a1",
            "description": "Weather.",
            "parameters": {
                "properties": {
                    "city": {"description": "the city", "type": "string"},
                    "n": {"default": 2, "type": "integer"},
                    "flag": {"default": False, "type": "boolean"},
                },
                "required": ["city"],
                "type": "object",
            },
        },
    }


def test_tool_call_schema():
    """The schema a model is given: description, properties, required, title, type."""
    assert tool(add).tool_call_schema == {
        "description": "Add two integers.",
        "properties": {"a": {"title": "A", "type": "integer"}, "b": {"title": "B", "type": "integer"}},
        "required": ["a", "b"],
        "title": "add",
        "type": "object",
    }


def test_unannotated_args_and_methods():
    def nohints(a, b=2):
        """nohints"""
        return [a, b]

    class K:
        def m(self, y: int) -> int:
            """Method."""
            return y

    t = tool(nohints)
    assert t.args == {"a": {"title": "A"}, "b": {"default": 2, "title": "B"}}
    assert t.invoke({"a": "x"}) == ["x", 2]
    m = tool(K().m)
    assert m.args == {"y": {"title": "Y", "type": "integer"}}
    assert m.invoke({"y": "2"}) == 2


# --- invoke: validation ---------------------------------------------------------------------


def test_invoke_coerces_and_drops_extra_args():
    """Lax coercion (`"2"` -> 2, True -> 1, 2.0 -> 2); unknown arguments are dropped."""
    t = tool(add)
    assert t.invoke({"a": 1, "b": "2"}) == 3
    assert t.invoke({"a": True, "b": 2}) == 3
    assert t.invoke({"a": "3", "b": 2.0}) == 5
    assert t.invoke({"a": 1, "b": 2, "c": 3}) == 3


def test_invoke_validation_error_text_and_details():
    """M-4: the errors ToolNode formats; the text is pydantic's minus its URL lines."""
    t = tool(add)
    with pytest.raises(ValidationError) as info:
        t.invoke({"a": "x"})
    e = info.value
    assert isinstance(e, ValueError)
    assert e.title == "add" and e.error_count() == 2
    assert e.errors() == [
        {
            "type": "int_parsing",
            "loc": ("a",),
            "msg": "Input should be a valid integer, unable to parse string as an integer",
            "input": "x",
        },
        {"type": "missing", "loc": ("b",), "msg": "Field required", "input": {"a": "x"}},
    ]
    assert str(e) == (
        "2 validation errors for add\n"
        "a\n"
        "  Input should be a valid integer, unable to parse string as an integer"
        " [type=int_parsing, input_value='x', input_type=str]\n"
        "b\n"
        "  Field required [type=missing, input_value={'a': 'x'}, input_type=dict]"
    )
    with pytest.raises(
        ValidationError,
        match=re.escape(
            "1 validation error for add\na\n  Input should be a valid integer, got a number with a fractional part"
            " [type=int_from_float, input_value=1.5, input_type=float]"
        ),
    ):
        t.invoke({"a": 1.5, "b": 2})


def test_invoke_many_errors_in_argument_order():
    """One error per bad argument, nested locations (`li.0`), literal wording."""

    def f(
        x: float,
        s: str,
        flag: bool,
        items: list,
        d: dict,
        o: int | None = None,
        lit: Literal["a", "b"] = "a",
        li: list[int] = [],  # noqa: B006
    ) -> str:
        """Doc."""
        return json.dumps([x, s, flag, items, d, o, lit, li])

    t = tool(f)
    ok = t.invoke({"x": "1.5", "s": "q", "flag": "yes", "items": (1, 2), "d": {"k": 1}, "lit": "b", "li": ["1", 2]})
    assert ok == '[1.5, "q", true, [1, 2], {"k": 1}, null, "b", [1, 2]]'
    with pytest.raises(ValidationError) as info:
        t.invoke({"x": "abc", "s": 1, "flag": "maybe", "items": "no", "d": [1], "o": "z", "lit": "c", "li": ["x"]})
    assert [(e["loc"], e["type"], e["msg"]) for e in info.value.errors()] == [
        (("x",), "float_parsing", "Input should be a valid number, unable to parse string as a number"),
        (("s",), "string_type", "Input should be a valid string"),
        (("flag",), "bool_parsing", "Input should be a valid boolean, unable to interpret input"),
        (("items",), "list_type", "Input should be a valid list"),
        (("d",), "dict_type", "Input should be a valid dictionary"),
        (("o",), "int_parsing", "Input should be a valid integer, unable to parse string as an integer"),
        (("lit",), "literal_error", "Input should be 'a' or 'b'"),
        (("li", 0), "int_parsing", "Input should be a valid integer, unable to parse string as an integer"),
    ]


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass
class Pt:
    x: int
    y: int = 0


class TD(TypedDict):
    a: int


class E(list):
    """Expected errors: (type, loc below the argument, msg) triples."""


# (type hint, input, expected value or E([(type, loc, msg), ...])) observed with pydantic 2.14 lax mode
_CASES = [
    (int, " 3 ", 3),
    (int, "3.0", 3),
    (int, "1_000", 1000),
    (int, "+4", 4),
    (int, b"5", 5),
    (int, 3.0, 3),
    (int, "3.5", E([("int_parsing", (), "Input should be a valid integer, unable to parse string as an integer")])),
    (int, "1e3", E([("int_parsing", (), "Input should be a valid integer, unable to parse string as an integer")])),
    (int, None, E([("int_type", (), "Input should be a valid integer")])),
    (int, float("inf"), E([("finite_number", (), "Input should be a finite number")])),
    (float, "1e3", 1000.0),
    (float, " 1.5 ", 1.5),
    (float, True, 1.0),
    (float, 5, 5.0),
    (float, [1], E([("float_type", (), "Input should be a valid number")])),
    (bool, "YES", True),
    (bool, "F", False),
    (bool, 0.0, False),
    (bool, 2, E([("bool_parsing", (), "Input should be a valid boolean, unable to interpret input")])),
    (bool, 1.5, E([("bool_type", (), "Input should be a valid boolean")])),
    (bool, " true ", E([("bool_parsing", (), "Input should be a valid boolean, unable to interpret input")])),
    (str, b"x", "x"),
    (str, True, E([("string_type", (), "Input should be a valid string")])),
    (bytes, "x", b"x"),
    (bytes, 1, E([("bytes_type", (), "Input should be a valid bytes")])),
    (list, (1, 2), [1, 2]),
    (list, deque([1]), [1]),
    (list, {"a": 1}, E([("list_type", (), "Input should be a valid list")])),
    (list, "ab", E([("list_type", (), "Input should be a valid list")])),
    (dict, [("a", 1)], E([("dict_type", (), "Input should be a valid dictionary")])),
    (
        dict[str, int],
        {"a": "1", "b": "x", 3: 4},
        E(
            [
                ("int_parsing", ("b",), "Input should be a valid integer, unable to parse string as an integer"),
                ("string_type", (3, "[key]"), "Input should be a valid string"),
            ]
        ),
    ),
    (Union[int, str], "1", "1"),
    (Union[int, str], 2, 2),
    (
        Union[int, str],
        [1],
        E(
            [
                ("int_type", ("int",), "Input should be a valid integer"),
                ("string_type", ("str",), "Input should be a valid string"),
            ]
        ),
    ),
    (Union[int, float], "1.5", 1.5),
    (Optional[list[int]], None, None),
    (Optional[list[int]], "x", E([("list_type", (), "Input should be a valid list")])),
    (Literal["a", "b", "c"], "d", E([("literal_error", (), "Input should be 'a', 'b' or 'c'")])),
    (Literal[1, 2], True, 1),
    (Literal[1, 2], "1", E([("literal_error", (), "Input should be 1 or 2")])),
    (tuple[int, str], [1, "a"], (1, "a")),
    (tuple[int, str], [1], E([("missing", (1,), "Field required")])),
    (
        tuple[int, str],
        [1, "a", 3],
        E([("too_long", (), "Tuple should have at most 2 items after validation, not 3")]),
    ),
    (tuple[int, ...], ["1", "2"], (1, 2)),
    (set[int], ["1", 1], {1}),
    (set, "a", E([("set_type", (), "Input should be a valid set")])),
    (Sequence[int], "ab", E([("sequence_str", (), "'str' instances are not allowed as a Sequence value")])),
    (Color, "red", Color.RED),
    (Color, "green", E([("enum", (), "Input should be 'red' or 'blue'")])),
    (Pt, {"x": "1"}, Pt(1, 0)),
    (Pt, {"y": 1}, E([("missing", ("x",), "Field required")])),
    (Pt, 3, E([("dataclass_type", (), "Input should be a dictionary or an instance of Pt")])),
    (TD, {"a": "2", "z": 1}, {"a": 2}),
    (TD, {}, E([("missing", ("a",), "Field required")])),
    (type(None), 1, E([("none_required", (), "Input should be None")])),
    (Any, object, object),
]


@pytest.mark.parametrize(("hint", "value", "expected"), _CASES, ids=[f"{i}" for i in range(len(_CASES))])
def test_validation_matches_pydantic_lax_mode(hint, value, expected):
    """M-4: the values pydantic's lax mode accepts/rejects, with its error type/loc/msg."""

    def f(v):
        """F."""
        return v

    f.__annotations__ = {"v": hint}
    t = tool(f)
    if isinstance(expected, E):
        with pytest.raises(ValidationError) as info:
            t.invoke({"v": value})
        assert [(e["type"], e["loc"][1:], e["msg"]) for e in info.value.errors()] == expected
    else:
        out = t.invoke({"v": value})
        assert out == expected and type(out) is type(expected)


def test_long_input_values_are_shortened_in_the_text():
    """pydantic shows the first 25 and last 24 characters of a long input repr."""

    def g(s: str):
        """G."""

    with pytest.raises(ValidationError) as info:
        tool(g).invoke({"s": 12345678901234567890123456789012345678901234567890123456789})
    assert "input_value=1234567890123456789012345...678901234567890123456789, input_type=int" in str(info.value)


def test_str_input_and_non_dict_input():
    """A str goes to a one-argument tool as is; other inputs fail like pydantic's model_type."""

    @tool("renamed2")
    def a3(x: int) -> int:
        """D3"""
        return x

    @tool
    def noargs() -> str:
        """No args."""
        return "ok"

    @tool
    def twoargs(a: int, b: int) -> int:
        """Two."""
        return a + b

    assert a3.invoke("7") == "7"
    assert noargs.args == {}
    assert noargs.invoke({}) == "ok" and noargs.invoke({"z": 1}) == "ok" and noargs.invoke("") == "ok"
    with pytest.raises(ValidationError, match=re.escape("b\n  Field required [type=missing, input_value={'a': '5'}")):
        twoargs.invoke("5")
    with pytest.raises(
        ValidationError,
        match=re.escape(
            "1 validation error for twoargs\n  Input should be a valid dictionary or instance of twoargs"
            " [type=model_type, input_value=5, input_type=int]"
        ),
    ):
        twoargs.invoke(5)


def test_lgembed_pydantic_model_argument_is_validated_by_pydantic():
    """A pydantic model hint (the program uses pydantic): pydantic validates, errors are re-located."""
    pydantic = pytest.importorskip("pydantic")

    class P(pydantic.BaseModel):
        n: int

    def f(p: P) -> int:
        """F."""
        return p.n

    t = tool(f)
    assert t.invoke({"p": {"n": "3"}}) == 3
    with pytest.raises(ValidationError) as info:
        t.invoke({"p": {"n": "x"}})
    assert [(e["loc"], e["type"]) for e in info.value.errors()] == [(("p", "n"), "int_parsing")]


# --- invoke: output ------------------------------------------------------------------------


def rets(kind: str):
    """Return various."""
    return {
        "int": 3,
        "float": 2.5,
        "true": True,
        "none": None,
        "dict": {"a": 1, "b": [1, 2]},
        "list": [1, 2],
        "strs": ["a", "b"],
        "empty": [],
        "tuple": (1, 2),
        "stuple": ("a", "b"),
        "uni": "é",
        "unid": {"k": "é"},
        "blocks": [{"type": "text", "text": "hi"}],
        "badblocks": [{"type": "nope"}],
        "set": {1},
        "bytes": b"ab",
    }[kind]


@pytest.mark.parametrize(
    ("kind", "content"),
    [
        ("int", "3"),
        ("float", "2.5"),
        ("true", "true"),
        ("none", "null"),
        ("dict", '{"a": 1, "b": [1, 2]}'),
        ("list", "[1, 2]"),
        ("strs", ["a", "b"]),
        ("empty", []),
        ("tuple", "[1, 2]"),
        ("stuple", ["a", "b"]),
        ("uni", "é"),
        ("unid", '{"k": "é"}'),
        ("blocks", [{"type": "text", "text": "hi"}]),
        ("badblocks", '[{"type": "nope"}]'),
        ("set", "{1}"),
        ("bytes", "b'ab'"),
    ],
)
def test_tool_call_input_returns_formatted_tool_message(kind, content):
    """M-3: a tool call returns ToolMessage(content=<langchain-core formatting>, name, id, success)."""
    t = tool(rets)
    m = t.invoke(_call("rets", {"kind": kind}))
    assert isinstance(m, ToolMessage)
    assert (m.content, m.name, m.tool_call_id, m.status) == (content, "rets", "i", "success")
    assert t.invoke({"kind": kind}) == rets(kind)  # without a tool call: the raw value


def test_tool_outputs_pass_through():
    """A returned ToolMessage or Command is returned unchanged for a tool call."""

    def cmd() -> Command:
        """Cmd."""
        return Command(update={"x": 1})

    def msg() -> ToolMessage:
        """Msg."""
        return ToolMessage("m", tool_call_id="i")

    assert tool(cmd).invoke(_call("cmd", {})) == Command(update={"x": 1})
    assert tool(msg).invoke(_call("msg", {})) == ToolMessage("m", tool_call_id="i")


def test_content_and_artifact():
    @tool(response_format="content_and_artifact")
    def a4(x: int):
        """D4"""
        return "content", {"raw": x}

    m = a4.invoke(_call("a4", {"x": 1}))
    assert m == ToolMessage("content", name="a4", tool_call_id="i", artifact={"raw": 1})
    assert a4.invoke({"x": 1}) == "content"

    @tool(response_format="content_and_artifact")
    def bad(x: int):
        """Bad."""
        return "only"

    with pytest.raises(
        ValueError,
        match=re.escape(
            "Since response_format='content_and_artifact' a two-tuple of the message content and raw tool "
            "output is expected. Instead, generated response is of type: <class 'str'>."
        ),
    ):
        bad.invoke({"x": 1})


def test_injected_tool_call_id():
    """`Annotated[str, InjectedToolCallId]` is hidden from the schema and filled from the call."""

    @tool
    def who(x: int, tool_call_id: Annotated[str, InjectedToolCallId]) -> str:
        """Who."""
        return f"{x}:{tool_call_id}"

    assert who.args == {"x": {"title": "X", "type": "integer"}}
    assert who.invoke(_call("who", {"x": "1"}, id="c9")).content == "1:c9"
    with pytest.raises(
        ValueError,
        match=re.escape(
            "When tool includes an InjectedToolCallId argument, tool must always be invoked with a full "
            "model ToolCall of the form: {'args': {...}, 'name': '...', 'type': 'tool_call', 'tool_call_id': '...'}"
        ),
    ):
        who.invoke({"x": 1})


# --- async ----------------------------------------------------------------------------------


def test_async_tool():
    """An async function: ainvoke awaits it; invoke raises langchain-core's NotImplementedError."""

    async def coro(x: int) -> int:
        """Coro."""
        return x * 2

    t = tool(coro)
    assert t.func is None and t.coroutine is coro
    assert asyncio.run(t.ainvoke({"x": "3"})) == 6
    with pytest.raises(NotImplementedError, match=re.escape("StructuredTool does not support sync invocation.")):
        t.invoke({"x": 1})
    m = asyncio.run(t.ainvoke(_call("coro", {"x": 2})))
    assert (m.content, m.name) == ("4", "coro")


def test_ainvoke_of_a_sync_tool_runs_it():
    assert asyncio.run(tool(add).ainvoke({"a": "3", "b": 1})) == 4


# --- lgembed-only ---------------------------------------------------------------------------


def test_lgembed_json_schema_args_schema_skips_validation():
    """A JSON-schema dict as args_schema: the model sees it, arguments go through as given."""
    schema = {"properties": {"q": {"type": "string"}}, "required": ["q"], "type": "object"}

    @tool(args_schema=schema)
    def search(**kwargs) -> str:
        """Search."""
        return repr(kwargs)

    assert search.args == {"q": {"type": "string"}}
    assert search.invoke({"q": 1}) == "{'q': 1}"


def test_lgembed_import_is_light():
    """DESIGN §1: lgembed.tools imports no pydantic, langchain-core, asyncio or json."""
    code = (
        "import sys; import lgembed.tools; "
        "print(sorted(m for m in ('pydantic', 'langchain_core', 'asyncio', 'json', 'concurrent.futures') "
        "if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
