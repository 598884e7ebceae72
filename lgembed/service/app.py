"""`lgembed serve`: graphs as a long-running service under systemd.

Why: on a board a graph is not run from a notebook. It starts at boot, tells systemd
when it can serve, is restarted by the watchdog when it hangs, finishes its step and
checkpoints when stopped, and resumes cut-off runs after a restart or a power cut.
This module is that lifecycle; the parts live beside it: `config` (file and flags),
`loader` (graph references to compiled graphs, shared with `lgembed run`), `runs` (RunManager: runs on worker threads, checkpointed every superstep), `http`
(ApiServer: LangGraph's Agent Server API), `triggers` (timers, hardware events),
`notify` (sd_notify), `logs` (journald lines, redaction).

Lifecycle:

1. Start: open the LMDB environment (LmdbSaver, and LmdbStore on the same env), the
   device file's adapters, the graphs (compiled with that saver and store); create the
   RunManager; restart runs a SIGTERM, SIGKILL or power cut left "pending"/"running"
   (`resume_interrupted`); start the API and the triggers; then READY=1.
2. Serve: the main thread loops, and every WATCHDOG_USEC/2 sends WATCHDOG=1, but only
   while healthy: the loop runs and no run's superstep has been going for longer than
   `step_timeout`. A node that hangs thus stops the pets, and systemd kills and
   restarts the service (`WatchdogSec`, `Restart=on-failure`); the restarted service
   resumes the run from its last checkpoint. STATUS= tells what the service does.
3. Stop (SIGTERM/SIGINT): STOPPING=1; triggers stop; the RunManager stops accepting
   runs (the API answers 503 to new ones, reads still work) and lets running
   supersteps finish and checkpoint (`drain(stop_timeout)`); then the API and the
   environment close and the process exits 0. A second signal exits at once (the
   environment is crash-safe: committed checkpoints are never lost).

Several `lgembed serve` processes may share one environment (LMDB: one writer at a
time, many readers). Only the one holding `<db>/lgembed-serve.lock` restarts cut-off
runs at start, so a second process never runs a run the first is still running.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import time
from typing import Any

from lgembed.service.config import ConfigError, GraphSpec, ServiceConfig, load_config
from lgembed.service.loader import LoadError, load_target, resolve_graph
from lgembed.service.notify import Notifier, watchdog_interval

__all__ = ("LOCK_FILE", "Service", "add_arguments", "build_graph", "load_graph", "main", "run")

log = logging.getLogger("lgembed.service")

LOCK_FILE = "lgembed-serve.lock"
"""The file in the environment directory whose flock marks the service that resumes runs."""

IDLE_TICK = 1.0
# seconds between health checks / STATUS updates when systemd set no watchdog

_STOP_MARGIN = 0.5
# seconds of stop_timeout kept for closing the API and the environment after the drain


def build_graph(obj: Any, spec: GraphSpec, *, device: Any, saver: Any, store: Any) -> Any:
    """A compiled graph that checkpoints to `saver`, from what a graph reference names
    (`lgembed.service.loader.resolve_graph` with the service's policy: a compiled graph's
    own checkpointer is replaced by `saver`, with a warning).

    `obj` may be a compiled graph, a builder (compiled with `saver` and `store`), or a
    callable taking the Device (or nothing) that returns either.

    Raises:
        ConfigError: `obj` is none of those, or the factory or `compile()` failed (the
            cause chained).
    """
    try:
        return resolve_graph(obj, spec.path, checkpointer=saver, store=store, device=device, own_checkpointer="replace")
    except LoadError as e:
        raise ConfigError(str(e), key=f"graphs.{spec.name}.path") from e


def load_graph(spec: GraphSpec, *, device: Any, saver: Any, store: Any) -> Any:
    """The compiled graph of a `[graphs.NAME]` entry: its reference loaded (relative to
    the config file's directory) and built with `build_graph`.

    Raises:
        ConfigError: the reference cannot be loaded, or `build_graph` fails.
    """
    try:
        obj = load_target(spec.path, spec.base_dir)
    except LoadError as e:
        raise ConfigError(str(e), key=f"graphs.{spec.name}.path") from e
    return build_graph(obj, spec, device=device, saver=saver, store=store)


class Service:
    """One `lgembed serve`: usable in-process (tests) as well as from `main`.

        service = Service(config)
        service.start()                  # READY=1 when it returns
        threading.Thread(target=service.serve).start()
        ...
        service.request_stop("test")     # serve() drains, closes and returns 0

    Args:
        config: the checked ServiceConfig.
        notifier: where sd_notify states go (default: $NOTIFY_SOCKET).
    """

    def __init__(self, config: ServiceConfig, *, notifier: Notifier | None = None) -> None:
        self.config = config
        self.notifier = notifier if notifier is not None else Notifier()
        self.saver: Any = None
        self.store: Any = None
        self.device: Any = None
        self.graphs: dict[str, Any] = {}
        self.manager: Any = None
        self.api: Any = None
        self.triggers: Any = None
        self.primary = False
        self.resumed: list[str] = []
        self.drained: bool | None = None
        self._lock_fd: int | None = None
        self._stop = threading.Event()
        self._stop_reason = ""
        self._started = False
        self._status = ""
        self._stalled: list[str] = []

    # --- start ------------------------------------------------------------------------

    @property
    def url(self) -> str | None:
        """The API's base URL (the real port when configured with port 0), or None."""
        return None if self.api is None else self.api.url

    def start(self) -> None:
        """Opens everything, resumes cut-off runs, starts the API and triggers, sends READY=1.

        On failure everything opened so far is closed again.

        Raises:
            ConfigError: a token file, graph reference or trigger that cannot be used.
            LmdbError: the environment cannot be opened.
            EdgeError: the device file cannot be opened.
            OSError: the API's address cannot be bound.
        """
        cfg = self.config
        try:
            token = cfg.token()
            self._open_storage()
            if cfg.device:
                from lgembed.edge import load_device

                self.device = load_device(cfg.device, simulate=cfg.simulate)
                log.info("device %s opened%s", cfg.device, " (simulated)" if self.device.simulated else "")
            for name, spec in cfg.graphs.items():
                self.graphs[name] = load_graph(spec, device=self.device, saver=self.saver, store=self.store)
            from lgembed.service.runs import RunManager

            self.manager = RunManager(self.graphs, self.saver, self.store, workers=cfg.workers)
            self.primary = self._take_lock()
            if self.primary:
                self.resumed = list(self.manager.resume_interrupted())
                if self.resumed:
                    log.info("resumed %d cut-off run(s) from their last checkpoint: %s", len(self.resumed), ", ".join(self.resumed))
            else:
                log.info("another lgembed serve holds %s: runs it cut off are left to it", os.path.join(cfg.db, LOCK_FILE))
            if cfg.http is not None:
                from lgembed.service.http import ApiServer

                self.api = ApiServer(self.manager, cfg.http[0], cfg.http[1], token=token)
                self.api.start()
                log.info("API on %s%s", self.url, " (token required)" if token else "")
            if cfg.triggers:
                from lgembed.service.triggers import Triggers

                self.triggers = Triggers(cfg.triggers, self.manager, self.device)
                self.triggers.start()
        except BaseException:
            self._close(drained=True)
            raise
        self._started = True
        self._status = self.status_text()
        ready = ["READY=1", f"STATUS={self._status}", f"MAINPID={os.getpid()}"]
        if self.url:
            ready.append(f"X_LGEMBED_HTTP={self.url}")
        self.notifier.notify(*ready)
        log.info("ready: %s", self._status)

    def _open_storage(self) -> None:
        from lgembed.checkpoint.lmdb import LmdbSaver
        from lgembed.store.lmdb import LmdbStore

        cfg = self.config
        sizes = {k: v for k, v in (("map_size", cfg.map_size), ("max_map_size", cfg.max_map_size)) if v}
        if "max_map_size" in sizes and "map_size" not in sizes:
            from lgembed.checkpoint._lmdb_env import DEFAULT_MAP_SIZE

            sizes["map_size"] = min(DEFAULT_MAP_SIZE, sizes["max_map_size"])
        self.saver = LmdbSaver(cfg.db, fsync=cfg.fsync, **sizes)
        self.store = LmdbStore(env=self.saver.env, **sizes)
        log.info("LMDB environment %s (fsync=%s)", self.saver.path, self.saver.fsync)

    def _take_lock(self) -> bool:
        import fcntl

        path = os.path.join(self.config.db, LOCK_FILE)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        except OSError as e:
            log.warning("Opening %s: %s; cut-off runs are not resumed by this process", path, e.strerror or e)
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        self._lock_fd = fd
        return True

    # --- serve ------------------------------------------------------------------------

    def request_stop(self, reason: str = "") -> None:
        """Asks `serve` to drain and return (callable from a signal handler or another thread)."""
        self._stop_reason = self._stop_reason or reason
        self._stop.set()

    def stalled(self) -> list[str]:
        """Ids of runs whose current superstep has run longer than `step_timeout`."""
        try:
            return list(self.manager.stalled(self.config.step_timeout))
        except Exception as e:  # noqa: BLE001 - a broken manager is unhealthy, not a crashed loop
            log.error("Checking runs for stalled supersteps: %s: %s", type(e).__name__, e)
            return ["<manager error>"]

    def status_text(self) -> str:
        """The STATUS= line: what is served, runs done, the last error."""
        parts = [f"serving {len(self.graphs)} graph{'s' if len(self.graphs) != 1 else ''}"]
        if self.url:
            parts[0] += f" on {self.url}"
        stats = _manager_stats(self.manager)
        if stats:
            parts.append(", ".join(f"{v} {k}" for k, v in stats.items() if k != "last_error"))
        if self.triggers is not None:
            parts.append(f"{self.triggers.fired} triggered")
        last_error = (stats or {}).get("last_error") or (self.triggers.last_error if self.triggers else None)
        if self._stalled:
            parts.append(f"STALLED: superstep over {self.config.step_timeout:g} s in run {', '.join(self._stalled)}")
        if last_error:
            parts.append(f"last error: {str(last_error)[:200]}")
        return "; ".join(parts)

    def serve(self) -> int:
        """The main loop: pets the watchdog while healthy, updates STATUS=, and on a stop
        request drains and closes. Returns the exit status (0)."""
        if not self._started:
            self.start()
        interval = watchdog_interval()
        tick = min(interval, IDLE_TICK) if interval else IDLE_TICK
        if interval:
            log.info("systemd watchdog: pinging every %.3g s while no superstep runs over %g s", interval, self.config.step_timeout)
        while not self._stop.is_set():
            stalled = self.stalled()
            if stalled != self._stalled:
                if stalled:
                    log.error(
                        "run(s) %s: a superstep has run for more than step_timeout=%g s; %s",
                        ", ".join(stalled), self.config.step_timeout,
                        "watchdog pings stop, so systemd restarts the service" if interval else "no watchdog is set",
                    )  # fmt: skip
                else:
                    log.info("no stalled superstep any more%s", "; watchdog pings resume" if interval else "")
                self._stalled = stalled
            if interval and not stalled:
                self.notifier.notify("WATCHDOG=1")
            status = self.status_text()
            if status != self._status:
                self._status = status
                self.notifier.notify(f"STATUS={status}")
            self._stop.wait(tick)
        self.notifier.notify("STOPPING=1", "STATUS=stopping: finishing running supersteps")
        log.info("stopping (%s): draining runs for up to %g s", self._stop_reason or "requested", self.config.stop_timeout)
        self.shutdown()
        return 0

    # --- stop -------------------------------------------------------------------------

    def shutdown(self) -> bool:
        """Stops triggers, drains runs within `stop_timeout`, stops the API, closes the
        environment and the device. True when every run stopped in time (when not, the
        environment is left open for the process to exit: the runs resume at next start)."""
        deadline = time.monotonic() + self.config.stop_timeout
        if self.triggers is not None:
            self.triggers.stop(timeout=min(2.0, self.config.stop_timeout / 4))
        drained = True
        if self.manager is not None:
            budget = max(0.1, deadline - time.monotonic() - _STOP_MARGIN)
            try:
                drained = bool(self.manager.drain(budget))
            except Exception:
                log.exception("Draining runs failed")
                drained = False
        if drained:
            log.info("drained: running supersteps finished and were checkpointed")
        else:
            log.warning(
                "drain: runs still in a superstep after %g s; they resume from their last checkpoint at the next start",
                self.config.stop_timeout,
            )
        self._close(drained=drained, deadline=deadline)
        self.drained = drained
        return drained

    def _close(self, *, drained: bool, deadline: float | None = None) -> None:
        if self.triggers is not None:
            self.triggers.stop(timeout=0.5)
        if self.api is not None:
            t = threading.Thread(target=self.api.stop, name="lgembed-api-stop", daemon=True)
            t.start()
            t.join(None if deadline is None else max(0.1, deadline - time.monotonic()))
            self.api = None if not t.is_alive() else self.api
        if drained:
            for what, closer in (("run manager", self.manager), ("store", self.store), ("saver", self.saver)):
                if closer is not None:
                    try:
                        closer.close()
                    except Exception:
                        log.exception("Closing the %s failed", what)
            self.manager = self.store = self.saver = None
        if self.device is not None:
            try:
                self.device.close()
            except Exception:
                log.exception("Closing the device failed")
            self.device = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None
        self.notifier.close()


def _manager_stats(manager: Any) -> dict[str, Any] | None:
    """Run counts from the manager when it offers them (`stats()`), else None."""
    fn = getattr(manager, "stats", None)
    if not callable(fn):
        return None
    try:
        stats = fn()
    except Exception:  # noqa: BLE001 - STATUS= is informative; the loop must go on
        return None
    return dict(stats) if isinstance(stats, dict) else None


# --- command line -----------------------------------------------------------------------


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Adds `lgembed serve`'s arguments to `parser` (the CLI's `serve` subparser)."""
    parser.add_argument("target", nargs="?", metavar="MODULE:ATTR", help="a graph to serve (MODULE:ATTR or FILE.py:ATTR)")
    parser.add_argument("--config", metavar="FILE", help="the service config (TOML); flags override it")
    parser.add_argument("--graph-id", metavar="NAME", help="the id of MODULE:ATTR in the API (default: the module's name)")
    parser.add_argument("--db", metavar="DIR", help="the LMDB environment directory")
    parser.add_argument("--http", metavar="HOST:PORT", help='the API address (default 127.0.0.1:8123; "" disables it)')
    parser.add_argument("--token-file", metavar="FILE", help="a file holding the API token (needed off loopback)")
    parser.add_argument("--device", metavar="FILE", help="the edge layer's device file")
    parser.add_argument("--simulate", action="store_true", default=None, help="open the device's adapters on simulators")
    parser.add_argument("--stop-timeout", type=float, metavar="S", help="seconds to drain on SIGTERM (default 20)")
    parser.add_argument("--step-timeout", type=float, metavar="S", help="a longer superstep stops the watchdog pings (default 60)")
    parser.add_argument("--workers", type=int, metavar="N", help="runs executed at once (default 2)")
    parser.add_argument("--fsync", choices=("deferred", "commit", "always"), help="LmdbSaver's fsync policy")
    parser.add_argument("--max-map-size", type=int, metavar="BYTES", help="the LMDB map's size limit")
    parser.add_argument("--log-level", metavar="LEVEL", help="debug, info (default), warning, error")
    parser.add_argument(
        "--log-format", choices=("auto", "journal", "text"), default="auto",
        help="journal: <N>-prefixed lines without time (auto under journald); text: timestamped",
    )  # fmt: skip


def run(args: argparse.Namespace) -> int:
    """Runs the service for parsed arguments (see `add_arguments`); returns the exit status.

    0: stopped by SIGTERM/SIGINT after draining; 2: invalid configuration (the message
    names file, key, value and what is allowed); 1: the service could not start.
    """
    from lgembed.service import logs

    flags = {
        "db": args.db, "http": args.http, "token_file": args.token_file, "device": args.device,
        "simulate": args.simulate, "stop_timeout": args.stop_timeout, "step_timeout": args.step_timeout,
        "workers": args.workers, "fsync": args.fsync, "max_map_size": args.max_map_size, "log_level": args.log_level,
    }  # fmt: skip
    handler = logs.configure("info", args.log_format)
    try:
        config = load_config(args.config, target=args.target, graph_id=args.graph_id, **flags)
        logging.getLogger().setLevel(config.log_level.upper())
        token = config.token()
    except ConfigError as e:
        log.error("%s", e)
        return 2
    if token:
        handler.redactor.add(token)  # type: ignore[attr-defined]
    service = Service(config)
    signals_seen: list[int] = []

    def on_signal(signum: int, _frame: Any) -> None:
        signals_seen.append(signum)
        if len(signals_seen) > 1:
            log.warning("second %s: exiting without waiting for the drain", signal.Signals(signum).name)
            logging.shutdown()
            os._exit(1)
        service.request_stop(signal.Signals(signum).name)

    def on_hup(_signum: int, _frame: Any) -> None:
        log.info("SIGHUP: nothing to reload (restart the service to apply a new config); %s", service.status_text())

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
    previous[signal.SIGHUP] = signal.signal(signal.SIGHUP, on_hup)
    try:
        try:
            service.start()
        except ConfigError as e:
            log.error("%s", e)
            return 2
        except Exception as e:
            log.error("Starting the service failed: %s: %s", type(e).__name__, e, exc_info=log.isEnabledFor(logging.DEBUG))
            return 1
        status = service.serve()
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
    if not service.drained:
        # runs are still inside a node: their worker threads would keep the interpreter
        # from exiting; the environment is crash-safe, so leave without waiting for them
        logging.shutdown()
        os._exit(status)
    return status


def main(argv: list[str] | None = None) -> int:
    """`lgembed serve ...`: parses `argv` (the arguments after "serve") and runs the service.

    Returns:
        The exit status (see `run`); invalid arguments exit 2 through argparse.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["serve"]:
        argv = argv[1:]
    parser = argparse.ArgumentParser(prog="lgembed serve", description="Serve graphs as a service (systemd notify, local API).")
    add_arguments(parser)
    return run(parser.parse_args(argv))
