"""Simulated CAN nodes on python-can's virtual bus.

Why: this machine's kernel has no SocketCAN (not even vcan), and a board's CAN code
should still run in tests. python-can's `virtual` interface is a real `can.Bus` with the
same send/recv/filter code paths; `attach` re-points the adapter at a virtual channel of
its own and puts a `SimCanPeer` (a second bus on that channel) on the far side.

Strategy: one channel per adapter, `lgembed-sim-<adapter>-<random hex>`, so tests and
devices never hear each other's frames (python-can keeps virtual channels in a
process-wide table). A daemon thread on the peer receives every frame the driver sends
(`received`), offers it to `recv()`, and passes it to the `respond` hook, whose frames go
back on the bus; the model's `tick(now)` runs about every 10 ms. The virtual bus delivers
a frame to every other bus on the channel, never back to the sender unless that bus was
opened with receive_own_messages; frames sent while the driver's bus is not open are
lost, as on a real bus with nobody listening.

Device file:

    [adapters.motor]
    kind = "can"
    channel = "can0"
    bitrate = 500000
    simulator = "echo"                # "peer" (default), "echo" or "module:Class"
    simulation = {}                   # the model's keyword arguments

Models:

- "peer" (`CanDevice`): records only.
- "echo" (`EchoDevice`): sends every frame it receives back, same id, data and flags.
- "module:Class": a subclass of `CanDevice`, constructed as `Class(peer, **options)`:
  the peer comes first, so the model can `self.peer.send(...)` at any time; it overrides
  `on_frame(msg)` (returns the frames to answer with) and/or `tick(now)` (returns frames
  to send on its own). Its constructor may raise `OptionError(key, value, allowed)`
  (`lgembed.edge.sim.OptionError`, re-exported here), reported as a DeviceFileError
  naming `adapters.NAME.simulation.KEY`.

The simulation object (`device.simulation(name)`) is the `SimCanPeer`; its `model`
attribute is the model instance.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from lgembed.edge._base import require_library
from lgembed.edge.errors import DeviceFileError
from lgembed.edge.sim import OptionError, SimEnv, build_model, load_model_class

if TYPE_CHECKING:
    import can

__all__ = ("BUILTINS", "DEFAULT_MODEL", "CanDevice", "EchoDevice", "OptionError", "SimCanPeer", "attach")

BUILTINS = {
    "peer": "lgembed.edge.sim.can:CanDevice",
    "echo": "lgembed.edge.sim.can:EchoDevice",
}
"""Built-in model names -> "module:Class"."""

DEFAULT_MODEL = "peer"
"""The model when the adapter's table has no `simulator` key."""

TICK = 0.01
"""Seconds between `tick` calls (and the peer thread's receive timeout)."""


class CanDevice:
    """Base of simulated CAN devices: built with the peer, answers frames.

    Args:
        peer: the SimCanPeer this device sends and receives through.
    """

    def __init__(self, peer: SimCanPeer) -> None:
        self.peer = peer

    def on_frame(self, msg: can.Message) -> Iterable[can.Message] | can.Message | None:
        """Called with each frame the driver sent (already in `peer.received`).

        Returns:
            Frames to send back (build them with `self.peer.message(...)`), or None.
        """
        return None

    def tick(self, now: float) -> Iterable[can.Message] | can.Message | None:
        """Called about every 10 ms with `time.monotonic()`.

        Returns:
            Frames the device sends on its own (a periodic status frame), or None.
        """
        return None


class EchoDevice(CanDevice):
    """Sends every received frame back with the same id, data and flags."""

    def on_frame(self, msg: can.Message) -> can.Message:
        return self.peer.message(
            msg.arbitration_id,
            bytes(msg.data),
            is_extended_id=msg.is_extended_id,
            is_fd=msg.is_fd,
            bitrate_switch=msg.bitrate_switch,
            is_remote_frame=msg.is_remote_frame,
        )


class SimCanPeer:
    """The far side of a simulated CAN adapter: a virtual bus on the adapter's channel.

    Args:
        channel: the virtual channel (the adapter's `channel` setting after attach).
        name: a label for the thread and messages.

    Attributes:
        channel: the virtual channel.
        received: every frame the driver sent, in order (a daemon thread records them).
        respond: called with each received frame; the frames it returns are sent back.
            attach sets it to the model's `on_frame`; replace it (or set None) at will.
        model: the device model (a CanDevice), or None.
        errors: exceptions raised by `respond` or the model's `tick` (logged; the thread
            carries on).

    Raises:
        DriverUnavailableError: python-can is not installed.
    """

    def __init__(self, channel: str, name: str = "peer") -> None:
        self._can = require_library("can", "can", name)
        self.channel = channel
        self.name = name
        self.received: list[can.Message] = []
        self.respond: Callable[[can.Message], Iterable[can.Message] | can.Message | None] | None = None
        self.model: CanDevice | None = None
        self.errors: list[BaseException] = []
        self._unread: deque[can.Message] = deque()
        self._cond = threading.Condition()
        self._send_lock = threading.Lock()
        self._stop = threading.Event()
        self._bus = self._can.Bus(interface="virtual", channel=channel, ignore_config=True)
        self._thread = threading.Thread(target=self._run, name=f"lgembed-sim-can-{name}", daemon=True)

    # --- sending ----------------------------------------------------------------------

    def message(
        self,
        arbitration_id: int,
        data: bytes | Iterable[int] = b"",
        *,
        is_extended_id: bool | None = None,
        is_fd: bool = False,
        bitrate_switch: bool = False,
        is_remote_frame: bool = False,
    ) -> can.Message:
        """A checked `can.Message` (is_extended_id None: True above 0x7FF).

        Raises:
            ValueError: a frame python-can considers invalid (id, length, flags).
        """
        if is_extended_id is None:
            is_extended_id = arbitration_id > 0x7FF
        return self._can.Message(
            arbitration_id=arbitration_id,
            data=bytes(data),
            is_extended_id=is_extended_id,
            is_fd=is_fd,
            bitrate_switch=bitrate_switch,
            is_remote_frame=is_remote_frame,
            check=True,
        )

    def send(
        self,
        arbitration_id: int,
        data: bytes | Iterable[int] = b"",
        *,
        is_extended_id: bool | None = None,
        is_fd: bool = False,
        bitrate_switch: bool = False,
        is_remote_frame: bool = False,
    ) -> can.Message:
        """Sends a frame from the simulated device to the driver.

        Returns:
            The frame sent.

        Raises:
            ValueError: an invalid frame.
            can.CanError: the bus refused it (e.g. the peer is closed).
        """
        msg = self.message(
            arbitration_id,
            data,
            is_extended_id=is_extended_id,
            is_fd=is_fd,
            bitrate_switch=bitrate_switch,
            is_remote_frame=is_remote_frame,
        )
        self.send_message(msg)
        return msg

    def send_message(self, msg: can.Message) -> None:
        """Sends a ready-made `can.Message`.

        Raises:
            can.CanError: the bus refused it.
        """
        with self._send_lock:
            self._bus.send(msg)

    # --- receiving --------------------------------------------------------------------

    def recv(self, timeout: float = 1.0) -> can.Message | None:
        """The next frame from the driver not yet returned by recv(), or None after `timeout`."""
        with self._cond:
            if not self._cond.wait_for(lambda: self._unread, timeout):
                return None
            return self._unread.popleft()

    def wait_received(self, n: int = 1, timeout: float = 1.0) -> list[can.Message]:
        """Waits until the driver has sent at least `n` frames in all.

        Returns:
            A copy of `received`.

        Raises:
            TimeoutError: fewer than `n` within `timeout` seconds (the message shows them).
        """
        with self._cond:
            if self._cond.wait_for(lambda: len(self.received) >= n, timeout):
                return list(self.received)
            got = list(self.received)
        msg = f"SimCanPeer on {self.channel}: {len(got)} of {n} frames received within {timeout} s: {got[-5:]}"
        raise TimeoutError(msg)

    # --- the thread -------------------------------------------------------------------

    def start(self) -> None:
        """Starts the receiving thread (attach does)."""
        self._thread.start()

    def _emit(self, fn: Callable[..., Any], arg: Any) -> None:
        try:
            out = fn(arg)
            if out is None:
                return
            for m in [out] if isinstance(out, self._can.Message) else out:
                self.send_message(m)
        except Exception as e:  # a model's bug must not stop the simulated node
            if self._stop.is_set():
                return
            self.errors.append(e)
            import logging

            what = getattr(fn, "__name__", fn)
            logging.getLogger(__name__).exception("simulated CAN peer %s: %s failed", self.channel, what)

    def _run(self) -> None:
        next_tick = time.monotonic()
        while not self._stop.is_set():
            try:
                msg = self._bus.recv(timeout=TICK)
            except self._can.CanError:
                return  # shut down
            if msg is not None:
                with self._cond:
                    self.received.append(msg)
                    self._unread.append(msg)
                    self._cond.notify_all()
                respond = self.respond
                if respond is not None:
                    self._emit(respond, msg)
            now = time.monotonic()
            if now >= next_tick and self.model is not None:
                next_tick = now + TICK
                self._emit(self.model.tick, now)

    def close(self) -> None:
        """Stops the thread and leaves the channel. Closing twice is harmless."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)
        self._bus.shutdown()

    def __repr__(self) -> str:
        return f"<SimCanPeer {self.channel} model={type(self.model).__name__}, {len(self.received)} frames received>"


def attach(
    env: SimEnv,
    name: str,
    driver: str,
    settings: Mapping[str, Any],
    model: str | None,
    options: Mapping[str, Any],
    source: str = "<dict>",
) -> tuple[dict[str, Any], SimCanPeer]:
    """Builds the simulated bus for CAN adapter `name`: a virtual channel and its peer.

    Args:
        env: the simulation environment (its close() stops the peer).
        name: the adapter's name.
        driver: the adapter's driver name ("python-can").
        settings: the validated settings the driver would be opened with.
        model: the `simulator` value ("peer", "echo" or "module:Class"), or None for "peer".
        options: the `[adapters.NAME.simulation]` table: the model's keyword arguments.
        source: the device file, for messages.

    Returns:
        The settings with interface "virtual" and the new channel (fd, bitrates, filters
        and receive_own_messages kept), and the SimCanPeer.

    Raises:
        DeviceFileError: an unknown model, a class that is not a CanDevice, or a bad option.
        DriverUnavailableError: python-can is not installed.
    """
    key = f"adapters.{name}"
    spec = model if model is not None else DEFAULT_MODEL
    cls = load_model_class(spec, BUILTINS, "can", f"{key}.simulator", source)
    if not (isinstance(cls, type) and issubclass(cls, CanDevice)):
        msg = f"{source}: invalid value for '{key}.simulator': {spec!r} is not a subclass of lgembed.edge.sim.can.CanDevice"
        raise DeviceFileError(msg, source, f"{key}.simulator")
    channel = f"lgembed-sim-{name}-{uuid.uuid4().hex[:12]}"
    peer = SimCanPeer(channel, name)
    env.on_close(peer.close)
    device = build_model(cls, (peer,), options, label=repr(spec), kind="can", prefix=f"{key}.simulation", source=source)
    peer.model = device
    peer.respond = device.on_frame
    peer.start()
    out = dict(settings)
    out["interface"] = "virtual"
    out["channel"] = channel
    return out, peer
