"""The bridge endpoint's state machine, sans I/O: sequence numbers, ACK/NAK, retries with
backoff, duplicate detection, and (host side) call ids, PING and HELLO.

Why: reliability is where a link protocol's bugs live (a lost ACK that runs a function
twice, a retransmission that never stops), and it is testable only without real time.
Every method takes `now` (seconds, any monotonic origin) and nothing here sleeps, reads
or writes: the caller feeds packets in (`receive`), asks `poll(now)` when
`next_deadline()` passes, and sends what `data_to_send()` returns. h11's
`Connection` is the model.

`Link` is one endpoint of either side (PROTOCOL.md "Reliability"):

- HELLO, CALL, RESULT and EVENT go with FLAG_ACK_REQ, one at a time per direction
  (stop-and-wait): the next waits until the peer ACKs the one in flight. Every new
  packet takes the next seq, except that a new ACK_REQ packet never reuses the seq of
  the previous one (one value is skipped), which keeps duplicate detection sound after
  the counter wraps.
- An unacknowledged frame is sent again with FLAG_RETRY and the same seq after
  `(timeout + airtime(frame and its ACK)) * 2**k` for attempt k; after `retries`
  retransmissions it fails with BridgeTimeoutError. A NAK fails it at once with
  RemoteProtocolError(code), except LGB_ERR_BUSY: the retransmission at the timeout is
  the retry.
- Every accepted ACK_REQ frame is ACKed; a duplicate (an ACK_REQ frame with the seq of
  the last one accepted, HELLO excepted) is ACKed again but not delivered again.
- A frame whose CRC was good but which cannot be used (unknown version, a type unknown
  or not valid in this direction, a bad payload) is NAKed with the error code; ACKs and
  NAKs are never NAKed. The order of the checks is PROTOCOL.md §3.4's.
- A PING is answered with a PONG carrying its payload. A HELLO clears the memory of the
  peer's last seq (the MCU restarted), and so does a HELLO_REQ at an MCU.

`lgembed.bridge.session.HostSession` adds the host's side of the conversation on top
(call ids, HELLO, PING); `lgembed.bridge.softmcu` the MCU's.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from lgembed.bridge import messages as m
from lgembed.bridge.codec import (
    DEFAULT_MAX_PAYLOAD,
    Ack,
    DecodeError,
    HelloRequest,
    Message,
    Nak,
    Packet,
    Ping,
    decode_message,
    encode_packet,
    encode_payload,
)
from lgembed.bridge.errors import BridgeTimeoutError, LocalProtocolError, ProtocolError, RemoteProtocolError

__all__ = (
    "HOST_ACCEPTS",
    "MCU_ACCEPTS",
    "Delivered",
    "Dropped",
    "Link",
    "LinkEvent",
    "Outgoing",
    "Received",
    "SendFailed",
)

HOST_ACCEPTS = frozenset({m.MSG_HELLO, m.MSG_PING, m.MSG_PONG, m.MSG_RESULT, m.MSG_EVENT, m.MSG_ACK, m.MSG_NAK})
"""Types a host accepts (CALL and HELLO_REQ arriving at a host are NAKed LGB_ERR_TYPE)."""

MCU_ACCEPTS = frozenset({m.MSG_HELLO_REQ, m.MSG_PING, m.MSG_PONG, m.MSG_CALL, m.MSG_ACK, m.MSG_NAK})
"""Types an MCU accepts."""

_ACK_PACKET = m.MIN_PACKET + 1
# bytes of an ACK packet, whose airtime the retransmission timer includes

# --- link events ---------------------------------------------------------------------------


@dataclass(eq=False)
class Outgoing:
    """A reliable frame: queued, in flight, acknowledged or failed.

    Attributes:
        message: the message.
        payload: its encoded payload.
        seq: the seq it was sent with (None while queued).
        attempts: transmissions so far.
        state: "queued", "in_flight", "acked", "failed" or "cancelled".
        error: why it failed.
        sent_at: when it was first transmitted.
        acked_at: when its ACK arrived.
    """

    message: Message
    payload: bytes
    seq: int | None = None
    attempts: int = 0
    state: str = "queued"
    error: ProtocolError | None = None
    deadline: float = 0.0
    sent_at: float | None = None
    acked_at: float | None = None


@dataclass(frozen=True)
class Received:
    """A new message from the peer (not a duplicate, not an ACK/NAK)."""

    message: Message
    packet: Packet


@dataclass(frozen=True)
class Delivered:
    """The peer acknowledged a reliable frame."""

    outgoing: Outgoing


@dataclass(frozen=True)
class SendFailed:
    """A reliable frame failed: NAKed, or unacknowledged after every retry."""

    outgoing: Outgoing
    error: ProtocolError


@dataclass(frozen=True)
class Dropped:
    """A frame that was not used: it did not decode, or its payload was invalid."""

    error: DecodeError | ProtocolError
    packet: Packet | None = None


LinkEvent = Received | Delivered | SendFailed | Dropped


class Link:
    """One endpoint of the bridge's reliability layer (see the module docstring).

    Args:
        timeout: seconds to wait for an ACK before the first retransmission (50 ms),
            plus `airtime` of the frame; the wait doubles per retry.
        retries: retransmissions before a frame fails (3).
        airtime: bytes -> seconds the frame spends on the wire (the transport's
            figure: 10 bits per byte over a UART's baud rate).
        max_payload: the longest payload this side sends to the peer until told its
            limit (`peer_max_payload`).
        accepts: the message types this side accepts (HOST_ACCEPTS or MCU_ACCEPTS);
            others are NAKed LGB_ERR_TYPE.

    Attributes:
        peer_max_payload: the peer's limit (from its HELLO), or None.
        stats: counters: "sent", "retransmitted", "received", "duplicates", "acks_sent",
            "naks_sent", "naks_received", "timeouts", "dropped".
    """

    def __init__(
        self,
        *,
        timeout: float = 0.05,
        retries: int = 3,
        airtime: Callable[[int], float] | None = None,
        max_payload: int = DEFAULT_MAX_PAYLOAD,
        accepts: frozenset[int] = HOST_ACCEPTS,
    ) -> None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0:
            msg = f"Link: 'timeout' must be a number of seconds above 0 (got {timeout!r})"
            raise ValueError(msg)
        if isinstance(retries, bool) or not isinstance(retries, int) or not 0 <= retries <= 16:
            msg = f"Link: 'retries' must be an integer from 0 to 16 (got {retries!r})"
            raise ValueError(msg)
        self.timeout = float(timeout)
        self.retries = retries
        self.airtime = airtime or (lambda n: 0.0)
        self.max_payload = max_payload
        self.peer_max_payload: int | None = None
        self.accepts = frozenset(accepts)
        self._seq = 0  # the next seq this side uses
        self._last_tx: int | None = None  # seq of this side's last new ACK_REQ packet
        self._queue: deque[Outgoing] = deque()
        self._inflight: Outgoing | None = None
        self._out: list[bytes] = []
        self._last_rx: int | None = None  # seq of the last ACK_REQ frame accepted from the peer
        self.stats = dict.fromkeys(
            ("sent", "retransmitted", "received", "duplicates", "acks_sent", "naks_sent", "naks_received", "timeouts", "dropped"), 0
        )

    # --- sending ----------------------------------------------------------------------------

    def _next_seq(self, reliable: bool = False) -> int:
        s = self._seq
        if reliable:
            if s == self._last_tx:
                s = (s + 1) & 0xFF  # PROTOCOL.md §8.1: never the previous ACK_REQ seq
            self._last_tx = s
        self._seq = (s + 1) & 0xFF
        return s

    def _emit(self, mtype: int, payload: bytes, flags: int, seq: int | None = None) -> bytes:
        pkt = encode_packet(mtype, self._next_seq() if seq is None else seq, payload, flags)
        self._out.append(pkt)
        self.stats["sent"] += 1
        return pkt

    def check_size(self, message: Message) -> bytes:
        """The message's payload, if it fits the peer's limit.

        Raises:
            LocalProtocolError: too long (LGB_ERR_TOO_LONG) or not encodable (LGB_ERR_ARGS).
        """
        payload = encode_payload(message)
        limit = self.peer_max_payload if self.peer_max_payload is not None else self.max_payload
        if len(payload) > limit:
            name = m.MESSAGE_TYPES.get(message.TYPE, type(message).__name__)
            who = "the MCU accepts (its HELLO's max_payload)" if self.peer_max_payload is not None else "this link sends"
            msg = f"Sending a {name}: its payload has {len(payload)} bytes, above the {limit} {who}. Fix: pass smaller arguments"
            raise LocalProtocolError(msg, m.ERR_TOO_LONG)
        return payload

    def send(self, message: Message, now: float) -> Outgoing | None:
        """Queues a message. HELLO, CALL, RESULT and EVENT are reliable: the returned
        Outgoing tracks them (a `Delivered` or `SendFailed` event ends it). Others go out
        at once and return None.

        Raises:
            LocalProtocolError: the payload is above the peer's `max_payload` (code
                LGB_ERR_TOO_LONG) or cannot be encoded (LGB_ERR_ARGS).
        """
        payload = self.check_size(message)
        if message.TYPE not in m.RELIABLE_TYPES:
            self._emit(message.TYPE, payload, 0)
            return None
        out = Outgoing(message, payload)
        self._queue.append(out)
        self._pump(now)
        return out

    def _base_wait(self, out: Outgoing) -> float:
        return self.timeout + self.airtime(m.MIN_PACKET + len(out.payload)) + self.airtime(_ACK_PACKET)

    def _wait(self, out: Outgoing) -> float:
        return self._base_wait(out) * (2 ** max(0, out.attempts - 1))

    def _transmit(self, out: Outgoing, now: float) -> None:
        flags = m.FLAG_ACK_REQ | (m.FLAG_RETRY if out.attempts else 0)
        if out.seq is None:
            out.seq = self._next_seq(reliable=True)
            out.sent_at = now
        else:
            self.stats["retransmitted"] += 1
        self._emit(out.message.TYPE, out.payload, flags, out.seq)
        out.attempts += 1
        out.state = "in_flight"
        out.deadline = now + self._wait(out)

    def _pump(self, now: float) -> None:
        while self._inflight is None and self._queue:
            out = self._queue.popleft()
            if out.state != "queued":
                continue
            self._inflight = out
            self._transmit(out, now)

    def cancel(self, out: Outgoing, now: float) -> None:
        """Stops sending `out` (e.g. a CALL whose RESULT arrived before its ACK)."""
        if out.state in ("acked", "failed", "cancelled"):
            return
        out.state = "cancelled"
        if self._inflight is out:
            self._inflight = None
            self._pump(now)

    def fail_all(self, error: ProtocolError) -> list[SendFailed]:
        """Fails every queued and in-flight frame with `error` (the transport is gone)."""
        events = []
        items = ([self._inflight] if self._inflight else []) + list(self._queue)
        self._inflight = None
        self._queue.clear()
        for out in items:
            if out.state in ("queued", "in_flight"):
                out.state, out.error = "failed", error
                events.append(SendFailed(out, error))
        return events

    def reset_peer(self) -> None:
        """Forgets the peer's last seq (it restarted, or the link was reopened)."""
        self._last_rx = None

    @property
    def busy(self) -> bool:
        """Whether a reliable frame is in flight or queued."""
        return self._inflight is not None or bool(self._queue)

    def data_to_send(self) -> list[bytes]:
        """The packets to transmit now, in order (header + payload + CRC each); the
        transport frames them (COBS + 0x00 on a UART, ISO-TP on CAN)."""
        out, self._out = self._out, []
        return out

    def next_deadline(self) -> float | None:
        """When `poll` has work next (a retransmission or a failure), or None."""
        return self._inflight.deadline if self._inflight is not None else None

    def poll(self, now: float) -> list[LinkEvent]:
        """Retransmits or fails the frame in flight when its time has come."""
        events: list[LinkEvent] = []
        out = self._inflight
        if out is not None and now >= out.deadline:
            if out.attempts > self.retries:
                self.stats["timeouts"] += 1
                name = m.MESSAGE_TYPES.get(out.message.TYPE, "frame")
                waited = sum(self._base_wait(out) * 2**k for k in range(out.attempts))
                msg = (
                    f"Sending a {name} (seq {out.seq}): no ACK after {out.attempts} transmissions over "
                    f"{waited:.3f} s. Fix: check that the MCU is powered, running the bridge firmware, and wired "
                    "to this port at the same baud rate / CAN ids"
                )
                err = BridgeTimeoutError(msg)
                out.state, out.error = "failed", err
                self._inflight = None
                events.append(SendFailed(out, err))
                self._pump(now)
            else:
                self._transmit(out, now)
        return events

    # --- receiving --------------------------------------------------------------------------

    def _nak(self, seq: int, code: int) -> None:
        self.stats["naks_sent"] += 1
        self._emit(m.MSG_NAK, bytes([seq & 0xFF, code & 0xFF]), 0)

    def receive(self, item: Packet | DecodeError, now: float, check: Callable[[Message], int | None] | None = None) -> list[LinkEvent]:
        """Handles one decoded packet or decode error from the transport (PROTOCOL.md
        §3.4 checks 7 and 8, §8.4 duplicates).

        Args:
            item: what the transport decoded.
            now: the clock.
            check: the application's last word on a new ACK_REQ message before it is
                ACKed: an error code to NAK it with instead (an MCU answers a CALL with
                NAK LGB_ERR_BUSY while another call's RESULT is unacknowledged), or None.

        Returns:
            The events it caused (ACKs and NAKs to send are in `data_to_send()`).
        """
        events: list[LinkEvent] = []
        if isinstance(item, DecodeError):
            self.stats["dropped"] += 1
            if item.seq is not None and item.type not in (m.MSG_ACK, m.MSG_NAK):
                self._nak(item.seq, item.code)
            events.append(Dropped(item))
            return events
        pkt = item
        if pkt.type not in self.accepts:
            self.stats["dropped"] += 1
            name = m.MESSAGE_TYPES.get(pkt.type)
            why = f"{name} is not valid in this direction" if name else f"unknown message type 0x{pkt.type:02x}"
            err = RemoteProtocolError(f"Receiving a bridge packet: {why}", m.ERR_TYPE)
            if pkt.type not in (m.MSG_ACK, m.MSG_NAK):
                self._nak(pkt.seq, m.ERR_TYPE)
            events.append(Dropped(err, pkt))
            return events
        if pkt.type == m.MSG_HELLO:
            self._last_rx = None  # the peer (re)started: a HELLO is never a duplicate
        elif pkt.ack_req and pkt.seq == self._last_rx:
            self.stats["duplicates"] += 1
            self.stats["acks_sent"] += 1
            self._emit(m.MSG_ACK, bytes([pkt.seq]), 0)
            return events
        try:
            msg = decode_message(pkt)
        except ProtocolError as e:
            self.stats["dropped"] += 1
            if pkt.type not in (m.MSG_ACK, m.MSG_NAK):
                self._nak(pkt.seq, e.code if e.code is not None else m.ERR_PAYLOAD)
            events.append(Dropped(e, pkt))
            return events
        self.stats["received"] += 1
        if isinstance(msg, Ack):
            self._on_ack(msg.seq, now, events)
            return events
        if isinstance(msg, Nak):
            self._on_nak(msg, now, events)
            return events
        if isinstance(msg, HelloRequest):
            self._last_rx = None  # PROTOCOL.md §9: HELLO_REQ resets the MCU's session
        if pkt.ack_req and check is not None:
            code = check(msg)
            if code is not None:
                self._nak(pkt.seq, code)
                return events
        if pkt.ack_req:
            self._last_rx = pkt.seq
            self.stats["acks_sent"] += 1
            self._emit(m.MSG_ACK, bytes([pkt.seq]), 0)
        if isinstance(msg, Ping):
            self._emit(m.MSG_PONG, msg.data, 0)
        events.append(Received(msg, pkt))
        return events

    def _on_ack(self, seq: int, now: float, events: list) -> None:
        out = self._inflight
        if out is None or out.seq != seq:
            return  # a late or repeated ACK
        out.state, out.acked_at = "acked", now
        self._inflight = None
        events.append(Delivered(out))
        self._pump(now)

    def _on_nak(self, nak: Nak, now: float, events: list) -> None:
        self.stats["naks_received"] += 1
        out = self._inflight
        if out is None or out.seq != nak.seq:
            return
        if nak.code == m.ERR_BUSY:
            return  # keep waiting: the retransmission at the timeout is the retry
        name = m.MESSAGE_TYPES.get(out.message.TYPE, "frame")
        text = m.ERRORS.get(nak.code, ("", "unknown error"))[1]
        msg = f"Sending a {name} (seq {out.seq}): the peer refused it with NAK {m.error_name(nak.code)} ({text})"
        err = RemoteProtocolError(msg, nak.code)
        out.state, out.error = "failed", err
        self._inflight = None
        events.append(SendFailed(out, err))
        self._pump(now)
