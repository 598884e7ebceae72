"""`lgembed threads --db DIR ...`: look at, export, trim and check the threads of an LMDB environment.

Why: on a device the checkpoints are the graphs' memory, in one directory that an
operator must be able to inspect ("what is thread door-1 waiting for?"), back up,
move to another board, keep small on flash, and check after a power cut, without the
graph's code and without a Python prompt.

Actions (JSON on stdout; JSON lines where there is one item per line):

- `list`: one line per thread: latest checkpoint id, step, source, `next`, time,
  number of checkpoints and interrupts.
- `show ID`: the latest state of the root namespace: values, next, interrupts, task
  errors, metadata, pending writes.
- `history ID [--limit N]`: checkpoints, newest first, one per line.
- `delete ID`: removes the thread (every namespace).
- `prune --keep N [ID ...]`: keeps the newest N checkpoints of each (thread, namespace).
- `export ID`: the thread as JSON lines: a header, the checkpoints (readable, newest
  first), then every stored record (base64), then an end line with the counts.
- `import FILE|- [--thread ID] [--replace]`: loads an export (into a new environment
  too); refuses a truncated file and an existing thread unless `--replace`.
- `verify`: opens the environment read-only and checks every record of every
  database (see `lgembed.cli.verify.check_env`); exit 1 with one line per problem on damage.

Values are loaded without the graph (see `lgembed.cli._records`, the readers of the
storage format the saver documents, which this command, its export and `verify` share).
The actions live here, except `export`/`import` (`lgembed.cli.export`) and `verify`
(`lgembed.cli.verify`).

Exit codes: 0 done, 1 usage or (verify) damage found, 2 error (no environment, not an
lgembed environment, unknown thread, unreadable record).
"""

from __future__ import annotations

import argparse
from typing import Any

from lgembed.cli._common import EXIT_OK, CliError, UsageError, describe, emit, open_saver
from lgembed.cli._records import checkpoint_json, count_records, derive_next, enc, pending_interrupts, thread_ids
from lgembed.cli.export import EXPORT_FORMAT, export_thread, import_thread
from lgembed.cli.verify import verify

__all__ = ("EXPORT_FORMAT", "add_arguments", "derive_next", "main")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Adds `threads`' arguments (the actions are sub-commands) to `parser`."""
    from lgembed.cli._common import Parser

    db_help = "LMDB environment directory (the one holding data.mdb)"
    parser.add_argument("--db", metavar="DIR", help=db_help)
    parser.add_argument("--pretty", action="store_true", help="indent JSON output (for people)")
    sub = parser.add_subparsers(dest="action", metavar="ACTION", parser_class=Parser)
    actions = {
        "list": "list threads with their latest checkpoint",
        "show": "the latest state of a thread",
        "history": "a thread's checkpoints, newest first",
        "delete": "delete a thread",
        "prune": "keep only the newest N checkpoints per thread",
        "export": "a thread's whole history as JSON lines (importable)",
        "import": "load a thread exported with `export`",
        "verify": "check the environment for damage (read-only)",
    }
    parsers = {}
    for name, help_text in actions.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        # --db and --pretty are accepted after the action too
        p.add_argument("--db", metavar="DIR", default=argparse.SUPPRESS, help=db_help)
        p.add_argument("--pretty", action="store_true", default=argparse.SUPPRESS, help="indent JSON output")
        parsers[name] = p
    for name in ("show", "history", "delete", "export"):
        parsers[name].add_argument("thread_id", metavar="ID", help="the thread id")
    parsers["history"].add_argument("--limit", type=int, metavar="N", help="at most N checkpoints")
    parsers["prune"].add_argument(
        "--keep", type=int, required=True, metavar="N", help="checkpoints to keep per thread (>= 1)"
    )
    parsers["prune"].add_argument("thread_ids", nargs="*", metavar="ID", help="only these threads (default: all)")
    parsers["import"].add_argument("file", metavar="FILE|-", help="an export file, '-' for stdin")
    parsers["import"].add_argument(
        "--thread", metavar="ID", help="import under this thread id (default: the exported one)"
    )
    parsers["import"].add_argument("--replace", action="store_true", help="replace a thread that exists already")


def main(args: argparse.Namespace) -> int:
    """Runs `lgembed threads`; returns the exit code.

    Raises:
        UsageError: no action or no --db, or a bad --keep / --limit.
        CliError: no environment, not an lgembed environment, unknown thread, a record
            that cannot be read, or a bad import file.
    """
    if not getattr(args, "action", None):
        raise UsageError("threads: an action is needed: list, show, history, delete, prune, export, import, verify")
    if not getattr(args, "db", None):
        raise UsageError(f"threads {args.action}: --db DIR is required (the LMDB environment directory)")
    pretty = bool(getattr(args, "pretty", False))
    if args.action == "verify":
        return verify(args.db, pretty)
    if args.action == "prune" and args.keep < 1:
        raise UsageError(f"prune --keep: must be 1 or more (got {args.keep}); use `delete ID` to remove a thread")
    if args.action == "history" and args.limit is not None and args.limit < 1:
        raise UsageError(f"history --limit: must be 1 or more (got {args.limit})")
    if args.action == "import":
        return import_thread(args, pretty)
    saver = open_saver(args.db)
    try:
        return _dispatch(saver, args, pretty)
    except (CliError, BrokenPipeError):
        raise
    except Exception as e:  # LmdbError, DeserializationError: one message, exit 2
        msg = f"threads {args.action}: {describe(e)}. Run `lgembed threads --db {args.db} verify` to check the environment"
        raise CliError(msg) from e
    finally:
        saver.close()


def _dispatch(saver: Any, args: argparse.Namespace, pretty: bool) -> int:
    action = args.action
    if action == "list":
        for thread_id in thread_ids(saver):
            emit(_summary(saver, thread_id), pretty)
        return EXIT_OK
    if action == "prune":
        emit(_prune(saver, args.keep, args.thread_ids), pretty)
        return EXIT_OK
    thread_id = args.thread_id
    counts = count_records(saver, thread_id)
    if not counts["records"]:
        msg = f"unknown thread {thread_id!r} in {saver.path}. Fix: `lgembed threads --db {args.db} list` lists the threads"
        raise CliError(msg)
    if action == "show":
        latest = saver.get_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
        if latest is None:
            msg = f"thread {thread_id!r} has no checkpoint in the root namespace (only subgraph records)"
            raise CliError(msg)
        emit(checkpoint_json(thread_id, latest), pretty)
    elif action == "history":
        config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        for item in saver.list(config, limit=args.limit):
            emit(checkpoint_json(thread_id, item), pretty)
    elif action == "delete":
        saver.delete_thread(thread_id)
        emit({"deleted": thread_id, "checkpoints": counts["checkpoints"]}, pretty)
    elif action == "export":
        export_thread(saver, thread_id, counts)
    return EXIT_OK


def _summary(saver: Any, thread_id: str) -> dict[str, Any]:
    counts = count_records(saver, thread_id)
    latest = saver.get_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
    out: dict[str, Any] = {"thread_id": thread_id}
    if latest is None:
        out.update({"checkpoint_id": None, "step": None, "source": None, "next": [], "updated_at": None})
    else:
        metadata = latest.metadata or {}
        out.update(
            {
                "checkpoint_id": latest.config["configurable"]["checkpoint_id"],
                "step": metadata.get("step"),
                "source": metadata.get("source"),
                "next": derive_next(latest.checkpoint),
                "updated_at": latest.checkpoint.get("ts"),
                "interrupts": len(pending_interrupts(latest.pending_writes)),
            }
        )
    out["checkpoints"] = counts["checkpoints"]
    out["namespaces"] = counts["namespaces"]
    return out


# --- prune ----------------------------------------------------------------------------------


def _prune(saver: Any, keep: int, only: list[str]) -> dict[str, Any]:
    known = thread_ids(saver)
    if only:
        missing = [t for t in only if t not in known]
        if missing:
            msg = f"prune: unknown thread(s) {', '.join(map(repr, missing))} in {saver.path}"
            raise CliError(msg)
        ids = list(dict.fromkeys(only))
    else:
        ids = known
    before = sum(count_records(saver, t)["checkpoints"] for t in ids)
    if ids:
        if keep == 1:
            saver.prune(ids, strategy="keep_latest")
        else:
            prefixes = [enc(t) for t in ids]

            def write(txn: Any) -> None:
                for prefix in prefixes:
                    for group in saver._groups(txn, prefix):
                        saver._retain(txn, group, keep)

            saver._shared.write(
                write, owner="LmdbSaver", action="lgembed threads prune", max_map_size=saver.max_map_size
            )
    after = sum(count_records(saver, t)["checkpoints"] for t in ids)
    return {
        "threads": len(ids),
        "keep": keep,
        "checkpoints_before": before,
        "checkpoints_after": after,
        "removed": before - after,
    }
