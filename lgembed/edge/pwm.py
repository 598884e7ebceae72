"""PWM outputs through the kernel's sysfs PWM interface (`/sys/class/pwm`).

Why: fans, dimmable LEDs, heaters and servos are driven by a PWM channel. Graph tools
set a duty cycle (0.0..1.0) and a frequency in hertz, not nanoseconds; this driver
converts, writes the files in the order the kernel accepts, and says what failed.
It is written here over a configurable root (periphery's PWM hard-codes the path), so
the same code runs against a simulated tree.

The kernel's interface: `pwmchipN/` holds `npwm` (the channel count), `export` and
`unexport`; writing a channel number to `export` creates `pwmchipN/pwmM/` with
`period` and `duty_cycle` (nanoseconds), `enable` (0/1) and `polarity`
("normal"/"inversed"). The kernel refuses a duty cycle longer than the period, so
every change writes `period` and `duty_cycle` in the order that keeps
duty <= period after each write.

Settings (`[adapters.NAME]`, `kind = "pwm"`, `driver = "sysfs"`):

    name            type   default           meaning
    chip            int    0                 the N of pwmchipN
    channel         int    (required)        the channel on that chip (0 .. npwm-1)
    frequency       float  1000.0            hertz (the period is rounded to whole ns)
    duty_cycle      float  0.0               the active fraction of each period, 0.0..1.0
    polarity        str    "normal"          "normal" or "inversed" (active low)
    enabled         bool   true              start the output when opened
    sysfs_root      str    "/sys/class/pwm"  the directory holding pwmchipN/
    export_timeout  float  1.0               seconds to wait, after writing `export`, for
                                             pwmM/ to appear and become writable (udev
                                             fixes its permissions after the kernel makes it)

The adapter exports the channel if `pwmM/` is absent and unexports it on close (only
then). Closing does not stop the output: call `disable()` first for that.

Permissions on a board: the PWM overlay must be loaded (e.g. `dtoverlay=pwm-2chan` on a
Raspberry Pi). Raspberry Pi OS's udev rules give group `gpio` write access to
`/sys/class/pwm` and to each exported channel's files; elsewhere add a udev rule such
as `SUBSYSTEM=="pwm*", PROGRAM="/bin/sh -c 'chgrp -R gpio /sys%p && chmod -R g+w /sys%p'"`.

Simulator (`lgembed.edge.sim.pwm`): a plain-file `pwmchipN/` tree whose `pwmM/` is
created at attach time (a plain file cannot react to `export`); `SimPWM` reads back
what the driver wrote (duty cycle, frequency, enable, polarity).
"""

from __future__ import annotations

import errno
import math
import os
import time
from pathlib import Path
from typing import Any, ClassVar

from lgembed.edge._base import Adapter, Setting, check_settings
from lgembed.edge.errors import ArgumentError, DeviceAbsentError, DriverError, DriverTimeoutError

__all__ = ("SysfsPWM",)

POLARITIES = ("normal", "inversed")

_MAX_FREQUENCY = 1e9
# hertz: the period is written in whole nanoseconds, so 1 ns (1 GHz) is the shortest


def _non_negative_int(v: Any) -> str | None:
    return None if v >= 0 else "an integer from 0 up"


def _frequency(v: Any) -> str | None:
    ok = math.isfinite(v) and 0 < v <= _MAX_FREQUENCY
    return None if ok else "a number of hertz above 0, at most 1e9"


def _fraction(v: Any) -> str | None:
    return None if 0.0 <= v <= 1.0 else "a number from 0.0 to 1.0"


def _timeout(v: Any) -> str | None:
    return None if v >= 0 else "a number of seconds from 0 up"


def _number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


class SysfsPWM(Adapter):
    """One PWM channel of the kernel's sysfs PWM interface.

    Args:
        name: the adapter's name in the device file.
        **settings: `chip`, `channel`, `frequency`, `duty_cycle`, `polarity`, `enabled`,
            `sysfs_root`, `export_timeout` (see the module docstring).

    Raises:
        DeviceFileError: a setting is unknown, missing or out of range.
        DeviceAbsentError: the chip does not exist (overlay not loaded), or it has no
            such channel.
        DevicePermissionError: the process may not write `export` or the channel's files.
        DeviceBusyError: the kernel refused the export (the channel is in use).
        DriverTimeoutError: `pwmM/` did not appear within `export_timeout` after export.
        DriverError: the kernel refused the configuration, or another OS error.
    """

    kind: ClassVar[str] = "pwm"
    driver: ClassVar[str] = "sysfs"
    SETTINGS: ClassVar[tuple[Setting, ...]] = (
        Setting("chip", int, 0, check=_non_negative_int, doc="the N of pwmchipN"),
        Setting("channel", int, check=_non_negative_int, doc="the channel on the chip (0 .. npwm-1)"),
        Setting("frequency", float, 1000.0, check=_frequency, doc="hertz"),
        Setting("duty_cycle", float, 0.0, check=_fraction, doc="the active fraction of each period, 0.0..1.0"),
        Setting("polarity", str, "normal", choices=POLARITIES, doc="normal or inversed"),
        Setting("enabled", bool, True, doc="start the output when opened"),
        Setting("sysfs_root", str, "/sys/class/pwm", doc="the directory holding pwmchipN/"),
        Setting("export_timeout", float, 1.0, check=_timeout, doc="seconds to wait for pwmM/ after export"),
    )

    def __init__(self, name: str, **settings: Any) -> None:
        settings = check_settings(type(self), settings, source="", prefix=f"adapters.{name}")
        root, chip, channel = Path(settings["sysfs_root"]), settings["chip"], settings["channel"]
        self.chip_dir = root / f"pwmchip{chip}"
        self.path = self.chip_dir / f"pwm{channel}"
        super().__init__(name, settings, device=str(self.path))
        self.channel: int = channel
        self._exported = False
        self._fraction: tuple[int, int, float] | None = None
        # (period, duty, fraction) last written: a frequency change keeps the asked-for
        # fraction instead of the rounded one, so repeated changes do not drift
        action = f"Opening PWM channel {channel} of pwmchip{chip}"
        try:
            self._open(action, settings)
        except BaseException:
            self._unexport(strict=False)
            raise

    # --- opening and closing ----------------------------------------------------------

    def _open(self, action: str, settings: dict[str, Any]) -> None:
        if not self.chip_dir.is_dir():
            e = FileNotFoundError(errno.ENOENT, f"{self.chip_dir} does not exist")
            raise self._fail(action, e)
        try:
            npwm = int(self._read_path(self.chip_dir / "npwm"))
        except (OSError, ValueError):
            npwm = None  # unreadable: let export say whether the channel exists
        if npwm is not None and self.channel >= npwm:
            msg = (
                f"{self._where(action)}: pwmchip{settings['chip']} has {npwm} channel(s) (npwm = {npwm}), "
                f"no channel {self.channel}. Fix: use a channel from 0 to {npwm - 1}, or another chip."
            )
            raise DeviceAbsentError(msg, errno.ENODEV)
        if not self.path.is_dir():
            self._export(action, settings["export_timeout"])
        try:
            enabled = self._read_path(self.path / "enable") == "1"
            if self._read_path(self.path / "polarity") != settings["polarity"]:
                if enabled:  # most controllers refuse a polarity change while running
                    self._write("enable", "0")
                    enabled = False
                self._write("polarity", settings["polarity"])
            period = round(1e9 / settings["frequency"])
            self._set_timing(period, settings["duty_cycle"])
            if settings["enabled"] != enabled:
                self._write("enable", "1" if settings["enabled"] else "0")
        except OSError as e:
            raise self._fail(action, e) from e

    def _export(self, action: str, timeout: float) -> None:
        export = self.chip_dir / "export"
        try:
            self._write_path(export, str(self.channel))
        except OSError as e:
            if e.errno == errno.EBUSY and self.path.is_dir():
                return  # exported by someone else meanwhile
            raise self._fail(f"{action} (writing {self.channel} to {export})", e) from e
        self._exported = True
        names = ("period", "duty_cycle", "enable", "polarity")
        deadline = time.monotonic() + timeout
        while True:
            ready = all(os.path.exists(self.path / n) for n in names)
            if ready and all(os.access(self.path / n, os.W_OK) for n in names):
                return
            if time.monotonic() >= deadline:
                if ready:
                    return  # let the first write report the missing permission
                msg = (
                    f"{self._where(action)}: {self.path} did not appear within export_timeout = {timeout} s "
                    f"after writing {self.channel} to {export} (timed out). Fix: raise export_timeout if udev "
                    "is slow to fix permissions, or check the PWM driver (dmesg)."
                )
                raise DriverTimeoutError(msg, errno.ETIMEDOUT)
            time.sleep(0.005)

    def _unexport(self, *, strict: bool) -> None:
        if not self._exported:
            return
        self._exported = False
        try:
            self._write_path(self.chip_dir / "unexport", str(self.channel))
        except OSError as e:
            if strict:
                raise self._fail(f"Closing PWM channel {self.channel}", e) from e

    def _close(self) -> None:
        self._unexport(strict=True)

    # --- public API -------------------------------------------------------------------

    @property
    def duty_cycle(self) -> float:
        """The active fraction of each period, 0.0..1.0 (whether or not the output runs).

        Raises:
            AdapterClosedError: the adapter was closed.
            DriverError: the files could not be read.
        """
        action = f"Reading the duty cycle of PWM channel {self.channel}"
        with self._device(action):
            period, duty = self._ns("period"), self._ns("duty_cycle")
            return duty / period if period else 0.0

    @duty_cycle.setter
    def duty_cycle(self, value: float) -> None:
        """Sets the active fraction of each period (the period is kept).

        Raises:
            AdapterClosedError: the adapter was closed.
            ArgumentError: `value` is not a number from 0.0 to 1.0.
            DriverError: the kernel refused the value.
        """
        action = f"Setting the duty cycle of PWM channel {self.channel}"
        self._check_open(action)
        if not _number(value) or not 0.0 <= value <= 1.0:
            msg = f"{self._where(action)}: duty_cycle must be a number from 0.0 to 1.0, got {value!r}."
            raise ArgumentError(msg)
        with self._device(action):
            period = self._ns("period")
            duty = round(value * period)
            self._write("duty_cycle", str(duty))
            self._fraction = (period, duty, float(value))

    @property
    def frequency(self) -> float:
        """Hertz (0.0 while no period is set).

        Raises:
            AdapterClosedError: the adapter was closed.
            DriverError: the files could not be read.
        """
        action = f"Reading the frequency of PWM channel {self.channel}"
        with self._device(action):
            period = self._ns("period")
            return 1e9 / period if period else 0.0

    @frequency.setter
    def frequency(self, value: float) -> None:
        """Sets the frequency in hertz, keeping the duty cycle's fraction.

        Raises:
            AdapterClosedError: the adapter was closed.
            ArgumentError: `value` is not a number above 0 and at most 1e9.
            DriverError: the kernel refused the period.
        """
        action = f"Setting the frequency of PWM channel {self.channel}"
        self._check_open(action)
        if not _number(value) or _frequency(value) is not None:
            msg = f"{self._where(action)}: frequency must be a number of hertz above 0 and at most 1e9, got {value!r}."
            raise ArgumentError(msg)
        self._set_period(action, round(1e9 / value))

    @property
    def period(self) -> float:
        """The period in seconds.

        Raises:
            AdapterClosedError: the adapter was closed.
            DriverError: the files could not be read.
        """
        action = f"Reading the period of PWM channel {self.channel}"
        with self._device(action):
            return self._ns("period") / 1e9

    @period.setter
    def period(self, value: float) -> None:
        """Sets the period in seconds (whole nanoseconds), keeping the duty cycle's fraction.

        Raises:
            AdapterClosedError: the adapter was closed.
            ArgumentError: `value` is not a number of seconds of at least 1 ns.
            DriverError: the kernel refused the period.
        """
        action = f"Setting the period of PWM channel {self.channel}"
        self._check_open(action)
        if not _number(value) or not math.isfinite(value) or round(value * 1e9) < 1:
            msg = f"{self._where(action)}: period must be a number of seconds of at least 1e-9, got {value!r}."
            raise ArgumentError(msg)
        self._set_period(action, round(value * 1e9))

    @property
    def enabled(self) -> bool:
        """Whether the output runs.

        Raises:
            AdapterClosedError: the adapter was closed.
            DriverError: the file could not be read.
        """
        action = f"Reading the state of PWM channel {self.channel}"
        with self._device(action):
            return self._read_path(self.path / "enable") == "1"

    @enabled.setter
    def enabled(self, value: bool) -> None:
        """Starts (True) or stops (False) the output.

        Raises:
            AdapterClosedError: the adapter was closed.
            ArgumentError: `value` is not True or False.
            DriverError: the kernel refused it.
        """
        action = f"{'Enabling' if value is True else 'Disabling'} PWM channel {self.channel}"
        self._check_open(action)
        if value is not True and value is not False:
            msg = f"{self._where(action)}: enabled must be True or False, got {value!r}."
            raise ArgumentError(msg)
        with self._device(action):
            self._write("enable", "1" if value else "0")

    @property
    def polarity(self) -> str:
        """The polarity: "normal" (active high) or "inversed" (active low).

        Raises:
            AdapterClosedError: the adapter was closed.
            DriverError: the file could not be read.
        """
        action = f"Reading the polarity of PWM channel {self.channel}"
        with self._device(action):
            return self._read_path(self.path / "polarity")

    @polarity.setter
    def polarity(self, value: str) -> None:
        """Sets the polarity, stopping the output for the change if it runs.

        Raises:
            AdapterClosedError: the adapter was closed.
            ArgumentError: `value` is not "normal" or "inversed".
            DriverError: the kernel refused it.
        """
        action = f"Setting the polarity of PWM channel {self.channel}"
        self._check_open(action)
        if value not in POLARITIES:
            msg = f"{self._where(action)}: polarity must be 'normal' or 'inversed', got {value!r}."
            raise ArgumentError(msg)
        with self._device(action):
            if self._read_path(self.path / "polarity") == value:
                return
            running = self._read_path(self.path / "enable") == "1"
            if running:
                self._write("enable", "0")
            self._write("polarity", value)
            if running:
                self._write("enable", "1")

    def enable(self) -> None:
        """Starts the output (`enabled = True`).

        Raises:
            AdapterClosedError: the adapter was closed.
            DriverError: the kernel refused it.
        """
        self.enabled = True

    def disable(self) -> None:
        """Stops the output (`enabled = False`).

        Raises:
            AdapterClosedError: the adapter was closed.
            DriverError: the kernel refused it.
        """
        self.enabled = False

    def read(self) -> float:
        """The duty cycle, 0.0..1.0 (as the `duty_cycle` property).

        Raises:
            AdapterClosedError: the adapter was closed.
            DriverError: the files could not be read.
        """
        return self.duty_cycle

    # --- helpers ----------------------------------------------------------------------

    def _where(self, action: str) -> str:
        return f"{action} on adapter '{self.name}' ({self.device})"

    def _set_period(self, action: str, period: int) -> None:
        with self._device(action):
            old_period, old_duty = self._ns("period"), self._ns("duty_cycle")
            remembered = self._fraction
            if remembered is not None and remembered[:2] == (old_period, old_duty):
                fraction = remembered[2]
            else:  # changed behind our back (or never written): take it from the files
                fraction = old_duty / old_period if old_period else 0.0
            self._set_timing(period, fraction)

    def _set_timing(self, period: int, fraction: float) -> None:
        """Writes a new period (ns) and its duty so that duty <= period holds after each write."""
        duty = round(fraction * period)
        self._fraction = None
        if period >= self._ns("duty_cycle"):
            self._write("period", str(period))
            self._write("duty_cycle", str(duty))
        else:  # duty <= period < old duty <= old period
            self._write("duty_cycle", str(duty))
            self._write("period", str(period))
        self._fraction = (period, duty, fraction)

    def _ns(self, attr: str) -> int:
        text = self._read_path(self.path / attr)
        try:
            return int(text)
        except ValueError:
            raise OSError(errno.EIO, f"{self.path / attr} holds {text!r}, not a number of nanoseconds") from None

    def _write(self, attr: str, text: str) -> None:
        self._write_path(self.path / attr, text)

    @staticmethod
    def _read_path(path: Path) -> str:
        with open(path, "rb") as f:
            return f.read(64).decode(errors="replace").strip()

    @staticmethod
    def _write_path(path: Path, text: str) -> None:
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
        try:
            os.write(fd, text.encode() + b"\n")
        finally:
            os.close(fd)
