"""`lgembed threads export` / `import`: a thread's whole history as JSON lines, and back.

Why this module exists: a device's threads must be backed up and moved to another board
without the graph's code. An export is the thread's checkpoints in readable form
(newest first) followed by every stored record in base64, between a header and an end
line with the counts; an import writes the records back in one transaction (into a new
environment too) and refuses a truncated file or an existing thread unless `--replace`.

File layout (one JSON object per line): `{"lgembed_export": EXPORT_FORMAT,
"storage_format": 3, "thread_id", "exported_at", "lgembed"}`, then
`{"type": "checkpoint", ...}` lines (as `threads show` prints them), then
`{"type": "record", "key", "value"}` lines (the key after `enc(thread)`), then
`{"type": "end", "checkpoints", "records"}`.
"""

from __future__ import annotations

import argparse
import base64
import json
import sys
from typing import Any

from lgembed.checkpoint._lmdb_records import KINDS
from lgembed.cli._common import EXIT_OK, CliError, UsageError, create_saver, describe, emit, open_saver
from lgembed.cli._records import checkpoint_json, count_records, enc, thread_records

__all__ = ("EXPORT_FORMAT", "export_thread", "import_thread", "read_export")

EXPORT_FORMAT = 1
"""Version of the export file layout (`lgembed_export` in its header line)."""
_STORAGE_FORMAT = 3
# the LmdbSaver record format an export's raw records are in (pinned: a new format needs a
# review of this reader, tests/test_cli_threads.py::test_formats_pinned says so)
_READABLE_STORAGE = (2, 3)
# storage formats import takes: format 2 records (full checkpoint records only) are valid format 3 records


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def export_thread(saver: Any, thread_id: str, counts: dict[str, int]) -> None:
    """`threads export ID`: prints the thread as JSON lines (header, checkpoints, records, end)."""
    import datetime

    import lgembed

    emit(
        {
            "lgembed_export": EXPORT_FORMAT,
            "storage_format": _STORAGE_FORMAT,
            "thread_id": thread_id,
            "exported_at": datetime.datetime.now(datetime.timezone.utc).isoformat(),
            "lgembed": lgembed.__version__,
        }
    )
    checkpoints = 0
    for item in saver.list({"configurable": {"thread_id": thread_id}}):
        emit({"type": "checkpoint", **checkpoint_json(thread_id, item)})
        checkpoints += 1
    records = 0
    for key, value in thread_records(saver, thread_id):
        emit({"type": "record", "key": _b64(key), "value": _b64(value)})
        records += 1
    emit({"type": "end", "checkpoints": checkpoints, "records": records})


def read_export(args: argparse.Namespace) -> tuple[dict[str, Any], list[tuple[bytes, bytes]]]:
    """(header, records) of an export file.

    Raises:
        CliError: unreadable, not an export, another format, a bad record, or truncated.
    """
    from lgembed.checkpoint._lmdb_env import parts_end

    name = "stdin" if args.file == "-" else args.file
    try:
        handle = sys.stdin if args.file == "-" else open(args.file, encoding="utf-8")  # noqa: SIM115
    except OSError as e:
        raise CliError(f"import: cannot read {name}: {e.strerror}") from e
    header: dict[str, Any] | None = None
    records: list[tuple[bytes, bytes]] = []
    end: dict[str, Any] | None = None
    checkpoints = 0
    try:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise CliError(f"import: {name} line {number}: not JSON ({e.msg})") from None
            if header is None:
                if not isinstance(row, dict) or "lgembed_export" not in row:
                    raise CliError(
                        f"import: {name} is not an lgembed thread export (no header line). Fix: pass the output of `threads export`"
                    )
                if row.get("lgembed_export") != EXPORT_FORMAT or row.get("storage_format") not in _READABLE_STORAGE:
                    msg = (
                        f"import: {name} is export format {row.get('lgembed_export')!r} / storage format "
                        f"{row.get('storage_format')!r}; this lgembed reads {EXPORT_FORMAT} / {_STORAGE_FORMAT} (and storage format 2)"
                    )
                    raise CliError(msg)
                header = row
                continue
            kind = row.get("type") if isinstance(row, dict) else None
            if kind == "checkpoint":
                checkpoints += 1
            elif kind == "record":
                try:
                    key = base64.b64decode(row["key"], validate=True)
                    value = base64.b64decode(row["value"], validate=True)
                    at = parts_end(key, 1)
                except (KeyError, TypeError, ValueError) as e:
                    raise CliError(f"import: {name} line {number}: a bad record ({describe(e)})") from None
                if key[at : at + 1] not in KINDS:
                    raise CliError(f"import: {name} line {number}: a record of unknown kind {key[at : at + 1]!r}")
                records.append((key, value))
            elif kind == "end":
                end = row
            else:
                raise CliError(f"import: {name} line {number}: unknown line type {kind!r}")
    finally:
        if handle is not sys.stdin:
            handle.close()
    if header is None:
        raise CliError(f"import: {name} is empty")
    if end is None or end.get("records") != len(records) or end.get("checkpoints") != checkpoints:
        msg = (
            f"import: {name} is incomplete (read {len(records)} records and {checkpoints} checkpoints; "
            f"the end line says {None if end is None else (end.get('records'), end.get('checkpoints'))}). "
            "Nothing was imported; export the thread again"
        )
        raise CliError(msg)
    return header, records


def import_thread(args: argparse.Namespace, pretty: bool) -> int:
    """`threads import FILE|-`: loads an export into `--db` (created when missing); returns 0.

    Raises:
        UsageError: the export names no thread and no --thread is given.
        CliError: a bad export file, a thread that exists (without --replace), or an
            environment that cannot be opened or written.
    """
    import os

    from lgembed.checkpoint.lmdb import LmdbError

    header, records = read_export(args)
    thread_id = args.thread or str(header.get("thread_id") or "")
    if not thread_id:
        raise UsageError("import: the export names no thread; pass --thread ID")
    if os.path.exists(os.path.join(args.db, "data.mdb")):
        saver = open_saver(args.db)
    else:
        saver = create_saver(args.db)  # importing into a new environment creates it
    try:
        if count_records(saver, thread_id)["records"] and not args.replace:
            msg = f"import: thread {thread_id!r} exists in {saver.path}. Fix: pass --replace, or --thread NEW_ID"
            raise CliError(msg)
        prefix = enc(thread_id)

        def write(txn: Any) -> None:
            saver._delete_prefix(txn, prefix)
            for key, value in records:
                txn.put(prefix + key, value, db=saver._records)

        try:
            saver._shared.write(
                write, owner="LmdbSaver", action="lgembed threads import", max_map_size=saver.max_map_size
            )
        except LmdbError as e:
            raise CliError(f"import: {e}") from e
        counts = count_records(saver, thread_id)
    finally:
        saver.close()
    emit({"imported": thread_id, "checkpoints": counts["checkpoints"], "records": counts["records"]}, pretty)
    return EXIT_OK
