"""The systemd side of sd_notify for the service tests: a bound SOCK_DGRAM unix socket
collecting the datagrams a service sends to NOTIFY_SOCKET (a real socket, as systemd's)."""

from __future__ import annotations

import socket
import time


class NotifySocket:
    """The systemd side: a bound SOCK_DGRAM unix socket collecting notify datagrams."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.messages: list[str] = []

    def _recv(self, timeout: float) -> str | None:
        self.sock.settimeout(max(timeout, 0.001))
        try:
            data = self.sock.recv(65536).decode()
        except TimeoutError:
            return None
        self.messages.append(data)
        return data

    def wait_for(self, field: str, timeout: float = 30.0) -> str:
        """The first datagram (from now) holding the line `field` (e.g. "READY=1")."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            msg = self._recv(deadline - time.monotonic())
            if msg is not None and any(line == field or line.startswith(field) for line in msg.split("\n")):
                return msg
        raise AssertionError(f"no {field!r} within {timeout} s; got {self.messages[-10:]}")

    def collect(self, seconds: float) -> list[str]:
        """Every datagram arriving in the next `seconds`."""
        out = []
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            msg = self._recv(deadline - time.monotonic())
            if msg is not None:
                out.append(msg)
        return out

    def close(self) -> None:
        self.sock.close()
