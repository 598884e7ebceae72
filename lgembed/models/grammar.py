"""Tool-call grammars: constrain a small local model to a valid call of one bound tool.

Why this module exists: small models served by llama.cpp & co. often emit malformed tool
calls (wrong names, broken JSON, missing arguments). llama.cpp's server takes a GBNF
grammar (`grammar` request field) and vLLM / LM Studio / Ollama / OpenAI a JSON schema
(`response_format`), which restrict sampling to matching text. From the bound tools'
JSON schemas this module builds either constraint, so the model can only produce

    {"name": "<tool>", "arguments": {<arguments valid for that tool's schema>}}

or, when a plain answer is allowed, free text that does not start with `{` (GBNF) /
`{"answer": "<text>"}` (JSON schema, which cannot express "not JSON"). `parse_reply`
turns the reply back into tool calls or content.

The accepted language (GBNF): one call object, keys `name` then `arguments`; inside
arguments, the schema's properties in their declared order, required ones present,
optional ones omitted or present, no other keys; JSON whitespace limited as in llama.cpp's
own `json-schema-to-grammar` (a space, or a newline and up to 20 indent characters).

Supported JSON Schema (exactly): `type` object/string/number/integer/boolean/null or a list
of them, `properties`, `required`, `additionalProperties` false (or a schema, for a map
without properties), `enum`/`const` of scalars, `items` with `minItems`/`maxItems`,
`minLength`/`maxLength`, `anyOf`, local `$ref` to `$defs`/`definitions`, and the
annotations `title`, `description`, `default`, `examples`. Anything else (`pattern`,
`format`, `minimum`, `oneOf`, `allOf`, `prefixItems`, `uniqueItems`, ...) raises
`GrammarError` naming the keyword and the path: a grammar that ignored it would admit
invalid calls.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = (
    "GrammarError",
    "parse_reply",
    "tool_call_gbnf",
    "tool_call_json_schema",
    "tool_instructions",
)

_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$schema", "$comment"})
# keywords that do not restrict values (ignored)
_SUPPORTED = frozenset(
    {
        "type", "properties", "required", "additionalProperties", "enum", "const", "items",
        "minItems", "maxItems", "minLength", "maxLength", "anyOf", "$ref", "$defs", "definitions",
    }
) | _ANNOTATIONS  # fmt: skip
# every keyword this module translates exactly

_PRIMITIVES = r'''
ws ::= | " " | "\n" [ \t]{0,20}
string ::= "\"" char* "\""
char ::= [^"\\\x00-\x1F] | "\\u" [dD] [89abAB] [0-9a-fA-F]{2} "\\u" [dD] [c-fC-F] [0-9a-fA-F]{2} | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})
number ::= integer ("." [0-9]+)? ([eE] [-+]? [0-9]+)?
integer ::= "-"? ("0" | [1-9] [0-9]{0,15})
boolean ::= "true" | "false"
null ::= "null"
value ::= object | array | string | number | boolean | null
object ::= "{" ws ( string ws ":" ws value ws ( "," ws string ws ":" ws value ws )* )? "}"
array ::= "[" ws ( value ws ( "," ws value ws )* )? "]"
'''
# shared rules (llama.cpp's json.gbnf, with bounded whitespace and integer length, and DEL
# allowed unescaped as JSON allows it; an escaped
# surrogate pair is one `char`, so minLength/maxLength count code points as JSON Schema does)


class GrammarError(ValueError):
    """A tool schema uses JSON Schema this module cannot translate exactly."""


def _lit(text: str) -> str:
    """A GBNF string literal matching `text` exactly."""
    out = ['"']
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02X}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _json_lit(value: Any) -> str:
    return _lit(json.dumps(value, ensure_ascii=False))


class _Builder:
    def __init__(self, root_schema: dict) -> None:
        self.rules: dict[str, str] = {}
        self.root_schema = root_schema
        self.refs: dict[str, str] = {}

    def name(self, hint: str) -> str:
        base = re.sub(r"[^A-Za-z0-9-]+", "-", hint).strip("-").lower() or "r"
        name = base
        n = 1
        while name in self.rules or name in ("ws", "string", "char", "number", "integer", "boolean", "null", "value", "object", "array", "root"):
            n += 1
            name = f"{base}-{n}"
        self.rules[name] = ""  # reserve
        return name

    def rule(self, hint: str, body: str) -> str:
        name = self.name(hint)
        self.rules[name] = body
        return name

    def schema(self, s: Any, path: str, hint: str) -> str:
        """A GBNF expression for values valid against schema `s`."""
        if s is True or s == {}:
            return "value"
        if not isinstance(s, dict):
            msg = f"tool grammar: the schema at {path} must be an object (got {s!r})"
            raise GrammarError(msg)
        unknown = sorted(k for k in s if k not in _SUPPORTED)
        if unknown:
            msg = (
                f"tool grammar: JSON Schema keyword {unknown[0]!r} at {path} cannot be enforced by a grammar "
                f"(supported: {', '.join(sorted(_SUPPORTED - _ANNOTATIONS))}). Remove it from the tool's "
                "schema or bind the tool without tool_grammar."
            )
            raise GrammarError(msg)
        if "$ref" in s:
            return self.ref(s["$ref"], path)
        if "const" in s:
            return self.literals([s["const"]], path)
        if "enum" in s:
            return self.literals(list(s["enum"]), path)
        if "anyOf" in s:
            alts = [self.schema(sub, f"{path}/anyOf/{i}", f"{hint}-{i}") for i, sub in enumerate(s["anyOf"])]
            return "(" + " | ".join(alts) + ")"
        t = s.get("type")
        if isinstance(t, list):
            alts = [self.schema({**s, "type": one}, path, f"{hint}-{one}") for one in t]
            return "(" + " | ".join(alts) + ")"
        if t is None:
            if "properties" in s:
                t = "object"
            elif "items" in s:
                t = "array"
            else:
                return "value"
        if t == "object":
            return self.object(s, path, hint)
        if t == "array":
            return self.array(s, path, hint)
        if t == "string":
            lo, hi = s.get("minLength", 0), s.get("maxLength")
            if lo == 0 and hi is None:
                return "string"
            rep = f"{{{lo},{'' if hi is None else hi}}}"
            return self.rule(f"{hint}-str", f'"\\"" char{rep} "\\""')
        if t in ("number", "integer", "boolean", "null"):
            return t
        msg = f"tool grammar: unknown JSON Schema type {t!r} at {path}"
        raise GrammarError(msg)

    def literals(self, values: list, path: str) -> str:
        for v in values:
            if isinstance(v, (dict, list)):
                msg = f"tool grammar: enum/const values at {path} must be strings, numbers, booleans or null (got {v!r})"
                raise GrammarError(msg)
        return "(" + " | ".join(_json_lit(v) for v in values) + ")"

    def ref(self, ref: str, path: str) -> str:
        if ref in self.refs:
            return self.refs[ref]
        m = re.fullmatch(r"#/(\$defs|definitions)/([^/]+)", ref)
        if not m or m.group(2) not in (self.root_schema.get(m.group(1)) or {}):
            msg = f"tool grammar: $ref {ref!r} at {path} is not a local #/$defs/<name> reference"
            raise GrammarError(msg)
        name = self.name(f"def-{m.group(2)}")
        self.refs[ref] = name
        self.rules[name] = self.schema(self.root_schema[m.group(1)][m.group(2)], ref, name)
        return name

    def object(self, s: dict, path: str, hint: str) -> str:
        props: dict = s.get("properties") or {}
        required = set(s.get("required") or ())
        missing = required - set(props)
        extra = s.get("additionalProperties", False)
        if missing and extra is False:
            msg = f"tool grammar: required properties {sorted(missing)} at {path} are not in 'properties'"
            raise GrammarError(msg)
        if extra not in (False, None) and not props:
            value = self.schema({} if extra is True else extra, f"{path}/additionalProperties", f"{hint}-value")
            kv = f'string ws ":" ws {value} ws'
            return self.rule(hint, f'"{{" ws ( {kv} ( "," ws {kv} )* )? "}}"')
        if extra not in (False, None) and extra != {}:
            msg = (
                f"tool grammar: additionalProperties at {path} together with properties cannot be enforced "
                "exactly; set additionalProperties to false"
            )
            raise GrammarError(msg)
        keys = list(props)
        values = [self.schema(props[k], f"{path}/properties/{k}", f"{hint}-{k}") for k in keys]
        # rest(i, first): the properties from i on, `first` when none was written yet
        memo: dict[tuple[int, bool], str] = {}

        def rest(i: int, first: bool) -> str:
            if i == len(keys):
                return '""'
            if (i, first) in memo:
                return memo[(i, first)]
            sep = "" if first else '"," ws '
            kv = f"{sep}{_json_lit(keys[i])} ws \":\" ws {values[i]} ws"
            if keys[i] in required:
                body = f"{kv} {rest(i + 1, False)}"
            else:
                body = f"( {kv} {rest(i + 1, False)} ) | {rest(i + 1, first)}"
            name = self.rule(f"{hint}-{i}{'f' if first else 'n'}", body)
            memo[(i, first)] = name
            return name

        return self.rule(hint, f'"{{" ws {rest(0, True)} "}}"')

    def array(self, s: dict, path: str, hint: str) -> str:
        item = self.schema(s.get("items", {}), f"{path}/items", f"{hint}-item")
        lo, hi = s.get("minItems", 0), s.get("maxItems")
        if hi is not None and hi < lo:
            msg = f"tool grammar: maxItems < minItems at {path}"
            raise GrammarError(msg)
        if hi == 0:
            return self.rule(hint, '"[" ws "]"')
        more_lo = max(lo - 1, 0)
        more = f"{{{more_lo},{'' if hi is None else hi - 1}}}"
        body = f'{item} ws ( "," ws {item} ws ){more}'
        if lo == 0:
            body = f"( {body} )?"
        return self.rule(hint, f'"[" ws {body} "]"')


def _functions(tools: list[dict]) -> list[dict]:
    out = []
    for t in tools:
        fn = t.get("function", t) if isinstance(t, dict) else None
        if not isinstance(fn, dict) or "name" not in fn:
            msg = f"tool grammar: expected OpenAI tool dicts {{'type': 'function', 'function': {{...}}}} (got {t!r})"
            raise GrammarError(msg)
        out.append(fn)
    return out


def tool_call_gbnf(tools: list[dict], *, allow_text: bool = True) -> str:
    """A GBNF grammar (llama.cpp's format) admitting exactly one valid call of one tool,
    or (when `allow_text`) a plain answer that does not start with `{`.

    Args:
        tools: OpenAI tool dicts (`{"type": "function", "function": {"name", "parameters"}}`).
        allow_text: also admit a plain-text answer (tool_choice "auto").

    Raises:
        GrammarError: a schema keyword that cannot be enforced, or a malformed tool.
    """
    fns = _functions(tools)
    if not fns:
        msg = "tool grammar: no tools to build a grammar for"
        raise GrammarError(msg)
    lines = []
    calls = []
    all_rules: dict[str, str] = {}
    for fn in fns:
        params = fn.get("parameters") or {"type": "object", "properties": {}}
        b = _Builder(params)
        b.rules.update(dict.fromkeys(all_rules, ""))
        args = b.schema(params, f"{fn['name']}.parameters", f"{fn['name']}-args")
        call = b.rule(
            f"call-{fn['name']}",
            f'"{{" ws "\\"name\\"" ws ":" ws {_json_lit(fn["name"])} ws "," ws "\\"arguments\\"" ws ":" ws {args} ws "}}"',
        )
        calls.append(call)
        for k, v in b.rules.items():
            if v:
                all_rules[k] = v
    root = " | ".join(calls)
    if allow_text:
        root += " | answer"
        all_rules["answer"] = r"[^{ \t\n] [^\x00]*"
    lines.append(f"root ::= {root}")
    lines.extend(f"{k} ::= {v}" for k, v in all_rules.items())
    return "\n".join(lines) + "\n" + _PRIMITIVES.strip() + "\n"


def tool_call_json_schema(tools: list[dict], *, allow_text: bool = True) -> dict:
    """The `response_format` (type json_schema) admitting one call of one tool, or
    (when `allow_text`) `{"answer": "<text>"}`.

    Raises:
        GrammarError: as `tool_call_gbnf` (the same subset is accepted, so both modes agree).
    """
    fns = _functions(tools)
    alts = []
    for fn in fns:
        params = fn.get("parameters") or {"type": "object", "properties": {}}
        _Builder(params).schema(params, f"{fn['name']}.parameters", "check")
        params = {k: v for k, v in params.items() if k not in ("$defs", "definitions")}
        alts.append(
            {
                "type": "object",
                "properties": {"name": {"const": fn["name"]}, "arguments": params},
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
        )
    if allow_text:
        alts.append(
            {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"], "additionalProperties": False}
        )
    defs: dict = {}
    for fn in fns:
        params = fn.get("parameters") or {}
        defs.update(params.get("$defs") or {})
        defs.update(params.get("definitions") or {})
    schema: dict = {"anyOf": alts}
    if defs:
        schema["$defs"] = defs
    return {"type": "json_schema", "json_schema": {"name": "tool_call_or_answer", "schema": schema, "strict": True}}


def tool_instructions(tools: list[dict], *, allow_text: bool = True, json_answer: bool = False) -> str:
    """The system-prompt text telling the model the tools and the reply format the grammar enforces."""
    fns = _functions(tools)
    specs = json.dumps(
        [{"name": f["name"], "description": f.get("description", ""), "parameters": f.get("parameters", {})} for f in fns],
        ensure_ascii=False,
    )
    text = (
        "You can call these tools:\n" + specs + "\n"
        'To call a tool, reply with only a JSON object {"name": <tool name>, "arguments": <arguments object>}.'
    )
    if allow_text:
        text += (
            ' To answer without a tool, reply {"answer": <your answer>}.'
            if json_answer
            else " To answer without a tool, reply with plain text."
        )
    return text


def parse_reply(text: str, tool_names: set[str] | list[str]) -> tuple[str, list[dict], list[dict]]:
    """A grammar-constrained reply as (content, tool_calls, invalid_tool_calls).

    A JSON object `{"name": <bound tool>, "arguments": {...}}` becomes a tool call (its id
    `call_<24 hex>`); `{"answer": text}` becomes content; anything else is content as is.
    An object naming a tool but with arguments that are not an object is an invalid call.
    """
    import uuid

    stripped = text.strip()
    if not stripped.startswith("{"):
        return text, [], []
    try:
        data = json.loads(stripped)
    except ValueError as e:
        name_match = re.search(r'"name"\s*:\s*"([^"]+)"', stripped)
        if name_match and name_match.group(1) in tool_names:
            bad = {"type": "invalid_tool_call", "id": f"call_{uuid.uuid4().hex[:24]}", "name": name_match.group(1), "args": stripped, "error": f"reply is not valid JSON: {e}"}
            return "", [], [bad]
        return text, [], []
    if isinstance(data, dict) and set(data) == {"answer"} and isinstance(data["answer"], str):
        return data["answer"], [], []
    if isinstance(data, dict) and data.get("name") in tool_names:
        call_id = f"call_{uuid.uuid4().hex[:24]}"
        args = data.get("arguments", {})
        if isinstance(args, str):
            try:
                args = json.loads(args)
            except ValueError:
                pass
        if isinstance(args, dict):
            return "", [{"name": data["name"], "args": args, "id": call_id, "type": "tool_call"}], []
        bad = {"type": "invalid_tool_call", "id": call_id, "name": data["name"], "args": json.dumps(args), "error": "arguments must be a JSON object"}
        return "", [], [bad]
    return text, [], []
