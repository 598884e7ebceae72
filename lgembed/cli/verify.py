"""`lgembed threads verify`: checks an LMDB environment for damage, read-only.

Why this module exists: after a power cut or a failing SD card an operator must know
whether a device's checkpoints can be trusted, without the graph's code. The check
(`check_env`) walks every page of every database and decodes every record of the layout
the savers document (`lgembed.cli._records`); problems are damage (exit 1, one line per
problem on stderr), leftovers of a cut-off run are warnings. It runs in a child process
(`verify`), because a damaged page can crash LMDB's reader instead of raising.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

from lgembed.checkpoint._lmdb_records import (
    BLOB,
    CHECKPOINT,
    WRITE,
    enc_version,
    resolve_checkpoint,
    write_owner,
)
from lgembed.cli._common import EXIT_OK, describe, emit, env_exists, inspect_serde, open_readonly
from lgembed.cli._records import enc, is_internal

__all__ = ("check_env", "verify", "verify_child")

_VERIFY_CHILD = "import sys; from lgembed.cli.verify import verify_child; sys.exit(verify_child(sys.argv[1]))"
# Why a child process: LMDB 0.9 has no page checksums, and a damaged page can make the
# reader crash (SIGBUS, or an assertion's SIGABRT) instead of raising; the child's crash
# is then reported as damage instead of killing the command
_CHECKPOINT_FORMAT = "3"
_CHECKPOINT_FORMATS = ("2", "3")
# format 2 (full checkpoint records only) is read as it is by format 3's readers
_STORE_FORMAT = "1"
# the formats `lgembed.format` must record for "checkpoint" and "store"
_KNOWN_DBS = ("lgembed.records", "lgembed.format", "lgembed.store.items", "lgembed.store.namespaces")


def verify(path: str, pretty: bool) -> int:
    """`threads verify`: runs the check in a child process and reports; returns 0 or 1.

    Raises:
        CliError: no environment directory or no data.mdb (exit 2).
    """
    import os
    import signal
    import subprocess

    real = env_exists(path)
    proc = subprocess.run(
        [sys.executable, "-c", _VERIFY_CHILD, real],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        check=False,
    )
    report = None
    for line in proc.stdout.splitlines()[::-1]:
        if line.startswith("{"):
            try:
                report = json.loads(line)
            except json.JSONDecodeError:
                continue
            break
    if report is None:
        if proc.returncode < 0:
            try:
                cause = signal.Signals(-proc.returncode).name
            except ValueError:
                cause = f"signal {-proc.returncode}"
        else:
            cause = f"exit code {proc.returncode}"
        detail = (proc.stderr.strip().splitlines() or [""])[-1]
        problem = (
            f"reading the environment crashed the LMDB reader ({cause}{': ' + detail if detail else ''}): "
            "data.mdb is damaged in a way LMDB does not detect itself. Restore it from a copy "
            "(threads export/import keeps single threads)"
        )
        report = {"path": real, "ok": False, "problems": [problem], "warnings": []}
    emit(report, pretty)
    for problem in report["problems"]:
        print(f"lgembed threads verify: damage: {problem}", file=sys.stderr)
    return EXIT_OK if report["ok"] else 1


def verify_child(path: str) -> int:
    """The check, in the child process: prints the report as one JSON line; returns 0."""
    report = check_env(path)
    sys.stdout.write(json.dumps(report) + "\n")
    sys.stdout.flush()
    return 0


class _Report:
    def __init__(self, path: str) -> None:
        self.path = path
        self.problems: list[str] = []
        self.warnings: list[str] = []
        self.counts: dict[str, int] = {
            "threads": 0,
            "checkpoints": 0,
            "values": 0,
            "writes": 0,
            "store_items": 0,
            "store_namespaces": 0,
        }
        self.databases: dict[str, dict[str, Any]] = {}

    def problem(self, text: str) -> None:
        if len(self.problems) < 1000:
            self.problems.append(text)

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "ok": not self.problems,
            **self.counts,
            "databases": self.databases,
            "problems": self.problems,
            "warnings": self.warnings,
        }


def check_env(path: str) -> dict[str, Any]:
    """Checks an lgembed LMDB environment, read-only; returns the report.

    Checked: every page of every named database can be walked; `lgembed.format` records
    the formats this lgembed reads; every key of `lgembed.records` has the documented
    layout; every checkpoint, channel value and pending write decodes; every channel
    value a checkpoint references exists (lgembed's own trigger channels, which are
    empty by design, excepted); every store item decodes and the per-namespace counts
    match. Pending writes whose checkpoint is gone and values no checkpoint references
    are warnings (left by a cut-off run or a fork), not damage.
    """
    import lmdb

    report = _Report(path)
    try:
        env, lock = open_readonly(path)
    except lmdb.Error as e:
        report.problem(f"data.mdb cannot be opened as an LMDB environment ({describe(e)})")
        return report.as_dict()
    if not lock:
        report.warnings.append(
            "lock.mdb is not writable by this user: read without LMDB's lock (a writer may be mid-commit)"
        )
    try:
        with env.begin() as txn:
            names = _walk_main(txn, report)
            handles = {}
            for name in names:
                try:
                    handles[name] = env.open_db(name.encode(), txn=txn, create=False)
                except lmdb.Error as e:
                    report.problem(f"database {name!r} cannot be opened ({describe(e)})")
            formats = _check_formats(txn, handles, report)
            if "lgembed.records" in handles and formats.get("checkpoint") in _CHECKPOINT_FORMATS:
                _check_records(txn, handles["lgembed.records"], report)
            if "lgembed.store.items" in handles and formats.get("store") == _STORE_FORMAT:
                _check_store(txn, handles["lgembed.store.items"], handles.get("lgembed.store.namespaces"), report)
            for name, handle in handles.items():
                if name not in _KNOWN_DBS:
                    _walk(txn, handle, name, report, "pages")
    except lmdb.Error as e:
        report.problem(f"reading the environment failed ({describe(e)})")
    finally:
        env.close()
    return report.as_dict()


def _walk_main(txn: Any, report: _Report) -> list[str]:
    names = []
    try:
        for key in txn.cursor().iternext(keys=True, values=False):
            try:
                names.append(key.decode("utf-8"))
            except UnicodeDecodeError:
                report.problem(f"the main database holds a key that is not a database name: {key[:40]!r}")
    except Exception as e:  # noqa: BLE001 - lmdb.Error (a damaged page) and the like
        report.problem(f"walking the main database failed ({describe(e)})")
    if "lgembed.format" not in names:
        report.problem("no 'lgembed.format' database: not an lgembed environment, or its catalogue is damaged")
    return names


def _walk(txn: Any, db: Any, name: str, report: _Report, checked: str) -> Iterator[tuple[bytes, bytes]]:
    """Every (key, value) of a database; a failure mid-walk is a problem and ends the walk."""
    entry = report.databases.setdefault(name, {"entries": 0, "checked": checked})
    try:
        for key, value in txn.cursor(db=db):
            entry["entries"] += 1
            yield key, value
    except Exception as e:  # noqa: BLE001 - lmdb.Error (a damaged page) and the like
        report.problem(f"database {name!r}: reading failed after {entry['entries']} records ({describe(e)})")


def _check_formats(txn: Any, handles: dict[str, Any], report: _Report) -> dict[str, str]:
    formats: dict[str, str] = {}
    db = handles.get("lgembed.format")
    if db is None:
        return formats
    for key, value in _walk(txn, db, "lgembed.format", report, "records"):
        formats[key.decode("utf-8", "replace")] = value.decode("utf-8", "replace")
    if "lgembed.records" in handles and formats.get("checkpoint") not in _CHECKPOINT_FORMATS:
        report.problem(
            f"checkpoint data is in format {formats.get('checkpoint')!r}; this lgembed checks format "
            f"{_CHECKPOINT_FORMAT} only (the records were walked for readable pages only)"
        )
        for _ in _walk(txn, handles["lgembed.records"], "lgembed.records", report, "pages"):
            pass
    if "lgembed.store.items" in handles and formats.get("store") != _STORE_FORMAT:
        report.problem(
            f"store data is in format {formats.get('store')!r}; this lgembed checks format {_STORE_FORMAT} only"
        )
        for _ in _walk(txn, handles["lgembed.store.items"], "lgembed.store.items", report, "pages"):
            pass
    return formats


def _unpack(raw: bytes, size: int) -> list | None:
    import msgpack

    try:
        record = msgpack.unpackb(raw, raw=False)
    except Exception:  # noqa: BLE001 - any decoding failure is damage, reported by the caller
        return None
    if type(record) is not list or len(record) < size:
        return None
    return record


def _check_records(txn: Any, db: Any, report: _Report) -> None:
    from lgembed.checkpoint._lmdb_env import decode_parts, parts_end

    serde = inspect_serde()
    checkpoints: set[bytes] = set()  # keys (group + b"c" + enc(id))
    values: set[bytes] = set()  # blob keys
    needed: list[tuple[bytes, str, str, bytes]] = []  # (blob key, channel, checkpoint label, checkpoint key)
    referenced: set[bytes] = set()  # blob keys some checkpoint names (trigger channels too)
    writes: list[tuple[bytes, str]] = []  # (owner checkpoint key, label)
    threads: set[bytes] = set()
    for key, raw in _walk(txn, db, "lgembed.records", report, "records"):
        try:
            at = parts_end(key, 2)
            thread_id, ns = decode_parts(key, 2)
        except (ValueError, UnicodeDecodeError):
            report.problem(f"a record key does not have the documented layout: {key[:60]!r}")
            continue
        threads.add(key[: parts_end(key, 1)])
        kind = key[at : at + 1]
        where = f"thread {thread_id!r}" + (f" namespace {ns!r}" if ns else "")
        try:
            if kind == CHECKPOINT:
                checkpoint_id = decode_parts(key[at + 1 :], 1)[0]
                label = f"{where} checkpoint {checkpoint_id}"
                record = _unpack(raw, 5)
                if record is None or type(record[0]) is not str or type(record[3]) is not str:
                    report.problem(f"{label}: the record does not decode (damaged bytes)")
                    continue
                checkpoint = resolve_checkpoint(lambda k: txn.get(k, db=db), key, record, serde.loads_typed)
                serde.loads_typed((record[3], record[4]))
                checkpoints.add(key)
                report.counts["checkpoints"] += 1
                group = key[:at] + BLOB
                for channel, version in (checkpoint.get("channel_versions") or {}).items():
                    blob_key = group + enc(channel) + enc_version(version)
                    referenced.add(blob_key)
                    if not is_internal(channel):
                        needed.append((blob_key, channel, label, key))
            elif kind == BLOB:
                channel = decode_parts(key[at + 1 :], 1)[0]
                record = _unpack(raw, 2)
                if record is None or type(record[0]) is not str:
                    report.problem(f"{where} value of channel {channel!r}: the record does not decode (damaged bytes)")
                    continue
                serde.loads_typed((record[0], record[1]))
                values.add(key)
                report.counts["values"] += 1
            elif kind == WRITE:
                checkpoint_id, task_id = decode_parts(key[at + 1 :], 2)
                label = f"{where} pending write of task {task_id} on checkpoint {checkpoint_id}"
                record = _unpack(raw, 4)
                if record is None or type(record[0]) is not str or type(record[1]) is not str:
                    report.problem(f"{label}: the record does not decode (damaged bytes)")
                    continue
                serde.loads_typed((record[1], record[2]))
                owner = write_owner(key)
                writes.append((owner, label))
                report.counts["writes"] += 1
            else:
                report.problem(f"{where}: a record of unknown kind {kind!r}")
        except Exception as e:  # noqa: BLE001 - DeserializationError, a bad layout: damage either way
            report.problem(f"{where}: a stored value does not load ({describe(e)})")
    report.counts["threads"] = len(threads)
    for blob_key, channel, label, owner in needed:
        if blob_key not in values and owner in checkpoints:
            report.problem(f"{label}: the value of channel {channel!r} it references is missing")
    orphans = sum(1 for owner, _ in writes if owner not in checkpoints)
    if orphans:
        report.warnings.append(f"{orphans} pending write(s) belong to no stored checkpoint (left by a cut-off run)")
    unreferenced = len(values - referenced)
    if unreferenced:
        report.warnings.append(f"{unreferenced} stored value(s) are referenced by no checkpoint (prune removes them)")


def _check_store(txn: Any, items_db: Any, namespaces_db: Any, report: _Report) -> None:
    import struct

    from lgembed.checkpoint._lmdb_env import decode_parts

    serde = inspect_serde()
    counted: dict[bytes, int] = {}
    for key, raw in _walk(txn, items_db, "lgembed.store.items", report, "records"):
        ns_key, mark, item = key.partition(b"\x00\x02")
        try:
            labels = decode_parts(ns_key, ns_key.count(b"\x00\x01"))
            name = decode_parts(item, 1)[0] if mark else None
        except (ValueError, UnicodeDecodeError):
            name = None
            labels = []
        if name is None:
            report.problem(f"a store item key does not have the documented layout: {key[:60]!r}")
            continue
        label = f"store item {tuple(labels)!r}/{name!r}"
        record = _unpack(raw, 4)
        if record is None or type(record[0]) is not str:
            report.problem(f"{label}: the record does not decode (damaged bytes)")
            continue
        try:
            serde.loads_typed((record[0], record[1]))
        except Exception as e:  # noqa: BLE001 - DeserializationError
            report.problem(f"{label}: its value does not load ({describe(e)})")
            continue
        counted[ns_key] = counted.get(ns_key, 0) + 1
        report.counts["store_items"] += 1
    stored: dict[bytes, int] = {}
    if namespaces_db is not None:
        for key, raw in _walk(txn, namespaces_db, "lgembed.store.namespaces", report, "records"):
            if len(raw) != 8:
                report.problem(f"store namespace count for {key[:60]!r} does not decode (damaged bytes)")
                continue
            stored[key] = struct.unpack(">Q", raw)[0]
    report.counts["store_namespaces"] = len(stored)
    for ns_key in set(counted) | set(stored):
        if counted.get(ns_key, 0) != stored.get(ns_key, 0):
            try:
                labels = tuple(decode_parts(ns_key, ns_key.count(b"\x00\x01")))
            except (ValueError, UnicodeDecodeError):
                labels = (repr(ns_key),)
            report.problem(
                f"store namespace {labels!r}: {counted.get(ns_key, 0)} item(s) stored, but its count says "
                f"{stored.get(ns_key, 0)}"
            )


