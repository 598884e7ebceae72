"""What every `lgembed` subcommand shares: exit codes, errors, argument parsing, loading a
graph from `MODULE:ATTR`, JSON output, and opening an LMDB environment safely.

Why this module exists: the subcommands are scripts' and operators' way into lgembed,
so they must agree on the contract a shell sees (one exit code per outcome, JSON on
stdout, one clear line on stderr for an error) and on how a `MODULE:ATTR` becomes a
runnable graph (`load_target`, `resolve_graph`: `lgembed.service.loader`'s, which
`lgembed serve` uses too, with the command's errors).

Exit codes: 0 done, 1 usage (bad arguments, bad JSON in an argument), 2 error (the
module, the graph, the environment), 3 stopped at an interrupt (`lgembed run`).
"""

from __future__ import annotations

import argparse
import base64
import dataclasses
import datetime as _dt
import enum
import json
import math
import os
import sys
from typing import Any

from lgembed.service.loader import describe

__all__ = (
    "EXIT_ERROR",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_USAGE",
    "CliError",
    "Parser",
    "UsageError",
    "create_saver",
    "describe",
    "emit",
    "env_exists",
    "inspect_serde",
    "jsonable",
    "load_target",
    "open_readonly",
    "open_saver",
    "parse_json",
    "probe_env",
    "resolve_graph",
)

EXIT_OK = 0
EXIT_USAGE = 1
# bad arguments: an unknown option, a malformed MODULE:ATTR, JSON that does not parse
EXIT_ERROR = 2
# the work failed: a module that does not import, a graph error, a missing or damaged environment
EXIT_INTERRUPTED = 3
# `lgembed run` stopped at an interrupt (the interrupts are the last line printed)


class CliError(Exception):
    """A failure the command reports as one line on stderr and an exit code.

    Attributes:
        code: the exit code (EXIT_ERROR unless given).
    """

    def __init__(self, message: str, code: int = EXIT_ERROR) -> None:
        super().__init__(message)
        self.code = code


class UsageError(CliError):
    """Bad arguments: exit code 1 (EXIT_USAGE)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, EXIT_USAGE)


class Parser(argparse.ArgumentParser):
    """argparse, except that a usage error raises `UsageError` (exit 1, not argparse's 2).

    Why: exit code 2 means "the work failed" for every subcommand; a script must be able
    to tell a typo in its own command line from a failing graph.
    """

    def error(self, message: str) -> Any:  # type: ignore[override]
        """Raises:
        UsageError: always, with the parser's usage line and `message`.
        """
        msg = f"{message}\n{self.format_usage().rstrip()}"
        raise UsageError(msg)


# --- arguments ----------------------------------------------------------------------------


def parse_json(text: str, option: str) -> Any:
    """The value of a JSON argument; `-` reads the JSON from stdin.

    Raises:
        UsageError: the text is not JSON (the message names the option, the position
            and what was given).
    """
    source = "stdin" if text == "-" else "the argument"
    if text == "-":
        text = sys.stdin.read()
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        shown = text if len(text) <= 60 else text[:57] + "..."
        msg = (
            f"{option}: not valid JSON in {source} ({e.msg} at line {e.lineno} column {e.colno}): "
            f"{shown!r}. Fix: quote it for the shell, e.g. {option} '{{\"key\": 1}}'"
        )
        raise UsageError(msg) from None


# --- graphs ---------------------------------------------------------------------------
# The loader and resolver are `lgembed.service.loader`'s (shared with `lgembed serve`);
# these wrappers turn its errors into the command's: a malformed reference and a second
# checkpointer are usage errors (exit 1), anything else an error (exit 2).


def load_target(spec: str) -> Any:
    """The object `MODULE:ATTR` names (also `path/to/file.py:ATTR`; ATTR may be dotted),
    looked up from the working directory (see `lgembed.service.loader.load_target`).

    Raises:
        UsageError: `spec` has no `:ATTR` part.
        CliError: the file does not exist, the module fails to import (the message
            carries the exception's class and text), or it has no such attribute.
    """
    from lgembed.service import loader

    try:
        return loader.load_target(spec)
    except loader.BadReferenceError as e:
        raise UsageError(str(e)) from None
    except loader.LoadError as e:
        raise CliError(str(e)) from e


def resolve_graph(obj: Any, spec: str, **kwargs: Any) -> Any:
    """A compiled graph from what `MODULE:ATTR` named: `lgembed.service.loader.resolve_graph`
    (keywords `checkpointer`, `store`, `device`) with the command's errors. A compiled graph
    with a checkpointer of its own is refused when `checkpointer` is given (two savers for
    one graph would split its threads).

    Raises:
        UsageError: a compiled graph with its own checkpointer while `checkpointer` is given.
        CliError: the object is not a graph, or the factory or `compile()` fails.
    """
    from lgembed.service import loader

    try:
        return loader.resolve_graph(obj, spec, own_checkpointer="refuse", **kwargs)
    except loader.OwnCheckpointerError as e:
        msg = (
            f"'{spec}' is a graph compiled with its own checkpointer ({e.own}); "
            "--db would give it a second one. Fix: drop --db to use its own, or point at the "
            "StateGraph builder (or compile it without a checkpointer) so lgembed compiles it with --db"
        )
        raise UsageError(msg) from None
    except loader.LoadError as e:
        raise CliError(str(e)) from e


# --- JSON output --------------------------------------------------------------------------


def jsonable(obj: Any, _depth: int = 0) -> Any:
    """`obj` as plain JSON data, for output.

    Messages become their dict form (`type`, `content`, `id`, ...), an `Interrupt`
    `{"value", "id"}`, a `Send` `{"node", "arg"}`, dataclasses, NamedTuples and pydantic
    models their fields, tuples and sets lists, datetimes ISO strings, bytes text when
    they are UTF-8 (else base64), an exception `{"error": class, "message": text}`,
    non-finite floats strings; anything else its `repr`.
    """
    if _depth > 100:
        return repr(obj)
    d = _depth + 1
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int) and not isinstance(obj, enum.Enum):
        return int(obj)
    if isinstance(obj, float) and not isinstance(obj, enum.Enum):
        return obj if math.isfinite(obj) else repr(obj)
    if isinstance(obj, dict):
        return {_key(k): jsonable(v, d) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_asdict"):
        return [jsonable(v, d) for v in obj]
    if isinstance(obj, (set, frozenset)):
        items = [jsonable(v, d) for v in obj]
        try:
            return sorted(items)
        except TypeError:
            return items
    if isinstance(obj, (bytes, bytearray)):
        try:
            return bytes(obj).decode("utf-8")
        except UnicodeDecodeError:
            return base64.b64encode(bytes(obj)).decode("ascii")
    if isinstance(obj, enum.Enum):
        return jsonable(obj.value, d)
    if isinstance(obj, (_dt.datetime, _dt.date, _dt.time)):
        return obj.isoformat()
    if isinstance(obj, _dt.timedelta):
        return obj.total_seconds()
    if isinstance(obj, BaseException):
        return {"error": type(obj).__name__, "message": str(obj)}
    cls = type(obj)
    if cls.__name__ == "Interrupt" and hasattr(obj, "value") and hasattr(obj, "id"):
        return {"value": jsonable(obj.value, d), "id": obj.id}
    if cls.__name__ == "Send" and hasattr(obj, "node") and hasattr(obj, "arg"):
        return {"node": obj.node, "arg": jsonable(obj.arg, d)}
    if hasattr(obj, "_asdict"):
        return {k: jsonable(v, d) for k, v in obj._asdict().items()}
    dump = getattr(obj, "model_dump", None)
    dumped = _call_quietly(dump) if callable(dump) else None
    if dumped is not None:
        return jsonable(dumped, d)
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: jsonable(getattr(obj, f.name), d) for f in dataclasses.fields(obj)}
    if hasattr(obj, "dict") and callable(obj.dict) and hasattr(obj, "__fields__"):
        return jsonable(obj.dict(), d)
    if cls.__module__ in ("uuid", "decimal", "pathlib", "ipaddress", "zoneinfo") or cls.__module__.startswith(
        "pathlib"
    ):
        return str(obj)
    if isinstance(obj, (range, _deque_type())):
        return [jsonable(v, d) for v in obj]
    return repr(obj)


def _call_quietly(fn: Any) -> Any:
    """`fn()`, or None when it raises (an object whose model_dump needs arguments or fails)."""
    try:
        return fn()
    except Exception:  # noqa: BLE001 - the other forms of jsonable() still apply
        return None


def _deque_type() -> type:
    import collections

    return collections.deque


def _key(k: Any) -> str:
    if isinstance(k, str):
        return k
    if isinstance(k, enum.Enum):
        return str(k.value)
    if k is None or isinstance(k, (bool, int, float)):
        return json.dumps(k)
    if isinstance(k, tuple):
        return "|".join(_key(p) for p in k)
    return str(k)


def emit(obj: Any, pretty: bool = False) -> None:
    """Prints `obj` as one JSON line (indented when `pretty`) and flushes stdout.

    Raises:
        BrokenPipeError: when the reader of stdout went away (the dispatcher exits quietly).
    """
    text = json.dumps(jsonable(obj), ensure_ascii=False, indent=2 if pretty else None)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


# --- LMDB environments ----------------------------------------------------------------------


def env_exists(path: str, option: str = "--db") -> str:
    """The real path of an existing LMDB environment directory, checked before anything opens it.

    Why: `LmdbSaver(path)` creates a missing directory and an empty environment, which
    is right for a service and wrong for `lgembed threads` given a mistyped path.

    Raises:
        CliError: the path does not exist, is not a directory, or holds no `data.mdb`.
    """
    if not os.path.exists(path):
        msg = f"{option} {path}: no such directory. Fix: pass the LMDB environment directory (the one holding data.mdb)"
        raise CliError(msg)
    if not os.path.isdir(path):
        msg = f"{option} {path}: not a directory. Fix: pass the LMDB environment directory (the one holding data.mdb)"
        raise CliError(msg)
    if not os.path.isfile(os.path.join(path, "data.mdb")):
        msg = f"{option} {path}: no LMDB environment there (no data.mdb). Fix: pass the directory a saver wrote"
        raise CliError(msg)
    return os.path.realpath(path)


def inspect_serde() -> Any:
    """A serializer that loads every stored value, for looking at data without the graph.

    Values of user classes (registered by the program that wrote them, e.g. a dataclass
    in a state schema) load as `{"__type__": "module:Class", "data": ...}` instead of
    raising, because this process has not imported and registered them. Everything
    else (corrupt data, refused calls) still raises `DeserializationError`.
    """
    from lgembed.checkpoint.serde import DeserializationError, MsgpackSerializer

    class InspectSerializer(MsgpackSerializer):
        def _ext_hook(self, code: int, data: bytes) -> Any:
            try:
                return super()._ext_hook(code, data)
            except DeserializationError as e:
                if e.key is None or "not an allowed type" not in str(e):
                    raise
                payload = self._unpack(data)
                return {"__type__": e.key, "data": payload[2]}

    return InspectSerializer()


def open_saver(path: str, *, option: str = "--db", serde: Any = None) -> Any:
    """An `LmdbSaver` over an existing lgembed environment (never creates one).

    The environment is first opened read-only to check that it is an lgembed
    environment (the saver records its format version in the environment on open,
    which must not happen to someone else's LMDB files).

    Raises:
        CliError: no environment there, not an LMDB environment, not one lgembed wrote,
            damaged, or of an unknown format (the message names the path and the fix).
    """
    real = env_exists(path, option)
    probe = probe_env(real, option)
    if not probe["lgembed"]:
        msg = (
            f"{option} {path}: an LMDB environment, but not one lgembed wrote (no 'lgembed.format' "
            "database). Fix: pass the directory an LmdbSaver or `lgembed serve` uses"
        )
        raise CliError(msg)
    from lgembed.checkpoint.lmdb import LmdbError, LmdbSaver

    try:
        return LmdbSaver(real, serde=serde if serde is not None else inspect_serde())
    except LmdbError as e:
        msg = f"{option} {path}: {e}"
        raise CliError(msg) from e


def create_saver(path: str, option: str = "--db") -> Any:
    """An `LmdbSaver` on `path`, creating the environment when it is missing (`run --db`,
    `threads import` into a new directory).

    Raises:
        CliError: the environment cannot be opened or created (the message names the path).
    """
    from lgembed.checkpoint.lmdb import LmdbError, LmdbSaver

    try:
        return LmdbSaver(path)
    except LmdbError as e:
        msg = f"{option} {path}: {e}"
        raise CliError(msg) from e


def _readers(table: str) -> tuple[int, int]:
    """(live, stale) entries of `Environment.readers()`' table (pid thread txnid per line)."""
    live = stale = 0
    for line in table.splitlines():
        fields = line.split()
        if len(fields) != 3 or not fields[0].isdigit():
            continue
        try:
            os.kill(int(fields[0]), 0)
            live += 1
        except ProcessLookupError:
            stale += 1
        except PermissionError:
            live += 1
    return live, stale


def open_readonly(path: str) -> tuple[Any, bool]:
    """Opens the LMDB environment at `path` read-only, for looking at it; returns
    `(environment, lock)`. The caller closes the environment.

    When this user may not write `lock.mdb`, the environment is opened without LMDB's
    lock (`lock` is then False: a writer may be mid-commit while it is read).

    Raises:
        lmdb.Error: the files are not an LMDB environment or cannot be read.
    """
    import lmdb

    from lgembed.checkpoint._lmdb_env import MAX_DBS

    try:
        return lmdb.open(path, readonly=True, lock=True, max_dbs=MAX_DBS, subdir=True, create=False), True
    except lmdb.Error as e:
        if not isinstance(e, lmdb.ReadonlyError) and "Permission denied" not in str(e):
            raise
    return lmdb.open(path, readonly=True, lock=False, max_dbs=MAX_DBS, subdir=True, create=False), False


def probe_env(path: str, option: str = "--db") -> dict[str, Any]:
    """Facts about the LMDB environment at `path`, read through a read-only open.

    Returns:
        {"path", "map_size", "page_size", "used_pages", "used_bytes", "used_percent",
        "last_txnid", "readers" (read transactions open now, in any process),
        "stale_readers" (slots of dead processes: they keep old pages from being reused
        until a writer clears them), "max_readers", "databases", "lgembed", "formats",
        "data_file_bytes", "lock": True unless the lock file could not be used}.

    Raises:
        CliError: the files are not an LMDB environment or cannot be read.
    """
    import lmdb

    try:
        env, lock = open_readonly(path)
    except lmdb.Error as e:
        msg = f"{option} {path}: not a readable LMDB environment ({describe(e)}). Fix: pass the directory a saver wrote"
        raise CliError(msg) from e
    try:
        info, stat = env.info(), env.stat()
        readers, stale = _readers(env.readers() if lock else "")
        psize = stat["psize"]
        used_pages = info["last_pgno"] + 1
        names: list[str] = []
        formats: dict[str, str] = {}
        with env.begin() as txn:
            for key, _ in txn.cursor():
                names.append(key.decode("utf-8", "replace"))
            if "lgembed.format" in names:
                fmt = env.open_db(b"lgembed.format", txn=txn, create=False)
                for k, v in txn.cursor(db=fmt):
                    formats[k.decode("utf-8", "replace")] = v.decode("utf-8", "replace")
        data_file = os.path.join(path, "data.mdb")
        return {
            "path": path,
            "map_size": info["map_size"],
            "page_size": psize,
            "used_pages": used_pages,
            "used_bytes": used_pages * psize,
            "used_percent": round(100.0 * used_pages * psize / info["map_size"], 2) if info["map_size"] else None,
            "data_file_bytes": os.path.getsize(data_file) if os.path.exists(data_file) else None,
            "last_txnid": info["last_txnid"],
            "readers": readers,
            "stale_readers": stale,
            "max_readers": info["max_readers"],
            "databases": names,
            "lgembed": "lgembed.format" in names,
            "formats": formats,
            "lock": lock,
        }
    except lmdb.Error as e:
        msg = f"{option} {path}: reading the LMDB environment failed ({describe(e)}); run `lgembed threads --db {path} verify`"
        raise CliError(msg) from e
    finally:
        env.close()
