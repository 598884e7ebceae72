"""Issue 16, acceptance 2: the tool-call grammar accepts every valid call and rejects malformed ones.

Checked with tests/_gbnf.py (an independent GBNF parser + recognizer; llama.cpp's own parser
ships only inside llama.cpp builds), against hand-written accepted/rejected samples and
Hypothesis-generated valid calls, and against the JSON-schema form with a small validator.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import _gbnf  # noqa: E402

from lgembed.models import ChatOpenAI, GrammarError  # noqa: E402
from lgembed.models.grammar import parse_reply, tool_call_gbnf, tool_call_json_schema  # noqa: E402
from lgembed.tools import convert_to_openai_tool, tool  # noqa: E402

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@tool
def get_weather(city: str, days: int = 1) -> str:
    """The weather in a city."""
    return city


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


SET_MODE = {
    "type": "function",
    "function": {
        "name": "set_mode",
        "description": "Set the thermostat mode.",
        "parameters": {
            "type": "object",
            "properties": {
                "mode": {"enum": ["heat", "cool", "off"]},
                "target": {"anyOf": [{"type": "number"}, {"type": "null"}]},
                "zones": {"type": "array", "items": {"type": "string", "maxLength": 8}, "minItems": 1, "maxItems": 3},
                "schedule": {
                    "type": "object",
                    "properties": {"start": {"type": "integer"}, "end": {"type": "integer"}, "eco": {"type": "boolean"}},
                    "required": ["start", "end"],
                    "additionalProperties": False,
                },
                "label": {"const": "v1"},
            },
            "required": ["mode", "zones"],
            "additionalProperties": False,
        },
    },
}

TOOLS = [convert_to_openai_tool(get_weather), convert_to_openai_tool(add), SET_MODE]
GRAMMAR = tool_call_gbnf(TOOLS)
RULES = _gbnf.parse(GRAMMAR)
CALLS_ONLY = _gbnf.parse(tool_call_gbnf(TOOLS, allow_text=False))

ACCEPTED = [
    '{"name": "get_weather", "arguments": {"city": "Paris"}}',
    '{"name":"get_weather","arguments":{"city":"Paris","days":3}}',
    '{"name": "get_weather", "arguments": {"city": "P\\u00e9rigueux \\"x\\""}}',
    '{\n  "name": "add",\n  "arguments": {\n    "a": -2,\n    "b": 40\n  }\n}',
    '{"name": "set_mode", "arguments": {"mode": "heat", "zones": ["hall"]}}',
    '{"name": "set_mode", "arguments": {"mode": "off", "target": null, "zones": ["a", "b", "c"], "schedule": {"start": 6, "end": 22, "eco": true}, "label": "v1"}}',
    '{"name": "set_mode", "arguments": {"mode": "cool", "target": 21.5e0, "zones": ["x"]}}',
]
REJECTED = [
    '{"name": "add", "arguments": {"a": 2}}',  # missing required
    '{"name": "sub", "arguments": {}}',  # unknown tool
    '{"name": "add", "arguments": {"a": 2, "b": 4.5}}',  # number for integer
    '{"name": "add", "arguments": {"a": 2, "b": 4, "c": 1}}',  # extra property
    '{"name": "add", "arguments": {"a": "2", "b": 4}}',  # string for integer
    '{"name": "add", "arguments": {"a": 01, "b": 4}}',  # leading zero
    '{"name": "get_weather", "arguments": {"city": "Paris"}',  # unclosed
    '{"name": "get_weather", "arguments": {"city": "a\nb"}}',  # raw newline in a string
    '{"name": "set_mode", "arguments": {"mode": "warm", "zones": ["a"]}}',  # not in enum
    '{"name": "set_mode", "arguments": {"mode": "heat", "zones": []}}',  # minItems
    '{"name": "set_mode", "arguments": {"mode": "heat", "zones": ["a", "b", "c", "d"]}}',  # maxItems
    '{"name": "set_mode", "arguments": {"mode": "heat", "zones": ["toolongname"]}}',  # maxLength
    '{"name": "set_mode", "arguments": {"mode": "heat", "zones": ["a"], "schedule": {"start": 1}}}',
    '{"name": "set_mode", "arguments": {"mode": "heat", "zones": ["a"], "label": "v2"}}',  # const
    '{"arguments": {"a": 1, "b": 2}, "name": "add"}',  # keys out of the documented order
]


@pytest.mark.parametrize("text", ACCEPTED)
def test_valid_calls_are_accepted(text: str) -> None:
    assert _gbnf.accepts(RULES, text)
    assert _gbnf.accepts(CALLS_ONLY, text)


@pytest.mark.parametrize("text", REJECTED)
def test_malformed_calls_are_rejected(text: str) -> None:
    assert not _gbnf.accepts(RULES, text)


def test_plain_answers_only_when_allowed() -> None:
    assert _gbnf.accepts(RULES, "It is sunny in Paris.\nAnything else?")
    assert not _gbnf.accepts(CALLS_ONLY, "It is sunny in Paris.")
    assert not _gbnf.accepts(RULES, "")
    assert not _gbnf.accepts(RULES, '{"answer": "x"}')  # a brace starts a call
    # text starting with [ is a plain answer, not a list of calls
    assert _gbnf.accepts(RULES, '[{"name": "add"}]') and not _gbnf.accepts(CALLS_ONLY, '[{"name": "add"}]')


# --- Hypothesis: every generated valid call is accepted ---------------------------------------

_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
_ints = st.integers(min_value=-(10**15), max_value=10**15)
_ws = st.sampled_from(["", " ", "\n  ", "\n\t"])


def _dump(value: object, ws: str) -> str:
    if isinstance(value, dict):
        return "{" + ws + ("," + ws).join(json.dumps(k) + ":" + ws + _dump(v, ws) for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ws + ("," + ws).join(_dump(v, ws) for v in value) + "]"
    return json.dumps(value, ensure_ascii=bool(ws == "\n\t"))


@st.composite
def valid_call(draw: st.DrawFn) -> dict:
    which = draw(st.sampled_from(["get_weather", "add", "set_mode"]))
    if which == "get_weather":
        args: dict = {"city": draw(_text)}
        if draw(st.booleans()):
            args["days"] = draw(_ints)
    elif which == "add":
        args = {"a": draw(_ints), "b": draw(_ints)}
    else:
        args = {"mode": draw(st.sampled_from(["heat", "cool", "off"]))}
        if draw(st.booleans()):
            args["target"] = draw(st.one_of(st.none(), st.floats(allow_nan=False, allow_infinity=False), _ints))
        args["zones"] = draw(st.lists(st.text(max_size=8), min_size=1, max_size=3))
        if draw(st.booleans()):
            sched: dict = {"start": draw(_ints), "end": draw(_ints)}
            if draw(st.booleans()):
                sched["eco"] = draw(st.booleans())
            args["schedule"] = sched
        if draw(st.booleans()):
            args["label"] = "v1"
    return {"name": which, "arguments": args}


@settings(max_examples=150, deadline=None)
@given(valid_call(), _ws)
def test_generated_valid_calls_are_accepted_and_parse_back(call: dict, ws: str) -> None:
    text = _dump(call, ws)
    assert _gbnf.accepts(RULES, text), text
    content, calls, invalid = parse_reply(text, {"get_weather", "add", "set_mode"})
    assert (content, invalid) == ("", [])
    assert calls[0]["name"] == call["name"] and calls[0]["args"] == call["arguments"]


@settings(max_examples=100, deadline=None)
@given(valid_call(), st.integers(min_value=0, max_value=200))
def test_truncated_calls_are_rejected(call: dict, cut: int) -> None:
    text = json.dumps(call)
    cut = cut % len(text)
    assert not _gbnf.accepts(RULES, text[:cut] if cut else "{")


# --- unsupported schemas, the json_schema form, parsing -----------------------------------------


@pytest.mark.parametrize(
    ("schema", "keyword"),
    [
        ({"type": "string", "pattern": "^a"}, "pattern"),
        ({"type": "string", "format": "date-time"}, "format"),
        ({"type": "integer", "minimum": 0}, "minimum"),
        ({"oneOf": [{"type": "string"}]}, "oneOf"),
        ({"type": "array", "prefixItems": [{"type": "string"}]}, "prefixItems"),
    ],
)
def test_unsupported_keywords_are_refused(schema: dict, keyword: str) -> None:
    bad = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"x": schema}}}}
    with pytest.raises(GrammarError, match=f"keyword '{keyword}' at f.parameters/properties/x"):
        tool_call_gbnf([bad])
    with pytest.raises(GrammarError):
        tool_call_json_schema([bad])


def test_refs_and_maps() -> None:
    tool_ = {
        "type": "function",
        "function": {
            "name": "put",
            "parameters": {
                "type": "object",
                "properties": {"item": {"$ref": "#/$defs/Item"}, "tags": {"type": "object", "additionalProperties": {"type": "integer"}}},
                "required": ["item"],
                "$defs": {"Item": {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]}},
            },
        },
    }
    g = tool_call_gbnf([tool_], allow_text=False)
    assert _gbnf.accepts(g, '{"name": "put", "arguments": {"item": {"sku": "a"}, "tags": {"x": 1, "y": 2}}}')
    assert not _gbnf.accepts(g, '{"name": "put", "arguments": {"item": {"sku": "a"}, "tags": {"x": "1"}}}')
    schema = tool_call_json_schema([tool_])["json_schema"]["schema"]
    assert schema["$defs"]["Item"]["required"] == ["sku"]
    assert schema["anyOf"][-1]["properties"] == {"answer": {"type": "string"}}


def test_parse_reply() -> None:
    names = {"add"}
    assert parse_reply("hello", names) == ("hello", [], [])
    assert parse_reply('{"answer": "hi"}', names) == ("hi", [], [])
    content, calls, invalid = parse_reply('{"name": "add", "arguments": {"a": 1, "b": 2}}', names)
    assert calls[0]["args"] == {"a": 1, "b": 2} and calls[0]["id"].startswith("call_")
    content, calls, invalid = parse_reply('{"name": "add", "arguments": {"a": 1,', names)
    assert calls == [] and invalid[0]["name"] == "add"


def test_grammar_request_against_the_server() -> None:
    from _fake_llama_server import FakeLlamaServer

    with FakeLlamaServer([{"content": '{"name": "add", "arguments": {"a": 2, "b": 40}}'}, {"content": "42."}]) as srv:
        model = ChatOpenAI(model="m", base_url=srv.url, tool_grammar="gbnf").bind_tools([add, get_weather])
        reply = model.invoke([("user", "2+40?")])
        assert reply.tool_calls[0]["name"] == "add" and reply.tool_calls[0]["args"] == {"a": 2, "b": 40}
        assert reply.content == ""
        from lgembed.messages import ToolMessage

        history = [("user", "2+40?"), reply, ToolMessage("42", tool_call_id=reply.tool_calls[0]["id"])]
        final = model.invoke(history)
        assert final.content == "42." and final.tool_calls == []
        body = srv.requests[0]["body"]
        assert "tools" not in body and _gbnf.accepts(body["grammar"], '{"name": "add", "arguments": {"a": 1, "b": 2}}')
        assert body["messages"][0]["role"] == "system" and '"add"' in body["messages"][0]["content"]
        second = srv.requests[1]["body"]["messages"]
        assert [m["role"] for m in second] == ["system", "user", "assistant", "user"]
        assert json.loads(second[2]["content"]) == {"name": "add", "arguments": {"a": 2, "b": 40}}
    with FakeLlamaServer([{"content": '{"answer": "sunny"}'}]) as srv:
        model = ChatOpenAI(model="m", base_url=srv.url, tool_grammar="json_schema").bind_tools([get_weather])
        assert model.invoke("weather?").content == "sunny"
        assert srv.requests[0]["body"]["response_format"]["type"] == "json_schema"
