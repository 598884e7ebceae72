"""The store interface of LangGraph (`langgraph.store.base`), without its dependencies.

A store is long-term memory that outlives one thread: items (dicts) addressed by a
namespace (a tuple of labels) and a key. Every public method validates its
namespace, then builds one operation (`GetOp`, `SearchOp`, `PutOp`,
`ListNamespacesOp`) and hands it to the one method a store must implement,
`batch` (or `abatch`). Names, signatures, defaults and error texts are LangGraph
1.2's, so a node written against `langgraph.store.base.BaseStore` runs unchanged.

Why no embeddings here: LangGraph's `IndexConfig.embed` takes a LangChain
`Embeddings` object; lgembed never imports langchain_core, so `IndexConfig` is kept
as a plain TypedDict for type compatibility and no store in lgembed accepts one.

Why over 600 lines: most of it is the docstrings of the public API. Item, the ops
and BaseStore stay in this one module, as in LangGraph, so their `__module__` is
the same path (`lgembed.store.base` for `langgraph.store.base`) wherever code or
serialized data names a class by module.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, Literal, NamedTuple, TypedDict

__all__ = (
    "NOT_PROVIDED",
    "BaseStore",
    "GetOp",
    "IndexConfig",
    "InvalidNamespaceError",
    "Item",
    "ListNamespacesOp",
    "MatchCondition",
    "NamespaceMatchType",
    "NamespacePath",
    "NotProvided",
    "Op",
    "PutOp",
    "Result",
    "SearchItem",
    "SearchOp",
    "TTLConfig",
    "validate_op_namespace",
)

# --- error texts (T-3), byte for byte LangGraph's -------------------------------------

EMPTY_NAMESPACE = "Namespace cannot be empty."
# put/aput with namespace ()
RESERVED_ROOT = 'Root label for namespace cannot be "langgraph". Got: {namespace}'
# put/aput with namespace ("langgraph", ...): that root is reserved for LangGraph itself
LABEL_NOT_STR = (
    "Invalid namespace label '{label}' found in {namespace}. Namespace labels"
    " must be strings, but got {type_name}."
)
# a label that is not a str (checked first)
LABEL_PERIOD = (
    "Invalid namespace label '{label}' found in {namespace}. "
    "Namespace labels cannot contain periods ('.')."
)
# Why: database-backed stores join labels with "." so ("a.b",) would alias ("a", "b")
LABEL_NUL = (
    "Invalid namespace label '{label}' found in {namespace}. "
    "Namespace labels cannot contain NUL bytes ('\\x00')."
)
# a label containing a NUL byte
LABEL_EMPTY = "Namespace labels cannot be empty strings. Got {label} in {namespace}"
# an empty label; the text really has no quotes around the empty label
TTL_UNSUPPORTED = (
    "TTL is not supported by {cls}. Use a store implementation that supports TTL or set ttl=None."
)
# put/aput with a ttl on a store whose `supports_ttl` is False


class NotProvided:
    """Type of `NOT_PROVIDED`: "argument not given", distinct from an explicit None."""

    __slots__ = ()

    def __bool__(self) -> Literal[False]:
        return False

    def __repr__(self) -> str:
        # LangGraph's spelling, kept so reprs of signatures match
        return "NOT_GIVEN"


NOT_PROVIDED = NotProvided()
"""Default of `put(ttl=...)`: use the store's `TTLConfig.default_ttl`."""


class InvalidNamespaceError(ValueError):
    """Provided namespace is invalid."""


class Item:
    """A stored value with its address and timestamps.

    Args:
        value: The stored data. Its top-level keys can be used in search filters.
        key: Unique identifier within the namespace.
        namespace: Hierarchical path of the item, e.g. `("documents", "user123")`.
        created_at: When the item was created (an ISO string is parsed).
        updated_at: When the item was last updated (an ISO string is parsed).
    """

    __slots__ = ("value", "key", "namespace", "created_at", "updated_at")

    def __init__(
        self,
        *,
        value: dict[str, Any],
        key: str,
        namespace: tuple[str, ...],
        created_at: datetime,
        updated_at: datetime,
    ) -> None:
        self.value = value
        self.key = key
        # Why: an item loaded from JSON/msgpack brings a list and ISO strings back.
        self.namespace = tuple(namespace)
        self.created_at = _as_datetime(created_at)
        self.updated_at = _as_datetime(updated_at)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Item):
            return False
        return (
            self.value == other.value
            and self.key == other.key
            and self.namespace == other.namespace
            and self.created_at == other.created_at
            and self.updated_at == other.updated_at
        )

    def __hash__(self) -> int:
        # The address only: value is a dict (unhashable) and may be mutated.
        return hash((self.namespace, self.key))

    def dict(self) -> dict:
        """The item as JSON-ready data: namespace as a list, timestamps as ISO strings."""
        return {
            "namespace": list(self.namespace),
            "key": self.key,
            "value": self.value,
            "created_at": self.created_at.isoformat(),
            "updated_at": self.updated_at.isoformat(),
        }

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={value!r}" for name, value in self.dict().items())
        # LangGraph prints "Item(" for SearchItem too (with a trailing score=...)
        return f"Item({fields})"


class SearchItem(Item):
    """An item returned by `search`, with its relevance score.

    Args:
        namespace: Hierarchical path to the item.
        key: Unique identifier within the namespace.
        value: The stored value.
        created_at: When the item was first created.
        updated_at: When the item was last updated.
        score: Similarity score of a ranked (semantic) search; None otherwise,
            which on lgembed is always.
    """

    __slots__ = ("score",)

    def __init__(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: dict[str, Any],
        created_at: datetime,
        updated_at: datetime,
        score: float | None = None,
    ) -> None:
        super().__init__(
            value=value,
            key=key,
            namespace=namespace,
            created_at=created_at,
            updated_at=updated_at,
        )
        self.score = score

    def dict(self) -> dict:
        """Like `Item.dict`, plus `"score"`."""
        data = super().dict()
        data["score"] = self.score
        return data


def _as_datetime(value: datetime | str) -> datetime:
    return datetime.fromisoformat(value) if isinstance(value, str) else value


# --- operations -----------------------------------------------------------------------


class GetOp(NamedTuple):
    """Fetch one item by namespace and key."""

    namespace: tuple[str, ...]
    """Hierarchical path of the item, e.g. `("users", "profiles")`."""
    key: str
    """Identifier of the item within its namespace."""
    refresh_ttl: bool = True
    """Whether reading restarts the item's TTL (ignored by stores without TTL)."""


class SearchOp(NamedTuple):
    """List the items under a namespace prefix that match a filter, paginated.

    Filter syntax: `{"field": value}` is an equality test (nested dicts and lists
    compare structurally); `{"field": {"$op": value}}` uses an operator, one of
    `$eq`, `$ne`, `$gt`, `$gte`, `$lt`, `$lte` (the ordering ones compare as floats).
    """

    namespace_prefix: tuple[str, ...]
    """Scope of the search: `()` is the whole store, `("docs",)` everything under docs."""
    filter: dict[str, Any] | None = None
    """Conditions on the item's value, all of which must hold."""
    limit: int = 10
    """Maximum number of items returned."""
    offset: int = 0
    """Number of matching items skipped first."""
    query: str | None = None
    """Natural-language query of a semantic search (needs a vector index)."""
    refresh_ttl: bool = True
    """Whether reading restarts the returned items' TTLs."""


NamespacePath = tuple[str | Literal["*"], ...]
"""A namespace pattern for `list_namespaces`; the label `"*"` matches any label."""

NamespaceMatchType = Literal["prefix", "suffix"]
"""Which end of a namespace a `MatchCondition` path is compared with."""


class MatchCondition(NamedTuple):
    """A namespace pattern anchored at the start (`"prefix"`) or end (`"suffix"`)."""

    match_type: NamespaceMatchType
    """`"prefix"` or `"suffix"`."""
    path: NamespacePath
    """Labels to compare; `"*"` matches any label."""


class ListNamespacesOp(NamedTuple):
    """List the distinct namespaces, optionally filtered, truncated and paginated."""

    match_conditions: tuple[MatchCondition, ...] | None = None
    """Conditions that all must hold for a namespace to be listed."""
    max_depth: int | None = None
    """Truncate namespaces to this many labels (duplicates then collapse)."""
    limit: int = 100
    """Maximum number of namespaces returned."""
    offset: int = 0
    """Number of namespaces skipped first (in sorted order)."""


class PutOp(NamedTuple):
    """Store, replace or (with `value=None`) delete one item."""

    namespace: tuple[str, ...]
    """Hierarchical path of the item, e.g. `("documents", "user123")`."""
    key: str
    """Identifier of the item within its namespace."""
    value: Mapping[str, Any] | None
    """The data to store (a mapping with str keys), or None to delete the item."""
    index: Literal[False] | list[str] | None = None
    """Fields to embed for semantic search: None = the store's default, False = none."""
    ttl: float | None = None
    """Minutes until the item expires after its last access; None = never."""


Op = GetOp | SearchOp | PutOp | ListNamespacesOp
"""Any operation accepted by `BaseStore.batch`."""
Result = Item | list[Item] | list[SearchItem] | list[tuple[str, ...]] | None
"""The result of one operation: an item or None (get), items (search), namespaces
(list_namespaces), None (put)."""


# --- configuration --------------------------------------------------------------------


class TTLConfig(TypedDict, total=False):
    """Time-to-live behaviour of a store that supports it (`supports_ttl = True`)."""

    refresh_on_read: bool
    """Default of `refresh_ttl` for get/search; True when not configured."""
    omit_expired: bool
    """Hide expired items from reads before a sweep deletes them; default False."""
    default_ttl: float | None
    """TTL in minutes of items put without `ttl`; None = no expiry."""
    sweep_interval_minutes: int | None
    """Minutes between deletions of expired items; None = no sweeping."""


class IndexConfig(TypedDict, total=False):
    """Vector-index configuration of a store with semantic search (LangGraph's shape).

    Kept so that type annotations written for LangGraph resolve; lgembed ships no
    embedding support and its stores reject an index configuration.
    """

    dims: int
    """Number of dimensions of the embedding vectors."""
    embed: Any
    """An embeddings object, a (sync or async) function of a list of texts, or a
    provider string."""
    fields: list[str] | None
    """JSON paths of the text to embed; default `["$"]` (the whole value)."""


# --- the interface --------------------------------------------------------------------


class BaseStore(ABC):
    """Abstract base of key-value stores with hierarchical namespaces.

    A subclass implements `batch` and `abatch`; every other method is built on
    them. TTL support is off unless a subclass sets `supports_ttl = True`.
    """

    supports_ttl: bool = False
    """Whether `put(ttl=...)` is honoured; if False a non-None ttl raises."""
    ttl_config: TTLConfig | None = None
    """Defaults for `refresh_ttl` and `ttl` when a call leaves them out."""

    __slots__ = ("__weakref__",)

    @abstractmethod
    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Execute operations synchronously, in one batch.

        Args:
            ops: The operations to execute.

        Returns:
            One result per operation, in the order of `ops`.
        """

    @abstractmethod
    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Execute operations asynchronously, in one batch.

        Args:
            ops: The operations to execute.

        Returns:
            One result per operation, in the order of `ops`.
        """

    # --- sync API ---

    def get(
        self,
        namespace: tuple[str, ...],
        key: str,
        *,
        refresh_ttl: bool | None = None,
    ) -> Item | None:
        """Retrieve one item.

        Args:
            namespace: Hierarchical path of the item.
            key: Identifier within the namespace (converted with `str`).
            refresh_ttl: Whether reading restarts the item's TTL; None uses the
                store's `ttl_config` (default True). Ignored without TTL support.

        Returns:
            The item, or None if there is none.

        Raises:
            InvalidNamespaceError: If a namespace label is not a string, is empty,
                or contains a period or a NUL byte.
        """
        _validate_namespace_labels(namespace)
        op = GetOp(namespace, str(key), _ensure_refresh(self.ttl_config, refresh_ttl))
        return self.batch([op])[0]

    def search(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        """Search the items under a namespace prefix.

        Args:
            namespace_prefix: Hierarchical path prefix to search within.
            query: Natural-language query; used only by stores with a vector index.
            filter: Conditions on item values (see `SearchOp`).
            limit: Maximum number of items to return.
            offset: Number of matching items to skip first.
            refresh_ttl: Whether reading restarts the returned items' TTLs; None
                uses the store's `ttl_config`.

        Returns:
            The matching items.

        Raises:
            InvalidNamespaceError: If a prefix label is not a string, is empty, or
                contains a period or a NUL byte.
        """
        _validate_namespace_labels(namespace_prefix)
        op = SearchOp(
            namespace_prefix,
            filter,
            limit,
            offset,
            query,
            _ensure_refresh(self.ttl_config, refresh_ttl),
        )
        return self.batch([op])[0]

    def put(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | None | NotProvided = NOT_PROVIDED,
    ) -> None:
        """Store or replace an item.

        Args:
            namespace: Hierarchical path of the item, e.g. `("documents", "user123")`.
            key: Identifier within the namespace (converted with `str`).
            value: The data: a mapping with string keys.
            index: Fields to embed for semantic search (None = store default,
                False = none). Ignored by stores without a vector index.
            ttl: Minutes until the item expires after its last access; None means
                never; not given uses the store's `ttl_config`.

        Raises:
            InvalidNamespaceError: If the namespace is empty, its root label is
                `"langgraph"`, or a label is not a string, is empty, or contains a
                period or a NUL byte.
            NotImplementedError: If `ttl` is a number and the store has no TTL support.
        """
        _validate_namespace(namespace)
        self._check_ttl(ttl)
        op = PutOp(namespace, str(key), value, index=index, ttl=_ensure_ttl(self.ttl_config, ttl))
        self.batch([op])

    def delete(self, namespace: tuple[str, ...], key: str) -> None:
        """Delete an item (nothing happens if it does not exist).

        Args:
            namespace: Hierarchical path of the item.
            key: Identifier within the namespace (converted with `str`).

        Raises:
            InvalidNamespaceError: If a namespace label is not a string, is empty,
                or contains a period or a NUL byte.
        """
        _validate_namespace_labels(namespace)
        self.batch([PutOp(namespace, str(key), None, ttl=None)])

    def list_namespaces(
        self,
        *,
        prefix: NamespacePath | None = None,
        suffix: NamespacePath | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        """List namespaces, sorted.

        Args:
            prefix: Only namespaces starting with these labels (`"*"` = any label).
            suffix: Only namespaces ending with these labels (`"*"` = any label).
            max_depth: Truncate namespaces to this many labels; duplicates collapse.
            limit: Maximum number of namespaces to return.
            offset: Number of namespaces to skip first.

        Returns:
            The matching namespaces, e.g. with namespaces `("a", "b", "c")`,
            `("a", "b", "d", "e")` and `("a", "c")`, `prefix=("a", "b"),
            max_depth=3` gives `[("a", "b", "c"), ("a", "b", "d")]`.

        Raises:
            InvalidNamespaceError: If a `prefix` or `suffix` label is not a string,
                is empty, or contains a period or a NUL byte.
        """
        return self.batch([_list_namespaces_op(prefix, suffix, max_depth, limit, offset)])[0]

    # --- async API (the same operations through abatch) ---

    async def aget(
        self,
        namespace: tuple[str, ...],
        key: str,
        *,
        refresh_ttl: bool | None = None,
    ) -> Item | None:
        """Asynchronous `get`: same arguments and result.

        Raises:
            InvalidNamespaceError: As `get`.
        """
        _validate_namespace_labels(namespace)
        op = GetOp(namespace, str(key), _ensure_refresh(self.ttl_config, refresh_ttl))
        return (await self.abatch([op]))[0]

    async def asearch(
        self,
        namespace_prefix: tuple[str, ...],
        /,
        *,
        query: str | None = None,
        filter: dict[str, Any] | None = None,
        limit: int = 10,
        offset: int = 0,
        refresh_ttl: bool | None = None,
    ) -> list[SearchItem]:
        """Asynchronous `search`: same arguments and result.

        Raises:
            InvalidNamespaceError: As `search`.
        """
        _validate_namespace_labels(namespace_prefix)
        op = SearchOp(
            namespace_prefix,
            filter,
            limit,
            offset,
            query,
            _ensure_refresh(self.ttl_config, refresh_ttl),
        )
        return (await self.abatch([op]))[0]

    async def aput(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: Mapping[str, Any],
        index: Literal[False] | list[str] | None = None,
        *,
        ttl: float | None | NotProvided = NOT_PROVIDED,
    ) -> None:
        """Asynchronous `put`: same arguments.

        Raises:
            InvalidNamespaceError: As `put`.
            NotImplementedError: If `ttl` is a number and the store has no TTL support.
        """
        _validate_namespace(namespace)
        self._check_ttl(ttl)
        op = PutOp(namespace, str(key), value, index=index, ttl=_ensure_ttl(self.ttl_config, ttl))
        await self.abatch([op])

    async def adelete(self, namespace: tuple[str, ...], key: str) -> None:
        """Asynchronous `delete`: same arguments.

        Raises:
            InvalidNamespaceError: As `delete`.
        """
        _validate_namespace_labels(namespace)
        await self.abatch([PutOp(namespace, str(key), None)])

    async def alist_namespaces(
        self,
        *,
        prefix: NamespacePath | None = None,
        suffix: NamespacePath | None = None,
        max_depth: int | None = None,
        limit: int = 100,
        offset: int = 0,
    ) -> list[tuple[str, ...]]:
        """Asynchronous `list_namespaces`: same arguments and result.

        Raises:
            InvalidNamespaceError: As `list_namespaces`.
        """
        op = _list_namespaces_op(prefix, suffix, max_depth, limit, offset)
        return (await self.abatch([op]))[0]

    def _check_ttl(self, ttl: float | None | NotProvided) -> None:
        if ttl is not NOT_PROVIDED and ttl is not None and not self.supports_ttl:
            msg = TTL_UNSUPPORTED.format(cls=type(self).__name__)
            raise NotImplementedError(msg)


# --- helpers --------------------------------------------------------------------------


def _list_namespaces_op(
    prefix: NamespacePath | None,
    suffix: NamespacePath | None,
    max_depth: int | None,
    limit: int,
    offset: int,
) -> ListNamespacesOp:
    """Validates the patterns and builds the operation of (a)list_namespaces."""
    _validate_namespace_labels(prefix or ())
    _validate_namespace_labels(suffix or ())
    conditions = []
    if prefix:
        conditions.append(MatchCondition(match_type="prefix", path=prefix))
    if suffix:
        conditions.append(MatchCondition(match_type="suffix", path=suffix))
    return ListNamespacesOp(
        match_conditions=tuple(conditions), max_depth=max_depth, limit=limit, offset=offset
    )


def _validate_namespace(namespace: tuple[str, ...]) -> None:
    """Checks a namespace that is written to (put).

    Raises:
        InvalidNamespaceError: If it is empty, a label is invalid, or its root
            label is `"langgraph"`.
    """
    if not namespace:
        raise InvalidNamespaceError(EMPTY_NAMESPACE)
    _validate_namespace_labels(namespace)
    if namespace[0] == "langgraph":
        raise InvalidNamespaceError(RESERVED_ROOT.format(namespace=namespace))


def _validate_namespace_labels(namespace: tuple[str, ...]) -> None:
    """Checks every label of a namespace (or namespace pattern).

    Raises:
        InvalidNamespaceError: If a label is not a str, contains "." or NUL, or is empty.
    """
    for label in namespace:
        if not isinstance(label, str):
            msg = LABEL_NOT_STR.format(
                label=label, namespace=namespace, type_name=type(label).__name__
            )
        elif "." in label:
            msg = LABEL_PERIOD.format(label=label, namespace=namespace)
        elif "\x00" in label:
            msg = LABEL_NUL.format(label=label, namespace=namespace)
        elif not label:
            msg = LABEL_EMPTY.format(label=label, namespace=namespace)
        else:
            continue
        raise InvalidNamespaceError(msg)


def validate_op_namespace(op: Op) -> None:
    """Checks the namespace labels of an operation passed straight to `batch`.

    The public methods validate before batching; a store that encodes namespaces
    as delimited text should call this on every operation it executes, so that
    a label such as `"foo.bar"` cannot address the namespace `("foo", "bar")`.

    Raises:
        InvalidNamespaceError: If a label is not a str, is empty, or contains a
            period or a NUL byte.
    """
    if isinstance(op, (GetOp, PutOp)):
        _validate_namespace_labels(op.namespace)
    elif isinstance(op, SearchOp):
        _validate_namespace_labels(op.namespace_prefix)
    elif isinstance(op, ListNamespacesOp):
        for condition in op.match_conditions or ():
            _validate_namespace_labels(condition.path)


def _ensure_refresh(ttl_config: TTLConfig | None, refresh_ttl: bool | None = None) -> bool:
    """The effective `refresh_ttl`: the argument, else the config's, else True."""
    if refresh_ttl is not None:
        return refresh_ttl
    if ttl_config is not None:
        return ttl_config.get("refresh_on_read", True)
    return True


def _ensure_ttl(
    ttl_config: TTLConfig | None, ttl: float | None | NotProvided = NOT_PROVIDED
) -> float | None:
    """The effective ttl: the argument if given, else the config's default_ttl."""
    if ttl is NOT_PROVIDED:
        return ttl_config.get("default_ttl") if ttl_config else None
    return ttl
