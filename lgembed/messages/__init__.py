"""Chat messages shaped like langchain-core's, without langchain-core.

The message classes and their conversions live in `_base`; `AIMessageChunk` and the
merge rules of streamed chunks in `_chunks` (which builds on `_base`). This package
re-exports both under langchain-core's names (`langchain_core.messages`).
"""

from __future__ import annotations

from lgembed.messages import _base
from lgembed.messages._base import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    FunctionMessage,
    HumanMessage,
    MessageLikeRepresentation,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
    convert_to_message,
    convert_to_messages,
    invalid_tool_call,
    is_lc_message,
    lc_messages_module,
    tool_call,
)
from lgembed.messages._chunks import AIMessageChunk

for _cls in (AIMessage, AIMessageChunk, BaseMessage, FunctionMessage, HumanMessage, RemoveMessage,
             SystemMessage, ToolMessage):
    _cls.__module__ = __name__  # the public home: reprs, serialization, user checks
del _cls

__all__ = (*_base.__all__, "AIMessageChunk")
