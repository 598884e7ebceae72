"""ToolPolicy: what a hardware tool may do, checked before anything reaches a driver.

Why: a graph's model chooses the arguments of a hardware call. A policy bounds them the
way an engineer would on a bench: which values are allowed (lines, I2C addresses and
registers, CAN ids: an allow-list per argument), numeric ranges (a duty cycle up to
0.8, a setpoint between 5 and 30 °C), the longest payload, how often the call may run
(a relay that must not chatter), and how risky the action is. `high` and `critical`
calls wait for a person (see `lgembed.edge.tools`); `critical` needs a reason to be
approved.

A refusal is a `PolicyViolation` whose text names the rule, the value and the limit:

    Tool 'fan' refused by its policy: rule 'ranges.duty_cycle': value 0.95 is outside 0.0..0.8

Rate limits count calls that reached the driver, in a sliding window, per policy
object (one per tool), per process.
"""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any

from lgembed.edge.errors import DeviceFileError, PolicyViolation

__all__ = ("RISK_LEVELS", "RateLimit", "ToolPolicy")

RISK_LEVELS = ("low", "medium", "high", "critical")
"""Risk levels, lowest first; `high` and `critical` need a person's approval."""

_UNITS = {"s": 1.0, "sec": 1.0, "second": 1.0, "m": 60.0, "min": 60.0, "minute": 60.0, "h": 3600.0, "hour": 3600.0, "d": 86400.0, "day": 86400.0}
_RATE_RE = re.compile(r"^\s*(\d+)\s*/\s*(\d*(?:\.\d+)?)\s*([a-z]+?)s?\s*$")


class RateLimit:
    """At most `count` calls in any window of `per` seconds (a sliding window).

    Args:
        count: calls allowed per window (≥ 1).
        per: the window in seconds (> 0).
    """

    def __init__(self, count: int, per: float) -> None:
        if not isinstance(count, int) or isinstance(count, bool) or count < 1:
            msg = f"RateLimit: 'count' must be an integer ≥ 1 (got {count!r})"
            raise ValueError(msg)
        if not isinstance(per, (int, float)) or isinstance(per, bool) or per <= 0:
            msg = f"RateLimit: 'per' must be a number of seconds above 0 (got {per!r})"
            raise ValueError(msg)
        self.count = count
        self.per = float(per)
        self._times: deque[float] = deque()
        self._lock = threading.Lock()

    @classmethod
    def parse(cls, spec: str | Iterable | RateLimit) -> RateLimit:
        """From "10/minute", "5/s", "3/10s", "100/hour", a (count, seconds) pair, or a RateLimit.

        Raises:
            ValueError: any other form.
        """
        if isinstance(spec, RateLimit):
            return cls(spec.count, spec.per)
        if isinstance(spec, str):
            m = _RATE_RE.match(spec.lower())
            if m and m.group(3) in _UNITS:
                n = float(m.group(2)) if m.group(2) else 1.0
                return cls(int(m.group(1)), n * _UNITS[m.group(3)])
        elif not isinstance(spec, (bytes, Mapping)):
            try:
                count, per = spec  # type: ignore[misc]
            except (TypeError, ValueError):
                pass
            else:
                return cls(count, per)
        msg = f"rate limit must look like '10/minute', '5/s', '3/10s' or [count, seconds] (got {spec!r})"
        raise ValueError(msg)

    def _trim(self, now: float) -> None:
        while self._times and now - self._times[0] >= self.per:
            self._times.popleft()

    def wait_time(self, now: float | None = None) -> float:
        """Seconds until one more call would be allowed (0.0 if it is allowed now)."""
        now = time.monotonic() if now is None else now
        with self._lock:
            self._trim(now)
            if len(self._times) < self.count:
                return 0.0
            return self.per - (now - self._times[0])

    def take(self, now: float | None = None) -> float:
        """Records a call if allowed. Returns 0.0 when recorded, else the seconds to wait."""
        now = time.monotonic() if now is None else now
        with self._lock:
            self._trim(now)
            if len(self._times) < self.count:
                self._times.append(now)
                return 0.0
            return self.per - (now - self._times[0])

    def __repr__(self) -> str:
        return f"RateLimit({self.count}, {self.per:g})"

    def describe(self) -> str:
        return f"{self.count} per {self.per:g} s"


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


class ToolPolicy:
    """The rules a hardware tool's calls must meet before reaching a driver.

    Args:
        risk: "low", "medium", "high" or "critical"; high and critical wait for approval.
        allow: argument name -> the values allowed for it (e.g. {"register": [0, 1]},
            {"arbitration_id": [0x123]}, {"address": [0x48]}, {"adapter": ["relay1"]}).
            A list argument (bytes to write) must have every element allowed.
        ranges: argument name -> (low, high) inclusive bounds for a number, or for every
            number of a list argument.
        rate_limit: "10/minute", (count, seconds) or a RateLimit.
        max_length: the longest bytes / list / str argument allowed.
        reason: why the action is risky, shown to the person asked to approve it.

    Raises:
        ValueError: an unknown risk level, a malformed range or rate limit.
    """

    def __init__(
        self,
        risk: str = "low",
        *,
        allow: Mapping[str, Iterable[Any]] | None = None,
        ranges: Mapping[str, Iterable[float]] | None = None,
        rate_limit: str | Iterable | RateLimit | None = None,
        max_length: int | None = None,
        reason: str | None = None,
    ) -> None:
        if risk not in RISK_LEVELS:
            msg = f"ToolPolicy: 'risk' must be one of {', '.join(map(repr, RISK_LEVELS))} (got {risk!r})"
            raise ValueError(msg)
        self.risk = risk
        self.allow = {k: list(v) for k, v in (allow or {}).items()}
        self.ranges: dict[str, tuple[float, float]] = {}
        for k, bounds in (ranges or {}).items():
            b = list(bounds)
            if len(b) != 2 or not all(_is_number(x) for x in b) or b[0] > b[1]:
                msg = f"ToolPolicy: ranges[{k!r}] must be [low, high] numbers with low ≤ high (got {bounds!r})"
                raise ValueError(msg)
            self.ranges[k] = (b[0], b[1])
        self.rate_limit = None if rate_limit is None else RateLimit.parse(rate_limit)
        if max_length is not None and (not isinstance(max_length, int) or isinstance(max_length, bool) or max_length < 0):
            msg = f"ToolPolicy: 'max_length' must be an integer ≥ 0 (got {max_length!r})"
            raise ValueError(msg)
        self.max_length = max_length
        self.reason = reason

    @property
    def requires_approval(self) -> bool:
        """Whether calls wait for a person (risk `high` or `critical`)."""
        return self.risk in ("high", "critical")

    @classmethod
    def from_dict(cls, table: Mapping[str, Any], source: str = "<dict>", key: str = "policy") -> ToolPolicy:
        """A policy from a device file's `[tools.NAME.policy]` table.

        Raises:
            DeviceFileError: an unknown key or an invalid value, naming the file and key.
        """
        known = ("risk", "allow", "ranges", "rate_limit", "max_length", "reason")
        for k in table:
            if k not in known:
                msg = f"{source}: unknown key '{key}.{k}'; allowed keys: {', '.join(known)}"
                raise DeviceFileError(msg, source, f"{key}.{k}")
        for k in ("allow", "ranges"):
            v = table.get(k)
            if v is not None and not isinstance(v, Mapping):
                msg = f"{source}: invalid value for '{key}.{k}': {v!r}; allowed: a table of argument name -> list"
                raise DeviceFileError(msg, source, f"{key}.{k}")
            for arg, vals in (v or {}).items():
                if not isinstance(vals, list):
                    msg = f"{source}: invalid value for '{key}.{k}.{arg}': {vals!r}; allowed: a list"
                    raise DeviceFileError(msg, source, f"{key}.{k}.{arg}")
        try:
            return cls(
                table.get("risk", "low"),
                allow=table.get("allow"),
                ranges=table.get("ranges"),
                rate_limit=table.get("rate_limit"),
                max_length=table.get("max_length"),
                reason=table.get("reason"),
            )
        except ValueError as e:
            msg = f"{source}: invalid '{key}': {e}"
            raise DeviceFileError(msg, source, key) from e

    # --- checks ------------------------------------------------------------------------

    def _refuse(self, tool: str, rule: str, value: Any, limit: Any, text: str) -> PolicyViolation:
        msg = f"Tool '{tool}' refused by its policy: rule '{rule}': {text}"
        return PolicyViolation(msg, rule, value, limit)

    def check(self, tool: str, args: Mapping[str, Any]) -> None:
        """Checks the arguments of one call against allow-lists, ranges and max_length.

        Does not count toward the rate limit (see `take_rate`).

        Raises:
            PolicyViolation: the first rule the call breaks.
        """
        for name, allowed in self.allow.items():
            if name not in args:
                continue
            v = args[name]
            items = list(v) if isinstance(v, (list, tuple, bytes, bytearray)) else [v]
            for item in items:
                if not _member(item, allowed):
                    raise self._refuse(tool, f"allow.{name}", item, allowed, f"value {_show(item)} is not in the allow-list {_show_list(allowed)}")
        for name, (lo, hi) in self.ranges.items():
            if name not in args:
                continue
            v = args[name]
            items = list(v) if isinstance(v, (list, tuple, bytes, bytearray)) else [v]
            for item in items:
                if not _is_number(item) or not (lo <= item <= hi):
                    raise self._refuse(tool, f"ranges.{name}", item, (lo, hi), f"value {_show(item)} is outside {lo!r}..{hi!r}")
        if self.max_length is not None:
            for name, v in args.items():
                if isinstance(v, (str, bytes, bytearray, list, tuple)) and len(v) > self.max_length:
                    raise self._refuse(
                        tool, "max_length", len(v), self.max_length,
                        f"argument '{name}' has length {len(v)}, above the limit of {self.max_length}",
                    )

    def check_rate(self, tool: str, now: float | None = None) -> None:
        """Raises PolicyViolation if one more call now would exceed the rate limit (records nothing)."""
        if self.rate_limit is not None:
            wait = self.rate_limit.wait_time(now)
            if wait > 0:
                raise self._rate_error(tool, wait)

    def take_rate(self, tool: str, now: float | None = None) -> None:
        """Records one call against the rate limit.

        Raises:
            PolicyViolation: the limit is reached (the call is not recorded).
        """
        if self.rate_limit is not None:
            wait = self.rate_limit.take(now)
            if wait > 0:
                raise self._rate_error(tool, wait)

    def _rate_error(self, tool: str, wait: float) -> PolicyViolation:
        rl = self.rate_limit
        assert rl is not None
        return self._refuse(
            tool, "rate_limit", rl.count + 1, rl.describe(),
            f"{rl.count + 1} calls within {rl.per:g} s exceed the limit of {rl.describe()}; try again in {wait:.1f} s",
        )

    def describe(self) -> dict[str, Any]:
        """The policy as plain data (for tool descriptions, audit records and `doctor`)."""
        out: dict[str, Any] = {"risk": self.risk}
        if self.allow:
            out["allow"] = {k: list(v) for k, v in self.allow.items()}
        if self.ranges:
            out["ranges"] = {k: list(v) for k, v in self.ranges.items()}
        if self.rate_limit is not None:
            out["rate_limit"] = self.rate_limit.describe()
        if self.max_length is not None:
            out["max_length"] = self.max_length
        if self.reason:
            out["reason"] = self.reason
        return out

    def __repr__(self) -> str:
        return f"ToolPolicy({self.describe()!r})"


def _member(item: Any, allowed: list) -> bool:
    # equality without bool/int confusion: True is not the allowed value 1, nor 1.0 the value True
    for a in allowed:
        if isinstance(item, bool) or isinstance(a, bool):
            if item is a:
                return True
        elif item == a and (isinstance(item, str) == isinstance(a, str)):
            return True
    return False


def _show(v: Any) -> str:
    if isinstance(v, int) and not isinstance(v, bool) and v > 9:
        return f"{v} (0x{v:x})"
    return repr(v)


def _show_list(vals: list) -> str:
    return "[" + ", ".join(_show(v) for v in vals) + "]"
