"""A dict-backed store (LangGraph's `InMemoryStore`) for tests and short-lived runs.

Items live in `_data[namespace][key]` (plain dicts, so iteration follows insertion
order, which is the order `search` returns). One re-entrant lock serialises batches,
because parallel tasks of a graph step run in threads and may use the store at once.

Semantic search is not available: LangGraph builds it on LangChain embedding
models, which lgembed does not ship. `InMemoryStore(index=...)` therefore raises,
and `search(query=...)` without an index behaves as in LangGraph (the query is
ignored and every `score` is None).
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from typing import Any

from lgembed.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

__all__ = ("InMemoryStore",)

INDEX_UNSUPPORTED = (
    "InMemoryStore(index=...): semantic search is not supported on lgembed "
    "(it ships no embedding models and never imports langchain_core). "
    "Create the store without `index` and find items with "
    "search(namespace_prefix, filter=...) (equality and $eq/$ne/$gt/$gte/$lt/$lte), "
    "or compute embeddings elsewhere, store them in item values and rank them yourself."
)
# InMemoryStore constructed with a vector-index configuration
UNKNOWN_OP = "Unknown operation type: {type}"
# batch() given something that is not GetOp/SearchOp/PutOp/ListNamespacesOp (LangGraph's text)
UNKNOWN_OPERATOR = "Unsupported operator: {operator}"
# a filter {"field": {"$op": v}} with an operator outside _OPERATORS (LangGraph's text)
UNKNOWN_MATCH_TYPE = "Unsupported match type: {match_type}"
# a MatchCondition whose match_type is neither "prefix" nor "suffix" (LangGraph's text)


class InMemoryStore(BaseStore):
    """A store that keeps its items in process memory (lost when the process exits).

    Example:
        ```python
        store = InMemoryStore()
        store.put(("users", "123"), "prefs", {"theme": "dark"})
        store.get(("users", "123"), "prefs").value  # {"theme": "dark"}
        store.search(("users",), filter={"theme": "dark"})
        ```

    Args:
        index: Must be None (or empty). Vector-index configurations are not supported.

    Raises:
        NotImplementedError: If an index configuration is given.
    """

    __slots__ = ("_data", "_lock", "index_config", "embeddings")

    def __init__(self, *, index: IndexConfig | None = None) -> None:
        if index:
            raise NotImplementedError(INDEX_UNSUPPORTED)
        # Why defaultdict: LangGraph's store also creates an empty namespace when a
        # get/delete names one that does not exist, and list_namespaces shows it.
        # Programs (and the conformance suite) can observe that, so it is kept.
        self._data: defaultdict[tuple[str, ...], dict[str, Item]] = defaultdict(dict)
        self._lock = threading.RLock()
        self.index_config: IndexConfig | None = None
        """Always None: no vector index (attribute kept for LangGraph compatibility)."""
        self.embeddings: Any = None
        """Always None: no embedding model."""

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Execute operations in one batch.

        Reads (get, search, list_namespaces) see the store as it was before the
        batch; the batch's puts are applied after all reads, and of several puts to
        one (namespace, key) the last wins.

        Args:
            ops: The operations to execute.

        Returns:
            One result per operation, in order (None for a put).

        Raises:
            ValueError: If an operation has an unknown type, a filter an unknown
                operator, a match condition an unknown match type, or an ordering
                operator ($gt ...) a string float() cannot parse.
            TypeError: If an ordering operator meets a value float() does not take
                (e.g. None, for an item without the field).
        """
        with self._lock:
            results, puts = self._read(ops)
            self._write(puts)
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Execute operations in one batch; see `batch` (no I/O, so it never awaits).

        Args:
            ops: The operations to execute.

        Returns:
            One result per operation, in order (None for a put).

        Raises:
            ValueError: As `batch`.
            TypeError: As `batch`.
        """
        return self.batch(ops)

    # --- execution (callers hold the lock) ---

    def _read(
        self, ops: Iterable[Op]
    ) -> tuple[list[Result], dict[tuple[tuple[str, ...], str], PutOp]]:
        """Answers the read operations and collects the puts, last one per address."""
        results: list[Result] = []
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            if isinstance(op, GetOp):
                results.append(self._data[op.namespace].get(op.key))
            elif isinstance(op, SearchOp):
                results.append(self._search(op))
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            elif isinstance(op, PutOp):
                puts[(op.namespace, op.key)] = op
                results.append(None)
            else:
                raise ValueError(UNKNOWN_OP.format(type=type(op)))
        return results, puts

    def _write(self, puts: dict[tuple[tuple[str, ...], str], PutOp]) -> None:
        for (namespace, key), op in puts.items():
            if op.value is None:
                self._data[namespace].pop(key, None)
                continue
            now = datetime.now(timezone.utc)
            # Replacing keeps the key's place in the dict, hence in search order.
            # LangGraph resets created_at on every put, so this does too.
            self._data[namespace][key] = Item(
                value=dict(op.value), key=key, namespace=namespace, created_at=now, updated_at=now
            )

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix = op.namespace_prefix
        depth = len(prefix)
        conditions = op.filter
        # Strategy: without a filter, stop once offset + limit items are collected.
        # With one, scan everything, so an item that makes the filter raise raises
        # exactly as in LangGraph. Negative bounds are slice bounds: scan everything.
        stop = None
        if not conditions and op.offset >= 0 and op.limit >= 0:
            stop = op.offset + op.limit
        found: list[Item] = []
        for namespace, items in self._data.items():
            if namespace[:depth] != prefix:
                continue
            for item in items.values():
                if conditions and not all(
                    _matches(item.value.get(field), expected)
                    for field, expected in conditions.items()
                ):
                    continue
                found.append(item)
                if len(found) == stop:
                    break
            if len(found) == stop:
                break
        return [
            SearchItem(item.namespace, item.key, item.value, item.created_at, item.updated_at)
            for item in found[op.offset : op.offset + op.limit]
        ]

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        namespaces: Iterable[tuple[str, ...]] = list(self._data)
        if op.match_conditions:
            namespaces = [
                ns
                for ns in namespaces
                if all(_namespace_matches(condition, ns) for condition in op.match_conditions)
            ]
        if op.max_depth is not None:
            namespaces = {ns[: op.max_depth] for ns in namespaces}
        return sorted(namespaces)[op.offset : op.offset + op.limit]


# --- filters --------------------------------------------------------------------------


_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "$eq": lambda actual, operand: actual == operand,
    "$ne": lambda actual, operand: actual != operand,
    "$gt": lambda actual, operand: float(actual) > float(operand),
    "$gte": lambda actual, operand: float(actual) >= float(operand),
    "$lt": lambda actual, operand: float(actual) < float(operand),
    "$lte": lambda actual, operand: float(actual) <= float(operand),
}
"""Filter operators; the ordering ones compare as floats (like Postgres JSONB numbers)."""


def _matches(actual: Any, expected: Any) -> bool:
    """Whether a value (None when absent) satisfies one filter entry.

    A dict with any "$" key is a set of operators, all of which must hold; another
    dict matches a dict whose entries match recursively; a list or tuple matches a
    list or tuple of the same length element-wise; anything else compares with ==.

    Raises:
        ValueError: If an operator is unknown, or an ordering operator gets a string
            float() cannot parse.
        TypeError: If an ordering operator gets a value float() does not take (None).
    """
    if isinstance(expected, dict):
        if any(name.startswith("$") for name in expected):
            return all(_apply(actual, name, operand) for name, operand in expected.items())
        return isinstance(actual, dict) and all(
            _matches(actual.get(k), v) for k, v in expected.items()
        )
    if isinstance(expected, (list, tuple)):
        return (
            isinstance(actual, (list, tuple))
            and len(actual) == len(expected)
            and all(_matches(a, e) for a, e in zip(actual, expected, strict=False))
        )
    return actual == expected


def _apply(actual: Any, operator: str, operand: Any) -> bool:
    """Applies one filter operator.

    Raises:
        ValueError: If the operator is unknown.
    """
    try:
        compare = _OPERATORS[operator]
    except KeyError:
        raise ValueError(UNKNOWN_OPERATOR.format(operator=operator)) from None
    return compare(actual, operand)


def _namespace_matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """Whether a namespace satisfies a prefix/suffix pattern ("*" matches any label).

    Raises:
        ValueError: If the match type is neither "prefix" nor "suffix".
    """
    path = condition.path
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        labels = namespace[: len(path)]
    elif condition.match_type == "suffix":
        labels = namespace[len(namespace) - len(path) :]
    else:
        raise ValueError(UNKNOWN_MATCH_TYPE.format(match_type=condition.match_type))
    return all(want == "*" or want == got for want, got in zip(path, labels, strict=False))
