"""Constructors whose argument errors are part of the contract: always run from source.

Why a module of its own: langchain-core builds tool calls with keyword-only functions,
and a malformed tool call surfaces as Python's own TypeError about that function
("tool_call() missing 1 required keyword-only argument: 'id'"). `lgembed.messages._base`
is compiled by Cython in the compiled build, whose argument errors are worded
differently; these functions stay plain Python (not in `lgembed._engine.ENGINE`) so that
both builds raise the same texts.
"""

from __future__ import annotations

from typing import Any

__all__ = ("invalid_tool_call", "remove_message_args", "tool_call")


def tool_call(*, name: str, args: dict[str, Any], id: str | None) -> dict[str, Any]:
    """A tool call dict `{"name", "args", "id", "type": "tool_call"}` (langchain-core's shape).

    Raises:
        TypeError: when a field is missing or an unknown field is given.
    """
    return {"name": name, "args": args, "id": id, "type": "tool_call"}


def invalid_tool_call(
    *, name: str | None = None, args: str | None = None, id: str | None = None, error: str | None = None
) -> dict[str, Any]:
    """An invalid tool call dict (arguments that could not be parsed), langchain-core's shape.

    Raises:
        TypeError: when an unknown field is given.
    """
    return {"type": "invalid_tool_call", "id": id, "name": name, "args": args, "error": error}


def remove_message_args(self: Any, id: str, **kwargs: Any) -> tuple[str, dict[str, Any]]:
    """`RemoveMessage.__init__`'s arguments (id, extra fields), bound with Python's errors."""
    return id, kwargs


remove_message_args.__qualname__ = "RemoveMessage.__init__"
# named in Python's argument errors: "RemoveMessage.__init__() missing 1 required
# positional argument: 'id'", as langchain-core's constructor words them
