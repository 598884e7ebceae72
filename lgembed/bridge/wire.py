"""A simulated serial cable: two pseudo-terminals joined by a thread that can slow the
bytes to a baud rate, damage them (drop, duplicate, corrupt, delay), and be unplugged.

Why: the firmware's host build opens a tty by path, and so does pyserial, so both need a
pty *slave*; a pty's master has no path. One pty per end, and a thread copying between
the two masters, gives each side a real tty (termios, select, partial reads) and puts
the wire in between under test control, where a fault injector belongs:

    firmware --- slave A | master A <-- PtyWire thread --> master B | slave B --- lgembed
                                      (pacing, faults)

A pty's termios speed does not throttle it (bytes move as fast as the kernel copies
them), so `rate` emulates a baud rate by releasing bytes at `rate` bytes per second:
11520 B/s is 115200 baud at 10 bits per byte (8N1).

`link` (optional) is a path made a symlink to slave B, like /dev/serial/by-id/...:
`unplug()` closes pty B (lgembed's reads fail) and removes the link; `replug()` opens a
new pty B and points the link at it, so a client reopening the link path finds it.
"""

from __future__ import annotations

import os
import random
import select
import threading
import time
import tty
from collections import deque
from dataclasses import dataclass, field

__all__ = ("BAUD_115200", "FaultInjector", "PtyWire")

BAUD_115200 = 11520
"""Bytes per second of a 115200-baud 8N1 line (10 bits per byte)."""

_CHUNK = 4096
_PIECE = 16
# bytes released together when pacing (1.4 ms at 11520 B/s)


@dataclass
class FaultInjector:
    """Seeded damage to a byte stream, per byte.

    Args:
        seed: the random seed (the same seed damages the same bytes the same way).
        drop: probability a byte is lost.
        duplicate: probability a byte is sent twice.
        corrupt: probability a byte gets one random bit flipped.
        delay: probability a pause is inserted before a byte.
        delay_max: the longest pause, in seconds.

    Attributes:
        counts: what was done so far: "bytes", "dropped", "duplicated", "corrupted", "delayed".
    """

    seed: int = 0
    drop: float = 0.0
    duplicate: float = 0.0
    corrupt: float = 0.0
    delay: float = 0.0
    delay_max: float = 0.02
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(("bytes", "dropped", "duplicated", "corrupted", "delayed"), 0))

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        self.enabled = True

    def apply(self, data: bytes) -> list[tuple[float, bytes]]:
        """The damaged bytes as (pause before, bytes) pieces."""
        if not self.enabled:
            return [(0.0, data)]
        rng = self._rng
        out: list[tuple[float, bytes]] = []
        cur = bytearray()
        c = self.counts
        for b in data:
            c["bytes"] += 1
            if self.delay and rng.random() < self.delay:
                c["delayed"] += 1
                if cur:
                    out.append((0.0, bytes(cur)))
                    cur = bytearray()
                out.append((rng.uniform(0.0, self.delay_max), b""))
            if self.drop and rng.random() < self.drop:
                c["dropped"] += 1
                continue
            if self.corrupt and rng.random() < self.corrupt:
                c["corrupted"] += 1
                b ^= 1 << rng.randrange(8)
            cur.append(b)
            if self.duplicate and rng.random() < self.duplicate:
                c["duplicated"] += 1
                cur.append(b)
        if cur:
            out.append((0.0, bytes(cur)))
        return out


def _open_pty() -> tuple[int, int, str]:
    master, slave = os.openpty()
    try:
        tty.setraw(master)
        tty.setraw(slave)
        os.set_blocking(master, False)
        return master, slave, os.ttyname(slave)
    except BaseException:
        os.close(master)
        os.close(slave)
        raise


class _Direction:
    """Bytes waiting to leave one master: (release time, bytes), in order."""

    def __init__(self, faults: FaultInjector | None) -> None:
        self.faults = faults
        self.queue: deque[tuple[float, bytes]] = deque()
        self.pending = bytearray()  # released but not yet taken by the pty
        self.free_at = 0.0  # when the paced line is free again
        self.bytes = 0


class PtyWire:
    """Two ptys joined by a copying thread (see the module docstring).

    Args:
        rate: bytes per second in each direction (None: as fast as the kernel goes).
        faults_ab, faults_ba: FaultInjectors for A->B (firmware to host) and B->A.
        link: a path to make a symlink to slave B (None: use `port_b` directly).

    Attributes:
        port_a: the firmware's tty (slave A).
        port_b: lgembed's tty: `link` if given, else slave B.
    """

    def __init__(self, rate: float | None = None, *, faults_ab: FaultInjector | None = None, faults_ba: FaultInjector | None = None, link: str | None = None) -> None:
        self.rate = rate
        self.link = link
        self._ab = _Direction(faults_ab)
        self._ba = _Direction(faults_ba)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ma, self._sa, self.port_a = _open_pty()
        self._mb: int | None = None
        self._sb: int | None = None
        self._path_b = ""
        self._plug()
        self._thread = threading.Thread(target=self._run, name="lgembed-ptywire", daemon=True)
        self._thread.start()

    @property
    def port_b(self) -> str:
        return self.link or self._path_b

    @property
    def faults_ab(self) -> FaultInjector | None:
        """The FaultInjector of the firmware -> lgembed direction (settable while running)."""
        return self._ab.faults

    @faults_ab.setter
    def faults_ab(self, f: FaultInjector | None) -> None:
        self._ab.faults = f

    @property
    def faults_ba(self) -> FaultInjector | None:
        """The FaultInjector of the lgembed -> firmware direction (settable while running)."""
        return self._ba.faults

    @faults_ba.setter
    def faults_ba(self, f: FaultInjector | None) -> None:
        self._ba.faults = f

    @property
    def bytes_ab(self) -> int:
        """Bytes delivered from A to B."""
        return self._ab.bytes

    @property
    def bytes_ba(self) -> int:
        """Bytes delivered from B to A."""
        return self._ba.bytes

    def _plug(self) -> None:
        self._mb, self._sb, self._path_b = _open_pty()
        if self.link:
            tmp = self.link + ".tmp"
            if os.path.lexists(tmp):
                os.unlink(tmp)
            os.symlink(self._path_b, tmp)
            os.replace(tmp, self.link)

    def unplug(self) -> None:
        """Cuts the cable on lgembed's side: pty B closes (its reader gets EIO) and the
        link disappears. Bytes in flight are lost."""
        with self._lock:
            if self._mb is None:
                return
            for fd in (self._mb, self._sb):
                if fd is not None:
                    os.close(fd)
            self._mb = self._sb = None
            self._ab.queue.clear()
            self._ab.pending.clear()
            self._ba.queue.clear()
            self._ba.pending.clear()
            if self.link and os.path.lexists(self.link):
                os.unlink(self.link)

    def replug(self) -> None:
        """Plugs a new pty B in (at `link`)."""
        with self._lock:
            if self._mb is None:
                self._plug()

    def inject(self, data: bytes, to: str = "b") -> None:
        """Puts `data` on the line towards end `to` ("a": the firmware, "b": lgembed),
        after what is already in flight (line noise, a babbling device)."""
        if to not in ("a", "b"):
            msg = f"PtyWire.inject: 'to' must be 'a' or 'b' (got {to!r})"
            raise ValueError(msg)
        with self._lock:
            d = self._ab if to == "b" else self._ba
            t = max(time.monotonic(), d.free_at)
            d.queue.append((t, bytes(data)))
            d.free_at = t

    def _schedule(self, d: _Direction, data: bytes, now: float) -> None:
        pieces = d.faults.apply(data) if d.faults is not None else [(0.0, data)]
        t = max(now, d.free_at)
        for pause, chunk in pieces:
            t += pause
            if not chunk:
                continue
            if self.rate:
                for i in range(0, len(chunk), _PIECE):
                    piece = chunk[i : i + _PIECE]
                    t += len(piece) / self.rate
                    d.queue.append((t, piece))
            else:
                d.queue.append((t, chunk))
        d.free_at = t

    def _release(self, d: _Direction, fd: int | None, now: float) -> None:
        while d.queue and d.queue[0][0] <= now:
            d.pending += d.queue.popleft()[1]
        if d.pending and fd is not None:
            try:
                n = os.write(fd, d.pending)
            except BlockingIOError:
                return
            except OSError:
                d.pending.clear()
                return
            d.bytes += n
            del d.pending[:n]

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                ma, mb = self._ma, self._mb
                now = time.monotonic()
                waits = [d.queue[0][0] - now for d in (self._ab, self._ba) if d.queue]
                wlist = [fd for fd, d in ((mb, self._ab), (ma, self._ba)) if fd is not None and d.pending]
            timeout = min([0.01] + [max(0.0, w) for w in waits])
            rlist = [fd for fd in (ma, mb) if fd is not None]
            try:
                r, _, _ = select.select(rlist, wlist, [], timeout)
            except (OSError, ValueError):
                if self._stop.is_set():
                    return
                continue  # pty B was unplugged under us
            with self._lock:
                now = time.monotonic()
                for fd in r:
                    if fd not in (self._ma, self._mb):
                        continue
                    try:
                        data = os.read(fd, _CHUNK)
                    except (BlockingIOError, InterruptedError):
                        continue
                    except OSError:
                        data = b""  # EIO: nobody has the slave open (it is kept open here)
                    if data:
                        self._schedule(self._ab if fd == self._ma else self._ba, data, now)
                self._release(self._ab, self._mb, now)
                self._release(self._ba, self._ma, now)

    def close(self) -> None:
        """Stops the thread and closes both ptys (and removes the link)."""
        self._stop.set()
        self._thread.join(timeout=2.0)
        with self._lock:
            for fd in (self._ma, self._sa, self._mb, self._sb):
                if fd is not None:
                    try:
                        os.close(fd)
                    except OSError:
                        pass
            self._mb = self._sb = None
            if self.link and os.path.lexists(self.link):
                os.unlink(self.link)

    def __enter__(self) -> PtyWire:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
