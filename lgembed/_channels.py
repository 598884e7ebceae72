"""Channels: the per-key state containers of a graph run (docs/BEHAVIOUR.md §2, C-1..C-11).

Why this module exists: channel `update`/`get`/`checkpoint` are called for every
written key in every superstep, so this is the hottest code of the engine. It is the
pure-Python source of both builds: the build compiles this very file in place with
Cython, typed by `lgembed/_channels.pxd` beside it (docs/DESIGN.md §3), and
`lgembed._engine` picks the build. Users import the classes from `lgembed.channels`.

Rules for code in this file, so that both builds behave identically:
- Plain Python only; annotations are documentation (the build turns Cython's
  annotation typing off, see setup.py).
- Names that the `.pxd` declares `cdef` (imported constants, `_PLAIN`, the `_*_LIKE`
  tuples and the `_`-prefixed helper functions) are not module attributes of the
  compiled module, so none of them may be listed in `__all__` or used from outside.
- Behaviour, method names and error texts are LangGraph 1.2's; the texts come from
  `lgembed.errors` templates.

Why one file over 600 lines: each hot module becomes one extension module, and these
are nine small classes that mirror LangGraph's one to one (most of the length is
their per-class properties and docstrings); splitting them would add a compiled
module and cross-module calls for no gain in clarity.

Two lgembed-only class attributes let the engine avoid calling every channel each
step (LangGraph calls `update([])` on every available channel and `finish()` on every
channel):
- `_lg_clears_on_empty`: True when `update([])` can change the channel.
- `_lg_finishes`: True when `finish()` can change the channel.
- `_lg_consumes`: True when `consume()` can change the channel.
The first two default to True on `BaseChannel`; `_lg_consumes` defaults to False
there, as `BaseChannel.consume` changes nothing. A subclass that overrides `update`,
`finish` or `consume` without setting the matching flag gets True again, so user
channels stay correct without knowing about the flags.

Another, `_lg_kind`, names the two channel kinds the engine's kernels read and write
directly instead of through their methods (their whole state is the `value` slot,
`MISSING` when empty): 1 for `LastValue`, 2 for `EphemeralValue`, 0 for every other
class, and for every subclass that does not state its own.
"""

from __future__ import annotations

import collections.abc
import sys
import typing
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, Generic, TypeVar

from lgembed._constants import OVERWRITE
from lgembed._typing import MISSING
from lgembed.errors import (
    BARRIER_VALUE,
    CONCURRENT_UPDATE,
    DOUBLE_OVERWRITE,
    GUARD_UPDATE,
    EmptyChannelError,
    InvalidUpdateError,
)
from lgembed.types import Overwrite

__all__ = (
    "AnyValue",
    "BaseChannel",
    "BinaryOperatorAggregate",
    "EphemeralValue",
    "LastValue",
    "LastValueAfterFinish",
    "NamedBarrierValue",
    "NamedBarrierValueAfterFinish",
    "Topic",
    "UntrackedValue",
)

Value = TypeVar("Value")
Update = TypeVar("Update")
Checkpoint = TypeVar("Checkpoint")

_PLAIN = object()
# returned by _overwritten() for a write that is not an Overwrite
_LIST_LIKE = (collections.abc.Sequence, collections.abc.MutableSequence)
_SET_LIKE = (collections.abc.Set, collections.abc.MutableSet)
_DICT_LIKE = (collections.abc.Mapping, collections.abc.MutableMapping)
# C-7: abstract collections (not instantiable) and the concrete type used instead


def _required_forms() -> tuple:
    """`Required`/`NotRequired` special forms of `typing` and, if loaded, `typing_extensions`.

    Why at call time: `typing.Required` is 3.11+, and on 3.10 TypedDicts use the
    `typing_extensions` forms; we never import `typing_extensions` ourselves.
    """
    forms = [getattr(typing, "Required", None), getattr(typing, "NotRequired", None)]
    extensions = sys.modules.get("typing_extensions")
    if extensions is not None:
        forms.append(getattr(extensions, "Required", None))
        forms.append(getattr(extensions, "NotRequired", None))
    return tuple(form for form in forms if form is not None)


def _strip_extras(t: Any) -> Any:
    """Strips `Annotated`, `Required`, `NotRequired` and generic arguments from `t` (C-7).

    Mirrors LangGraph: anything with an `__origin__` is replaced by its origin, except
    `Required[X]`/`NotRequired[X]`, which are replaced by `X`.
    """
    if hasattr(t, "__origin__"):
        if t.__origin__ in _required_forms():
            return _strip_extras(t.__args__[0])
        return _strip_extras(t.__origin__)
    return t


def _initial_value(typ: Any) -> Any:
    """The value a BinaryOperatorAggregate of `typ` starts with: `T()`, or MISSING (C-7)."""
    typ = _strip_extras(typ)
    if typ in _LIST_LIKE:
        typ = list
    if typ in _SET_LIKE:
        typ = set
    if typ in _DICT_LIKE:
        typ = dict
    try:
        return typ()
    except Exception:  # noqa: BLE001 - C-7: any failure of T() means "start empty"
        return MISSING


def _overwritten(value: Any) -> Any:
    """The value an Overwrite write carries, or `_PLAIN` for an ordinary write (C-7).

    Recognised forms, as in LangGraph: an `Overwrite` instance, the single-key dict
    `{"__overwrite__": v}` and the JSON-erased `{"type": "__overwrite__", "value": v}`.
    """
    if isinstance(value, Overwrite):
        return value.value
    if isinstance(value, dict):
        if len(value) == 1 and OVERWRITE in value:
            return value[OVERWRITE]
        if value.get("type") == OVERWRITE and "value" in value:
            return value["value"]
    return _PLAIN


def _operators_equal(a: Any, b: Any) -> bool:
    """LangGraph's reducer equality: any pairing with a lambda is equal, else identity.

    Why `__name__` without a default: LangGraph reads it unguarded, so a reducer without
    `__name__` (a `functools.partial`) raises AttributeError there too.
    """
    if a.__name__ == "<lambda>" or b.__name__ == "<lambda>":
        return True
    return a is b


def _flatten(values: Sequence[Any]) -> list:
    """The writes of one step with list writes spliced in, one level deep (C-6)."""
    items = []
    for value in values:
        if isinstance(value, list):
            items.extend(value)
        else:
            items.append(value)
    return items


class BaseChannel(Generic[Value, Update, Checkpoint], ABC):  # noqa: PYI059 - LangGraph's MRO
    """Base class for all channels.

    Subclasses implement `ValueType`, `UpdateType`, `from_checkpoint`, `get` and
    `update`; the other methods have working defaults.

    Attributes:
        typ: the type given to the constructor.
        key: the channel's name in its graph; set by the graph builder ("" until then).
    """

    __slots__ = ("key", "typ")

    _lg_clears_on_empty = True
    """lgembed: True if `update([])` can change this channel (unknown channels: True)."""
    _lg_finishes = True
    """lgembed: True if `finish()` can change this channel (unknown channels: True)."""
    _lg_consumes = False
    """lgembed: True if `consume()` can change this channel (True for a class that defines it)."""
    _lg_kind = 0
    """lgembed: 1 (exact LastValue) or 2 (exact EphemeralValue) when the kernels may use
    the `value` slot directly; 0 otherwise."""

    def __init__(self, typ: Any, key: str = "") -> None:
        self.typ = typ
        self.key = key

    @classmethod
    def __init_subclass__(cls, **kwargs: Any) -> None:
        # Why: a subclass that changes update()/finish() may change what they do, so
        # it gets the safe flag value unless it states its own.
        super().__init_subclass__(**kwargs)
        namespace = cls.__dict__
        if "update" in namespace and "_lg_clears_on_empty" not in namespace:
            cls._lg_clears_on_empty = True
        if "finish" in namespace and "_lg_finishes" not in namespace:
            cls._lg_finishes = True
        if "consume" in namespace and "_lg_consumes" not in namespace:
            cls._lg_consumes = True
        if "_lg_kind" not in namespace:
            cls._lg_kind = 0  # a subclass may change what `value` means

    @property
    @abstractmethod
    def ValueType(self) -> Any:
        """The type of the value stored in the channel."""

    @property
    @abstractmethod
    def UpdateType(self) -> Any:
        """The type of the update received by the channel."""

    def copy(self) -> BaseChannel:
        """Returns a copy of the channel (by default via `checkpoint()`/`from_checkpoint()`)."""
        return self.from_checkpoint(self.checkpoint())

    def checkpoint(self) -> Any:
        """Returns a serializable snapshot of the channel, or MISSING when there is none.

        The snapshot may be the channel's live value: serialize it before the channel
        is updated again.
        """
        try:
            return self.get()
        except EmptyChannelError:
            return MISSING

    @abstractmethod
    def from_checkpoint(self, checkpoint: Any) -> BaseChannel:
        """Returns a new channel with this one's configuration, restored from `checkpoint`.

        Args:
            checkpoint: a value returned by `checkpoint()`, or MISSING for an empty channel.
        """

    @abstractmethod
    def get(self) -> Any:
        """Returns the current value.

        Raises:
            EmptyChannelError: the channel holds no value.
        """

    def is_available(self) -> bool:
        """Returns True if `get()` would return a value."""
        try:
            self.get()
            return True
        except EmptyChannelError:
            return False

    @abstractmethod
    def update(self, values: Sequence[Any]) -> bool:
        """Applies one step's writes (possibly none) to the channel.

        Args:
            values: the writes of one superstep, in task order.

        Returns:
            True if the channel changed.

        Raises:
            InvalidUpdateError: the set of writes is invalid for this channel.
        """

    def consume(self) -> bool:
        """Notifies the channel that a task subscribed to it ran; returns True if it changed."""
        return False

    def finish(self) -> bool:
        """Notifies the channel that the run is about to end; returns True if it changed."""
        return False


class LastValue(BaseChannel[Value, Value, Value]):
    """Stores the last value received; at most one value per step (C-1)."""

    __slots__ = ("value",)

    _lg_clears_on_empty = False
    _lg_finishes = False
    _lg_kind = 1

    def __init__(self, typ: Any, key: str = "") -> None:
        self.typ = typ
        self.key = key
        self.value = MISSING

    def __eq__(self, value: object) -> bool:
        return isinstance(value, LastValue)

    @property
    def ValueType(self) -> Any:
        """The type of the value stored in the channel."""
        return self.typ

    @property
    def UpdateType(self) -> Any:
        """The type of the update received by the channel."""
        return self.typ

    def copy(self) -> LastValue:
        """Returns a copy of the channel."""
        empty = self.__class__(self.typ, self.key)
        empty.value = self.value
        return empty

    def from_checkpoint(self, checkpoint: Any) -> LastValue:
        empty = self.__class__(self.typ, self.key)
        if checkpoint is not MISSING:
            empty.value = checkpoint
        return empty

    def update(self, values: Sequence[Any]) -> bool:
        """Stores the step's single write.

        Raises:
            InvalidUpdateError: more than one write in the step.
        """
        n = len(values)
        if n == 1:
            self.value = values[0]
            return True
        if n == 0:
            return False
        raise InvalidUpdateError(CONCURRENT_UPDATE.format(key=self.key))

    def get(self) -> Any:
        """Returns the stored value.

        Raises:
            EmptyChannelError: nothing was written yet.
        """
        if self.value is MISSING:
            raise EmptyChannelError()
        return self.value

    def is_available(self) -> bool:
        return self.value is not MISSING

    def checkpoint(self) -> Any:
        return self.value


class LastValueAfterFinish(BaseChannel[Value, Value, tuple[Value, bool]]):
    """Stores the last value received, readable only after `finish()` (C-2).

    Trigger channel of deferred nodes: `consume()` clears a finished value.
    """

    __slots__ = ("finished", "value")

    _lg_clears_on_empty = False
    _lg_finishes = True

    def __init__(self, typ: Any, key: str = "") -> None:
        self.typ = typ
        self.key = key
        self.value = MISSING
        self.finished = False

    def __eq__(self, value: object) -> bool:
        return isinstance(value, LastValueAfterFinish)

    @property
    def ValueType(self) -> Any:
        """The type of the value stored in the channel."""
        return self.typ

    @property
    def UpdateType(self) -> Any:
        """The type of the update received by the channel."""
        return self.typ

    def checkpoint(self) -> Any:
        if self.value is MISSING:
            return MISSING
        return (self.value, self.finished)

    def from_checkpoint(self, checkpoint: Any) -> LastValueAfterFinish:
        empty = self.__class__(self.typ)
        empty.key = self.key
        if checkpoint is not MISSING:
            empty.value, empty.finished = checkpoint
        return empty

    def update(self, values: Sequence[Any]) -> bool:
        if len(values) == 0:
            return False
        self.finished = False
        self.value = values[-1]
        return True

    def consume(self) -> bool:
        if self.finished:
            self.finished = False
            self.value = MISSING
            return True
        return False

    def finish(self) -> bool:
        if not self.finished and self.value is not MISSING:
            self.finished = True
            return True
        return False

    def get(self) -> Any:
        """Returns the stored value once the run has finished.

        Raises:
            EmptyChannelError: nothing was written, or `finish()` has not been called.
        """
        if self.value is MISSING or not self.finished:
            raise EmptyChannelError()
        return self.value

    def is_available(self) -> bool:
        return self.value is not MISSING and self.finished


class AnyValue(BaseChannel[Value, Value, Value]):
    """Stores the last of the step's values; a step without writes clears it (C-3)."""

    __slots__ = ("value",)

    _lg_clears_on_empty = True
    _lg_finishes = False

    def __init__(self, typ: Any, key: str = "") -> None:
        self.typ = typ
        self.key = key
        self.value = MISSING

    def __eq__(self, value: object) -> bool:
        return isinstance(value, AnyValue)

    @property
    def ValueType(self) -> Any:
        """The type of the value stored in the channel."""
        return self.typ

    @property
    def UpdateType(self) -> Any:
        """The type of the update received by the channel."""
        return self.typ

    def copy(self) -> AnyValue:
        """Returns a copy of the channel."""
        empty = self.__class__(self.typ, self.key)
        empty.value = self.value
        return empty

    def from_checkpoint(self, checkpoint: Any) -> AnyValue:
        empty = self.__class__(self.typ, self.key)
        if checkpoint is not MISSING:
            empty.value = checkpoint
        return empty

    def update(self, values: Sequence[Any]) -> bool:
        if len(values) == 0:
            if self.value is MISSING:
                return False
            self.value = MISSING
            return True
        self.value = values[-1]
        return True

    def get(self) -> Any:
        """Returns the stored value.

        Raises:
            EmptyChannelError: the channel is empty.
        """
        if self.value is MISSING:
            raise EmptyChannelError()
        return self.value

    def is_available(self) -> bool:
        return self.value is not MISSING

    def checkpoint(self) -> Any:
        return self.value


class EphemeralValue(BaseChannel[Value, Value, Value]):
    """Holds the value written in the previous step only (C-4).

    Args:
        typ: the value type.
        guard: if True, more than one write in a step is an error.
    """

    __slots__ = ("guard", "value")

    _lg_clears_on_empty = True
    _lg_finishes = False
    _lg_kind = 2

    def __init__(self, typ: Any, guard: bool = True) -> None:
        self.typ = typ
        self.key = ""
        self.guard = guard
        self.value = MISSING

    def __eq__(self, value: object) -> bool:
        return isinstance(value, EphemeralValue) and value.guard == self.guard

    @property
    def ValueType(self) -> Any:
        """The type of the value stored in the channel."""
        return self.typ

    @property
    def UpdateType(self) -> Any:
        """The type of the update received by the channel."""
        return self.typ

    def copy(self) -> EphemeralValue:
        """Returns a copy of the channel."""
        empty = self.__class__(self.typ, self.guard)
        empty.key = self.key
        empty.value = self.value
        return empty

    def from_checkpoint(self, checkpoint: Any) -> EphemeralValue:
        empty = self.__class__(self.typ, self.guard)
        empty.key = self.key
        if checkpoint is not MISSING:
            empty.value = checkpoint
        return empty

    def update(self, values: Sequence[Any]) -> bool:
        """Stores the step's write, or clears the value when there is none.

        Raises:
            InvalidUpdateError: `guard` is set and the step has more than one write.
        """
        n = len(values)
        if n == 0:
            if self.value is not MISSING:
                self.value = MISSING
                return True
            return False
        if n != 1 and self.guard:
            raise InvalidUpdateError(GUARD_UPDATE.format(key=self.key, kind="EphemeralValue"))
        self.value = values[-1]
        return True

    def get(self) -> Any:
        """Returns the stored value.

        Raises:
            EmptyChannelError: the channel is empty.
        """
        if self.value is MISSING:
            raise EmptyChannelError()
        return self.value

    def is_available(self) -> bool:
        return self.value is not MISSING

    def checkpoint(self) -> Any:
        return self.value


class UntrackedValue(BaseChannel[Value, Value, Value]):
    """Stores the last value received and is never checkpointed (C-5).

    Args:
        typ: the value type.
        guard: if True, more than one write in a step is an error.
    """

    __slots__ = ("guard", "value")

    _lg_clears_on_empty = False
    _lg_finishes = False

    def __init__(self, typ: Any, guard: bool = True) -> None:
        self.typ = typ
        self.key = ""
        self.guard = guard
        self.value = MISSING

    def __eq__(self, value: object) -> bool:
        return isinstance(value, UntrackedValue) and value.guard == self.guard

    @property
    def ValueType(self) -> Any:
        """The type of the value stored in the channel."""
        return self.typ

    @property
    def UpdateType(self) -> Any:
        """The type of the update received by the channel."""
        return self.typ

    def copy(self) -> UntrackedValue:
        """Returns a copy of the channel."""
        empty = self.__class__(self.typ, self.guard)
        empty.key = self.key
        empty.value = self.value
        return empty

    def checkpoint(self) -> Any:
        return MISSING

    def from_checkpoint(self, checkpoint: Any) -> UntrackedValue:
        empty = self.__class__(self.typ, self.guard)
        empty.key = self.key
        return empty

    def update(self, values: Sequence[Any]) -> bool:
        """Stores the step's write.

        Raises:
            InvalidUpdateError: `guard` is set and the step has more than one write.
        """
        n = len(values)
        if n == 0:
            return False
        if n != 1 and self.guard:
            raise InvalidUpdateError(GUARD_UPDATE.format(key=self.key, kind="UntrackedValue"))
        self.value = values[-1]
        return True

    def get(self) -> Any:
        """Returns the stored value.

        Raises:
            EmptyChannelError: nothing was written yet.
        """
        if self.value is MISSING:
            raise EmptyChannelError()
        return self.value

    def is_available(self) -> bool:
        return self.value is not MISSING


class Topic(BaseChannel[Sequence[Value], Value | list[Value], list[Value]]):
    """A pub/sub topic: collects the writes of a step, list writes spliced in (C-6).

    Args:
        typ: the type of one value.
        accumulate: if False, every step (even one without writes) starts empty.
    """

    __slots__ = ("accumulate", "values")

    _lg_finishes = False

    def __init__(self, typ: Any, accumulate: bool = False) -> None:
        self.typ = typ
        self.key = ""
        self.accumulate = accumulate
        self.values = []

    @property
    def _lg_clears_on_empty(self) -> bool:
        """lgembed: a non-accumulating topic is emptied by a step without writes."""
        return not self.accumulate

    def __eq__(self, value: object) -> bool:
        return isinstance(value, Topic) and value.accumulate == self.accumulate

    @property
    def ValueType(self) -> Any:
        """The type of the value stored in the channel."""
        return collections.abc.Sequence[self.typ]

    @property
    def UpdateType(self) -> Any:
        """The type of the update received by the channel."""
        return self.typ | list[self.typ]

    def copy(self) -> Topic:
        """Returns a copy of the channel."""
        empty = self.__class__(self.typ, self.accumulate)
        empty.key = self.key
        empty.values = self.values.copy()
        return empty

    def checkpoint(self) -> Any:
        return self.values

    def from_checkpoint(self, checkpoint: Any) -> Topic:
        empty = self.__class__(self.typ, self.accumulate)
        empty.key = self.key
        if checkpoint is not MISSING:
            if isinstance(checkpoint, tuple):
                # LangGraph's older checkpoint shape (values at index 1)
                empty.values = checkpoint[1]
            else:
                empty.values = checkpoint
        return empty

    def update(self, values: Sequence[Any]) -> bool:
        items = _flatten(values)
        if not self.accumulate:
            updated = bool(self.values)
            self.values = items
            return updated or bool(items)
        if items:
            self.values.extend(items)
            return True
        return False

    def get(self) -> Any:
        """Returns a new list of the collected values.

        Raises:
            EmptyChannelError: no values.
        """
        if self.values:
            return list(self.values)
        raise EmptyChannelError()

    def is_available(self) -> bool:
        return bool(self.values)


class BinaryOperatorAggregate(BaseChannel[Value, Value, Value]):
    """Folds each write into the value with a binary operator (a reducer, C-7).

    Args:
        typ: the value type; `typ()` (after C-7's normalisation) is the initial value,
            or the channel starts empty if that raises.
        operator: `(current, write) -> new value`.
    """

    __slots__ = ("operator", "value")

    _lg_clears_on_empty = False
    _lg_finishes = False

    def __init__(self, typ: Any, operator: Any) -> None:
        self.typ = typ
        self.key = ""
        self.operator = operator
        self.value = _initial_value(typ)

    def __eq__(self, value: object) -> bool:
        return isinstance(value, BinaryOperatorAggregate) and _operators_equal(self.operator, value.operator)

    @property
    def ValueType(self) -> Any:
        """The type of the value stored in the channel."""
        return self.typ

    @property
    def UpdateType(self) -> Any:
        """The type of the update received by the channel."""
        return self.typ

    def copy(self) -> BinaryOperatorAggregate:
        """Returns a copy of the channel."""
        cls = self.__class__
        if cls is BinaryOperatorAggregate:
            # the fields copied as they are: __init__ would compute the initial value
            # `T()` only to overwrite it (a router's local read copies the channel)
            empty = object.__new__(cls)
            empty.typ = self.typ
            empty.key = self.key
            empty.operator = self.operator
            empty.value = self.value
            return empty
        empty = cls(self.typ, self.operator)
        empty.key = self.key
        empty.value = self.value
        return empty

    def from_checkpoint(self, checkpoint: Any) -> BinaryOperatorAggregate:
        empty = self.__class__(self.typ, self.operator)
        empty.key = self.key
        if checkpoint is not MISSING:
            empty.value = checkpoint
        return empty

    def update(self, values: Sequence[Any]) -> bool:
        """Reduces the step's writes into the value, honouring one Overwrite per step.

        An empty channel takes its first write verbatim (even an Overwrite object, as
        LangGraph does). After an Overwrite, the step's later plain writes are ignored.

        Raises:
            InvalidUpdateError: a second Overwrite in the same step.
        """
        if not values:
            return False
        if self.value is MISSING:
            self.value = values[0]
            values = values[1:]
        seen_overwrite = False
        for value in values:
            replacement = _overwritten(value)
            if replacement is _PLAIN:
                if not seen_overwrite:
                    self.value = self.operator(self.value, value)
            elif seen_overwrite:
                raise InvalidUpdateError(DOUBLE_OVERWRITE)
            else:
                self.value = replacement
                seen_overwrite = True
        return True

    def get(self) -> Any:
        """Returns the value.

        Raises:
            EmptyChannelError: the channel started empty and nothing was written.
        """
        if self.value is MISSING:
            raise EmptyChannelError()
        return self.value

    def is_available(self) -> bool:
        return self.value is not MISSING

    def checkpoint(self) -> Any:
        return self.value


class NamedBarrierValue(BaseChannel[Value, Value, set[Value]]):
    """A join: available (value None) once every name in `names` was written (C-8).

    Args:
        typ: the type of the names.
        names: the names to wait for.
    """

    __slots__ = ("names", "seen")

    _lg_clears_on_empty = False
    _lg_finishes = False

    def __init__(self, typ: Any, names: Any) -> None:
        self.typ = typ
        self.key = ""
        self.names = names
        self.seen = set()

    def __eq__(self, value: object) -> bool:
        return isinstance(value, NamedBarrierValue) and value.names == self.names

    @property
    def ValueType(self) -> Any:
        """The type of the value stored in the channel."""
        return self.typ

    @property
    def UpdateType(self) -> Any:
        """The type of the update received by the channel."""
        return self.typ

    def copy(self) -> NamedBarrierValue:
        """Returns a copy of the channel."""
        empty = self.__class__(self.typ, self.names)
        empty.key = self.key
        empty.seen = self.seen.copy()
        return empty

    def checkpoint(self) -> Any:
        return self.seen

    def from_checkpoint(self, checkpoint: Any) -> NamedBarrierValue:
        empty = self.__class__(self.typ, self.names)
        empty.key = self.key
        if checkpoint is not MISSING:
            empty.seen = checkpoint
        return empty

    def update(self, values: Sequence[Any]) -> bool:
        """Records the names written in the step; True if a new name was seen.

        Raises:
            InvalidUpdateError: a write that is not one of `names`.
        """
        names = self.names
        seen = self.seen
        updated = False
        for value in values:
            if value in names:
                if value not in seen:
                    seen.add(value)
                    updated = True
            else:
                raise InvalidUpdateError(BARRIER_VALUE.format(key=self.key, value=value, names=names))
        return updated

    def get(self) -> Any:
        """Returns None once every name was seen.

        Raises:
            EmptyChannelError: some names are still missing.
        """
        if self.seen != self.names:
            raise EmptyChannelError()
        return None

    def is_available(self) -> bool:
        return self.seen == self.names

    def consume(self) -> bool:
        if self.seen == self.names:
            self.seen = set()
            return True
        return False


class NamedBarrierValueAfterFinish(BaseChannel[Value, Value, tuple[set[Value], bool]]):
    """A join into a deferred node: like NamedBarrierValue, but also waits for `finish()` (C-9).

    Args:
        typ: the type of the names.
        names: the names to wait for.
    """

    __slots__ = ("finished", "names", "seen")

    _lg_clears_on_empty = False
    _lg_finishes = True

    def __init__(self, typ: Any, names: Any) -> None:
        self.typ = typ
        self.key = ""
        self.names = names
        self.seen = set()
        self.finished = False

    def __eq__(self, value: object) -> bool:
        return isinstance(value, NamedBarrierValueAfterFinish) and value.names == self.names

    @property
    def ValueType(self) -> Any:
        """The type of the value stored in the channel."""
        return self.typ

    @property
    def UpdateType(self) -> Any:
        """The type of the update received by the channel."""
        return self.typ

    def copy(self) -> NamedBarrierValueAfterFinish:
        """Returns a copy of the channel."""
        empty = self.__class__(self.typ, self.names)
        empty.key = self.key
        empty.seen = self.seen.copy()
        empty.finished = self.finished
        return empty

    def checkpoint(self) -> Any:
        return (self.seen, self.finished)

    def from_checkpoint(self, checkpoint: Any) -> NamedBarrierValueAfterFinish:
        empty = self.__class__(self.typ, self.names)
        empty.key = self.key
        if checkpoint is not MISSING:
            empty.seen, empty.finished = checkpoint
        return empty

    def update(self, values: Sequence[Any]) -> bool:
        """Records the names written in the step; True if a new name was seen.

        Raises:
            InvalidUpdateError: a write that is not one of `names`.
        """
        names = self.names
        seen = self.seen
        updated = False
        for value in values:
            if value in names:
                if value not in seen:
                    seen.add(value)
                    updated = True
            else:
                raise InvalidUpdateError(BARRIER_VALUE.format(key=self.key, value=value, names=names))
        return updated

    def get(self) -> Any:
        """Returns None once every name was seen and the run finished.

        Raises:
            EmptyChannelError: names are missing or `finish()` has not been called.
        """
        if not self.finished or self.seen != self.names:
            raise EmptyChannelError()
        return None

    def is_available(self) -> bool:
        return self.finished and self.seen == self.names

    def consume(self) -> bool:
        if self.finished and self.seen == self.names:
            self.finished = False
            self.seen = set()
            return True
        return False

    def finish(self) -> bool:
        if not self.finished and self.seen == self.names:
            self.finished = True
            return True
        return False
