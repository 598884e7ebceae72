"""`lgembed doctor [--db DIR] [--device FILE]`: what a bug report and a deployment check need.

Why: "it works on my laptop" fails on a board for reasons no traceback names: the pure
build running where the compiled one was expected, a library missing, the LMDB map
nearly full, a device node owned by a group the service user is not in, a process that
is not under systemd after all. One command reports all of it, as JSON for scripts
(`--text` for people), and exits 1 when something is broken (the problems listed).

Nothing is opened for writing: the LMDB environment is opened read-only, device nodes
are only checked with `stat`/`access`, and library versions come from package
metadata (no hardware library is imported).
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from lgembed.cli._common import CliError, emit

__all__ = ("LIBRARIES", "add_arguments", "collect", "main")

LIBRARIES = ("msgpack", "lmdb", "pyserial", "python-can", "python-periphery", "tomli", "langgraph-sdk")
"""Distributions whose installed version the report lists (None when not installed)."""
_LOW_DISK = 16 * 1024 * 1024
# bytes free on the database's file system below which doctor warns (flash fills up)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Adds `doctor`'s arguments to `parser`."""
    parser.add_argument("--db", metavar="DIR", help="an LMDB environment to report on (size, use, readers)")
    parser.add_argument("--device", metavar="FILE", help="a device file: check each adapter's device node and access")
    parser.add_argument("--text", action="store_true", help="a report for people instead of JSON")


def main(args: argparse.Namespace) -> int:
    """Prints the report; returns 0, or 1 when a problem was found."""
    report = collect(args.db, args.device)
    if args.text:
        _print_text(report)
    else:
        emit(report, pretty=True)
    return 0 if report["ok"] else 1


def collect(db: str | None = None, device: str | None = None) -> dict[str, Any]:
    """The doctor's report: build, versions, platform, user, systemd, and --db / --device.

    Returns:
        A dict with "ok", "problems" (each breaks something) and "warnings".
    """
    problems: list[str] = []
    warnings: list[str] = []
    report: dict[str, Any] = {
        "ok": True,
        "lgembed": _build(warnings),
        "python": {
            "version": sys.version.split()[0],
            "implementation": sys.implementation.name,
            "executable": sys.executable,
        },
        "versions": _versions(),
        "platform": _platform(),
        "user": _user(),
        "systemd": _systemd(),
    }
    if db is not None:
        report["db"] = _db(db, problems, warnings)
    if device is not None:
        report["device"] = _device(device, problems, warnings)
    report["problems"] = problems
    report["warnings"] = warnings
    report["ok"] = not problems
    return report


def _build(warnings: list[str]) -> dict[str, Any]:
    import lgembed
    from lgembed import _engine

    build = _engine.IMPLEMENTATION
    if _engine.MODE != "off" and build != "c":
        warnings.append(
            f"the pure-Python build is in use although LGEMBED_EXTENSIONS={_engine.MODE}: "
            "install a wheel for this platform or build with a C compiler"
        )
    return {
        "version": lgembed.__version__,
        "build": build,
        "LGEMBED_EXTENSIONS": _engine.MODE,
        "path": os.path.dirname(lgembed.__file__),
    }


def _versions() -> dict[str, str | None]:
    from importlib import metadata

    out: dict[str, str | None] = {}
    for name in LIBRARIES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read()
    except OSError:
        return None


def _platform() -> dict[str, Any]:
    import platform

    os_name = None
    text = _read("/etc/os-release") or ""
    for line in text.splitlines():
        if line.startswith("PRETTY_NAME="):
            os_name = line.split("=", 1)[1].strip().strip('"')
    memory_kb = None
    for line in (_read("/proc/meminfo") or "").splitlines():
        if line.startswith("MemTotal:"):
            memory_kb = int(line.split()[1])
    model = (_read("/proc/device-tree/model") or "").strip("\x00\n") or None
    libc = platform.libc_ver()
    return {
        "system": platform.system(),
        "machine": platform.machine(),
        "kernel": platform.release(),
        "os": os_name,
        "board": model,
        "libc": f"{libc[0]} {libc[1]}".strip() or None,
        "cpus": os.cpu_count(),
        "memory_kb": memory_kb,
    }


def _group_name(gid: int) -> str:
    import grp

    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return str(gid)


def _user() -> dict[str, Any]:
    import pwd

    uid = os.geteuid()
    try:
        name = pwd.getpwuid(uid).pw_name
    except KeyError:
        name = str(uid)
    gids = sorted(set(os.getgroups()) | {os.getegid()})
    return {"uid": uid, "name": name, "groups": [_group_name(g) for g in gids]}


def _systemd() -> dict[str, Any]:
    pid1 = (_read("/proc/1/comm") or "").strip() or None
    env = {k: os.environ.get(k) for k in ("INVOCATION_ID", "NOTIFY_SOCKET", "JOURNAL_STREAM", "WATCHDOG_USEC")}
    return {
        "under_systemd": bool(env["INVOCATION_ID"] or env["NOTIFY_SOCKET"]),
        "booted_with_systemd": os.path.isdir("/run/systemd/system"),
        "pid1": pid1,
        **env,
    }


def _db(path: str, problems: list[str], warnings: list[str]) -> dict[str, Any]:
    from lgembed.cli._common import env_exists, probe_env

    try:
        info = probe_env(env_exists(path))
    except CliError as e:
        problems.append(str(e))
        return {"path": path}
    try:
        st = os.statvfs(info["path"])
        info["disk_free_bytes"] = min(st.f_bavail, st.f_bfree) * st.f_frsize
        if info["disk_free_bytes"] < _LOW_DISK:
            warnings.append(
                f"--db {path}: only {info['disk_free_bytes']} bytes free on its file system; a full disk fails "
                "runs (nothing committed is lost). Free space or move the environment"
            )
    except OSError:
        info["disk_free_bytes"] = None
    if not info["lgembed"]:
        problems.append(f"--db {path}: an LMDB environment, but not one lgembed wrote (no 'lgembed.format' database)")
    if info.get("stale_readers"):
        warnings.append(
            f"--db {path}: {info['stale_readers']} reader slot(s) of dead processes; LMDB clears them at the "
            "next writer's start (they keep freed pages from being reused until then)"
        )
    if not info["lock"]:
        warnings.append(
            f"--db {path}: lock.mdb is not writable by this user: a service running as another user cannot be joined"
        )
    return info


def _device(path: str, problems: list[str], warnings: list[str]) -> dict[str, Any]:
    from lgembed.service.unit import UnitError, device_needs, read_device_file

    try:
        needs = device_needs(read_device_file(path), path)
    except UnitError as e:
        problems.append(str(e))
        return {"file": path, "adapters": []}
    adapters = []
    for need in needs:
        entry: dict[str, Any] = {
            "name": need.adapter,
            "kind": need.kind,
            "driver": need.driver,
            "simulated": need.simulated,
        }
        if need.simulated:
            entry["nodes"] = []
            adapters.append(entry)
            continue
        entry["nodes"] = [_check_node(need, node, mode, problems) for node, mode in need.check]
        if need.interface:
            entry["interface"] = need.interface
            state = (_read(f"/sys/class/net/{need.interface}/operstate") or "").strip() or None
            entry["operstate"] = state
            if state is not None and state not in ("up", "unknown"):
                warnings.append(f"adapter {need.adapter}: CAN interface {need.interface} is {state}. Fix: {need.hint}")
        if need.hint:
            entry["hint"] = need.hint
        adapters.append(entry)
    return {"file": path, "adapters": adapters}


def _check_node(need: Any, path: str, mode: str, problems: list[str]) -> dict[str, Any]:
    import grp
    import pwd

    out: dict[str, Any] = {"path": path, "need": mode, "exists": os.path.exists(path)}
    what = f"adapter {need.adapter} ({need.kind})"
    if not out["exists"]:
        thing = "network interface" if mode == "exists" else "device node"
        problems.append(
            f"{what}: {thing} {path} does not exist. Fix: {need.hint or 'check the device file and the board'}"
        )
        return out
    if mode == "exists":
        out["access"] = True
        return out
    flags = os.R_OK | (os.W_OK if "w" in mode else 0)
    out["access"] = os.access(path, flags)
    st = os.stat(path)
    group = _group_name(st.st_gid)
    out.update({"owner": _owner(st.st_uid), "group": group, "mode": oct(st.st_mode & 0o777)})
    if out["access"]:
        return out
    in_session = st.st_gid in os.getgroups() or st.st_gid == os.getegid()
    try:
        user = pwd.getpwuid(os.geteuid()).pw_name
        configured = st.st_gid in os.getgrouplist(user, os.getegid())
    except (KeyError, OSError):
        user, configured = str(os.geteuid()), in_session
    out["user_in_group"] = in_session
    if configured and not in_session:
        fix = f"{user} is in group {group} but this session is not: log in again (a service: restart it)"
    elif st.st_mode & 0o060 == 0:
        fix = f"the node's group {group} has no access either (mode {oct(st.st_mode & 0o777)}); {need.hint}"
    else:
        try:
            grp.getgrgid(st.st_gid)
            fix = f"usermod -aG {group} {user} (then log in again), or {need.hint}"
        except KeyError:
            fix = need.hint
    problems.append(
        f"{what}: {user} cannot {'read and write' if 'w' in mode else 'read'} {path} (owner {out['owner']}, group {group}, mode {out['mode']}). Fix: {fix}"
    )
    return out


def _owner(uid: int) -> str:
    import pwd

    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)


def _print_text(report: dict[str, Any]) -> None:
    b, p, s = report["lgembed"], report["platform"], report["systemd"]
    lines = [
        f"lgembed {b['version']}: {b['build']} build (LGEMBED_EXTENSIONS={b['LGEMBED_EXTENSIONS']})",
        f"Python {report['python']['version']} ({report['python']['executable']})",
        "libraries: " + ", ".join(f"{k} {v}" for k, v in report["versions"].items() if v),
        f"platform: {p['os'] or p['system']}, {p['machine']}, kernel {p['kernel']}"
        + (f", {p['board']}" if p["board"] else ""),
        f"user: {report['user']['name']} (groups: {', '.join(report['user']['groups'])})",
        f"systemd: {'running under systemd' if s['under_systemd'] else 'not under systemd'}; PID 1 is {s['pid1']}",
    ]
    db = report.get("db")
    if db and "map_size" in db:
        lines.append(
            f"db {db['path']}: {db['used_bytes']} of {db['map_size']} bytes of map used ({db['used_percent']}%), "
            f"{db['readers']}/{db['max_readers']} readers, databases: {', '.join(db['databases'])}"
        )
    for a in (report.get("device") or {}).get("adapters", []):
        if a["simulated"]:
            lines.append(f"adapter {a['name']} ({a['kind']}): simulated")
        for n in a.get("nodes", []):
            state = "missing" if not n["exists"] else "ok" if n.get("access") else "NO ACCESS"
            lines.append(f"adapter {a['name']} ({a['kind']}): {n['path']}: {state}")
    for w in report["warnings"]:
        lines.append(f"warning: {w}")
    for problem in report["problems"]:
        lines.append(f"PROBLEM: {problem}")
    lines.append("ok" if report["ok"] else f"{len(report['problems'])} problem(s)")
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()
