"""`stream_mode="messages"` for the messages nodes return (S-9).

LangGraph streams, besides chat-model tokens (lgembed has no chat-model callbacks),
every message object a node returns that was not already in its input: when a node
starts, the ids of the messages in its input state are remembered; when it finishes
without error, the messages found in its return value (a state update, a Command's
update, a list of those) that have not been seen are streamed as `(message,
metadata)`, metadata being the task's config metadata. A message without id gets a
new uuid4 id. One tap (one set of seen ids) serves a stream call and the subgraphs it
streams. Message dicts (`{"role": ...}`) are not message objects and are not streamed.

Imported only by runs that stream this mode.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import fields, is_dataclass
from typing import Any

from lgembed.messages import BaseMessage
from lgembed.types import Command

__all__ = ("MessageTap",)


def _message_types() -> tuple:
    lc = sys.modules.get("langchain_core.messages")
    return (BaseMessage, lc.BaseMessage) if lc is not None else (BaseMessage,)


def _state_values(obj: Any) -> Sequence[Any]:
    """Top-level field values of a state object (dict, pydantic model or dataclass)."""
    if isinstance(obj, dict):
        return list(obj.values())
    model_fields = getattr(type(obj), "model_fields", None)
    if isinstance(model_fields, dict) and hasattr(obj, "model_dump"):
        return [getattr(obj, k) for k in model_fields]
    if is_dataclass(obj) and not isinstance(obj, type):
        return [getattr(obj, f.name) for f in fields(obj)]
    return ()


class MessageTap:
    """The message ids a stream call has seen, and the messages a task returns."""

    __slots__ = ("seen", "kinds")

    def __init__(self) -> None:
        self.seen: set = set()
        self.kinds = _message_types()

    def mark_input(self, value: Any) -> None:
        """Remembers the ids of the messages in a starting task's input."""
        kinds = self.kinds
        for item in _state_values(value):
            if isinstance(item, kinds):
                if item.id is not None:
                    self.seen.add(item.id)
            elif isinstance(item, Sequence) and not isinstance(item, str):
                for message in item:
                    if isinstance(message, kinds) and message.id is not None:
                        self.seen.add(message.id)

    def returned(self, response: Any) -> list:
        """The not yet seen messages in a finished task's return value (marked seen now)."""
        found: list = []
        if isinstance(response, Command):
            self._find(response.update, found)
        elif isinstance(response, Sequence) and any(isinstance(v, Command) for v in response):
            for value in response:
                self._find(value.update if isinstance(value, Command) else value, found)
        else:
            self._find(response, found)
        return found

    def _find(self, response: Any, found: list) -> None:
        kinds = self.kinds
        if isinstance(response, kinds):
            self._take(response, found)
        elif isinstance(response, Sequence):
            for value in response:
                if isinstance(value, kinds):
                    self._take(value, found)
        else:
            for value in _state_values(response):
                if isinstance(value, kinds):
                    self._take(value, found)
                elif isinstance(value, Sequence):
                    for item in value:
                        if isinstance(item, kinds):
                            self._take(item, found)

    def _take(self, message: Any, found: list) -> None:
        if message.id in self.seen:
            return
        if message.id is None:
            from uuid import uuid4

            message.id = str(uuid4())
        self.seen.add(message.id)
        found.append(message)
