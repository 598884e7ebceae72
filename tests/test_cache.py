"""lgembed.cache: the cache port and its backends, and node caching in graphs (E-8, issue 16).

What LangGraph itself does is checked by tests/test_func_parity.py; these tests pin
what the parity scenarios cannot see: both backends behave alike (one contract test),
TTL expiry on a controlled clock, exact namespace clearing, persistence and sharing
of an LMDB environment, and that loading never runs code.
"""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict

import pytest

from lgembed.cache.base import BaseCache
from lgembed.cache.memory import InMemoryCache
from lgembed.graph import START, StateGraph
from lgembed.types import CachePolicy

NS = ("__pregel_ns_writes", "mod.fn", "node")


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["memory", "lmdb"])
def cache(request, tmp_path):
    if request.param == "memory":
        yield InMemoryCache()
        return
    from lgembed.cache.lmdb import LmdbCache

    c = LmdbCache(tmp_path / "cache")
    yield c
    c.close()


def test_backends_are_base_caches(cache):
    assert isinstance(cache, BaseCache)


def test_set_get_and_missing_keys(cache):
    cache.set({(NS, "k1"): ([("x", 1), ("__return__", {"a": [1, 2]})], None), (NS, "k2"): ("two", 60)})
    got = cache.get([(NS, "k1"), (NS, "k2"), (NS, "nope"), (("other",), "k1")])
    assert set(got) == {(NS, "k1"), (NS, "k2")} and got[(NS, "k2")] == "two"
    assert [tuple(w) for w in got[(NS, "k1")]] == [("x", 1), ("__return__", {"a": [1, 2]})]
    assert cache.get([]) == {}


def test_ttl_expiry_on_a_controlled_clock(cache):
    clock = Clock()
    cache._clock = clock
    cache.set({(NS, "short"): (1, 10), (NS, "forever"): (2, None)})
    clock.now += 9.9
    assert cache.get([(NS, "short"), (NS, "forever")]) == {(NS, "short"): 1, (NS, "forever"): 2}
    clock.now += 0.2
    assert cache.get([(NS, "short"), (NS, "forever")]) == {(NS, "forever"): 2}


def test_clear_is_per_exact_namespace(cache):
    task_ns = NS[:2]  # a task's namespace is a prefix of a node's
    cache.set({(NS, "a"): (1, None), (task_ns, "a"): (2, None), (("other", "x"), "a"): (3, None)})
    cache.clear([task_ns])
    assert cache.get([(NS, "a"), (task_ns, "a"), (("other", "x"), "a")]) == {(NS, "a"): 1, (("other", "x"), "a"): 3}
    cache.clear([NS, ("missing",)])
    assert cache.get([(NS, "a")]) == {}
    cache.clear()
    assert cache.get([(("other", "x"), "a")]) == {}


async def _async_roundtrip(cache):
    await cache.aset({(NS, "k"): ("v", None)})
    got = await cache.aget([(NS, "k")])
    await cache.aclear()
    return got, await cache.aget([(NS, "k")])


def test_async_methods(cache):
    import asyncio

    assert asyncio.run(_async_roundtrip(cache)) == ({(NS, "k"): "v"}, {})


def test_unknown_serialization_tag_is_refused_not_executed(tmp_path):
    """Loading never runs code: a 'pickle' entry is refused (lgembed's serializer)."""
    cache = InMemoryCache()
    cache._cache[NS] = {"k": ("pickle", b"cos\nsystem\n(S'touch /tmp/pwned'\ntR.", None)}
    with pytest.raises(NotImplementedError, match="Unknown serialization type: pickle"):
        cache.get([(NS, "k")])


# --- LMDB --------------------------------------------------------------------------


def test_lmdb_cache_persists_across_reopen_and_prunes(tmp_path):
    from lgembed.cache.lmdb import LmdbCache

    with LmdbCache.from_conn_string(tmp_path / "c") as c:
        clock = Clock()
        c._clock = clock
        c.set({(NS, "keep"): ({"v": 1}, None), (NS, "old"): (0, 5)})
        clock.now += 6
        assert c.prune_expired() == 1
    with LmdbCache.from_conn_string(tmp_path / "c") as c:
        assert c.get([(NS, "keep"), (NS, "old")]) == {(NS, "keep"): {"v": 1}}
        assert repr(c).startswith("LmdbCache(")


def test_lmdb_cache_shares_the_saver_environment(tmp_path):
    from lgembed.cache.lmdb import LmdbCache
    from lgembed.checkpoint._lmdb_env import ENVIRONMENTS
    from lgembed.checkpoint.lmdb import LmdbSaver

    saver = LmdbSaver(tmp_path / "db")
    try:
        by_env = LmdbCache(env=saver.env)
        by_path = LmdbCache(tmp_path / "db")
        assert by_env.env is saver.env is by_path.env
        assert ENVIRONMENTS.open_paths()[saver.path] == 3
        by_env.set({(NS, "k"): (1, None)})
        assert by_path.get([(NS, "k")]) == {(NS, "k"): 1}
        by_env.close()
        by_path.close()
    finally:
        saver.close()
    assert saver.path not in ENVIRONMENTS.open_paths()


def test_lmdb_cache_rejects_bad_options(tmp_path):
    from lgembed.cache.lmdb import LmdbCache

    with pytest.raises(ValueError, match="'map_size' must be a positive int"):
        LmdbCache(tmp_path / "x", map_size=0)
    with pytest.raises(ValueError, match="needs exactly one of a path or env="):
        LmdbCache()


# --- node caching in graphs ------------------------------------------------------------


class S(TypedDict):
    x: int
    log: Annotated[list, operator.add]


def _graph(calls, policy, cache):
    def slow(state: S) -> dict:
        calls.append(state["x"])
        return {"x": state["x"] * 10, "log": ["slow"]}

    g = StateGraph(S)
    g.add_node("slow", slow, cache_policy=policy)
    g.add_edge(START, "slow")
    return g.compile(cache=cache)


def test_lmdb_cache_survives_a_new_graph_object(tmp_path):
    """On a device the cache outlives the process: a new graph over the same directory hits."""
    from lgembed.cache.lmdb import LmdbCache

    calls: list = []
    with LmdbCache.from_conn_string(tmp_path / "c") as c:
        assert _graph(calls, CachePolicy(), c).invoke({"x": 1, "log": []}) == {"x": 10, "log": ["slow"]}
    with LmdbCache.from_conn_string(tmp_path / "c") as c:
        app = _graph(calls, CachePolicy(), c)
        assert list(app.stream({"x": 1, "log": []}, stream_mode="updates")) == [
            {"slow": {"x": 10, "log": ["slow"]}, "__metadata__": {"cached": True}}
        ]
        app.clear_cache(["slow"])
        app.invoke({"x": 1, "log": []})
    assert calls == [1, 1]


def test_node_ttl_uses_the_cache_clock():
    calls: list = []
    cache = InMemoryCache()
    clock = Clock()
    cache._clock = clock
    app = _graph(calls, CachePolicy(ttl=30), cache)
    for _ in range(2):
        app.invoke({"x": 2, "log": []})
    clock.now += 31
    app.invoke({"x": 2, "log": []})
    assert calls == [2, 2]


def test_key_func_must_return_str_or_bytes():
    app = _graph([], CachePolicy(key_func=lambda s: s["x"]), InMemoryCache())
    with pytest.raises(TypeError, match=r"CachePolicy.key_func must return str or bytes \(got int\)"):
        app.invoke({"x": 2, "log": []})


def test_node_without_policy_is_not_cached():
    calls: list = []
    app = _graph(calls, None, InMemoryCache())
    app.invoke({"x": 1, "log": []})
    app.invoke({"x": 1, "log": []})
    assert calls == [1, 1]
    assert app.cache._cache == {}


def test_cache_keys_are_langgraph_namespaces():
    from lgembed.pregel._cache import CACHE_NS_WRITES

    app = _graph([], CachePolicy(), InMemoryCache())
    app.invoke({"x": 1, "log": []})
    (ns,) = app.cache._cache
    assert ns == (CACHE_NS_WRITES, f"{__name__}._graph.<locals>.slow", "slow")
    (key,) = app.cache._cache[ns]
    assert len(key) == 32 and int(key, 16) >= 0
