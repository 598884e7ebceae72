"""The `add_messages` reducer and `MessagesState` (docs/BEHAVIOUR.md §13 M-1, M-2).

Why here: LangGraph programs import both from `langgraph.graph.message` (and from
`langgraph.graph`); this module keeps that path.

Which message classes come out. A message object passed in (lgembed's own, or
langchain-core's when the program imported langchain-core) is kept as it is, except
that a langchain-core chunk becomes its full message (as LangGraph does). Values that
are not messages yet (dicts, `(role, content)` pairs, strings) become:

1. langchain-core messages if any message object in `left` or `right` is a
   langchain-core message;
2. otherwise lgembed messages if any message object in `left` or `right` is an
   lgembed message;
3. otherwise (only dicts/pairs/strings on both sides) langchain-core messages when
   `langchain_core.messages` is already imported, else lgembed messages.

Why: a program written against langchain-core gets LangGraph's exact objects (its
chat models and `isinstance` checks keep working), a program without it never pays
for the import, and a history never mixes the two kinds because of coercion.
Coercion into langchain-core classes uses langchain-core's own `convert_to_messages`.
"""

import os
from functools import partial
from itertools import count
from operator import attrgetter
from typing import Annotated, Any, TypedDict, Union

from lgembed.messages import (
    AIMessageChunk,
    AnyMessage,
    BaseMessage,
    MessageLikeRepresentation,
    convert_to_message,
    lc_messages_module,
)
from lgembed.messages._chunks import message_chunk_to_message

__all__ = ("add_messages", "MessagesState", "REMOVE_ALL_MESSAGES")

Messages = Union[list[MessageLikeRepresentation], MessageLikeRepresentation]
"""What either side of `add_messages` accepts: one message-like value or a list of them."""

REMOVE_ALL_MESSAGES = "__remove_all__"
"""Id of a `RemoveMessage` that deletes every message before it (M-1)."""


_RANDOM: list = [(b"", count(256))]
# random bytes read ahead for `_new_id` with a counter of the 16-byte slots handed out:
# one os.urandom call per 256 ids instead of a system call per message. `next()` on the
# counter is atomic, so two threads never get the same slot.


def _forget_random() -> None:
    # a forked child must not hand out its parent's ids
    _RANDOM[0] = (b"", count(256))


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_random)


def _new_id() -> str:
    # str(uuid.uuid4()) without importing uuid (which pulls in `platform`)
    while True:
        data, slots = _RANDOM[0]
        i = next(slots)
        if i < 256:
            break
        _RANDOM[0] = (os.urandom(4096), count())
    b = bytearray(data[i * 16 : i * 16 + 16])
    b[6] = (b[6] & 0x0F) | 0x40  # version 4
    b[8] = (b[8] & 0x3F) | 0x80  # RFC 4122 variant
    h = b.hex()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def add_messages(
    left: Messages | None = None,
    right: Messages | None = None,
    *,
    format: str | None = None,
) -> Any:
    """Merge two lists of messages, replacing messages of `left` by id (M-1).

    Both sides are coerced to lists of messages (a single value is a one-item list;
    dicts, `(role, content)` pairs and strings become messages; see the module
    docstring for which classes). Messages without an id get `str(uuid4())`, in
    place, on both sides. If `right` holds `RemoveMessage(id=REMOVE_ALL_MESSAGES)`,
    the result is what follows it. Otherwise a message of `right` whose id is in
    `left` replaces it at its position, a `RemoveMessage` deletes it, and other
    messages are appended.

    With neither side given, returns the reducer with `format` bound (so
    `Annotated[list, add_messages(format="langchain-openai")]` works).

    Args:
        left: The current messages.
        right: The update (a list of messages or a single one).
        format: None, or "langchain-openai" to convert the result with
            langchain-core's OpenAI formatting (needs langchain-core imported by
            the program; lgembed does not import it).

    Returns:
        A new list (the objects in it are those given, or coerced ones), or a
        `functools.partial` when called without `left` and `right`.

    Raises:
        ValueError: only one of `left`/`right` given; a `RemoveMessage` for an id
            not in `left`; an unknown `format`; a message that cannot be coerced.
        NotImplementedError, KeyError: a value that cannot be coerced (langchain-core's errors).
    """
    if left is not None and right is not None:
        return _add_messages(left, right, format=format)
    if left is not None or right is not None:
        # Why `if left`: LangGraph tests truthiness here, so add_messages([], None)
        # names 'right'; kept for identical texts.
        msg = (
            "Must specify non-null arguments for both 'left' and 'right'. Only "
            f"received: '{'left' if left else 'right'}'."
        )
        raise ValueError(msg)
    if format is None:
        return partial(_add_messages)
    return partial(_add_messages, format=format)


def _add_messages(left: Messages, right: Messages, *, format: str | None = None) -> list:
    # the merge itself; `add_messages()` returns it bound in a partial, and LangGraph's
    # partial repr names it `add_messages` (see the __name__ assignment below)
    if not isinstance(left, list):
        left = [left]
    if not isinstance(right, list):
        right = [right]
    lc = lc_messages_module()
    flavour: list = []  # [use_langchain_core], computed at most once, only when needed
    left = _coerce(left, left, right, lc, flavour)
    right = _coerce(right, left, right, lc, flavour)

    # Strategy: the common update appends new messages to a history whose messages all
    # have ids. Checked with C-level scans (no per-message Python loop over `left`):
    # then the result is `left + right`, which is what the general merge below returns
    # for it (no id of `right` is in `left` or repeated, nothing to remove).
    if None not in map(_get_id, left):
        fresh = True  # every message of `right` got a new id here (so none can match)
        for m in right:
            if m.id is None:
                m.id = _new_id()
            else:
                fresh = False
            if m.type == "remove":
                break
        else:
            if fresh or _all_new(left, right):
                merged = left + right
                if format:
                    merged = _format(merged, format)
                return merged

    remove_all_idx = None
    for m in left:
        if m.id is None:
            m.id = _new_id()
    for idx, m in enumerate(right):
        if m.id is None:
            m.id = _new_id()
        if m.type == "remove" and m.id == REMOVE_ALL_MESSAGES:
            remove_all_idx = idx
    if remove_all_idx is not None:
        return right[remove_all_idx + 1 :]

    merged = left.copy()
    index_by_id = {m.id: i for i, m in enumerate(merged)}
    ids_to_remove = set()
    for m in right:
        existing = index_by_id.get(m.id)
        if existing is not None:
            if m.type == "remove":
                ids_to_remove.add(m.id)
            else:
                ids_to_remove.discard(m.id)
                merged[existing] = m
        else:
            if m.type == "remove":
                msg = f"Attempting to delete a message with an ID that doesn't exist ('{m.id}')"
                raise ValueError(msg)
            index_by_id[m.id] = len(merged)
            merged.append(m)
    if ids_to_remove:
        merged = [m for m in merged if m.id not in ids_to_remove]

    if format:
        merged = _format(merged, format)
    return merged


def _format(merged: list, format: str) -> list:
    if format == "langchain-openai":
        return _format_openai(merged)
    msg = f"Unrecognized {format=}. Expected one of 'langchain-openai', None."
    raise ValueError(msg)


_get_id = attrgetter("id")


def _all_new(left: list, right: list) -> bool:
    """Whether the ids of `right` (all set) are distinct and none is in `left`."""
    ids = set(map(_get_id, right))
    if len(ids) != len(right):
        return False
    return ids.isdisjoint(map(_get_id, left))


_add_messages.__name__ = _add_messages.__qualname__ = "add_messages"


def _coerce(messages: list, left: list, right: list, lc: Any, flavour: list) -> list:
    # Fast path: a history is all plain messages, so check the few distinct types.
    types = set(map(type, messages))
    if types <= _PLAIN_TYPES:
        return messages
    if all(_is_plain_message_type(t, lc) for t in types):
        _PLAIN_TYPES.update(types)
        return messages
    out = []
    for m in messages:
        if isinstance(m, BaseMessage):
            out.append(message_chunk_to_message(m) if isinstance(m, AIMessageChunk) else m)
        elif lc is not None and isinstance(m, lc.BaseMessage):
            out.append(lc.message_chunk_to_message(m))
        else:
            if not flavour:
                flavour.append(_use_langchain_core(left, right, lc))
            if flavour[0]:
                out.append(lc.message_chunk_to_message(lc.convert_to_messages([m])[0]))
            else:
                out.append(convert_to_message(m))
    return out


_PLAIN_TYPES: set = set()
# message classes found plain (a message, not a chunk) once: that cannot change later


def _is_plain_message_type(t: type, lc: Any) -> bool:
    if issubclass(t, BaseMessage):
        return not issubclass(t, AIMessageChunk)  # a chunk becomes the message it completes
    return lc is not None and issubclass(t, lc.BaseMessage) and not issubclass(t, lc.BaseMessageChunk)


def _use_langchain_core(left: list, right: list, lc: Any) -> bool:
    # the rule of the module docstring
    if lc is None:
        return False
    for side in (left, right):
        for m in side:
            if isinstance(m, BaseMessage):
                return False
            if isinstance(m, lc.BaseMessage):
                return True
    return True


def _format_openai(messages: list) -> list:
    lc = lc_messages_module()
    convert = getattr(lc, "convert_to_openai_messages", None) if lc is not None else None
    if convert is None:
        import warnings

        msg = (
            "format='langchain-openai' needs langchain-core>=0.3.11 imported by the program "
            "(lgembed never imports it): import langchain_core.messages or remove the "
            "'format' flag. Returning un-formatted messages."
        )
        warnings.warn(msg, stacklevel=3)
        return list(messages)
    as_lc = [_to_lc(m, lc) if isinstance(m, BaseMessage) else m for m in messages]
    return lc.convert_to_messages(convert(as_lc))


def _to_lc(m: BaseMessage, lc: Any) -> Any:
    # an lgembed message as the langchain-core class of the same name
    return getattr(lc, type(m).__name__)(**m.model_dump())


class MessagesState(TypedDict):
    """State with a `messages` list merged by `add_messages` (M-2)."""

    messages: Annotated[list[AnyMessage], add_messages]

