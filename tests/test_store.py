"""Store contract: docs/BEHAVIOUR.md §12 T-1…T-4 and the store line of O-15.

Every expected value here was checked against real LangGraph 1.2.22 by running this
file with `lgembed` aliased to `langgraph` (see /work/lgshim3/lgembed_alias.py).
Tests about lgembed-only behaviour (no vector index, import weight) are skipped
under that alias.
"""

from __future__ import annotations

import asyncio
import inspect
import re
import subprocess
import sys
import threading
import weakref
from datetime import datetime, timedelta, timezone
from types import MappingProxyType

import pytest

import lgembed
from lgembed.store.base import (
    NOT_PROVIDED,
    BaseStore,
    GetOp,
    IndexConfig,
    InvalidNamespaceError,
    Item,
    ListNamespacesOp,
    MatchCondition,
    NotProvided,
    PutOp,
    SearchItem,
    SearchOp,
    TTLConfig,
    validate_op_namespace,
)
from lgembed.store.memory import InMemoryStore

ALIASED = lgembed.__name__ != "lgembed"
lgembed_only = pytest.mark.skipif(ALIASED, reason="lgembed-specific behaviour")

T0 = datetime(2024, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
T1 = datetime(2024, 1, 2, 3, 4, 6, 7, tzinfo=timezone.utc)
TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?\+00:00")


def make_item(**overrides):
    fields = dict(value={"a": 1}, key="k1", namespace=("users", "u1"), created_at=T0, updated_at=T1)
    fields.update(overrides)
    return Item(**fields)


def keys(items):
    return [i.key for i in items]


@pytest.fixture
def store():
    return InMemoryStore()


@pytest.fixture
def users(store):
    """The O-15 data set: three items under ("users", ...) and one under ("docs",)."""
    store.put(("users", "u1"), "k1", {"a": 1, "t": "x"})
    store.put(("users", "u1"), "k2", {"a": 2})
    store.put(("users", "u2"), "k1", {"a": 3})
    store.put(("docs",), "d1", {"a": 0})
    return store


class RecordingStore(BaseStore):
    """Records the operations the concrete methods build (T-2)."""

    def __init__(self, result=None):
        self.ops = []
        self.result = result

    def batch(self, ops):
        ops = list(ops)
        self.ops.extend(ops)
        return [self.result for _ in ops]

    async def abatch(self, ops):
        return self.batch(ops)


class TTLRecordingStore(RecordingStore):
    supports_ttl = True
    ttl_config = {"refresh_on_read": False, "default_ttl": 5.0}


# --- T-1: Item / SearchItem -----------------------------------------------------------


def test_item_fields_are_keyword_only_t1():
    """T-1: Item(value, key, namespace, created_at, updated_at), keyword-only."""
    item = make_item()
    assert (item.value, item.key, item.namespace) == ({"a": 1}, "k1", ("users", "u1"))
    assert (item.created_at, item.updated_at) == (T0, T1)
    with pytest.raises(TypeError):
        Item({"a": 1}, "k1", ("users",), T0, T1)


def test_item_coerces_namespace_and_iso_timestamps_t1():
    """T-1: a list namespace becomes a tuple; ISO strings are parsed to datetimes."""
    item = make_item(
        namespace=["users", "u1"], created_at=T0.isoformat(), updated_at=T1.isoformat()
    )
    assert item.namespace == ("users", "u1")
    assert (item.created_at, item.updated_at) == (T0, T1)


def test_item_dict_t1():
    """T-1: dict() gives namespace as a list and ISO timestamps."""
    assert make_item().dict() == {
        "namespace": ["users", "u1"],
        "key": "k1",
        "value": {"a": 1},
        "created_at": "2024-01-02T03:04:05+00:00",
        "updated_at": "2024-01-02T03:04:06.000007+00:00",
    }


def test_item_repr_t1():
    """T-1: Item(namespace=[...], key=..., value=..., created_at='…', updated_at='…')."""
    assert repr(make_item(value={"a": 1, "t": "x"})) == (
        "Item(namespace=['users', 'u1'], key='k1', value={'a': 1, 't': 'x'}, "
        "created_at='2024-01-02T03:04:05+00:00', updated_at='2024-01-02T03:04:06.000007+00:00')"
    )


def test_item_eq_compares_all_fields_t1():
    """T-1: equality needs equal value, key, namespace and both timestamps."""
    assert make_item() == make_item()
    assert make_item() != make_item(value={"a": 2})
    assert make_item() != make_item(key="k2")
    assert make_item() != make_item(namespace=("users",))
    assert make_item() != make_item(created_at=T1)
    assert make_item() != make_item(updated_at=T0)
    assert make_item() != "k1"
    assert (make_item() == object()) is False


def test_item_hash_is_namespace_and_key_t1():
    """T-1: hash((namespace, key)); the value does not take part."""
    assert hash(make_item()) == hash((("users", "u1"), "k1"))
    assert hash(make_item(value={"b": 2})) == hash(make_item())
    assert len({make_item(), make_item(), make_item(key="k2")}) == 2


def test_item_has_slots_t1():
    """T-1: Item uses __slots__ (no per-item __dict__)."""
    with pytest.raises(AttributeError):
        make_item().extra = 1
    assert Item.__slots__ == ("value", "key", "namespace", "created_at", "updated_at")


def test_search_item_adds_score_t1():
    """T-1: SearchItem(namespace, key, value, created_at, updated_at, score=None), positional."""
    si = SearchItem(("users", "u1"), "k1", {"a": 1}, T0, T1)
    assert si.score is None
    assert isinstance(si, Item)
    assert si.dict()["score"] is None
    scored = SearchItem(("users",), "k", {}, T0.isoformat(), T1, score=0.5)
    assert scored.score == 0.5 and scored.created_at == T0
    assert repr(scored) == (
        "Item(namespace=['users'], key='k', value={}, created_at='2024-01-02T03:04:05+00:00', "
        "updated_at='2024-01-02T03:04:06.000007+00:00', score=0.5)"
    )


def test_search_item_eq_ignores_score_t1():
    """T-1: SearchItem compares like Item (score is not part of equality)."""
    si = SearchItem(("users", "u1"), "k1", {"a": 1}, T0, T1, score=0.9)
    assert si == make_item()
    assert si == SearchItem(("users", "u1"), "k1", {"a": 1}, T0, T1, score=0.1)
    assert hash(si) == hash(make_item())


def test_stored_item_timestamps_t1(store):
    """T-1: the store stamps items in UTC; a put replaces the item and both stamps."""
    before = datetime.now(timezone.utc)
    store.put(("users",), "k", {"v": 1})
    first = store.get(("users",), "k")
    assert first.created_at.tzinfo is not None
    assert first.created_at.utcoffset() == timedelta(0)
    assert before <= first.created_at <= first.updated_at
    store.put(("users",), "k", {"v": 2})
    second = store.get(("users",), "k")
    assert second.value == {"v": 2}
    assert second.updated_at >= first.updated_at
    assert second.created_at >= first.created_at  # LangGraph does not keep created_at
    assert TS.fullmatch(second.dict()["created_at"])


# --- T-2: BaseStore API -----------------------------------------------------------------


def _params(fn):
    return [(p.name, p.kind.name, p.default) for p in inspect.signature(fn).parameters.values()]


E = inspect.Parameter.empty


@pytest.mark.parametrize("prefix", ["", "a"])
def test_method_signatures_t2(prefix):
    """T-2: names, kinds and defaults of get/search/put/delete/list_namespaces and a* twins."""
    m = lambda name: getattr(BaseStore, prefix + name)  # noqa: E731
    assert _params(m("get")) == [
        ("self", "POSITIONAL_OR_KEYWORD", E),
        ("namespace", "POSITIONAL_OR_KEYWORD", E),
        ("key", "POSITIONAL_OR_KEYWORD", E),
        ("refresh_ttl", "KEYWORD_ONLY", None),
    ]
    assert _params(m("search")) == [
        ("self", "POSITIONAL_ONLY", E),
        ("namespace_prefix", "POSITIONAL_ONLY", E),
        ("query", "KEYWORD_ONLY", None),
        ("filter", "KEYWORD_ONLY", None),
        ("limit", "KEYWORD_ONLY", 10),
        ("offset", "KEYWORD_ONLY", 0),
        ("refresh_ttl", "KEYWORD_ONLY", None),
    ]
    assert _params(m("put")) == [
        ("self", "POSITIONAL_OR_KEYWORD", E),
        ("namespace", "POSITIONAL_OR_KEYWORD", E),
        ("key", "POSITIONAL_OR_KEYWORD", E),
        ("value", "POSITIONAL_OR_KEYWORD", E),
        ("index", "POSITIONAL_OR_KEYWORD", None),
        ("ttl", "KEYWORD_ONLY", NOT_PROVIDED),
    ]
    assert _params(m("delete")) == [
        ("self", "POSITIONAL_OR_KEYWORD", E),
        ("namespace", "POSITIONAL_OR_KEYWORD", E),
        ("key", "POSITIONAL_OR_KEYWORD", E),
    ]
    assert _params(m("list_namespaces")) == [
        ("self", "POSITIONAL_OR_KEYWORD", E),
        ("prefix", "KEYWORD_ONLY", None),
        ("suffix", "KEYWORD_ONLY", None),
        ("max_depth", "KEYWORD_ONLY", None),
        ("limit", "KEYWORD_ONLY", 100),
        ("offset", "KEYWORD_ONLY", 0),
    ]
    for name in ("get", "search", "put", "delete", "list_namespaces"):
        assert inspect.iscoroutinefunction(m(name)) == (prefix == "a")


def test_base_store_is_abstract_t2():
    """T-2: batch and abatch are the abstract methods; everything else is concrete."""
    assert BaseStore.__abstractmethods__ == frozenset({"batch", "abatch"})
    with pytest.raises(TypeError):
        BaseStore()
    assert BaseStore.supports_ttl is False and BaseStore.ttl_config is None
    store = RecordingStore()
    assert weakref.ref(store)() is store


def test_op_shapes_and_defaults_t2():
    """T-2: GetOp/SearchOp/PutOp/ListNamespacesOp/MatchCondition fields and defaults."""
    assert GetOp._fields == ("namespace", "key", "refresh_ttl")
    assert GetOp(("a",), "k") == (("a",), "k", True)
    assert SearchOp._fields == (
        "namespace_prefix",
        "filter",
        "limit",
        "offset",
        "query",
        "refresh_ttl",
    )
    assert SearchOp(("a",)) == (("a",), None, 10, 0, None, True)
    assert PutOp._fields == ("namespace", "key", "value", "index", "ttl")
    assert PutOp(("a",), "k", {"v": 1}) == (("a",), "k", {"v": 1}, None, None)
    assert ListNamespacesOp._fields == ("match_conditions", "max_depth", "limit", "offset")
    assert ListNamespacesOp() == (None, None, 100, 0)
    assert MatchCondition._fields == ("match_type", "path")


def test_not_provided_sentinel_t2():
    """T-2: put's ttl default NOT_PROVIDED is falsy and prints as NOT_GIVEN."""
    assert isinstance(NOT_PROVIDED, NotProvided)
    assert not NOT_PROVIDED
    assert repr(NOT_PROVIDED) == "NOT_GIVEN"


def test_config_typeddicts_t2():
    """T-2: TTLConfig and IndexConfig are total=False TypedDicts with LangGraph's keys."""
    assert TTLConfig.__total__ is False and IndexConfig.__total__ is False
    assert set(TTLConfig.__annotations__) == {
        "refresh_on_read",
        "omit_expired",
        "default_ttl",
        "sweep_interval_minutes",
    }
    assert set(IndexConfig.__annotations__) == {"dims", "embed", "fields"}
    assert TTLConfig(default_ttl=1.0) == {"default_ttl": 1.0}


def test_methods_build_ops_t2():
    """T-2: each method is one op through batch (keys pass through str())."""
    s = RecordingStore()
    s.get(("a",), 7)
    s.search(("a",), query="q", filter={"x": 1}, limit=3, offset=2)
    s.put(("a",), 8, {"v": 1}, index=["v"])
    s.delete(("a",), "k")
    s.list_namespaces(prefix=("a", "*"), suffix=("z",), max_depth=2, limit=5, offset=1)
    s.list_namespaces()
    assert s.ops == [
        GetOp(("a",), "7", True),
        SearchOp(("a",), {"x": 1}, 3, 2, "q", True),
        PutOp(("a",), "8", {"v": 1}, ["v"], None),
        PutOp(("a",), "k", None, None, None),
        ListNamespacesOp(
            (MatchCondition("prefix", ("a", "*")), MatchCondition("suffix", ("z",))), 2, 5, 1
        ),
        ListNamespacesOp((), None, 100, 0),
    ]


def test_async_twins_build_the_same_ops_t2():
    """T-2: the a* twins build the same ops and go through abatch."""
    s = RecordingStore()

    async def main():
        await s.aget(("a",), 7)
        await s.asearch(("a",), query="q", filter={"x": 1}, limit=3, offset=2)
        await s.aput(("a",), 8, {"v": 1}, index=["v"])
        await s.adelete(("a",), "k")
        await s.alist_namespaces(prefix=("a", "*"), suffix=("z",), max_depth=2, limit=5, offset=1)

    asyncio.run(main())
    assert s.ops == [
        GetOp(("a",), "7", True),
        SearchOp(("a",), {"x": 1}, 3, 2, "q", True),
        PutOp(("a",), "8", {"v": 1}, ["v"], None),
        PutOp(("a",), "k", None, None, None),
        ListNamespacesOp(
            (MatchCondition("prefix", ("a", "*")), MatchCondition("suffix", ("z",))), 2, 5, 1
        ),
    ]


def test_ttl_config_defaults_feed_the_ops_t2():
    """T-2: refresh_ttl/ttl left out take ttl_config's refresh_on_read/default_ttl."""
    s = TTLRecordingStore()
    s.get(("a",), "k")
    s.get(("a",), "k", refresh_ttl=True)
    s.search(("a",))
    s.put(("a",), "k", {"v": 1})
    s.put(("a",), "k", {"v": 1}, ttl=None)
    s.put(("a",), "k", {"v": 1}, ttl=2.5)
    assert [op.refresh_ttl for op in s.ops[:3]] == [False, True, False]
    assert [op.ttl for op in s.ops[3:]] == [5.0, None, 2.5]


@pytest.mark.parametrize("ttl", [5, 0, 2.5])
def test_ttl_rejected_without_support_t2(ttl):
    """T-2: a non-None ttl on a store without TTL support raises NotImplementedError."""
    msg = "TTL is not supported by RecordingStore. Use a store implementation that supports TTL or set ttl=None."
    s = RecordingStore()
    with pytest.raises(NotImplementedError, match=re.escape(msg)):
        s.put(("a",), "k", {}, ttl=ttl)
    with pytest.raises(NotImplementedError, match=re.escape(msg)):
        asyncio.run(s.aput(("a",), "k", {}, ttl=ttl))
    s.put(("a",), "k", {}, ttl=None)
    assert s.ops == [PutOp(("a",), "k", {}, None, None)]


def test_in_memory_store_has_no_ttl_t2(store):
    """T-2: InMemoryStore does not support TTL: ttl=None is fine, a number raises."""
    assert store.supports_ttl is False
    store.put(("a",), "k", {"v": 1}, ttl=None)
    msg = "TTL is not supported by InMemoryStore. Use a store implementation that supports TTL or set ttl=None."
    with pytest.raises(NotImplementedError, match=re.escape(msg)):
        store.put(("a",), "k", {"v": 2}, ttl=1)
    assert store.get(("a",), "k").value == {"v": 1}
    assert store.get(("a",), "k", refresh_ttl=False).value == {"v": 1}


def test_get_put_delete_roundtrip_t2(store):
    """T-2: get returns the Item or None; put replaces; delete removes (absent is fine)."""
    assert store.get(("a",), "k") is None
    assert store.put(("a",), "k", {"v": 1}) is None
    item = store.get(("a",), "k")
    assert isinstance(item, Item) and not isinstance(item, SearchItem)
    assert (item.namespace, item.key, item.value) == (("a",), "k", {"v": 1})
    store.put(("a",), 5, {"v": 5})
    assert store.get(("a",), "5").value == {"v": 5}
    assert store.get(("a",), 5).key == "5"
    assert store.delete(("a",), "k") is None
    assert store.get(("a",), "k") is None
    store.delete(("a",), "never-there")


def test_put_copies_the_value_t2(store):
    """T-2: the stored value is a dict copy of the mapping given to put."""
    value = {"v": 1}
    store.put(("a",), "k", value)
    value["v"] = 2
    assert store.get(("a",), "k").value == {"v": 1}
    store.put(("a",), "m", MappingProxyType({"x": 1}))
    assert type(store.get(("a",), "m").value) is dict


def test_put_index_argument_ignored_without_index_t2(store):
    """T-2: index=False / a list of fields is accepted and ignored by a store without an index."""
    store.put(("a",), "k", {"text": "hi"}, index=False)
    store.put(("a",), "m", {"text": "yo"}, index=["text"])
    assert keys(store.search(("a",))) == ["k", "m"]


def test_search_query_ignored_without_index_t2(users):
    """T-2: query= without a vector index filters nothing, keeps order, score None."""
    found = users.search(("users",), query="anything at all")
    assert keys(found) == ["k1", "k2", "k1"]
    assert all(isinstance(i, SearchItem) and i.score is None for i in found)


def test_batch_results_in_order_and_put_none_deletes_t2(store):
    """T-2: batch returns one result per op, in order; PutOp(value=None) deletes."""
    store.put(("a",), "old", {"v": 0})
    results = store.batch(
        [
            GetOp(("a",), "old"),
            PutOp(("a",), "new", {"v": 1}),
            SearchOp(("a",)),
            ListNamespacesOp(),
            PutOp(("a",), "old", None),
        ]
    )
    assert results[0].value == {"v": 0}
    assert results[1] is None and results[4] is None
    assert keys(results[2]) == ["old"]
    assert results[3] == [("a",)]
    assert store.get(("a",), "old") is None
    assert store.get(("a",), "new").value == {"v": 1}


def test_batch_reads_see_state_before_its_puts_t2(store):
    """T-2: reads in a batch see the store before the batch's puts; the last put wins."""
    results = store.batch(
        [
            PutOp(("n",), "k", {"v": 1}),
            GetOp(("n",), "k"),
            PutOp(("n",), "k", {"v": 2}),
            SearchOp(("n",)),
        ]
    )
    assert results == [None, None, None, []]
    assert store.get(("n",), "k").value == {"v": 2}


def test_batch_accepts_generators_and_abatch_t2(store):
    """T-2: batch takes any iterable; abatch gives the same results."""
    store.batch(PutOp(("g",), f"k{i}", {"i": i}) for i in range(3))
    assert keys(asyncio.run(store.abatch([SearchOp(("g",))]))[0]) == ["k0", "k1", "k2"]


def test_batch_unknown_op_t2(store):
    """T-2: batch rejects anything that is not one of the four ops."""
    with pytest.raises(ValueError, match=re.escape("Unknown operation type: <class 'str'>")):
        store.batch(["get"])
    with pytest.raises(ValueError, match=re.escape("Unknown operation type: <class 'tuple'>")):
        store.batch([(("a",), "k")])


def test_async_twins_on_in_memory_store_t2(store):
    """T-2: aput/aget/asearch/alist_namespaces/adelete behave like the sync methods."""

    async def main():
        await store.aput(("users", "u1"), "k1", {"a": 1})
        await store.aput(("users", "u2"), "k2", {"a": 2})
        got = await store.aget(("users", "u1"), "k1")
        found = await store.asearch(("users",), filter={"a": {"$gte": 2}})
        spaces = await store.alist_namespaces(max_depth=1)
        await store.adelete(("users", "u1"), "k1")
        gone = await store.aget(("users", "u1"), "k1")
        return got, found, spaces, gone

    got, found, spaces, gone = asyncio.run(main())
    assert got.value == {"a": 1}
    assert keys(found) == ["k2"]
    assert spaces == [("users",)]
    assert gone is None


# --- T-3: namespace validation ------------------------------------------------------------

BAD_LABELS = [
    (
        ("a.b",),
        "Invalid namespace label 'a.b' found in ('a.b',). Namespace labels cannot contain periods ('.').",
    ),
    (
        ("ok", "a\x00"),
        "Invalid namespace label 'a\x00' found in ('ok', 'a\\x00'). "
        "Namespace labels cannot contain NUL bytes ('\\x00').",
    ),
    (("",), "Namespace labels cannot be empty strings. Got  in ('',)"),
    (("ok", ""), "Namespace labels cannot be empty strings. Got  in ('ok', '')"),
    (
        ("ok", 2),
        "Invalid namespace label '2' found in ('ok', 2). Namespace labels must be strings, but got int.",
    ),
    (
        (None,),
        "Invalid namespace label 'None' found in (None,). Namespace labels must be strings, but got NoneType.",
    ),
    # order of checks: type, then ".", then NUL, then empty; labels before the root check
    (
        ("a.\x00",),
        "Invalid namespace label 'a.\x00' found in ('a.\\x00',). Namespace labels cannot contain periods ('.').",
    ),
    (
        ("langgraph", "x.y"),
        "Invalid namespace label 'x.y' found in ('langgraph', 'x.y'). "
        "Namespace labels cannot contain periods ('.').",
    ),
]


def test_put_empty_namespace_t3(store):
    """T-3: put with () → InvalidNamespaceError("Namespace cannot be empty.")."""
    with pytest.raises(InvalidNamespaceError, match=re.escape("Namespace cannot be empty.")):
        store.put((), "k", {"v": 1})
    with pytest.raises(InvalidNamespaceError, match=re.escape("Namespace cannot be empty.")):
        asyncio.run(store.aput((), "k", {"v": 1}))
    assert issubclass(InvalidNamespaceError, ValueError)


@pytest.mark.parametrize("namespace", [("langgraph",), ("langgraph", "x")])
def test_put_langgraph_root_t3(store, namespace):
    """T-3: put under the root label "langgraph" is refused, with LangGraph's text."""
    msg = f'Root label for namespace cannot be "langgraph". Got: {namespace}'
    with pytest.raises(InvalidNamespaceError, match=re.escape(msg)):
        store.put(namespace, "k", {"v": 1})
    with pytest.raises(InvalidNamespaceError, match=re.escape(msg)):
        asyncio.run(store.aput(namespace, "k", {"v": 1}))
    assert msg.startswith("Root label for namespace cannot be \"langgraph\". Got: ('langgraph'")


def test_reads_accept_empty_and_langgraph_namespaces_t3(store):
    """T-3: only put checks emptiness and the root label; reads and delete allow them."""
    assert store.get((), "k") is None
    assert store.get(("langgraph",), "k") is None
    assert store.search(()) == []
    assert store.search(("langgraph",)) == []
    store.delete(("langgraph",), "k")
    store.delete((), "k")


@pytest.mark.parametrize("namespace, msg", BAD_LABELS)
def test_bad_labels_sync_t3(store, namespace, msg):
    """T-3: labels must be non-empty str without "." or NUL, in every method."""
    calls = [
        lambda: store.put(namespace, "k", {"v": 1}),
        lambda: store.get(namespace, "k"),
        lambda: store.delete(namespace, "k"),
        lambda: store.search(namespace),
        lambda: store.list_namespaces(prefix=namespace),
        lambda: store.list_namespaces(suffix=namespace),
    ]
    for call in calls:
        with pytest.raises(InvalidNamespaceError, match=re.escape(msg)):
            call()


@pytest.mark.parametrize("namespace, msg", BAD_LABELS)
def test_bad_labels_async_t3(store, namespace, msg):
    """T-3: the a* twins validate exactly like the sync methods."""
    calls = [
        lambda: store.aput(namespace, "k", {"v": 1}),
        lambda: store.aget(namespace, "k"),
        lambda: store.adelete(namespace, "k"),
        lambda: store.asearch(namespace),
        lambda: store.alist_namespaces(prefix=namespace),
        lambda: store.alist_namespaces(suffix=namespace),
    ]
    for call in calls:
        with pytest.raises(InvalidNamespaceError, match=re.escape(msg)):
            asyncio.run(call())


def test_wildcard_label_allowed_in_patterns_t3(users):
    """T-3: "*" is a valid label (a wildcard in list_namespaces patterns)."""
    assert users.list_namespaces(prefix=("*", "u2")) == [("users", "u2")]


def test_batch_skips_validation_validate_op_namespace_checks_t3(store):
    """T-3: ops given straight to batch are not validated; validate_op_namespace does it."""
    assert store.batch([GetOp(("a.b",), "k")]) == [None]
    msg = "Invalid namespace label 'a.b' found in ('a.b',). Namespace labels cannot contain periods ('.')."
    for op in (
        GetOp(("a.b",), "k"),
        PutOp(("a.b",), "k", None),
        SearchOp(("a.b",)),
        ListNamespacesOp((MatchCondition("prefix", ("a.b",)),)),
    ):
        with pytest.raises(InvalidNamespaceError, match=re.escape(msg)):
            validate_op_namespace(op)
    validate_op_namespace(ListNamespacesOp())
    validate_op_namespace(GetOp(("a", "b"), "k"))


# --- T-4: InMemoryStore search and list_namespaces ----------------------------------------


def test_search_insertion_order_t4(store):
    """T-4: results follow namespace creation order, then key insertion order."""
    store.put(("a",), "k1", {"x": 1})
    store.put(("b",), "k1", {"x": 2})
    store.put(("a",), "k0", {"x": 3})
    assert [(i.namespace, i.key) for i in store.search(())] == [
        (("a",), "k1"),
        (("a",), "k0"),
        (("b",), "k1"),
    ]
    store.put(("a",), "k1", {"x": 9})  # an update keeps its place
    assert keys(store.search(("a",))) == ["k1", "k0"]
    store.delete(("a",), "k1")
    store.put(("a",), "k1", {"x": 10})  # delete + put moves it to the end
    assert keys(store.search(("a",))) == ["k0", "k1"]


def test_search_namespace_prefix_t4(users):
    """T-4: the prefix matches whole labels from the start; () is the whole store."""
    assert len(users.search(())) == 4
    assert keys(users.search(("users", "u1"))) == ["k1", "k2"]
    assert users.search(("user",)) == []
    assert users.search(("u1",)) == []
    assert users.search(("users", "u1", "deeper")) == []


def test_search_equality_filter_t4(store):
    """T-4: {"field": value} is equality; several fields must all match."""
    store.put(("d",), "a", {"color": "red", "n": 1})
    store.put(("d",), "b", {"color": "blue", "n": 1})
    store.put(("d",), "c", {"color": "red", "n": 2})
    store.put(("d",), "e", {"n": 3})
    assert keys(store.search(("d",), filter={"color": "red"})) == ["a", "c"]
    assert keys(store.search(("d",), filter={"color": "red", "n": 2})) == ["c"]
    assert keys(store.search(("d",), filter={"color": None})) == ["e"]  # absent field is None
    assert keys(store.search(("d",), filter={})) == ["a", "b", "c", "e"]
    assert keys(store.search(("d",), filter={"n": 1.0})) == ["a", "b"]


def test_search_nested_and_list_filters_t4(store):
    """T-4: nested dicts match recursively; lists match element-wise with equal length."""
    store.put(("d",), "a", {"meta": {"lang": "en", "v": 1}, "tags": ["x", "y"]})
    store.put(("d",), "b", {"meta": {"lang": "fr", "v": 0}, "tags": ["x"]})
    store.put(("d",), "c", {"meta": "en", "tags": ("x", "y")})
    assert keys(store.search(("d",), filter={"meta": {"lang": "en"}})) == ["a"]
    assert keys(store.search(("d",), filter={"meta": {"v": {"$gt": 0}}})) == ["a"]
    assert keys(store.search(("d",), filter={"tags": ["x", "y"]})) == ["a", "c"]
    assert keys(store.search(("d",), filter={"tags": ("x",)})) == ["b"]
    assert keys(store.search(("d",), filter={"tags": "x"})) == []


@pytest.mark.parametrize(
    "condition, expected",
    [
        ({"$eq": 2}, ["k2"]),
        ({"$ne": 2}, ["k1", "k3", "none"]),
        ({"$gt": 2}, ["k3"]),
        ({"$gte": 2}, ["k2", "k3"]),
        ({"$lt": 2}, ["k1"]),
        ({"$lte": 2}, ["k1", "k2"]),
        ({"$gte": 1, "$lt": 3}, ["k1", "k2"]),
        ({"$gt": "1.5"}, ["k2", "k3"]),  # ordering operators compare as floats
    ],
)
def test_search_operator_filters_t4(store, condition, expected):
    """T-4: $eq, $ne, $gt, $gte, $lt, $lte (and several at once)."""
    for k, n in (("k1", 1), ("k2", 2), ("k3", 3.5)):
        store.put(("d",), k, {"n": n})
    store.put(("d",), "none", {"other": True})
    if any(op in condition for op in ("$gt", "$gte", "$lt", "$lte")):
        store.delete(("d",), "none")  # float(None) would raise, see below
    assert keys(store.search(("d",), filter={"n": condition})) == expected


def test_search_operator_errors_t4(store):
    """T-4: an ordering operator on a missing field raises TypeError; unknown operators ValueError."""
    store.put(("d",), "a", {"n": 1})
    store.put(("d",), "b", {"m": 1})
    with pytest.raises(TypeError):
        store.search(("d",), filter={"n": {"$gt": 0}})
    with pytest.raises(ValueError, match=re.escape("Unsupported operator: $in")):
        store.search(("d",), filter={"n": {"$in": [1]}})
    with pytest.raises(ValueError, match=re.escape("Unsupported operator: plain")):
        store.search(("d",), filter={"n": {"$eq": 1, "plain": 1}})
    # operators are checked lazily: the first false one stops the item's evaluation
    assert keys(store.search(("d",), filter={"n": {"$eq": 5, "$in": [1]}, "m": None})) == []


def test_search_limit_offset_t4(store):
    """T-4: limit and offset paginate the matches (slice semantics)."""
    for i in range(15):
        store.put(("p", str(i % 2)), f"k{i:02d}", {"i": i})
    everything = [f"k{i:02d}" for i in range(0, 15, 2)] + [f"k{i:02d}" for i in range(1, 15, 2)]
    assert keys(store.search(("p",))) == everything[:10]
    assert keys(store.search(("p",), limit=20)) == everything
    assert keys(store.search(("p",), limit=3, offset=4)) == everything[4:7]
    assert keys(store.search(("p",), offset=14)) == everything[14:]
    assert store.search(("p",), offset=20) == []
    assert store.search(("p",), limit=0) == []
    assert keys(store.search(("p",), filter={"i": {"$gte": 5}}, limit=2, offset=1)) == [
        "k08",
        "k10",
    ]
    assert keys(store.search(("p",), limit=3, offset=-2)) == everything[-2:1]
    assert keys(store.search(("p",), limit=-1)) == everything[:-1]


def test_search_returns_search_items_sharing_the_value_t4(store):
    """T-4: search results are fresh SearchItems over the stored value (score None)."""
    store.put(("d",), "a", {"n": 1})
    found = store.search(("d",))[0]
    assert isinstance(found, SearchItem) and found.score is None
    assert found == store.get(("d",), "a")


def test_list_namespaces_sorted_t4(store):
    """T-4: list_namespaces is sorted, not in insertion order."""
    for ns in [("z",), ("a", "c"), ("a", "b", "x"), ("m",), ("a",)]:
        store.put(ns, "k", {})
    assert store.list_namespaces() == [("a",), ("a", "b", "x"), ("a", "c"), ("m",), ("z",)]
    assert InMemoryStore().list_namespaces() == []


def test_list_namespaces_prefix_suffix_wildcards_t4(store):
    """T-4: prefix/suffix patterns (with "*" wildcards), combined with AND."""
    for ns in [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
        ("a", "c", "f"),
        ("b",),
    ]:
        store.put(ns, "k", {})
    assert store.list_namespaces(prefix=("a", "b")) == [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(suffix=("f",)) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(prefix=("a", "*", "f")) == [("a", "b", "f"), ("a", "c", "f")]
    assert store.list_namespaces(suffix=("d", "*")) == [("a", "b", "d", "e"), ("a", "b", "d", "i")]
    assert store.list_namespaces(prefix=("a",), suffix=("c", "f")) == [("a", "c", "f")]
    assert store.list_namespaces(prefix=("*",)) == store.list_namespaces()
    assert store.list_namespaces(prefix=("b", "x")) == []  # longer than the namespace
    assert store.list_namespaces(prefix=()) == store.list_namespaces()


def test_list_namespaces_max_depth_truncates_and_dedups_t4(store):
    """T-4: max_depth truncates namespaces, then duplicates collapse (sorted)."""
    for ns in [
        ("a", "b", "c"),
        ("a", "b", "d", "e"),
        ("a", "b", "d", "i"),
        ("a", "b", "f"),
        ("a", "c", "f"),
    ]:
        store.put(ns, "k", {})
    assert store.list_namespaces(prefix=("a", "b"), max_depth=3) == [
        ("a", "b", "c"),
        ("a", "b", "d"),
        ("a", "b", "f"),
    ]
    assert store.list_namespaces(max_depth=1) == [("a",)]
    assert store.list_namespaces(max_depth=2) == [("a", "b"), ("a", "c")]
    assert store.list_namespaces(max_depth=10) == store.list_namespaces()
    assert store.list_namespaces(max_depth=0) == [()]


def test_list_namespaces_limit_offset_t4(store):
    """T-4: limit/offset apply to the sorted (deduplicated) list."""
    for i in range(7):
        store.put(("n", str(i)), "k", {})
    full = [("n", str(i)) for i in range(7)]
    assert store.list_namespaces(limit=3) == full[:3]
    assert store.list_namespaces(limit=3, offset=5) == full[5:]
    assert store.list_namespaces(offset=10) == []
    assert store.list_namespaces(max_depth=1, offset=1) == []


def test_list_namespaces_unknown_match_type_t4(users):
    """T-4: a MatchCondition with another match type raises (when the length allows a match)."""
    op = ListNamespacesOp((MatchCondition("infix", ("users",)),))
    with pytest.raises(ValueError, match=re.escape("Unsupported match type: infix")):
        users.batch([op])
    op = ListNamespacesOp((MatchCondition("infix", ("a", "b", "c")),))
    assert users.batch([op]) == [[]]


def test_touched_namespaces_stay_listed_t4(store):
    """T-4 (LangGraph parity): get/delete of an absent namespace creates it, empty, and
    deleting the last item of a namespace keeps it listed."""
    store.put(("kept",), "k", {})
    store.get(("probe", "x"), "nope")
    store.delete(("gone",), "nope")
    store.delete(("kept",), "k")
    assert store.list_namespaces() == [("gone",), ("kept",), ("probe", "x")]
    assert store.search(()) == []


def test_concurrent_puts_from_threads_t4(store):
    """T-4: the store can be used from parallel tasks (threads) without losing writes."""
    barrier = threading.Barrier(8)

    def worker(n):
        barrier.wait()
        for i in range(200):
            store.put(("t", str(n)), str(i), {"i": i})
            store.search(("t",), limit=5)
            store.list_namespaces(max_depth=1)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(store.search(("t",), limit=10_000)) == 1600
    assert len(store.list_namespaces()) == 8


# --- O-15: the recorded store trace ------------------------------------------------------


def test_store_trace_o15(users):
    """O-15 store line: get repr, search order and score, $gt filter, list_namespaces(+max_depth)."""
    got = users.get(("users", "u1"), "k1")
    assert TS.sub("…", repr(got)) == (
        "Item(namespace=['users', 'u1'], key='k1', value={'a': 1, 't': 'x'}, created_at='…', updated_at='…')"
    )
    found = users.search(("users",))
    assert [(i.namespace, i.key) for i in found] == [
        (("users", "u1"), "k1"),
        (("users", "u1"), "k2"),
        (("users", "u2"), "k1"),
    ]
    assert [i.score for i in found] == [None, None, None]
    assert keys(users.search(("users",), filter={"a": {"$gt": 1}})) == ["k2", "k1"]
    assert users.list_namespaces() == [("docs",), ("users", "u1"), ("users", "u2")]
    assert users.list_namespaces(max_depth=1) == [("docs",), ("users",)]


# --- lgembed only ------------------------------------------------------------------------


@lgembed_only
@pytest.mark.parametrize(
    "index", [{"dims": 3, "embed": lambda texts: [[0.0] * 3 for _ in texts]}, {"dims": 8}]
)
def test_index_config_not_supported(index):
    """T-4 (lgembed): a vector index needs embeddings, which lgembed does not have."""
    with pytest.raises(NotImplementedError, match="semantic search is not supported on lgembed"):
        InMemoryStore(index=index)
    assert InMemoryStore(index=None).index_config is None
    assert InMemoryStore(index={}).index_config is None


@lgembed_only
def test_store_import_is_light():
    """lgembed.store.base/memory import neither asyncio nor msgpack/lmdb nor LangChain."""
    code = (
        "import sys, lgembed.store.base, lgembed.store.memory; "
        "bad = [m for m in ('asyncio', 'msgpack', 'lmdb', 'langchain_core', 'pydantic') if m in sys.modules]; "
        "print(bad)"
    )
    out = subprocess.run(
        [sys.executable, "-W", "error", "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


@lgembed_only
def test_all_is_a_tuple():
    """Public modules have a tuple __all__ naming only existing objects (docs/STYLE.md §D)."""
    import lgembed.store
    import lgembed.store.base
    import lgembed.store.memory

    for mod in (lgembed.store, lgembed.store.base, lgembed.store.memory):
        assert isinstance(mod.__all__, tuple)
        for name in mod.__all__:
            assert hasattr(mod, name), (mod.__name__, name)
