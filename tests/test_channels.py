"""Channel behaviour (docs/BEHAVIOUR.md §2: C-1 … C-9, C-11; B-4 equality; the channel line of O-15).

Every test runs against both builds through the `impl` fixture. Expectations were
checked against LangGraph 1.2.22's `langgraph.channels` (same calls, same results and
error texts; only MISSING's repr differs).
"""

from __future__ import annotations

import collections.abc
import functools
import operator
import re
import typing
from typing import Annotated, Any, Literal, Optional

import pytest

from lgembed import _channels
from lgembed._typing import MISSING
from lgembed.errors import EmptyChannelError, InvalidUpdateError
from lgembed.types import Overwrite

CONCURRENT_X = (
    "At key 'x': Can receive only one value per step. Use an Annotated key to handle "
    "multiple values.\nFor troubleshooting, visit: "
    "https://docs.langchain.com/oss/python/langgraph/errors/INVALID_CONCURRENT_GRAPH_UPDATE"
)
DOUBLE_OVERWRITE = (
    "Can receive only one Overwrite value per super-step.\nFor troubleshooting, visit: "
    "https://docs.langchain.com/oss/python/langgraph/errors/INVALID_CONCURRENT_GRAPH_UPDATE"
)


def guard_text(kind: str, key: str) -> str:
    return (
        f"At key '{key}': {kind}(guard=True) can receive only one value per step. "
        "Use guard=False if you want to store any one of multiple values."
    )


def assert_empty(channel: Any) -> None:
    assert not channel.is_available()
    with pytest.raises(EmptyChannelError):
        channel.get()


def last(a: Any, b: Any) -> Any:
    return b


class NoDefault:
    """A type whose constructor needs an argument: reducer channels start empty (C-7)."""

    def __init__(self, required: Any) -> None:
        self.required = required


def _required_forms() -> list:
    """`Required`/`NotRequired` of typing (3.11+) or typing_extensions (3.10), if present."""
    module: Any = typing
    if not hasattr(typing, "Required"):
        try:
            import typing_extensions as module
        except ImportError:
            return []
    return [
        (module.Required[list], []),
        (module.NotRequired[Annotated[dict, "meta"]], {}),
        (Annotated[module.Required[list], "meta"], []),
    ]


class Exploding:
    def __init__(self) -> None:
        raise RuntimeError("no default")


# --- C-1 LastValue -------------------------------------------------------------------


def test_last_value_starts_empty(impl):
    """C-1: empty initially; checkpoint MISSING; consume/finish are no-ops."""
    c = impl.LastValue(int)
    assert_empty(c)
    assert c.checkpoint() is MISSING
    assert c.consume() is False
    assert c.finish() is False
    assert c.key == "" and c.typ is int


def test_last_value_update(impl):
    """C-1: update([]) → False; update([v]) stores v; never cleared by an empty step."""
    c = impl.LastValue(int, "x")
    assert c.update([]) is False
    assert_empty(c)
    assert c.update([5]) is True
    assert c.get() == 5 and c.checkpoint() == 5 and c.is_available()
    assert c.update([]) is False
    assert c.get() == 5
    assert c.update((6,)) is True
    assert c.get() == 6
    assert c.update([None]) is True
    assert c.get() is None and c.is_available()


def test_last_value_two_writes(impl):
    """C-1: more than one value in a step → InvalidUpdateError (troubleshooting link); value kept."""
    c = impl.LastValue(int, "x")
    c.update([1])
    with pytest.raises(InvalidUpdateError, match=re.escape(CONCURRENT_X)):
        c.update([2, 3])
    assert c.get() == 1


def test_last_value_key_in_message(impl):
    """C-1: the message names the channel's key, which the graph builder sets after construction."""
    c = impl.LastValue(int)
    c.key = "answer"
    with pytest.raises(InvalidUpdateError, match=re.escape(CONCURRENT_X.replace("'x'", "'answer'"))):
        c.update([1, 2])


def test_last_value_copy_and_checkpoint(impl):
    """C-1: copy is independent; from_checkpoint returns a new channel with the same config."""
    c = impl.LastValue(str, "k")
    c.update(["a"])
    d = c.copy()
    d.update(["b"])
    assert (c.get(), d.get()) == ("a", "b")
    assert type(d) is type(c) and d.key == "k" and d.typ is str
    e = c.from_checkpoint("z")
    assert e is not c and e.get() == "z" and e.key == "k" and c.get() == "a"
    assert_empty(c.from_checkpoint(MISSING))


# --- C-2 LastValueAfterFinish -------------------------------------------------------


def test_last_value_after_finish_cycle(impl):
    """C-2: value readable only after finish(); consume() clears a finished value."""
    c = impl.LastValueAfterFinish(int, "d")
    assert c.checkpoint() is MISSING
    assert c.finish() is False
    assert c.update([4]) is True
    assert_empty(c)
    assert c.checkpoint() == (4, False)
    assert c.consume() is False
    assert c.finish() is True
    assert c.get() == 4 and c.is_available()
    assert c.checkpoint() == (4, True)
    assert c.finish() is False
    assert c.consume() is True
    assert_empty(c)
    assert c.checkpoint() is MISSING
    assert c.consume() is False


def test_last_value_after_finish_update(impl):
    """C-2: several values → the last (no error); an update resets `finished`; [] is a no-op."""
    c = impl.LastValueAfterFinish(int)
    assert c.update([]) is False
    assert c.update([4, 5]) is True
    assert c.checkpoint() == (5, False)
    c.finish()
    assert c.update([]) is False
    assert c.get() == 5
    assert c.update([6]) is True
    assert c.checkpoint() == (6, False)
    assert_empty(c)


def test_last_value_after_finish_from_checkpoint(impl):
    """C-2: restores `(value, finished)` (also as a list, as msgpack returns tuples) and the key."""
    c = impl.LastValueAfterFinish(int, "d")
    d = c.from_checkpoint((7, True))
    assert d.get() == 7 and d.key == "d"
    e = c.from_checkpoint([7, False])
    assert e.checkpoint() == (7, False)
    assert_empty(c.from_checkpoint(MISSING))
    f = d.copy()
    assert f.checkpoint() == (7, True) and f.key == "d"


# --- C-3 AnyValue ------------------------------------------------------------------


def test_any_value(impl):
    """C-3: keeps the last of several values; update([]) clears (True only if it had one)."""
    c = impl.AnyValue(int, "a")
    assert c.update([]) is False
    assert c.update([1, 2]) is True
    assert c.get() == 2 and c.checkpoint() == 2
    assert c.update([]) is True
    assert_empty(c)
    assert c.checkpoint() is MISSING
    assert c.update([]) is False
    d = c.from_checkpoint(3)
    assert d.get() == 3 and d.key == "a"
    assert d.copy().get() == 3


# --- C-4 EphemeralValue ------------------------------------------------------------


def test_ephemeral_value(impl):
    """C-4: visible in the step after the write; update([]) clears (True if it had a value)."""
    c = impl.EphemeralValue(int)
    assert c.key == "" and c.guard is True
    assert c.update([3]) is True
    assert c.get() == 3 and c.checkpoint() == 3
    assert c.update([]) is True
    assert_empty(c)
    assert c.update([]) is False
    assert c.checkpoint() is MISSING


def test_ephemeral_value_guard(impl):
    """C-4: guard=True and two writes → InvalidUpdateError without troubleshooting link."""
    c = impl.EphemeralValue(Any)
    c.key = "__start__"
    with pytest.raises(
        InvalidUpdateError, match=re.escape(guard_text("EphemeralValue", "__start__"))
    ) as info:
        c.update([1, 2])
    assert "troubleshooting" not in str(info.value)
    assert_empty(c)
    loose = impl.EphemeralValue(Any, guard=False)
    assert loose.update([1, 2]) is True
    assert loose.get() == 2


def test_ephemeral_value_copy(impl):
    """C-4: copy/from_checkpoint keep guard and key."""
    c = impl.EphemeralValue(int, False)
    c.key = "branch:to:a"
    c.update([None])
    d = c.copy()
    assert d.guard is False and d.key == "branch:to:a" and d.get() is None
    e = c.from_checkpoint(1)
    assert e.guard is False and e.key == "branch:to:a" and e.get() == 1
    assert_empty(c.from_checkpoint(MISSING))


# --- C-5 UntrackedValue ------------------------------------------------------------


def test_untracked_value(impl):
    """C-5: like LastValue, but checkpoint() is always MISSING and restores empty."""
    c = impl.UntrackedValue(int)
    assert c.update([]) is False
    assert c.update([9]) is True
    assert c.get() == 9
    assert c.checkpoint() is MISSING
    assert c.update([]) is False
    assert c.get() == 9
    assert c.copy().get() == 9
    c.key = "u"
    d = c.from_checkpoint(9)
    assert_empty(d)
    assert d.key == "u" and d.guard is True


def test_untracked_value_guard(impl):
    """C-5: guard=True and two writes → the guard text naming UntrackedValue."""
    c = impl.UntrackedValue(int)
    c.key = "u"
    with pytest.raises(InvalidUpdateError, match=re.escape(guard_text("UntrackedValue", "u"))):
        c.update([1, 2])
    loose = impl.UntrackedValue(int, guard=False)
    assert loose.update([1, 2]) is True and loose.get() == 2


# --- C-6 Topic ---------------------------------------------------------------------


def test_topic_flattens_and_clears(impl):
    """C-6: list writes are spliced in; each step (even one without writes) starts empty."""
    c = impl.Topic(int)
    assert c.accumulate is False
    assert c.checkpoint() == []
    assert_empty(c)
    assert c.update([1, [2, 3]]) is True
    assert c.get() == [1, 2, 3]
    assert c.update([4]) is True
    assert c.get() == [4]
    assert c.update([]) is True
    assert_empty(c)
    assert c.checkpoint() == []
    assert c.update([]) is False
    assert c.update([[], []]) is False


def test_topic_flattens_one_level(impl):
    """C-6: only one level of lists is spliced; tuples are values."""
    c = impl.Topic(Any)
    c.update([[1, [2]], (3, 4)])
    assert c.get() == [1, [2], (3, 4)]


def test_topic_get_returns_copy(impl):
    """C-6: get() returns a new list each time."""
    c = impl.Topic(int)
    c.update([1])
    got = c.get()
    got.append(99)
    assert c.get() == [1]


def test_topic_accumulate(impl):
    """C-6: accumulate=True keeps values across steps; update([]) does nothing."""
    c = impl.Topic(int, accumulate=True)
    assert c.update([1, [2, [3]]]) is True
    assert c.update([]) is False
    assert c.update([[]]) is False
    assert c.update([4]) is True
    assert c.get() == [1, 2, [3], 4]
    assert c.checkpoint() == [1, 2, [3], 4]


def test_topic_checkpoint_round_trip(impl):
    """C-6: from_checkpoint keeps accumulate and key; accepts LangGraph's old tuple shape."""
    c = impl.Topic(int, True)
    c.key = "__pregel_tasks"
    d = c.from_checkpoint([1, 2])
    assert d.get() == [1, 2] and d.accumulate is True and d.key == "__pregel_tasks"
    assert c.from_checkpoint((None, [5])).get() == [5]
    assert_empty(c.from_checkpoint(MISSING))
    e = d.copy()
    e.update([3])
    assert d.get() == [1, 2] and e.get() == [1, 2, 3]


def test_topic_types(impl):
    """C-6: ValueType is Sequence[T], UpdateType is T | list[T]."""
    c = impl.Topic(int)
    assert c.ValueType == collections.abc.Sequence[int]
    assert c.UpdateType == (int | list[int])


# --- C-7 BinaryOperatorAggregate ------------------------------------------------------


@pytest.mark.parametrize(
    ("typ", "initial"),
    [
        (int, 0),
        (str, ""),
        (list, []),
        (dict, {}),
        (tuple, ()),
        (frozenset, frozenset()),
        (Annotated[list, operator.add], []),
        (Annotated[int, "meta"], 0),
        (list[int], []),
        (typing.List[int], []),
        (typing.Sequence[int], []),
        (collections.abc.Sequence, []),
        (collections.abc.MutableSequence[int], []),
        (typing.AbstractSet[int], set()),
        (collections.abc.MutableSet, set()),
        (collections.abc.Mapping, {}),
        (typing.MutableMapping[str, int], {}),
        *_required_forms(),
        (Optional[int], MISSING),
        (int | None, MISSING),
        (Any, MISSING),
        (Literal["a"], MISSING),
        ("list", MISSING),
        (NoDefault, MISSING),
        (Exploding, MISSING),
    ],
    ids=repr,
)
def test_binop_initial_value(impl, typ, initial):
    """C-7: T() after stripping Annotated/Required/NotRequired and mapping abstract
    collections; empty if T() raises."""
    c = impl.BinaryOperatorAggregate(typ, operator.add)
    if initial is MISSING:
        assert c.checkpoint() is MISSING
        assert_empty(c)
    else:
        assert c.get() == initial and type(c.get()) is type(initial)
        assert c.checkpoint() == initial
    assert c.typ is typ and c.ValueType is typ and c.UpdateType is typ


def test_binop_reduces(impl):
    """C-7: readable before any write; each write is folded in order; update([]) → False."""
    c = impl.BinaryOperatorAggregate(int, operator.add)
    assert c.get() == 0 and c.is_available()
    assert c.update([]) is False
    assert c.update([1, 2]) is True
    assert c.get() == 3
    log = impl.BinaryOperatorAggregate(list, operator.add)
    log.update([["a"], ["b"]])
    log.update([["c"]])
    assert log.get() == ["a", "b", "c"]


def test_binop_empty_takes_first_write_verbatim(impl):
    """C-7: an empty channel takes the first write as is; the operator sees the rest."""
    calls = []

    def record(a, b):
        calls.append((a, b))
        return b

    c = impl.BinaryOperatorAggregate(NoDefault, record)
    assert_empty(c)
    assert c.update([1, 2]) is True
    assert c.get() == 2
    assert calls == [(1, 2)]


def test_binop_overwrite(impl):
    """C-7: value 3, writes [5, Overwrite(10), 7] → 10 (later plain writes ignored)."""
    c = impl.BinaryOperatorAggregate(int, operator.add)
    c.update([1, 2])
    assert c.update([5, Overwrite(10), 7]) is True
    assert c.get() == 10


@pytest.mark.parametrize(
    "write",
    [Overwrite(["only"]), {"__overwrite__": ["only"]}, {"type": "__overwrite__", "value": ["only"]}],
    ids=["Overwrite", "single-key dict", "type/value dict"],
)
def test_binop_overwrite_forms(impl, write):
    """C-7: the three Overwrite forms replace the value."""
    c = impl.BinaryOperatorAggregate(list, operator.add)
    c.update([["init"]])
    assert c.update([["a"], write, ["b"]]) is True
    assert c.get() == ["only"]


def test_binop_dicts_that_are_not_overwrites(impl):
    """C-7: a two-key dict with "__overwrite__" and a "type" dict without "value" are plain writes."""
    c = impl.BinaryOperatorAggregate(dict, operator.or_)
    c.update([{"__overwrite__": 1, "b": 2}])
    assert c.get() == {"__overwrite__": 1, "b": 2}
    d = impl.BinaryOperatorAggregate(dict, operator.or_)
    d.update([{"type": "__overwrite__"}])
    assert d.get() == {"type": "__overwrite__"}


def test_binop_plain_writes_before_overwrite_still_reduce(impl):
    """C-7: writes before the Overwrite go through the operator, then the Overwrite replaces."""
    calls = []

    def record(a, b):
        calls.append(b)
        return a + b

    c = impl.BinaryOperatorAggregate(int, record)
    c.update([1, Overwrite(10), 2, 3])
    assert calls == [1]
    assert c.get() == 10


@pytest.mark.parametrize(
    "second",
    [Overwrite(2), {"__overwrite__": 2}, {"type": "__overwrite__", "value": 2}],
    ids=["Overwrite", "single-key dict", "type/value dict"],
)
def test_binop_two_overwrites(impl, second):
    """C-7: a second Overwrite in the same step → InvalidUpdateError (with the link)."""
    c = impl.BinaryOperatorAggregate(int, operator.add)
    c.update([5])
    with pytest.raises(InvalidUpdateError, match=re.escape(DOUBLE_OVERWRITE)):
        c.update([Overwrite(1), 7, second])
    assert c.get() == 1  # the first Overwrite was applied before the error


def test_binop_overwrite_on_empty_channel_is_stored_verbatim(impl):
    """C-7 (LangGraph surprise): on an empty channel the first write is taken verbatim,
    even an Overwrite object, and the next plain write then hits the operator."""
    c = impl.BinaryOperatorAggregate(Any, operator.add)
    with pytest.raises(
        TypeError, match=re.escape("unsupported operand type(s) for +: 'Overwrite' and 'int'")
    ):
        c.update([Overwrite(3), 4])
    assert c.get() == Overwrite(3)
    assert c.update([Overwrite(5)]) is True
    assert c.get() == 5


def test_binop_operator_errors_propagate(impl):
    """C-7: the operator's own exception reaches the caller unchanged."""
    c = impl.BinaryOperatorAggregate(list, operator.add)
    with pytest.raises(TypeError, match=re.escape('can only concatenate list (not "int") to list')):
        c.update([1])


def test_binop_copy_and_checkpoint(impl):
    """C-7: copy/from_checkpoint keep operator and key; MISSING restores the initial value."""
    c = impl.BinaryOperatorAggregate(list, operator.add)
    c.key = "log"
    c.update([[1]])
    d = c.copy()
    d.update([[2]])
    assert c.get() == [1] and d.get() == [1, 2]
    assert d.operator is operator.add and d.key == "log"
    e = c.from_checkpoint([7])
    assert e.get() == [7] and e.key == "log"
    assert c.from_checkpoint(MISSING).get() == []
    assert_empty(impl.BinaryOperatorAggregate(Any, operator.add).from_checkpoint(MISSING))


# --- C-8 NamedBarrierValue --------------------------------------------------------


def test_named_barrier_value(impl):
    """C-8: available (get → None) once every name was written; consume() resets."""
    c = impl.NamedBarrierValue(str, {"a", "b"})
    assert c.checkpoint() == set()
    assert c.update(["a"]) is True
    assert_empty(c)
    assert c.checkpoint() == {"a"}
    assert c.update(["a"]) is False
    assert c.update([]) is False
    assert c.consume() is False
    assert c.update(["a", "b"]) is True
    assert c.is_available() and c.get() is None
    assert c.finish() is False
    assert c.consume() is True
    assert_empty(c)
    assert c.checkpoint() == set()
    assert c.consume() is False


def test_named_barrier_value_unknown_name(impl):
    """C-8: a name it does not wait for → InvalidUpdateError; earlier names of the step count."""
    c = impl.NamedBarrierValue(str, {"a"})
    c.key = "join:a+b:c"
    with pytest.raises(InvalidUpdateError, match=re.escape("At key 'join:a+b:c': Value z not in {'a'}")):
        c.update(["a", "z"])
    assert c.checkpoint() == {"a"}
    names = {"a", "b"}
    d = impl.NamedBarrierValue(str, names)
    d.key = "join"
    with pytest.raises(InvalidUpdateError, match=re.escape(f"At key 'join': Value 3 not in {names}")):
        d.update([3])


def test_named_barrier_value_copy_and_checkpoint(impl):
    """C-8: checkpoint is the seen-set; copy does not share it; names and key are kept."""
    names = {"a", "b"}
    c = impl.NamedBarrierValue(str, names)
    c.key = "join:a+b:c"
    c.update(["a"])
    d = c.copy()
    d.update(["b"])
    assert c.checkpoint() == {"a"} and d.is_available()
    e = c.from_checkpoint({"a", "b"})
    assert e.get() is None and e.names == names and e.key == "join:a+b:c"
    assert_empty(c.from_checkpoint(MISSING))


# --- C-9 NamedBarrierValueAfterFinish ------------------------------------------------


def test_named_barrier_value_after_finish(impl):
    """C-9: as C-8, but also needs finish(); checkpoint (seen, finished)."""
    c = impl.NamedBarrierValueAfterFinish(str, {"a", "b"})
    assert c.checkpoint() == (set(), False)
    assert c.finish() is False
    assert c.update(["a"]) is True
    assert c.finish() is False
    assert c.update(["b", "a"]) is True
    assert_empty(c)
    assert c.checkpoint() == ({"a", "b"}, False)
    assert c.consume() is False
    assert c.finish() is True
    assert c.get() is None and c.is_available()
    assert c.checkpoint() == ({"a", "b"}, True)
    assert c.finish() is False
    assert c.consume() is True
    assert c.checkpoint() == (set(), False)
    assert_empty(c)


def test_named_barrier_value_after_finish_errors_and_restore(impl):
    """C-9: same error text as C-8; from_checkpoint restores (seen, finished) and config."""
    c = impl.NamedBarrierValueAfterFinish(str, {"a"})
    c.key = "join:a:d"
    with pytest.raises(InvalidUpdateError, match=re.escape("At key 'join:a:d': Value b not in {'a'}")):
        c.update(["b"])
    d = c.from_checkpoint(({"a"}, True))
    assert d.get() is None and d.key == "join:a:d" and d.names == {"a"}
    e = d.copy()
    assert e.checkpoint() == ({"a"}, True)
    e.consume()
    assert d.checkpoint() == ({"a"}, True)


# --- C-11 EmptyChannelError ---------------------------------------------------------


def test_empty_channel_error(impl):
    """C-11: EmptyChannelError comes from lgembed.errors (also lgembed.channels.base), an Exception."""
    from lgembed.channels import base

    assert base.EmptyChannelError is EmptyChannelError
    assert EmptyChannelError.__bases__ == (Exception,)
    with pytest.raises(EmptyChannelError) as info:
        impl.Topic(int).get()
    assert str(info.value) == ""


# --- O-15 channel trace ----------------------------------------------------------------


def test_observed_channel_trace(impl):
    """O-15: the channel line of the observed outputs, step by step."""
    any_value = impl.AnyValue(int)
    any_value.update([1, 2])
    assert any_value.get() == 2
    any_value.update([])
    assert_empty(any_value)

    topic = impl.Topic(int)
    topic.update([1, [2, 3]])
    assert topic.get() == [1, 2, 3]
    topic.update([])
    assert_empty(topic)
    assert topic.checkpoint() == []

    binop = impl.BinaryOperatorAggregate(int, operator.add)
    assert binop.get() == 0
    binop.update([1, 2])
    assert binop.get() == 3
    binop.update([5, Overwrite(10), 7])
    assert binop.get() == 10

    no_default = impl.BinaryOperatorAggregate(NoDefault, last)
    assert_empty(no_default)
    no_default.update([1, 2])
    assert no_default.get() == 2

    ephemeral = impl.EphemeralValue(int)
    ephemeral.update([3])
    assert ephemeral.get() == 3
    ephemeral.update([])
    assert_empty(ephemeral)

    lvaf = impl.LastValueAfterFinish(int)
    lvaf.update([4])
    assert_empty(lvaf)
    assert lvaf.checkpoint() == (4, False)
    lvaf.finish()
    assert lvaf.get() == 4
    lvaf.consume()
    assert_empty(lvaf)

    names = {"a", "b"}
    barrier = impl.NamedBarrierValue(str, names)
    barrier.key = "join"
    barrier.update(["a"])
    assert_empty(barrier)
    assert barrier.checkpoint() == {"a"}
    barrier.update(["a", "b"])
    assert barrier.is_available() and barrier.get() is None
    barrier.consume()
    assert_empty(barrier)
    with pytest.raises(InvalidUpdateError, match=re.escape(f"At key 'join': Value z not in {names}")):
        barrier.update(["z"])

    untracked = impl.UntrackedValue(int)
    untracked.update([9])
    assert untracked.get() == 9
    assert untracked.checkpoint() is MISSING


# --- B-4 equality ----------------------------------------------------------------------


def test_equality_rules(impl):
    """B-4: LastValue == any LastValue; guard / accumulate / names compared; classes differ."""
    assert impl.LastValue(int) == impl.LastValue(str)
    assert impl.LastValue(int) != impl.AnyValue(int)
    assert impl.LastValue(int) != impl.LastValueAfterFinish(int)
    assert impl.LastValueAfterFinish(int) != impl.LastValue(int)
    assert impl.LastValueAfterFinish(int) == impl.LastValueAfterFinish(str)
    assert impl.AnyValue(int) == impl.AnyValue(str)
    assert impl.EphemeralValue(int) == impl.EphemeralValue(str)
    assert impl.EphemeralValue(int) != impl.EphemeralValue(int, guard=False)
    assert impl.UntrackedValue(int) != impl.UntrackedValue(int, guard=False)
    assert impl.Topic(int) == impl.Topic(str)
    assert impl.Topic(int) != impl.Topic(int, accumulate=True)
    assert impl.NamedBarrierValue(str, {"a"}) == impl.NamedBarrierValue(str, {"a"})
    assert impl.NamedBarrierValue(str, {"a"}) != impl.NamedBarrierValue(str, {"b"})
    assert impl.NamedBarrierValueAfterFinish(str, {"a"}) != impl.NamedBarrierValueAfterFinish(str, {"b"})
    assert impl.NamedBarrierValueAfterFinish(str, {"a"}) == impl.NamedBarrierValueAfterFinish(str, {"a"})


def test_binop_equality(impl):
    """B-4: equal iff the same operator object; a lambda on either side is equal to anything."""
    binop = impl.BinaryOperatorAggregate
    assert binop(int, operator.add) == binop(list, operator.add)
    assert binop(int, operator.add) != binop(int, operator.mul)
    assert binop(int, lambda a, b: a) == binop(int, operator.mul)
    assert binop(int, operator.mul) == binop(int, lambda a, b: b)
    assert binop(int, operator.add) != impl.LastValue(int)


def test_binop_equality_needs_operator_name(impl):
    """B-4 (LangGraph surprise): comparing a reducer without __name__ raises AttributeError."""
    with pytest.raises(AttributeError, match="__name__"):
        _ = impl.BinaryOperatorAggregate(
            int, functools.partial(operator.add)
        ) == impl.BinaryOperatorAggregate(int, operator.add)


def test_channels_with_eq_are_unhashable(impl):
    """B-4: defining __eq__ leaves the channels unhashable, as in LangGraph."""
    with pytest.raises(TypeError, match="unhashable type: 'LastValue'"):
        hash(impl.LastValue(int))


# --- base class, subclasses, typing -----------------------------------------------------


def test_base_channel_is_abstract(impl):
    """§2: BaseChannel needs ValueType, UpdateType, from_checkpoint, get and update."""
    with pytest.raises(TypeError, match="abstract"):
        impl.BaseChannel(int)


def test_user_subclass_of_base_channel(impl):
    """§2: a user channel works with the default copy/checkpoint/is_available/consume/finish."""

    class Counter(impl.BaseChannel):
        def __init__(self, typ, key=""):
            super().__init__(typ, key)
            self.count = MISSING

        @property
        def ValueType(self):
            return int

        @property
        def UpdateType(self):
            return int

        def from_checkpoint(self, checkpoint):
            empty = self.__class__(self.typ, self.key)
            if checkpoint is not MISSING:
                empty.count = checkpoint
            return empty

        def get(self):
            if self.count is MISSING:
                raise EmptyChannelError()
            return self.count

        def update(self, values):
            if not values:
                return False
            self.count = (0 if self.count is MISSING else self.count) + len(values)
            return True

    c = Counter(int, "n")
    assert c.checkpoint() is MISSING and not c.is_available()
    assert c.update([1, 1]) is True
    assert c.checkpoint() == 2 and c.is_available()
    d = c.copy()
    assert d.get() == 2 and d.key == "n" and d is not c
    assert c.consume() is False and c.finish() is False
    assert Counter._lg_clears_on_empty is True and Counter._lg_finishes is True


def test_user_subclasses_keep_safe_flags(impl):
    """lgembed flags: overriding update()/finish() without stating the flag makes it True."""

    class Clearing(impl.LastValue):
        def update(self, values):
            return super().update(values)

    class Finishing(impl.NamedBarrierValue):
        def finish(self):
            return False

    class Declared(impl.LastValue):
        _lg_clears_on_empty = False

        def update(self, values):
            return super().update(values)

    class Plain(impl.LastValue):
        pass

    assert Clearing._lg_clears_on_empty is True and Clearing._lg_finishes is False
    assert Finishing._lg_finishes is True and Finishing._lg_clears_on_empty is False
    assert Declared._lg_clears_on_empty is False
    assert Plain._lg_clears_on_empty is False and Plain._lg_finishes is False
    assert type(Plain(int).copy()) is Plain

    class Consuming(impl.LastValue):
        def consume(self):
            return False

    class NotConsuming(impl.NamedBarrierValue):
        _lg_consumes = False

        def consume(self):
            return False

    assert Consuming._lg_consumes is True and Plain._lg_consumes is False
    assert NotConsuming._lg_consumes is False
    # the kernels use the `value` slot only of the exact classes (a subclass may
    # give it another meaning)
    assert (impl.LastValue._lg_kind, impl.EphemeralValue._lg_kind) == (1, 2)
    assert Plain._lg_kind == 0 and Clearing._lg_kind == 0 and impl.AnyValue._lg_kind == 0
    assert impl.BaseChannel._lg_kind == 0 and impl.LastValueAfterFinish._lg_kind == 0


def _all_channels(impl):
    return [
        impl.LastValue(int),
        impl.LastValueAfterFinish(int),
        impl.AnyValue(int),
        impl.EphemeralValue(int),
        impl.EphemeralValue(int, guard=False),
        impl.UntrackedValue(int),
        impl.Topic(int),
        impl.Topic(int, accumulate=True),
        impl.BinaryOperatorAggregate(int, operator.add),
        impl.BinaryOperatorAggregate(NoDefault, last),
        impl.NamedBarrierValue(str, {"a", "b"}),
        impl.NamedBarrierValueAfterFinish(str, {"a", "b"}),
    ]


EXPECTED_FLAGS = {
    # name (accumulate for Topic): (_lg_clears_on_empty, _lg_finishes, _lg_consumes)
    "LastValue": (False, False, False),
    "LastValueAfterFinish": (False, True, True),
    "AnyValue": (True, False, False),
    "EphemeralValue": (True, False, False),
    "UntrackedValue": (False, False, False),
    "Topic": (True, False, False),
    "Topic+accumulate": (False, False, False),
    "BinaryOperatorAggregate": (False, False, False),
    "NamedBarrierValue": (False, False, True),
    "NamedBarrierValueAfterFinish": (False, True, True),
}


def test_engine_flags(impl):
    """lgembed flags: the documented values per channel kind (BaseChannel: True, True, False)."""
    assert impl.BaseChannel._lg_clears_on_empty is True and impl.BaseChannel._lg_finishes is True
    assert impl.BaseChannel._lg_consumes is False
    for channel in _all_channels(impl):
        name = type(channel).__name__ + ("+accumulate" if getattr(channel, "accumulate", False) else "")
        flags = (channel._lg_clears_on_empty, channel._lg_finishes, channel._lg_consumes)
        assert flags == EXPECTED_FLAGS[name], name


def _states(channel, writes):
    """The channel in several states: fresh, written, finished, consumed."""
    yield channel.copy()
    for batch in writes:
        try:
            channel.update(batch)
        except (InvalidUpdateError, TypeError):  # not every batch suits every channel
            continue
        yield channel.copy()
        channel.finish()
        yield channel.copy()
        channel.consume()
        yield channel.copy()


def test_engine_flags_are_truthful(impl):
    """lgembed flags: a False flag means update([]) / finish() / consume() never change the channel."""
    writes = [[1], ["a"], ["a", "b"], [[1, 2]], [3, 4], [Overwrite(1)]]
    for channel in _all_channels(impl):
        for state in _states(channel, writes):
            before = state.checkpoint(), state.is_available()
            if not state._lg_clears_on_empty:
                assert state.update([]) is False
                assert (state.checkpoint(), state.is_available()) == before, type(state).__name__
            if not state._lg_finishes:
                assert state.finish() is False
                assert (state.checkpoint(), state.is_available()) == before, type(state).__name__
            if not state._lg_consumes:
                assert state.consume() is False
                assert (state.checkpoint(), state.is_available()) == before, type(state).__name__


def test_generic_subscription(impl):
    """§2: channels are generic over their value type, like LangGraph's."""
    assert len(impl.BaseChannel.__parameters__) == 3
    assert impl.LastValue[int] is not None
    assert impl.Topic[str] is not None
    assert impl.LastValue(int).ValueType is int and impl.LastValue(int).UpdateType is int


def test_constructor_keys(impl):
    """§2: LastValue, LastValueAfterFinish and AnyValue take `key`; the others start with ""."""
    assert impl.LastValue(int, "a").key == "a"
    assert impl.LastValueAfterFinish(int, "b").key == "b"
    assert impl.AnyValue(int, "c").key == "c"
    for channel in _all_channels(impl):
        if not isinstance(channel, (impl.LastValue, impl.LastValueAfterFinish, impl.AnyValue)):
            assert channel.key == ""


# --- public modules ---------------------------------------------------------------------


LANGGRAPH_CHANNELS_ALL = (
    "BaseChannel",
    "AnyValue",
    "LastValue",
    "LastValueAfterFinish",
    "UntrackedValue",
    "EphemeralValue",
    "BinaryOperatorAggregate",
    "DeltaChannel",
    "NamedBarrierValue",
    "NamedBarrierValueAfterFinish",
    "Topic",
)
# langgraph.channels.__all__ in 1.2.22


def test_public_channel_modules():
    """§2: lgembed.channels exports LangGraph's names (but the beta DeltaChannel, C-10),
    and they are the classes of `lgembed._channels`, in the build in use."""
    from lgembed import channels
    from lgembed.channels import (
        any_value,
        base,
        binop,
        ephemeral_value,
        last_value,
        named_barrier_value,
        topic,
        untracked_value,
    )

    assert channels.__all__ == tuple(n for n in LANGGRAPH_CHANNELS_ALL if n != "DeltaChannel")
    for name in channels.__all__:
        assert getattr(channels, name) is getattr(_channels, name)
        assert getattr(channels, name).__module__ == "lgembed._channels"
    assert base.__all__ == ("BaseChannel",)
    assert [str(v) for v in (base.Value, base.Update, base.Checkpoint)] == [
        "~Value",
        "~Update",
        "~Checkpoint",
    ]
    modules = {
        any_value: ("AnyValue",),
        binop: ("BinaryOperatorAggregate",),
        ephemeral_value: ("EphemeralValue",),
        last_value: ("LastValue", "LastValueAfterFinish"),
        named_barrier_value: ("NamedBarrierValue", "NamedBarrierValueAfterFinish"),
        topic: ("Topic",),
        untracked_value: ("UntrackedValue",),
    }
    for module, names in modules.items():
        assert module.__all__ == names
        for name in names:
            assert getattr(module, name) is getattr(channels, name)
