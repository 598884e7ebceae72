"""sd_notify, the watchdog interval, journald logging and the service config.

Why: systemd learns everything about `lgembed serve` (ready, alive, status, stopping)
from datagrams on $NOTIFY_SOCKET, and journald reads its stderr. These tests bind a real
unix datagram socket in tmp_path, run the service as a real subprocess, and read what
arrives: READY=1 once it serves, WATCHDOG=1 at half of WATCHDOG_USEC, STATUS= lines,
STOPPING=1 on SIGTERM. The unit tests pin the pieces: abstract sockets, errors logged
once, WATCHDOG_PID, `<N>` priority lines without timestamps, token redaction, and
config errors that name the file, key, value and what is allowed (exit status 2).
"""

from __future__ import annotations

import io
import logging
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from _notify_socket import NotifySocket  # noqa: E402

from lgembed.service import logs
from lgembed.service.config import ConfigError, load_config, parse_http
from lgembed.service.notify import Notifier, watchdog_interval

# --- helpers --------------------------------------------------------------------------


def serve_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "lgembed", "serve", *args]


GRAPH = textwrap.dedent(
    """
    from typing import TypedDict
    from lgembed.graph import StateGraph, START, END

    class S(TypedDict, total=False):
        n: int

    def inc(s: S) -> dict:
        return {"n": s.get("n", 0) + 1}

    builder = StateGraph(S)
    builder.add_node("inc", inc)
    builder.add_edge(START, "inc")
    builder.add_edge("inc", END)
    """
)


@pytest.fixture
def graph_file(tmp_path):
    path = tmp_path / "counter.py"
    path.write_text(GRAPH)
    return str(path)


def start(tmp_path, notify: NotifySocket | None, *args: str, env: dict | None = None) -> subprocess.Popen:
    e = {k: v for k, v in os.environ.items() if k not in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID", "JOURNAL_STREAM", "INVOCATION_ID")}
    if notify is not None:
        e["NOTIFY_SOCKET"] = notify.path
    e.update(env or {})
    log = open(tmp_path / "service.log", "ab")
    return subprocess.Popen(serve_cmd(*args), env=e, stdout=log, stderr=subprocess.STDOUT, cwd=str(tmp_path))


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM, timeout: float = 30.0) -> int:
    if proc.poll() is None:
        proc.send_signal(sig)
    try:
        return proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise


# --- Notifier and watchdog_interval ------------------------------------------------------


def test_notifier_sends_to_a_path_socket(tmp_path):
    ns = NotifySocket(str(tmp_path / "n.sock"))
    n = Notifier(ns.path)
    assert n.notify("READY=1", "STATUS=hello") is True
    assert ns.wait_for("READY=1", 5) == "READY=1\nSTATUS=hello"
    n.close()
    ns.close()


def test_notifier_sends_to_an_abstract_socket():
    name = f"lgembed-test-{os.getpid()}-{time.monotonic_ns()}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind("\0" + name)
    sock.settimeout(5)
    n = Notifier("@" + name)
    assert n.notify("WATCHDOG=1")
    assert sock.recv(100) == b"WATCHDOG=1"
    sock.close()
    n.close()


def test_notifier_without_socket_is_a_no_op(monkeypatch):
    monkeypatch.delenv("NOTIFY_SOCKET", raising=False)
    n = Notifier()
    assert n.address is None
    assert n.notify("READY=1") is False


def test_notifier_reads_notify_socket_from_the_environment(tmp_path, monkeypatch):
    ns = NotifySocket(str(tmp_path / "env.sock"))
    monkeypatch.setenv("NOTIFY_SOCKET", ns.path)
    assert Notifier().notify("STOPPING=1")
    assert ns.wait_for("STOPPING=1", 5)
    ns.close()


def test_notifier_logs_a_failing_socket_once(tmp_path, caplog):
    n = Notifier(str(tmp_path / "missing.sock"))
    with caplog.at_level(logging.WARNING, logger="lgembed.service"):
        assert n.notify("WATCHDOG=1") is False
        assert n.notify("WATCHDOG=1") is False
        assert n.notify("WATCHDOG=1") is False
    records = [r for r in caplog.records if "Notifying systemd" in r.getMessage()]
    assert len(records) == 1
    assert "missing.sock" in records[0].getMessage()
    assert "No such file" in records[0].getMessage()


@pytest.mark.parametrize(
    ("usec", "pid", "expected"),
    [
        ("400000", None, 0.2),
        ("2000000", "self", 1.0),
        ("2000000", "1", None),  # another process is the watchdog's
        ("", None, None),
        ("0", None, None),
    ],
)
def test_watchdog_interval(monkeypatch, usec, pid, expected):
    monkeypatch.setenv("WATCHDOG_USEC", usec)
    if pid is None:
        monkeypatch.delenv("WATCHDOG_PID", raising=False)
    else:
        monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()) if pid == "self" else pid)
    assert watchdog_interval() == expected


def test_watchdog_interval_bad_value_is_logged(monkeypatch, caplog):
    monkeypatch.setenv("WATCHDOG_USEC", "soon")
    monkeypatch.delenv("WATCHDOG_PID", raising=False)
    with caplog.at_level(logging.WARNING, logger="lgembed.service"):
        assert watchdog_interval() is None
    assert "WATCHDOG_USEC='soon'" in caplog.text


# --- logging --------------------------------------------------------------------------


def _logger_to(handler: logging.Handler) -> logging.Logger:
    lg = logging.getLogger(f"lgembed.test.{time.monotonic_ns()}")
    lg.propagate = False
    lg.addHandler(handler)
    lg.setLevel(logging.DEBUG)
    return lg


def test_journal_lines_have_priorities_and_no_timestamps():
    out = io.StringIO()
    h = logging.StreamHandler(out)
    h.setFormatter(logs.JournalFormatter())
    lg = _logger_to(h)
    lg.debug("d")
    lg.info("i")
    lg.warning("w")
    lg.error("e")
    lg.critical("c")
    try:
        raise ValueError("boom")
    except ValueError:
        lg.exception("failed")
    lines = out.getvalue().splitlines()
    assert [ln[:3] for ln in lines[:5]] == ["<7>", "<6>", "<4>", "<3>", "<2>"]
    assert lines[1] == f"<6>{lg.name}: i"
    tb = lines[5:]
    assert len(tb) > 3 and all(ln.startswith("<3>") for ln in tb)  # every traceback line keeps the priority
    assert tb[-1] == "<3>ValueError: boom"
    assert not any(ch.isdigit() for ch in lines[1].split(":", 1)[1])  # no time in the line


def test_redact_filter_hides_secrets_in_message_args_and_traceback():
    secret = "s3cr3t-token-value"
    out = io.StringIO()
    h = logging.StreamHandler(out)
    h.setFormatter(logging.Formatter("%(message)s"))
    h.addFilter(logs.RedactFilter([secret, "ab"]))
    lg = _logger_to(h)
    lg.info("token is %s", secret)
    lg.info("about absent abstractions")
    lg.info(f"inline {secret}!")
    try:
        raise RuntimeError(f"header x-api-key: {secret}")
    except RuntimeError:
        lg.exception("request failed")
    text = out.getvalue()
    assert secret not in text
    assert text.count("[REDACTED]") == 3
    assert "about absent abstractions" in text  # a 2-character "secret" is ignored, not redacted everywhere
    assert "token is [REDACTED]" in text


def test_under_journald_matches_journal_stream(tmp_path, monkeypatch):
    f = open(tmp_path / "stderr", "w")
    st = os.fstat(f.fileno())
    monkeypatch.delenv("INVOCATION_ID", raising=False)
    monkeypatch.setenv("JOURNAL_STREAM", f"{st.st_dev}:{st.st_ino}")
    assert logs.under_journald(f)
    monkeypatch.setenv("JOURNAL_STREAM", f"{st.st_dev}:{st.st_ino + 1}")
    assert not logs.under_journald(f)  # the stream was redirected away from the journal
    monkeypatch.delenv("JOURNAL_STREAM")
    assert not logs.under_journald(f)
    monkeypatch.setenv("INVOCATION_ID", "0123abcd")
    assert logs.under_journald(f)  # a systemd service whose stderr is not a tty
    f.close()


def test_configure_picks_the_format_and_rejects_bad_values(monkeypatch):
    monkeypatch.delenv("JOURNAL_STREAM", raising=False)
    monkeypatch.delenv("INVOCATION_ID", raising=False)
    root = logging.getLogger()
    old_level = root.level
    out = io.StringIO()
    try:
        h = logs.configure("info", "journal", secrets=["tok-12345"], stream=out)
        logging.getLogger("lgembed.x").warning("using tok-12345")
        assert out.getvalue() == "<4>lgembed.x: using [REDACTED]\n"
        h2 = logs.configure("debug", "text", stream=out)
        assert h not in root.handlers and h2 in root.handlers  # replaced, not stacked
        logging.getLogger("lgembed.x").debug("plain")
        assert out.getvalue().splitlines()[-1].endswith("DEBUG   lgembed.x: plain")
        assert out.getvalue().splitlines()[-1][:4].isdigit()  # the text format has a timestamp
        with pytest.raises(ValueError, match=r"the log format must be one of auto, journal, text \(got 'json'\)"):
            logs.configure("info", "json")
        with pytest.raises(ValueError, match=r"the log level must be one of .* \(got 'loud'\)"):
            logs.configure("loud", "text")
    finally:
        for hd in [x for x in root.handlers if getattr(x, "_lgembed_service_handler", False)]:
            root.removeHandler(hd)
        root.setLevel(old_level)


# --- config ---------------------------------------------------------------------------


def _write(tmp_path, text: str) -> str:
    p = tmp_path / "service.toml"
    p.write_text(textwrap.dedent(text))
    return str(p)


def test_config_file_resolves_paths_relative_to_itself(tmp_path):
    path = _write(
        tmp_path,
        """
        [service]
        db = "state"
        http = "127.0.0.1:0"
        stop_timeout = 5
        [graphs.counter]
        path = "counter.py:builder"
        [[triggers]]
        kind = "interval"
        graph = "counter"
        thread = "t"
        every = 2
        """,
    )
    cfg = load_config(path, db=None, http="")
    assert cfg.db == str(tmp_path / "state")
    assert cfg.http is None  # the flag overrides the file
    assert cfg.stop_timeout == 5.0 and cfg.step_timeout == 60.0
    assert cfg.graphs["counter"].base_dir == str(tmp_path)
    (trig,) = cfg.triggers
    assert (trig.kind, trig.every, trig.multitask_strategy) == ("interval", 2.0, "reject")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('[service]\ndb = "d"\nstop_timeout = -1\n[graphs.g]\npath = "m:g"',
         "invalid value for 'service.stop_timeout': -1; allowed: a number of seconds above 0"),
        ('[service]\ndb = "d"\nhttp = "8123"\n[graphs.g]\npath = "m:g"',
         "invalid value for 'service.http': '8123'; allowed: HOST:PORT"),
        ('[service]\ndb = "d"\ncolour = 1\n[graphs.g]\npath = "m:g"',
         "unknown key 'service.colour'; allowed in service: db, http,"),
        ('[service]\ndb = "d"\n[graphs.g]\npath = "nocolon"',
         "invalid value for 'graphs.g.path': 'nocolon'; allowed: MODULE:ATTR or FILE.py:ATTR"),
        ('[service]\ndb = "d"\n[graphs.g]\npath = "m:g"\n[[triggers]]\nkind = "cron"\ngraph = "g"',
         "invalid value for 'triggers[0].kind': 'cron'; allowed: interval, event"),
        ('[service]\ndb = "d"\n[graphs.g]\npath = "m:g"\n[[triggers]]\nkind = "interval"\ngraph = "h"\nthread = "t"\nevery = 1',
         "invalid value for 'triggers[0].graph': 'h'; allowed: a graph id of this service (g)"),
        ('[service]\ndb = "d"\n[graphs.g]\npath = "m:g"\n[[triggers]]\nkind = "event"\ngraph = "g"\nthread = "t"\nsource = "b"',
         "'triggers[0]' is an event trigger, which needs a device file"),
        ('[service]\ndb = "d"\nfsync = "never"\n[graphs.g]\npath = "m:g"',
         "invalid value for 'service.fsync': 'never'; allowed: deferred, commit, always"),
        ('[service]\ndb = "d"\nhttp = "0.0.0.0:8123"\n[graphs.g]\npath = "m:g"',
         "binds the API to a non-loopback address without a token"),
        ('[service]\ndb = "d"\n', "no graph to serve"),
        ("[service\n", "invalid TOML"),
    ],
)  # fmt: skip
def test_config_errors_name_file_key_value_and_allowed(tmp_path, body, message):
    path = _write(tmp_path, body)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(path) or str(info.value).startswith(f"Reading service config {path}")
    assert message in str(info.value)


def test_parse_http():
    assert parse_http("127.0.0.1:0") == ("127.0.0.1", 0)
    assert parse_http("[::1]:8123") == ("::1", 8123)
    assert parse_http("") is None
    with pytest.raises(ConfigError, match=r"invalid value for '--http': 'host:99999'"):
        parse_http("host:99999")


def test_token_file_errors(tmp_path):
    cfg = load_config(None, target="m:g", db=str(tmp_path / "d"), token_file=str(tmp_path / "none"))
    with pytest.raises(ConfigError, match=r"Reading the API token file .*none: No such file or directory"):
        cfg.token()
    (tmp_path / "empty").write_text("\n")
    cfg.token_file = str(tmp_path / "empty")
    with pytest.raises(ConfigError, match="it is empty"):
        cfg.token()


def test_bad_config_exits_2_with_the_message(tmp_path):
    path = _write(tmp_path, '[service]\ndb = "d"\nstep_timeout = "long"\n[graphs.g]\npath = "m:g"\n')
    proc = subprocess.run(check=False, args=serve_cmd("--config", path), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert f"{path}: invalid value for 'service.step_timeout': 'long'; allowed: a number of seconds above 0" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_missing_db_and_bad_graph_exit_2(tmp_path, graph_file):
    proc = subprocess.run(check=False, args=serve_cmd(f"{graph_file}:builder"), capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "no LMDB environment: set 'db' in [service] or pass --db DIR" in proc.stderr
    proc = subprocess.run(
        serve_cmd(f"{graph_file}:nothing", "--db", str(tmp_path / "db"), "--http", ""), check=False, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert "has no attribute 'nothing'" in proc.stderr


# --- the protocol, end to end -----------------------------------------------------------


def test_ready_watchdog_status_and_stopping(tmp_path, graph_file):
    ns = NotifySocket(str(tmp_path / "notify.sock"))
    proc = start(tmp_path, ns, f"{graph_file}:builder", "--db", str(tmp_path / "db"), "--http", "127.0.0.1:0",
                 env={"WATCHDOG_USEC": "400000"})  # fmt: skip
    try:
        ready = ns.wait_for("READY=1")
        fields = dict(line.split("=", 1) for line in ready.split("\n"))
        assert fields["MAINPID"] == str(proc.pid)
        assert fields["STATUS"].startswith("serving 1 graph on http://127.0.0.1:")
        assert fields["X_LGEMBED_HTTP"].startswith("http://127.0.0.1:")
        window = ns.collect(2.0)
        pets = sum(m == "WATCHDOG=1" for m in window)
        assert 3 <= pets <= 40, window  # every 0.2 s: about 10 in 2 s; loose bounds, no timing claim
        assert stop(proc) == 0
        stopping = ns.wait_for("STOPPING=1", 10)
        assert "STATUS=stopping" in stopping
    finally:
        if proc.poll() is None:
            proc.kill()
        ns.close()


def test_watchdog_pid_of_another_process_means_no_pets(tmp_path, graph_file):
    ns = NotifySocket(str(tmp_path / "notify.sock"))
    proc = start(tmp_path, ns, f"{graph_file}:builder", "--db", str(tmp_path / "db"), "--http", "",
                 env={"WATCHDOG_USEC": "400000", "WATCHDOG_PID": "1"})  # fmt: skip
    try:
        ns.wait_for("READY=1")
        assert "WATCHDOG=1" not in ns.collect(1.5)
        assert stop(proc) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        ns.close()


def test_journal_format_under_systemd_and_token_never_logged(tmp_path, graph_file):
    token = "tok-" + "9" * 24
    (tmp_path / "token").write_text(token + "\n")
    ns = NotifySocket(str(tmp_path / "notify.sock"))
    proc = start(
        tmp_path, ns, f"{graph_file}:builder", "--db", str(tmp_path / "db"), "--http", "127.0.0.1:0",
        "--token-file", str(tmp_path / "token"), "--log-level", "debug",
        env={"INVOCATION_ID": "0123456789abcdef"},  # what systemd sets; stderr is a file, not a tty
    )  # fmt: skip
    try:
        ns.wait_for("READY=1")
        assert stop(proc) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
        ns.close()
    text = (tmp_path / "service.log").read_text()
    lines = [ln for ln in text.splitlines() if ln]
    assert lines and all(ln[0] == "<" and ln[2] == ">" for ln in lines), lines
    assert any(ln.startswith("<6>lgembed.service: ready: serving 1 graph") for ln in lines)
    assert token not in text


def test_status_line_shows_run_counts_and_the_last_error(tmp_path):
    from lgembed.service.app import Service

    class Manager:
        def stats(self):
            return {"done": 7, "failed": 1, "active": 0, "last_error": "run r1: LmdbDiskFullError: No space left"}

    cfg = load_config(None, target="m:g", db=str(tmp_path / "db"), http="")
    service = Service(cfg, notifier=Notifier(""))
    service.graphs = {"g": object()}
    assert service.status_text() == "serving 1 graph"  # a manager without stats(): what is known
    service.manager = Manager()
    service._stalled = ["r2"]
    assert service.status_text() == (
        "serving 1 graph; 7 done, 1 failed, 0 active; STALLED: superstep over 60 s in run r2; "
        "last error: run r1: LmdbDiskFullError: No space left"
    )
