"""Crash recovery of LmdbSaver: a child process running checkpointed graphs is SIGKILLed at random moments.

Statements: docs/DESIGN.md §4 (LMDB: disk-full and corruption surface as errors, never as
silent loss), issue 3 acceptance 2, and the durability table of
`lgembed.checkpoint.lmdb` ("SIGKILL loses nothing committed").

The child (`CHILD`, written to a temp file) opens an LmdbSaver on one directory
(reused across all kills, with a small initial map so the map also grows while
being killed) and runs two threads at once, each on its own thread_id, each
advancing its graph round after round with `durability="sync"`: resume the
interrupted run if the last checkpoint has tasks to finish, else start the next round.
A round is a loop of `STEPS` supersteps over a list with a reducer (bounded to its
last `KEEP` entries), with a fan-out to `WORKERS` workers by Send every fifth step.

After every kill the parent opens the environment and checks each thread's history:
newest first, each checkpoint's parent is the next one, steps go down by exactly one
(no gap, no duplicate), the first checkpoint has step -1 and no parent, and nothing
committed before the kill is gone (the previous head is still there, and the number
of stored checkpoints equals the previously verified count plus the new ones). Finally
every thread is resumed to the end of its current round and must equal the state
computed without any kill.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time

import pytest

from lgembed.checkpoint.lmdb import LmdbSaver

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KILLS = 50
# SIGKILLs the test delivers (issue 3 acceptance: at least 50)
THREADS = ("A", "B")

CHILD = r'''
import operator, sys, threading, time
from typing import Annotated, TypedDict

from lgembed.checkpoint.lmdb import LmdbSaver
from lgembed.graph import END, START, StateGraph
from lgembed.types import Send

STEPS = 30
WORKERS = 3
KEEP = 40


def bounded(a, b):
    return (a + b)[-KEEP:]


class State(TypedDict, total=False):
    round: int
    n: int
    log: Annotated[list, bounded]
    total: Annotated[int, operator.add]


def step(state):
    time.sleep(0.001)
    n = state["n"] + 1
    return {"n": n, "log": [f"s{state['round']}.{n}"], "total": n}


def worker(arg):
    time.sleep(0.001)
    return {"log": [f"w{arg['round']}.{arg['n']}.{arg['k']}"], "total": arg["k"] + 1}


def route(state):
    if state["n"] >= STEPS:
        return END
    if state["n"] % 5 == 0:
        return [Send("worker", {"round": state["round"], "n": state["n"], "k": k}) for k in range(WORKERS)]
    return "step"


def build(saver):
    g = StateGraph(State)
    g.add_node("step", step)
    g.add_node("worker", worker)
    g.add_edge(START, "step")
    g.add_conditional_edges("step", route, ["step", "worker", END])
    g.add_edge("worker", "step")
    return g.compile(checkpointer=saver)


def advance(graph, thread_id, max_rounds):
    cfg = {"configurable": {"thread_id": thread_id}}
    while True:
        st = graph.get_state(cfg)
        # `tasks`, not `next`: a snapshot's `next` leaves out tasks whose writes are
        # saved, so a run killed after its last task finished shows `next == ()`
        if st.tasks:
            graph.invoke(None, cfg, durability="sync")
            continue
        r = st.values["round"] + 1 if st.values else 0
        if r >= max_rounds:
            return
        graph.invoke({"round": r, "n": 0, "log": [f"start{r}"]}, cfg, durability="sync")


if __name__ == "__main__":
    path, max_rounds = sys.argv[1], int(sys.argv[2])
    saver = LmdbSaver(path, map_size=128 * 1024)
    graph = build(saver)
    print("ready", flush=True)
    threads = [threading.Thread(target=advance, args=(graph, t, max_rounds)) for t in sys.argv[3:]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    saver.close()
    print("done", flush=True)
'''


def _env() -> dict:
    return dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _child_module(tmp_path):
    script = tmp_path / "crash_child.py"
    script.write_text(CHILD)
    sys.path.insert(0, str(tmp_path))
    try:
        import crash_child  # the same graph, for computing the expected state in-process
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("crash_child", None)
    return script, crash_child


def _verify_history(saver, thread_id: str, known: dict) -> None:
    """Checks the checkpoints added since the last check and updates `known` (head id, count)."""
    cfg = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    head_id, count = known.get(thread_id, (None, 0))
    newer = None
    new = 0
    for tup in saver.list(cfg):
        cid = tup.checkpoint["id"]
        if newer is not None:
            assert newer.parent_config is not None, (thread_id, newer.metadata)
            assert newer.parent_config["configurable"]["checkpoint_id"] == cid, "gap in the history"
            assert newer.metadata["step"] == tup.metadata["step"] + 1, (newer.metadata, tup.metadata)
            assert newer.checkpoint["id"] > cid, "ids must decrease"
        if cid == head_id:
            break
        new += 1
        newer = tup
    else:
        assert head_id is None, f"thread {thread_id}: the previously verified head {head_id} was lost"
        if newer is not None:
            assert newer.parent_config is None and newer.metadata["step"] == -1, newer.metadata
    if new:
        latest = saver.get_tuple(cfg)
        known[thread_id] = (latest.checkpoint["id"], count + new)


def _stored_count(saver) -> int:
    """Checkpoint records in the environment (format 2: kind byte `c` after thread and namespace)."""
    with saver.env.begin() as txn:
        db = saver.env.open_db(b"lgembed.records", txn=txn, create=False)
        keys = txn.cursor(db=db).iternext(values=False)
        return sum(1 for key in keys if key.split(b"\x00\x01", 2)[2][:1] == b"c")


def test_sigkill_at_random_moments_loses_nothing_committed(tmp_path):
    """Issue 3 acceptance 2: 50 SIGKILLs; the environment opens, histories stay consistent, runs resume exactly."""
    script, child = _child_module(tmp_path)
    path = str(tmp_path / "env")
    rng = random.Random(1234)
    known: dict = {}
    kills = mid_run = 0
    started = time.monotonic()
    while kills < KILLS:
        proc = subprocess.Popen(
            [sys.executable, str(script), path, "1000000", *THREADS],
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        if rng.random() < 0.1:
            time.sleep(rng.uniform(0.0, 0.08))  # sometimes while it is still opening the environment
        else:
            line = proc.stdout.readline()
            assert line == "ready\n", (line, proc.stderr.read())
            time.sleep(rng.uniform(0.01, 0.15))
            mid_run += 1
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        stderr = proc.stderr.read()
        proc.stderr.close()
        assert proc.returncode == -signal.SIGKILL, stderr
        kills += 1
        with LmdbSaver(path) as saver:  # the environment opens after every kill
            for thread_id in THREADS:
                _verify_history(saver, thread_id, known)
            if known:
                assert _stored_count(saver) == sum(count for _, count in known.values())
    assert mid_run >= KILLS // 2
    assert all(known.get(t, (None, 0))[1] > 0 for t in THREADS), known

    # finally: every thread resumes to exactly the state a run without kills reaches
    with LmdbSaver(path) as saver:
        graph = child.build(saver)
        for thread_id in THREADS:
            cfg = {"configurable": {"thread_id": thread_id}}
            if graph.get_state(cfg).tasks:
                graph.invoke(None, cfg)
            state = graph.get_state(cfg)
            assert state.next == () and state.tasks == ()
            rounds = state.values["round"] + 1
            assert state.values == _expected(child, rounds)
            _verify_history(saver, thread_id, known)
        # the whole history, once, from the first checkpoint
        for thread_id in THREADS:
            _verify_history(saver, thread_id, {})
    assert time.monotonic() - started < 120


def _expected(child, rounds: int) -> dict:
    """The state after `rounds` complete rounds, computed without a crash (InMemorySaver).

    Each round appends more than KEEP entries to the bounded log, so the log depends on
    the last round only, and every round adds the same amount to `total`.
    """
    from lgembed.checkpoint.memory import InMemorySaver

    graph = child.build(InMemorySaver())
    cfg = {"configurable": {"thread_id": "x"}}
    child.advance(graph, "x", 1)
    per_round_total = graph.get_state(cfg).values["total"]
    last = rounds - 1
    graph2 = child.build(InMemorySaver())
    out = graph2.invoke({"round": last, "n": 0, "log": [f"start{last}"]}, cfg)
    assert len(out["log"]) == child.KEEP
    return {"round": last, "n": child.STEPS, "log": out["log"], "total": per_round_total * rounds}


@pytest.mark.parametrize("threads", [("A",), ("A", "B")])
def test_child_runs_to_completion_without_kill(tmp_path, threads):
    """The crash child itself is correct: run to the end, it reaches the computed state."""
    script, child = _child_module(tmp_path)
    path = str(tmp_path / "env")
    proc = subprocess.run(
        [sys.executable, str(script), path, "3", *threads], env=_env(), capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "ready\ndone\n"
    with LmdbSaver(path) as saver:
        graph = child.build(saver)
        for thread_id in threads:
            assert graph.get_state({"configurable": {"thread_id": thread_id}}).values == _expected(child, 3)
            _verify_history(saver, thread_id, {})
