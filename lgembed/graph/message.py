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


_IDS: list = [((), count(128))]
# ids made ahead by `_new_id`, 128 per os.urandom call, and a counter of those handed
# out; `next()` on the counter is atomic, so two threads never get the same id.

_VERSION_4 = bytes((b & 0x0F) | 0x40 for b in range(256))
_VARIANT_RFC4122 = bytes((b & 0x3F) | 0x80 for b in range(256))
# byte maps setting the version (byte 6) and variant (byte 8) bits of a uuid4


def _forget_ids() -> None:
    # a forked child must not hand out its parent's ids
    _IDS[0] = ((), count(128))


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_ids)


def _new_id() -> str:
    """`str(uuid.uuid4())` without importing uuid (which pulls in `platform`)."""
    batch = _IDS[0]  # (ids, counter): one read, so a concurrent refill cannot mix two
    i = next(batch[1])
    if i < 128:
        return batch[0][i]
    raw = bytearray(os.urandom(16 * 128))
    raw[6::16] = raw[6::16].translate(_VERSION_4)
    raw[8::16] = raw[8::16].translate(_VARIANT_RFC4122)
    t = raw.hex()
    ids = [
        f"{t[o : o + 8]}-{t[o + 8 : o + 12]}-{t[o + 12 : o + 16]}-{t[o + 16 : o + 20]}-{t[o + 20 : o + 32]}"
        for o in range(0, 32 * 128, 32)
    ]
    _IDS[0] = (ids, count(1))  # concurrent callers that come here too each make their own
    return ids[0]


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
    global _LAST_APPEND
    if not isinstance(left, list):
        left = [left]
    if not isinstance(right, list):
        right = [right]
    lc = lc_messages_module()
    flavour: list = []  # [use_langchain_core], computed at most once, only when needed
    left_ids = _known_ids(left)
    if left_ids is None:
        left = _coerce(left, left, right, lc, flavour)
    elif format is None:
        repeat = _LAST_APPEND
        if right is repeat[1] and left is repeat[0] and right == repeat[2]:
            # the same append again (the step's writes merged for a router's fresh read,
            # then applied): the same result, as a new list
            return _remember(left + right, repeat[3])
    right = _coerce(right, left, right, lc, flavour)

    # Strategy: the common update appends new messages to a history whose messages all
    # have ids; then the result is `left + right`, which is what the general merge below
    # returns for it (no id of `right` is in `left` or repeated, nothing to remove).
    # `left`'s ids come from the memo of recent results (no pass over it), else from one
    # C-level pass (no per-message Python loop).
    if left_ids is None:
        left_ids = list(map(_get_id, left))
        if None in left_ids:
            left_ids = None
    if left_ids is not None:
        fresh = True  # every message of `right` got a new id here (so none can match)
        for m in right:
            if m.id is None:
                m.id = _new_id()
            else:
                fresh = False
            if m.type == "remove":
                break
        else:
            if fresh or _all_new(left_ids, right):
                merged = left + right
                if format:
                    return _format(merged, format)
                ids = set(left_ids)
                ids.update(map(_get_id, right))
                _LAST_APPEND = (left, right, right.copy(), ids)
                return _remember(merged, ids)

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
        return _format(merged, format)
    return _remember(merged, index_by_id.keys() - ids_to_remove)


_RECENT: tuple = (None, None, None, None, None, None)
# The memo of the last two merges' results: (list, copy of it, set of its ids) twice.
# Their messages are plain message objects (coerced) whose ids are all set, so when a
# merge gets one of those lists back as `left` (a channel's value: the common case; two
# because a router's fresh read merges the step's writes once more) and it still holds
# the same objects (`==` against the copy: an element-wise identity check in C), `left`
# needs no coercion scan and its ids are known. Process-wide: merges of other threads or
# graphs in between only cost the scan. It keeps two histories alive until the next
# merges. Deviation (docs/BEHAVIOUR.md M-1): an id assigned in place (`msg.id = ...`) to a
# message of such a list is not seen by the next merge.


_LAST_APPEND: tuple = (None, None, None, None)
# (left, right, copy of right, ids of the result) of the last merge that appended `right`
# to a `left` of the memo above: a merge of the same two lists, unchanged, appends again.


def _known_ids(left: list) -> Any:
    recent = _RECENT
    if left is recent[0] and left == recent[1]:
        return recent[2]
    if left is recent[3] and left == recent[4]:
        return recent[5]
    return None


def _remember(merged: list, ids: set) -> list:
    global _RECENT
    recent = _RECENT
    _RECENT = (merged, merged.copy(), ids, recent[0], recent[1], recent[2])
    return merged


def _format(merged: list, format: str) -> list:
    if format == "langchain-openai":
        return _format_openai(merged)
    msg = f"Unrecognized {format=}. Expected one of 'langchain-openai', None."
    raise ValueError(msg)


_get_id = attrgetter("id")


def _all_new(left_ids: Any, right: list) -> bool:
    """Whether the ids of `right` (all set) are distinct and none is in `left_ids`."""
    ids = set(map(_get_id, right))
    if len(ids) != len(right):
        return False
    return ids.isdisjoint(left_ids)


_add_messages.__name__ = _add_messages.__qualname__ = "add_messages"


def _coerce(messages: list, left: list, right: list, lc: Any, flavour: list) -> list:
    # Fast path: a history is all plain messages, so check the few distinct types.
    if len(messages) == 1 and type(messages[0]) in _PLAIN_TYPES:
        return messages  # the usual update
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

