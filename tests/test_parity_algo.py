"""Differential tests: the compiled and the pure superstep kernels behave identically (docs/STYLE.md §C).

Hypothesis builds a random "run" (a mix of channel kinds, node triggers, a version
scheme like the engine's: ints without a saver, `f"{n:032}.{frac:016}"` strings like
the savers', or floats) and a random sequence of supersteps: batches of task writes
(unknown channels, control writes, invalid updates, empty batches, repeated and stale
versions), checkpoint round trips and trigger queries. It plays the sequence once per
build, each build with its own channel classes and its own `apply_writes`,
`triggered_nodes` and `node_triggered`, the way `lgembed.pregel._loop.Run` calls them,
and requires the same return values, exceptions (type and message), channel values
and checkpoints, channel versions, versions-seen, `live` sets and log messages after
every operation. Skipped when the compiled build is not built (the `impl` rule).
"""

from __future__ import annotations

import copy
import logging
import operator
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lgembed._constants import INPUT, PULL, PUSH
from lgembed._typing import MISSING
from lgembed.types import Overwrite, Send

NODES = ("n0", "n1", "n2", "n3")
CHANNEL_NAMES = ("a", "b", "c", "d", "e")
BARRIER_NAMES = frozenset(("n0", "n1"))
UNKNOWN = "zz"
# writes the engine routes around the channels (L-44); "zz" is an unknown channel
CONTROL_WRITES = ("__no_writes__", "__pregel_push", "__resume__", "__interrupt__", "__return__", "__error__")
RESERVED_TRIGGERS = ("__pregel_push", "__interrupt__", "__resume__", "__error__", "__input__")

KINDS: dict[str, Callable[[Any], Any]] = {
    "LastValue": lambda m: m.LastValue(object),
    "LastValueAfterFinish": lambda m: m.LastValueAfterFinish(object),
    "AnyValue": lambda m: m.AnyValue(object),
    "EphemeralValue": lambda m: m.EphemeralValue(object),
    "EphemeralValue(guard=False)": lambda m: m.EphemeralValue(object, guard=False),
    "UntrackedValue": lambda m: m.UntrackedValue(object),
    "Topic": lambda m: m.Topic(object),
    "Topic(accumulate=True)": lambda m: m.Topic(object, accumulate=True),
    "BinaryOperatorAggregate(list, add)": lambda m: m.BinaryOperatorAggregate(list, operator.add),
    "BinaryOperatorAggregate(int, add)": lambda m: m.BinaryOperatorAggregate(int, operator.add),
    "NamedBarrierValue": lambda m: m.NamedBarrierValue(str, BARRIER_NAMES),
    "NamedBarrierValueAfterFinish": lambda m: m.NamedBarrierValueAfterFinish(str, BARRIER_NAMES),
}

# --- strategies ------------------------------------------------------------------------

small = st.one_of(st.integers(-3, 3), st.none(), st.sampled_from(["x", "n0", "n1", "n2"]))
anything = st.one_of(
    small,
    st.lists(st.integers(0, 3), max_size=3),
    st.lists(st.integers(0, 3), max_size=2).map(Overwrite),
    st.integers(0, 3).map(Overwrite),
    st.builds(Send, st.sampled_from(NODES), st.integers(0, 3)),
)
# values a channel of this kind accepts (mostly); `anything` adds type errors and
# invalid updates
FITTING: dict[str, st.SearchStrategy] = {
    "BinaryOperatorAggregate(list, add)": st.one_of(
        st.lists(st.integers(0, 3), max_size=3), st.lists(st.integers(0, 3), max_size=2).map(Overwrite)
    ),
    "BinaryOperatorAggregate(int, add)": st.one_of(st.integers(-3, 3), st.integers(0, 3).map(Overwrite)),
    "NamedBarrierValue": st.sampled_from(sorted(BARRIER_NAMES)),
    "NamedBarrierValueAfterFinish": st.sampled_from(sorted(BARRIER_NAMES)),
}


@st.composite
def worlds(draw: Any) -> dict:
    """Channel kinds, node triggers and a version scheme: plain data for both builds."""
    names = draw(st.lists(st.sampled_from(CHANNEL_NAMES), min_size=1, max_size=5, unique=True))
    kinds = {name: draw(st.sampled_from(sorted(KINDS))) for name in names}
    triggers = {}
    for node in NODES:
        chans = draw(st.lists(st.sampled_from(names), min_size=1, max_size=3, unique=True))
        if draw(st.integers(0, 30)) == 0:
            chans.append(UNKNOWN)  # a node subscribed to a channel that does not exist
        triggers[node] = draw(st.sampled_from([chans, tuple(chans)]))
    return {"kinds": kinds, "triggers": triggers, "versions": draw(st.sampled_from(["int", "str", "float"]))}


@st.composite
def writes(draw: Any, world: dict) -> list:
    out = []
    targets = [*world["kinds"], UNKNOWN, *CONTROL_WRITES]
    for _ in range(draw(st.integers(0, 4))):
        chan = draw(st.sampled_from(targets) if draw(st.integers(0, 5)) == 0 else st.sampled_from(list(world["kinds"])))
        kind = world["kinds"].get(chan)
        fitting = FITTING.get(kind, anything)
        out.append((chan, draw(st.one_of(fitting, fitting, fitting, anything))))
    return out


@st.composite
def tasks(draw: Any, world: dict) -> list:
    """One superstep's tasks: PULL tasks of nodes, PUSH tasks, the input pseudo task."""
    out = []
    pushes = 0
    for _ in range(draw(st.integers(0, 4))):
        name = draw(st.sampled_from([*NODES, INPUT]))
        shape = draw(st.sampled_from(["pull", "push", "none", "random"]))
        if name == INPUT or shape == "none":
            triggers: Any = ()
            path: tuple = ()
        elif shape == "push":
            triggers, path = (PUSH,), (PUSH, pushes, False)
            pushes += 1
        elif shape == "pull":
            triggers, path = tuple(sorted(world["triggers"][name])), (PULL, name)
        else:
            pool = [*world["kinds"], *RESERVED_TRIGGERS, UNKNOWN]
            triggers = tuple(draw(st.lists(st.sampled_from(pool), max_size=3)))  # repeats allowed
            path = (PULL, name)
        out.append((name, triggers, path, draw(writes(world))))
    return out


@st.composite
def programs(draw: Any) -> tuple[dict, list]:
    world = draw(worlds())
    ops: list = []
    for _ in range(draw(st.integers(1, 10))):
        what = draw(st.sampled_from(["apply", "apply", "apply", "apply", "repeat", "roundtrip", "triggered"]))
        if what == "apply":
            version = draw(st.sampled_from(["next", "next", "next", "next", "same", "older"]))
            ops.append(("apply", draw(tasks(world)), version, draw(st.floats(0, 1, exclude_max=True))))
        elif what == "repeat" and ops and ops[-1][0] == "apply":
            ops.append(ops[-1])  # the same batch again, with the same version choice
        elif what == "roundtrip":
            ops.append(("roundtrip",))
        else:
            chans = draw(st.lists(st.sampled_from([*world["kinds"], UNKNOWN, *RESERVED_TRIGGERS]), max_size=4))
            ops.append(("triggered", set(chans)))
    return world, ops


# --- one run per build -------------------------------------------------------------------


class FakeTask:
    """What apply_writes reads of a Task: name, triggers, writes, path."""

    __slots__ = ("name", "path", "triggers", "writes")

    def __init__(self, name: str, triggers: tuple, path: tuple, writes: list) -> None:
        self.name, self.triggers, self.path, self.writes = name, triggers, path, writes


class Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append((record.levelname, record.getMessage()))


def _outcome(call: Callable[[], Any]) -> tuple:
    try:
        return ("ok", call())
    except Exception as e:  # noqa: BLE001 - the point is to compare any exception
        return ("raised", type(e), str(e))


def _version(scheme: str, n: int, frac: float) -> Any:
    if scheme == "int":
        return n
    if scheme == "float":
        return float(n)
    return f"{n:032}.{frac:016}"  # InMemorySaver.get_next_version's shape


class Run:
    """The engine's per-run state around the kernels (lgembed.pregel._loop.Run)."""

    def __init__(self, build: Any, world: dict) -> None:
        self.build = build
        protos = {}
        for name, kind in world["kinds"].items():
            proto = KINDS[kind](build)
            proto.key = name
            protos[name] = proto
        self.channels = {k: ch.from_checkpoint(MISSING) for k, ch in protos.items()}
        self.triggers = world["triggers"]
        self.trigger_to_nodes: dict = {}
        for node, chans in self.triggers.items():
            for ch in chans:
                self.trigger_to_nodes.setdefault(ch, []).append(node)
        self.finishing = [k for k, ch in protos.items() if getattr(ch, "_lg_finishes", True)]
        self.scheme = world["versions"]
        self.null_version = {"int": 0, "float": 0.0, "str": ""}[self.scheme]
        self.versions: dict = {}
        self.seen: dict = {INPUT: {}}
        self.live: set = set()
        self.n = 0

    def state(self) -> tuple:
        chans = tuple(
            (
                name,
                type(ch).__name__,
                _outcome(ch.get),
                ch.is_available(),
                _outcome(lambda ch=ch: copy.deepcopy(ch.checkpoint())),
            )
            for name, ch in self.channels.items()
        )
        seen = tuple((node, tuple(vs.items())) for node, vs in self.seen.items())
        return (
            chans,
            tuple(self.versions.items()),
            seen,
            sorted(self.live),
            tuple(self.finishing),
        )

    def prepare(self, updated: set) -> tuple:
        """The engine's prepare(): candidates from the updated set, then node_triggered."""
        candidates = _outcome(lambda: self.build.triggered_nodes(updated, self.trigger_to_nodes))
        triggered = tuple(
            (
                node,
                _outcome(
                    lambda node=node: self.build.node_triggered(
                        self.triggers[node], self.channels, self.versions, self.seen.get(node), self.null_version
                    )
                ),
            )
            for node in NODES
        )
        return candidates, triggered

    def step(self, op: tuple) -> list:
        if op[0] == "apply":
            _, batch, version, frac = op
            if version == "next" or self.n == 0:
                self.n += 1
                n = self.n
            elif version == "same":
                n = self.n
            else:
                n = max(1, self.n - 1)
            tasks = [FakeTask(name, trig, path, list(w)) for name, trig, path, w in batch]
            result = _outcome(
                lambda: self.build.apply_writes(
                    self.channels,
                    self.versions,
                    self.seen,
                    tasks,
                    _version(self.scheme, n, frac),
                    self.trigger_to_nodes,
                    self.live,
                    self.finishing,
                )
            )
            if result[0] == "ok":
                updated = result[1]
                out = [("ok", type(updated).__name__, sorted(updated)), self.prepare(updated)]
            else:
                out = [result]
            return out
        if op[0] == "roundtrip":
            # a checkpointed run restores channels, versions and `live` (lgembed.pregel._persist)
            saved = {k: copy.deepcopy(ch.checkpoint()) for k, ch in self.channels.items()}
            self.channels = {k: ch.from_checkpoint(saved[k]) for k, ch in self.channels.items()}
            self.versions = dict(self.versions)
            self.seen = {k: dict(v) for k, v in self.seen.items()}
            self.live = {k for k, ch in self.channels.items() if ch._lg_clears_on_empty and ch.is_available()}
            return [self.prepare(set())]
        return [self.prepare(set(op[1]))]


def play(build: Any, kind: str, world: dict, ops: list) -> list:
    """Plays `ops` on a fresh run of `build`; returns everything observable, step by step."""
    run = Run(build, copy.deepcopy(world))
    for ch in run.channels.values():
        # each build runs with its own channel classes
        assert isinstance(ch, build.BaseChannel), (kind, type(ch))
    logger = logging.getLogger("lgembed.pregel")
    records = Records()
    logger.addHandler(records)
    old_level = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        trace = [run.state()]
        for op in copy.deepcopy(ops):  # no write object is shared between the two builds
            trace.append(run.step(op))
            trace.append(run.state())
            trace.append(list(records.messages))
            records.messages.clear()
    finally:
        logger.removeHandler(records)
        logger.setLevel(old_level)
    return trace


def _assert_same(c: list, py: list) -> None:
    assert len(c) == len(py)
    for i, (a, b) in enumerate(zip(c, py)):
        assert a == b, f"first difference at trace entry {i}"


# --- tests ----------------------------------------------------------------------------------


@pytest.mark.c_extension
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=programs())
def test_superstep_parity(impl_c_py, program):
    """§3 (L-20…L-22, L-40…L-46): both builds give identical results, states, errors and logs."""
    world, ops = program
    c, py = impl_c_py
    _assert_same(play(c, "c", world, ops), play(py, "py", world, ops))


@pytest.mark.c_extension
@settings(max_examples=300, deadline=None)
@given(
    mapping=st.dictionaries(
        st.sampled_from([*CHANNEL_NAMES, UNKNOWN]),
        st.lists(st.sampled_from(NODES), min_size=1, max_size=4),
        max_size=5,
    ),
    updated=st.sets(st.sampled_from([*CHANNEL_NAMES, UNKNOWN, "__pregel_push"]), max_size=5),
)
def test_triggered_nodes_parity(impl_c_py, mapping, updated):
    """L-21: the same candidate list (content and order) for any updated set and index."""
    c, py = impl_c_py
    assert _outcome(lambda: c.triggered_nodes(set(updated), mapping)) == _outcome(
        lambda: py.triggered_nodes(set(updated), mapping)
    )


versions_of = st.one_of(
    st.dictionaries(st.sampled_from(CHANNEL_NAMES), st.integers(0, 4), max_size=5).map(lambda d: (d, 0)),
    st.dictionaries(st.sampled_from(CHANNEL_NAMES), st.integers(0, 4).map(lambda n: f"{n:032}.{n / 7:016}"), max_size=5).map(
        lambda d: (d, "")
    ),
)


@pytest.mark.c_extension
@settings(max_examples=300, deadline=None)
@given(
    kinds=st.dictionaries(st.sampled_from(CHANNEL_NAMES), st.sampled_from(sorted(KINDS)), min_size=1, max_size=5),
    filled=st.sets(st.sampled_from(CHANNEL_NAMES)),
    versions=versions_of,
    seen=st.one_of(st.none(), versions_of),
    triggers=st.lists(st.sampled_from([*CHANNEL_NAMES, UNKNOWN]), max_size=4),
)
def test_node_triggered_parity(impl_c_py, kinds, filled, versions, seen, triggers):
    """L-21: a node runs iff a trigger is available and newer than what it saw, in both builds."""
    results = []
    for build in impl_c_py:
        channels = {}
        for name, kind in kinds.items():
            ch = KINDS[kind](build).from_checkpoint(MISSING)
            if name in filled:
                _outcome(lambda ch=ch: ch.update(["n0"]))
            channels[name] = ch
        vers, null = versions
        node_seen = None if seen is None else dict(seen[0])
        row = []
        for trig in (list(triggers), tuple(triggers)):  # the engine passes either
            args = (trig, channels, dict(vers), node_seen, null)
            row.append(_outcome(lambda b=build, a=args: b.node_triggered(*a)))
        results.append(row)
    assert results[0] == results[1]


def _through_methods(build: Any) -> Any:
    """`build` with LastValue and EphemeralValue replaced by subclasses of the same name
    and module, which the kernels drive through their methods (`_lg_kind` 0)."""
    import types

    out = types.SimpleNamespace(**vars(build))
    for name in ("LastValue", "EphemeralValue"):
        base = getattr(build, name)
        assert base._lg_kind in (1, 2)
        sub = type(name, (base,), {"__slots__": (), "__module__": base.__module__})
        assert sub._lg_kind == 0
        setattr(out, name, sub)
    return out


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=programs())
def test_inlined_channel_kinds_match_their_methods(impl, program):
    """§3 (L-40…L-46): the kernels' direct handling of exact LastValue / EphemeralValue
    (`_lg_kind`) gives the same results, states, errors and logs as calling their
    update() / is_available() / get(), in each build."""
    world, ops = program
    kind = impl.IMPLEMENTATION
    _assert_same(play(impl, kind, world, ops), play(_through_methods(impl), kind, world, ops))
