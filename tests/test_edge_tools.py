"""Hardware tools and their policy (issue: edge layer, acceptance 3 and 5).

A call outside its policy never reaches the driver (a Hypothesis property over the real
simulated adapters); rate limits hold; high and critical calls wait for approval through
interrupt / Command(resume=...), also with an LmdbSaver and the approval given by a
second process; every call leaves an audit record in the store and on the logger.
"""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lgembed.checkpoint.memory import InMemorySaver
from lgembed.edge import HardwareTool, PolicyViolation, RateLimit, ToolPolicy, hardware_tool, load_device
from lgembed.graph import START, MessagesState, StateGraph
from lgembed.messages import AIMessage, ToolMessage
from lgembed.prebuilt import ToolNode
from lgembed.store.memory import InMemoryStore
from lgembed.types import Command

ROOT = Path(__file__).resolve().parents[1]

DEVICE = {
    "adapters": {
        "heater": {"kind": "gpio", "line": 17, "direction": "out"},
        "relay2": {"kind": "gpio", "line": 18, "direction": "out"},
        "fan": {"kind": "pwm", "channel": 0},
        "room": {"kind": "i2c", "address": 0x48, "simulator": "tmp102"},
        "bus": {"kind": "can", "channel": "can0"},
    },
    "tools": {
        "set_fan": {"adapter": "fan", "action": "set_duty_cycle", "policy": {"ranges": {"duty_cycle": [0.0, 0.8]}}},
        "poke": {
            "adapter": "room",
            "action": "write_register",
            "policy": {"allow": {"register": [1, 2, 3]}, "ranges": {"data": [0, 0x7F]}, "max_length": 2},
        },
        "can_send": {"adapter": "bus", "action": "send", "policy": {"allow": {"arbitration_id": [0x100, 0x101]}, "max_length": 8}},
        "relays": {"adapters": ["heater", "relay2"], "action": "write", "policy": {"allow": {"adapter": ["relay2"]}}},
        "heat": {"adapter": "heater", "action": "write", "policy": {"risk": "high", "reason": "mains heater"}},
        "burn": {"adapter": "heater", "action": "write", "policy": {"risk": "critical"}},
        "pulse": {"adapter": "relay2", "action": "write", "policy": {"rate_limit": "3/minute"}},
        "read_room": {"adapter": "room", "action": "read_register", "args": {"register": 0, "length": 2}},
    },
}


def call(tool, args, cid="c1"):
    return tool.invoke({"name": tool.name, "args": args, "id": cid, "type": "tool_call"})


class Spy:
    """Wraps an adapter method and records every call that reached it."""

    def __init__(self, adapter, method):
        self.calls = []
        real = getattr(adapter, method)

        def spy(*a, **k):
            self.calls.append((a, k))
            return real(*a, **k)

        setattr(adapter, method, spy)


@pytest.fixture(scope="module")
def device():
    with load_device(DEVICE, simulate=True) as d:
        yield d


def tools_of(device):
    return {t.name: t for t in device.tools()}


# --- the policy object ---------------------------------------------------------------------


def test_rate_limit_parse_and_window():
    assert (RateLimit.parse("10/minute").count, RateLimit.parse("10/minute").per) == (10, 60.0)
    assert RateLimit.parse("3/10s").per == 10.0 and RateLimit.parse("5/s").per == 1.0
    assert RateLimit.parse([2, 0.5]).per == 0.5
    with pytest.raises(ValueError, match=re.escape("rate limit must look like '10/minute'")):
        RateLimit.parse("lots")
    rl = RateLimit(2, 10.0)
    assert rl.take(0.0) == 0.0 and rl.take(1.0) == 0.0
    assert rl.take(2.0) == pytest.approx(8.0)  # refused: wait until the first call leaves the window
    assert rl.take(10.0) == 0.0  # the window slid


def test_policy_messages_name_rule_value_and_limit():
    p = ToolPolicy("low", allow={"register": [0, 1]}, ranges={"duty_cycle": [0.0, 0.8]}, max_length=4)
    with pytest.raises(PolicyViolation) as ei:
        p.check("t", {"register": 0x12})
    assert str(ei.value) == "Tool 't' refused by its policy: rule 'allow.register': value 18 (0x12) is not in the allow-list [0, 1]"
    assert (ei.value.rule, ei.value.value, ei.value.limit) == ("allow.register", 0x12, [0, 1])
    with pytest.raises(PolicyViolation, match=re.escape("rule 'ranges.duty_cycle': value 0.95 is outside 0.0..0.8")):
        p.check("t", {"duty_cycle": 0.95})
    with pytest.raises(PolicyViolation, match=re.escape("rule 'max_length': argument 'data' has length 5, above the limit of 4")):
        p.check("t", {"data": [1, 2, 3, 4, 5]})
    with pytest.raises(PolicyViolation, match="allow.register"):
        p.check("t", {"register": True})  # True is not the allowed value 1
    with pytest.raises(ValueError, match=re.escape("ToolPolicy: 'risk' must be one of 'low', 'medium', 'high', 'critical' (got 'severe')")):
        ToolPolicy("severe")
    assert not ToolPolicy("medium").requires_approval and ToolPolicy("critical").requires_approval


# --- no out-of-policy call reaches a driver (acceptance 3) ---------------------------------

_values = st.one_of(st.integers(-5, 300), st.floats(-1.0, 2.0, allow_nan=False), st.booleans())


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    duty=st.floats(-0.5, 1.5, allow_nan=False),
    register=st.integers(0, 255),
    data=st.lists(st.integers(0, 255), max_size=4),
    can_id=st.sampled_from([0x100, 0x101, 0x102, 0x7FF, 0x1]),
    can_data=st.lists(st.integers(0, 255), max_size=10),
    relay=st.sampled_from(["heater", "relay2"]),
)
def test_no_out_of_policy_call_reaches_a_driver(device, duty, register, data, can_id, can_data, relay):
    t = tools_of(device)
    spies = {
        "room": Spy(device.adapter("room"), "write_register"),
        "bus": Spy(device.adapter("bus"), "send"),
        "heater": Spy(device.adapter("heater"), "write"),
        "relay2": Spy(device.adapter("relay2"), "write"),
    }
    try:
        before = device.simulation("fan").duty_cycle
        out = call(t["set_fan"], {"duty_cycle": duty})
        inside = 0.0 <= duty <= 0.8
        assert (out.status == "success") == inside
        if inside:
            assert device.simulation("fan").duty_cycle == pytest.approx(duty, abs=1e-6)
        else:
            assert device.simulation("fan").duty_cycle == before
            assert "rule 'ranges.duty_cycle'" in out.content and "0.0..0.8" in out.content

        out = call(t["poke"], {"register": register, "data": data})
        ok = register in (1, 2, 3) and all(b <= 0x7F for b in data) and len(data) <= 2
        assert (out.status == "success") == ok, out.content
        assert len(spies["room"].calls) == (1 if ok else 0)

        out = call(t["can_send"], {"arbitration_id": can_id, "data": can_data})
        ok = can_id in (0x100, 0x101) and len(can_data) <= 8
        assert (out.status == "success") == ok, out.content
        assert len(spies["bus"].calls) == (1 if ok else 0)

        out = call(t["relays"], {"adapter": relay, "value": True})
        assert (out.status == "success") == (relay == "relay2")
        assert len(spies["heater"].calls) == 0
        assert len(spies["relay2"].calls) == (1 if relay == "relay2" else 0)
    finally:
        for name in ("room", "bus", "heater", "relay2"):
            a = device.adapter(name)
            for m in ("write_register", "send", "write"):
                a.__dict__.pop(m, None)


def test_schema_validation_errors_never_reach_the_driver(device):
    t = tools_of(device)
    spy = Spy(device.adapter("room"), "write_register")
    try:
        app = tool_graph([t["poke"]])
        out = app.invoke(ask("poke", {"register": "x", "data": [1]}))["messages"][-1]
        assert out.status == "error" and "register" in out.content
        assert spy.calls == []
    finally:
        device.adapter("room").__dict__.pop("write_register", None)


def test_rate_limit_holds(device):
    t = tools_of(device)["pulse"]
    spy = Spy(device.adapter("relay2"), "write")
    try:
        results = [call(t, {"value": bool(i % 2)}, f"r{i}") for i in range(5)]
        assert [r.status for r in results] == ["success"] * 3 + ["error"] * 2
        assert "rule 'rate_limit': 4 calls within 60 s exceed the limit of 3 per 60 s" in results[3].content
        assert len(spy.calls) == 3
    finally:
        device.adapter("relay2").__dict__.pop("write", None)


def test_tool_schema_hides_fixed_args_and_adapter_choice(device):
    t = tools_of(device)
    assert isinstance(t["read_room"], HardwareTool)
    assert t["read_room"].tool_call_schema["properties"] == {}
    props = t["relays"].tool_call_schema["properties"]
    assert props["adapter"]["enum"] == ["heater", "relay2"]
    assert set(t["poke"].tool_call_schema["properties"]) == {"register", "data"}  # no address: not allow-listed
    assert t["heat"].policy.risk == "high"
    raw = json.loads(call(t["read_room"], {}).content)
    assert len(raw["data"]) == 2


def test_direct_invoke_without_tool_call(device):
    t = tools_of(device)
    assert json.loads(t["set_fan"].invoke({"duty_cycle": 0.25}))["duty_cycle"] == pytest.approx(0.25)
    assert t["set_fan"].invoke({"duty_cycle": 0.9}).startswith("Error: Tool 'set_fan' refused by its policy")


def test_decorated_hardware_tool(device):
    @hardware_tool(device.adapter("relay2"), policy=ToolPolicy("low", allow={"on": [False]}))
    def switch(relay, on: bool) -> str:
        """Switches relay 2."""
        relay.write(on)
        return "on" if on else "off"

    assert switch.tool_call_schema["properties"]["on"]["type"] == "boolean"
    assert call(switch, {"on": False}).content == "off"
    out = call(switch, {"on": True})
    assert out.status == "error" and "rule 'allow.on'" in out.content
    assert device.simulation("relay2").value is False


# --- approval through interrupt / Command(resume=...) ---------------------------------------


def tool_graph(tools, **compile_kw):
    g = StateGraph(MessagesState)
    g.add_node("tools", ToolNode(tools))
    g.add_edge(START, "tools")
    return g.compile(**compile_kw)


def ask(name, args, cid="h1"):
    return {"messages": [AIMessage("", tool_calls=[{"name": name, "args": args, "id": cid, "type": "tool_call"}])]}


@pytest.fixture
def fresh():
    with load_device(DEVICE, simulate=True) as d:
        yield d


def test_high_risk_waits_for_approval_then_runs(fresh, caplog):
    store = InMemoryStore()
    app = tool_graph(fresh.tools(["heat"]), checkpointer=InMemorySaver(), store=store)
    cfg = {"configurable": {"thread_id": "t1"}}
    caplog.set_level(logging.INFO, logger="lgembed.edge.audit")
    out = app.invoke(ask("heat", {"value": True}), cfg)
    [intr] = out["__interrupt__"]
    assert intr.value == {
        "type": "approval", "tool": "heat", "args": {"value": True}, "risk": "high",
        "reason": "mains heater", "adapter": "heater", "tool_call_id": "h1",
    }
    assert fresh.simulation("heater").value is False  # nothing ran yet
    out = app.invoke(Command(resume={"approved": True}), cfg)
    msg = out["messages"][-1]
    assert isinstance(msg, ToolMessage) and msg.status == "success" and json.loads(msg.content) == {"value": True}
    assert fresh.simulation("heater").value is True
    [rec] = [i.value for i in store.search(("lgembed", "audit"))]
    assert rec["outcome"] == "approved" and rec["tool"] == "heat" and rec["thread_id"] == "t1" and rec["args"] == {"value": True}
    assert any("heat approved on heater" in r.getMessage() for r in caplog.records)


def test_denied_with_reason(fresh):
    store = InMemoryStore()
    app = tool_graph(fresh.tools(["heat"]), checkpointer=InMemorySaver(), store=store)
    cfg = {"configurable": {"thread_id": "t2"}}
    app.invoke(ask("heat", {"value": True}), cfg)
    out = app.invoke(Command(resume={"approved": False, "reason": "window open"}), cfg)
    msg = out["messages"][-1]
    assert msg.status == "error"
    assert msg.content == "Error: Call of tool 'heat' denied by the operator: window open"
    assert fresh.simulation("heater").value is False
    [rec] = [i.value for i in store.search(("lgembed", "audit"))]
    assert rec["outcome"] == "denied"


def test_critical_needs_a_reason(fresh):
    app = tool_graph(fresh.tools(["burn"]), checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "t3"}}
    assert app.invoke(ask("burn", {"value": True}), cfg)["__interrupt__"][0].value["risk"] == "critical"
    out = app.invoke(Command(resume={"approved": True}), cfg)
    assert "a critical action is approved only with a reason" in out["messages"][-1].content
    assert fresh.simulation("heater").value is False
    cfg = {"configurable": {"thread_id": "t4"}}
    app.invoke(ask("burn", {"value": True}), cfg)
    out = app.invoke(Command(resume={"approved": True, "reason": "maintenance test, ticket 42"}), cfg)
    assert out["messages"][-1].status == "success" and fresh.simulation("heater").value is True


def test_malformed_answer_refuses(fresh):
    app = tool_graph(fresh.tools(["heat"]), checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "t5"}}
    app.invoke(ask("heat", {"value": True}), cfg)
    out = app.invoke(Command(resume="sure"), cfg)
    assert "the approval answer must be {'approved': true|false" in out["messages"][-1].content
    assert fresh.simulation("heater").value is False


def test_out_of_policy_high_risk_call_is_refused_without_asking(fresh):
    dev = dict(DEVICE, tools={"heat": {"adapter": "heater", "action": "write", "policy": {"risk": "high", "allow": {"value": [False]}}}})
    with load_device(dev, simulate=True) as d:
        app = tool_graph(d.tools(), checkpointer=InMemorySaver())
        out = app.invoke(ask("heat", {"value": True}), {"configurable": {"thread_id": "x"}})
        assert "__interrupt__" not in out
        assert "rule 'allow.value'" in out["messages"][-1].content


APPROVAL_SCRIPT = textwrap.dedent('''
    import json, sys
    from lgembed.checkpoint.lmdb import LmdbSaver
    from lgembed.store.lmdb import LmdbStore
    from lgembed.edge import load_device
    from lgembed.graph import START, MessagesState, StateGraph
    from lgembed.messages import AIMessage
    from lgembed.prebuilt import ToolNode
    from lgembed.types import Command

    db, step = sys.argv[1], sys.argv[2]
    device = load_device({device!r}, simulate=True)
    saver = LmdbSaver(db)
    store = LmdbStore(env=saver.env)
    g = StateGraph(MessagesState)
    g.add_node("tools", ToolNode(device.tools(["heat"])))
    g.add_edge(START, "tools")
    app = g.compile(checkpointer=saver, store=store)
    cfg = {{"configurable": {{"thread_id": "plant-1"}}}}
    if step == "ask":
        call = {{"name": "heat", "args": {{"value": True}}, "id": "x1", "type": "tool_call"}}
        out = app.invoke({{"messages": [AIMessage("", tool_calls=[call])]}}, cfg)
        print(json.dumps(out["__interrupt__"][0].value))
    else:
        out = app.invoke(Command(resume={{"approved": True, "reason": "operator 7"}}), cfg)
        m = out["messages"][-1]
        print(json.dumps({{"status": m.status, "content": m.content, "line": device.simulation("heater").value,
                          "audit": [i.value["outcome"] for i in store.search(("lgembed", "audit"))]}}))
    saver.close()
    device.close()
''')


def test_approval_from_a_second_process_with_lmdb(tmp_path):
    script = tmp_path / "approve.py"
    script.write_text(APPROVAL_SCRIPT.format(device=DEVICE))
    db = str(tmp_path / "db")
    env = dict(os.environ)
    first = subprocess.run([sys.executable, str(script), db, "ask"], capture_output=True, text=True, env=env, timeout=120)
    assert first.returncode == 0, first.stderr
    request = json.loads(first.stdout.strip().splitlines()[-1])
    assert request["type"] == "approval" and request["tool"] == "heat" and request["risk"] == "high"
    second = subprocess.run([sys.executable, str(script), db, "approve"], capture_output=True, text=True, env=env, timeout=120)
    assert second.returncode == 0, second.stderr
    result = json.loads(second.stdout.strip().splitlines()[-1])
    assert result == {"status": "success", "content": '{"value": true}', "line": True, "audit": ["approved"]}


# --- the agent example runs (acceptance 5) --------------------------------------------------


def test_agent_example_asks_then_approves_across_processes(tmp_path):
    ex = str(ROOT / "examples" / "hardware_agent.py")
    db = str(tmp_path / "agent")
    ask_run = subprocess.run([sys.executable, ex, "--db", db, "ask"], capture_output=True, text=True, timeout=120)
    assert ask_run.returncode == 3, ask_run.stderr
    assert '"type": "approval"' in ask_run.stdout and '"tool": "set_heater"' in ask_run.stdout
    ok = subprocess.run([sys.executable, ex, "--db", db, "approve", "--reason", "cold"], capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stderr
    assert "set_heater: {\"value\": true}" in ok.stdout and "heater line now high" in ok.stdout
    audit = subprocess.run([sys.executable, ex, "--db", db, "audit"], capture_output=True, text=True, timeout=120)
    outcomes = [json.loads(line)["outcome"] for line in audit.stdout.splitlines()]
    assert outcomes == ["allowed", "approved"]


def test_agent_example_deny(tmp_path):
    ex = str(ROOT / "examples" / "hardware_agent.py")
    db = str(tmp_path / "agent")
    subprocess.run([sys.executable, ex, "--db", db, "ask"], capture_output=True, text=True, timeout=120)
    no = subprocess.run([sys.executable, ex, "--db", db, "approve", "--deny", "--reason", "nobody home"], capture_output=True, text=True, timeout=120)
    assert no.returncode == 0, no.stderr
    assert "denied by the operator: nobody home" in no.stdout and "heater line now low" in no.stdout
