"""LmdbStore: long-term namespaced memory in an LMDB environment.

Why this module exists: an agent on a device keeps memories (user preferences,
learned facts, calibration) across threads and restarts. LmdbStore gives
`InMemoryStore`'s `BaseStore` semantics (`lgembed.store.memory`, the reference) on
disk, in its own environment or in the one an `LmdbSaver` uses:

```python
with LmdbSaver.from_conn_string("/var/lib/agent") as saver:
    store = LmdbStore(env=saver.env)   # same environment, shared through the registry
```

Layout: two named databases. Keys are `enc(label)` components (see
`lgembed.checkpoint._lmdb_env`), so a namespace prefix is a byte prefix and
`search(("users",))` is one range scan:

===========================  ==========================================  =========================================
database                     key                                         value
===========================  ==========================================  =========================================
`lgembed.store.items`        labels..., 00 02, key                       msgpack [tag, value, created_at ISO,
                                                                         updated_at ISO]; value through `serde`
`lgembed.store.namespaces`   labels...                                   number of items (u64), for list_namespaces
===========================  ==========================================  =========================================

Differences from InMemoryStore, all observable only through order or absence:

- `search` returns items in namespace-then-key order (byte order of UTF-8, i.e.
  Python string order), not insertion order;
- `list_namespaces` lists the namespaces that hold at least one item, as
  LangGraph's database-backed stores do (InMemoryStore also lists a namespace that a
  get or delete named, or whose items were all deleted);
- values come back as the serializer returns them (a tuple comes back as a list)
  and are fresh objects on every read.

A batch runs in one transaction: reads see the store as it was before the batch,
puts are applied after all reads (last put to an address wins), all or nothing.
Durability, map growth and errors are the saver's (`lgembed.checkpoint.lmdb`):
every batch with a put is one commit, flushed to disk per the environment's fsync
policy, `flush_every` or `sync()`.
"""

from __future__ import annotations

import os
import struct
import threading
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any

from lgembed.checkpoint._lmdb_env import (
    EnvUser,
    check_options,
    DEFAULT_MAP_SIZE,
    DEFAULT_MAX_MAP_SIZE,
    LmdbCorruptError,
    LmdbError,
    decode_parts,
    enc,
)
from lgembed.checkpoint.serde import (
    MsgpackSerializer,
    SerializerProtocol,
    maybe_add_typed_methods,
)
from lgembed.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    validate_op_namespace,
)
from lgembed.store.memory import UNKNOWN_OP, _matches, _namespace_matches

__all__ = ("LmdbCorruptError", "LmdbError", "LmdbStore")

FORMAT_VERSION = 1
# on-disk layout version of the store databases (the table in the module docstring)
_ITEMS = b"lgembed.store.items"
_NAMESPACES = b"lgembed.store.namespaces"
_KEY_MARK = b"\x00\x02"
# between a namespace's labels and the item key; no encoded label contains it
_COUNT = struct.Struct(">Q")
INDEX_UNSUPPORTED = (
    "LmdbStore(index=...): semantic search is not supported on lgembed "
    "(it ships no embedding models and never imports langchain_core). "
    "Create the store without `index` and find items with "
    "search(namespace_prefix, filter=...)."
)
# LmdbStore constructed with a vector-index configuration


def _msgpack() -> Any:
    import msgpack

    return msgpack


def _ns_key(namespace: tuple[str, ...]) -> bytes:
    return b"".join(enc(label) for label in namespace)


def _check_label_types(op: Op) -> None:
    """Refuses non-str labels, which have no key encoding.

    Why only those: like InMemoryStore, `batch` accepts the labels the public methods
    refuse ("a.b", ""); the key encoding keeps ("a.b",) apart from ("a", "b"), so
    there is nothing to alias.

    Raises:
        InvalidNamespaceError: If a label is not a str (LangGraph's message).
    """
    if isinstance(op, (GetOp, PutOp)):
        labels: tuple = op.namespace
    elif isinstance(op, SearchOp):
        labels = op.namespace_prefix
    else:
        labels = tuple(label for c in op.match_conditions or () for label in c.path)
    if not all(isinstance(label, str) for label in labels):
        validate_op_namespace(op)
        msg = f"Namespace labels must be strings (got {labels!r})"
        raise InvalidNamespaceError(msg)


def _split_item_key(key: bytes) -> tuple[tuple[str, ...], str]:
    ns_bytes, _, item = key.partition(_KEY_MARK)
    labels = tuple(decode_parts(ns_bytes, ns_bytes.count(b"\x00\x01")))
    return labels, decode_parts(item, 1)[0]


class LmdbStore(EnvUser, BaseStore):
    """A store that keeps its items in an LMDB environment (a directory).

    Args:
        path: the environment directory (created if missing), or an open
            `lmdb.Environment` (same as `env=`).
        env: an open `lmdb.Environment`: `saver.env` to share an LmdbSaver's
            environment, or one the caller owns (needs `max_dbs` >= 8).
        map_size: initial map size in bytes when the environment is opened here.
        max_map_size: the map doubles on demand up to this size.
        fsync: "deferred", "commit" or "always" (see `lgembed.checkpoint.lmdb`);
            None takes the policy of an environment already open (or "deferred").
        flush_every: flush to disk after every N batches that write.
        serde: serializer of item values (`MsgpackSerializer()` by default).
        index: must be None: vector indexes are not supported.

    Raises:
        NotImplementedError: when an index configuration is given.
        ValueError: for an invalid option or a conflicting fsync policy.
        LmdbError: when the environment cannot be opened or has an unknown format.
    """

    __slots__ = (
        "_closed",
        "_counter_lock",
        "_items",
        "_namespaces",
        "_shared",
        "_writes_since_flush",
        "embeddings",
        "flush_every",
        "index_config",
        "max_map_size",
        "serde",
    )

    def __init__(
        self,
        path: str | os.PathLike | Any | None = None,
        *,
        env: Any = None,
        map_size: int = DEFAULT_MAP_SIZE,
        max_map_size: int = DEFAULT_MAX_MAP_SIZE,
        fsync: str | None = None,
        flush_every: int | None = None,
        serde: SerializerProtocol | None = None,
        index: IndexConfig | None = None,
    ) -> None:
        if index:
            raise NotImplementedError(INDEX_UNSUPPORTED)
        path, env = check_options(path, env, map_size, max_map_size, flush_every=flush_every)
        self.serde = maybe_add_typed_methods(serde or MsgpackSerializer())
        self.max_map_size = max_map_size
        self.flush_every = flush_every
        self.index_config: IndexConfig | None = None
        """Always None: no vector index (attribute kept for LangGraph compatibility)."""
        self.embeddings: Any = None
        """Always None: no embedding model."""
        self._writes_since_flush = 0
        self._counter_lock = threading.Lock()
        self._items, self._namespaces = self._attach(
            path,
            env=env,
            fsync=fsync,
            map_size=map_size,
            kind="store",
            version=FORMAT_VERSION,
            names=(_ITEMS, _NAMESPACES),
        )

    # --- lifecycle ------------------------------------------------------------------

    def __repr__(self) -> str:
        return f"LmdbStore({self.path!r}, fsync={self._shared.fsync!r})"

    # --- batches --------------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Execute operations in one transaction.

        Reads (get, search, list_namespaces) see the store as it was before the
        batch; the batch's puts are applied after all reads, and of several puts to
        one (namespace, key) the last wins. Nothing is written when anything fails.

        Args:
            ops: The operations to execute.

        Returns:
            One result per operation, in order (None for a put).

        Raises:
            ValueError: If an operation has an unknown type, a filter an unknown
                operator, a match condition an unknown match type, or an ordering
                operator ($gt ...) a string float() cannot parse.
            TypeError: If an ordering operator meets a value float() does not take,
                or a put value cannot be serialized.
            InvalidNamespaceError: If a namespace label is invalid.
            LmdbError: If the environment cannot be read or written.
        """
        ops = list(ops)
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            if not isinstance(op, (GetOp, SearchOp, ListNamespacesOp, PutOp)):
                raise ValueError(UNKNOWN_OP.format(type=type(op)))
            _check_label_types(op)
            if isinstance(op, PutOp):
                puts[(op.namespace, op.key)] = op
        if not puts:
            with self._shared.read("LmdbStore: reading") as txn:
                return self._read(txn, ops)
        rows = self._serialize(puts)

        def work(txn: Any) -> list[Result]:
            results = self._read(txn, ops)
            self._write(txn, rows)
            return results

        durable = False
        if self.flush_every is not None:
            with self._counter_lock:
                self._writes_since_flush += 1
                if self._writes_since_flush >= self.flush_every:
                    self._writes_since_flush = 0
                    durable = True
        return self._shared.write(
            work, owner="LmdbStore", action="LmdbStore: writing", max_map_size=self.max_map_size, durable=durable
        )

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Execute operations in one transaction; see `batch` (runs in the calling thread).

        Raises:
            As `batch`.
        """
        return self.batch(ops)

    # --- execution (inside a transaction) --------------------------------------------

    def _serialize(self, puts: dict[tuple[tuple[str, ...], str], PutOp]) -> list[tuple[bytes, bytes, bytes | None]]:
        """(namespace key, item key, record or None for a delete), serialized before writing."""
        packb = _msgpack().packb
        rows = []
        for (namespace, key), op in puts.items():
            ns_key = _ns_key(namespace)
            item_key = ns_key + _KEY_MARK + enc(key)
            if op.value is None:
                rows.append((ns_key, item_key, None))
                continue
            now = datetime.now(timezone.utc).isoformat()
            # LangGraph resets created_at on every put, so this does too
            rows.append((ns_key, item_key, packb([*self.serde.dumps_typed(dict(op.value)), now, now])))
        return rows

    def _write(self, txn: Any, rows: list[tuple[bytes, bytes, bytes | None]]) -> None:
        for ns_key, item_key, record in rows:
            existed = txn.get(item_key, db=self._items) is not None
            if record is None:
                if existed:
                    txn.delete(item_key, db=self._items)
                    self._count(txn, ns_key, -1)
            else:
                txn.put(item_key, record, db=self._items)
                if not existed:
                    self._count(txn, ns_key, 1)

    def _count(self, txn: Any, ns_key: bytes, delta: int) -> None:
        raw = txn.get(ns_key, db=self._namespaces)
        count = (_COUNT.unpack(raw)[0] if raw else 0) + delta
        if count > 0:
            txn.put(ns_key, _COUNT.pack(count), db=self._namespaces)
        elif raw is not None:
            txn.delete(ns_key, db=self._namespaces)

    def _read(self, txn: Any, ops: list[Op]) -> list[Result]:
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                raw = txn.get(_ns_key(op.namespace) + _KEY_MARK + enc(op.key), db=self._items)
                results.append(None if raw is None else self._item(Item, op.namespace, op.key, raw))
            elif isinstance(op, SearchOp):
                results.append(self._search(txn, op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(txn, op))
            else:
                results.append(None)
        return results

    def _item(self, cls: type, namespace: tuple[str, ...], key: str, raw: bytes) -> Any:
        try:
            record = _msgpack().unpackb(raw, raw=False)
            tag, data, created, updated = record
        except Exception as e:
            msg = f"LmdbStore: the stored item {namespace!r}/{key!r} in {self.path!r} is not readable ({e})"
            raise LmdbCorruptError(msg, path=self.path) from e
        value = self.serde.loads_typed((tag, data))
        if cls is Item:
            return Item(value=value, key=key, namespace=namespace, created_at=created, updated_at=updated)
        return SearchItem(namespace, key, value, datetime.fromisoformat(created), datetime.fromisoformat(updated))

    def _search(self, txn: Any, op: SearchOp) -> list[SearchItem]:
        prefix = _ns_key(op.namespace_prefix)
        conditions = op.filter
        # Strategy: as InMemoryStore: without a filter, stop once offset + limit items
        # are found (and skip the first `offset` without loading them); with one, test
        # every item, so an item that makes the filter raise raises. Negative bounds
        # are slice bounds: collect everything, then slice.
        stop = None
        if not conditions and op.offset >= 0 and op.limit >= 0:
            stop = op.offset + op.limit
        found: list[Any] = []
        cur = txn.cursor(db=self._items)
        if stop != 0 and cur.set_range(prefix):
            for key, raw in cur:
                if not key.startswith(prefix):
                    break
                namespace, item_key = _split_item_key(key)
                if stop is not None and len(found) < op.offset:
                    found.append(None)  # skipped by the offset: not loaded
                else:
                    item = self._item(SearchItem, namespace, item_key, raw)
                    if conditions and not all(_matches(item.value.get(f), v) for f, v in conditions.items()):
                        continue
                    found.append(item)
                if len(found) == stop:
                    break
        return found[op.offset : op.offset + op.limit]

    def _list_namespaces(self, txn: Any, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        conditions = op.match_conditions or ()
        # Strategy: the literal labels of a prefix condition, up to its first "*",
        # narrow the scan to one byte range
        literal: list[str] = []
        for condition in conditions:
            if condition.match_type == "prefix":
                for label in condition.path:
                    if label == "*":
                        break
                    literal.append(label)
                break
        start = _ns_key(tuple(literal))
        namespaces = []
        cur = txn.cursor(db=self._namespaces)
        if cur.set_range(start):
            for key in cur.iternext(keys=True, values=False):
                if not key.startswith(start):
                    break
                namespaces.append(tuple(decode_parts(key, key.count(b"\x00\x01"))))
        if conditions:
            namespaces = [ns for ns in namespaces if all(_namespace_matches(c, ns) for c in conditions)]
        if op.max_depth is not None:
            namespaces = list({ns[: op.max_depth] for ns in namespaces})
        return sorted(namespaces)[op.offset : op.offset + op.limit]

