"""Analog inputs through the kernel's Industrial I/O (IIO) sysfs interface.

Why: ADC chips (MCP3008, ADS1115, a SoC's own ADC) appear under
`/sys/bus/iio/devices/iio:deviceN/` once their kernel driver is loaded. Graph tools want
volts, not counts; this driver reads the raw count and converts it with the device's
own scale and offset, and says which file was missing when it cannot.

Conversion (the IIO ABI): volts = (raw + offset) * scale / 1000, where `raw` is
`in_voltageN_raw`, `offset` is `in_voltageN_offset` (or the shared `in_voltage_offset`,
or 0) and `scale` is `in_voltageN_scale` (or the shared `in_voltage_scale`), in
millivolts per count. A `scale` or `offset` setting overrides the file, for a driver
that exposes none or a divider in front of the input (fold its ratio into `scale`).
Files are re-read at every `read()`: some drivers change the scale with the range.

Settings (`[adapters.NAME]`, `kind = "adc"`, `driver = "iio"`):

    name        type   default                 meaning
    device      int    0                       the N of iio:deviceN (cat iio:device*/name)
    channel     int    (required)              the N of in_voltageN_raw
    sysfs_root  str    "/sys/bus/iio/devices"  the directory holding iio:deviceN/
    scale       float  (read from sysfs)       millivolts per count, above 0
    offset      float  (read from sysfs, or 0) counts added to raw before scaling

IIO device numbers follow probe order; check `iio:deviceN/name` after a kernel update.

Permissions on a board: `in_voltage*` files are usually readable by every user (mode
0444); where a driver makes them 0440 or 0400, a udev rule such as
`SUBSYSTEM=="iio", RUN+="/bin/chgrp -R iio /sys%p", RUN+="/bin/chmod -R g+r /sys%p"`
and membership of group `iio` grant access.

Simulator (`lgembed.edge.sim.adc`): a plain-file `iio:deviceN/` tree whose raw count
`SimADC` sets from a voltage (`sim.volts = 1.65`) through its scale, offset and bits.
"""

from __future__ import annotations

import errno
import math
from pathlib import Path
from typing import Any, ClassVar

from lgembed.edge._base import Adapter, Setting, check_settings
from lgembed.edge.errors import DeviceAbsentError, DriverError

__all__ = ("IioADC",)


def _non_negative_int(v: Any) -> str | None:
    return None if v >= 0 else "an integer from 0 up"


def _scale(v: Any) -> str | None:
    return None if v is None or (math.isfinite(v) and v > 0) else "a number above 0 (millivolts per count)"


def _offset(v: Any) -> str | None:
    return None if v is None or math.isfinite(v) else "a finite number (counts)"


class IioADC(Adapter):
    """One voltage channel of an IIO device, read through sysfs.

    Args:
        name: the adapter's name in the device file.
        **settings: `device`, `channel`, `sysfs_root`, `scale`, `offset` (see the module
            docstring; `scale`/`offset` None means "read from sysfs").

    Raises:
        DeviceFileError: a setting is unknown, missing or out of range.
        DeviceAbsentError: the device, its raw file or (without a `scale` setting) its
            scale file does not exist.
        DevicePermissionError: the process may not read the files.
        DriverError: a file holds something that is not a number, or another OS error.
    """

    kind: ClassVar[str] = "adc"
    driver: ClassVar[str] = "iio"
    SETTINGS: ClassVar[tuple[Setting, ...]] = (
        Setting("device", int, 0, check=_non_negative_int, doc="the N of iio:deviceN"),
        Setting("channel", int, check=_non_negative_int, doc="the N of in_voltageN_raw"),
        Setting("sysfs_root", str, "/sys/bus/iio/devices", doc="the directory holding iio:deviceN/"),
        Setting("scale", (float, type(None)), None, check=_scale, doc="millivolts per count (default: from sysfs)"),
        Setting("offset", (float, type(None)), None, check=_offset, doc="counts added to raw (default: sysfs, or 0)"),
    )

    def __init__(self, name: str, **settings: Any) -> None:
        settings = check_settings(type(self), settings, source="", prefix=f"adapters.{name}")
        root, device, channel = Path(settings["sysfs_root"]), settings["device"], settings["channel"]
        self.dir = root / f"iio:device{device}"
        self.channel: int = channel
        self._raw_path = self.dir / f"in_voltage{channel}_raw"
        super().__init__(name, settings, device=str(self._raw_path))
        self._scale_setting: float | None = settings["scale"]
        self._offset_setting: float | None = settings["offset"]
        action = f"Opening ADC channel {channel} of iio:device{device}"
        try:
            if not self.dir.is_dir():
                raise FileNotFoundError(errno.ENOENT, f"{self.dir} does not exist")
            self._read_number(self._raw_path, int)
            self._conversion(action)
        except DriverError:
            raise
        except OSError as e:
            raise self._fail(action, e) from e

    # --- public API -------------------------------------------------------------------

    def read(self) -> float:
        """Reads the input's voltage.

        Returns:
            Volts: (raw + offset) * scale / 1000.

        Raises:
            AdapterClosedError: the adapter was closed.
            DeviceAbsentError: a file disappeared (driver unloaded).
            DriverError: the kernel refused the read, or a file is not a number.
        """
        action = f"Reading ADC channel {self.channel}"
        with self._device(action):
            raw = self._read_number(self._raw_path, int)
            scale, offset = self._conversion(action)
        return (raw + offset) * scale / 1000.0

    def read_raw(self) -> int:
        """Reads the raw count (`in_voltageN_raw`).

        Raises:
            AdapterClosedError: the adapter was closed.
            DeviceAbsentError: the file disappeared (driver unloaded).
            DriverError: the kernel refused the read, or the file is not a number.
        """
        action = f"Reading the raw count of ADC channel {self.channel}"
        with self._device(action):
            return self._read_number(self._raw_path, int)

    @property
    def scale(self) -> float:
        """Millivolts per count: the `scale` setting, else the sysfs file's value.

        Raises:
            AdapterClosedError: the adapter was closed.
            DeviceAbsentError: no setting and no scale file.
            DriverError: the file is not a number.
        """
        action = f"Reading the scale of ADC channel {self.channel}"
        with self._device(action):
            return self._conversion(action)[0]

    @property
    def offset(self) -> float:
        """Counts added to raw: the `offset` setting, else the sysfs file's value, else 0.

        Raises:
            AdapterClosedError: the adapter was closed.
            DriverError: the file is not a number.
        """
        action = f"Reading the offset of ADC channel {self.channel}"
        with self._device(action):
            return self._conversion(action)[1]

    # --- helpers ----------------------------------------------------------------------

    def _conversion(self, action: str) -> tuple[float, float]:
        """(scale, offset) from the settings or the channel's (or the device's shared) files."""
        scale = self._scale_setting
        if scale is None:
            path = self._first("scale")
            if path is None:
                msg = (
                    f"{action} on adapter '{self.name}' ({self.device}): neither in_voltage{self.channel}_scale "
                    f"nor in_voltage_scale exists in {self.dir}. Fix: set `scale` (millivolts per count) in the "
                    "device file, or check that this is the right IIO device (cat name)."
                )
                raise DeviceAbsentError(msg, errno.ENOENT)
            scale = self._read_number(path, float)
        offset = self._offset_setting
        if offset is None:
            path = self._first("offset")
            offset = 0.0 if path is None else self._read_number(path, float)
        return scale, offset

    def _first(self, what: str) -> Path | None:
        for path in (self.dir / f"in_voltage{self.channel}_{what}", self.dir / f"in_voltage_{what}"):
            if path.exists():
                return path
        return None

    @staticmethod
    def _read_number(path: Path, typ: type) -> Any:
        with open(path, "rb") as f:  # reopened for every read: each read of raw is a new conversion
            text = f.read(64).decode(errors="replace").strip()
        try:
            value = typ(text)
        except ValueError:
            raise OSError(errno.EIO, f"{path} holds {text!r}, not a number") from None
        if typ is float and not math.isfinite(value):
            raise OSError(errno.EIO, f"{path} holds {text!r}, not a finite number")
        return value

