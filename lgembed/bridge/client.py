"""BridgeClient: a microcontroller's functions and events over a UART or CAN, from Python.

Why: the sans-I/O `HostSession` knows the protocol but not time or ports; this module
gives it both. A reader thread reads the transport, feeds the session, runs its timers
(retransmissions, call timeouts) and wakes the callers; calls are made from any thread.

    client = BridgeClient.over_uart(device.adapter("mcu_uart"), name="mcu")
    client.connect()                      # HELLO_REQ -> the MCU's HELLO
    client.functions                      # {"read_temp": FunctionSpec(...), ...}
    client.call("read_temp")              # 21.5
    client.ping()                         # round trip in seconds
    for ev in client.events():            # lgembed.edge.Event(kind="bridge_event")
        ...
    tools = client.tools(policies={"set_led": {"risk": "high"}})

Connection states: "connecting" (no HELLO yet), "connected", "disconnected". When the
port fails (unplugged) or the MCU stops answering (no ACK after every retry, then no
HELLO), the client is disconnected: pending calls end with `BridgeDisconnected` naming
the port and the fix, and the reader keeps trying to reopen the port and sends HELLO_REQ
every `reconnect_interval` seconds. A HELLO (asked for, or sent by a rebooted MCU)
connects it again; calls made meanwhile wait for that up to their timeout. Bytes that
do not decode are dropped and counted (`stats`); the decoder resynchronises at the next
0x00.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

from lgembed.bridge import messages as m
from lgembed.bridge.codec import DEFAULT_MAX_PAYLOAD, FunctionSpec, Hello, check_args
from lgembed.bridge.errors import BridgeDisconnected, BridgeTimeoutError, LocalProtocolError
from lgembed.bridge.link import Dropped, Link
from lgembed.bridge.events import EVENT_KIND, BridgeEvents, to_event
from lgembed.bridge.session import CallFinished, HelloReceived, HostSession, McuEvent, PongReceived
from lgembed.edge.errors import EdgeError
from lgembed.edge.events import Event

__all__ = ("EVENT_KIND", "BridgeClient", "BridgeEvents")

log = logging.getLogger("lgembed.bridge")

_POLL = 0.02
# longest wait of the reader thread in one read, so timers run at least this often


class _Waiter:
    __slots__ = ("done", "error", "value")

    def __init__(self) -> None:
        self.done = threading.Event()
        self.value: Any = None
        self.error: BaseException | None = None

    def set(self, value: Any = None, error: BaseException | None = None) -> None:
        self.value, self.error = value, error
        self.done.set()


class BridgeClient:
    """The host's end of a firmware bridge (see the module docstring).

    Args:
        transport: a `UartTransport` or `CanTransport` (use `over_uart` / `over_can`).
        name: the bridge's name (the event source, the tools' adapter in audit records).
        timeout: seconds before the first retransmission (plus the frame's airtime).
        retries: retransmissions before a frame fails.
        call_timeout: default seconds a `call` may take.
        reconnect_interval: seconds between reconnection attempts.
        backlog: events kept while nobody iterates `events()`.

    Attributes:
        state: "connecting", "connected", "disconnected" or "closed".
        link: the Link (its `stats`: retransmissions, duplicates, NAKs, timeouts).
        session: the HostSession (the last HELLO is `session.hello`).
        stats: "reconnects", "port_failures", "dropped_frames", "events", "hello_requests".
    """

    def __init__(
        self,
        transport: Any,
        *,
        name: str = "bridge",
        timeout: float = 0.05,
        retries: int = 3,
        call_timeout: float = 2.0,
        reconnect_interval: float = 0.25,
        backlog: int = 1000,
    ) -> None:
        self.transport = transport
        self.name = name
        self.call_timeout = float(call_timeout)
        self.reconnect_interval = float(reconnect_interval)
        self.link = Link(timeout=timeout, retries=retries, airtime=transport.airtime)
        self.session = HostSession(self.link)
        self.state = "connecting"
        self._why = ""  # why the client is disconnected
        self._lock = threading.Lock()  # session, link and the tables below
        self._wlock = threading.Lock()  # transport writes, in order
        self._changed = threading.Condition(self._lock)  # state or hello changed
        self._calls: dict[int, _Waiter] = {}
        self._pongs: dict[bytes, _Waiter] = {}
        self._ping_n = 0
        self._subs: list[Callable[[Event], None]] = []
        self._backlog: deque[Event] = deque(maxlen=backlog)
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._stop = threading.Event()
        self._port_ok = True
        self._next_probe = 0.0  # when the next HELLO_REQ (or reopen attempt) is due
        self.tool_policies: Mapping[str, Any] | None = None
        """What `tools()` uses when given no policies (a device file's `tools` table)."""
        self.stats = dict.fromkeys(("reconnects", "port_failures", "dropped_frames", "events", "hello_requests"), 0)

    # --- construction -------------------------------------------------------------------------

    @classmethod
    def over_uart(cls, port: Any, *, baudrate: int = 115200, max_payload: int = DEFAULT_MAX_PAYLOAD, registry: Any = None, **kwargs: Any) -> BridgeClient:
        """A client on a serial port: an lgembed UART adapter, a pyserial Serial, or a path.

        Args:
            port: the port.
            baudrate: for a path, the baud rate.
            max_payload: the longest payload accepted from the MCU.
            registry: the registry holding the adapter (a reopened adapter replaces it).
            **kwargs: BridgeClient's keyword arguments.
        """
        from lgembed.bridge.transport import UartTransport

        return cls(UartTransport(port, baudrate=baudrate, max_payload=max_payload, registry=registry), **kwargs)

    @classmethod
    def over_can(
        cls,
        bus: Any,
        tx_id: int = 0x7E0,
        rx_id: int = 0x7E8,
        *,
        extended: bool | None = None,
        max_payload: int = DEFAULT_MAX_PAYLOAD,
        registry: Any = None,
        isotp: Mapping[str, Any] | None = None,
        **kwargs: Any,
    ) -> BridgeClient:
        """A client on CAN with ISO-TP: an lgembed CAN adapter or a python-can bus.

        Args:
            bus: the bus.
            tx_id: host -> MCU id (0x7E0).
            rx_id: MCU -> host id (0x7E8).
            extended: 29-bit ids (None: when an id is above 0x7FF).
            max_payload: the longest payload accepted from the MCU.
            registry: the registry holding the adapter.
            isotp: IsoTpChannel options (padding, block_size, stmin, timeout).
            **kwargs: BridgeClient's keyword arguments.

        Raises:
            DriverUnavailableError: can-isotp is not installed.
        """
        from lgembed.bridge.transport import CanTransport

        t = CanTransport(bus, tx_id, rx_id, extended=extended, max_payload=max_payload, registry=registry, **dict(isotp or {}))
        return cls(t, **kwargs)

    # --- lifetime -----------------------------------------------------------------------------

    def _start(self) -> None:
        if self.state == "closed":
            msg = f"Using bridge '{self.name}' ({self.transport.name}): the client is closed. Fix: create a new one"
            raise BridgeDisconnected(msg, m.ERR_STATE)
        with self._start_lock:
            if self._thread is None:
                self.transport.open()
                self._thread = threading.Thread(target=self._run, name=f"lgembed-bridge-{self.name}", daemon=True)
                self._thread.start()

    def connect(self, timeout: float | None = None) -> Hello:
        """Starts the reader thread and waits for the MCU's HELLO (asking with HELLO_REQ).

        Returns:
            The HELLO.

        Raises:
            BridgeDisconnected: no HELLO within `timeout` (default: call_timeout); the
                message names the port and the fix. The client keeps trying.
        """
        self._start()
        with self._lock:
            if self.session.hello is not None and self.state == "connected":
                return self.session.hello
        return self._wait_connected(time.monotonic() + (self.call_timeout if timeout is None else timeout), "Connecting")

    def close(self) -> None:
        """Stops the reader thread and the transport; pending calls fail. Closing twice is harmless."""
        if self.state == "closed":
            return
        with self._lock:
            self.state = "closed"
            self._why = "the client was closed"
            self._changed.notify_all()
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        self.transport.close()
        err = BridgeDisconnected(f"Bridge '{self.name}' ({self.transport.name}): the client was closed", m.ERR_STATE)
        with self._lock:
            finished = self.session.fail_all(err, time.monotonic())
        self._dispatch(finished)
        for sub in list(self._subs):
            owner = getattr(sub, "__self__", None)
            if isinstance(owner, BridgeEvents):
                owner.close()

    def __enter__(self) -> BridgeClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        h = self.session.hello
        who = f" {h.device_id} {h.fw_version}" if h else ""
        return f"<BridgeClient {self.name!r} on {self.transport.name}: {self.state}{who}>"

    # --- what the MCU announced ---------------------------------------------------------------

    @property
    def connected(self) -> bool:
        """Whether the MCU answered and the port works."""
        return self.state == "connected"

    @property
    def functions(self) -> dict[str, FunctionSpec]:
        """The MCU's functions by name, in its HELLO's order (empty before connecting)."""
        h = self.session.hello
        return {f.name: f for f in h.functions} if h else {}

    @property
    def event_names(self) -> tuple[str, ...]:
        """The MCU's event names (empty before connecting)."""
        h = self.session.hello
        return h.events if h else ()

    def hello(self, timeout: float | None = None, *, refresh: bool = False) -> Hello:
        """The MCU's HELLO (device id, firmware version, max_payload, functions, events),
        connecting first if needed.

        Args:
            timeout: seconds to wait (default: call_timeout).
            refresh: ask for a new one with HELLO_REQ (which also resets the MCU's
                session: a call it is running gets no RESULT).

        Raises:
            BridgeDisconnected: no HELLO in time (the client keeps trying).
        """
        if not refresh:
            return self.connect(timeout)
        self._start()
        timeout = self.call_timeout if timeout is None else timeout
        with self._lock:
            before = self.session.hello
        deadline = time.monotonic() + timeout
        while True:
            self._probe(time.monotonic(), force=True)
            with self._lock:
                wait = min(self.reconnect_interval, max(0.0, deadline - time.monotonic()))
                if self._changed.wait_for(lambda: self.session.hello is not before, wait):
                    return self.session.hello  # type: ignore[return-value]
            if time.monotonic() >= deadline:
                msg = f"Asking bridge '{self.name}' ({self.transport.name}) for its HELLO: no answer within {timeout} s. Fix: {self.transport.fix}"
                raise BridgeDisconnected(msg)

    # --- calls --------------------------------------------------------------------------------

    def _wait_connected(self, deadline: float, action: str) -> Hello:
        with self._lock:
            ok = self._changed.wait_for(
                lambda: self.state in ("connected", "closed") and (self.state == "closed" or self.session.hello is not None),
                max(0.0, deadline - time.monotonic()),
            )
            if ok and self.state == "connected" and self.session.hello is not None:
                return self.session.hello
            why = self._why or "the MCU has not sent its HELLO"
        msg = (
            f"{action} on bridge '{self.name}' ({self.transport.name}): the MCU is not connected ({why}). "
            f"Fix: {self.transport.fix}; the client reconnects by itself every {self.reconnect_interval:g} s"
        )
        raise BridgeDisconnected(msg)

    def call(self, name: str, *args: Any, timeout: float | None = None) -> Any:
        """Runs function `name` on the MCU and returns its result.

        Args:
            name: a function of the MCU's HELLO.
            *args: its arguments, matching its type codes (an int passes for a float).
            timeout: seconds for the whole call, including retries and waiting for a
                reconnection (default: call_timeout).

        Returns:
            The function's result (None for a function without one).

        Raises:
            LocalProtocolError: no such function (code LGB_ERR_NO_FUNCTION), wrong
                arguments (LGB_ERR_ARGS), or a CALL above the MCU's max_payload
                (LGB_ERR_TOO_LONG).
            RemoteProtocolError: the MCU refused the call or the function failed (its
                code, e.g. LGB_ERR_FUNCTION, and its error text).
            BridgeTimeoutError: no ACK or RESULT in time.
            BridgeDisconnected: the MCU is not connected, the port failed, or the MCU
                restarted before it answered.
        """
        self._start()
        timeout = self.call_timeout if timeout is None else float(timeout)
        t0 = time.monotonic()
        deadline = t0 + timeout
        hello = self._wait_connected(deadline, f"Calling {name}")
        idx = hello.function_index(name)
        if idx is None:
            known = ", ".join(f.name for f in hello.functions) or "none"
            msg = f"Calling {name} on bridge '{self.name}': the MCU ({hello.device_id}) has no function {name!r}; its functions: {known}"
            raise LocalProtocolError(msg, m.ERR_NO_FUNCTION)
        values = check_args(hello.functions[idx], args, f"Calling {name} on bridge '{self.name}'")
        waiter = _Waiter()
        with self._lock:
            now = time.monotonic()
            cid = self.session.start_call(idx, values, now, max(0.001, deadline - now), name)
            self._calls[cid] = waiter
        self._flush()
        if not waiter.done.wait(max(0.0, deadline - time.monotonic()) + 1.0):
            # the reader thread runs the call's timer; this is only a safety net
            with self._lock:
                self._calls.pop(cid, None)
                self.session.abandon(cid, time.monotonic())
            msg = f"Calling {name} on bridge '{self.name}' ({self.transport.name}): no RESULT within {timeout} s"
            raise BridgeTimeoutError(msg)
        if waiter.error is not None:
            raise waiter.error
        return waiter.value

    def ping(self, data: bytes | None = None, timeout: float = 1.0) -> float:
        """Sends a PING and waits for its PONG.

        Args:
            data: up to 8 bytes (default: a counter).
            timeout: seconds to wait.

        Returns:
            The round trip in seconds.

        Raises:
            LocalProtocolError: more than 8 bytes.
            BridgeTimeoutError: no PONG in time (a PING is not retransmitted).
        """
        self._start()
        with self._lock:
            self._ping_n += 1
            payload = self._ping_n.to_bytes(4, "big") if data is None else bytes(data)
            waiter = _Waiter()
            self._pongs[payload] = waiter
            t0 = time.monotonic()
            try:
                self.session.ping(payload, t0)
            except LocalProtocolError:
                self._pongs.pop(payload, None)
                raise
        self._flush()
        ok = waiter.done.wait(timeout)
        with self._lock:
            self._pongs.pop(payload, None)
        if not ok:
            msg = f"Pinging bridge '{self.name}' ({self.transport.name}): no PONG within {timeout} s. Fix: {self.transport.fix}"
            raise BridgeTimeoutError(msg)
        return float(waiter.value) - t0

    # --- events -------------------------------------------------------------------------------

    def events(self, maxsize: int = 1000) -> BridgeEvents:
        """A new iterator over the MCU's events (each gets every event from now on, and
        the first one also those buffered while nobody listened)."""
        self._start()
        stream = BridgeEvents(self, maxsize)
        with self._lock:
            backlog = list(self._backlog)
            self._backlog.clear()
            self._subs.append(stream._put)
        for ev in backlog:
            stream._put(ev)
        return stream

    def subscribe(self, fn: Callable[[Event], None]) -> Callable[[], None]:
        """Calls `fn(event)` from the reader thread for every MCU event (and at once for
        the events buffered while nobody listened).

        Returns:
            A function that unsubscribes.
        """
        self._start()
        with self._lock:
            backlog = list(self._backlog)
            self._backlog.clear()
            self._subs.append(fn)
        for ev in backlog:
            fn(ev)
        return lambda: self._unsubscribe(fn)

    def feed(self, stream: Any) -> None:
        """Forwards the MCU's events into an `lgembed.edge.EventStream` until it closes
        (how `device.events([...])` and the service's event triggers see them)."""

        def put(ev: Event) -> None:
            if stream.closed:
                self._unsubscribe(put)
                return
            stream.put(ev.source, ev.kind, ev.data)

        self.subscribe(put)

    def _unsubscribe(self, fn: Callable[[Event], None]) -> None:
        with self._lock:
            if fn in self._subs:
                self._subs.remove(fn)

    # --- tools --------------------------------------------------------------------------------

    def tools(self, policies: Mapping[str, Any] | None = None, *, connect_timeout: float | None = None) -> list[Any]:
        """The MCU's functions as hardware tools, under the edge layer's ToolPolicy.

        Args:
            policies: tool name -> a ToolPolicy, or a table {risk, allow, ranges,
                rate_limit, max_length, reason, description, args}: `args` names the
                function's arguments for the model (default "value" for one argument,
                "arg1", "arg2", ... for more). When given, only these functions
                become tools; when None, `tool_policies` (a device file's table) is
                used, and without that every function becomes a tool at low risk.
            connect_timeout: seconds to wait for the HELLO (default: call_timeout).

        Returns:
            lgembed tools (HardwareTool) for ToolNode / create_react_agent.

        Raises:
            BridgeDisconnected: no HELLO.
            LocalProtocolError: a policy names a function the MCU does not have (code
                LGB_ERR_NO_FUNCTION).
            ValueError: an invalid policy table.
        """
        from lgembed.bridge.tools import bridge_tools

        hello = self.connect(connect_timeout)
        return bridge_tools(self, hello, policies if policies is not None else self.tool_policies)

    # --- the reader thread --------------------------------------------------------------------

    def _flush(self) -> None:
        with self._wlock:
            with self._lock:
                packets = self.link.data_to_send()
            if not packets or not self._port_ok:
                return
            try:
                self.transport.write(packets)
            except EdgeError as e:
                self._port_failed(e)

    def _port_failed(self, e: BaseException) -> None:
        with self._lock:
            if not self._port_ok or self.state == "closed":
                return
            self._port_ok = False
            self.stats["port_failures"] += 1
            self.state = "disconnected"
            self._why = f"the port failed: {e}"
            self._changed.notify_all()
            msg = (
                f"Bridge '{self.name}' ({self.transport.name}): the port failed ({e}). Fix: {self.transport.fix}; "
                f"the client reopens the port every {self.reconnect_interval:g} s"
            )
            finished = self.session.fail_all(BridgeDisconnected(msg), time.monotonic())
            self._next_probe = time.monotonic() + self.reconnect_interval
        log.warning("bridge %s: %s", self.name, self._why)
        self._dispatch(finished)

    def _probe(self, now: float, force: bool = False) -> None:
        # HELLO_REQ while not connected (PROTOCOL.md §9: it also resets the MCU's session)
        with self._lock:
            if not force and now < self._next_probe:
                return
            self._next_probe = now + self.reconnect_interval
            self.stats["hello_requests"] += 1
            self.session.request_hello(now)
        self._flush()

    def _reopen(self, now: float) -> None:
        if now < self._next_probe:
            return
        self._next_probe = now + self.reconnect_interval
        try:
            self.transport.reopen()
        except (EdgeError, OSError) as e:
            with self._lock:
                self._why = f"the port failed and cannot be reopened yet: {e}"
            return
        with self._lock:
            self._port_ok = True
            self.link.reset_peer()
            self.stats["reconnects"] += 1
        log.info("bridge %s: reopened %s", self.name, self.transport.name)
        self._probe(time.monotonic(), force=True)

    def _lost(self, why: str) -> None:
        # the MCU stopped acknowledging: back to "host start" (HELLO_REQ until a HELLO)
        with self._lock:
            if self.state != "connected":
                return
            self.state = "disconnected"
            self._why = why
            self._next_probe = 0.0
            self._changed.notify_all()
        log.warning("bridge %s: disconnected (%s)", self.name, why)

    def _run(self) -> None:
        while not self._stop.is_set():
            now = time.monotonic()
            if not self._port_ok:
                self._reopen(now)
                self._stop.wait(0.05)
                continue
            with self._lock:
                nd = self.session.next_deadline()
            wait = _POLL if nd is None else min(_POLL, max(0.0005, nd - now))
            try:
                items = self.transport.read(wait)
            except EdgeError as e:
                if self._stop.is_set():
                    return
                self._port_failed(e)
                continue
            except Exception as e:  # noqa: BLE001 - never let the reader die silently
                log.exception("bridge %s: reader failed", self.name)
                self._port_failed(e)
                continue
            now = time.monotonic()
            with self._lock:
                events = []
                for it in items:
                    events.extend(self.session.receive(it, now))
                events.extend(self.session.poll(now))
            self._dispatch(events)
            self._flush()
            if self.state in ("connecting", "disconnected"):
                self._probe(time.monotonic())

    def _dispatch(self, events: list) -> None:
        for ev in events:
            if isinstance(ev, CallFinished):
                with self._lock:
                    w = self._calls.pop(ev.call_id, None)
                if w is None:
                    continue
                err = ev.error
                if err is not None and isinstance(err, (BridgeTimeoutError, BridgeDisconnected)):
                    err.args = (f"Bridge '{self.name}' ({self.transport.name}): {err}",)
                    if ev.link_failed:
                        self._lost(f"no ACK from the MCU after {self.link.retries + 1} transmissions")
                w.set(ev.value, err)
            elif isinstance(ev, HelloReceived):
                with self._lock:
                    was = self.state
                    self.state = "connected"
                    self._why = ""
                    self._changed.notify_all()
                if was != "connected":
                    log.info("bridge %s: connected to %s %s", self.name, ev.hello.device_id, ev.hello.fw_version)
                if ev.restarted:
                    log.warning("bridge %s: the MCU restarted (unasked HELLO)", self.name)
            elif isinstance(ev, PongReceived):
                with self._lock:
                    w = self._pongs.get(ev.data)
                if w is not None:
                    w.set(time.monotonic())
            elif isinstance(ev, McuEvent):
                edge_ev = to_event(self.name, self.session.hello, ev.message)
                with self._lock:
                    subs = list(self._subs)
                    self.stats["events"] += 1
                    if not subs:
                        self._backlog.append(edge_ev)
                for fn in subs:
                    try:
                        fn(edge_ev)
                    except Exception:  # noqa: BLE001 - a subscriber's bug must not stop the reader
                        log.exception("bridge %s: event subscriber failed", self.name)
            elif isinstance(ev, Dropped):
                self.stats["dropped_frames"] += 1
                log.debug("bridge %s: dropped a frame: %s", self.name, ev.error)
