"""A small simulated world that links simulators, so control loops run closed-loop.

Why: a thermostat test that sets the sensor by hand proves little. Here the heater
relay (a simulated GPIO line) warms a room, a fan (a simulated PWM output) cools it,
and the TMP102s measure it: a graph that switches the relay sees the temperature it
caused, through the real drivers.

The room is a first-order thermal model, integrated exactly between events (the
actuators are constant in between):

    dT/dt = heater_rate * heater_on - (T - outside) * (1 + fan_cooling * fan_duty) / time_constant

It advances on its clock: `clock = "real"` follows the wall clock times `speed` (60: a
simulated minute per second), `clock = "manual"` only moves with `world.advance(s)`
(deterministic tests). The state is brought up to date before every sensor read and
at every heater switch.

Device file:

    [world]
    model = "room"            # or "module:Class", built with (device, **options)
    heater = "heater"         # a simulated GPIO output: level high = heating
    fan = "fan"               # a simulated PWM output (optional)
    sensors = ["room"]        # simulated temperature sensors with a `celsius` attribute
    temperature = 17.0        # °C at start
    outside = 8.0             # °C
    time_constant = 1800.0    # s: how fast the room drifts to the outside temperature
    heater_rate = 0.01        # °C/s the heater adds when on
    fan_cooling = 3.0         # at full duty the fan multiplies the losses by 1 + this
    clock = "real"            # or "manual"
    speed = 1.0               # simulated seconds per wall second (clock = "real")
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Mapping
from typing import Any

from lgembed.edge.errors import DeviceFileError

__all__ = ("Room", "build_world")


class Room:
    """The thermal model above. Attributes `temperature`, `outside` and the rates are public.

    Args:
        temperature, outside, time_constant, heater_rate, fan_cooling: see the module docstring.
        clock: "real" or "manual".
        speed: simulated seconds per wall second for the real clock.
    """

    def __init__(
        self,
        temperature: float = 17.0,
        outside: float = 8.0,
        time_constant: float = 1800.0,
        heater_rate: float = 0.01,
        fan_cooling: float = 3.0,
        clock: str = "real",
        speed: float = 1.0,
    ) -> None:
        if clock not in ("real", "manual"):
            msg = f"Room: 'clock' must be 'real' or 'manual' (got {clock!r})"
            raise ValueError(msg)
        if time_constant <= 0 or speed <= 0:
            msg = f"Room: 'time_constant' and 'speed' must be above 0 (got {time_constant!r}, {speed!r})"
            raise ValueError(msg)
        self.temperature = float(temperature)
        self.outside = float(outside)
        self.time_constant = float(time_constant)
        self.heater_rate = float(heater_rate)
        self.fan_cooling = float(fan_cooling)
        self.clock = clock
        self.speed = float(speed)
        self.elapsed = 0.0
        """Simulated seconds since the start."""
        self.heater_on = False
        self._heater: Any = None
        self._fan: Any = None
        self._sensors: list[Any] = []
        self._wall = time.monotonic()
        self._lock = threading.RLock()

    # --- links ------------------------------------------------------------------------

    def link_heater(self, line: Any) -> None:
        """Heats while `line.value` is high; follows it through `line.on_change`."""
        self._heater = line
        self.heater_on = bool(line.value)
        line.on_change.append(self._on_heater)

    def link_fan(self, pwm: Any) -> None:
        """Cools in proportion to `pwm.duty_cycle` (read at every update)."""
        self._fan = pwm

    def link_sensor(self, sensor: Any) -> None:
        """Sets `sensor.celsius` to the room temperature before each access to it."""
        self._sensors.append(sensor)
        hooks = getattr(sensor, "before_access", None)
        if hooks is not None:
            hooks.append(self.update)
        sensor.celsius = self.temperature

    def _on_heater(self, level: bool) -> None:
        with self._lock:
            self.update()
            self.heater_on = bool(level)

    # --- time -------------------------------------------------------------------------

    def advance(self, seconds: float) -> float:
        """Moves simulated time on by `seconds`. Returns the temperature."""
        with self._lock:
            self._integrate(seconds)
            return self.temperature

    def update(self) -> float:
        """Brings the model up to the clock's now (no-op on a manual clock). Returns the temperature."""
        with self._lock:
            if self.clock == "real":
                now = time.monotonic()
                dt, self._wall = (now - self._wall) * self.speed, now
                self._integrate(dt)
            else:
                self._publish()
            return self.temperature

    def _integrate(self, dt: float) -> None:
        if dt > 0:
            duty = 0.0
            if self._fan is not None:
                try:
                    duty = float(self._fan.duty_cycle)
                except (OSError, ValueError):
                    duty = 0.0
            k = (1.0 + self.fan_cooling * duty) / self.time_constant
            t_inf = self.outside + (self.heater_rate if self.heater_on else 0.0) / k
            self.temperature = t_inf + (self.temperature - t_inf) * math.exp(-k * dt)
            self.elapsed += dt
        self._publish()

    def _publish(self) -> None:
        for s in self._sensors:
            s.celsius = self.temperature


_WORLD_KEYS = ("model", "heater", "fan", "sensors")


def build_world(table: Mapping[str, Any], device: Any, source: str = "<dict>") -> Any:
    """The world a device file's `[world]` table describes, linked to the device's simulations.

    Raises:
        DeviceFileError: an unknown model, an invalid option, or a link naming an adapter
            that is not simulated or not of the right kind.
    """
    opts = {k: v for k, v in table.items() if k not in _WORLD_KEYS}
    model = table.get("model", "room")
    if model == "room":
        try:
            world = Room(**opts)
        except (TypeError, ValueError) as e:
            allowed = "temperature, outside, time_constant, heater_rate, fan_cooling, clock, speed"
            msg = f"{source}: invalid '[world]' option ({e}); allowed keys: model, heater, fan, sensors, {allowed}"
            raise DeviceFileError(msg, source, "world") from e
    else:
        from lgembed.edge.sim import load_model_class

        cls = load_model_class(str(model), {}, "world", "world.model", source)
        return cls(device, **opts)

    def sim(key: str, name: Any, attr: str) -> Any:
        if not isinstance(name, str) or name not in device.simulated:
            msg = f"{source}: invalid value for 'world.{key}': {name!r}; allowed: a simulated adapter ({', '.join(sorted(device.simulated))})"
            raise DeviceFileError(msg, source, f"world.{key}")
        s = device.simulation(name)
        if not hasattr(s, attr):
            msg = f"{source}: invalid value for 'world.{key}': adapter {name!r} has no '{attr}' to link (its simulator is {type(s).__name__})"
            raise DeviceFileError(msg, source, f"world.{key}")
        return s

    if "heater" in table:
        world.link_heater(sim("heater", table["heater"], "on_change"))
    if "fan" in table:
        world.link_fan(sim("fan", table["fan"], "duty_cycle"))
    sensors = table.get("sensors", [])
    if not isinstance(sensors, list):
        msg = f"{source}: invalid value for 'world.sensors': {sensors!r}; allowed: a list of adapter names"
        raise DeviceFileError(msg, source, "world.sensors")
    for s in sensors:
        world.link_sensor(sim("sensors", s, "celsius"))
    return world
