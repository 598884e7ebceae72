"""The cache port: what the engine asks of a cache of node and task writes (E-8).

Why a port: a compiled graph takes `compile(cache=...)` / `entrypoint(cache=...)`
and only calls these methods, so a cache in memory, in LMDB or elsewhere can be
swapped without touching the engine. Method names, arguments and key shapes are
LangGraph's `langgraph.cache.base.BaseCache`:

- a full key is `(namespace, key)`; the namespace is a tuple of strings
  (`("__pregel_ns_writes", "<module>.<qualname>", "<node>")` for a graph node,
  the same without the node name for a functional-API task), the key a string
  digest of the `CachePolicy.key_func` result;
- `set` takes `{full_key: (value, ttl_seconds_or_None)}`;
- `clear(namespaces)` drops whole namespaces, `clear()` everything.

Values are serialized with lgembed's msgpack serializer
(`lgembed.checkpoint.serde.MsgpackSerializer`): loading never imports or calls
arbitrary code (no pickle).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, Generic, TypeVar

__all__ = ("BaseCache", "FullKey", "Namespace")

ValueT = TypeVar("ValueT")
Namespace = tuple[str, ...]
FullKey = tuple[Namespace, str]


class BaseCache(ABC, Generic[ValueT]):
    """A cache of values by `(namespace, key)`, with a time to live per entry.

    Args:
        serde: the serializer of values (`dumps_typed` / `loads_typed`); lgembed's
            msgpack serializer by default.
    """

    def __init__(self, *, serde: Any = None) -> None:
        if serde is None:
            from lgembed.checkpoint.serde import MsgpackSerializer

            serde = MsgpackSerializer()
        self.serde = serde

    @abstractmethod
    def get(self, keys: Sequence[FullKey]) -> dict[FullKey, ValueT]:
        """The cached, unexpired values of those of `keys` that are present."""

    @abstractmethod
    def set(self, pairs: Mapping[FullKey, tuple[ValueT, int | None]]) -> None:
        """Stores `{full_key: (value, ttl)}`; `ttl` in seconds, None for no expiry."""

    @abstractmethod
    def clear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        """Deletes the values of `namespaces`, or every value when None."""

    async def aget(self, keys: Sequence[FullKey]) -> dict[FullKey, ValueT]:
        """Async `get` (runs `get` inline: the backends here do no network I/O)."""
        return self.get(keys)

    async def aset(self, pairs: Mapping[FullKey, tuple[ValueT, int | None]]) -> None:
        """Async `set`."""
        self.set(pairs)

    async def aclear(self, namespaces: Sequence[Namespace] | None = None) -> None:
        """Async `clear`."""
        self.clear(namespaces)
