"""The configuration of `lgembed serve`: a TOML file and/or command-line flags, checked.

Why: a service is started by systemd from a file an operator edits, long after the
person who wrote the graph has left the room; a typo must stop the start with a message
that names the file, the key, the value and what is allowed (exit status 2), not
surface as a traceback an hour later. Flags override the file, so the simplest service
needs no file at all (`lgembed serve app.py:graph --db DIR --http 127.0.0.1:8123`).

    [service]
    db = "/var/lib/lgembed"              # LMDB environment (LmdbSaver + LmdbStore on one env)
    http = "127.0.0.1:8123"              # "" disables the API
    token_file = "/etc/lgembed/token"    # required for a non-loopback bind; never logged
    device = "/etc/lgembed/device.toml"  # optional: the edge layer's device file
    simulate = false                     # open the device's adapters on simulators
    stop_timeout = 20.0                  # seconds to drain on SIGTERM (< the unit's TimeoutStopSec)
    step_timeout = 60.0                  # a superstep running longer stops the watchdog pets
    workers = 2                          # runs executed at once
    log_level = "info"                   # debug | info | warning | error
    fsync = "deferred"                   # LmdbSaver's fsync policy: deferred | commit | always
    max_map_size = 1073741824            # bytes the LMDB map may grow to

    [graphs.thermostat]                  # the graph id (= the API's assistant/graph id)
    path = "thermostat_service.py:graph" # MODULE:ATTR or FILE.py:ATTR

    [[triggers]]
    kind = "interval"                    # every `every` seconds, a run with `input`
    graph = "thermostat"
    thread = "room-1"
    every = 5.0
    input = { tick = true }

    [[triggers]]
    kind = "event"                       # each event of an adapter of the device
    graph = "thermostat"
    thread = "door"
    source = "button"
    input_key = "event"                  # run input: {input_key: event.as_dict()} over `input`

Relative paths in a file are relative to the file's directory; on the command line,
to the working directory (a graph's FILE.py too: `GraphSpec.base_dir`, which
`lgembed.service.loader.load_target` is given).
"""

from __future__ import annotations

import ipaddress
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = (
    "DEFAULT_HTTP",
    "ConfigError",
    "GraphSpec",
    "ServiceConfig",
    "TriggerSpec",
    "is_loopback",
    "load_config",
    "parse_http",
)

DEFAULT_HTTP = "127.0.0.1:8123"
"""The API's address when neither the file nor the flags name one."""

TRIGGER_KINDS = ("interval", "event")
"""Values of a trigger's `kind`."""

MULTITASK_STRATEGIES = ("reject", "enqueue", "interrupt")
"""Values of a trigger's `multitask_strategy` (LangGraph's names)."""

LOG_LEVELS = ("debug", "info", "warning", "error", "critical")
FSYNC_POLICIES = ("deferred", "commit", "always")

_SERVICE_KEYS = (
    "db", "http", "token_file", "device", "simulate", "stop_timeout", "step_timeout",
    "workers", "log_level", "fsync", "map_size", "max_map_size",
)  # fmt: skip
_TRIGGER_KEYS = {
    "interval": ("kind", "graph", "thread", "every", "input", "multitask_strategy"),
    "event": ("kind", "graph", "thread", "source", "input_key", "input", "multitask_strategy"),
}


class ConfigError(ValueError):
    """The service configuration is invalid; the message names where, what and what is allowed.

    Attributes:
        source: the config file's path, or "command line".
        key: the dotted key (or flag) at fault, when there is one.
    """

    def __init__(self, message: str, source: str | None = None, key: str | None = None) -> None:
        super().__init__(message)
        self.source = source
        self.key = key


@dataclass(frozen=True)
class GraphSpec:
    """A served graph: its id and where it is defined.

    Attributes:
        name: the graph id (the API's assistant_id / graph_id).
        path: "MODULE:ATTR" or "FILE.py:ATTR".
        base_dir: the directory a relative FILE.py (and a bare MODULE) is looked up in.
    """

    name: str
    path: str
    base_dir: str


@dataclass(frozen=True)
class TriggerSpec:
    """One `[[triggers]]` entry.

    Attributes:
        kind: "interval" or "event".
        graph: the graph id that runs.
        thread: the thread the runs go to.
        input: the run input (for events: the base that the event is merged over).
        every: seconds between interval runs.
        source: the adapter whose events start runs.
        input_key: the input key an event goes to.
        multitask_strategy: what to do when the thread is busy (LangGraph's values);
            default "reject" for intervals (a busy tick is skipped) and "enqueue" for events
            (an event is not lost).
        index: the entry's position in the file (for messages).
    """

    kind: str
    graph: str
    thread: str
    input: dict[str, Any] = field(default_factory=dict)
    every: float | None = None
    source: str | None = None
    input_key: str = "event"
    multitask_strategy: str = "reject"
    index: int = 0


@dataclass
class ServiceConfig:
    """The checked configuration of one `lgembed serve`.

    Attributes:
        db: the LMDB environment directory.
        http: (host, port) of the API, or None when disabled.
        token_file: the file holding the API token (read by `token()`), or None.
        device: the device file, or None.
        simulate: open the device's adapters on simulators.
        stop_timeout: seconds the SIGTERM drain may take.
        step_timeout: a superstep running longer than this stops the watchdog pets.
        workers: runs executed at once.
        log_level: the logging level name.
        fsync: LmdbSaver's fsync policy, or None for its default.
        map_size: the LMDB map's initial size, or None for the default.
        max_map_size: the size the LMDB map may grow to, or None for the default.
        graphs: graph id -> GraphSpec.
        triggers: the triggers, in file order.
        source: the config file's path, or "command line".
    """

    db: str
    http: tuple[str, int] | None = None
    token_file: str | None = None
    device: str | None = None
    simulate: bool = False
    stop_timeout: float = 20.0
    step_timeout: float = 60.0
    workers: int = 2
    log_level: str = "info"
    fsync: str | None = None
    map_size: int | None = None
    max_map_size: int | None = None
    graphs: dict[str, GraphSpec] = field(default_factory=dict)
    triggers: list[TriggerSpec] = field(default_factory=list)
    source: str = "command line"

    def token(self) -> str | None:
        """The API token read from `token_file` (stripped), or None without one.

        Raises:
            ConfigError: the file cannot be read or is empty.
        """
        if not self.token_file:
            return None
        try:
            with open(self.token_file, encoding="utf-8") as f:
                token = f.read().strip()
        except OSError as e:
            msg = f"Reading the API token file {self.token_file}: {e.strerror or e}. Fix: create it (one line) or change token_file"
            raise ConfigError(msg, self.source, "token_file") from e
        if not token:
            msg = f"Reading the API token file {self.token_file}: it is empty. Fix: write the token into it (one line)"
            raise ConfigError(msg, self.source, "token_file")
        return token


# --- checks -----------------------------------------------------------------------------


def _bad(source: str, key: str, value: Any, allowed: str) -> ConfigError:
    return ConfigError(f"{source}: invalid value for '{key}': {value!r}; allowed: {allowed}", source, key)


def _number(source: str, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
        raise _bad(source, key, value, "a number of seconds above 0")
    return float(value)


def _int(source: str, key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _bad(source, key, value, "an integer of at least 1")
    return value


def _str(source: str, key: str, value: Any, allowed: str = "a non-empty string") -> str:
    if not isinstance(value, str) or not value:
        raise _bad(source, key, value, allowed)
    return value


def _choice(source: str, key: str, value: Any, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise _bad(source, key, value, ", ".join(choices))
    return value


def _table(source: str, key: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise _bad(source, key, value, "a table")
    return dict(value)


def _unknown(source: str, where: str, table: Mapping[str, Any], allowed: tuple[str, ...]) -> None:
    for k in table:
        if k not in allowed:
            key = f"{where}.{k}" if where else k
            msg = f"{source}: unknown key '{key}'; allowed{' in ' + where if where else ''}: {', '.join(allowed)}"
            raise ConfigError(msg, source, key)


def is_loopback(host: str) -> bool:
    """Whether `host` is a loopback address ("localhost", 127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def parse_http(value: Any, source: str = "command line", key: str = "--http") -> tuple[str, int] | None:
    """"HOST:PORT" ("[::1]:PORT" for IPv6) -> (host, port); "" -> None (API disabled).

    Raises:
        ConfigError: not that shape, or a port outside 0..65535.
    """
    allowed = 'HOST:PORT (e.g. "127.0.0.1:8123", "[::1]:8123", port 0 = any free port) or "" to disable the API'
    if not isinstance(value, str):
        raise _bad(source, key, value, allowed)
    if value == "":
        return None
    host, sep, port = value.rpartition(":")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not sep or not host or not port.isdigit() or int(port) > 65535:
        raise _bad(source, key, value, allowed)
    return host, int(port)


def _check_target(source: str, key: str, value: Any) -> str:
    allowed = "MODULE:ATTR or FILE.py:ATTR (e.g. 'myapp.graphs:graph', 'graphs/thermostat.py:graph')"
    if not isinstance(value, str):
        raise _bad(source, key, value, allowed)
    mod, sep, attr = value.rpartition(":")
    if not sep or not mod or not attr or not all(part.isidentifier() for part in attr.split(".")):
        raise _bad(source, key, value, allowed)
    return value


def _read_toml(path: str) -> dict[str, Any]:
    from lgembed import _toml

    try:
        return _toml.load(path, "service config")
    except _toml.TomlError as e:
        raise ConfigError(str(e), path) from e


def _graph_name(target: str) -> str:
    """The default graph id of a target: the module's (or file's) last name."""
    mod = target.rpartition(":")[0]
    base = os.path.basename(mod)
    if base.endswith(".py"):
        return base[:-3]
    return mod.rpartition(".")[2]


def load_config(
    path: str | os.PathLike | None = None,
    *,
    target: str | None = None,
    graph_id: str | None = None,
    **flags: Any,
) -> ServiceConfig:
    """Reads the config file (when given) and applies the command-line flags over it.

    Args:
        path: a TOML config file, or None for flags only.
        target: a graph given on the command line ("MODULE:ATTR" or "FILE.py:ATTR").
        graph_id: its graph id; default: the module's (file's) name.
        **flags: service keys given as flags (db, http, token_file, device, simulate,
            stop_timeout, step_timeout, workers, log_level, fsync, map_size,
            max_map_size); None means "not given".

    Returns:
        The checked ServiceConfig.

    Raises:
        ConfigError: the file cannot be read, or any value is invalid; the message
            names the file (or "command line"), the key, the value and what is allowed.
    """
    raw: dict[str, Any] = {}
    source, base = "command line", os.getcwd()
    if path is not None:
        source = os.fspath(path)
        base = os.path.dirname(os.path.abspath(source))
        raw = _read_toml(source)
        _unknown(source, "", raw, ("service", "graphs", "triggers"))
    service = _table(source, "service", raw.get("service", {}))
    _unknown(source, "service", service, _SERVICE_KEYS)
    values: dict[str, tuple[Any, str, str, str]] = {}  # key -> (value, source, key as shown, base dir)
    for k, v in service.items():
        values[k] = (v, source, f"service.{k}", base)
    for k, v in flags.items():
        if k not in _SERVICE_KEYS:
            msg = f"load_config: unknown flag {k!r}; allowed: {', '.join(_SERVICE_KEYS)}"
            raise TypeError(msg)
        if v is not None:
            values[k] = (v, "command line", "--" + k.replace("_", "-"), os.getcwd())

    def path_of(k: str) -> str | None:
        if k not in values:
            return None
        v, src, key, where = values[k]
        return os.path.normpath(os.path.join(where, _str(src, key, v, "a path (a non-empty string)")))

    db = path_of("db")
    if db is None:
        where = f"{source}: " if path is not None else ""
        msg = f"{where}no LMDB environment: set 'db' in [service] or pass --db DIR"
        raise ConfigError(msg, source, "db")
    cfg = ServiceConfig(db=db, source=source)
    http_value, http_src, http_key, _ = values.get("http", (DEFAULT_HTTP, "default", "http", base))
    cfg.http = parse_http(http_value, http_src, http_key)
    cfg.token_file = path_of("token_file")
    cfg.device = path_of("device")
    if "simulate" in values:
        v, src, key, _ = values["simulate"]
        if not isinstance(v, bool):
            raise _bad(src, key, v, "true or false")
        cfg.simulate = v
    for k in ("stop_timeout", "step_timeout"):
        if k in values:
            v, src, key, _ = values[k]
            setattr(cfg, k, _number(src, key, v))
    for k in ("workers", "map_size", "max_map_size"):
        if k in values:
            v, src, key, _ = values[k]
            setattr(cfg, k, _int(src, key, v))
    if cfg.map_size and cfg.max_map_size and cfg.max_map_size < cfg.map_size:
        src, key = values["max_map_size"][1:3]
        raise _bad(src, key, cfg.max_map_size, f"at least map_size ({cfg.map_size})")
    if "log_level" in values:
        v, src, key, _ = values["log_level"]
        cfg.log_level = _choice(src, key, v.lower() if isinstance(v, str) else v, LOG_LEVELS)
    if "fsync" in values:
        v, src, key, _ = values["fsync"]
        cfg.fsync = _choice(src, key, v, FSYNC_POLICIES)
    if cfg.http is not None and not is_loopback(cfg.http[0]) and not cfg.token_file:
        src, key = values["http"][1:3]
        msg = (
            f"{src}: '{key}' = {values['http'][0]!r} binds the API to a non-loopback address without a token. "
            "Fix: set token_file (or --token-file) to a file holding the API token, or bind to 127.0.0.1"
        )
        raise ConfigError(msg, src, key)

    graphs = _table(source, "graphs", raw.get("graphs", {}))
    for name, table in graphs.items():
        table = _table(source, f"graphs.{name}", table)
        _unknown(source, f"graphs.{name}", table, ("path",))
        if "path" not in table:
            msg = f"{source}: graph '{name}' has no 'path'; allowed: MODULE:ATTR or FILE.py:ATTR"
            raise ConfigError(msg, source, f"graphs.{name}.path")
        cfg.graphs[name] = GraphSpec(name, _check_target(source, f"graphs.{name}.path", table["path"]), base)
    if target is not None:
        _check_target("command line", "MODULE:ATTR", target)
        name = graph_id or _graph_name(target)
        if name in cfg.graphs:
            msg = f"command line: the graph id {name!r} of {target!r} is also in {source}. Fix: pass --graph-id NAME"
            raise ConfigError(msg, "command line", "--graph-id")
        cfg.graphs[name] = GraphSpec(name, target, os.getcwd())
    if not cfg.graphs:
        msg = f"{source}: no graph to serve. Fix: pass MODULE:ATTR, or add a [graphs.NAME] table with path = \"MODULE:ATTR\""
        raise ConfigError(msg, source, "graphs")

    triggers = raw.get("triggers", [])
    if not isinstance(triggers, list):
        raise _bad(source, "triggers", triggers, "an array of tables ([[triggers]])")
    for i, table in enumerate(triggers):
        cfg.triggers.append(_trigger(source, i, table, cfg))
    return cfg


def _trigger(source: str, i: int, table: Any, cfg: ServiceConfig) -> TriggerSpec:
    where = f"triggers[{i}]"
    table = _table(source, where, table)
    kind = _choice(source, f"{where}.kind", table.get("kind"), TRIGGER_KINDS)
    _unknown(source, where, table, _TRIGGER_KEYS[kind])
    graph = table.get("graph")
    if graph not in cfg.graphs:
        raise _bad(source, f"{where}.graph", graph, f"a graph id of this service ({', '.join(cfg.graphs)})")
    thread = _str(source, f"{where}.thread", table.get("thread"), "a thread id (a non-empty string)")
    inp = _table(source, f"{where}.input", table.get("input", {}))
    strategy = _choice(
        source, f"{where}.multitask_strategy", table.get("multitask_strategy", "reject" if kind == "interval" else "enqueue"),
        MULTITASK_STRATEGIES,
    )  # fmt: skip
    if kind == "interval":
        every = _number(source, f"{where}.every", table.get("every"))
        return TriggerSpec(kind, graph, thread, inp, every=every, multitask_strategy=strategy, index=i)
    src = _str(source, f"{where}.source", table.get("source"), "the name of an adapter of the device file")
    if cfg.device is None:
        msg = f"{source}: '{where}' is an event trigger, which needs a device file. Fix: set 'device' in [service] or pass --device FILE"
        raise ConfigError(msg, source, f"{where}.source")
    key = _str(source, f"{where}.input_key", table.get("input_key", "event"), "an input key (a non-empty string)")
    return TriggerSpec(kind, graph, thread, inp, source=src, input_key=key, multitask_strategy=strategy, index=i)
