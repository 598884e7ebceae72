"""The host's conversation with one MCU, sans I/O, over a `Link`: HELLO, calls, PING, events.

Why: what a host adds to the reliability layer is bookkeeping a test should see without
threads: HELLO_REQ and the MCU's HELLO (its function table, its max_payload), call ids
(uint16, from a random start) matched to RESULTs, one call at a time at the MCU (it NAKs
a second with LGB_ERR_BUSY anyway), a CALL re-sent with the same call id when its RESULT
never comes (the MCU answers a repeated call id from its cache without running the
function again, PROTOCOL.md §8.5-8.6), call timeouts, PINGs matched to PONGs, and EVENTs.
A HELLO fails the call the MCU had acknowledged: its session is new (§9).

Every method takes `now`; `lgembed.bridge.client.BridgeClient` supplies the clock, the
port and the threads.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Any

from lgembed.bridge import messages as m
from lgembed.bridge.codec import Call, DecodeError, EventMessage, Hello, HelloRequest, Message, Packet, Ping, Pong, Result
from lgembed.bridge.errors import BridgeDisconnected, BridgeTimeoutError, LocalProtocolError, ProtocolError, RemoteProtocolError
from lgembed.bridge.link import Delivered, Dropped, Link, LinkEvent, Outgoing, Received, SendFailed

__all__ = ("CallFinished", "HelloReceived", "HostSession", "McuEvent", "PongReceived", "SessionEvent")


@dataclass(frozen=True)
class HelloReceived:
    """The MCU's HELLO. `restarted` is True when it came unasked after an earlier one
    (the MCU rebooted)."""

    hello: Hello
    restarted: bool


@dataclass(frozen=True)
class CallFinished:
    """A call ended: `error` is None and `value` the result, or `error` says why not."""

    call_id: int
    value: Any = None
    error: ProtocolError | None = None
    started: float = 0.0
    finished: float = 0.0
    link_failed: bool = False
    """True when the CALL itself went unacknowledged through every retry."""


@dataclass(frozen=True)
class PongReceived:
    """A PONG (the MCU echoed `data`)."""

    data: bytes


@dataclass(frozen=True)
class McuEvent:
    """An EVENT from the MCU (the name is resolved by the client from the HELLO)."""

    message: EventMessage


SessionEvent = HelloReceived | CallFinished | PongReceived | McuEvent | Dropped


@dataclass(eq=False)
class _PendingCall:
    call_id: int
    fn_index: int
    args: tuple
    started: float
    deadline: float
    outgoing: Outgoing | None = None
    resend_at: float | None = None  # when to send the CALL again for a RESULT that did not come
    resends: int = 0
    name: str = ""


class HostSession:
    """The host's conversation with one MCU over a Link (sans I/O).

    Args:
        link: the Link.
        result_wait: seconds after a CALL's ACK before it is sent again (same call id)
            when no RESULT came; default: the MCU's whole retry window for its RESULT,
            `timeout * 2 ** (retries + 1)`.

    Attributes:
        hello: the MCU's last HELLO, or None.
        stats: "calls", "resends", "late_results", "events".
    """

    def __init__(self, link: Link, *, result_wait: float | None = None) -> None:
        self.link = link
        self.result_wait = result_wait if result_wait is not None else link.timeout * 2 ** (link.retries + 1)
        self.hello: Hello | None = None
        self._calls: dict[int, _PendingCall] = {}  # in the order they were started
        self._active: _PendingCall | None = None  # the call the MCU has (or is being sent)
        self._by_outgoing: dict[int, _PendingCall] = {}
        self._ids = itertools.count(random.randrange(0x10000))
        # PROTOCOL.md §8.6: a random first call id, so a restarted host does not reuse
        # the id of the RESULT the MCU still has cached
        self._hello_asked = False
        self.stats = dict.fromkeys(("calls", "resends", "late_results", "events"), 0)

    # --- requests ---------------------------------------------------------------------------

    def request_hello(self, now: float) -> None:
        """Sends HELLO_REQ (the MCU answers with its HELLO)."""
        self._hello_asked = True
        self.link.send(HelloRequest(), now)

    def ping(self, data: bytes, now: float) -> None:
        """Sends a PING with up to 8 bytes (a PongReceived with them ends it).

        Raises:
            LocalProtocolError: more than 8 bytes.
        """
        self.link.send(Ping(bytes(data)), now)

    def _new_call_id(self) -> int:
        for _ in range(0x10000):
            cid = next(self._ids) & 0xFFFF
            if cid not in self._calls:
                return cid
        msg = "Starting a bridge call: 65536 calls are pending; wait for some to finish"
        raise LocalProtocolError(msg, m.ERR_BUSY)

    def start_call(self, fn_index: int, args: tuple, now: float, timeout: float, name: str = "") -> int:
        """Sends a CALL. Returns its call id (a CallFinished event with it ends it).

        Args:
            fn_index: the function's index in the HELLO.
            args: the arguments (already checked against the function's types).
            now: the clock.
            timeout: seconds until the call fails with BridgeTimeoutError.
            name: the function's name, for messages.

        Raises:
            LocalProtocolError: the CALL is too long for the MCU, or too many calls pending.
        """
        cid = self._new_call_id()
        self.link.check_size(Call(cid, fn_index, tuple(args)))
        pc = _PendingCall(cid, fn_index, tuple(args), now, now + timeout, None, name=name)
        self._calls[cid] = pc
        self.stats["calls"] += 1
        self._advance(now)
        return cid

    def _advance(self, now: float) -> None:
        # Strategy: one call at a time reaches the MCU. It runs one call at a time anyway
        # and NAKs a CALL with LGB_ERR_BUSY while the previous RESULT is unacknowledged
        # (PROTOCOL.md §7.4), which would cost a whole retransmission timeout.
        if self._active is not None:
            return
        for pc in self._calls.values():
            if pc.outgoing is None:
                self._active = pc
                pc.outgoing = self.link.send(Call(pc.call_id, pc.fn_index, pc.args), now)
                if pc.outgoing is not None:
                    self._by_outgoing[id(pc.outgoing)] = pc
                return

    def abandon(self, call_id: int, now: float) -> None:
        """Forgets a call (its caller gave up); a late RESULT is ACKed and dropped."""
        pc = self._calls.pop(call_id, None)
        if pc is not None and pc.outgoing is not None:
            self._by_outgoing.pop(id(pc.outgoing), None)
            self.link.cancel(pc.outgoing, now)
        if pc is not None and pc is self._active:
            self._active = None
            self._advance(now)

    @property
    def pending_calls(self) -> int:
        """Calls without a RESULT yet."""
        return len(self._calls)

    # --- progress ---------------------------------------------------------------------------

    def next_deadline(self) -> float | None:
        """When `poll` has work next."""
        times = [t for t in (self.link.next_deadline(),) if t is not None]
        for pc in self._calls.values():
            times.append(pc.deadline)
            if pc.resend_at is not None:
                times.append(pc.resend_at)
        return min(times) if times else None

    def _finish(self, pc: _PendingCall, now: float, value: Any = None, error: ProtocolError | None = None, link_failed: bool = False) -> CallFinished:
        self._calls.pop(pc.call_id, None)
        if pc.outgoing is not None:
            self._by_outgoing.pop(id(pc.outgoing), None)
            self.link.cancel(pc.outgoing, now)
        if pc is self._active:
            self._active = None
        return CallFinished(pc.call_id, value, error, pc.started, now, link_failed)

    def _link_events(self, events: list[LinkEvent], now: float) -> list[SessionEvent]:
        out: list[SessionEvent] = []
        for ev in events:
            if isinstance(ev, Delivered):
                pc = self._by_outgoing.get(id(ev.outgoing))
                if pc is not None and pc.call_id in self._calls:
                    pc.resend_at = now + self.result_wait
            elif isinstance(ev, SendFailed):
                pc = self._by_outgoing.pop(id(ev.outgoing), None)
                if pc is not None and pc.call_id in self._calls:
                    err = ev.error
                    timed_out = isinstance(err, BridgeTimeoutError)
                    if timed_out:
                        err = BridgeTimeoutError(f"Calling {pc.name or f'function {pc.fn_index}'} (call id {pc.call_id}): {err}")
                    out.append(self._finish(pc, now, error=err, link_failed=timed_out))
            elif isinstance(ev, Received):
                out.extend(self._message(ev.message, now, ev.packet))
            elif isinstance(ev, Dropped):
                out.append(ev)
        return out

    def _message(self, msg: Message, now: float, packet: Packet | None = None) -> list[SessionEvent]:
        if isinstance(msg, Hello):
            if packet is not None and packet.retry and self.hello == msg and not self._hello_asked:
                return []  # a copy of the HELLO just handled (our ACK was lost)
            restarted = self.hello is not None and not self._hello_asked
            self._hello_asked = False
            self.hello = msg
            self.link.peer_max_payload = msg.max_payload
            evs: list[SessionEvent] = [HelloReceived(msg, restarted)]
            # PROTOCOL.md §9: a HELLO means a new MCU session (a restart, or the answer to
            # HELLO_REQ, which resets it): calls it acknowledged will get no RESULT.
            # Unacknowledged CALLs are retransmitted and reach the new session.
            why = "restarted (it sent a new HELLO)" if restarted else "reset its session (it answered HELLO_REQ)"
            pc = self._active
            if pc is not None and pc.outgoing is not None and pc.outgoing.state == "acked":
                err = BridgeDisconnected(
                    f"Calling {pc.name or f'function {pc.fn_index}'} (call id {pc.call_id}): the MCU {why} "
                    "before it answered; the call may or may not have run. Fix: call again if the function is safe to repeat"
                )
                evs.append(self._finish(pc, now, error=err))
            return evs
        if isinstance(msg, Result):
            pc = self._calls.get(msg.call_id)
            if pc is None:
                self.stats["late_results"] += 1
                return []
            if msg.status == m.OK:
                return [self._finish(pc, now, value=msg.value)]
            what = m.ERRORS.get(msg.status, ("", "unknown error"))[1]
            detail = f": {msg.value}" if isinstance(msg.value, str) and msg.value else ""
            text = f"Calling {pc.name or f'function {pc.fn_index}'} on the MCU: {m.error_name(msg.status)} ({what}){detail}"
            return [self._finish(pc, now, error=RemoteProtocolError(text, msg.status))]
        if isinstance(msg, Pong):
            return [PongReceived(msg.data)]
        if isinstance(msg, EventMessage):
            self.stats["events"] += 1
            return [McuEvent(msg)]
        return []  # a PING (answered by the link), HELLO_REQ or CALL: nothing for a host to do

    def receive(self, item: Packet | DecodeError, now: float) -> list[SessionEvent]:
        """Handles a packet or decode error from the transport."""
        out = self._link_events(self.link.receive(item, now), now)
        self._advance(now)
        return out

    def poll(self, now: float) -> list[SessionEvent]:
        """Runs the timers: retransmissions, CALL re-sends, call timeouts."""
        out = self._link_events(self.link.poll(now), now)
        for pc in list(self._calls.values()):
            if pc.call_id not in self._calls:
                continue
            if now >= pc.deadline:
                got = "its ACK but no RESULT" if pc.outgoing is not None and pc.outgoing.state == "acked" else "no ACK"
                msg = (
                    f"Calling {pc.name or f'function {pc.fn_index}'} (call id {pc.call_id}): {got} within "
                    f"{pc.deadline - pc.started:.3f} s. Fix: pass a longer timeout if the function is slow, or check the link"
                )
                out.append(self._finish(pc, now, error=BridgeTimeoutError(msg)))
            elif pc.outgoing is not None and pc.resend_at is not None and now >= pc.resend_at:
                # the RESULT was lost (the MCU gave up retransmitting it): ask again with the
                # same call id; the MCU answers from its RESULT cache
                pc.resend_at = None
                pc.resends += 1
                self.stats["resends"] += 1
                old = pc.outgoing
                if old is not None:
                    self._by_outgoing.pop(id(old), None)
                pc.outgoing = self.link.send(Call(pc.call_id, pc.fn_index, pc.args), now)
                if pc.outgoing is not None:
                    self._by_outgoing[id(pc.outgoing)] = pc
        self._advance(now)
        return out

    def fail_all(self, error: ProtocolError, now: float) -> list[SessionEvent]:
        """Ends every pending call with `error` (the transport failed)."""
        self.link.fail_all(error)
        self._by_outgoing.clear()
        return [self._finish(pc, now, error=error) for pc in list(self._calls.values())]

