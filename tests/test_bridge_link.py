"""The bridge's reliability layer and the host session, sans I/O with a fake clock
(lgembed.bridge.link and .session, against the Python MCU in lgembed.bridge.softmcu).

PROTOCOL.md §8: retransmission with RETRY and doubling timeouts, failure after the
retries, NAK handling (BUSY waits, others fail), duplicates re-ACKed but not processed,
the seq skip after wrap-around, call ids matched to RESULTs, a lost RESULT recovered by
re-sending the CALL with the same call id (the MCU answers from its cache without
running the function again), and a HELLO failing the call the MCU acknowledged.
A seeded lossy channel property: every call ends with the right value or a documented
error, and no function runs twice for one call.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lgembed.bridge import messages as m
from lgembed.bridge.codec import (
    Ack,
    Call,
    DecodeError,
    EventMessage,
    FrameDecoder,
    Hello,
    Nak,
    Packet,
    Ping,
    Result,
    decode_message,
    decode_packet,
    encode_message,
    frame_packet,
)
from lgembed.bridge.errors import BridgeDisconnected, BridgeTimeoutError, LocalProtocolError, RemoteProtocolError
from lgembed.bridge.link import MCU_ACCEPTS, Delivered, Dropped, Link, Received, SendFailed
from lgembed.bridge.session import CallFinished, HelloReceived, HostSession, McuEvent, PongReceived
from lgembed.bridge.softmcu import sensor_node


def sent(link: Link) -> list[Packet]:
    return [decode_packet(p) for p in link.data_to_send()]


# --- Link -----------------------------------------------------------------------------------


def test_retransmission_backoff_and_timeout():
    link = Link(timeout=0.05, retries=3)
    out = link.send(Result(1, 0, 1), now=0.0)
    (p,) = sent(link)
    assert p.type == m.MSG_RESULT and p.ack_req and not p.retry and p.seq == 0
    times = []
    t = 0.0
    while out.state == "in_flight":
        t = link.next_deadline()
        events = link.poll(t)
        pk = sent(link)
        if pk:
            assert pk[0].retry and pk[0].seq == 0
            times.append(round(t, 6))
    assert times == [0.05, 0.15, 0.35]  # waits of 50, 100, 200 ms
    assert round(t, 6) == 0.75  # the last wait (400 ms) ends in failure
    (ev,) = events
    assert isinstance(ev, SendFailed) and isinstance(ev.error, BridgeTimeoutError)
    assert ev.error.code == m.ERR_TIMEOUT
    assert "no ACK after 4 transmissions over 0.750 s" in str(ev.error)


def test_airtime_counts_packet_and_ack():
    link = Link(timeout=0.05, airtime=lambda n: n * 0.001)
    link.send(Result(1, 0, None), 0.0)
    (p,) = link.data_to_send()
    assert link.next_deadline() == pytest.approx(0.05 + len(p) * 0.001 + 9 * 0.001)


def test_ack_delivers_and_starts_the_next():
    link = Link()
    a = link.send(EventMessage(0, 1, True), 0.0)
    b = link.send(EventMessage(0, 2, False), 0.0)
    (pa,) = sent(link)  # stop-and-wait: only the first is on the wire
    assert b.state == "queued"
    events = link.receive(Packet(m.MSG_ACK, 9, bytes([pa.seq])), 0.01)
    assert events == [Delivered(a)] and a.state == "acked"
    (pb,) = sent(link)
    assert pb.seq == pa.seq + 1 and b.state == "in_flight"
    assert link.receive(Packet(m.MSG_ACK, 10, bytes([pa.seq])), 0.02) == []  # a stale ACK


def test_nak_busy_waits_other_naks_fail():
    link = Link()
    out = link.send(Call(1, 0, ()), 0.0)
    (p,) = sent(link)
    assert link.receive(Packet(m.MSG_NAK, 0, bytes([p.seq, m.ERR_BUSY])), 0.01) == []
    assert sent(link) == [] and out.state == "in_flight"
    link.poll(0.05)
    (r,) = sent(link)
    assert r.retry
    (ev,) = link.receive(Packet(m.MSG_NAK, 1, bytes([p.seq, m.ERR_PAYLOAD])), 0.06)
    assert isinstance(ev.error, RemoteProtocolError) and ev.error.code == m.ERR_PAYLOAD
    assert "NAK LGB_ERR_PAYLOAD" in str(ev.error)


def test_receiver_acks_dedups_and_naks():
    link = Link(accepts=MCU_ACCEPTS)
    call = encode_message(Call(5, 0, ()), 40)
    (ev,) = link.receive(decode_packet(call), 0.0)
    assert isinstance(ev, Received) and ev.message == Call(5, 0, ())
    (ack,) = sent(link)
    assert decode_message(ack) == Ack(40)
    # the same seq again (its ACK was lost): ACKed again, not delivered
    assert link.receive(decode_packet(encode_message(Call(5, 0, ()), 40, m.FLAG_ACK_REQ | m.FLAG_RETRY)), 0.1) == []
    assert [decode_message(p) for p in sent(link)] == [Ack(40)]
    assert link.stats["duplicates"] == 1
    # a type not valid at an MCU: NAK TYPE
    (ev,) = link.receive(decode_packet(encode_message(Result(1, 0, 1), 41)), 0.2)
    assert isinstance(ev, Dropped) and ev.error.code == m.ERR_TYPE
    assert [decode_message(p) for p in sent(link)] == [Nak(41, m.ERR_TYPE)]
    # an unknown type: NAK TYPE; a bad payload: NAK PAYLOAD; a bad ACK: nothing
    link.receive(Packet(0x7F, 42), 0.3)
    link.receive(Packet(m.MSG_CALL, 43, b"\x93\x01", m.FLAG_ACK_REQ), 0.3)
    link.receive(Packet(m.MSG_ACK, 44, b""), 0.3)
    assert [decode_message(p) for p in sent(link)] == [Nak(42, m.ERR_TYPE), Nak(43, m.ERR_PAYLOAD)]
    # a decode error with a trusted seq is NAKed, one without is not
    link.receive(DecodeError(m.ERR_VERSION, "v", b"", 45, m.MSG_CALL), 0.4)
    link.receive(DecodeError(m.ERR_CRC, "c"), 0.4)
    assert [decode_message(p) for p in sent(link)] == [Nak(45, m.ERR_VERSION)]


def test_ping_is_answered_and_hello_is_never_a_duplicate():
    host = Link()
    host.receive(decode_packet(encode_message(Ping(b"hi"), 3)), 0.0)
    (pong,) = sent(host)
    assert (pong.type, pong.payload) == (m.MSG_PONG, b"hi")
    hello = Hello("d", "1", 64)
    assert isinstance(host.receive(decode_packet(encode_message(hello, 0)), 0.0)[0], Received)
    assert isinstance(host.receive(decode_packet(encode_message(hello, 0, 3)), 0.0)[0], Received)


def test_new_ack_req_packet_skips_the_previous_seq():
    # PROTOCOL.md §8.1: after 256 packets the counter would give a new ACK_REQ packet
    # the seq of the previous one, which the receiver would take for a duplicate
    link = Link()
    link.send(EventMessage(0, 0, 0), 0.0)
    (first,) = sent(link)
    link.receive(Packet(m.MSG_ACK, 0, bytes([first.seq])), 0.0)
    for i in range(255):
        link.send(Ping(b""), 0.0)
    link.data_to_send()
    assert link._seq == first.seq  # the counter wrapped back to the old seq
    link.send(EventMessage(0, 1, 1), 0.0)
    (second,) = sent(link)
    assert second.seq == (first.seq + 1) & 0xFF


def test_payload_limit_of_the_peer():
    link = Link()
    link.peer_max_payload = 16
    with pytest.raises(LocalProtocolError) as ei:
        link.send(Call(1, 0, (b"x" * 40,)), 0.0)
    assert ei.value.code == m.ERR_TOO_LONG
    assert "above the 16 the MCU accepts (its HELLO's max_payload)" in str(ei.value)


def test_link_rejects_bad_settings():
    with pytest.raises(ValueError, match="'timeout' must be a number of seconds above 0"):
        Link(timeout=0)
    with pytest.raises(ValueError, match="'retries' must be an integer from 0 to 16"):
        Link(retries=-1)


# --- HostSession against the Python MCU, through a scriptable channel ----------------------


class Channel:
    """Host session <-> SoftMcu over framed bytes, a fake clock and a drop rule."""

    def __init__(self, mcu=None, drop=None, seed=0):
        self.mcu = mcu or sensor_node()
        self.host = HostSession(Link(timeout=0.05, retries=3))
        self.dec = FrameDecoder()
        self.t = 0.0
        self.drop = drop or (lambda direction, pkt: False)
        self.rng = random.Random(seed)
        self.events: list = []
        self.to_host = self._filter("m2h", self.mcu.start(self.t))

    def _filter(self, direction: str, data: bytes) -> bytes:
        out = b""
        for p in FrameDecoder().feed(data):
            if isinstance(p, Packet) and self.drop(direction, p):
                continue
            if isinstance(p, Packet):
                out += frame_packet(p.encode())
        return out

    def run(self, seconds: float = 1.0, step: float = 0.005) -> list:
        end = self.t + seconds
        while self.t < end:
            for it in self.dec.feed(self.to_host):
                self.events += self.host.receive(it, self.t)
            self.to_host = b""
            self.events += self.host.poll(self.t)
            data = self._filter("h2m", b"".join(frame_packet(p) for p in self.host.link.data_to_send()))
            out = self.mcu.receive(data, self.t) if data else b""
            out += self.mcu.tick(self.t)
            self.to_host = self._filter("m2h", out)
            self.t += step
        evs, self.events = self.events, []
        return evs

    def finished(self, evs):
        return {e.call_id: e for e in evs if isinstance(e, CallFinished)}


def test_hello_call_ping_event():
    ch = Channel()
    evs = ch.run(0.1)
    assert isinstance(evs[0], HelloReceived) and evs[0].hello.device_id == "soft-node"
    cid = ch.host.start_call(0, (), ch.t, 2.0, "read_temp")
    ch.host.ping(b"p1", ch.t)
    evs = ch.run(0.1)
    assert ch.finished(evs)[cid].value == 21.5
    assert PongReceived(b"p1") in evs
    ch.to_host += ch.mcu.emit("button", True, ch.t)
    evs = ch.run(0.1)
    (ev,) = [e for e in evs if isinstance(e, McuEvent)]
    assert ev.message.event_index == 0 and ev.message.value is True


def test_calls_go_one_at_a_time_and_never_get_busy():
    ch = Channel()
    ch.run(0.05)
    ids = [ch.host.start_call(2, (bytes([i]),), ch.t, 2.0, "echo") for i in range(5)]
    fin = ch.finished(ch.run(0.5))
    assert [fin[i].value for i in ids] == [bytes([i]) for i in range(5)]
    assert ch.host.link.stats["naks_received"] == 0 and ch.host.link.stats["retransmitted"] == 0


def test_lost_ack_of_a_call_retransmits_without_running_twice():
    lost = {"n": 0}

    def drop(direction, p):
        if direction == "m2h" and p.type == m.MSG_ACK and lost["n"] == 0:
            lost["n"] += 1
            return True
        return False

    ch = Channel(drop=drop)
    ch.run(0.05)
    cid = ch.host.start_call(1, (True,), ch.t, 2.0, "set_led")
    fin = ch.finished(ch.run(0.5))
    assert fin[cid].value is True and ch.mcu.runs["set_led"] == 1


def test_lost_result_is_recovered_from_the_mcu_cache():
    # every RESULT copy of the first call is lost: the MCU gives up retransmitting it,
    # the host sends the CALL again with the same call id, the MCU answers from its cache
    state = {"drop": True}

    def drop(direction, p):
        return direction == "m2h" and p.type == m.MSG_RESULT and state["drop"]

    ch = Channel(drop=drop)
    ch.run(0.05)
    cid = ch.host.start_call(2, (b"once",), ch.t, 5.0, "echo")
    ch.run(0.9)
    state["drop"] = False
    fin = ch.finished(ch.run(1.5))
    assert fin[cid].value == b"once" and fin[cid].error is None
    assert ch.mcu.runs["echo"] == 1
    assert ch.host.stats["resends"] >= 1
    assert [c.call_id for c in ch.mcu.log if isinstance(c, Call)].count(cid) >= 2


def test_call_timeout_and_link_timeout():
    ch = Channel(drop=lambda d, p: d == "m2h" and p.type == m.MSG_RESULT)
    ch.run(0.05)
    cid = ch.host.start_call(0, (), ch.t, 0.5, "read_temp")
    (fin,) = ch.finished(ch.run(1.0)).values()
    assert fin.call_id == cid and isinstance(fin.error, BridgeTimeoutError) and not fin.link_failed
    assert "its ACK but no RESULT within 0.500 s" in str(fin.error)
    ch = Channel(drop=lambda d, p: d == "h2m" and p.type == m.MSG_CALL)
    ch.run(0.05)
    cid = ch.host.start_call(0, (), ch.t, 5.0, "read_temp")
    (fin,) = ch.finished(ch.run(1.0)).values()
    assert isinstance(fin.error, BridgeTimeoutError) and fin.link_failed
    assert "Calling read_temp (call id" in str(fin.error) and "no ACK after 4 transmissions" in str(fin.error)


def test_function_errors_come_back_with_their_code():
    from lgembed.bridge.softmcu import SoftMcu

    def boom():
        raise RuntimeError("sensor not ready")

    ch = Channel(mcu=SoftMcu([("boom", "", "f", boom)]))
    ch.run(0.05)
    a = ch.host.start_call(0, (), ch.t, 1.0, "boom")
    b = ch.host.start_call(5, (), ch.t, 1.0, "nothing")
    c = ch.host.start_call(0, (1,), ch.t, 1.0, "boom")
    fin = ch.finished(ch.run(0.5))
    assert fin[a].error.code == m.ERR_FUNCTION and "sensor not ready" in str(fin[a].error)
    assert fin[b].error.code == m.ERR_NO_FUNCTION and isinstance(fin[b].error, RemoteProtocolError)
    assert fin[c].error.code == m.ERR_ARGS
    assert str(fin[a].error) == "Calling boom on the MCU: LGB_ERR_FUNCTION (the function failed): sensor not ready"


def test_hello_fails_the_acknowledged_call():
    ch = Channel(drop=lambda d, p: d == "m2h" and p.type == m.MSG_RESULT)
    ch.run(0.05)
    cid = ch.host.start_call(0, (), ch.t, 5.0, "read_temp")
    ch.run(0.02)
    ch.host.request_hello(ch.t)  # resets the MCU's session: the RESULT will never come
    fin = ch.finished(ch.run(0.2))
    assert isinstance(fin[cid].error, BridgeDisconnected)
    assert "reset its session (it answered HELLO_REQ)" in str(fin[cid].error)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.0, 0.35))
def test_lossy_channel_every_call_ends_correctly(seed, loss):
    rng = random.Random(seed)
    ch = Channel(drop=lambda d, p: rng.random() < loss)
    ch.run(0.3)
    if ch.host.hello is None:
        ch.host.request_hello(ch.t)
        ch.run(1.0)
    assert ch.host.hello is not None or loss > 0.2
    if ch.host.hello is None:
        return
    want = {}
    for i in range(8):
        cid = ch.host.start_call(2, (bytes([i]) * i,), ch.t, 3.0, "echo")
        want[cid] = bytes([i]) * i
    fin = ch.finished(ch.run(8.0))
    assert set(fin) == set(want)  # every call ended: none hangs
    for cid, ev in fin.items():
        if ev.error is None:
            assert ev.value == want[cid]
        else:
            assert isinstance(ev.error, (BridgeTimeoutError, BridgeDisconnected))
            assert ev.error.code in (m.ERR_TIMEOUT, None)
    ok = sum(1 for ev in fin.values() if ev.error is None)
    assert ch.mcu.runs["echo"] >= ok  # a failed call may or may not have run
    assert ch.mcu.runs["echo"] <= len(want)  # but none ran twice
    if loss < 0.1:
        assert ok == len(want)
