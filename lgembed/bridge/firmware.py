"""The example firmware (firmware-bridge/examples/sensor_node) as a simulated MCU.

Why: the firmware's own C code, built for the host, is the truest peer the host side can
be tested against: the same lgb_link.c that runs on a Cortex-M answers here. Two builds
(`make -C firmware-bridge host-example`):

- `build/host/sensor_node PTY`: a process that opens a tty by path. `FirmwareProcess`
  starts it on a `PtyWire`'s `port_a`, so lgembed talks to it through a real pty pair
  (see `lgembed.bridge.wire` for why two ptys).
- `build/host/libsensor_node.so`: the same firmware as a library driven in-process
  through ctypes (python-can's virtual bus exists only inside one process).
  `CanFirmware` feeds it the CAN frames of a virtual bus channel and sends the frames it
  produces, from a thread.

Nothing here is needed on a board; tests, examples and benchmarks use it.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ("FIRMWARE_DIR", "CanFirmware", "FirmwareProcess", "build_host_example")

FIRMWARE_DIR = Path(__file__).resolve().parents[2] / "firmware-bridge"
"""The firmware-bridge/ directory of a source checkout."""


def build_host_example(root: Path | str = FIRMWARE_DIR, timeout: float = 300.0) -> Path:
    """Builds the example firmware for the host (`make host-example`) and returns its
    build directory (holding `sensor_node` and `libsensor_node.so`).

    Raises:
        FileNotFoundError: no firmware-bridge/ directory, or `make` / a C compiler missing.
        RuntimeError: the build failed (the message holds make's output).
    """
    root = Path(root)
    if not (root / "Makefile").exists():
        msg = f"Building the example firmware: {root}/Makefile does not exist (a source checkout is needed)"
        raise FileNotFoundError(msg)
    if shutil.which("make") is None or (shutil.which("cc") is None and shutil.which("gcc") is None):
        msg = "Building the example firmware: 'make' and a C compiler are needed. Fix: apt-get install build-essential"
        raise FileNotFoundError(msg)
    proc = subprocess.run(["make", "-C", str(root), "host-example"], capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        msg = f"Building the example firmware: make host-example failed ({proc.returncode}):\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
        raise RuntimeError(msg)
    return root / "build" / "host"


class FirmwareProcess:
    """The example firmware's host build, running on a tty.

    Args:
        port: the tty it opens (a PtyWire's `port_a`).
        args: extra command-line arguments (see the firmware's README).
        binary: the program (default: firmware-bridge/build/host/sensor_node).
        env: extra environment variables.

    Attributes:
        proc: the subprocess.Popen.
    """

    def __init__(self, port: str, args: Sequence[str] = (), *, binary: str | os.PathLike | None = None, env: dict[str, str] | None = None) -> None:
        self.port = port
        self.args = list(args)
        self.binary = str(binary or FIRMWARE_DIR / "build" / "host" / "sensor_node")
        self.env = {**os.environ, **(env or {})}
        self.proc: subprocess.Popen | None = None
        self.start()

    def start(self) -> None:
        """Starts (or restarts) the process."""
        self.stop()
        self.proc = subprocess.Popen(
            [self.binary, self.port, *self.args], env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
        )

    def stop(self, timeout: float = 3.0) -> int | None:
        """Stops it with SIGTERM (SIGKILL after `timeout`). Returns its exit status."""
        p, self.proc = self.proc, None
        if p is None:
            return None
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(timeout)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait(timeout)
        out = p.stdout.read() if p.stdout else b""
        if p.stdout:
            p.stdout.close()
        self.output = out.decode(errors="replace")
        return p.returncode

    def kill(self) -> None:
        """Kills it at once (a crash or a power cut)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(3)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def close(self) -> None:
        self.stop()

    def __enter__(self) -> FirmwareProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class CanFirmware:
    """The example firmware as a ctypes library on a python-can virtual bus channel.

    A thread moves CAN frames: frames on the channel go to `sn_feed_can`, frames the
    firmware produces (`sn_poll_can`) go on the channel, and `sn_tick(now_ms)` runs its
    timers every millisecond.

    Args:
        channel: the python-can virtual channel (the host's CAN adapter uses the same).
        library: the .so (default: firmware-bridge/build/host/libsensor_node.so).

    Attributes:
        lib: the ctypes CDLL.
    """

    def __init__(self, channel: str, *, library: str | os.PathLike | None = None) -> None:
        import can

        from lgembed.bridge import _sn

        self.lib = _sn.load(str(library or FIRMWARE_DIR / "build" / "host" / "libsensor_node.so"))
        self.node = _sn.Node(self.lib)
        self.bus = can.Bus(interface="virtual", channel=channel, receive_own_messages=False)
        self._can = can
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._t0 = time.monotonic()
        self.frames_in = 0
        self.frames_out = 0
        self._thread = threading.Thread(target=self._run, name="lgembed-canfw", daemon=True)
        self._thread.start()

    def _now_ms(self) -> int:
        return int((time.monotonic() - self._t0) * 1000) & 0xFFFFFFFF

    def _flush(self) -> None:
        for ident, data, ext in self.node.poll_frames():
            self.bus.send(self._can.Message(arbitration_id=ident, data=data, is_extended_id=ext))
            self.frames_out += 1

    def _run(self) -> None:
        while not self._stop.is_set():
            msg = self.bus.recv(0.001)
            with self._lock:
                if msg is not None and not msg.is_error_frame:
                    self.node.feed(msg.arbitration_id, bytes(msg.data), bool(msg.is_extended_id))
                    self.frames_in += 1
                self.node.tick(self._now_ms())
                self._flush()

    def call(self, name: str, *args: Any) -> Any:
        """Calls a function of the firmware's C API (`sn_<name>`) under the thread's lock."""
        with self._lock:
            out = getattr(self.node, name)(*args)
            self._flush()
            return out

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2.0)
        self.bus.shutdown()
        self.node.close()

    def __enter__(self) -> CanFirmware:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
