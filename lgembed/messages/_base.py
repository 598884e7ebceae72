"""Chat messages shaped like langchain-core's, without langchain-core: the classes.

Why this module exists: LangGraph programs keep chat history in state as
langchain-core message objects (pydantic models). lgembed must run those programs
without importing langchain-core or pydantic, so it ships small plain classes with
the same names, fields, constructor forms, equality and reprs. Programs that do
import langchain-core keep using its classes: `add_messages` accepts both (see
`lgembed.graph.message`).

Deviations: where langchain-core's pydantic validation raises `ValidationError` (a
`ValueError` subclass), these classes raise a plain `ValueError` with their own
text, and they validate only what is cheap (content type, `type`, `status`).

Strategy: one `__slots__` class per message type, fixed fields in slots and any
extra keyword fields (langchain-core allows them, e.g. `example=True`) in the
instance `__dict__`. Each class declares its fields in langchain-core's order so
`repr`, `str` and `model_dump()` list them the same way. Importing this module
loads only `sys`, `typing` and `collections.abc` (json and copy are imported
inside the functions that need them).

Why slightly over 600 lines: the classes and the coercion rules they serve are
one contract (langchain-core's message shapes); splitting them would separate the
constructors from the dict/tuple coercion that must produce identical objects.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, Union

from lgembed.messages._calls import invalid_tool_call, remove_message_args, tool_call

__all__ = (
    "AIMessage",
    "AnyMessage",
    "BaseMessage",
    "FunctionMessage",
    "HumanMessage",
    "MessageLikeRepresentation",
    "RemoveMessage",
    "SystemMessage",
    "ToolMessage",
    "convert_to_messages",
    "invalid_tool_call",
    "tool_call",
)

_REQUIRED = object()
# repr default of a required field: never equal to a value, so always shown
_FACTORY = None
# repr default of a `default_factory` field: langchain-core compares those values
# with None (not with `{}`/`[]`), so `additional_kwargs={}` is always shown

_COERCION_DOCS = (
    "\nFor troubleshooting, visit: https://docs.langchain.com/oss/python/langchain"
    "/errors/MESSAGE_COERCION_FAILURE "
)
# suffix langchain-core appends to message-coercion errors (trailing space included)


def lc_messages_module() -> Any:
    """The `langchain_core.messages` module if the program already imported it, else None.

    lgembed never imports langchain-core itself; it only recognises its objects when
    the application brought it in.
    """
    return sys.modules.get("langchain_core.messages")


def is_lc_message(obj: Any) -> bool:
    """Whether `obj` is a langchain-core `BaseMessage` (False when it is not imported)."""
    lc = sys.modules.get("langchain_core.messages")
    return lc is not None and isinstance(obj, lc.BaseMessage)


class _Text(str):
    """`message.text`: a str that can also be called, like langchain-core's TextAccessor."""

    __slots__ = ()

    def __call__(self) -> str:
        return str(self)


def _content(value: Any, owner: str) -> Any:
    if isinstance(value, (str, list)):
        return value
    if isinstance(value, tuple):
        return list(value)
    msg = f"{owner}: 'content' must be a str or a list of str/dict (got {type(value).__name__})"
    raise ValueError(msg)


def _str_id(value: Any) -> Any:
    # langchain-core declares `id` with coerce_numbers_to_str
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return value


def _parse_openai_tool_calls(raw_tool_calls: list) -> tuple[list, list]:
    # additional_kwargs["tool_calls"] in OpenAI format -> (tool_calls, invalid_tool_calls)
    import json

    calls: list = []
    invalid: list = []
    for raw in raw_tool_calls:
        if "function" not in raw:
            continue
        fname = raw["function"]["name"]
        try:
            fargs = json.loads(raw["function"]["arguments"])
            calls.append(tool_call(name=fname or "", args=fargs or {}, id=raw.get("id")))
        except json.JSONDecodeError:
            invalid.append(
                invalid_tool_call(
                    name=fname, args=raw["function"]["arguments"], id=raw.get("id"), error=None
                )
            )
    return calls, invalid


class BaseMessage:
    """Base of all messages: `content`, `additional_kwargs`, `response_metadata`, `type`, `name`, `id`.

    Constructed like langchain-core's messages: `HumanMessage("hi", id="1")` or
    `HumanMessage(content="hi")`; unknown keyword fields are kept as attributes.
    Equality compares the class and every field; messages are unhashable.
    """

    __slots__ = ("content", "additional_kwargs", "response_metadata", "name", "id", "__dict__")

    type: str = "base"
    # message type tag ("human", "ai", ...); a class attribute, as in langchain-core
    _fields: tuple[str, ...] = ("content", "additional_kwargs", "response_metadata", "type", "name", "id")
    # field order of repr / model_dump (langchain-core's model_fields order)
    _repr_defaults: dict[str, Any] = {
        "content": _REQUIRED,
        "additional_kwargs": _FACTORY,
        "response_metadata": _FACTORY,
        "name": None,
        "id": None,
    }
    # fields shown in repr only when their value differs from the default given here

    def __init__(self, content: Any = None, content_blocks: list | None = None, **kwargs: Any) -> None:
        if content_blocks is not None:
            content = content_blocks
        self.content = self._coerce_content(content)
        self._set_common(kwargs)
        if kwargs:
            self.__dict__.update(kwargs)

    def _coerce_content(self, content: Any) -> Any:
        return _content(content, type(self).__name__)

    def _set_common(self, kwargs: dict[str, Any]) -> None:
        # pops the base fields (and a matching `type`) out of kwargs
        cls = type(self)
        if "type" in kwargs:
            given = kwargs.pop("type")
            if given != cls.type:
                msg = f"{cls.__name__}: 'type' must be {cls.type!r} (got {given!r})"
                raise ValueError(msg)
        ak = kwargs.pop("additional_kwargs", None)
        rm = kwargs.pop("response_metadata", None)
        self.additional_kwargs = {} if ak is None else ak
        self.response_metadata = {} if rm is None else rm
        self.name = kwargs.pop("name", None)
        self.id = _str_id(kwargs.pop("id", None))

    # --- pydantic-like surface ------------------------------------------------

    def model_dump(self) -> dict[str, Any]:
        """All fields in langchain-core's order, then extra fields."""
        out = {f: getattr(self, f) for f in self._fields}
        if self.__dict__:
            out.update(self.__dict__)
        return out

    def model_copy(self, *, update: dict[str, Any] | None = None, deep: bool = False) -> BaseMessage:
        """A copy (shallow unless `deep`) with `update` applied to its fields."""
        import copy

        new = copy.deepcopy(self) if deep else copy.copy(self)
        for k, v in (update or {}).items():
            setattr(new, k, v)
        return new

    def _repr_items(self) -> list[tuple[str, Any]]:
        cls = type(self)
        defaults = cls._repr_defaults
        items = []
        for f in cls._fields:
            if f == "type":
                continue  # always the class default unless reassigned
            if f not in defaults:
                continue  # repr=False field
            v = getattr(self, f)
            d = defaults[f]
            if d is _REQUIRED:
                items.append((f, v))
                continue
            try:
                differs = bool(d != v)
            except Exception:  # noqa: BLE001 - values whose != does not give a bool
                differs = v is not d
            if differs:
                items.append((f, v))
        if self.__dict__:
            items.extend(self.__dict__.items())
        return items

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._repr_items())
        return f"{type(self).__name__}({args})"

    def __str__(self) -> str:
        return " ".join(f"{k}={v!r}" for k, v in self._repr_items())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, BaseMessage):
            return NotImplemented
        if type(other) is not type(self):
            return False
        return all(getattr(self, f) == getattr(other, f) for f in self._fields) and (
            self.__dict__ == other.__dict__
        )

    __hash__ = None  # type: ignore[assignment]

    # --- conveniences of langchain-core messages ----------------------------

    @property
    def text(self) -> str:
        """The text of `content`: the string itself, or the concatenated text blocks."""
        content = self.content
        if isinstance(content, str):
            return _Text(content)
        return _Text(
            "".join(
                b if isinstance(b, str) else b["text"]
                for b in content
                if isinstance(b, str) or (b.get("type") == "text" and isinstance(b.get("text"), str))
            )
        )

    def pretty_repr(self, html: bool = False) -> str:
        """A titled, human-readable rendering (langchain-core's layout)."""
        title = _title(self.type.title() + " Message", bold=html)
        if self.name is not None:
            title += f"\nName: {self.name}"
        return f"{title}\n\n{self.content}"

    def pretty_print(self) -> None:
        """Print `pretty_repr()`."""
        print(self.pretty_repr())  # noqa: T201


def _title(title: str, *, bold: bool = False) -> str:
    padded = " " + title + " "
    sep = "=" * ((80 - len(padded)) // 2)
    second = sep + "=" if len(padded) % 2 else sep
    if bold:
        padded = f"\033[1m{padded}\033[0m"
    return f"{sep}{padded}{second}"


class HumanMessage(BaseMessage):
    """A message from the user (`type == "human"`)."""

    __slots__ = ()
    type = "human"


class SystemMessage(BaseMessage):
    """Instructions for the model (`type == "system"`)."""

    __slots__ = ()
    type = "system"


class AIMessage(BaseMessage):
    """A model response (`type == "ai"`), with `tool_calls` as dicts
    `{"name", "args", "id", "type": "tool_call"}`, `invalid_tool_calls` and `usage_metadata`.

    Tool calls given in OpenAI format in `additional_kwargs["tool_calls"]` are parsed
    into `tool_calls` when no tool calls are passed explicitly (as langchain-core does).
    """

    __slots__ = ("tool_calls", "invalid_tool_calls", "usage_metadata")
    type = "ai"
    _fields = BaseMessage._fields + ("tool_calls", "invalid_tool_calls", "usage_metadata")
    _repr_defaults = {
        **BaseMessage._repr_defaults,
        "tool_calls": _FACTORY,
        "invalid_tool_calls": _FACTORY,
        "usage_metadata": None,
    }

    def __init__(self, content: Any = None, content_blocks: list | None = None, **kwargs: Any) -> None:
        if content_blocks is not None:
            content = content_blocks
            if "tool_calls" not in kwargs:
                from_blocks = [b for b in content_blocks if b.get("type") == "tool_call"]
                if from_blocks:
                    kwargs["tool_calls"] = from_blocks
        tcs = kwargs.pop("tool_calls", None)
        itcs = kwargs.pop("invalid_tool_calls", None)
        if not (tcs or itcs or kwargs.get("tool_call_chunks")):
            raw = (kwargs.get("additional_kwargs") or {}).get("tool_calls")
            if raw:
                try:
                    tcs, itcs = _parse_openai_tool_calls(raw)
                except Exception:  # noqa: BLE001 - langchain-core ignores unparsable raw calls
                    pass
        self.tool_calls = (
            [tool_call(**{k: v for k, v in tc.items() if k not in ("type", "extras")}) for tc in tcs]
            if tcs
            else ([] if tcs is None else tcs)
        )
        self.invalid_tool_calls = (
            [invalid_tool_call(**{k: v for k, v in tc.items() if k != "type"}) for tc in itcs]
            if itcs
            else ([] if itcs is None else itcs)
        )
        self.usage_metadata = kwargs.pop("usage_metadata", None)
        super().__init__(content, **kwargs)

    def pretty_repr(self, html: bool = False) -> str:
        """`BaseMessage.pretty_repr` plus the tool calls."""
        base = super().pretty_repr(html=html)
        lines: list[str] = []

        def fmt(tc: dict) -> list[str]:
            out = [f"  {tc.get('name', 'Tool')} ({tc.get('id')})", f" Call ID: {tc.get('id')}"]
            if tc.get("error"):
                out.append(f"  Error: {tc.get('error')}")
            out.append("  Args:")
            args = tc.get("args")
            if isinstance(args, str):
                out.append(f"    {args}")
            elif isinstance(args, dict):
                out.extend(f"    {k}: {v}" for k, v in args.items())
            return out

        if self.tool_calls:
            lines.append("Tool Calls:")
            for tc in self.tool_calls:
                lines.extend(fmt(tc))
        if self.invalid_tool_calls:
            lines.append("Invalid Tool Calls:")
            for tc in self.invalid_tool_calls:
                lines.extend(fmt(tc))
        return (base.strip() + "\n" + "\n".join(lines)).strip()


class ToolMessage(BaseMessage):
    """The result of a tool call (`type == "tool"`): `tool_call_id`, `artifact`, `status`.

    As in langchain-core, content that is not a str/list is converted with `str()`
    (so a missing content becomes `'None'`), list items that are not str/dict too,
    and a numeric or UUID `tool_call_id` becomes a str. `additional_kwargs` and
    `response_metadata` are left out of the repr.

    Raises:
        KeyError: `'tool_call_id'` when it is not given (langchain-core's error).
        ValueError: when `status` is not "success" or "error".
    """

    __slots__ = ("tool_call_id", "artifact", "status")
    type = "tool"
    _fields = BaseMessage._fields + ("tool_call_id", "artifact", "status")
    _repr_defaults = {
        "content": _REQUIRED,
        "name": None,
        "id": None,
        "tool_call_id": _REQUIRED,
        "artifact": None,
        "status": "success",
    }

    def __init__(self, content: Any = None, content_blocks: list | None = None, **kwargs: Any) -> None:
        if "tool_call_id" not in kwargs:
            raise KeyError("tool_call_id")
        tcid = kwargs.pop("tool_call_id")
        if isinstance(tcid, (int, float)) and not isinstance(tcid, bool) or _is_uuid(tcid):
            tcid = str(tcid)
        self.tool_call_id = tcid
        self.artifact = kwargs.pop("artifact", None)
        status = kwargs.pop("status", "success")
        if status not in ("success", "error"):
            msg = f"ToolMessage: 'status' must be 'success' or 'error' (got {status!r})"
            raise ValueError(msg)
        self.status = status
        super().__init__(content, content_blocks, **kwargs)

    def _coerce_content(self, content: Any) -> Any:
        if isinstance(content, tuple):
            content = list(content)
        if isinstance(content, list):
            return [x if isinstance(x, (str, dict)) else str(x) for x in content]
        if not isinstance(content, str):
            return str(content)
        return content


def _is_uuid(value: Any) -> bool:
    mod = sys.modules.get("uuid")
    return mod is not None and isinstance(value, mod.UUID)


class FunctionMessage(BaseMessage):
    """Legacy function result (`type == "function"`); `name` is required.

    Raises:
        ValueError: when `name` is not given.
    """

    __slots__ = ()
    type = "function"
    _repr_defaults = {**BaseMessage._repr_defaults, "name": _REQUIRED}

    def __init__(self, content: Any = None, content_blocks: list | None = None, **kwargs: Any) -> None:
        if kwargs.get("name") is None:
            msg = "FunctionMessage: 'name' is required"
            raise ValueError(msg)
        super().__init__(content, content_blocks, **kwargs)


class RemoveMessage(BaseMessage):
    """Deletes the message with the same id when merged by `add_messages` (`type == "remove"`).

    `RemoveMessage(id="__remove_all__")` deletes every earlier message.

    Raises:
        ValueError: when a non-empty `content` is given.
    """

    __slots__ = ()
    type = "remove"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # (id, **kwargs), bound by a source-only function so that both builds raise
        # Python's own argument errors (a compiled signature words them differently)
        id, kwargs = remove_message_args(self, *args, **kwargs)
        if kwargs.pop("content", None):
            msg = "RemoveMessage does not support 'content' field."
            raise ValueError(msg)
        super().__init__("", id=id, **kwargs)


AnyMessage = Union[AIMessage, HumanMessage, SystemMessage, FunctionMessage, ToolMessage]
"""Any concrete message class that can appear in chat history (langchain-core's alias)."""

MessageLikeRepresentation = Union[BaseMessage, list[str], tuple[str, Any], str, dict[str, Any]]
"""What `convert_to_messages` accepts: a message, `(role, content)`, a str, or a dict."""


# --- coercion ----------------------------------------------------------------------

_LC_CONSTRUCTOR_TYPES = {
    "HumanMessage": "human",
    "HumanMessageChunk": "human",
    "AIMessage": "ai",
    "AIMessageChunk": "ai",
    "SystemMessage": "system",
    "SystemMessageChunk": "system",
    "FunctionMessage": "function",
    "FunctionMessageChunk": "function",
    "ToolMessage": "tool",
    "ToolMessageChunk": "tool",
    "RemoveMessage": "remove",
}
# class names of langchain-core's serialized constructor envelope -> message type


def _from_type(
    message_type: str,
    content: Any,
    name: str | None = None,
    tool_call_id: str | None = None,
    tool_calls: list | None = None,
    id: str | None = None,
    **additional_kwargs: Any,
) -> BaseMessage:
    # langchain-core's `_create_message_from_message_type`, producing lgembed classes:
    # unknown keys become additional_kwargs, a nested "additional_kwargs" is merged in
    kwargs: dict[str, Any] = {}
    if name is not None:
        kwargs["name"] = name
    if tool_call_id is not None:
        kwargs["tool_call_id"] = tool_call_id
    if additional_kwargs:
        response_metadata = additional_kwargs.pop("response_metadata", None)
        if response_metadata:
            kwargs["response_metadata"] = response_metadata
        kwargs["additional_kwargs"] = additional_kwargs
        additional_kwargs.update(additional_kwargs.pop("additional_kwargs", {}))
    if id is not None:
        kwargs["id"] = id
    if tool_calls is not None:
        calls = []
        for tc in tool_calls:
            if "function" in tc:  # OpenAI format
                args = tc["function"]["arguments"]
                if isinstance(args, str):
                    import json

                    args = json.loads(args, strict=False)
                calls.append(
                    {"name": tc["function"]["name"], "args": args, "id": tc["id"], "type": "tool_call"}
                )
            else:
                calls.append(tc)
        kwargs["tool_calls"] = calls
    if message_type in ("human", "user"):
        example = kwargs.get("additional_kwargs", {}).pop("example", False)
        if example:
            kwargs["example"] = example
        return HumanMessage(content=content, **kwargs)
    if message_type in ("ai", "assistant"):
        example = kwargs.get("additional_kwargs", {}).pop("example", False)
        if example:
            kwargs["example"] = example
        return AIMessage(content=content, **kwargs)
    if message_type in ("system", "developer"):
        if message_type == "developer":
            kwargs["additional_kwargs"] = kwargs.get("additional_kwargs") or {}
            kwargs["additional_kwargs"]["__openai_role__"] = "developer"
        return SystemMessage(content=content, **kwargs)
    if message_type == "function":
        return FunctionMessage(content=content, **kwargs)
    if message_type == "tool":
        artifact = kwargs.get("additional_kwargs", {}).pop("artifact", None)
        status = kwargs.get("additional_kwargs", {}).pop("status", None)
        if status is not None:
            kwargs["status"] = status
        return ToolMessage(content=content, artifact=artifact, **kwargs)
    if message_type == "remove":
        return RemoveMessage(**kwargs)
    msg = (
        f"Unexpected message type: '{message_type}'. Use one of 'human',"
        f" 'user', 'ai', 'assistant', 'function', 'tool', 'system', or 'developer'."
    )
    raise ValueError(msg + _COERCION_DOCS)


def convert_to_message(message: Any) -> Any:
    """One message-like value as a message (langchain-core's `_convert_to_message` rules).

    Messages (lgembed's, or langchain-core's when it is imported) are returned as they
    are; a str is a human message; a 2-sequence is `(role, content)`; a dict needs
    `"role"` (or `"type"`) and `"content"`, and its other keys become fields or
    `additional_kwargs`. Roles: human/user, ai/assistant, system/developer, tool,
    function, remove.

    Raises:
        ValueError: unknown role, or a dict without role/content (langchain-core's text).
        NotImplementedError: a sequence that is not a pair, or an unsupported type.
        KeyError: a tool message without `tool_call_id`.
    """
    if isinstance(message, BaseMessage) or is_lc_message(message):
        return message
    if isinstance(message, str):
        return _from_type("human", message)
    if isinstance(message, Sequence):
        try:
            role, template = message
        except ValueError as e:
            msg = "Message as a sequence must be (role string, template)"
            raise NotImplementedError(msg) from e
        return _from_type(role, template)
    if isinstance(message, dict):
        if (
            message.get("lc") == 1
            and message.get("type") == "constructor"
            and isinstance(message.get("id"), list)
            and message["id"]
            and isinstance(message.get("kwargs"), dict)
        ):
            mapped = _LC_CONSTRUCTOR_TYPES.get(message["id"][-1])
            if mapped is not None:
                return convert_to_message({"type": mapped, **message["kwargs"]})
        kw = message.copy()
        try:
            try:
                role = kw.pop("role")
            except KeyError:
                role = kw.pop("type")
            content = kw.pop("content") or ""
        except KeyError as e:
            msg = f"Message dict must contain 'role' and 'content' keys, got {message}"
            raise ValueError(msg + _COERCION_DOCS) from e
        return _from_type(role, content, **kw)
    msg = f"Unsupported message type: {type(message)}"
    raise NotImplementedError(msg + _COERCION_DOCS)


def convert_to_messages(messages: Any) -> list:
    """Each item of `messages` as a message (see `convert_to_message`).

    Raises:
        ValueError, NotImplementedError, KeyError: as `convert_to_message`.
    """
    return [convert_to_message(m) for m in messages]
