"""`lgembed unit`: print the hardened systemd unit for `lgembed serve`.

Why: the unit is derived from the same files the service reads (its config and the
device file), so the sandbox grants exactly what the service needs; see
`lgembed.service.unit` for every decision. Flags override the config's `[service]`
values and are passed on to `lgembed serve` in ExecStart, so the unit and the service
agree on where the database, the device file and the API are.

    lgembed unit --config /etc/lgembed/service.toml > /etc/systemd/system/lgembed.service

Warnings (a device group this machine does not have, running as root) go to stderr;
the unit goes to stdout.
"""

from __future__ import annotations

import argparse
import os
import sys

from lgembed.cli._common import CliError, UsageError

__all__ = ("add_arguments", "main")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Adds `unit`'s arguments to `parser`."""
    from lgembed.service import unit as u

    parser.add_argument("--name", default="lgembed", help="the unit's name, without .service (default: lgembed)")
    parser.add_argument("--user", default=u.DEFAULT_USER, help=f"the dedicated system user (default: {u.DEFAULT_USER})")
    parser.add_argument(
        "--exec",
        dest="exec_start",
        metavar="CMD",
        help="the ExecStart= command line (default: this Python, -m lgembed serve --config FILE)",
    )
    parser.add_argument(
        "--config",
        metavar="FILE",
        help=f"the service config (read for db, http, device; default ExecStart uses {u.DEFAULT_CONFIG})",
    )
    parser.add_argument(
        "--device",
        metavar="FILE",
        help="the device file: DeviceAllow=, SupplementaryGroups= and AF_CAN for its adapters",
    )
    parser.add_argument(
        "--db", metavar="DIR", help=f"the LMDB environment (default: the config's, else {u.DEFAULT_DB})"
    )
    parser.add_argument(
        "--watchdog",
        type=float,
        default=u.DEFAULT_WATCHDOG,
        metavar="SEC",
        help=f"WatchdogSec= (default {u.DEFAULT_WATCHDOG:g}; 0: none)",
    )
    parser.add_argument(
        "--memory-max",
        default=u.DEFAULT_MEMORY_MAX,
        metavar="SIZE",
        help=f"MemoryMax= (default {u.DEFAULT_MEMORY_MAX})",
    )
    parser.add_argument(
        "--http",
        metavar="HOST:PORT",
        help='the API address (default: the config\'s, else 127.0.0.1:8123; "" disables it)',
    )


def main(args: argparse.Namespace) -> int:
    """Prints the unit; returns 0.

    Raises:
        UsageError: an option's value is invalid (exit 1).
        CliError: the config or device file is missing or invalid (exit 2).
        The messages name the option or file, the value and what is allowed.
    """
    from lgembed.service import unit as u

    try:
        service = u.read_service_config(args.config) if args.config else {}
        db = args.db or service.get("db") or u.DEFAULT_DB
        device = args.device or service.get("device") or None
        http = args.http if args.http is not None else service.get("http", "127.0.0.1:8123")
        simulate = bool(service.get("simulate", False))
        needs = []
        if device:
            device = os.path.abspath(device)
            needs = u.device_needs(u.read_device_file(device), device, simulate=simulate)
        serve_flags: list[str] = []
        if args.db:
            serve_flags += ["--db", os.path.abspath(args.db)]
        if args.device:
            serve_flags += ["--device", device]
        if args.http is not None:
            serve_flags += ["--http", args.http]
        options = u.UnitOptions(
            name=args.name,
            user=args.user,
            exec_start=args.exec_start,
            config=os.path.abspath(args.config) if args.config else u.DEFAULT_CONFIG,
            db=os.path.abspath(db),
            device=device,
            http=http,
            watchdog=args.watchdog,
            memory_max=args.memory_max,
            stop_timeout=service.get("stop_timeout", u.DEFAULT_STOP_TIMEOUT),
            simulate=simulate,
            extra_paths=[p for p in (service.get("token_file"),) if p],
            serve_flags=serve_flags,
        )
    except u.UnitError as e:
        raise CliError(str(e)) from e  # a config or device file problem: exit 2
    try:
        text = u.render_unit(options, needs)
    except u.UnitError as e:
        raise UsageError(str(e)) from e  # an option's value: exit 1
    _warn(args, needs, simulate)
    sys.stdout.write(text)
    sys.stdout.flush()
    return 0


def _warn(args: argparse.Namespace, needs: list, simulate: bool) -> None:
    import grp

    if args.user == "root":
        print(
            "lgembed unit: warning: --user root gives up most of the sandbox; use a dedicated system user",
            file=sys.stderr,
        )
    for group in dict.fromkeys(n.group for n in needs if n.group and not n.simulated and not simulate):
        try:
            grp.getgrnam(group)
        except KeyError:
            print(
                f"lgembed unit: warning: group {group!r} does not exist on this machine; on the board the service "
                f"fails to start (status 216/GROUP) without it. Fix: groupadd --system {group} and a udev rule "
                "giving it the device (see the unit's comments)",
                file=sys.stderr,
            )
