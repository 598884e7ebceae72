"""`stream_mode="messages"`: the messages nodes return (S-9) and chat-model tokens.

LangGraph streams chat-model tokens through langchain-core callbacks; lgembed has no
callbacks, so a model that streams (lgembed.models.ChatOpenAI) asks `model_stream()` for
the running task's sink and emits its `AIMessageChunk`s there itself (see below).

LangGraph also streams every message object a node returns that was not already in its input: when a node
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

__all__ = ("MessageTap", "ModelStream", "model_stream")


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


# --- chat-model tokens ---------------------------------------------------------------------

_NOT_COPIED = ("checkpoint_id", "checkpoint_ns", "checkpoint_map", "api_key")
# configurable keys langchain-core does not copy into a model run's metadata (checkpoint_ns
# is set from the root task instead, checkpoint_id/map are not in a task's configurable)


class ModelStream:
    """Where a chat model running inside a task sends its chunks (LangGraph's
    StreamMessagesHandler.on_llm_new_token, for one model call).

    `emit(chunk)` streams `(chunk, metadata)` in the task's namespace and marks the chunk's
    id seen, so the final message the node returns (same id) is not streamed again.
    """

    __slots__ = ("run", "tap", "metadata")

    def __init__(self, run: Any, metadata: dict) -> None:
        self.run = run
        self.tap = run.message_tap()
        self.metadata = metadata

    def emit(self, chunk: Any) -> None:
        """Streams one chunk (thread-safe: the run's sink is a deque append)."""
        if chunk.id is not None:
            self.tap.seen.add(chunk.id)
        self.run.emit_from(self.run.ns, "messages", (chunk, self.metadata))

    def done(self, message: Any) -> None:
        """The call finished: its final message counts as seen (LangGraph's on_llm_end dedupe)."""
        if message.id is not None:
            self.tap.seen.add(message.id)


def model_stream(tags: Any, ls_params: dict) -> ModelStream | None:
    """The running task's messages sink for a chat-model call, or None.

    None when no task is running, when the run does not stream `messages`, or when
    the model's tags include `nostream` (TAG_NOSTREAM), as in LangGraph.

    Args:
        tags: the model's tags (`with_config(tags=...)` plus the call config's tags).
        ls_params: the model's `ls_*` metadata (provider, model name, temperature...).
    """
    from lgembed.config import _current_task
    from lgembed.constants import TAG_NOSTREAM

    task = _current_task()
    if task is None:
        return None
    run = task.run
    if "messages" not in run.modes:
        return None
    if tags and TAG_NOSTREAM in tags:
        return None
    config = task.config
    metadata: dict = {}
    for key, value in (config.get("configurable") or {}).items():
        if (
            not key.startswith("__")
            and key not in _NOT_COPIED
            and isinstance(value, (str, int, float, bool))
        ):
            metadata[key] = value
    metadata["ls_integration"] = "langchain_chat_model"
    for key, value in (config.get("metadata") or {}).items():
        if key != "ls_integration":
            metadata[key] = value
    task_ns = metadata.get("langgraph_checkpoint_ns")
    if isinstance(task_ns, str):
        # the root task's namespace: langchain-core copies it into metadata once, at the
        # outermost graph, and nested configs do not overwrite it
        metadata["checkpoint_ns"] = task_ns.split("|", 1)[0]
    metadata.update(ls_params)
    user_tags = [t for t in (tags or ()) if not t.startswith("seq:step")]
    if user_tags:
        metadata["tags"] = user_tags
    return ModelStream(run, metadata)
