"""LmdbStore: the store contract (docs/BEHAVIOUR.md §12, T-1 … T-4) on LMDB, and what LMDB adds.

The tests of `test_store.py` that take the `store` (or `users`) fixture are collected
here again with `store` overridden to an LmdbStore on a fresh directory, except the
three that pin documented differences (`DEVIATIONS`), which are restated below for
LmdbStore's own behaviour. Then: persistence, sharing an LmdbSaver's environment,
atomic batches, key separation, map growth, serialization, and use from a graph.
"""

from __future__ import annotations

import inspect
import operator
import re
import threading
from typing import Annotated, TypedDict

import pytest
import test_store as suite

from lgembed.checkpoint.lmdb import ENVIRONMENTS, LmdbSaver
from lgembed.store.base import GetOp, ListNamespacesOp, MatchCondition, PutOp, SearchOp
from lgembed.store.lmdb import INDEX_UNSUPPORTED, LmdbError, LmdbStore

DEVIATIONS = {
    "test_in_memory_store_has_no_ttl_t2": "the TTL error names the store class (LmdbStore)",
    "test_search_insertion_order_t4": "LmdbStore searches in namespace-then-key order",
    "test_touched_namespaces_stay_listed_t4": "LmdbStore lists namespaces that hold items",
}
# tests of the shared contract that pin InMemoryStore-only details (see lgembed.store.lmdb)


def _collect() -> dict:
    found = {}
    for name, obj in vars(suite).items():
        if name.startswith("test_") and inspect.isfunction(obj) and name not in DEVIATIONS:
            if {"store", "users"} & set(inspect.signature(obj).parameters):
                found[name] = obj
    return found


globals().update(_collect())
users = suite.users


@pytest.fixture
def store(tmp_path):
    s = LmdbStore(tmp_path / "env")
    yield s
    s.close()


def test_the_shared_contract_is_collected():
    """The import trick found the contract tests (guards against a silent empty run)."""
    assert len(_collect()) >= 25
    assert set(DEVIATIONS) <= set(vars(suite))


# --- the documented differences ------------------------------------------------------------


def test_no_ttl(store):
    """T-2: no TTL support; the message names LmdbStore."""
    assert store.supports_ttl is False
    msg = "TTL is not supported by LmdbStore. Use a store implementation that supports TTL or set ttl=None."
    with pytest.raises(NotImplementedError, match=re.escape(msg)):
        store.put(("a",), "k", {"v": 2}, ttl=1)


def test_search_order_is_namespace_then_key(store):
    """lgembed.store.lmdb: items come in namespace-then-key (string) order; updates keep it."""
    store.put(("b",), "k1", {"x": 2})
    store.put(("a",), "k1", {"x": 1})
    store.put(("a",), "k0", {"x": 3})
    store.put(("a", "z"), "k", {"x": 4})
    assert [(i.namespace, i.key) for i in store.search(())] == [
        (("a",), "k0"),
        (("a",), "k1"),
        (("a", "z"), "k"),
        (("b",), "k1"),
    ]
    store.delete(("a",), "k0")
    store.put(("a",), "k0", {"x": 9})
    assert [i.key for i in store.search(("a",))] == ["k0", "k1", "k"]


def test_namespaces_listed_while_they_hold_items(store):
    """lgembed.store.lmdb: get/delete do not create namespaces; deleting the last item removes it from the listing."""
    store.put(("kept",), "k", {})
    store.put(("kept",), "k2", {})
    store.get(("probe", "x"), "nope")
    store.delete(("gone",), "nope")
    assert store.list_namespaces() == [("kept",)]
    store.delete(("kept",), "k")
    assert store.list_namespaces() == [("kept",)]
    store.delete(("kept",), "k2")
    assert store.list_namespaces() == []


def test_values_go_through_the_serializer(store):
    """O-15/Z-2: values are stored serialized: a tuple comes back as a list, reads return fresh objects."""
    store.put(("a",), "k", {"pair": (1, 2), "nested": {"s": {1, 2}}})
    item = store.get(("a",), "k")
    assert item.value == {"pair": [1, 2], "nested": {"s": {1, 2}}}
    item.value["pair"].append(3)
    assert store.get(("a",), "k").value["pair"] == [1, 2]


def test_unserializable_value_fails_and_writes_nothing(store):
    """DESIGN §4: an unsupported value fails when written (TypeError naming it); the batch writes nothing."""

    class Opaque:
        pass

    with pytest.raises(TypeError, match=re.escape("Cannot serialize object of type")):
        store.batch([PutOp(("a",), "ok", {"v": 1}), PutOp(("a",), "bad", {"v": Opaque()})])
    assert store.search(()) == []


def test_index_is_refused(tmp_path):
    """T-1: no vector index on lgembed."""
    with pytest.raises(NotImplementedError, match=re.escape(INDEX_UNSUPPORTED)):
        LmdbStore(tmp_path / "env", index={"dims": 3, "embed": None})
    assert LmdbStore(tmp_path / "env", index=None).index_config is None


# --- LMDB specifics ------------------------------------------------------------------------


def test_persists_across_reopen(tmp_path):
    """DESIGN §4: items and their timestamps survive closing and reopening."""
    with LmdbStore.from_conn_string(tmp_path / "env") as s:
        s.put(("users", "u1"), "prefs", {"theme": "dark"})
        before = s.get(("users", "u1"), "prefs")
    assert before is not None
    with LmdbStore(tmp_path / "env") as s:
        assert s.get(("users", "u1"), "prefs") == before
        assert s.list_namespaces() == [("users", "u1")]


def test_shares_the_savers_environment(tmp_path):
    """DESIGN §4: LmdbStore(env=saver.env) and LmdbStore(path) use the saver's environment, counted by the registry."""
    saver = LmdbSaver(tmp_path / "env")
    a = LmdbStore(env=saver.env)
    b = LmdbStore(tmp_path / "env")
    assert a.env is b.env is saver.env
    assert ENVIRONMENTS.open_paths()[saver.path] == 3
    a.put(("x",), "k", {"v": 1})
    assert b.get(("x",), "k").value == {"v": 1}
    saver.close()
    a.close()
    assert b.get(("x",), "k").value == {"v": 1}  # still open for b
    b.close()
    assert saver.path not in ENVIRONMENTS.open_paths()


def test_batch_is_atomic(store):
    """Batch semantics: reads see the store before the batch; a failing operation writes nothing."""
    store.put(("a",), "k", {"v": 1})
    got = store.batch([PutOp(("a",), "k", {"v": 2}), GetOp(("a",), "k"), PutOp(("a",), "k", {"v": 3})])
    assert got[1].value == {"v": 1} and store.get(("a",), "k").value == {"v": 3}
    with pytest.raises(ValueError, match=re.escape("Unsupported operator: $near")):
        store.batch([PutOp(("a",), "new", {"v": 1}), SearchOp(("a",), filter={"v": {"$near": 1}})])
    assert store.get(("a",), "new") is None


def test_keys_do_not_alias(store):
    """Namespaces are label tuples: ("a.b",) given to batch, ("ab",) and ("a", "b") stay apart."""
    store.batch([PutOp(("a.b",), "k", {"v": "dot"})])
    store.put(("ab",), "k", {"v": "ab"})
    store.put(("a", "b"), "k", {"v": "pair"})
    store.put(("a",), "b", {"v": "key"})
    assert store.get(("a", "b"), "k").value == {"v": "pair"}
    assert [i.value["v"] for i in store.search(("a",))] == ["key", "pair"]
    assert store.batch([GetOp(("a.b",), "k")])[0].value == {"v": "dot"}
    assert store.list_namespaces() == [("a",), ("a", "b"), ("a.b",), ("ab",)]


def test_list_namespaces_patterns(store):
    """T-4: prefix (with "*"), suffix and max_depth on the namespace index."""
    for ns in [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "c"), ("x", "b", "c")]:
        store.put(ns, "k", {})
    assert store.list_namespaces(prefix=("a", "b"), max_depth=3) == [("a", "b", "c"), ("a", "b", "d")]
    assert store.list_namespaces(prefix=("*", "b")) == [("a", "b", "c"), ("a", "b", "d", "e"), ("x", "b", "c")]
    assert store.list_namespaces(suffix=("c",)) == [("a", "b", "c"), ("a", "c"), ("x", "b", "c")]
    assert store.list_namespaces(prefix=("a",), suffix=("*", "c"), limit=1, offset=1) == [("a", "c")]
    with pytest.raises(ValueError, match=re.escape("Unsupported match type: middle")):
        store.batch([ListNamespacesOp((MatchCondition("middle", ("a",)),))])


def test_search_offset_limit_and_filter(store):
    """T-4: offset/limit without a filter skip without loading; with a filter they count matches."""
    for i in range(10):
        store.put(("n",), f"k{i}", {"i": i, "even": i % 2 == 0})
    assert [i.key for i in store.search(("n",), limit=3, offset=2)] == ["k2", "k3", "k4"]
    assert [i.key for i in store.search(("n",), filter={"even": True}, limit=2, offset=1)] == ["k2", "k4"]
    assert [i.key for i in store.search(("n",), filter={"i": {"$gte": 8}})] == ["k8", "k9"]
    assert store.search(("n",), limit=0) == []


def test_map_grows(tmp_path):
    """DESIGN §4: the store's map grows on demand too."""
    with LmdbStore(tmp_path / "env", map_size=64 * 1024) as s:
        for i in range(100):
            s.put(("blobs",), str(i), {"data": "x" * 5000})
        assert s.env.info()["map_size"] > 64 * 1024
        assert len(s.search(("blobs",), limit=1000)) == 100


def test_concurrent_threads(store):
    """T-4: many threads writing and reading at once lose nothing."""
    errors = []

    def work(n):
        try:
            for i in range(50):
                store.put(("t", str(n)), str(i), {"i": i})
                store.search(("t",), limit=5)
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(store.search(("t",), limit=1000)) == 300
    assert store.list_namespaces(max_depth=1) == [("t",)]


def test_options_are_checked(tmp_path):
    """STYLE §F: invalid options name the constraint and value."""
    with pytest.raises(ValueError, match=re.escape("'flush_every' must be a positive int or None (got 0)")):
        LmdbStore(tmp_path / "env", flush_every=0)
    with pytest.raises(TypeError, match=re.escape("LmdbStore(env=...) must be an lmdb.Environment (got str)")):
        LmdbStore(env="x")
    assert issubclass(LmdbError, OSError)


class S(TypedDict, total=False):
    user: str
    log: Annotated[list, operator.add]


def test_graph_nodes_use_the_store(tmp_path):
    """§12: nodes reach the store given to compile(store=...), through `store` and get_store()."""
    from lgembed.config import get_store
    from lgembed.graph import END, START, StateGraph

    def remember(state, store):
        store.put(("memories", state["user"]), "last", {"said": state["log"][-1]})
        return {}

    def recall(state):
        item = get_store().get(("memories", state["user"]), "last")
        return {"log": [f"remembered {item.value['said']}"]}

    with LmdbSaver(tmp_path / "env") as saver, LmdbStore(env=saver.env) as store:
        g = StateGraph(S)
        g.add_node("remember", remember)
        g.add_node("recall", recall)
        g.add_edge(START, "remember")
        g.add_edge("remember", "recall")
        g.add_edge("recall", END)
        graph = g.compile(checkpointer=saver, store=store)
        out = graph.invoke({"user": "ann", "log": ["hi"]}, {"configurable": {"thread_id": "1"}})
        assert out == {"user": "ann", "log": ["hi", "remembered hi"]}
    with LmdbStore(tmp_path / "env") as again:
        assert again.get(("memories", "ann"), "last").value == {"said": "hi"}
