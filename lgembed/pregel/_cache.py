"""Node caching: cache keys, cache hits before a step runs, stores after a task finishes (E-8).

Why a module of its own: the engine calls it at three points only (`Run.tick` and
`CheckpointedRun.tick` after preparing a step, `Run.commit` after a task finished,
`Pregel.clear_cache`), and only when the graph has a cache, so a graph without one
pays one attribute test per step and per task. The functional API's tasks use the
same keys (`lgembed.pregel._func`).

Keys are LangGraph's shapes: the namespace `("__pregel_ns_writes", identifier,
node_name)` for a graph node (`identifier` is `<module>.<qualname>` of the node's
function, `"__dynamic__"` when it has none), `("__pregel_ns_writes", identifier)` for
a task; the key is a digest of `CachePolicy.key_func(input)`. LangGraph digests with
xxh3-128; lgembed uses BLAKE2b-128 (stdlib, see `lgembed._ids`), so the namespaces
equal LangGraph's and the keys have its shape but not its values.
"""

from __future__ import annotations

from typing import Any

CACHE_NS_WRITES = "__pregel_ns_writes"
# first part of every namespace of cached writes (LangGraph's CACHE_NS_WRITES)

_KEYS_ATTR = "_lg_cache_keys"
# run attribute: {task: ((namespace, key), ttl)} of the tasks of the step that missed the cache

__all__ = (
    "CACHE_NS_WRITES",
    "clear_cache",
    "aclear_cache",
    "digest",
    "identifier",
    "match_cached_writes",
    "node_namespace",
    "store_cached_writes",
)


def identifier(obj: Any) -> str | None:
    """`<module>.<qualname>` of a function (LangGraph's `identifier`), or None."""
    while hasattr(obj, "func") and not hasattr(obj, "__qualname__"):
        obj = obj.func  # a functools.partial or a node callable: the function inside
    name = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
    if name is None:
        return None
    module = getattr(obj, "__module__", None)
    if module is None:
        return None
    return f"{module}.{name}"


def node_namespace(node: Any, name: str) -> tuple:
    """The cache namespace of a graph node's writes."""
    proc = getattr(node, "proc", None)
    func = getattr(proc, "func", None) if proc is not None else None
    return (CACHE_NS_WRITES, (identifier(func) if func is not None else None) or "__dynamic__", name)


def digest(args_key: Any) -> str:
    """The cache key of a `key_func` result (str or bytes).

    Raises:
        TypeError: when `key_func` returned something else than str or bytes.
    """
    try:  # CPython's own BLAKE2, as lgembed._ids (hashlib would load OpenSSL)
        from _blake2 import blake2b
    except ImportError:  # pragma: no cover - interpreters without the _blake2 module
        from hashlib import blake2b

    if isinstance(args_key, str):
        args_key = args_key.encode()
    elif not isinstance(args_key, (bytes, bytearray, memoryview)):
        msg = (
            f"Computing a cache key: CachePolicy.key_func must return str or bytes "
            f"(got {type(args_key).__name__}). Return e.g. a string digest of the input."
        )
        raise TypeError(msg)
    return blake2b(bytes(args_key), digest_size=16).hexdigest()


def _policy(run: Any, node: Any) -> Any:
    policy = getattr(node, "cache_policy", None) if node is not None else None
    return policy or getattr(run.graph, "cache_policy", None)


def match_cached_writes(run: Any, tasks: list, *, emit: bool) -> list:
    """Gives the tasks of a step whose writes are cached those writes; returns the others.

    A hit makes the task `cached` and `done` (it is not run; its writes are applied
    with the step's), saves its writes when the run has a checkpointer, and with
    `emit` streams its `updates` chunk with `'__metadata__': {'cached': True}`
    (`CheckpointedRun.tick` streams the chunks of its cached tasks itself).
    Misses are remembered for `store_cached_writes`.

    Raises:
        TypeError: when a `key_func` returns something else than str or bytes.
        Exception: whatever a `key_func` or the cache raises.
    """
    cache = run.graph.cache
    wanted: dict = {}
    # the previous step's misses were stored when their tasks finished; failed ones are dropped
    run.__dict__.pop(_KEYS_ATTR, None)
    pending = None
    for task in tasks:
        if task.cached or task.writes:
            continue
        node = task.node
        policy = _policy(run, node)
        if policy is None:
            continue
        full = (node_namespace(node, task.name), digest(policy.key_func(task.input)))
        wanted[full] = task
        if pending is None:
            pending = run.__dict__[_KEYS_ATTR] = {}
        pending[task] = (full, policy.ttl)
    if not wanted:
        return tasks
    found = cache.get(tuple(wanted))
    if not found:
        return tasks
    put_writes = getattr(run, "put_writes", None)
    for full, writes in found.items():
        task = wanted.get((tuple(full[0]), full[1]))
        if task is None:
            continue
        pending.pop(task, None)
        task.writes = [tuple(w) for w in writes]
        task.cached = True
        task.done = True
        if put_writes is not None:
            from lgembed.pregel._paths import task_path as _task_path

            put_writes(task.id, list(task.writes), _task_path(task))
        if emit and "updates" in run.modes and not (task.node is not None and task.node.hidden):
            run.emit("updates", run._updates_chunk(task, cached=True))
    return [t for t in tasks if not t.cached]


def store_cached_writes(run: Any, task: Any) -> None:
    """After a task of a cached node finished without error: caches its writes.

    Raises:
        Exception: whatever the cache raises (e.g. a value it cannot serialize).
    """
    pending = run.__dict__.get(_KEYS_ATTR)
    if not pending:
        return
    entry = pending.pop(task, None)
    if entry is None:
        return
    full, ttl = entry
    run.graph.cache.set({full: (list(task.writes), ttl)})


def _namespaces(graph: Any, nodes: Any) -> list:
    if not graph.cache:
        raise ValueError("No cache is set for this graph. Cannot clear cache.")
    names = nodes or graph.nodes.keys()
    return [node_namespace(graph.nodes[n], n) for n in names if n in graph.nodes]


def clear_cache(graph: Any, nodes: Any = None) -> None:
    """`Pregel.clear_cache`: drops the cached writes of `nodes` (all nodes by default).

    Raises:
        ValueError: when the graph has no cache (LangGraph's text).
    """
    namespaces = _namespaces(graph, nodes)
    graph.cache.clear(namespaces)


async def aclear_cache(graph: Any, nodes: Any = None) -> None:
    """`Pregel.aclear_cache`.

    Raises:
        ValueError: when the graph has no cache (LangGraph's text).
    """
    namespaces = _namespaces(graph, nodes)
    await graph.cache.aclear(namespaces)
