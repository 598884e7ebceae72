"""Simulated ADC channels: a plain-file IIO tree (`/sys/bus/iio/devices`) the real driver reads.

Why: `lgembed.edge.adc.IioADC` only reads files, so a tree of plain files lets its code
run unchanged; `SimADC` turns a voltage into the raw count a real converter would
report through its scale, offset and resolution.

The tree: `env.path("sys/bus/iio/devices")/iio:deviceN/` with `name` ("lgembed-sim"),
and per simulated channel `in_voltageM_raw`, `in_voltageM_scale` and, when the offset
is not 0, `in_voltageM_offset`. A new count replaces `in_voltageM_raw` atomically
(the driver opens it for every read, as each read of a real raw file is a conversion).
One device per device number per environment (`env.shared[("iio", N)]`); adapters on
the same channel share its `SimADC`.

Device-file options (`[adapters.NAME.simulation]`):

    name    type   default      meaning
    volts   float  0.0          the initial input voltage
    scale   float  0.805664062  millivolts per count (3300 mV / 4096: 12 bits at 3.3 V)
    offset  float  0.0          counts the kernel adds to raw before scaling
    bits    int    12           resolution: raw is clamped to 0 .. 2**bits - 1

`simulator` may name "adc" (the default) or a "module:Class" subclass of `SimADC`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lgembed.edge._base import int_range
from lgembed.edge.errors import DeviceFileError
from lgembed.edge.sim import SimEnv, build_model, load_model_class

__all__ = ("SimADC", "attach")


def _finite(v: Any) -> str | None:
    return None if math.isfinite(v) else "a finite number"


def _positive(v: Any) -> str | None:
    return None if math.isfinite(v) and v > 0 else "a number above 0 (millivolts per count)"


class SimADC:
    """One simulated ADC channel.

    Args:
        volts: the initial input voltage.
        scale: millivolts per count (written to `in_voltageM_scale`).
        offset: counts added to raw before scaling (written to `in_voltageM_offset` if not 0).
        bits: the resolution; raw counts run from 0 to 2**bits - 1.

    Raises:
        ValueError: `scale` is not above 0, or `bits` is not 1..32.

    Attributes:
        scale, offset, bits: as given.
        path: the raw file (None until attached).
    """

    OPTIONS: dict[str, tuple[type, Any]] = {
        "volts": (float, _finite),
        "scale": (float, _positive),
        "offset": (float, _finite),
        "bits": (int, int_range(1, 32)),
    }
    """Options the device file may give: name -> (type, check), used by `attach`."""

    def __init__(self, volts: float = 0.0, scale: float = 0.805664062, offset: float = 0.0, bits: int = 12) -> None:
        if not (math.isfinite(scale) and scale > 0):
            msg = f"SimADC: 'scale' must be above 0 millivolts per count (got {scale!r})"
            raise ValueError(msg)
        if not 1 <= bits <= 32:
            msg = f"SimADC: 'bits' must be from 1 to 32 (got {bits!r})"
            raise ValueError(msg)
        self.scale = float(scale)
        self.offset = float(offset)
        self.bits = int(bits)
        self.path: Path | None = None
        self._raw = self._count(volts)

    def _count(self, volts: float) -> int:
        raw = round(volts * 1000.0 / self.scale - self.offset)
        return max(0, min((1 << self.bits) - 1, raw))

    def _bind(self, path: Path) -> None:
        """Writes the channel's files at `path` (the raw file) and its siblings."""
        self.path = path
        prefix = path.name[: -len("_raw")]
        (path.parent / f"{prefix}_scale").write_text(f"{self.scale:.9f}\n")
        if self.offset:
            (path.parent / f"{prefix}_offset").write_text(f"{self.offset:.9g}\n")
        self._write(self._raw)

    def _write(self, raw: int) -> None:
        self._raw = raw
        if self.path is None:
            return
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(f"{raw}\n")
        os.replace(tmp, self.path)

    @property
    def raw(self) -> int:
        """The count the driver reads. Assigning it writes the raw file.

        Raises:
            ValueError: (on assignment) not an integer from 0 to 2**bits - 1.
        """
        return self._raw

    @raw.setter
    def raw(self, value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << self.bits:
            msg = f"SimADC.raw: must be an integer from 0 to {(1 << self.bits) - 1} (got {value!r})"
            raise ValueError(msg)
        self._write(value)

    @property
    def volts(self) -> float:
        """The voltage the current count stands for: (raw + offset) * scale / 1000.
        Assigning a voltage writes raw = round(volts * 1000 / scale - offset), clamped
        to the converter's range (as a real one saturates)."""
        return (self._raw + self.offset) * self.scale / 1000.0

    @volts.setter
    def volts(self, value: float) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            msg = f"SimADC.volts: must be a finite number (got {value!r})"
            raise ValueError(msg)
        self._write(self._count(value))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.path} raw={self._raw}>"


_BUILTINS = {"adc": "lgembed.edge.sim.adc:SimADC"}


def attach(
    env: SimEnv,
    name: str,
    driver: str,
    settings: dict[str, Any],
    model: str | None,
    options: Mapping[str, Any],
    source: str = "<dict>",
) -> tuple[dict[str, Any], SimADC]:
    """Simulates ADC adapter `name`: a voltage channel in a plain-file IIO tree.

    Args:
        env: the simulation environment.
        name: the adapter's name.
        driver: "iio".
        settings: the adapter's validated settings.
        model: the `simulator` key: None or "adc" for `SimADC`, or "module:Class".
        options: the `[adapters.NAME.simulation]` table (`volts`, `scale`, `offset`, `bits`).
        source: the device file, for messages.

    Returns:
        The settings with `sysfs_root` re-pointed at the tree, and the channel's `SimADC`.

    Raises:
        DeviceFileError: an unknown driver, simulator or option, or a bad option value.
    """
    if driver != "iio":
        msg = f"{source}: invalid value for 'adapters.{name}.driver': {driver!r}; the adc simulator knows 'iio'"
        raise DeviceFileError(msg, source, f"adapters.{name}.driver")
    root = env.path("sys", "bus", "iio", "devices")
    root.mkdir(exist_ok=True)
    number, channel = settings["device"], settings["channel"]
    channels: dict[int, SimADC] | None = env.shared.get(("iio", number))
    directory = root / f"iio:device{number}"
    if channels is None:
        directory.mkdir(exist_ok=True)
        (directory / "name").write_text("lgembed-sim\n")
        channels = env.shared[("iio", number)] = {}
    new_settings = {**settings, "sysfs_root": str(root)}
    if channel in channels:
        if model is not None or options:
            key = f"adapters.{name}.simulation"
            msg = (
                f"{source}: invalid '{key}': iio:device{number} channel {channel} "
                "is already simulated for another adapter"
            )
            raise DeviceFileError(msg, source, key)
        return new_settings, channels[channel]
    key = f"adapters.{name}"
    cls = SimADC if model is None else load_model_class(model, _BUILTINS, "adc", f"{key}.simulator", source)
    sim = build_model(cls, (), options, label=cls.__name__, kind="adc", prefix=f"{key}.simulation", source=source)
    sim._bind(directory / f"in_voltage{channel}_raw")
    channels[channel] = sim
    return new_settings, sim
