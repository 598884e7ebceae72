"""The `lgembed` command: the dispatcher, `run`, `graph` and `doctor`, through real subprocesses.

Every test runs `python -m lgembed ...` as a script or an operator would, against graph
modules written to a temporary directory and LMDB environments in it, and checks the
contract a shell sees: JSON on stdout, one clear line on stderr for an error, and the
exit code (0 done, 1 usage, 2 error, 3 stopped at an interrupt).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

GRAPHS = textwrap.dedent(
    """
    from __future__ import annotations

    import dataclasses
    from typing import TypedDict

    from lgembed.checkpoint.memory import InMemorySaver
    from lgembed.config import get_stream_writer
    from lgembed.graph import END, START, MessagesState, StateGraph
    from lgembed.messages import AIMessage
    from lgembed.types import interrupt


    class S(TypedDict):
        x: int
        ok: bool


    def inc(s):
        get_stream_writer()({"progress": s["x"]})
        return {"x": s["x"] + 1}


    def ask(s):
        return {"ok": interrupt({"question": "heat?", "x": s["x"]})}


    def boom(s):
        raise ValueError("sensor offline")


    chain = StateGraph(S)
    chain.add_node("inc", inc)
    chain.add_edge(START, "inc")

    twice = StateGraph(S)
    twice.add_node("a", inc)
    twice.add_node("b", inc)
    twice.add_edge(START, "a")
    twice.add_edge("a", "b")

    approval = StateGraph(S)
    approval.add_node("inc", inc)
    approval.add_node("ask", ask)
    approval.add_edge(START, "inc")
    approval.add_edge("inc", "ask")
    approval.add_edge("ask", END)

    failing = StateGraph(S)
    failing.add_node("boom", boom)
    failing.add_edge(START, "boom")

    compiled = twice.compile()
    own = approval.compile(checkpointer=InMemorySaver())
    approval_compiled = StateGraph(S)
    approval_compiled.add_node("inc", inc)
    approval_compiled.add_node("ask", ask)
    approval_compiled.add_edge(START, "inc")
    approval_compiled.add_edge("inc", "ask")
    approval_compiled = approval_compiled.compile()


    def factory():
        return chain


    not_a_graph = 42


    def reply(s):
        return {"messages": [AIMessage(content="hello from the device", id="ai-1")]}


    chat = StateGraph(MessagesState)
    chat.add_node("reply", reply)
    chat.add_edge(START, "reply")


    @dataclasses.dataclass
    class Reading:
        celsius: float


    class T(TypedDict):
        reading: Reading
        n: int


    def measure(s):
        return {"reading": Reading(21.5), "n": s.get("n", 0) + 1}


    typed = StateGraph(T)
    typed.add_node("measure", measure)
    typed.add_edge(START, "measure")
    typed_compiled = typed.compile()
    """
)


@pytest.fixture
def work(tmp_path: Path) -> Path:
    (tmp_path / "cligraphs.py").write_text(GRAPHS)
    (tmp_path / "broken.py").write_text("def oops(:\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "filegraph.py").write_text(
        "from cligraphs import chain\nalso = chain\n"  # imports a sibling: the file's folder is on sys.path
    )
    (tmp_path / "sub" / "cligraphs.py").write_text(GRAPHS)
    return tmp_path


def lg(*args: str, cwd: Path, stdin: str | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    full_env = dict(os.environ)
    full_env.pop("PYTHONPATH", None)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "lgembed", *args],
        cwd=str(cwd),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=full_env,
    )


def lines(proc: subprocess.CompletedProcess) -> list:
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


# --- the dispatcher ---------------------------------------------------------------------


def test_version_unchanged(work: Path) -> None:
    from lgembed import _engine

    proc = lg("--version", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == f"lgembed 0.1.0 ({_engine.IMPLEMENTATION} build, LGEMBED_EXTENSIONS={_engine.MODE})\n"


def test_help_lists_every_subcommand(work: Path) -> None:
    proc = lg(cwd=work)
    assert proc.returncode == 0
    for name in ("run", "threads", "graph", "doctor", "unit", "serve"):
        assert name in proc.stdout
    for name in ("run", "threads", "graph", "doctor", "unit"):
        sub = lg(name, "--help", cwd=work)
        assert sub.returncode == 0, sub.stderr
        assert f"usage: lgembed {name}" in sub.stdout


def test_unknown_command_is_a_usage_error(work: Path) -> None:
    proc = lg("frobnicate", cwd=work)
    assert proc.returncode == 1
    assert "invalid choice: 'frobnicate'" in proc.stderr
    proc = lg("run", cwd=work)  # missing MODULE:ATTR
    assert proc.returncode == 1
    assert "MODULE:ATTR" in proc.stderr


def test_serve_is_dispatched_to_the_service(work: Path) -> None:
    proc = lg("serve", "--help", cwd=work)
    if "not available" in proc.stderr:
        pytest.skip("lgembed.service.app is not in this checkout yet")
    assert proc.returncode == 0, proc.stderr
    assert "usage: lgembed serve" in proc.stdout
    assert "--db" in proc.stdout


def test_importing_the_dispatcher_loads_no_subcommand() -> None:
    code = (
        "import sys, lgembed.__main__; "
        "bad = [m for m in sys.modules if m.startswith(('lgembed.cli.run', 'lgembed.cli.threads', 'lgembed.cli.doctor', "
        "'lgembed.service', 'lgembed.graph', 'lmdb', 'msgpack', 'http.server'))]; print(bad)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False, cwd=str(ROOT)
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


# --- run ------------------------------------------------------------------------------------


def test_run_builder_prints_values(work: Path) -> None:
    proc = lg("run", "cligraphs:twice", "--input", '{"x": 1}', cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert lines(proc) == [{"x": 1}, {"x": 2}, {"x": 3}]
    assert proc.stderr == ""


def test_run_several_stream_modes(work: Path) -> None:
    proc = lg("run", "cligraphs:chain", "--input", '{"x": 1}', "--stream", "updates,custom", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert lines(proc) == [["custom", {"progress": 1}], ["updates", {"inc": {"x": 2}}]]


def test_run_input_from_stdin(work: Path) -> None:
    proc = lg("run", "cligraphs:chain", "--input", "-", "--stream", "updates", cwd=work, stdin='{"x": 41}')
    assert proc.returncode == 0, proc.stderr
    assert lines(proc) == [{"inc": {"x": 42}}]


def test_run_file_path_target(work: Path) -> None:
    proc = lg("run", "sub/filegraph.py:also", "--input", '{"x": 5}', "--stream", "updates", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert lines(proc) == [{"inc": {"x": 6}}]


def test_run_factory_and_compiled(work: Path) -> None:
    proc = lg("run", "cligraphs:factory", "--input", '{"x": 1}', "--stream", "updates", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert lines(proc) == [{"inc": {"x": 2}}]
    proc = lg("run", "cligraphs:compiled", "--input", '{"x": 1}', "--stream", "updates", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert lines(proc) == [{"a": {"x": 2}}, {"b": {"x": 3}}]


def test_run_messages_are_serialised(work: Path) -> None:
    proc = lg("run", "cligraphs:chat", "--input", '{"messages": [{"role": "user", "content": "hi"}]}', cwd=work)
    assert proc.returncode == 0, proc.stderr
    last = lines(proc)[-1]["messages"]
    assert [m["type"] for m in last] == ["human", "ai"]
    assert last[1]["content"] == "hello from the device"
    assert last[1]["id"] == "ai-1"


def test_run_interrupt_then_resume(work: Path) -> None:
    db = str(work / "db")
    proc = lg("run", "cligraphs:approval", "--input", '{"x": 1}', "--db", db, "--thread", "t1", cwd=work)
    assert proc.returncode == 3, proc.stderr
    out = lines(proc)
    assert out[0] == {"x": 1}
    interrupt = out[-1]
    assert list(interrupt) == ["__interrupt__"]
    [item] = interrupt["__interrupt__"]
    assert item["value"] == {"question": "heat?", "x": 2}
    assert isinstance(item["id"], str) and item["id"]

    # resumed by another process, later: Command(resume=...) on the same thread
    proc = lg(
        "run", "cligraphs:approval", "--resume", "true", "--db", db, "--thread", "t1", "--stream", "updates", cwd=work
    )
    assert proc.returncode == 0, proc.stderr
    assert lines(proc) == [{"ask": {"ok": True}}]

    # the stored state equals running the same graph in-process
    from typing import TypedDict

    from lgembed.checkpoint.lmdb import LmdbSaver
    from lgembed.graph import END, START, StateGraph
    from lgembed.types import Command
    from lgembed.types import interrupt as lg_interrupt

    class S(TypedDict):
        x: int
        ok: bool

    builder = StateGraph(S)
    builder.add_node("inc", lambda s: {"x": s["x"] + 1})
    builder.add_node("ask", lambda s: {"ok": lg_interrupt({"question": "heat?", "x": s["x"]})})
    builder.add_edge(START, "inc")
    builder.add_edge("inc", "ask")
    builder.add_edge("ask", END)
    with LmdbSaver(str(work / "ref")) as saver:
        graph = builder.compile(checkpointer=saver)
        cfg = {"configurable": {"thread_id": "t1"}}
        graph.invoke({"x": 1}, cfg)
        expected = graph.invoke(Command(resume=True), cfg)
    with LmdbSaver(db) as saver:
        graph = builder.compile(checkpointer=saver)
        state = graph.get_state({"configurable": {"thread_id": "t1"}})
        assert state.values == expected == {"x": 2, "ok": True}
        assert state.next == ()


def test_run_interrupt_without_checkpointer(work: Path) -> None:
    proc = lg("run", "cligraphs:approval", "--input", '{"x": 1}', "--stream", "updates", cwd=work)
    assert proc.returncode == 3, proc.stderr
    out = lines(proc)
    assert out[0] == {"inc": {"x": 2}}
    assert out[-1]["__interrupt__"][0]["value"] == {"question": "heat?", "x": 2}


def test_run_generates_a_thread_id(work: Path) -> None:
    db = str(work / "db")
    proc = lg("run", "cligraphs:chain", "--input", '{"x": 1}', "--db", db, cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.startswith("lgembed run: thread_id ")
    thread_id = proc.stderr.split()[-1]
    listed = lg("threads", "--db", db, "list", cwd=work)
    assert [t["thread_id"] for t in lines(listed)] == [thread_id]


def test_run_compiled_graph_with_db(work: Path) -> None:
    db = str(work / "db")
    # a compiled graph without a checkpointer gets --db's saver attached
    proc = lg("run", "cligraphs:approval_compiled", "--input", '{"x": 1}', "--db", db, "--thread", "c1", cwd=work)
    assert proc.returncode == 3, proc.stderr
    proc = lg("run", "cligraphs:approval_compiled", "--resume", "false", "--db", db, "--thread", "c1", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert lines(proc)[-1] == {"x": 2, "ok": False}
    # a compiled graph with a checkpointer of its own is refused with --db
    proc = lg("run", "cligraphs:own", "--input", '{"x": 1}', "--db", db, cwd=work)
    assert proc.returncode == 1
    assert "compiled with its own checkpointer (InMemorySaver)" in proc.stderr
    assert "drop --db" in proc.stderr


def test_run_user_types_with_db(work: Path) -> None:
    db = str(work / "db")
    for target in ("cligraphs:typed", "cligraphs:typed_compiled"):
        proc = lg("run", target, "--input", "{}", "--db", db, "--thread", target, cwd=work)
        assert proc.returncode == 0, proc.stderr
        assert lines(proc)[-1] == {"reading": {"celsius": 21.5}, "n": 1}


def test_run_graph_error(work: Path) -> None:
    proc = lg("run", "cligraphs:failing", "--input", '{"x": 1}', cwd=work)
    assert proc.returncode == 2
    assert "lgembed run: graph error: ValueError: sensor offline" in proc.stderr
    db = str(work / "db")
    proc = lg("run", "cligraphs:failing", "--input", '{"x": 1}', "--db", db, "--thread", "f", cwd=work)
    assert proc.returncode == 2
    assert "retry with --thread f --input null" in proc.stderr


def test_run_config_is_passed(work: Path) -> None:
    proc = lg("run", "cligraphs:twice", "--input", '{"x": 1}', "--config", '{"recursion_limit": 1}', cwd=work)
    assert proc.returncode == 2
    assert "GraphRecursionError: Recursion limit of 1 reached" in proc.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["cligraphs:chain", "--input", "{x: 1}"], "--input: not valid JSON in the argument"),
        (["cligraphs:chain", "--config", "[1, 2"], "--config: not valid JSON"),
        (["cligraphs:chain", "--config", "[1, 2]"], "--config: expected a JSON object"),
        (["cligraphs:chain", "--stream", "values,bogus"], "--stream: unknown mode 'bogus'"),
        (["cligraphs:approval", "--resume", "true"], "--resume needs --thread ID"),
        (
            ["cligraphs:approval", "--resume", "true", "--input", "{}", "--thread", "t"],
            "--resume and --input exclude each other",
        ),
        (["cligraphs:approval", "--resume", "true", "--thread", "t"], "has no checkpointer"),
        (["cligraphs"], "expected MODULE:ATTR"),
        (["cligraphs:chain", "--bogus"], "unrecognized arguments: --bogus"),
    ],
)
def test_run_usage_errors(work: Path, args: list[str], message: str) -> None:
    proc = lg("run", *args, cwd=work)
    assert proc.returncode == 1, proc.stderr
    assert message in proc.stderr
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("cligraphs:missing", "'cligraphs' has no attribute 'missing' (graphs and builders in it: "),
        ("nosuchmodule:graph", "ModuleNotFoundError: No module named 'nosuchmodule'"),
        ("broken:graph", "importing 'broken' failed: SyntaxError"),
        ("cligraphs:not_a_graph", "it is a int, not a graph"),
        ("nofile.py:graph", "no such file 'nofile.py'"),
    ],
)
def test_run_bad_targets(work: Path, target: str, message: str) -> None:
    proc = lg("run", target, cwd=work)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr
    assert proc.stderr.count("\n") == 1  # one line, no traceback


# --- graph --------------------------------------------------------------------------------------


def test_graph_prints_mermaid(work: Path) -> None:
    proc = lg("graph", "cligraphs:approval", cwd=work)
    assert proc.returncode == 0, proc.stderr
    assert "graph TD;" in proc.stdout
    for edge in ("__start__ --> inc;", "inc --> ask;", "ask --> __end__;"):
        assert edge in proc.stdout
    sys.path.insert(0, str(work))
    try:
        import importlib

        mod = importlib.import_module("cligraphs")
        assert proc.stdout == mod.approval.compile().get_graph().draw_mermaid()
    finally:
        sys.path.remove(str(work))
        sys.modules.pop("cligraphs", None)


def test_graph_errors(work: Path) -> None:
    assert lg("graph", "cligraphs:missing", cwd=work).returncode == 2
    assert lg("graph", "cligraphs", cwd=work).returncode == 1


# --- doctor -------------------------------------------------------------------------------------


def test_doctor_report(work: Path) -> None:
    db = str(work / "db")
    assert lg("run", "cligraphs:chain", "--input", '{"x": 1}', "--db", db, "--thread", "d", cwd=work).returncode == 0
    proc = lg("doctor", "--db", db, cwd=work, env={"INVOCATION_ID": "0123", "JOURNAL_STREAM": "8:1234"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(proc.stdout)
    assert report["ok"] is True and report["problems"] == []
    from lgembed import _engine

    assert report["lgembed"]["build"] == _engine.IMPLEMENTATION
    assert report["lgembed"]["LGEMBED_EXTENSIONS"] == _engine.MODE
    assert report["versions"]["msgpack"] and report["versions"]["lmdb"]
    assert report["python"]["version"] == sys.version.split()[0]
    assert report["platform"]["machine"] == os.uname().machine
    assert report["systemd"]["under_systemd"] is True
    assert report["systemd"]["JOURNAL_STREAM"] == "8:1234"
    info = report["db"]
    assert info["lgembed"] is True and info["formats"] == {"checkpoint": "3"}
    assert 0 < info["used_bytes"] <= info["map_size"]
    assert info["readers"] == 0 and info["stale_readers"] == 0
    text = lg("doctor", "--text", "--db", db, cwd=work)
    assert text.returncode == 0
    assert "of map used" in text.stdout and text.stdout.rstrip().endswith("ok")


def test_doctor_does_not_import_hardware_libraries(work: Path) -> None:
    code = (
        "import sys; from lgembed.cli.doctor import collect; collect(); "
        "print([m for m in ('serial', 'can', 'periphery') if m in sys.modules])"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False, cwd=str(work)
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_doctor_broken_db(work: Path) -> None:
    proc = lg("doctor", "--db", str(work / "nothing"), cwd=work)
    assert proc.returncode == 1
    assert "no such directory" in json.loads(proc.stdout)["problems"][0]
    bogus = work / "bogus"
    bogus.mkdir()
    (bogus / "data.mdb").write_bytes(b"not an lmdb file" * 512)
    proc = lg("doctor", "--db", str(bogus), cwd=work)
    assert proc.returncode == 1
    assert "not a readable LMDB environment" in json.loads(proc.stdout)["problems"][0]


def _device_file(folder: Path, nodes: dict[str, Path]) -> Path:
    text = f'''
    [adapters.heater]
    kind = "gpio"
    path = "{nodes["gpio"]}"
    line = 17
    direction = "low"

    [adapters.room]
    kind = "i2c"
    devpath = "{nodes["i2c"]}"
    address = 0x48

    [adapters.modem]
    kind = "uart"
    port = "{nodes["uart"]}"

    [adapters.bus]
    kind = "can"
    interface = "socketcan"
    channel = "lo"

    [adapters.sim]
    kind = "gpio"
    path = "/dev/gpiochip9"
    line = 1
    simulate = true
    '''
    path = folder / "device.toml"
    path.write_text(textwrap.dedent(text))
    return path


def test_doctor_device_nodes(work: Path) -> None:
    gpio = work / "gpiochip0"
    gpio.write_bytes(b"")
    uart = work / "ttyS9"
    uart.write_bytes(b"")
    device = _device_file(work, {"gpio": gpio, "i2c": work / "i2c-7", "uart": uart})
    proc = lg("doctor", "--device", str(device), cwd=work)
    assert proc.returncode == 1  # /dev/i2c-7 stand-in is missing
    report = json.loads(proc.stdout)
    adapters = {a["name"]: a for a in report["device"]["adapters"]}
    assert adapters["heater"]["nodes"] == [
        {
            "path": str(gpio),
            "need": "rw",
            "exists": True,
            "access": True,
            "owner": "root",
            "group": "root",
            "mode": "0o644",
        }
    ]
    assert adapters["room"]["nodes"][0]["exists"] is False
    assert adapters["bus"]["interface"] == "lo" and adapters["bus"]["nodes"][0]["exists"] is True
    assert adapters["sim"] == {"name": "sim", "kind": "gpio", "driver": "cdev", "simulated": True, "nodes": []}
    [problem] = report["problems"]
    assert problem.startswith(f"adapter room (i2c): device node {work / 'i2c-7'} does not exist. Fix: enable the bus")
    bad = work / "bad.toml"
    bad.write_text('[adapters.x]\nkind = "gpio"\nline = "seven"\n')
    proc = lg("doctor", "--device", str(bad), cwd=work)
    assert proc.returncode == 1
    assert "adapters.x.line" in json.loads(proc.stdout)["problems"][0]


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to drop to another user")
def test_doctor_access_as_another_user(tmp_path: Path) -> None:
    """The access check as an unprivileged user: a node of group dialout, then with the group."""
    import grp
    import shutil
    import tempfile

    dialout = grp.getgrnam("dialout").gr_gid if "dialout" in {g.gr_name for g in grp.getgrall()} else None
    if dialout is None:
        pytest.skip("no dialout group")
    shared = Path(tempfile.mkdtemp(prefix="lgembed-doctor-"))
    try:
        shared.chmod(0o755)
        node = shared / "ttyUSB7"
        node.write_bytes(b"")
        os.chown(node, 0, dialout)
        node.chmod(0o660)
        device = shared / "device.toml"
        device.write_text(f'[adapters.modem]\nkind = "uart"\nport = "{node}"\n')
        device.chmod(0o644)
        code = textwrap.dedent(
            f"""
            import os, sys, json, grp, pwd, importlib.metadata, platform
            import lgembed.__main__, lgembed.cli.doctor, lgembed.service.unit, lgembed.edge.registry
            import lgembed.edge.uart, lgembed.edge.device, lgembed.edge._base, tomllib, lgembed._engine
            import lgembed.edge.errors, lgembed.cli._common
            lgembed.cli.doctor.collect(device={str(device)!r})  # as root: loads every module it imports lazily
            groups = [int(g) for g in sys.argv[1:]]
            os.setgroups(groups)
            os.setgid(65534)
            os.setuid(65534)
            sys.exit(lgembed.__main__.main(["doctor", "--device", {str(device)!r}]))
            """
        )
        outcomes = []
        for groups in ([], [dialout]):
            proc = subprocess.run(
                [sys.executable, "-c", code, *map(str, groups)],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
                cwd=str(shared),
            )
            assert "Traceback" not in proc.stderr, proc.stderr
            outcomes.append((proc.returncode, json.loads(proc.stdout[proc.stdout.index("{") :])))
        (rc, report), (rc_in, report_in) = outcomes
        assert rc == 1
        [node_report] = report["device"]["adapters"][0]["nodes"]
        assert node_report["access"] is False and node_report["group"] == "dialout"
        assert node_report["user_in_group"] is False
        [problem] = report["problems"]
        assert "nobody cannot read and write" in problem and "group dialout" in problem
        assert "usermod -aG dialout nobody" in problem
        assert rc_in == 0, report_in["problems"]
        assert report_in["device"]["adapters"][0]["nodes"][0]["access"] is True
    finally:
        shutil.rmtree(shared)
