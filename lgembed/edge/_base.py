"""What every adapter shares: its settings schema, its name and device, open/close.

Why: the device file, the registry, the policy and `lgembed doctor` handle adapters of
every kind the same way. A driver class declares its settings once (`SETTINGS`), under
the underlying library's own argument names, and that one declaration validates a
device file, documents the driver and checks Python callers.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from lgembed.edge.errors import AdapterClosedError, DeviceFileError, DriverError, DriverUnavailableError, driver_error

__all__ = ("REQUIRED", "Adapter", "Setting", "check_settings", "int_range", "positive", "require_library")

REQUIRED: Any = object()
"""Marks a setting without a default."""


class Setting:
    """One driver setting: its name, accepted types, default and allowed values.

    Args:
        name: the key, as the underlying library names the argument.
        types: accepted Python types (TOML gives int, float, str, bool, list, dict).
        default: the value when absent, or REQUIRED.
        choices: the allowed values, if a closed set.
        check: a function returning None when the value is fine, else what is allowed
            (e.g. "an int from 0 to 127").
        doc: one line for the README and error messages.
    """

    __slots__ = ("check", "choices", "default", "doc", "name", "types")

    def __init__(
        self,
        name: str,
        types: type | tuple[type, ...],
        default: Any = REQUIRED,
        *,
        choices: tuple | None = None,
        check: Callable[[Any], str | None] | None = None,
        doc: str = "",
    ) -> None:
        self.name = name
        self.types = types if isinstance(types, tuple) else (types,)
        self.default = default
        self.choices = choices
        self.check = check
        self.doc = doc

    def allowed(self) -> str:
        if self.choices is not None:
            return "one of " + ", ".join(repr(c) for c in self.choices)
        return " or ".join(_TYPE_NAMES.get(t, t.__name__) for t in self.types)


_TYPE_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true or false", list: "a list", dict: "a table"}


def int_range(lo: int, hi: int) -> Callable[[Any], str | None]:
    """A `Setting.check` for an integer from lo to hi inclusive."""

    def check(v: Any) -> str | None:
        return None if lo <= v <= hi else f"an integer from {lo} to {hi}"

    return check


def positive(v: Any) -> str | None:
    """A `Setting.check` for a number above zero."""
    return None if v > 0 else "a number above 0"


def check_settings(
    cls: type[Adapter], settings: Mapping[str, Any], source: str = "<dict>", prefix: str = ""
) -> dict[str, Any]:
    """Validates `settings` against `cls.SETTINGS` and fills the defaults.

    Args:
        cls: the driver class.
        settings: the adapter's table without `kind`, `driver`, `simulator`, `simulation`.
        source: the device file's path, for messages.
        prefix: the dotted key of the adapter's table, e.g. "adapters.room".

    Returns:
        The settings with every default filled in.

    Raises:
        DeviceFileError: an unknown key, a missing required key, a wrong type, or a value
            outside what is allowed; the message names the file, the key, the value and
            what is allowed.
    """
    known = {s.name: s for s in cls.SETTINGS}
    where = f"{source}: " if source else ""
    for key in settings:
        if key not in known:
            allowed = ", ".join(sorted(known)) or "none"
            msg = (
                f"{where}unknown setting '{prefix}.{key}' for a {cls.kind} adapter "
                f"(driver '{cls.driver}'); allowed settings: {allowed}"
            )
            raise DeviceFileError(msg, source, f"{prefix}.{key}")
    out: dict[str, Any] = {}
    for s in cls.SETTINGS:
        key = f"{prefix}.{s.name}"
        if s.name not in settings:
            if s.default is REQUIRED:
                msg = f"{where}missing setting '{key}': a {cls.kind} adapter (driver '{cls.driver}') needs {s.allowed()}"
                msg += f" ({s.doc})" if s.doc else ""
                raise DeviceFileError(msg, source, key)
            out[s.name] = s.default
            continue
        v = settings[s.name]
        ok_type = isinstance(v, s.types) and not (isinstance(v, bool) and bool not in s.types)
        if not ok_type and float in s.types and isinstance(v, int) and not isinstance(v, bool):
            v, ok_type = float(v), True
        problem = None
        if not ok_type:
            problem = s.allowed()
        elif s.choices is not None and v not in s.choices:
            problem = s.allowed()
        elif s.check is not None:
            problem = s.check(v)
        if problem is not None:
            msg = f"{where}invalid value for '{key}': {v!r}; allowed: {problem}"
            raise DeviceFileError(msg, source, key)
        out[s.name] = v
    return out


class Adapter:
    """Base of every driver: a named, opened device of one kind.

    Subclasses set `kind`, `driver` and `SETTINGS`, open the device in `__init__` (after
    calling this one) and release it in `_close`. Methods that touch the device call
    `self._check_open(action)` first and turn library errors into DriverErrors with
    `self._fail(action, exc)`.

    Attributes:
        name: the adapter's name in the device file.
        settings: the validated settings it was opened with.
        device: the device path or channel, for messages.
        _node: the device node a fix in `_fail`'s messages names (the udev rule's
            target), when it is not `device` (e.g. the chip of "/dev/gpiochip0 line 17");
            None for `device`.
    """

    kind: ClassVar[str] = ""
    driver: ClassVar[str] = ""
    SETTINGS: ClassVar[tuple[Setting, ...]] = ()
    _node: str | None = None

    def __init__(self, name: str, settings: Mapping[str, Any], device: str) -> None:
        self.name = name
        self.settings = dict(settings)
        self.device = device
        self._closed = False
        self._lock = threading.RLock()
        # one call at a time per adapter: drivers are not thread-safe, tools run in workers

    @classmethod
    def from_settings(cls, name: str, settings: Mapping[str, Any], source: str = "<dict>", prefix: str = ""):
        """Validates `settings` (see `check_settings`) and opens the adapter.

        Raises:
            DeviceFileError: invalid settings.
            DriverUnavailableError: the driver's library is not installed.
            DriverError: the device could not be opened.
        """
        return cls(name, **check_settings(cls, settings, source, prefix or f"adapters.{name}"))

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Releases the device. Closing twice is harmless."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._close()

    def _close(self) -> None:
        """Releases the device (subclasses)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _check_open(self, action: str) -> None:
        if self._closed:
            msg = f"{action} on adapter '{self.name}' ({self.device}): the adapter is closed. Fix: open the device again."
            raise AdapterClosedError(msg)

    def _device(self, action: str) -> _DeviceCall:
        """`with self._device(action):` checks the adapter is open, holds its lock and
        turns an OSError (not already a DriverError) into this adapter's DriverError."""
        return _DeviceCall(self, action)

    def _fail(self, action: str, exc: BaseException) -> DriverError:
        return driver_error(action, self.kind, self.name, self.device, exc, node=self._node)

    def describe(self) -> dict[str, Any]:
        """Kind, driver, device and settings, for `lgembed doctor` and the registry's capabilities."""
        return {"name": self.name, "kind": self.kind, "driver": self.driver, "device": self.device, "settings": dict(self.settings)}

    def __repr__(self) -> str:
        state = " closed" if self._closed else ""
        return f"<{type(self).__name__} {self.name!r} {self.device}{state}>"


class _DeviceCall:
    """The context manager `Adapter._device` returns."""

    __slots__ = ("action", "adapter")

    def __init__(self, adapter: Adapter, action: str) -> None:
        self.adapter = adapter
        self.action = action

    def __enter__(self) -> None:
        self.adapter._check_open(self.action)
        self.adapter._lock.acquire()
        try:
            self.adapter._check_open(self.action)
        except BaseException:
            self.adapter._lock.release()
            raise

    def __exit__(self, typ: Any, exc: BaseException | None, tb: Any) -> None:
        self.adapter._lock.release()
        if isinstance(exc, OSError) and not isinstance(exc, DriverError):
            raise self.adapter._fail(self.action, exc) from exc


def require_library(module: str, kind: str, adapter: str, extra: str = "hardware") -> Any:
    """Imports a driver's library, or raises DriverUnavailableError naming the extra.

    Raises:
        DriverUnavailableError: the module is not installed.
    """
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as e:
        dist = {"serial": "pyserial", "can": "python-can", "periphery": "python-periphery"}.get(module.split(".")[0], module)
        msg = (
            f"Opening {kind} adapter '{adapter}': the driver needs the Python module '{module}' "
            f"(package {dist}), which is not installed. Fix: pip install 'lgembed[{extra}]'"
        )
        raise DriverUnavailableError(msg) from e
