"""Differential tests: the compiled and the pure channels behave identically (docs/STYLE.md §C).

Hypothesis drives each channel kind through random sequences of update batches,
consume/finish, reads, copies and checkpoint round trips, once per build, and requires
the same return values, `get()` values, checkpoints and exceptions (type and message)
at every step. Skipped when the compiled build is not built (the `impl` rule).
"""

from __future__ import annotations

import copy
import operator
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lgembed.types import Overwrite


def last(a: Any, b: Any) -> Any:
    return b


class NoDefault:
    def __init__(self, required: Any) -> None:
        self.required = required


NAMES = {"a", "b", "c"}

CHANNELS: dict[str, Callable[[Any], Any]] = {
    "LastValue": lambda m: m.LastValue(int, "k"),
    "LastValueAfterFinish": lambda m: m.LastValueAfterFinish(int, "k"),
    "AnyValue": lambda m: m.AnyValue(int, "k"),
    "EphemeralValue": lambda m: m.EphemeralValue(int),
    "EphemeralValue(guard=False)": lambda m: m.EphemeralValue(int, guard=False),
    "UntrackedValue": lambda m: m.UntrackedValue(int),
    "UntrackedValue(guard=False)": lambda m: m.UntrackedValue(int, False),
    "Topic": lambda m: m.Topic(int),
    "Topic(accumulate=True)": lambda m: m.Topic(int, accumulate=True),
    "BinaryOperatorAggregate(int, add)": lambda m: m.BinaryOperatorAggregate(int, operator.add),
    "BinaryOperatorAggregate(list, add)": lambda m: m.BinaryOperatorAggregate(list, operator.add),
    "BinaryOperatorAggregate(dict, or_)": lambda m: m.BinaryOperatorAggregate(dict, operator.or_),
    "BinaryOperatorAggregate(NoDefault, last)": lambda m: m.BinaryOperatorAggregate(NoDefault, last),
    "NamedBarrierValue": lambda m: m.NamedBarrierValue(str, NAMES),
    "NamedBarrierValueAfterFinish": lambda m: m.NamedBarrierValueAfterFinish(str, NAMES),
}

small = st.one_of(st.integers(-3, 3), st.none(), st.sampled_from(["a", "b", "c", "z"]))
plain = st.one_of(
    small,
    st.lists(small, max_size=3),
    st.dictionaries(st.sampled_from(["type", "value", "__overwrite__", "x"]), small, max_size=2),
)
overwrite = st.one_of(
    plain.map(Overwrite),
    plain.map(lambda v: {"__overwrite__": v}),
    plain.map(lambda v: {"type": "__overwrite__", "value": v}),
)
write = st.one_of(plain, plain, overwrite)
batch = st.lists(write, max_size=4).flatmap(lambda xs: st.sampled_from([xs, tuple(xs)]))
operation = st.one_of(
    batch.map(lambda b: ("update", b)),
    batch.map(lambda b: ("update", b)),
    st.sampled_from(
        [("consume",), ("finish",), ("get",), ("is_available",), ("checkpoint",), ("roundtrip",), ("copy",)]
    ),
)


def _outcome(call: Callable[[], Any]) -> tuple:
    try:
        return ("ok", call())
    except Exception as e:  # noqa: BLE001 - the point is to compare any exception
        return ("raised", type(e), str(e))


def _state(channel: Any) -> tuple:
    return (
        _outcome(lambda: copy.deepcopy(channel.checkpoint())),  # a snapshot, not live state
        _outcome(channel.get),
        channel.is_available(),
        channel.key,
    )


def run(build: Any, kind: str, ops: list) -> list:
    """Applies `ops` to a new channel of `kind` from `build`; returns the observed trace."""
    channel = CHANNELS[kind](build)
    trace = [_state(channel)]
    for op in copy.deepcopy(ops):  # no write object is shared between the two builds
        name = op[0]
        if name == "update":
            trace.append(_outcome(lambda ch=channel, values=op[1]: ch.update(values)))
        elif name == "roundtrip":
            saved = copy.deepcopy(channel.checkpoint())  # what a saver would hand back
            channel = channel.from_checkpoint(saved)
        elif name == "copy":
            channel = channel.copy()
        elif name == "checkpoint":
            trace.append(_outcome(lambda ch=channel: copy.deepcopy(ch.checkpoint())))
        else:
            trace.append(_outcome(getattr(channel, name)))
        trace.append(_state(channel))
    return trace


@pytest.mark.c_extension
@pytest.mark.parametrize("kind", list(CHANNELS))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(operation, max_size=12))
def test_channel_parity(impl_c_py, kind, ops):
    """§2 (C-1..C-9): both builds give identical results, states and errors."""
    c, py = impl_c_py
    assert run(c, kind, ops) == run(py, kind, ops)


@pytest.mark.c_extension
@pytest.mark.parametrize("kind", list(CHANNELS))
def test_flags_and_config_parity(impl_c_py, kind):
    """lgembed flags and channel configuration are the same in both builds."""
    c, py = impl_c_py
    a, b = CHANNELS[kind](c), CHANNELS[kind](py)
    assert (a._lg_clears_on_empty, a._lg_finishes) == (b._lg_clears_on_empty, b._lg_finishes)
    assert a.ValueType == b.ValueType and a.UpdateType == b.UpdateType
    assert type(a).__name__ == type(b).__name__
    assert type(a).__slots__ == type(b).__slots__


@pytest.mark.c_extension
def test_equality_parity(impl_c_py):
    """B-4: the equality rules give the same answers in both builds."""
    results = []
    for build in impl_c_py:
        row = []
        for left in CHANNELS.values():
            for right in CHANNELS.values():
                row.append(_outcome(lambda l=left, r=right, b=build: l(b) == r(b)))
        results.append(row)
    assert results[0] == results[1]
