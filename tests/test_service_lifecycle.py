"""`lgembed serve` through its life: drain on SIGTERM, resume after SIGTERM and SIGKILL,
the watchdog stopping for a hung node, interval and hardware-event triggers.

Why: these are the promises a service makes to systemd and to the operator, and each
one is only true of the real thing: the service runs as a subprocess, systemd's side is
a unix datagram socket bound in tmp_path ($NOTIFY_SOCKET), runs are started with
langgraph-sdk's sync client over HTTP on 127.0.0.1, and state lives in a real LMDB
directory. A graph node appends its step number to a file, so the tests see which steps
ran, and how often, across a stop and a restart. No timing assertions: waits have
generous deadlines, counts have loose bounds.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from _notify_socket import NotifySocket  # noqa: E402

sdk = pytest.importorskip("langgraph_sdk")

GRAPHS = textwrap.dedent(
    """
    import os
    import time
    from typing import TypedDict
    from lgembed.graph import END, START, StateGraph

    class Slow(TypedDict, total=False):
        n: int
        total: int
        limit: int
        delay: float
        progress: str

    def step(s: Slow) -> dict:
        n = s.get("n", 0)
        with open(s["progress"], "a") as f:
            f.write(f"{n}\\n")
        time.sleep(s.get("delay", 0.0))
        return {"n": n + 1, "total": s.get("total", 0) + n * n}

    slow = StateGraph(Slow)
    slow.add_node("step", step)
    slow.add_edge(START, "step")
    slow.add_conditional_edges("step", lambda s: "step" if s["n"] < s["limit"] else END)

    class Hang(TypedDict, total=False):
        marker: str
        release: str
        done: bool

    def hang_node(s: Hang) -> dict:
        open(s["marker"], "w").close()
        while not os.path.exists(s["release"]):
            time.sleep(0.05)
        return {"done": True}

    hang = StateGraph(Hang)
    hang.add_node("hang", hang_node)
    hang.add_edge(START, "hang")
    hang.add_edge("hang", END)

    class Count(TypedDict, total=False):
        n: int
        tick: bool
        event: dict
        lines: list

    def count(s: Count) -> dict:
        out = {"n": s.get("n", 0) + 1}
        if s.get("event"):
            out["lines"] = (s.get("lines") or [])[-4:] + [s["event"]["data"]["line"]]
        return out

    counter = StateGraph(Count)
    counter.add_node("count", count)
    counter.add_edge(START, "count")
    counter.add_edge("count", END)

    def factory(device):
        assert device is not None and "gps" in device.simulated
        return counter
    """
)


# --- helpers --------------------------------------------------------------------------


class Served:
    """One `lgembed serve` subprocess on a config file, with its notify socket."""

    def __init__(self, tmp_path, config: str, env: dict | None = None, tag: str = "a") -> None:
        self.tmp_path = tmp_path
        self.notify = NotifySocket(str(tmp_path / f"notify-{tag}-{time.monotonic_ns()}.sock"))
        e = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "JOURNAL_STREAM", "INVOCATION_ID")}
        e["NOTIFY_SOCKET"] = self.notify.path
        e.update(env or {})
        self.log_path = tmp_path / f"service-{tag}.log"
        log = open(self.log_path, "ab")
        self.proc = subprocess.Popen(serve_cmd("--config", config), env=e, stdout=log, stderr=subprocess.STDOUT, cwd=str(tmp_path))
        log.close()
        ready = self.notify.wait_for("READY=1", 60)
        fields = dict(line.split("=", 1) for line in ready.split("\n"))
        self.url = fields.get("X_LGEMBED_HTTP")
        self.client = sdk.get_sync_client(url=self.url, api_key=None) if self.url else None

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"the service did not exit within {timeout} s after {sig!r}; log:\n{self.log()}") from None

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.notify.close()


def serve_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "lgembed", "serve", *args]


def write_config(tmp_path, service: dict | None = None, extra: str = "") -> str:
    (tmp_path / "graphs.py").write_text(GRAPHS)
    settings = {"db": "db", "http": "127.0.0.1:0", "stop_timeout": 15.0, **(service or {})}
    lines = "\n".join(f"{k} = {json.dumps(v)}" for k, v in settings.items())
    text = f"[service]\n{lines}\n" + textwrap.dedent(
        """
        [graphs.slow]
        path = "graphs.py:slow"
        [graphs.hang]
        path = "graphs.py:hang"
        [graphs.counter]
        path = "graphs.py:counter"
        """
    ) + textwrap.dedent(extra)
    path = tmp_path / "service.toml"
    path.write_text(text)
    return str(path)


def wait_until(pred, timeout: float = 30.0, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = pred()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"{what} not reached within {timeout} s")


def values_of(client, thread: str) -> dict:
    """The thread's values, {} while the thread does not exist yet."""
    try:
        return client.threads.get_state(thread)["values"]
    except sdk.errors.NotFoundError:
        return {}


def progress(path) -> list[int]:
    try:
        return [int(x) for x in open(path).read().split()]
    except FileNotFoundError:
        return []


def uninterrupted(limit: int) -> dict:
    """The final values of the slow graph run in-process, without a stop (delay 0)."""
    import importlib.util
    import tempfile

    from lgembed.checkpoint.memory import InMemorySaver

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "ref_graphs.py")
        with open(path, "w") as f:
            f.write(GRAPHS)
        spec = importlib.util.spec_from_file_location("ref_graphs", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        app = mod.slow.compile(checkpointer=InMemorySaver())
        out = app.invoke({"limit": limit, "delay": 0.0, "progress": os.path.join(d, "p")}, {"configurable": {"thread_id": "r"}})
    return {k: v for k, v in out.items() if k not in ("progress", "delay")}


# --- drain and resume -----------------------------------------------------------------


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_stop_mid_run_then_restart_resumes_to_the_same_result(tmp_path, sig):
    config = write_config(tmp_path)
    limit, prog = 12, str(tmp_path / "progress.txt")
    first = Served(tmp_path, config, tag="first")
    try:
        thread = first.client.threads.create()["thread_id"]
        run = first.client.runs.create(thread, "slow", input={"limit": limit, "delay": 0.25, "progress": prog})
        wait_until(lambda: len(progress(prog)) >= 3, what="three steps")
        assert first.stop(sig) == (0 if sig == signal.SIGTERM else -signal.SIGKILL)
        if sig == signal.SIGTERM:
            first.notify.wait_for("STOPPING=1", 5)
            assert "drained" in first.log()
    finally:
        first.close()
    cut = progress(prog)
    assert 3 <= len(cut) < limit, cut  # stopped mid-run

    second = Served(tmp_path, config, tag="second")
    try:
        assert f"resumed 1 cut-off run(s) from their last checkpoint: {run['run_id']}" in second.log()
        values = second.client.runs.join(thread, run["run_id"])
        assert {k: v for k, v in values.items() if k not in ("progress", "delay")} == uninterrupted(limit)
        assert second.client.runs.get(thread, run["run_id"])["status"] == "success"
        assert second.stop() == 0
    finally:
        second.close()
    steps = progress(prog)
    assert sorted(set(steps)) == list(range(limit))
    if sig == signal.SIGTERM:
        assert steps == list(range(limit))  # the running step finished and was checkpointed: nothing ran twice
    else:
        assert len(steps) - limit <= 1  # at most the step SIGKILL cut short ran again


def test_drain_answers_503_to_new_runs_and_exits_0_within_stop_timeout(tmp_path):
    config = write_config(tmp_path, service={"stop_timeout": 10.0})
    prog = str(tmp_path / "progress.txt")
    served = Served(tmp_path, config)
    try:
        thread = served.client.threads.create()["thread_id"]
        served.client.runs.create(thread, "slow", input={"limit": 50, "delay": 2.0, "progress": prog})
        wait_until(lambda: progress(prog), what="the first step")
        served.proc.send_signal(signal.SIGTERM)
        served.notify.wait_for("STOPPING=1", 5)
        # during the drain (the step sleeps 2 s; the API closes after the drain) reads work
        # and new runs are refused with 503
        assert served.client.threads.get_state(thread)["values"]["limit"] == 50
        with pytest.raises(sdk.errors.APIStatusError) as info:
            served.client.runs.create(thread, "counter", input={}, multitask_strategy="enqueue")
        assert info.value.status_code == 503
        assert served.proc.wait(15) == 0
    finally:
        served.close()
    assert len(progress(prog)) < 50


# --- the watchdog ---------------------------------------------------------------------


def test_a_hung_node_stops_the_watchdog_pets(tmp_path):
    config = write_config(tmp_path, service={"step_timeout": 1.0})
    marker, release = tmp_path / "hanging", tmp_path / "release"
    served = Served(tmp_path, config, env={"WATCHDOG_USEC": "400000"})
    try:
        assert "WATCHDOG=1" in served.notify.collect(1.0)  # healthy: pets arrive
        thread = served.client.threads.create()["thread_id"]
        served.client.runs.create(thread, "hang", input={"marker": str(marker), "release": str(release)})
        wait_until(marker.exists, what="the node to start hanging")
        stalled = served.notify.wait_for("STATUS=", 10)
        while "STALLED" not in stalled:
            stalled = served.notify.wait_for("STATUS=", 10)
        served.notify.collect(0.5)  # a pet already in flight
        window = served.notify.collect(2.0)
        assert "WATCHDOG=1" not in window, window  # hung: systemd would kill and restart us
        assert "superstep has run for more than step_timeout=1 s" in served.log()
        release.touch()
        served.notify.wait_for("WATCHDOG=1", 10)  # the step ended: healthy again
        assert served.client.runs.join(thread, served.client.runs.list(thread)[0]["run_id"])["done"] is True
        assert served.stop() == 0
    finally:
        release.touch()
        served.close()


# --- triggers -------------------------------------------------------------------------


def test_interval_trigger_runs_appear_on_the_thread(tmp_path):
    config = write_config(
        tmp_path,
        extra="""
        [[triggers]]
        kind = "interval"
        graph = "counter"
        thread = "ticks"
        every = 0.2
        input = { tick = true }
        """,
    )
    served = Served(tmp_path, config)
    try:
        values = wait_until(lambda: (v := values_of(served.client, "ticks")).get("n", 0) >= 3 and v, what="three interval runs")
        assert values["tick"] is True
        runs = served.client.runs.list("ticks", limit=100)
        assert len(runs) >= 3 and all(r["metadata"].get("trigger") == "interval" for r in runs)
        assert served.stop() == 0
    finally:
        served.close()


DEVICE = """
[device]
name = "gps-box"

[adapters.gps]
kind = "uart"
port = "/dev/serial0"
baudrate = 9600
simulator = "nmea-gps"
simulation = { interval = 0.3, latitude = 48.1173, longitude = 11.5167 }
"""


def test_event_trigger_runs_on_uart_lines_of_a_simulated_device(tmp_path):
    pytest.importorskip("serial")
    (tmp_path / "device.toml").write_text(DEVICE)
    config = write_config(
        tmp_path,
        service={"device": "device.toml", "simulate": True},
        extra="""
        [graphs.gps]
        path = "graphs.py:factory"
        [[triggers]]
        kind = "event"
        graph = "gps"
        thread = "gps"
        source = "gps"
        """,
    )
    served = Served(tmp_path, config)
    try:
        values = wait_until(lambda: (v := values_of(served.client, "gps")).get("n", 0) >= 4 and v, what="four event runs")
        lines = values["lines"]
        assert any(ln.startswith("$GPGGA,") for ln in lines) and any(ln.startswith("$GPRMC,") for ln in lines)
        assert values["event"]["source"] == "gps" and values["event"]["kind"] == "uart_line"
        assert served.stop() == 0
    finally:
        served.close()


# --- in-process -----------------------------------------------------------------------


def test_service_in_process_with_a_trigger_and_no_api(tmp_path):
    from lgembed.service.app import Service
    from lgembed.service.config import load_config
    from lgembed.service.notify import Notifier

    config = write_config(
        tmp_path,
        service={"http": ""},
        extra="""
        [[triggers]]
        kind = "interval"
        graph = "counter"
        thread = "ticks"
        every = 0.1
        """,
    )
    ns = NotifySocket(str(tmp_path / "inproc.sock"))
    service = Service(load_config(config), notifier=Notifier(ns.path))
    service.start()
    assert service.url is None and service.primary
    result: list[int] = []
    t = threading.Thread(target=lambda: result.append(service.serve()))
    t.start()
    try:
        ns.wait_for("READY=1", 5)
        # `fired` counts runs created, and a tick that finds the thread busy starts none:
        # once the 4th is created, the 3rd has finished (a stop may cut the 4th short)
        wait_until(lambda: service.triggers.fired >= 4, what="four trigger runs")
        assert "triggered" in service.status_text()
    finally:
        service.request_stop("test")
        t.join(30)
    assert result == [0] and service.drained is True
    ns.wait_for("STOPPING=1", 5)
    ns.close()
    from lgembed.checkpoint.lmdb import LmdbSaver

    with LmdbSaver.from_conn_string(str(tmp_path / "db")) as saver:
        tup = saver.get_tuple({"configurable": {"thread_id": "ticks"}})
        assert tup is not None and json.loads(json.dumps(tup.checkpoint["channel_values"]["n"])) >= 3


# --- Triggers in isolation ------------------------------------------------------------


class _FakeManager:
    """Records create_run calls; answers 409 or a long queue on request."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.busy = False
        self.queued = 0

    def create_run(self, thread_id, assistant_id, **kwargs):
        if self.busy:
            err = RuntimeError("Thread is busy")
            err.status = 409
            raise err
        self.calls.append((thread_id, assistant_id, kwargs))
        return {"run_id": f"r{len(self.calls)}"}

    def pending_runs(self, thread_id):
        return ["x"] * self.queued


def test_triggers_skip_a_busy_thread_and_bound_queued_runs():
    from lgembed.service.config import TriggerSpec
    from lgembed.service.triggers import MAX_QUEUED, Triggers

    m = _FakeManager()
    interval = TriggerSpec("interval", "g", "t", {"tick": True}, every=0.05)
    event = TriggerSpec("event", "g", "e", {"base": 1}, source="button", multitask_strategy="enqueue", index=1)
    trig = Triggers([interval], m)
    trig._fire(interval, {"tick": True}, "interval")
    assert m.calls == [("t", "g", {"input": {"tick": True}, "if_not_exists": "create", "multitask_strategy": "reject",
                                   "metadata": {"trigger": "interval", "trigger_index": 0, "occasion": "interval"}})]  # fmt: skip
    m.busy = True
    trig._fire(interval, {"tick": True}, "interval")
    assert (trig.fired, trig.failed, trig.last_error) == (1, 1, None)  # a busy thread is a skip, not an error
    m.busy, m.queued = False, MAX_QUEUED + 1
    trig._fire(event, {"base": 1, "event": {}}, "gpio_edge")
    assert trig.dropped == 1 and len(m.calls) == 1
    m.queued = 0
    trig._fire(event, {"base": 1, "event": {}}, "gpio_edge")
    assert len(m.calls) == 2 and m.calls[-1][2]["multitask_strategy"] == "enqueue"
    trig.stop()
    trig._fire(interval, {}, "interval")
    assert len(m.calls) == 2  # nothing starts after stop()
    with pytest.raises(ValueError, match="an event trigger needs a device"):
        Triggers([event], m)


def test_interval_trigger_thread_fires_until_stopped():
    from lgembed.service.config import TriggerSpec
    from lgembed.service.triggers import Triggers

    m = _FakeManager()
    trig = Triggers([TriggerSpec("interval", "g", "t", {}, every=0.02)], m)
    trig.start()
    wait_until(lambda: len(m.calls) >= 3, 10, "three interval runs")
    trig.stop()
    n = len(m.calls)
    time.sleep(0.1)
    assert len(m.calls) == n
