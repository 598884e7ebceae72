"""Simulated hardware with the real interfaces, so a whole device runs on a laptop.

Why: docs/DESIGN.md §5 wants every driver testable on a host that has no GPIO, I2C or CAN
in its kernel. A simulator never replaces a driver: it replaces what is under it (a
sysfs tree in a temporary directory, a chip answering periphery's ioctls, the far end
of a pseudo-terminal, a peer on python-can's virtual bus), so the driver code a board
runs is the code the tests run.

Each kind has a module here with one function,

    attach(env, name, driver, settings, model, options) -> (settings, simulation)

which builds the simulated device for adapter `name` and returns the settings to open
the real driver with (the same settings, re-pointed at the simulated device) and the
simulation object tests and worlds use (`device.simulation(name)`). `model` is the
adapter's `simulator` key (a built-in name or "module:Class"), `options` its
`[adapters.NAME.simulation]` table.

Every kind builds its model with `build_model`, which checks the options against the
model class (its `OPTIONS` table, else its constructor's signature) and turns a bad
option, including an `OptionError` the constructor raises, into a DeviceFileError
naming `adapters.NAME.simulation.KEY`.
"""

from __future__ import annotations

import importlib
import inspect
import shutil
import tempfile
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from lgembed.edge.errors import ArgumentError, DeviceFileError

__all__ = ("SIM_MODULES", "OptionError", "SimEnv", "build_model", "load_model_class")

SIM_MODULES = {
    "gpio": "lgembed.edge.sim.gpio",
    "pwm": "lgembed.edge.sim.pwm",
    "adc": "lgembed.edge.sim.adc",
    "uart": "lgembed.edge.sim.uart",
    "i2c": "lgembed.edge.sim.i2c",
    "can": "lgembed.edge.sim.can",
}
# the simulator module of each adapter kind, imported when an adapter of that kind is simulated


class SimEnv:
    """The simulated side of one device: a temporary directory, shared buses, cleanup.

    Attributes:
        root: a private temporary directory for fake sysfs trees and device nodes.
        shared: per-kind shared state (e.g. one simulated I2C bus per devpath), keyed by
            the kind module's choice.
        world: the linked world model, if the device file has a `[world]` table.
    """

    def __init__(self) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="lgembed-sim-"))
        self.shared: dict[Any, Any] = {}
        self.world: Any = None
        self._cleanup: list[Callable[[], None]] = []
        self._lock = threading.Lock()
        self.closed = False

    def path(self, *parts: str) -> Path:
        """A path under `root`, with its parent directories made."""
        p = self.root.joinpath(*parts)
        p.parent.mkdir(parents=True, exist_ok=True)
        return p

    def on_close(self, fn: Callable[[], None]) -> None:
        """Runs `fn` when the environment closes (last registered, first run)."""
        with self._lock:
            self._cleanup.append(fn)

    def close(self) -> None:
        """Stops every simulator thread and removes the temporary directory."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
            fns, self._cleanup = self._cleanup[::-1], []
        for fn in fns:
            try:
                fn()
            except Exception:  # noqa: BLE001,S110 - a failing cleanup must not stop the others
                pass
        shutil.rmtree(self.root, ignore_errors=True)


def load_model_class(spec: str, builtins: dict[str, str], kind: str, key: str, source: str = "<dict>") -> type:
    """The class a `simulator` value names: a built-in name or "module:Class".

    Args:
        spec: the value, e.g. "tmp102" or "mypkg.sims:Pump".
        builtins: built-in names -> "module:Class".
        kind: the adapter kind, for messages.
        key: the dotted key, for messages.
        source: the device file, for messages.

    Raises:
        DeviceFileError: an unknown name, or a module or class that cannot be imported.
    """
    target = builtins.get(spec, spec)
    if ":" not in target:
        allowed = ", ".join(repr(n) for n in sorted(builtins))
        msg = f"{source}: invalid value for '{key}': {spec!r}; allowed: {allowed}, or 'module:Class' for a custom {kind} simulator"
        raise DeviceFileError(msg, source, key)
    mod_name, _, cls_name = target.partition(":")
    try:
        obj: Any = importlib.import_module(mod_name)
        for part in cls_name.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as e:
        msg = f"{source}: invalid value for '{key}': {spec!r}; the {kind} simulator could not be loaded ({e})"
        raise DeviceFileError(msg, source, key) from e
    return obj


class OptionError(ArgumentError):
    """A simulator model's option (a constructor keyword or a settable attribute) has a bad value.

    A model's constructor raises it for a bad `[adapters.NAME.simulation]` value;
    `build_model` turns it into a DeviceFileError naming `adapters.NAME.simulation.KEY`.

    Args:
        key: the option's name (e.g. "interval").
        value: the value given.
        allowed: what is allowed, e.g. "a number above 0".

    Attributes:
        key, value, allowed: as given (`option` is another name for `key`).
    """

    def __init__(self, key: str, value: Any, allowed: str) -> None:
        super().__init__(f"'{key}' must be {allowed} (got {value!r})")
        self.key = key
        self.value = value
        self.allowed = allowed

    @property
    def option(self) -> str:
        """The option's name (the same as `key`)."""
        return self.key


_TYPE_NAMES = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}


def build_model(
    cls: Any,
    args: tuple,
    options: Mapping[str, Any],
    *,
    label: str,
    kind: str,
    prefix: str,
    source: str,
    allowed_label: str = "allowed",
) -> Any:
    """`cls(*args, **options)`: an adapter's simulation model, with its options checked.

    A class that defines an `OPTIONS` mapping itself (name -> (type, check), `check`
    returning None or what is allowed) has each option checked against it (an int is
    accepted, and converted, where the type is float). Any other class has the option
    names checked against its constructor's signature after `args`: an option it has
    no keyword for, or a keyword without a default that `options` lacks, is an error
    (a signature with **kwargs, or none, is not checked).

    Args:
        cls: the model class (from `load_model_class`, or the kind's default).
        args: positional arguments passed before the options (e.g. the CAN peer).
        options: the `[adapters.NAME.simulation]` table.
        label: how messages name the simulator: the class name ("SimLine") or the
            quoted `simulator` value ("'tmp102'").
        kind: the adapter kind, for messages.
        prefix: the options' dotted key, "adapters.NAME.simulation".
        source: the device file, for messages.
        allowed_label: the words before the list of known options in the "unknown
            option" message ("allowed", or "allowed options").

    Returns:
        The model.

    Raises:
        DeviceFileError: an unknown or missing option, a value outside the `OPTIONS`
            table, an `OptionError` from the constructor (each keyed
            `PREFIX.KEY`), or another TypeError/ValueError from it (keyed `PREFIX`).
    """
    where = f"{source}: " if source else ""
    opts = dict(options)
    table = cls.__dict__.get("OPTIONS") if isinstance(cls, type) else None
    # only the class's own table: a subclass with its own constructor is checked by its signature
    if isinstance(table, Mapping):
        for k, v in options.items():
            if k not in table:
                raise _unknown(k, sorted(table), where, label, kind, prefix, source, allowed_label)
            typ, check = table[k]
            if typ is float and isinstance(v, int) and not isinstance(v, bool):
                v = opts[k] = float(v)
            problem = None
            if not isinstance(v, typ) or (isinstance(v, bool) and typ is not bool):
                problem = _TYPE_NAMES.get(typ, typ.__name__)
            elif check is not None:
                problem = check(v)
            if problem is not None:
                raise _invalid(k, v, problem, where, prefix, source)
    else:
        try:
            params = list(inspect.signature(cls).parameters.values())[len(args) :]
        except (TypeError, ValueError):
            params = None
        if params is not None and not any(p.kind is p.VAR_KEYWORD for p in params):
            named = [p for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
            names = [p.name for p in named]
            for k in options:
                if k not in names:
                    raise _unknown(k, sorted(names), where, label, kind, prefix, source, allowed_label)
            for p in named:
                if p.default is p.empty and p.name not in options:
                    msg = f"{where}missing option '{prefix}.{p.name}': the {kind} simulator {label} needs it"
                    raise DeviceFileError(msg, source, f"{prefix}.{p.name}")
    try:
        return cls(*args, **opts)
    except OptionError as e:
        raise _invalid(e.key, e.value, e.allowed, where, prefix, source) from e
    except (TypeError, ValueError) as e:
        msg = f"{where}invalid '{prefix}' for the {kind} simulator {label}: {e}"
        raise DeviceFileError(msg, source, prefix) from e


def _unknown(
    key: str, allowed: list[str], where: str, label: str, kind: str, prefix: str, source: str, allowed_label: str
) -> DeviceFileError:
    """The error for an option the model does not take."""
    msg = (
        f"{where}unknown option '{prefix}.{key}' for the {kind} simulator {label}; "
        f"{allowed_label}: {', '.join(allowed) or 'none'}"
    )
    return DeviceFileError(msg, source, f"{prefix}.{key}")


def _invalid(key: str, value: Any, allowed: str, where: str, prefix: str, source: str) -> DeviceFileError:
    """The error for an option value outside what the model takes."""
    msg = f"{where}invalid value for '{prefix}.{key}': {value!r}; allowed: {allowed}"
    return DeviceFileError(msg, source, f"{prefix}.{key}")
