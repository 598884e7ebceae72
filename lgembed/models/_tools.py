"""Tools and structured output for `ChatOpenAI`: conversion, `tool_choice`, grammars.

Why this module exists: `bind_tools` accepts what langchain-openai accepts (lgembed and
langchain-core tools, plain functions, OpenAI tool dicts, titled JSON schemas, TypedDicts,
dataclasses, pydantic classes), `with_structured_output` turns a schema into a request
field plus a reply parser, and `tool_grammar` rewrites a request so a grammar, not the
server's tool support, shapes the reply. Imported on first use of those methods only.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import Any

from lgembed.models.errors import OutputParserException

__all__ = ("apply_grammar", "bind_tools_kwargs", "structured_binding", "to_openai_tool", "tool_names")


def _is_typeddict(obj: Any) -> bool:
    return isinstance(obj, type) and issubclass(obj, dict) and hasattr(obj, "__annotations__") and hasattr(obj, "__total__")


def _is_pydantic(obj: Any) -> bool:
    return isinstance(obj, type) and hasattr(obj, "model_json_schema") and hasattr(obj, "model_validate")


def _class_tool(cls: type) -> dict:
    from lgembed._tool_args import json_schema
    from lgembed.tools import _rm_titles

    schema = cls.model_json_schema() if _is_pydantic(cls) else json_schema(cls)
    doc = (cls.__doc__ or "").strip()
    if dataclasses.is_dataclass(cls) and doc.startswith(cls.__name__ + "("):
        doc = ""  # the generated dataclass docstring is not a description
    params = _rm_titles({k: v for k, v in schema.items() if k not in ("title", "description")})
    return {"type": "function", "function": {"name": cls.__name__, "description": doc or schema.get("description", ""), "parameters": params}}


def to_openai_tool(t: Any) -> dict:
    """One tool-like object as an OpenAI tool dict.

    Raises:
        ValueError: an object that is not a tool, function, schema dict or class.
    """
    if isinstance(t, dict):
        if t.get("type") == "function" and "function" in t:
            return t
        if "name" in t and ("parameters" in t or "description" in t):
            return {"type": "function", "function": t}
        if "title" in t:
            params = {k: v for k, v in t.items() if k not in ("title", "description")}
            return {"type": "function", "function": {"name": t["title"], "description": t.get("description", ""), "parameters": params}}
        msg = f"ChatOpenAI.bind_tools: a dict tool must be an OpenAI tool dict or a JSON schema with a 'title' (got keys {sorted(t)})"
        raise ValueError(msg)
    lc_tools = sys.modules.get("langchain_core.tools")
    if lc_tools is not None and isinstance(t, lc_tools.BaseTool):
        from langchain_core.utils.function_calling import convert_to_openai_tool as lc_convert

        return lc_convert(t)
    if isinstance(t, type) and (_is_typeddict(t) or dataclasses.is_dataclass(t) or _is_pydantic(t)):
        return _class_tool(t)
    from lgembed.tools import Tool, convert_to_openai_tool

    if isinstance(t, Tool) or callable(t):
        return convert_to_openai_tool(t)
    msg = f"ChatOpenAI.bind_tools: cannot use {t!r} as a tool (expected a tool, function, class or dict)"
    raise ValueError(msg)


def tool_names(tools: list[dict]) -> set[str]:
    """The function names of OpenAI tool dicts."""
    return {t["function"]["name"] if "function" in t else t.get("name") for t in tools}


def bind_tools_kwargs(tools: Any, tool_choice: Any, kwargs: dict) -> dict:
    """The request fields `bind_tools` binds (langchain-openai's tool_choice rules).

    Raises:
        ValueError: a tool_choice that is not a str, bool or dict.
    """
    out = dict(kwargs)
    strict = out.pop("strict", None)
    formatted = [to_openai_tool(t) for t in tools]
    if strict is not None:
        formatted = [{**f, "function": {**f["function"], "strict": strict}} for f in formatted]
    out["tools"] = formatted
    names = tool_names(formatted)
    if tool_choice:
        if isinstance(tool_choice, str):
            if tool_choice in names:
                tool_choice = {"type": "function", "function": {"name": tool_choice}}
            elif tool_choice == "any":
                tool_choice = "required"
        elif isinstance(tool_choice, bool):
            tool_choice = "required"
        elif not isinstance(tool_choice, dict):
            msg = f"Unrecognized tool_choice type. Expected str, bool or dict. Received: {tool_choice}"
            raise ValueError(msg)
        out["tool_choice"] = tool_choice
    return out


# --- structured output ----------------------------------------------------------------------


def structured_binding(schema: Any, method: str, include_raw: bool, strict: bool | None) -> tuple[dict, Any]:
    """(request fields, reply parser) for `with_structured_output`.

    Raises:
        ValueError: an unknown method, or a schema that cannot be converted.
    """
    if method not in ("json_schema", "function_calling", "json_mode"):
        msg = f"Unrecognized method argument. Expected one of 'function_calling', 'json_mode' or 'json_schema'. Received: '{method}'"
        raise ValueError(msg)
    tool = to_openai_tool(schema)
    fn = tool["function"]
    name = fn["name"]
    convert = _converter(schema)
    if method == "function_calling":
        extra = bind_tools_kwargs([tool], name, {"parallel_tool_calls": False} if strict is None else {"parallel_tool_calls": False, "strict": strict})

        def parse(message: Any) -> Any:
            calls = [tc for tc in message.tool_calls if tc["name"] == name]
            if not calls:
                if message.invalid_tool_calls:
                    bad = message.invalid_tool_calls[0]
                    raise OutputParserException(f"Could not parse the {name} tool call arguments: {bad.get('error')}")
                return None
            return convert(calls[0]["args"])

    else:
        if method == "json_mode":
            rf: dict = {"type": "json_object"}
        else:
            spec: dict = {"name": name, "schema": fn.get("parameters", {})}
            if fn.get("description"):
                spec["description"] = fn["description"]
            if strict is not None:
                spec["strict"] = strict
            rf = {"type": "json_schema", "json_schema": spec}
        extra = {"response_format": rf}

        def parse(message: Any) -> Any:
            text = message.text
            try:
                data = json.loads(text)
            except ValueError as e:
                msg = f"Invalid json output: {text}"
                raise OutputParserException(msg) from e
            return convert(data)

    if not include_raw:
        return extra, parse

    def parse_raw(message: Any) -> dict:
        try:
            return {"raw": message, "parsed": parse(message), "parsing_error": None}
        except Exception as e:  # noqa: BLE001 - include_raw reports the error instead of raising
            return {"raw": message, "parsed": None, "parsing_error": e}

    return extra, parse_raw


def _converter(schema: Any) -> Any:
    if _is_pydantic(schema):
        return schema.model_validate
    if isinstance(schema, type) and dataclasses.is_dataclass(schema):
        return lambda data: schema(**data)
    return lambda data: data


# --- grammars -------------------------------------------------------------------------------


def apply_grammar(payload: dict, messages: list[dict], mode: str) -> None:
    """Rewrites a request so the bound tools are enforced by a grammar (`mode` "gbnf") or a
    JSON schema (`mode` "json_schema") instead of the server's tool calling.

    The tools move into the system prompt, earlier tool calls and results become text
    (servers without a tool-aware chat template accept that), and `tools`/`tool_choice`
    are removed (llama.cpp refuses a grammar together with tools).

    Raises:
        lgembed.models.grammar.GrammarError: a schema the grammar cannot enforce.
    """
    from lgembed.models.grammar import tool_call_gbnf, tool_call_json_schema, tool_instructions

    tools = payload.pop("tools")
    choice = payload.pop("tool_choice", None)
    payload.pop("parallel_tool_calls", None)
    if choice == "none":
        return
    allow_text = choice in (None, "auto")
    if isinstance(choice, dict):
        wanted = (choice.get("function") or {}).get("name")
        tools = [t for t in tools if t.get("function", {}).get("name") == wanted] or tools
    if mode == "gbnf":
        payload["grammar"] = tool_call_gbnf(tools, allow_text=allow_text)
    else:
        payload["response_format"] = tool_call_json_schema(tools, allow_text=allow_text)
    text = tool_instructions(tools, allow_text=allow_text, json_answer=mode == "json_schema")
    names: dict[str, str] = {}
    for m in messages:
        if m.get("role") == "assistant" and m.get("tool_calls"):
            calls = []
            for tc in m.pop("tool_calls"):
                fn = tc.get("function") or {}
                names[tc.get("id")] = fn.get("name")
                try:
                    args = json.loads(fn.get("arguments") or "{}")
                except ValueError:
                    args = fn.get("arguments")
                calls.append(json.dumps({"name": fn.get("name"), "arguments": args}, ensure_ascii=False))
            m["content"] = "\n".join(calls)
        elif m.get("role") == "tool":
            tcid = m.pop("tool_call_id", None)
            content = m["content"] if isinstance(m["content"], str) else json.dumps(m["content"], ensure_ascii=False)
            m["role"] = "user"
            m["content"] = f"Result of the {names.get(tcid, 'tool')} call ({tcid}):\n{content}"
    if messages and messages[0].get("role") in ("system", "developer") and isinstance(messages[0].get("content"), str):
        messages[0]["content"] = messages[0]["content"] + "\n\n" + text
    else:
        messages.insert(0, {"role": "system", "content": text})
