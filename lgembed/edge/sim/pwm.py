"""Simulated PWM channels: a plain-file `/sys/class/pwm` tree the real driver writes.

Why: `lgembed.edge.pwm.SysfsPWM` only reads and writes files, so a tree of plain files
under the environment's directory is enough for its code to run unchanged; `SimPWM`
reads back what it wrote, for tests and for the world model (a fan's duty cycle).

The tree: `env.path("sys/class/pwm")/pwmchipN/` with `npwm`, `export` and `unexport`,
and `pwmM/` (`period` 0, `duty_cycle` 0, `enable` 0, `polarity` normal) created at
attach time, since a plain file cannot react to the driver's write to `export` (the
driver works whether `pwmM/` exists or not). One chip per chip number per environment
(`env.shared[("pwmchip", N)]`); adapters on the same channel share its `SimPWM`.

Device-file options (`[adapters.NAME.simulation]`): `npwm` (int, the chip's channel
count; default: enough for every simulated channel). `simulator` may name "pwm" (the
default) or a "module:Class" subclass of `SimPWM`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lgembed.edge._base import int_range
from lgembed.edge.errors import DeviceFileError
from lgembed.edge.sim import SimEnv, build_model, load_model_class

__all__ = ("SimPWM", "attach")


class SimPWM:
    """One simulated PWM channel: what the driver wrote to `pwmchipN/pwmM/`.

    Attributes:
        path: the channel's directory (None until attached).
    """

    OPTIONS: dict[str, tuple[type, Any]] = {}
    """Options the device file may give: name -> (type, check), used by `attach`."""

    def __init__(self) -> None:
        self.path: Path | None = None

    def _bind(self, path: Path) -> None:
        self.path = path

    def _read(self, attr: str) -> str:
        if self.path is None:
            msg = "SimPWM: not attached to a simulated channel"
            raise RuntimeError(msg)
        return (self.path / attr).read_text().strip()

    def _int(self, attr: str) -> int:
        text = self._read(attr)
        try:
            return int(text)
        except ValueError:
            return 0  # caught in the middle of the driver's write

    @property
    def period_ns(self) -> int:
        """The period the driver wrote, in nanoseconds."""
        return self._int("period")

    @property
    def duty_ns(self) -> int:
        """The active time per period the driver wrote, in nanoseconds."""
        return self._int("duty_cycle")

    @property
    def enabled(self) -> bool:
        """Whether the driver started the output."""
        return self._read("enable") == "1"

    @property
    def polarity(self) -> str:
        """The polarity the driver wrote: "normal" or "inversed"."""
        return self._read("polarity")

    @property
    def frequency(self) -> float:
        """Hertz (0.0 while no period is set)."""
        period = self.period_ns
        return 1e9 / period if period else 0.0

    @property
    def duty_cycle(self) -> float:
        """The effective active fraction: duty / period while enabled, 0.0 while disabled.
        (Polarity is not applied: with "inversed" the line is low for that fraction.)"""
        if not self.enabled:
            return 0.0
        period = self.period_ns
        return min(1.0, self.duty_ns / period) if period else 0.0

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.path}>"


_BUILTINS = {"pwm": "lgembed.edge.sim.pwm:SimPWM"}


class _Chip:
    """One simulated pwmchipN/: its npwm (fixed by an option, or grown as channels attach)."""

    def __init__(self, directory: Path, npwm: int | None) -> None:
        self.dir = directory
        directory.mkdir(parents=True, exist_ok=True)
        for name in ("export", "unexport"):
            (directory / name).touch()
        self.fixed = npwm is not None
        self.npwm = npwm if npwm is not None else 0
        self.channels: dict[int, SimPWM] = {}
        self._write_npwm()

    def _write_npwm(self) -> None:
        (self.dir / "npwm").write_text(f"{self.npwm}\n")

    def grow(self, channel: int) -> None:
        if not self.fixed and channel >= self.npwm:
            self.npwm = max(2, channel + 1)
            self._write_npwm()


def attach(
    env: SimEnv,
    name: str,
    driver: str,
    settings: dict[str, Any],
    model: str | None,
    options: Mapping[str, Any],
    source: str = "<dict>",
) -> tuple[dict[str, Any], SimPWM]:
    """Simulates PWM adapter `name`: a channel in a plain-file pwmchip tree.

    Args:
        env: the simulation environment.
        name: the adapter's name.
        driver: "sysfs".
        settings: the adapter's validated settings.
        model: the `simulator` key: None or "pwm" for `SimPWM`, or "module:Class".
        options: the `[adapters.NAME.simulation]` table (`npwm`).
        source: the device file, for messages.

    Returns:
        The settings with `sysfs_root` re-pointed at the tree, and the channel's `SimPWM`.
        A channel at or beyond an explicit `npwm` gets no directory: the driver then
        fails as on a board.

    Raises:
        DeviceFileError: an unknown driver, simulator or option, or a bad option value.
    """
    if driver != "sysfs":
        msg = f"{source}: invalid value for 'adapters.{name}.driver': {driver!r}; the pwm simulator knows 'sysfs'"
        raise DeviceFileError(msg, source, f"adapters.{name}.driver")
    opts = dict(options)
    npwm = None
    if "npwm" in opts:
        npwm = opts.pop("npwm")
        ok = isinstance(npwm, int) and not isinstance(npwm, bool)
        problem = int_range(1, 1024)(npwm) if ok else "an integer"
        key = f"adapters.{name}.simulation.npwm"
        if problem is not None:
            msg = f"{source}: invalid value for '{key}': {npwm!r}; allowed: {problem}"
            raise DeviceFileError(msg, source, key)
    root = env.path("sys", "class", "pwm")
    root.mkdir(exist_ok=True)
    chip_no, channel = settings["chip"], settings["channel"]
    chip: _Chip | None = env.shared.get(("pwmchip", chip_no))
    if chip is None:
        chip = _Chip(root / f"pwmchip{chip_no}", npwm)
        env.shared[("pwmchip", chip_no)] = chip
    elif npwm is not None and (not chip.fixed or npwm != chip.npwm):
        if chip.fixed or npwm < chip.npwm:
            key = f"adapters.{name}.simulation.npwm"
            msg = (
                f"{source}: invalid value for '{key}': {npwm!r}; "
                f"pwmchip{chip_no} is already simulated with npwm = {chip.npwm}"
            )
            raise DeviceFileError(msg, source, key)
        chip.fixed, chip.npwm = True, npwm
        chip._write_npwm()
    new_settings = {**settings, "sysfs_root": str(root)}
    if channel in chip.channels:
        if model is not None or opts:
            key = f"adapters.{name}.simulation"
            msg = (
                f"{source}: invalid '{key}': pwmchip{chip_no} channel {channel} "
                "is already simulated for another adapter"
            )
            raise DeviceFileError(msg, source, key)
        return new_settings, chip.channels[channel]
    key = f"adapters.{name}"
    cls = SimPWM if model is None else load_model_class(model, _BUILTINS, "pwm", f"{key}.simulator", source)
    sim = build_model(cls, (), opts, label=cls.__name__, kind="pwm", prefix=f"{key}.simulation", source=source)
    chip.grow(channel)
    directory = chip.dir / f"pwm{channel}"
    if channel < chip.npwm:
        directory.mkdir(exist_ok=True)
        for attr, text in (("period", "0"), ("duty_cycle", "0"), ("enable", "0"), ("polarity", "normal")):
            (directory / attr).write_text(text + "\n")
    sim._bind(directory)
    chip.channels[channel] = sim
    return new_settings, sim
