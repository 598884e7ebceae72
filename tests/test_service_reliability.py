"""`lgembed serve` on flash: a full disk, a full LMDB map, two processes on one environment.

Why: a device's storage fills up (logs, a ballast of old files, an undersized
partition) and its LMDB map has a configured ceiling. Neither may kill the service or
damage what it committed: the run that could not be saved fails with a clear message
(status "error"), the service keeps serving, and once space is back the next run
succeeds with every earlier thread intact. Several processes (a second service, a
reader, a writer script) share one environment as LMDB allows.

The disk is full for real: as root, in a private mount namespace (`unshare -m
--propagation private`), a 2 MB tmpfs holds the environment and a ballast file takes
every free byte. The scenario runs as a subprocess under `unshare` (it starts the
service inside the namespace, so the service sees the mount) and reports JSON.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap

import pytest

sdk = pytest.importorskip("langgraph_sdk")

GRAPH = textwrap.dedent(
    """
    from typing import TypedDict
    from lgembed.graph import END, START, StateGraph

    class S(TypedDict, total=False):
        n: int
        grow: int
        blob: str

    def work(s: S) -> dict:
        out = {"n": s.get("n", 0) + 1}
        if s.get("grow"):
            out["blob"] = "x" * s["grow"]   # a big value: the checkpoint needs room
        return out

    builder = StateGraph(S)
    builder.add_node("work", work)
    builder.add_edge(START, "work")
    builder.add_edge("work", END)
    """
)

HELPERS = textwrap.dedent(
    """
    import os, signal, socket, subprocess, sys, time

    def serve_cmd(*args):
        return [sys.executable, "-m", "lgembed", "serve", *args]

    def start_service(workdir, tag, *args, env=None):
        sock_path = os.path.join(workdir, f"notify-{tag}.sock")
        if os.path.exists(sock_path):
            os.unlink(sock_path)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        sock.bind(sock_path)
        e = {k: v for k, v in os.environ.items() if k not in ("WATCHDOG_USEC", "WATCHDOG_PID", "INVOCATION_ID", "JOURNAL_STREAM")}
        e["NOTIFY_SOCKET"] = sock_path
        e.update(env or {})
        log = open(os.path.join(workdir, f"service-{tag}.log"), "ab")
        proc = subprocess.Popen(serve_cmd(*args), env=e, stdout=log, stderr=subprocess.STDOUT, cwd=workdir)
        sock.settimeout(0.2)
        deadline = time.monotonic() + 60
        while True:
            try:
                msg = sock.recv(65536).decode()
            except TimeoutError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    log.close()
                    with open(os.path.join(workdir, f"service-{tag}.log")) as f:
                        raise AssertionError(f"no READY=1 from the service (exit status {proc.poll()}):\\n{f.read()}") from None
                continue
            if "READY=1" in msg.split("\\n"):
                break
        fields = dict(line.split("=", 1) for line in msg.split("\\n"))
        return proc, sock, fields["X_LGEMBED_HTTP"]

    def run_to_end(client, thread, graph, inp):
        run = client.runs.create(thread, graph, input=inp, if_not_exists="create")
        client.runs.join(thread, run["run_id"])
        return client.runs.get(thread, run["run_id"])
    """
)


def _write_common(tmp_path) -> None:
    (tmp_path / "graph.py").write_text(GRAPH)
    (tmp_path / "helpers.py").write_text(HELPERS)


def _unshare_available() -> str | None:
    if os.geteuid() != 0:
        return "needs root (mounting a tmpfs)"
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return "unshare(1) or mount(8) not installed"
    probe = subprocess.run(["unshare", "-m", "--propagation", "private", "true"], check=False, capture_output=True, text=True)
    if probe.returncode != 0:
        return f"unshare -m not permitted here: {probe.stderr.strip()}"
    return None


# --- disk full ------------------------------------------------------------------------

DISK_FULL_SCENARIO = textwrap.dedent(
    """
    import errno, json, os, signal, subprocess, sys
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from helpers import run_to_end, start_service
    from langgraph_sdk import get_sync_client

    work = os.path.dirname(os.path.abspath(__file__))
    mnt = os.path.join(work, "flash")
    os.makedirs(mnt, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", mnt], check=True)
    out = {}
    db = os.path.join(mnt, "db")
    proc, sock, url = start_service(work, "disk", "graph.py:builder", "--graph-id", "g", "--db", db, "--http", "127.0.0.1:0")
    try:
        client = get_sync_client(url=url, api_key=None)
        out["a"] = [run_to_end(client, "a", "g", {})["status"] for _ in range(3)]
        # ballast: every free byte of the file system
        ballast = os.path.join(mnt, "ballast")
        fd = os.open(ballast, os.O_WRONLY | os.O_CREAT)
        chunk = b"\\0" * 4096
        try:
            while True:
                os.write(fd, chunk)
        except OSError as e:
            out["ballast_errno"] = e.errno
        st = os.statvfs(mnt)
        out["free_bytes"] = st.f_bavail * st.f_frsize
        # 100 % full: even the run's record cannot be written; the request fails clearly
        try:
            client.runs.create("b", "g", input={"n": 0}, if_not_exists="create")
            out["full_create"] = "accepted"
        except Exception as e:
            out["full_create"] = f"{getattr(e, 'status_code', None)} {e}"
        out["alive_when_full"] = proc.poll() is None
        # nearly full (128 kB left): the run starts, its 300 kB checkpoint does not fit
        os.ftruncate(fd, os.fstat(fd).st_size - 128 * 1024)
        os.close(fd)
        run = client.runs.create("b", "g", input={"n": 0, "grow": 300000}, if_not_exists="create")
        out["b_output"] = client.runs.join("b", run["run_id"])
        out["b_run"] = client.runs.get("b", run["run_id"])
        out["alive_after_failure"] = proc.poll() is None
        out["a_state_while_full"] = client.threads.get_state("a")["values"]
        os.unlink(ballast)
        out["c"] = run_to_end(client, "b", "g", {"n": 10, "grow": 300000})["status"]
        out["b_state"] = {k: (len(v) if k == "blob" else v) for k, v in client.threads.get_state("b")["values"].items()}
        out["a_state"] = client.threads.get_state("a")["values"]
        out["a_history"] = len(client.threads.get_history("a", limit=100))
    finally:
        proc.send_signal(signal.SIGTERM)
        out["exit"] = proc.wait(30)
    with open(os.path.join(work, "service-disk.log")) as f:
        out["log"] = f.read()
    # reopen the environment: committed data intact, the files are an LMDB environment
    from lgembed.checkpoint.lmdb import LmdbSaver
    with LmdbSaver.from_conn_string(db) as saver:
        tup = saver.get_tuple({"configurable": {"thread_id": "a"}})
        out["reopened_a"] = tup.checkpoint["channel_values"]["n"]
        out["reopened_threads"] = sorted({c.config["configurable"]["thread_id"] for c in saver.list(None)})
    print(json.dumps(out))
    """
)


def test_disk_full_fails_the_run_keeps_serving_and_recovers(tmp_path):
    why = _unshare_available()
    if why:
        pytest.skip(why)
    _write_common(tmp_path)
    script = tmp_path / "disk_full.py"
    script.write_text(DISK_FULL_SCENARIO)
    proc = subprocess.run(
        ["unshare", "-m", "--propagation", "private", sys.executable, str(script)],
        check=False, capture_output=True, text=True, timeout=120, cwd=str(tmp_path),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["a"] == ["success"] * 3
    assert out["ballast_errno"] == 28  # ENOSPC: the disk really was full
    assert out["full_create"][:4] in ("507 ", "500 ") and "No space left on device" in out["full_create"], out["full_create"]
    assert out["alive_when_full"] is True
    assert out["b_run"]["status"] == "error", out["b_run"]
    assert "No space left on device" in json.dumps(out["b_output"]), out["b_output"]
    assert out["alive_after_failure"] is True
    assert out["a_state_while_full"]["n"] == 3
    log = out["log"]
    assert "No space left on device" in log and "Free space on that file system" in log, log[-3000:]
    assert out["c"] == "success"  # space is back: the next run succeeds
    assert out["b_state"]["n"] == 11 and out["b_state"]["blob"] == 300000
    assert out["a_state"]["n"] == 3 and out["a_history"] >= 3  # committed threads intact
    assert out["exit"] == 0
    assert out["reopened_a"] == 3 and {"a", "b"} <= set(out["reopened_threads"])


# --- map full -------------------------------------------------------------------------


def _start(tmp_path, tag: str, *args: str) -> tuple[subprocess.Popen, socket.socket, str]:
    sys.path.insert(0, str(tmp_path))
    try:
        import helpers
    finally:
        sys.path.remove(str(tmp_path))
    sys.modules.pop("helpers", None)
    return helpers.start_service(str(tmp_path), tag, *args)


def _run_to_end(client, thread: str, graph: str, inp: dict) -> dict:
    run = client.runs.create(thread, graph, input=inp, if_not_exists="create")
    client.runs.join(thread, run["run_id"])
    return client.runs.get(thread, run["run_id"])


def test_map_full_fails_the_run_and_the_next_one_succeeds(tmp_path):
    _write_common(tmp_path)
    db = str(tmp_path / "db")
    proc, sock, url = _start(tmp_path, "map", "graph.py:builder", "--graph-id", "g", "--db", db, "--http", "127.0.0.1:0",
                             "--max-map-size", str(1 << 20))  # fmt: skip
    try:
        client = sdk.get_sync_client(url=url, api_key=None)
        assert _run_to_end(client, "a", "g", {"n": 0})["status"] == "success"
        failed = _run_to_end(client, "b", "g", {"n": 0, "grow": 3 << 20})  # 3 MB cannot fit a 1 MB map
        assert failed["status"] == "error"
        assert proc.poll() is None
        assert _run_to_end(client, "b", "g", {"n": 5, "grow": 0})["status"] == "success"  # grow stays in the state otherwise
        assert client.threads.get_state("b")["values"]["n"] == 6
        assert client.threads.get_state("a")["values"] == {"n": 1}
    finally:
        proc.send_signal(signal.SIGTERM)
        code = proc.wait(30)
        sock.close()
    assert code == 0
    log = (tmp_path / "service-map.log").read_text()
    assert "LMDB map is full (map_size=1048576)" in log and "max_map_size" in log


# --- several processes on one environment ---------------------------------------------

WRITER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[2])
    from graph import builder
    from lgembed.checkpoint.lmdb import LmdbSaver
    with LmdbSaver.from_conn_string(sys.argv[1]) as saver:
        app = builder.compile(checkpointer=saver)
        for i in range(int(sys.argv[3])):
            app.invoke({"n": i}, {"configurable": {"thread_id": "writer"}}, durability="sync")
    """
)


def test_two_services_a_writer_and_a_reader_share_one_environment(tmp_path):
    _write_common(tmp_path)
    (tmp_path / "writer.py").write_text(WRITER)
    db = str(tmp_path / "db")
    common = ("graph.py:builder", "--graph-id", "g", "--db", db, "--http", "127.0.0.1:0")
    p1, s1, url1 = _start(tmp_path, "one", *common)
    p2, s2, url2 = _start(tmp_path, "two", *common)
    try:
        c1, c2 = sdk.get_sync_client(url=url1, api_key=None), sdk.get_sync_client(url=url2, api_key=None)
        writer = subprocess.Popen([sys.executable, str(tmp_path / "writer.py"), db, str(tmp_path), "40"])
        for i in range(15):
            assert _run_to_end(c1, "one", "g", {})["status"] == "success"
            assert _run_to_end(c2, "two", "g", {})["status"] == "success"
        assert writer.wait(60) == 0
        # each service reads what the other (and the writer) committed
        assert c2.threads.get_state("one")["values"]["n"] == 15
        assert c1.threads.get_state("two")["values"]["n"] == 15
        # the writer's thread has checkpoints but no API thread record (it was not made
        # through the API, as with LangGraph's server): the reader below sees it
        reader = subprocess.run(
            [sys.executable, "-c",
             "import sys; from lgembed.checkpoint.lmdb import LmdbSaver\n"
             "with LmdbSaver.from_conn_string(sys.argv[1]) as s:\n"
             "    print(sorted({c.config['configurable']['thread_id'] for c in s.list(None)}))", db],
            check=False, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert reader.returncode == 0, reader.stderr
        assert {"one", "two", "writer"} <= set(eval(reader.stdout))
    finally:
        for p in (p1, p2):
            p.send_signal(signal.SIGTERM)
        codes = [p1.wait(30), p2.wait(30)]
        s1.close()
        s2.close()
    assert codes == [0, 0]
    # only the first holds the lock that resumes cut-off runs; the second left them to it
    assert "another lgembed serve holds" in (tmp_path / "service-two.log").read_text()
    from lgembed.checkpoint.lmdb import LmdbSaver

    with LmdbSaver.from_conn_string(db) as saver:
        for thread, n in (("one", 15), ("two", 15), ("writer", 40)):
            assert saver.get_tuple({"configurable": {"thread_id": thread}}).checkpoint["channel_values"]["n"] == n
        assert len(list(saver.list({"configurable": {"thread_id": "one"}}))) >= 15 * 2  # nothing lost


def test_failed_start_on_a_busy_port_exits_1_and_leaves_the_environment_usable(tmp_path):
    _write_common(tmp_path)
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    port = busy.getsockname()[1]
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "lgembed", "serve",
             "graph.py:builder", "--db", str(tmp_path / "db"), "--http", f"127.0.0.1:{port}"],
            check=False, capture_output=True, text=True, timeout=60, cwd=str(tmp_path),
        )  # fmt: skip
    finally:
        busy.close()
    assert proc.returncode == 1
    assert "Starting the service failed" in proc.stderr and "Address already in use" in proc.stderr
    p, s, url = _start(tmp_path, "after", "graph.py:builder", "--graph-id", "g", "--db", str(tmp_path / "db"), "--http", "127.0.0.1:0")
    try:
        assert _run_to_end(sdk.get_sync_client(url=url, api_key=None), "t", "g", {})["status"] == "success"
    finally:
        p.send_signal(signal.SIGTERM)
        assert p.wait(30) == 0
        s.close()
