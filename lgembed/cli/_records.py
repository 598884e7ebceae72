"""The records of an `LmdbSaver` environment, read without the graph: what `lgembed threads`,
its export and `verify` share.

Why this module exists: the threads of an environment are read through the storage
format the saver documents (`lgembed.checkpoint.lmdb`, format 3: `enc(thread) enc(ns)
kind ...` keys), by the actions of `lgembed threads` (`list`, `show`, `history`), by the
export (`lgembed.cli.export`) and by the checker (`lgembed.cli.verify`); the readers live
here once, so that a change of the format shows up in all of them at once.

Values are loaded without the graph: values of the program's own classes (a dataclass
in a state schema) appear as `{"__type__": "module:Class", "data": ...}`. `next` is
derived from the checkpoint's trigger channels (`branch:to:NODE`, joins, `Send`
packets), which is exact for StateGraph graphs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from lgembed.checkpoint._lmdb_records import CHECKPOINT
from lgembed.cli._common import jsonable

__all__ = (
    "checkpoint_json",
    "count_records",
    "derive_next",
    "enc",
    "is_internal",
    "pending_interrupts",
    "thread_ids",
    "thread_records",
)

_SPECIAL_WRITES = ("__interrupt__", "__error__", "__resume__", "__scheduled__")
# pending-write channels `state` shows apart from the others


def enc(part: str) -> bytes:
    """One key component as the saver encodes it (`lgembed.checkpoint._lmdb_env.enc`)."""
    from lgembed.checkpoint._lmdb_env import enc as _enc

    return _enc(part)


def thread_ids(saver: Any) -> list[str]:
    """Every thread id in the environment, in key (byte) order."""
    from lgembed.checkpoint._lmdb_env import UPPER, decode_parts, parts_end

    ids = []
    with saver._shared.read("lgembed threads: listing threads") as txn:
        cur = txn.cursor(db=saver._records)
        found = cur.first()
        while found:
            key = cur.key()
            ids.append(decode_parts(key, 1)[0])
            found = cur.set_range(key[: parts_end(key, 1)] + UPPER)
    return ids


def thread_records(saver: Any, thread_id: str) -> Iterator[tuple[bytes, bytes]]:
    """(key after the thread component, value) of every record of a thread, in key order."""
    prefix = enc(thread_id)
    with saver._shared.read("lgembed threads: reading a thread") as txn:
        cur = txn.cursor(db=saver._records)
        if not cur.set_range(prefix):
            return
        for key, value in cur:
            if not key.startswith(prefix):
                break
            yield key[len(prefix) :], value


def count_records(saver: Any, thread_id: str) -> dict[str, int]:
    """{"records", "checkpoints", "namespaces"} of a thread (keys only)."""
    from lgembed.checkpoint._lmdb_env import parts_end

    prefix = enc(thread_id)
    records = checkpoints = 0
    namespaces = set()
    with saver._shared.read("lgembed threads: counting records") as txn:
        cur = txn.cursor(db=saver._records)
        if cur.set_range(prefix):
            for key in cur.iternext(keys=True, values=False):
                if not key.startswith(prefix):
                    break
                records += 1
                at = parts_end(key, 1, len(prefix))
                namespaces.add(key[len(prefix) : at])
                if key[at : at + 1] == CHECKPOINT:
                    checkpoints += 1
    return {"records": records, "checkpoints": checkpoints, "namespaces": len(namespaces)}


def _newer(version: Any, seen: Any) -> bool:
    if version is None:
        return False
    if seen is None:
        return True
    try:
        return bool(version > seen)
    except TypeError:
        return str(version) > str(seen)


def derive_next(checkpoint: dict[str, Any]) -> list[str]:
    """The nodes that run next from a checkpoint, without the graph.

    A node runs next when one of its trigger channels has a value and a version newer
    than the node has seen: `__start__` (the input), `branch:to:NODE` (edges, conditional
    edges, `Command(goto=...)`), a complete `join:A+B:NODE` barrier (waiting edges);
    and every node a pending `Send` packet names. Exact for StateGraph graphs.
    """
    values = checkpoint.get("channel_values") or {}
    versions = checkpoint.get("channel_versions") or {}
    seen_by = checkpoint.get("versions_seen") or {}
    pushed = []
    for packet in values.get("__pregel_tasks") or ():
        node = getattr(packet, "node", None)
        if node is None and isinstance(packet, dict):
            node = packet.get("node")
        if node is not None:
            pushed.append(str(node))
    pulled = set()
    for channel, value in values.items():
        if channel == "__start__":
            node = "__start__"
        elif channel.startswith("branch:to:"):
            node = channel[len("branch:to:") :]
        elif channel.startswith("join:") and channel.count(":") >= 2:
            starts, _, node = channel[len("join:") :].rpartition(":")
            try:
                if set(value) != set(starts.split("+")):
                    continue
            except TypeError:
                continue
        else:
            continue
        if _newer(versions.get(channel), (seen_by.get(node) or {}).get(channel)):
            pulled.add(node)
    return pushed + sorted(pulled)


def pending_interrupts(pending_writes: Any) -> list:
    """The interrupts among a checkpoint's pending writes."""
    out: list = []
    for _task_id, channel, value in pending_writes or ():
        if channel == "__interrupt__":
            out.extend(value if isinstance(value, (list, tuple)) else [value])
    return out


def checkpoint_json(thread_id: str, item: Any) -> dict[str, Any]:
    """A checkpoint tuple as the JSON object `show` and `history` print."""
    checkpoint, metadata = item.checkpoint, item.metadata or {}
    configurable = item.config["configurable"]
    parent = item.parent_config["configurable"]["checkpoint_id"] if item.parent_config else None
    writes = item.pending_writes or []
    values = {k: v for k, v in (checkpoint.get("channel_values") or {}).items() if not is_internal(k)}
    if list(values) == ["__root__"]:
        values = values["__root__"]
    return {
        "thread_id": thread_id,
        "checkpoint_ns": configurable.get("checkpoint_ns", ""),
        "checkpoint_id": configurable["checkpoint_id"],
        "parent_checkpoint_id": parent,
        "created_at": checkpoint.get("ts"),
        "step": metadata.get("step"),
        "source": metadata.get("source"),
        "next": derive_next(checkpoint),
        "values": jsonable(values),
        "interrupts": jsonable(pending_interrupts(writes)),
        "errors": [{"task_id": t, "error": jsonable(v)} for t, c, v in writes if c == "__error__"],
        "metadata": jsonable(metadata),
        "pending_writes": [
            {"task_id": t, "channel": c, "value": jsonable(v)} for t, c, v in writes if c not in _SPECIAL_WRITES
        ],
    }


def is_internal(channel: str) -> bool:
    """Channels of the engine, not of the state schema (left out of `values`)."""
    return channel.startswith(("branch:to:", "join:", "start:")) or (channel.startswith("__") and channel != "__root__")
