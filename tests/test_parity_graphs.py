"""Differential tests: random StateGraphs run identically on the compiled and the pure build (docs/STYLE.md §C).

Hypothesis generates a graph program as plain data: 1–8 nodes, state keys with and
without reducers, static and waiting edges, deferred nodes, conditional edges with a
deterministic router, Send fan-out, Command(goto/update) returns, nodes that raise or
write invalid updates, routers naming unknown nodes, recursion-limit hits, and
optionally an InMemorySaver (any durability) with interrupt_before/after and
`interrupt()` calls resumed by `Command(resume=...)`.

The build is chosen once per process (`lgembed._engine`), so this file starts two
long-lived children of itself (`python tests/test_parity_graphs.py --child`), one with
`LGEMBED_EXTENSIONS=off` and one with `LGEMBED_EXTENSIONS=required`, and sends each
program to both over stdin/stdout JSON lines. Each child builds the graph, runs
`invoke` and `stream` (values, updates, tasks, debug, checkpoints, custom) on their
own threads, resumes interrupted threads, and answers with everything observable:
results, chunk sequences, exceptions (type, message, notes), `get_state`, the
checkpoint history and lgembed's log messages. The parent requires the two answers
to be equal.

What legitimately differs run to run is normalized in the child before comparing:
timestamps always; with a checkpointer, checkpoint ids and everything derived from
them (task ids, interrupt ids) become ordinals by first appearance, so the pattern of
equal ids is still compared. The same holds without a checkpointer: each step still
gets a fresh checkpoint id (L-23), so ids differ from run to run.

Both children run with `max_concurrency=1` so tasks complete in a fixed order (with
parallel workers, completion order, and so the order of `updates` chunks, is
legitimately racy). Two races remain and are normalized: `custom` chunks, written from
worker threads, are compared as their own sequence; and after a failing task a stream
may or may not have started the step's next task (LangGraph drops only the tasks not
started yet), so a failed stream is compared up to the failing task's `tasks` chunk,
without its `custom` chunks, and the saved snapshot of a failed stream thread is
compared by values, next nodes and metadata only.

Skipped when the compiled build is not built (the `impl` rule of tests/conftest.py).
"""

from __future__ import annotations

import json
import logging
import os
import re
import select
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parent.parent
KEYS = ("k0", "k1", "k2", "k3")
TYPES = ("list", "int", "str")
MODES = ("values", "updates", "tasks", "debug", "checkpoints", "custom")
END_ = "__end__"
START_ = "__start__"
TIMEOUT = 60.0  # seconds one child may take for one program


# --- the child: builds and runs one program per request ------------------------------------------


def _digest(value: Any) -> int:
    """A deterministic small number from a node's input (routers and node outputs depend on it)."""
    return zlib.crc32(json.dumps(value, sort_keys=True, default=repr).encode())


def _value(node: str, typ: str, x: int, answer: Any) -> Any:
    tag = f"{node}:{x % 5}" if answer is None else f"{node}:{x % 5}:{answer}"
    if typ == "list":
        return [tag]
    if typ == "int":
        return x % 7
    return tag


def _wrong(typ: str) -> Any:
    """A write a reducer over `typ` rejects with a TypeError."""
    return {"list": 1, "int": [1], "str": 2}[typ]


def _targets(spec: list, src: str, x: int) -> list:
    """Goto targets: names (END included) and Sends ({"send": node, "n": k})."""
    from lgembed.types import Send

    out: list = []
    for item in spec:
        if isinstance(item, dict):
            out.extend(Send(item["send"], {"sent_by": src, "i": i, "x": x % 3}) for i in range(item["n"]))
        else:
            out.append(item)
    return out


def _node_fn(desc: dict, node: dict) -> Any:
    from lgembed.config import get_stream_writer
    from lgembed.types import Command, interrupt

    name = node["name"]
    keys = desc["keys"]

    def fn(state: Any) -> Any:
        x = _digest(state)
        answer = interrupt({"node": name, "x": x % 10}) if node["interrupt"] else None
        if node["custom"]:
            get_stream_writer()({"node": name, "x": x % 10})
        ret = node["ret"]
        if ret == "raise" or (ret == "raise_if" and x % 3 == 0):
            raise ValueError(f"boom in {name} ({x % 10})")
        update = {key: _value(name, keys[key]["type"], x, answer) for key in node["writes"]}
        if ret == "bad_key":
            update["nope"] = 1
        elif ret == "bad_type":
            for key in node["writes"]:
                if keys[key]["reducer"]:
                    update[key] = _wrong(keys[key]["type"])
        if ret == "none":
            return None
        if ret == "command":
            goto = _targets(node["goto"], name, x)
            return Command(update=update, goto=goto[0] if len(goto) == 1 and x % 2 else goto)
        return update

    return fn


def _router(branch: dict) -> Any:
    def route(state: Any) -> Any:
        x = _digest(state)
        choice = branch["options"][x % len(branch["options"])]
        if isinstance(choice, dict):
            return _targets([choice], branch["src"], x)
        return choice

    return route


def _build(desc: dict) -> Any:
    import operator
    from typing import Annotated, TypedDict

    from lgembed.graph import StateGraph

    types = {"list": list, "int": int, "str": str}
    fields = {}
    for key, spec in desc["keys"].items():
        typ = types[spec["type"]]
        fields[key] = Annotated[typ, operator.add] if spec["reducer"] else typ
    state = TypedDict("State", fields)  # type: ignore[misc]
    builder = StateGraph(state)
    for node in desc["nodes"]:
        builder.add_node(node["name"], _node_fn(desc, node), defer=node["defer"])
    for src, dst in desc["edges"]:
        builder.add_edge(src, dst)
    for branch in desc["branches"]:
        builder.add_conditional_edges(branch["src"], _router(branch))
    kwargs: dict = {}
    if desc["saver"]:
        from lgembed.checkpoint.memory import InMemorySaver

        kwargs["checkpointer"] = InMemorySaver()
    if desc["interrupt_before"]:
        kwargs["interrupt_before"] = desc["interrupt_before"]
    if desc["interrupt_after"]:
        kwargs["interrupt_after"] = desc["interrupt_after"]
    return builder.compile(**kwargs)


def _plain(x: Any) -> Any:
    """A JSON-able, order-preserving, type-tagged image of any observed value."""
    import dataclasses

    if x is None or isinstance(x, (bool, int, float, str)):
        return x
    if isinstance(x, list):
        return [_plain(i) for i in x]
    if isinstance(x, tuple):
        if hasattr(x, "_fields"):
            return {"@nt": type(x).__name__, "f": [[f, _plain(getattr(x, f))] for f in x._fields]}
        return {"@t": [_plain(i) for i in x]}
    if isinstance(x, dict):
        return {"@d": [[_plain(k), _plain(v)] for k, v in x.items()]}
    if isinstance(x, (set, frozenset)):
        return {"@s": sorted(json.dumps(_plain(i), sort_keys=True) for i in x)}
    if isinstance(x, BaseException):
        return {
            "@e": f"{type(x).__module__}.{type(x).__qualname__}",
            "msg": str(x),
            "notes": list(getattr(x, "__notes__", ())),
        }
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return {"@dc": type(x).__name__, "f": [[f.name, _plain(getattr(x, f.name))] for f in dataclasses.fields(x)]}
    return {"@o": type(x).__qualname__, "r": re.sub(r"0x[0-9a-f]+", "0x?", repr(x))}


def _snapshot(app: Any, cfg: dict, full: bool) -> Any:
    st = app.get_state(cfg)
    out = {"values": st.values, "next": st.next, "metadata": st.metadata}
    if full:
        out["tasks"] = [(t.name, t.path, repr(t.error), t.interrupts, t.result) for t in st.tasks]
        out["interrupts"] = st.interrupts
    return out


def _history(app: Any, cfg: dict) -> list:
    return [(s.values, s.next, s.metadata) for s in app.get_state_history(cfg)]


def _drive(app: Any, desc: dict, thread: str, stream: bool) -> list:
    """Runs a program on one thread (invoke or stream), then resumes it while it is paused."""
    from lgembed.types import Command

    cfg = {"configurable": {"thread_id": thread}, "recursion_limit": desc["recursion_limit"], "max_concurrency": 1}
    rounds = []
    payload: Any = dict(desc["input"])
    for i in range(len(desc["resume"]) + 1):
        chunks: list = []
        try:
            if stream:
                # extend() keeps the chunks yielded before an error
                chunks.extend(app.stream(payload, cfg, stream_mode=desc["modes"], durability=desc["durability"]))
                outcome: Any = ("ok",)
            else:
                outcome = ("ok", app.invoke(payload, cfg, durability=desc["durability"]))
            failed = False
        except Exception as e:  # noqa: BLE001 - every exception is compared
            outcome, failed = ("raised", e), True
        rnd: dict = {"outcome": outcome}
        if stream:
            custom = [c for c in chunks if c[0] == "custom"]
            others = [c for c in chunks if c[0] != "custom"]
            if failed:
                # after a failing task, the step's next task may or may not have started
                for j, (mode, data) in enumerate(others):
                    if mode == "tasks" and isinstance(data, dict) and data.get("error") is not None:
                        others = others[: j + 1]
                        break
                custom = None
            rnd["chunks"] = others
            rnd["custom"] = custom
        if not desc["saver"]:
            rounds.append(rnd)
            break
        try:
            snap = _snapshot(app, cfg, full=not (stream and failed))
        except Exception as e:  # noqa: BLE001
            snap = ("raised", e)
        rnd["state"] = snap
        rounds.append(rnd)
        if failed or isinstance(snap, tuple) or not snap["next"] or i == len(desc["resume"]):
            break
        st = app.get_state(cfg)
        payload = Command(resume=desc["resume"][i]) if st.interrupts else None
    if desc["saver"]:
        try:
            rounds.append({"history": _history(app, cfg)})
        except Exception as e:  # noqa: BLE001
            rounds.append({"history": ("raised", e)})
    return rounds


_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_HEX32 = re.compile(r"(?<![0-9a-f-])[0-9a-f]{32}(?![0-9a-f-])")
_TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:\d\d|Z)?")
_VERSION = re.compile(r"\b(\d{32})\.\d+\b")


def _normalize(text: str) -> str:
    text = _TIMESTAMP.sub("<ts>", text)
    text = _VERSION.sub(r"<v\1>", text)
    seen: dict = {}

    def ordinal(m: re.Match) -> str:
        return seen.setdefault(m.group(0), f"<id{len(seen)}>")

    return _HEX32.sub(ordinal, _UUID.sub(ordinal, text))


class _Records(logging.Handler):
    """Collects the messages lgembed logs (warnings about unknown channels, nodes, ...)."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append([record.name, record.levelname, record.getMessage()])


def run_program(desc: dict) -> str:
    """Everything observable of one program, as normalized JSON text."""
    logger = logging.getLogger("lgembed")
    records = _Records()
    logger.addHandler(records)
    try:
        try:
            app = _build(desc)
        except Exception as e:  # noqa: BLE001
            return _normalize(json.dumps(_plain(("build raised", e, records.messages))))
        result = {
            "invoke": _drive(app, desc, "a", stream=False),
            "stream": _drive(app, desc, "b", stream=True),
            "log": records.messages,
        }
        return _normalize(json.dumps(_plain(result)))
    finally:
        logger.removeHandler(records)


def _child_main() -> None:
    import traceback

    from lgembed import _engine

    out = sys.stdout
    sys.stdout = sys.stderr  # stray prints must not break the protocol
    out.write(json.dumps({"implementation": _engine.IMPLEMENTATION}) + "\n")
    out.flush()
    for line in sys.stdin:
        try:
            reply = {"result": run_program(json.loads(line))}
        except BaseException:  # noqa: BLE001 - a harness error is reported, not fatal
            reply = {"harness_error": traceback.format_exc()}
        out.write(json.dumps(reply) + "\n")
        out.flush()


# --- the parent: generates programs and compares the two children --------------------------------

def _sends(targets: list) -> st.SearchStrategy:
    return st.builds(lambda t, n: {"send": t, "n": n}, st.sampled_from(targets), st.integers(1, 3))


def _router_options(names: list, send_targets: list) -> st.SearchStrategy:
    """A router's options (it picks one from its input): a node or END (rarely an unknown
    node), several nodes, or a Send fan-out."""
    choices = [st.sampled_from([*names, END_] * 4 + ["ghost"])]
    if len(names) >= 2:
        choices.append(st.lists(st.sampled_from(names), min_size=2, max_size=3, unique=True))
    if send_targets:
        choices.append(_sends(send_targets))
    return st.lists(st.one_of(*choices), min_size=1, max_size=3)


@st.composite
def programs(draw: Any) -> dict:
    """A random graph program, as plain data."""
    keys = {
        k: {"type": draw(st.sampled_from(TYPES)), "reducer": draw(st.booleans())}
        for k in KEYS[: draw(st.integers(1, len(KEYS)))]
    }
    names = [f"n{i}" for i in range(draw(st.integers(1, 8)))]
    # Send targets never send, so a fan-out never fans out again (bounded work per step)
    send_targets = sorted(draw(st.sets(st.sampled_from(names), max_size=len(names) - 1)))
    senders = [n for n in names if n not in send_targets]

    nodes = []
    for name in names:
        ret = draw(
            st.sampled_from(
                ["dict"] * 8 + ["command"] * 4 + ["none", "raise", "raise_if", "raise_if", "bad_key", "bad_type"]
            )
        )
        goto = st.sampled_from([*names, END_])
        if name in senders and send_targets:
            goto = st.one_of(goto, _sends(send_targets))
        nodes.append(
            {
                "name": name,
                "defer": draw(st.integers(0, 9)) == 0,
                "ret": ret,
                "writes": draw(st.lists(st.sampled_from(sorted(keys)), max_size=3, unique=True)),
                "goto": draw(st.lists(goto, min_size=1, max_size=3)) if ret == "command" else [],
                "interrupt": draw(st.integers(0, 5)) == 0,
                "custom": draw(st.integers(0, 3)) == 0,
            }
        )

    edges: list = []
    branches: list = []
    if draw(st.integers(0, 3)) == 0:
        branches.append({"src": START_, "options": draw(_router_options(names, send_targets))})
    else:
        for dst in draw(st.lists(st.sampled_from(names), min_size=1, max_size=2, unique=True)):
            edges.append([START_, dst])
    for name in names:
        for dst in draw(st.lists(st.sampled_from([*names, END_]), max_size=2, unique=True)):
            edges.append([name, dst])
    if len(names) >= 3 and draw(st.integers(0, 3)) == 0:
        srcs = draw(st.lists(st.sampled_from(names), min_size=2, max_size=3, unique=True))
        edges.append([srcs, draw(st.sampled_from(names))])  # a waiting edge (NamedBarrierValue)
    for src in draw(st.lists(st.sampled_from(names), max_size=2, unique=True)):
        options = draw(_router_options(names, send_targets if src in senders else []))
        branches.append({"src": src, "options": options})

    saver = draw(st.integers(0, 2)) == 0
    modes = list(draw(st.permutations(MODES))[: draw(st.integers(1, len(MODES)))])
    if "tasks" not in modes:
        modes.append("tasks")  # `tasks` chunks mark a failing task (see the module docstring)
    return {
        "keys": keys,
        "nodes": nodes,
        "edges": edges,
        "branches": branches,
        "saver": saver,
        "interrupt_before": draw(st.lists(st.sampled_from(names), max_size=2, unique=True)) if saver else [],
        "interrupt_after": draw(st.lists(st.sampled_from(names), max_size=2, unique=True)) if saver else [],
        "input": {
            k: draw(st.sampled_from([_value("in", spec["type"], 1, None), _value("in", spec["type"], 3, None)]))
            for k, spec in keys.items()
            if draw(st.integers(0, 9)) > 0
        },
        "recursion_limit": draw(st.integers(2, 12)),
        "modes": modes,
        "resume": [f"R{i}" for i in range(draw(st.integers(1, 3)))] if saver else [],
        "durability": draw(st.sampled_from([None, "sync", "async", "exit"])) if saver else None,
    }


class Child:
    """One long-lived child process running one build."""

    def __init__(self, mode: str) -> None:
        self.mode = mode
        self.stderr = tempfile.TemporaryFile()  # noqa: SIM115 - open as long as the child
        path = [str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
        env = dict(os.environ, LGEMBED_EXTENSIONS=mode, PYTHONPATH=os.pathsep.join(path))
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--child"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env=env,
            cwd=str(ROOT),
            text=True,
            bufsize=1,
        )
        self.hello = self._read()

    def _read(self) -> dict:
        ready, _, _ = select.select([self.proc.stdout], [], [], TIMEOUT)
        line = self.proc.stdout.readline() if ready else ""
        if not line:
            self.close()
            self.stderr.seek(0)
            tail = self.stderr.read().decode(errors="replace")[-3000:]
            state = "timed out" if not ready else f"exited with {self.proc.returncode}"
            raise RuntimeError(f"child LGEMBED_EXTENSIONS={self.mode} {state}; stderr:\n{tail}")
        return json.loads(line)

    def run(self, desc: dict) -> str:
        self.proc.stdin.write(json.dumps(desc) + "\n")
        self.proc.stdin.flush()
        reply = self._read()
        if "harness_error" in reply:
            raise AssertionError(f"child {self.mode}: harness error\n{reply['harness_error']}")
        return reply["result"]

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@pytest.fixture(scope="module")
def children(impl_c_py):
    """The pure and the compiled child; skipped like `impl[c]` when the compiled build is not built."""
    started = []
    try:
        for mode, expected in (("off", "py"), ("required", "c")):
            child = Child(mode)
            started.append(child)
            assert child.hello == {"implementation": expected}
        yield started[0], started[1]
    finally:
        for child in started:
            child.close()


def _first_difference(a: str, b: str) -> str:
    i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return f"at char {i}:\n  py: ...{a[max(0, i - 300):i + 300]}...\n  c:  ...{b[max(0, i - 300):i + 300]}..."


@pytest.mark.c_extension
@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(desc=programs())
def test_graph_parity(children, desc):
    """docs/DESIGN.md §3: invoke, stream chunks, state, history and errors are identical in both builds."""
    py_child, c_child = children
    py, c = py_child.run(desc), c_child.run(desc)
    assert py == c, f"builds differ for program {json.dumps(desc)}\n{_first_difference(py, c)}"


@pytest.mark.c_extension
def test_children_are_deterministic(children):
    """The comparison is meaningful: one build gives the same answer twice for a program with a
    checkpointer, interrupts, Sends and parallel tasks (normalization covers the run-to-run noise)."""
    desc = {
        "keys": {"k0": {"type": "list", "reducer": True}, "k1": {"type": "int", "reducer": False}},
        "nodes": [
            {"name": "n0", "defer": False, "ret": "command", "writes": ["k0"], "goto": [{"send": "n2", "n": 3}, "n1"],
             "interrupt": True, "custom": True},
            {"name": "n1", "defer": False, "ret": "dict", "writes": ["k0", "k1"], "goto": [], "interrupt": False, "custom": True},
            {"name": "n2", "defer": False, "ret": "dict", "writes": ["k0"], "goto": [], "interrupt": False, "custom": True},
        ],
        "edges": [[START_, "n0"], ["n1", END_]],
        "branches": [],
        "saver": True,
        "interrupt_before": ["n1"],
        "interrupt_after": [],
        "input": {"k0": ["in"]},
        "recursion_limit": 10,
        "modes": list(MODES),
        "resume": ["R0", "R1", "R2"],
        "durability": None,
    }
    for child in children:
        first = child.run(desc)
        assert child.run(desc) == first
        assert '"n2:' in first and "R0" in first and '"custom"' in first


if __name__ == "__main__" and sys.argv[1:] == ["--child"]:
    sys.path.insert(0, str(ROOT))
    _child_main()
    sys.exit(0)
