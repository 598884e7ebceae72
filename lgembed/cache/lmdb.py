"""A persistent cache of node and task writes in LMDB (`LmdbCache`).

Why LMDB: on a device the cache should survive restarts (a cached model call or
sensor calibration stays cached across a service restart) without another
dependency; `LmdbSaver` and `LmdbStore` already keep their data in LMDB.

Layout: one named database, `lgembed.cache`, in an environment opened through the
registry of `lgembed.checkpoint._lmdb_env` (so a cache can share the directory of
an `LmdbSaver` / `LmdbStore`, as `LmdbCache(env=saver.env)` or by the same path,
without opening it twice). The data format is recorded as kind "cache", version 1.

- key: `enc(len(namespace))`, `enc(part)` for each namespace part, then `enc(key)`
  (`enc` as for checkpoints: order-preserving and prefix-free), so clearing one
  namespace is a range delete that cannot touch a longer namespace sharing its
  prefix (a task's namespace is a prefix of a node's);
- value: the expiry (big-endian IEEE double, seconds since the epoch; +inf for no
  expiry), one byte with the length of the serializer's type name, the type name,
  then the serialized bytes (lgembed's msgpack serializer by default: loading never
  executes code).

Expired entries are skipped by `get` and deleted by the next `set` or `clear` that
meets them, or by `prune_expired()`.
"""

from __future__ import annotations

import math
import os
import struct
import time
from collections.abc import Mapping, Sequence
from typing import Any

from lgembed.cache.base import BaseCache, FullKey, Namespace, ValueT
from lgembed.checkpoint._lmdb_env import (
    DEFAULT_MAP_SIZE,
    DEFAULT_MAX_MAP_SIZE,
    UPPER,
    EnvUser,
    check_options,
    enc,
)

__all__ = ("LmdbCache",)

FORMAT_VERSION = 1
_ENTRIES = b"lgembed.cache"
_EXPIRY = struct.Struct(">d")


def _ns_prefix(ns: Sequence[str]) -> bytes:
    return enc(str(len(ns))) + b"".join(enc(str(p)) for p in ns)


def _decode(raw: bytes) -> tuple[float, str, bytes]:
    (expiry,) = _EXPIRY.unpack_from(raw, 0)
    n = raw[8]
    type_name = bytes(raw[9 : 9 + n]).decode()
    return expiry, type_name, bytes(raw[9 + n :])


class LmdbCache(EnvUser, BaseCache[ValueT]):
    """A cache in an LMDB environment (a directory), shareable with LmdbSaver / LmdbStore.

    Args:
        path: the environment directory (created if missing). Give either this or `env`.
        env: an open `lmdb.Environment` the caller owns (e.g. `saver.env`).
        map_size: initial map size when the environment is opened here.
        max_map_size: the map grows on demand up to this size.
        fsync: the environment's fsync policy ("deferred", "commit", "always"); None
            accepts the one in force.
        serde: serializer of values (lgembed's msgpack serializer by default).

    Raises:
        ValueError: for a wrong combination of arguments.
        LmdbError: when the environment cannot be opened, or holds another cache format.
    """

    def __init__(
        self,
        path: str | os.PathLike | None = None,
        *,
        env: Any = None,
        map_size: int = DEFAULT_MAP_SIZE,
        max_map_size: int = DEFAULT_MAX_MAP_SIZE,
        fsync: str | None = None,
        serde: Any = None,
    ) -> None:
        BaseCache.__init__(self, serde=serde)
        path, env = check_options(path, env, map_size, max_map_size)
        self.max_map_size = max_map_size
        (self._db,) = self._attach(
            path, env=env, fsync=fsync, map_size=map_size, kind="cache", version=FORMAT_VERSION, names=(_ENTRIES,)
        )

    _clock = staticmethod(time.time)
    # seconds since the epoch; tests replace it to move time forward

    def __repr__(self) -> str:
        return f"LmdbCache({self.path!r}, fsync={self._shared.fsync!r})"

    def _write(self, fn: Any, action: str) -> Any:
        return self._shared.write(fn, owner="LmdbCache", action=action, max_map_size=self.max_map_size, db=self._db)

    def get(self, keys: Sequence[FullKey]) -> dict[FullKey, ValueT]:
        """The cached, unexpired values of those of `keys` that are present.

        Raises:
            LmdbError: when LMDB fails.
            DeserializationError: when a stored value cannot be loaded.
        """
        if not keys:
            return {}
        now = self._clock()
        found: dict[FullKey, ValueT] = {}
        with self._shared.read("LmdbCache: reading cached writes") as txn:
            for ns, key in keys:
                ns = tuple(ns)
                raw = txn.get(_ns_prefix(ns) + enc(key), db=self._db)
                if raw is None:
                    continue
                expiry, type_name, data = _decode(raw)
                if now < expiry:
                    found[(ns, key)] = self.serde.loads_typed((type_name, data))
        return found

    def set(self, pairs: Mapping[FullKey, tuple[ValueT, int | None]]) -> None:
        """Stores `{(namespace, key): (value, ttl)}` in one write transaction.

        Raises:
            LmdbError: when LMDB fails (LmdbMapFullError past `max_map_size`).
            TypeError: when a value cannot be serialized (as the serializer says).
        """
        if not pairs:
            return
        now = self._clock()
        rows = []
        for (ns, key), (value, ttl) in pairs.items():
            type_name, data = self.serde.dumps_typed(value)
            name = type_name.encode()
            expiry = math.inf if ttl is None else now + ttl
            rows.append((_ns_prefix(tuple(ns)) + enc(key), _EXPIRY.pack(expiry) + bytes((len(name),)) + name + data))

        def put(txn: Any) -> None:
            for k, v in rows:
                txn.put(k, v)

        self._write(put, "LmdbCache: storing cached writes")

    def clear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        """Deletes the entries of `namespaces` (exact namespaces), or all entries.

        Raises:
            LmdbError: when LMDB fails.
        """
        if namespaces is None:

            def drop_all(txn: Any) -> None:
                txn.drop(self._db, delete=False)

            self._write(drop_all, "LmdbCache: clearing the cache")
            return
        prefixes = [_ns_prefix(tuple(ns)) for ns in namespaces]

        def drop(txn: Any) -> None:
            for prefix in prefixes:
                cursor = txn.cursor()
                if not cursor.set_range(prefix):
                    continue
                end = prefix + UPPER
                while True:
                    key = cursor.key()
                    if not key or key >= end or not cursor.delete():
                        break

        self._write(drop, "LmdbCache: clearing namespaces")

    def prune_expired(self) -> int:
        """Deletes every expired entry; returns how many were deleted.

        Raises:
            LmdbError: when LMDB fails.
        """
        now = self._clock()

        def prune(txn: Any) -> int:
            count = 0
            cursor = txn.cursor()
            ok = cursor.first()
            while ok:
                (expiry,) = _EXPIRY.unpack_from(cursor.value(), 0)
                if expiry <= now:
                    count += 1
                    ok = cursor.delete() and bool(cursor.key())
                else:
                    ok = cursor.next()
            return count

        return self._write(prune, "LmdbCache: pruning expired entries")
