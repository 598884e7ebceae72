"""The record format of LmdbSaver's environments: keys, kinds, versions, delta records.

Why this module exists: the on-disk format is a contract of its own, kept by the saver
(`lgembed.checkpoint.lmdb`), checked by `lgembed verify`, exported and imported by
`lgembed threads`; all of them read it from here, and the whole format is reviewable
in one place. Key components are `enc(part)` (`lgembed.checkpoint._lmdb_env`).

Layout (format 3): one environment (a directory: `data.mdb`, `lock.mdb`) holds one
named database, `lgembed.records`, for everything of every thread (and
`lgembed.format`, the format version of each kind of data, shared with LmdbStore).
Every key starts with the group `enc(thread_id) + enc(checkpoint_ns)` (`enc`: see
`_lmdb_env`) and one kind byte, so all records of one (thread, namespace) sit
together: a superstep's commit dirties one or two leaf pages, not one per database.
Every group, and every kind within a group, is a byte range, so "latest" and
`list()` are cursor scans:

====  ===========================================  ===============================================
kind  key after the group                          value (msgpack array)
====  ===========================================  ===============================================
`b`   channel, version                             [tag, value]
`c`   checkpoint_id                                [tag, checkpoint without channel_values,
                                                   parent id or None, metadata tag, metadata]
                                                   or (a delta) the same with channel_versions
                                                   and versions_seen None in the checkpoint, then
                                                   [changed channels, their versions] and
                                                   [[node, channels, versions]] of changed nodes
`w`   checkpoint_id, task_id, idx (u64)            [channel, tag, value, task_path]
====  ===========================================  ===============================================

Deltas (format 3). A checkpoint whose parent is the last one this saver put in its
(thread, namespace), and which is that parent plus changes (the engine's checkpoints:
new channels and nodes come last, none goes), is stored as a delta: only the channel
versions that changed and the versions_seen entries of the nodes that ran. Reading
applies the deltas to the nearest full record among its parents (at most
`_DELTA_DEPTH_MAX` records back; the next one is full again). A record a delta needs
is never removed first: retention, `prune` and `copy_thread` rewrite the deltas that
would lose their parent as full records in the same transaction, and a checkpoint put
again under its id makes the group's deltas full first. Format 2 (full records only)
is read as it is; opening it here records format 3 (older lgembed then refuses it).

Kind bytes are ASCII letters, never `00` (it would pair with a following `01` into a
component terminator) nor `ff` (`UPPER`: group + `ff` bounds a group, group + kind +
`ff` a kind). The version component is the key's last: `i` + 8 bytes big-endian for
ints 0 .. 2**64-1 (and integral floats: 2 and 2.0 are one version, as in
InMemorySaver), `s` + UTF-8 for strings, `n` + decimal for other ints, `r` + repr for
other floats. `get_next_version` returns ints, `(n + 1) << 32 | 32 random bits` (L-49:
any increasing comparable values), so a checkpoint record holds 9-byte versions
instead of LangGraph's 45-character strings; the random bits keep a fork (a run
resumed from an older checkpoint) from reusing a version of the branch it left, whose
checkpoints still read their values (a 2**-32 chance per version that it does, as
InMemorySaver's random fraction has a tiny one). A thread that already has LangGraph-format
string versions keeps getting strings (the engine compares versions).
"""

from __future__ import annotations

import struct
from typing import Any

from lgembed.checkpoint._lmdb_env import enc, parts_end

__all__ = (
    "BLOB",
    "CHECKPOINT",
    "DELTA_DEPTH_MAX",
    "FORMAT_VERSION",
    "IDX",
    "IDX_BIAS",
    "KINDS",
    "READABLE_FORMATS",
    "RECORDS",
    "WRITE",
    "delta_of",
    "enc_version",
    "kind_of",
    "resolve_checkpoint",
    "write_owner",
)

FORMAT_VERSION = 3
# on-disk layout version recorded in the environment (the table above); format 2 (full
# checkpoint records only) is read and recorded as 3 when opened by LmdbSaver; format 1
# (lgembed 0.1: four databases, versions as 45-char strings) is refused
READABLE_FORMATS = (2, 3)
RECORDS = b"lgembed.records"
# the named database of every record of every thread
BLOB = b"b"
CHECKPOINT = b"c"
WRITE = b"w"
KINDS = (BLOB, CHECKPOINT, WRITE)
# kind bytes, after enc(thread) + enc(ns): never 00 (it would pair with a following 01
# into a component terminator) nor ff (UPPER, which bounds a group and a kind range)
IDX = struct.Struct(">Q")
IDX_BIAS = 1 << 63
# write indexes are stored as big-endian u64 of idx + 2**63, so -4..-1 sort before 0
_U64 = struct.Struct(">Q")
_U64_MAX = (1 << 64) - 1
DELTA_DEPTH_MAX = 16
# a checkpoint record is a delta against its parent at most this many records deep
_MISSING = object()


def resolve_checkpoint(get: Any, key: bytes, record: list, loads: Any) -> dict:
    """The full checkpoint (without channel_values) of a checkpoint record stored under
    `key`: a format-3 delta record's changes applied to its parents' checkpoints.

    Args:
        get: `get(key) -> bytes | None`, reading a record of the same environment.
        key: the record's key (its thread and namespace group is where parents are).
        record: the unpacked record (`[tag, checkpoint, parent, meta tag, metadata, ...]`).
        loads: the serde's `loads_typed`.

    Raises:
        ValueError: when a parent is missing or the chain is too long or not a delta
            chain (a damaged environment); callers map it to their own error.
    """
    from msgpack import unpackb

    chain = [record]
    group = key[: parts_end(key, 2)] + CHECKPOINT
    current = record
    for _ in range(DELTA_DEPTH_MAX + 1):
        if len(current) < 7:
            break
        parent = current[2]
        raw = get(group + enc(parent)) if type(parent) is str else None
        if raw is None:
            raise ValueError(f"the parent {parent!r} a delta record needs is missing")
        current = unpackb(raw, raw=False)
        if type(current) is not list or len(current) < 5:
            raise ValueError(f"the parent {parent!r} of a delta record is not a checkpoint record")
        chain.append(current)
    else:
        raise ValueError("a chain of delta records is longer than the saver writes")
    checkpoint = loads((current[0], current[1]))
    versions = dict(checkpoint["channel_versions"])
    seen = dict(checkpoint["versions_seen"])
    for delta in reversed(chain[:-1]):
        names, codes = delta[5]
        versions.update(zip(names, codes))
        seen.update((row[0], dict(zip(row[1], row[2]))) for row in delta[6])
    checkpoint = loads((record[0], record[1]))
    checkpoint["channel_versions"] = versions
    checkpoint["versions_seen"] = seen
    return checkpoint


def delta_of(base: tuple, versions: Any, seen: Any) -> tuple | None:
    """`([names, versions], rows)` of what changed since `base` (a put memo entry), or
    None when the checkpoint is not its parent plus changes (a key gone or moved, or a
    value that is not a plain int, float or str)."""
    if type(versions) is not dict or type(seen) is not dict:
        return None
    base_versions, base_seen = base[2], base[3]
    if list(versions)[: len(base_versions)] != list(base_versions) or list(seen)[: len(base_seen)] != list(base_seen):
        return None
    names, codes = [], []
    for name, version in versions.items():
        old = base_versions.get(name, _MISSING)
        if old is _MISSING or old != version or type(old) is not type(version):
            if type(name) is not str or type(version) not in (int, str, float):
                return None
            names.append(name)
            codes.append(version)
    rows = []
    for node, entry in seen.items():
        if type(entry) is not dict:
            return None
        old = base_seen.get(node, _MISSING)
        if old is _MISSING or old != entry or [type(v) for v in old.values()] != [type(v) for v in entry.values()]:
            if type(node) is not str or not all(type(k) is str and type(v) in (int, str, float) for k, v in entry.items()):
                return None
            rows.append([node, list(entry), list(entry.values())])
    return [names, codes], rows


def enc_version(version: Any) -> bytes:
    """The last blob-key component for a channel version, type-tagged.

    Equal versions give equal bytes as in InMemorySaver's dict keys (2, 2.0 and True
    are one version; "2" is another): `i` + u64 big-endian for ints 0 .. 2**64-1 and
    integral floats, `n` + decimal for other ints, `s` + UTF-8 for strings, `r` +
    repr for other floats.
    """
    if type(version) is int and 0 <= version <= _U64_MAX:
        return b"i" + _U64.pack(version)
    if isinstance(version, str):
        return b"s" + version.encode("utf-8", "surrogatepass")
    if isinstance(version, float) and version.is_integer():
        version = int(version)  # 2.0 and 2 are one dict key in InMemorySaver
    if isinstance(version, int):
        version = int(version)
        return b"i" + _U64.pack(version) if 0 <= version <= _U64_MAX else b"n" + str(version).encode()
    return b"r" + repr(version).encode("utf-8", "surrogatepass")


def kind_of(key: bytes) -> bytes:
    """The kind byte of a record key (after its thread and namespace components)."""
    at = parts_end(key, 2)
    return key[at : at + 1]


def write_owner(key: bytes) -> bytes:
    """The checkpoint key (thread, ns, `c`, checkpoint_id) a pending-write key belongs to."""
    at = parts_end(key, 2)
    return key[:at] + CHECKPOINT + key[at + 1 : parts_end(key, 1, at + 1)]
