"""Answers python-periphery's ioctl calls from simulated chips, so its own code runs.

Why: a board's character-device GPIO and I2C drivers talk to the kernel only through
`fcntl.ioctl` on a file descriptor (periphery builds the ctypes structures, we answer
them). This machine's kernel has no GPIO or I2C (no gpio-sim, no i2c-stub), so the
simulators stand in for the kernel at exactly that call: everything above it is
periphery's real marshalling, which is what a board runs.

Strategy: periphery's modules call `fcntl.ioctl(fd, request, arg, ...)` through their
module global `fcntl`. `install(module)` replaces that global in one periphery module
with `PROXY`, which forwards every attribute to the real `fcntl` and routes `ioctl`
by the file the descriptor refers to: a descriptor whose (st_dev, st_ino) a simulator
registered goes to that simulator, every other one to the real `fcntl.ioctl`. Real
devices opened in the same process are therefore untouched. The simulated device
nodes are regular files in a temporary directory (periphery only `os.open`s them) and
line descriptors are pipes, whose read end carries edge events as the kernel's would.
"""

from __future__ import annotations

import fcntl as _fcntl
import os
import threading
from typing import Any, Protocol

__all__ = ("PROXY", "IoctlHandler", "install")


class IoctlHandler(Protocol):
    """A simulated kernel device: answers ioctls on the descriptors registered for it."""

    def ioctl(self, fd: int, request: int, arg: Any) -> int: ...


class _FcntlProxy:
    """Stands in for the `fcntl` module inside periphery's modules (see module docstring)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._handlers: dict[tuple[int, int], IoctlHandler] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(_fcntl, name)

    @staticmethod
    def _key(target: int | str | os.PathLike) -> tuple[int, int]:
        st = os.fstat(target) if isinstance(target, int) else os.stat(target)
        return (st.st_dev, st.st_ino)

    def register(self, target: int | str | os.PathLike, handler: IoctlHandler) -> tuple[int, int]:
        """Routes ioctls on the file `target` (a path or an open descriptor) to `handler`.

        Returns:
            The key to pass to `unregister`.
        """
        key = self._key(target)
        with self._lock:
            self._handlers[key] = handler
        return key

    def unregister(self, key: tuple[int, int]) -> None:
        with self._lock:
            self._handlers.pop(key, None)

    def ioctl(self, fd: Any, request: int, arg: Any = 0, mutate_flag: bool = True) -> Any:
        handler = None
        if self._handlers:
            try:
                key = self._key(fd if isinstance(fd, int) else fd.fileno())
            except (OSError, AttributeError, TypeError):
                key = None
            if key is not None:
                with self._lock:
                    handler = self._handlers.get(key)
        if handler is None:
            return _fcntl.ioctl(fd, request, arg, mutate_flag)
        return handler.ioctl(fd if isinstance(fd, int) else fd.fileno(), request, arg)


PROXY = _FcntlProxy()
"""The one proxy: simulators register their device files and line descriptors here."""


def install(module: Any) -> None:
    """Makes `module` (a periphery module that imported `fcntl`) call ioctl through PROXY."""
    if getattr(module, "fcntl", None) is not PROXY:
        module.fcntl = PROXY
