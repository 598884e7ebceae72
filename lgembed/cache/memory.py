"""An in-process cache of node and task writes (LangGraph's `InMemoryCache`).

Why values are stored serialized: a cache hit hands the writes to a new run, which
must not share mutable objects with the run that produced them (LangGraph stores
`serde.dumps_typed` output for the same reason).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

from lgembed.cache.base import BaseCache, FullKey, Namespace, ValueT

__all__ = ("InMemoryCache",)


class InMemoryCache(BaseCache[ValueT]):
    """A dict of `{namespace: {key: (type, bytes, expiry)}}` guarded by a lock.

    Args:
        serde: serializer of values (lgembed's msgpack serializer by default).
    """

    def __init__(self, *, serde: Any = None) -> None:
        super().__init__(serde=serde)
        self._cache: dict[Namespace, dict[str, tuple[str, bytes, float | None]]] = {}
        self._lock = threading.RLock()

    _clock = staticmethod(time.time)
    # seconds since the epoch; tests replace it to move time forward

    def get(self, keys: Sequence[FullKey]) -> dict[FullKey, ValueT]:
        with self._lock:
            if not keys:
                return {}
            now = self._clock()
            values: dict[FullKey, ValueT] = {}
            for ns_tuple, key in keys:
                ns = tuple(ns_tuple)
                entries = self._cache.get(ns)
                if entries is None or key not in entries:
                    continue
                enc, val, expiry = entries[key]
                if expiry is None or now < expiry:
                    values[(ns, key)] = self.serde.loads_typed((enc, val))
                else:
                    del entries[key]
            return values

    def set(self, pairs: Mapping[FullKey, tuple[ValueT, int | None]]) -> None:
        with self._lock:
            now = self._clock()
            for (ns, key), (value, ttl) in pairs.items():
                expiry = None if ttl is None else now + ttl
                self._cache.setdefault(tuple(ns), {})[key] = (*self.serde.dumps_typed(value), expiry)

    def clear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        with self._lock:
            if namespaces is None:
                self._cache.clear()
                return
            for ns in namespaces:
                self._cache.pop(tuple(ns), None)
