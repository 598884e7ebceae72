"""Caches of node and task writes (LangGraph's `langgraph.cache`).

`BaseCache` is the port; `lgembed.cache.memory.InMemoryCache` and
`lgembed.cache.lmdb.LmdbCache` are the backends. Importing this package imports
neither backend (nor lmdb, nor msgpack).
"""

from lgembed.cache.base import BaseCache, FullKey, Namespace

__all__ = ("BaseCache", "FullKey", "Namespace")
