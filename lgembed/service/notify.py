"""systemd's notify protocol (sd_notify) and the watchdog interval, without a dependency.

Why: `Type=notify` units learn that the service is ready (READY=1), alive (WATCHDOG=1),
what it is doing (STATUS=...) and that it is stopping (STOPPING=1) from datagrams sent
to the unix socket named by $NOTIFY_SOCKET. The protocol is one `sendto`, so it is
written here rather than pulled in (`sdnotify` swallows every error and has not been
released since 2017). Outside systemd (no $NOTIFY_SOCKET) every call is a no-op.
A failing send is logged once per kind of error, never silently dropped and never
repeated every watchdog period.
"""

from __future__ import annotations

import logging
import os
import socket

__all__ = ("Notifier", "watchdog_interval")

log = logging.getLogger("lgembed.service")


class Notifier:
    """Sends sd_notify states to $NOTIFY_SOCKET (a path, or "@name" for the abstract namespace).

    Args:
        address: the socket address; None reads $NOTIFY_SOCKET (None or "" disables).
    """

    def __init__(self, address: str | None = None) -> None:
        addr = os.environ.get("NOTIFY_SOCKET") if address is None else address
        self.address = addr or None
        self._target = ("\0" + addr[1:]) if addr and addr[0] == "@" else addr
        self._sock: socket.socket | None = None
        self._logged: set[str] = set()

    def notify(self, *states: str) -> bool:
        """Sends `states` ("READY=1", "STATUS=...") as one datagram; True when it was sent.

        Errors (socket gone, permission) are logged once per kind and reported by False.
        """
        if not self._target:
            return False
        try:
            if self._sock is None:
                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
            self._sock.sendto("\n".join(states).encode(), self._target)
            return True
        except OSError as e:
            kind = f"{type(e).__name__}:{e.errno}"
            if kind not in self._logged:
                self._logged.add(kind)
                log.warning("Notifying systemd at %s: %s (further errors of this kind are not logged)", self.address, e)
            return False

    def close(self) -> None:
        """Closes the socket (a later `notify` opens it again)."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None


def watchdog_interval() -> float | None:
    """Seconds between WATCHDOG=1 pets (half of $WATCHDOG_USEC), or None when no watchdog
    is set for this process ($WATCHDOG_PID names another one, or a value is not a number)."""
    usec, pid = os.environ.get("WATCHDOG_USEC", ""), os.environ.get("WATCHDOG_PID", "")
    try:
        if not usec or int(usec) <= 0 or (pid and int(pid) != os.getpid()):
            return None
        return int(usec) / 2e6
    except ValueError:
        log.warning("Ignoring the systemd watchdog: WATCHDOG_USEC=%r WATCHDOG_PID=%r are not integers", usec, pid)
        return None
