"""`AIMessageChunk`: a piece of a streamed model response, shaped like langchain-core's.

Why this module exists: a streaming chat model yields chunks whose sum (`a + b`) is the
final message, tool-call argument deltas included; LangGraph's `stream_mode="messages"`
streams those chunks. lgembed's `ChatOpenAI` produces them without langchain-core, so the
merge rules (langchain-core 1.x `add_ai_message_chunks`, `merge_dicts`, `merge_lists`,
`merge_content`, `add_usage`, `parse_partial_json`) are reproduced here. It is re-exported
by `lgembed.messages`; it lives apart so that module keeps to the message classes.
Like `lgembed.messages`, it imports json only inside the functions that need it.
"""

from __future__ import annotations

from typing import Any

from lgembed.messages._base import _FACTORY, AIMessage, AIMessage as _AI, invalid_tool_call, tool_call

__all__ = (
    "AIMessageChunk",
    "add_usage",
    "merge_dicts",
    "merge_lists",
    "message_chunk_to_message",
    "parse_partial_json",
    "tool_call_chunk",
)

LC_AUTO_PREFIX = "lc_"
# prefix of ids langchain-core generates (lowest rank when chunk ids are merged)
LC_ID_PREFIX = "lc_run-"
# prefix of run-derived ids (preferred over other generated ids, not over provider ids)


def tool_call_chunk(
    *, name: str | None = None, args: str | None = None, id: str | None = None, index: int | None = None
) -> dict[str, Any]:
    """A tool call chunk `{"name", "args", "id", "index", "type": "tool_call_chunk"}`."""
    return {"name": name, "args": args, "id": id, "index": index, "type": "tool_call_chunk"}


def merge_dicts(left: dict[str, Any], *others: dict[str, Any]) -> dict[str, Any]:
    """Merge dicts as langchain-core does: strings concatenate, dicts/lists merge recursively.

    Raises:
        TypeError: a key holds values of different types, or of a type that cannot merge.
    """
    merged = left.copy()
    for right in others:
        for k, v in right.items():
            if k not in merged or (v is not None and merged[k] is None):
                merged[k] = v
            elif v is None:
                continue
            elif type(merged[k]) is not type(v):
                msg = f'additional_kwargs["{k}"] already exists in this message, but with a different type.'
                raise TypeError(msg)
            elif isinstance(v, str):
                if (k == "index" and merged[k].startswith("lc_")) or (
                    k in {"id", "output_version", "model_provider"} and merged[k] == v
                ):
                    continue
                merged[k] += v
            elif isinstance(v, dict):
                merged[k] = merge_dicts(merged[k], v)
            elif isinstance(v, list):
                merged[k] = merge_lists(merged[k], v)
            elif merged[k] == v:
                continue
            elif isinstance(v, int) and not isinstance(v, bool):
                merged[k] = v if k in {"index", "created", "timestamp"} else merged[k] + v
            else:
                msg = (
                    f"Additional kwargs key {k} already exists in left dict and "
                    f"value has unsupported type {type(merged[k])}."
                )
                raise TypeError(msg)
    return merged


def merge_lists(left: list | None, *others: list | None) -> list | None:
    """Concatenate lists, merging dict items that share an `index` (tool call deltas).

    Raises:
        TypeError: as `merge_dicts`.
    """
    merged = left.copy() if left is not None else None
    for other in others:
        if other is None:
            continue
        if merged is None:
            merged = other.copy()
            continue
        for e in other:
            if isinstance(e, dict) and "index" in e and isinstance(e["index"], int):
                hit = [
                    i
                    for i, el in enumerate(merged)
                    if isinstance(el, dict)
                    and "index" in el
                    and el["index"] == e["index"]
                    and (el.get("id") in (None, "") or e.get("id") in (None, "") or el.get("id") == e.get("id"))
                ]
                if hit:
                    new_e = {k: v for k, v in e.items() if k != "type"} if "type" in e else e
                    merged[hit[0]] = merge_dicts(merged[hit[0]], new_e)
                    continue
            merged.append(e)
    return merged


def merge_content(first: Any, *contents: Any) -> Any:
    """Concatenate message contents (str + str, list + list by index, str onto a list's last str)."""
    merged = "" if first is None else first
    if isinstance(merged, list):
        merged = merged.copy()
    for content in contents:
        if isinstance(merged, str):
            merged = merged + content if isinstance(content, str) else [merged, *content]
        elif isinstance(content, list):
            merged = merge_lists(merged, content)
        elif merged and isinstance(merged[-1], str):
            merged[-1] += content
        elif content == "":
            pass
        elif merged:
            merged.append(content)
    return merged


def _int_op(left: dict, right: dict) -> dict:
    out: dict = {}
    for k in set(left) | set(right):
        a, b = left.get(k, 0), right.get(k, 0)
        if isinstance(a, dict) or isinstance(b, dict):
            out[k] = _int_op(a or {}, b or {})
        else:
            out[k] = a + b
    return out


def add_usage(left: dict | None, right: dict | None) -> dict:
    """Sum two `usage_metadata` dicts (nested token details included)."""
    if not (left or right):
        return {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    if not (left and right):
        return left or right  # type: ignore[return-value]
    out = _int_op(left, right)
    order = ["input_tokens", "output_tokens", "total_tokens", "input_token_details", "output_token_details"]
    return {k: out[k] for k in order if k in out} | {k: v for k, v in out.items() if k not in order}


def parse_partial_json(s: str, *, strict: bool = False) -> Any:
    """Parse JSON that may be cut short (closes open strings, arrays and objects).

    Returns None when the text has mismatched brackets.

    Raises:
        json.JSONDecodeError: the text cannot be completed into JSON.
    """
    import json

    try:
        return json.loads(s, strict=strict)
    except json.JSONDecodeError:
        pass
    new_chars: list[str] = []
    stack: list[str] = []
    inside = escaped = False
    for char in s:
        new_char = char
        if inside:
            if char == '"' and not escaped:
                inside = False
            elif char == "\n" and not escaped:
                new_char = "\\n"
            elif char == "\\":
                escaped = not escaped
            else:
                escaped = False
        elif char == '"':
            inside = True
            escaped = False
        elif char == "{":
            stack.append("}")
        elif char == "[":
            stack.append("]")
        elif char in "}]":
            if stack and stack[-1] == char:
                stack.pop()
            else:
                return None
        new_chars.append(new_char)
    if inside:
        if escaped:
            new_chars.pop()
        new_chars.append('"')
    stack.reverse()
    ends: list[int] = []
    total = 0
    for c in new_chars:
        total += len(c)
        ends.append(total)
    from bisect import bisect_right

    while new_chars:
        try:
            return json.loads("".join(new_chars + stack), strict=strict)
        except json.JSONDecodeError as e:
            idx = bisect_right(ends, e.pos)
            if idx < len(new_chars):
                del new_chars[idx:]
                del ends[idx:]
            else:
                new_chars.pop()
                ends.pop()
    return json.loads(s, strict=strict)


class AIMessageChunk(AIMessage):
    """A streamed piece of an `AIMessage` (`type == "AIMessageChunk"`); `a + b` merges chunks.

    `tool_call_chunks` hold the raw deltas (`name`, `args` text, `id`, `index`); the
    constructor parses them into `tool_calls` / `invalid_tool_calls` (partial JSON
    allowed), as langchain-core does, so the sum of a stream's chunks carries the
    complete tool calls.
    """

    __slots__ = ("tool_call_chunks", "chunk_position")
    type = "AIMessageChunk"
    _fields = AIMessage._fields + ("tool_call_chunks", "chunk_position")
    _repr_defaults = {**AIMessage._repr_defaults, "tool_call_chunks": _FACTORY, "chunk_position": None}

    def __init__(self, content: Any = None, content_blocks: list | None = None, **kwargs: Any) -> None:
        chunks = kwargs.pop("tool_call_chunks", None) or []
        self.chunk_position = kwargs.pop("chunk_position", None)
        if content is None and content_blocks is None:
            content = ""
        if chunks:
            kwargs.pop("tool_calls", None)
            kwargs.pop("invalid_tool_calls", None)
            calls: list = []
            invalid: list = []
            for c in chunks:
                try:
                    args = parse_partial_json(c["args"]) if c.get("args") else {}
                except Exception:  # noqa: BLE001 - unparsable arguments make an invalid call
                    args = None
                if isinstance(args, dict):
                    calls.append(tool_call(name=c.get("name") or "", args=args, id=c.get("id")))
                else:
                    invalid.append(invalid_tool_call(name=c.get("name"), args=c.get("args"), id=c.get("id")))
            kwargs["tool_calls"] = calls
            kwargs["invalid_tool_calls"] = invalid
            _AI.__init__(self, content, content_blocks, **kwargs)
            self.tool_calls = calls
            self.invalid_tool_calls = invalid
            self.tool_call_chunks = [
                tool_call_chunk(name=c.get("name"), args=c.get("args"), id=c.get("id"), index=c.get("index"))
                for c in chunks
            ]
            return
        _AI.__init__(self, content, content_blocks, **kwargs)
        if not (self.tool_calls or self.invalid_tool_calls):
            self.tool_call_chunks = []
            return
        import json

        made = [
            tool_call_chunk(name=tc["name"], args=json.dumps(tc["args"]), id=tc["id"], index=None)
            for tc in self.tool_calls
        ]
        made.extend(
            tool_call_chunk(name=tc["name"], args=tc["args"], id=tc["id"], index=None) for tc in self.invalid_tool_calls
        )
        self.tool_call_chunks = made

    def __add__(self, other: Any) -> AIMessageChunk:
        """The merged chunk (content, kwargs, metadata, tool call deltas, usage, id).

        Raises:
            TypeError: `other` is not an AIMessageChunk (or a sequence of them).
        """
        if isinstance(other, AIMessageChunk):
            others: tuple = (other,)
        elif isinstance(other, (list, tuple)) and all(isinstance(o, AIMessageChunk) for o in other):
            others = tuple(other)
        else:
            msg = f'unsupported operand type(s) for +: "{type(self).__name__}" and "{type(other).__name__}"'
            raise TypeError(msg)
        return add_ai_message_chunks(self, *others)


def add_ai_message_chunks(left: AIMessageChunk, *others: AIMessageChunk) -> AIMessageChunk:
    """The sum of chunks (langchain-core's `add_ai_message_chunks`)."""
    content = merge_content(left.content, *(o.content for o in others))
    additional_kwargs = merge_dicts(left.additional_kwargs, *(o.additional_kwargs for o in others))
    response_metadata = merge_dicts(left.response_metadata, *(o.response_metadata for o in others))
    raw = merge_lists(left.tool_call_chunks, *(o.tool_call_chunks for o in others))
    chunks = (
        [tool_call_chunk(name=r.get("name"), args=r.get("args"), id=r.get("id"), index=r.get("index")) for r in raw]
        if raw
        else []
    )
    if left.usage_metadata or any(o.usage_metadata is not None for o in others):
        usage = left.usage_metadata
        for o in others:
            usage = add_usage(usage, o.usage_metadata)
    else:
        usage = None
    best = -1
    chunk_id = None
    for id_ in (left.id, *(o.id for o in others)):
        if not id_:
            continue
        if not id_.startswith(LC_ID_PREFIX) and not id_.startswith(LC_AUTO_PREFIX):
            chunk_id = id_
            break
        rank = 1 if id_.startswith(LC_ID_PREFIX) else 0
        if rank > best:
            best = rank
            chunk_id = id_
    position = "last" if any(x.chunk_position == "last" for x in (left, *others)) else None
    return type(left)(
        content=content,
        additional_kwargs=additional_kwargs,
        tool_call_chunks=chunks,
        response_metadata=response_metadata,
        usage_metadata=usage,
        id=chunk_id,
        chunk_position=position,
    )


def message_chunk_to_message(chunk: Any) -> Any:
    """An `AIMessageChunk` as the `AIMessage` it completes (other messages unchanged)."""
    if not isinstance(chunk, AIMessageChunk):
        return chunk
    fields = {
        "content": chunk.content,
        "additional_kwargs": chunk.additional_kwargs,
        "response_metadata": chunk.response_metadata,
        "name": chunk.name,
        "id": chunk.id,
        "tool_calls": chunk.tool_calls,
        "invalid_tool_calls": chunk.invalid_tool_calls,
        "usage_metadata": chunk.usage_metadata,
    }
    if chunk.__dict__:
        fields.update(chunk.__dict__)
    return AIMessage(**fields)
