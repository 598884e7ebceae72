"""The systemd unit of `lgembed serve`, generated from the service config and the device file.

Why this module exists: a graph service on a board runs next to hardware and often near
mains power; if its process is taken over, the sandbox is what limits the damage. A
hand-written unit drifts from what the service needs (a new adapter, a moved database),
so `lgembed unit` derives the unit from the same files the service reads: device access
is granted for exactly the adapters the device file names, the LMDB environment is the
only writable place, and everything else systemd can take away is taken away.

Decisions:

- A dedicated system user (`User=lgembed`, `Group=lgembed`), not `DynamicUser=`: the
  user must be named in device groups and udev rules, the LMDB files keep one owner
  across restarts and upgrades, and an operator can run `sudo -u lgembed lgembed threads
  --db /var/lib/lgembed list`. Create it once: `useradd --system --home-dir
  /var/lib/lgembed --shell /usr/sbin/nologin lgembed`.
- Devices: `DevicePolicy=closed` plus one `DeviceAllow=` per device node the device file
  names (gpio cdev: the chip, rw; i2c: the bus node, rw; uart: the port, rw), and the
  group that owns such nodes on Debian and Raspberry Pi OS in `SupplementaryGroups=`
  (gpio, i2c, dialout). CAN has no node: `AF_CAN` joins `RestrictAddressFamilies=`.
  sysfs GPIO and PWM write under /sys, which `ProtectKernelTunables=` makes read-only:
  their class directory and /sys/devices (where the class links point) become
  `ReadWritePaths=`; file permissions (the udev rules of the group) still decide.
  ADC reads only. Adapters that run on simulators (`simulate = true` in their table, or
  `simulate = true` in the service config) need nothing.
- `PrivateDevices=yes` only when no device node is needed (it hides /dev), and
  `PrivateUsers=yes` only when no supplementary group is (a user namespace maps those
  groups to nobody). `PrivateNetwork=yes` only without the HTTP API and without CAN.
- `MemoryDenyWriteExecute=yes`: CPython, lmdb's C extension and msgpack need no
  writable-executable memory; of the hardware libraries only python-can's Windows-only
  vendor interfaces use ctypes callbacks (which would).
- `Restart=on-failure` with `RestartPreventExitStatus=2`: `lgembed serve` exits 2 on an
  invalid config, which a restart cannot fix. `TimeoutStopSec=` is the config's
  `stop_timeout` plus a margin, so the drain finishes before systemd's SIGKILL.

`systemd-analyze verify` prints nothing for the units this module writes, and
`systemd-analyze security --offline=true` (systemd 252) rates them 1.1 without device
access and 1.7 with GPIO, I2C, UART, CAN and PWM adapters (tests/test_unit.py pins
<= 2.0); tools/systemd-nspawn-watchdog.sh runs the service under such a unit.
"""

from __future__ import annotations

import os
import re
import shlex
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = (
    "DEFAULT_CONFIG",
    "DEFAULT_DB",
    "DEFAULT_MEMORY_MAX",
    "DEFAULT_USER",
    "DEFAULT_WATCHDOG",
    "DeviceNeed",
    "UnitError",
    "UnitOptions",
    "device_needs",
    "read_device_file",
    "read_service_config",
    "render_unit",
)

DEFAULT_CONFIG = "/etc/lgembed/service.toml"
"""The service config ExecStart names when none is given."""
DEFAULT_DB = "/var/lib/lgembed"
"""The LMDB environment when neither the flags nor the config name one (StateDirectory=lgembed)."""
DEFAULT_USER = "lgembed"
"""The dedicated system user (and group) the service runs as."""
DEFAULT_WATCHDOG = 30.0
"""WatchdogSec=: the service pets at half of it from its main loop."""
DEFAULT_MEMORY_MAX = "256M"
"""MemoryMax=: an idle service uses about 30 MB; graphs and their data need the rest."""
DEFAULT_STOP_TIMEOUT = 20.0
"""The service's own drain budget (`stop_timeout`) when the config does not set one."""
STOP_MARGIN = 10.0
# seconds TimeoutStopSec= adds to stop_timeout: the drain ends, then the process exits
RESTART_SEC = 5
# seconds between a failure and the restart
BASE_FAMILIES = ("AF_UNIX", "AF_INET", "AF_INET6", "AF_NETLINK")
# address families every lgembed service keeps (journald/notify, the API, getaddrinfo)

_MEMORY_RE = re.compile(r"^(\d+(\.\d+)?[KMGT]?|\d+(\.\d+)?%|infinity)$")
_USER_RE = re.compile(r"^[a-z_][a-z0-9_-]{0,30}\$?$")
_NAME_RE = re.compile(r"^[A-Za-z0-9:_.\\-]+$")
_HOME_DIRS = ("/home", "/root", "/run/user")


class UnitError(ValueError):
    """An option of the unit, or a file it is derived from, is invalid.

    The message names the option or file, the value and what is allowed.
    """


@dataclass(frozen=True)
class DeviceNeed:
    """What one adapter of a device file needs from the sandbox.

    Attributes:
        adapter: the adapter's name in the device file.
        kind: gpio, pwm, adc, uart, i2c or can.
        driver: the driver name (cdev, sysfs, iio, serial, periphery, python-can).
        simulated: runs on a simulator: needs nothing below.
        nodes: (device node, "rw" or "r") pairs for DeviceAllow=.
        paths_rw: sysfs paths the driver writes (ReadWritePaths=).
        check: (path, "rw", "r" or "exists") pairs `lgembed doctor` checks.
        group: the group that usually owns the nodes (SupplementaryGroups=), or None.
        families: extra address families (RestrictAddressFamilies=).
        interface: the network interface (CAN), or None.
        hint: how to grant access on a board (a udev rule or a setup step).
    """

    adapter: str
    kind: str
    driver: str
    simulated: bool = False
    nodes: tuple[tuple[str, str], ...] = ()
    paths_rw: tuple[str, ...] = ()
    check: tuple[tuple[str, str], ...] = ()
    group: str | None = None
    families: tuple[str, ...] = ()
    interface: str | None = None
    hint: str = ""


_HINTS = {
    "gpio": 'add the user to group gpio; udev: SUBSYSTEM=="gpio", KERNEL=="gpiochip*", GROUP="gpio", MODE="0660"',
    "gpio-sysfs": "add the user to group gpio; the group needs write access to export/unexport and gpioN/ "
    "(Raspberry Pi OS: 99-com.rules)",
    "pwm": "load the PWM overlay (e.g. dtoverlay=pwm-2chan); add the user to group gpio; udev: "
    'SUBSYSTEM=="pwm*", PROGRAM="/bin/sh -c \'chgrp -R gpio /sys%p && chmod -R g+w /sys%p\'"',
    "adc": 'usually readable by all; else udev: SUBSYSTEM=="iio", RUN+="/bin/chgrp -R iio /sys%p", '
    'RUN+="/bin/chmod -R g+r /sys%p" and group iio',
    "uart": 'add the user to group dialout; or udev: SUBSYSTEM=="tty", ATTRS{idVendor}=="....", GROUP="lgembed", MODE="0660"',
    "i2c": 'enable the bus (dtparam=i2c_arm=on or modprobe i2c-dev); add the user to group i2c; udev: SUBSYSTEM=="i2c-dev", GROUP="i2c", MODE="0660"',
    "can": "bring the interface up at boot: /etc/systemd/network/80-can.network with [Match] Name=IFACE "
    "and [CAN] BitRate=500000 (needs CONFIG_CAN_RAW)",
}
# how to grant access on a board, per kind (the drivers' module docstrings say more)


def device_needs(config: Mapping[str, Any], source: str = "<dict>", *, simulate: bool = False) -> list[DeviceNeed]:
    """What each adapter of a parsed device file needs; nothing is opened.

    Args:
        config: the device file's content (`tomllib.load`).
        source: its path, for messages.
        simulate: every adapter runs on a simulator (the service's `simulate = true`).

    Raises:
        UnitError: the file's adapters table is invalid (unknown kind, driver or setting;
            the message is the edge layer's, naming the file, key and value).
    """
    from lgembed.edge.errors import DeviceFileError
    from lgembed.edge.registry import driver_class

    adapters = config.get("adapters", {})
    if not isinstance(adapters, Mapping):
        raise UnitError(f"{source}: invalid value for 'adapters': {adapters!r}; allowed: a table")
    needs = []
    for name, table in adapters.items():
        key = f"adapters.{name}"
        if not isinstance(table, Mapping):
            raise UnitError(f"{source}: invalid value for '{key}': {table!r}; allowed: a table")
        kind = table.get("kind")
        try:
            cls = driver_class(kind, table.get("driver"), source, key)
            from lgembed.edge._base import check_settings

            settings = {
                k: v for k, v in table.items() if k not in ("kind", "driver", "simulator", "simulation", "simulate")
            }
            if kind == "can":
                settings = {k: v for k, v in settings.items() if v is not None}
            settings = check_settings(cls, settings, source, key)
        except DeviceFileError as e:
            raise UnitError(str(e)) from e
        simulated = bool(simulate or table.get("simulate", False))
        needs.append(_need(str(name), kind, cls.driver, settings, simulated))
    return needs


def _need(name: str, kind: str, driver: str, s: dict[str, Any], simulated: bool) -> DeviceNeed:
    base = {"adapter": name, "kind": kind, "driver": driver, "simulated": simulated}
    if simulated:
        return DeviceNeed(**base)
    if kind == "gpio" and driver == "cdev":
        return DeviceNeed(
            **base, nodes=((s["path"], "rw"),), check=((s["path"], "rw"),), group="gpio", hint=_HINTS["gpio"]
        )
    if kind == "gpio":
        root = s["sysfs_root"].rstrip("/")
        return DeviceNeed(
            **base,
            paths_rw=(root, "/sys/devices"),
            check=((f"{root}/export", "rw"),),
            group="gpio",
            hint=_HINTS["gpio-sysfs"],
        )
    if kind == "pwm":
        root = s["sysfs_root"].rstrip("/")
        chip = f"{root}/pwmchip{s['chip']}"
        return DeviceNeed(
            **base, paths_rw=(root, "/sys/devices"), check=((f"{chip}/export", "rw"),), group="gpio", hint=_HINTS["pwm"]
        )
    if kind == "adc":
        raw = f"{s['sysfs_root'].rstrip('/')}/iio:device{s['device']}/in_voltage{s['channel']}_raw"
        return DeviceNeed(**base, check=((raw, "r"),), hint=_HINTS["adc"])
    if kind == "uart":
        return DeviceNeed(
            **base, nodes=((s["port"], "rw"),), check=((s["port"], "rw"),), group="dialout", hint=_HINTS["uart"]
        )
    if kind == "i2c":
        return DeviceNeed(
            **base, nodes=((s["devpath"], "rw"),), check=((s["devpath"], "rw"),), group="i2c", hint=_HINTS["i2c"]
        )
    if kind == "can":
        if s["interface"] != "socketcan":
            return DeviceNeed(**base, hint=f"python-can interface {s['interface']!r}: no device node to check")
        iface = s["channel"]
        return DeviceNeed(
            **base,
            check=((f"/sys/class/net/{iface}", "exists"),),
            families=("AF_CAN",),
            interface=iface,
            hint=_HINTS["can"].replace("IFACE", iface),
        )
    return DeviceNeed(**base)  # pragma: no cover - driver_class accepts only the kinds above


def read_device_file(path: str) -> dict[str, Any]:
    """The parsed device file (TOML); no adapter is opened.

    Raises:
        UnitError: the file is missing or not valid TOML.
    """
    from lgembed import _toml

    try:
        return _toml.load(path, "device file")
    except _toml.TomlError as e:
        raise UnitError(str(e)) from e


def read_service_config(path: str) -> dict[str, Any]:
    """The `[service]` table of a service config, with paths made absolute.

    Only what the unit needs is read (db, http, device, simulate, stop_timeout,
    token_file); `lgembed serve` checks the rest when it starts.

    Raises:
        UnitError: the file is missing, not TOML, or a value has the wrong type.
    """
    from lgembed import _toml

    try:
        data = _toml.load(path, "service config")
    except _toml.TomlError as e:
        if e.missing:
            msg = f"--config {path}: no such file. Fix: pass the service config `lgembed serve --config` reads"
            raise UnitError(msg) from None
        raise UnitError(f"--config {path}: {e.problem}") from e
    service = data.get("service", {})
    if not isinstance(service, Mapping):
        raise UnitError(f"{path}: invalid value for 'service': {service!r}; allowed: a table")
    base = os.path.dirname(os.path.abspath(path))
    out: dict[str, Any] = {}
    for key in ("db", "http", "device", "token_file"):
        value = service.get(key)
        if value is None:
            continue
        if not isinstance(value, str):
            raise UnitError(f"{path}: invalid value for 'service.{key}': {value!r}; allowed: a string")
        out[key] = value if key == "http" or not value else os.path.normpath(os.path.join(base, value))
    if "simulate" in service:
        if not isinstance(service["simulate"], bool):
            raise UnitError(
                f"{path}: invalid value for 'service.simulate': {service['simulate']!r}; allowed: true or false"
            )
        out["simulate"] = service["simulate"]
    if "stop_timeout" in service:
        value = service["stop_timeout"]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise UnitError(f"{path}: invalid value for 'service.stop_timeout': {value!r}; allowed: seconds above 0")
        out["stop_timeout"] = float(value)
    return out


@dataclass
class UnitOptions:
    """The inputs of `render_unit` (see `lgembed unit --help`).

    Attributes:
        name: the unit's name without `.service`.
        user: the dedicated system user (its primary group has the same name).
        exec_start: the ExecStart= command line; None builds
            `<python> -m lgembed serve --config <config>` plus the flags below.
        config: the service config ExecStart passes to `lgembed serve`.
        db: the LMDB environment directory (the only writable place).
        device: the device file, or None.
        http: "HOST:PORT" of the API, "" when it is disabled.
        watchdog: WatchdogSec= in seconds (0: no watchdog).
        memory_max: MemoryMax= (systemd's size syntax).
        stop_timeout: the service's drain budget (TimeoutStopSec= adds a margin).
        simulate: the device's adapters run on simulators (no device access).
        extra_paths: other paths the service reads (config, token, device file), to keep
            them visible under ProtectHome=.
        serve_flags: flags ExecStart passes to `lgembed serve` after `--config`.
        python: the interpreter ExecStart runs (default: this one).
    """

    name: str = "lgembed"
    user: str = DEFAULT_USER
    exec_start: str | None = None
    config: str = DEFAULT_CONFIG
    db: str = DEFAULT_DB
    device: str | None = None
    http: str = "127.0.0.1:8123"
    watchdog: float = DEFAULT_WATCHDOG
    memory_max: str = DEFAULT_MEMORY_MAX
    stop_timeout: float = DEFAULT_STOP_TIMEOUT
    simulate: bool = False
    extra_paths: Sequence[str] = ()
    serve_flags: Sequence[str] = ()
    python: str = field(default_factory=lambda: sys.executable)

    def check(self) -> None:
        """Raises:
        UnitError: an option has a value systemd or the service would not accept.
        """
        if not _NAME_RE.match(self.name) or self.name.endswith(".service"):
            raise UnitError(
                f"--name: {self.name!r} is not a unit name; allowed: letters, digits and :_.- (without .service)"
            )
        if not _USER_RE.match(self.user):
            raise UnitError(
                f"--user: {self.user!r} is not a user name; allowed: [a-z_][a-z0-9_-]*, at most 32 characters"
            )
        if self.watchdog < 0 or self.watchdog != self.watchdog:
            raise UnitError(f"--watchdog: must be 0 (off) or more seconds (got {self.watchdog!r})")
        if not _MEMORY_RE.match(self.memory_max):
            raise UnitError(
                f"--memory-max: {self.memory_max!r} is not a size; allowed: bytes with an optional K, M, G or T "
                "suffix (e.g. 256M), a percentage (e.g. 20%), or infinity"
            )
        if not os.path.isabs(self.db):
            raise UnitError(f"--db: {self.db!r} must be an absolute path (the unit has no working directory)")
        if self.exec_start is not None:
            try:
                words = shlex.split(self.exec_start)
            except ValueError as e:
                raise UnitError(f"--exec: {self.exec_start!r} cannot be split into words ({e})") from None
            first = words[0].lstrip("@-:+!") if words else ""
            if not first.startswith("/"):
                raise UnitError(f"--exec: {self.exec_start!r} must start with an absolute path (systemd runs no shell)")
        if self.http:
            _host, sep, port = self.http.rpartition(":")
            if not sep or not port.isdigit() or not 0 < int(port) < 65536:
                raise UnitError(
                    f"--http: {self.http!r} is not HOST:PORT with a port from 1 to 65535 ('' disables the API)"
                )


def _quote(word: str) -> str:
    """One ExecStart= word: `%` escaped as `%%` (specifiers), quoted when it has spaces or quotes."""
    word = word.replace("%", "%%")
    if word and not re.search(r"[\s\"'\\;$]", word):
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"').replace("$", "$$") + '"'


def _state_directory(db: str) -> str | None:
    norm = os.path.normpath(db)
    if norm.startswith("/var/lib/") and len(norm) > len("/var/lib/"):
        return norm[len("/var/lib/") :]
    return None


def _under_home(path: str) -> bool:
    norm = os.path.normpath(path)
    return any(norm == h or norm.startswith(h + "/") for h in _HOME_DIRS)


def _loopback(http: str) -> bool:
    from lgembed.service.config import is_loopback

    return is_loopback(http.rpartition(":")[0])


def render_unit(options: UnitOptions, needs: Sequence[DeviceNeed] = ()) -> str:
    """The unit file's text for `options` and the adapters' `needs`.

    Raises:
        UnitError: an option is invalid (see `UnitOptions.check`).
    """
    import lgembed

    options.check()
    live = [n for n in needs if not n.simulated and not options.simulate]
    nodes = list(dict.fromkeys(node for n in live for node in n.nodes))
    groups = list(dict.fromkeys(n.group for n in live if n.group))
    families = list(dict.fromkeys([*BASE_FAMILIES, *(f for n in live for f in n.families)]))
    sysfs_rw = list(dict.fromkeys(p for n in live for p in n.paths_rw))
    interfaces = list(dict.fromkeys(n.interface for n in live if n.interface))
    state_dir = _state_directory(options.db)
    if options.exec_start is not None:
        exec_start = options.exec_start
    else:
        words = [options.python, "-m", "lgembed", "serve", "--config", options.config, *options.serve_flags]
        exec_start = " ".join(_quote(w) for w in words)
    seen_paths = [options.db, options.config, options.python, *(options.extra_paths or ())]
    if options.device:
        seen_paths.append(options.device)
    home = any(_under_home(p) for p in seen_paths if p)
    timeout_stop = options.stop_timeout + STOP_MARGIN

    lines = [
        f"# {options.name}.service: generated by `lgembed unit` (lgembed {lgembed.__version__}).",
        "# Before enabling it:",
        f"#   useradd --system --home-dir {options.db} --shell /usr/sbin/nologin {options.user}",
    ]
    if not state_dir:
        lines.append(f"#   install -d -o {options.user} -g {options.user} -m 0700 {options.db}")
    lines += [
        f"#   cp {options.name}.service /etc/systemd/system/ && systemctl daemon-reload && systemctl enable --now {options.name}",
    ]
    for n in live:
        if n.hint:
            lines.append(f"# adapter {n.adapter} ({n.kind}): {n.hint}")
    lines += [
        "",
        "[Unit]",
        f"Description=lgembed graph service {options.name}",
    ]
    if options.http and not _loopback(options.http):
        lines += ["Wants=network-online.target", "After=network-online.target"]
    else:
        lines.append("After=network.target")
    for iface in interfaces:
        lines += [f"Wants=sys-subsystem-net-devices-{iface}.device", f"After=sys-subsystem-net-devices-{iface}.device"]
    lines += [
        "StartLimitIntervalSec=0",
        "",
        "[Service]",
        "Type=notify",
        "NotifyAccess=main",
        f"ExecStart={exec_start}",
    ]
    if options.watchdog:
        lines.append(f"WatchdogSec={_seconds(options.watchdog)}")
    lines += [
        "Restart=on-failure",
        f"RestartSec={RESTART_SEC}",
        "RestartPreventExitStatus=2",
        f"TimeoutStopSec={_seconds(timeout_stop)}",
        "Environment=PYTHONUNBUFFERED=1",
        f"User={options.user}",
        f"Group={options.user}",
    ]
    if groups:
        lines.append(f"SupplementaryGroups={' '.join(groups)}")
    if state_dir:
        lines += [f"StateDirectory={state_dir}", "StateDirectoryMode=0700"]
    lines += [
        "UMask=0077",
        f"MemoryMax={options.memory_max}",
        "",
        "# sandbox",
        "NoNewPrivileges=yes",
        "ProtectSystem=strict",
        f"ProtectHome={'read-only' if home else 'yes'}",
        "PrivateTmp=yes",
        "PrivateMounts=yes",
    ]
    rw = ([] if state_dir else [options.db]) + sysfs_rw
    if rw:
        lines.append(f"ReadWritePaths={' '.join(_quote(p) for p in rw)}")
    lines.append("DevicePolicy=closed")
    if nodes:
        lines += [f"DeviceAllow={_quote(path)} {mode}" for path, mode in nodes]
    else:
        lines.append("PrivateDevices=yes")
    if not groups:
        lines.append("PrivateUsers=yes")
    if not options.http and not interfaces:
        lines.append("PrivateNetwork=yes")
    lines += [
        "ProtectKernelTunables=yes",
        "ProtectKernelModules=yes",
        "ProtectKernelLogs=yes",
        "ProtectControlGroups=yes",
        "ProtectClock=yes",
        "ProtectHostname=yes",
        "ProtectProc=invisible",
        "ProcSubset=pid",
        "RestrictNamespaces=yes",
        "RestrictRealtime=yes",
        "RestrictSUIDSGID=yes",
        "LockPersonality=yes",
        "MemoryDenyWriteExecute=yes",
        "RemoveIPC=yes",
        "KeyringMode=private",
        "CapabilityBoundingSet=",
        "AmbientCapabilities=",
        "SystemCallArchitectures=native",
        "SystemCallFilter=@system-service",
        "SystemCallFilter=~@privileged @resources",
        "SystemCallErrorNumber=EPERM",
        f"RestrictAddressFamilies={' '.join(families)}",
        "",
        "[Install]",
        "WantedBy=multi-user.target",
        "",
    ]
    return "\n".join(lines)


def _seconds(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}s"
