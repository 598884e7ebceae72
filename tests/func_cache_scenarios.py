"""Functional-API and node-cache scenarios, run against LangGraph and lgembed alike.

Why: lgembed must behave as LangGraph 1.2.22 does (issue 16). Each scenario takes
an `api` namespace (the same names imported from `langgraph...` or `lgembed...`)
and returns a JSON-able record of what it observed; `tools/record_func_cache.py`
records LangGraph's records into `tests/fixtures/func_cache.json` and
`tests/test_func_parity.py` compares lgembed's with them, in both builds.
Ids, timestamps and checkpoint configs are normalised away (`norm`).
"""

from __future__ import annotations

import asyncio
import importlib
import operator
import re
import threading
import time
import types
from typing import Annotated, Any, TypedDict



_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_HEX = re.compile(r"\b[0-9a-f]{32}\b")


def api(pkg: str) -> types.SimpleNamespace:
    """The names the scenarios use, from `langgraph` or `lgembed`."""

    def imp(mod: str) -> Any:
        return importlib.import_module(f"{pkg}.{mod}")

    func = imp("func")
    typ = imp("types")
    graph = imp("graph")
    mem = imp("checkpoint.memory")
    cache_mem = imp("cache.memory")
    config = imp("config")
    return types.SimpleNamespace(
        pkg=pkg,
        entrypoint=func.entrypoint,
        task=func.task,
        Command=typ.Command,
        interrupt=typ.interrupt,
        RetryPolicy=typ.RetryPolicy,
        CachePolicy=typ.CachePolicy,
        StreamWriter=typ.StreamWriter,
        StateGraph=graph.StateGraph,
        START=graph.START,
        END=graph.END,
        InMemorySaver=mem.InMemorySaver,
        InMemoryCache=cache_mem.InMemoryCache,
        get_stream_writer=config.get_stream_writer,
    )


def _s(text: str) -> str:
    return _HEX.sub("<hex>", _UUID.sub("<id>", text))


def norm(x: Any) -> Any:
    """A JSON-able, id-free form of an observed value."""
    name = type(x).__name__
    if x is None or isinstance(x, (bool, int, float)):
        return x
    if isinstance(x, str):
        return _s(x)
    if isinstance(x, BaseException):
        return {"error": name, "message": _s(str(x))}
    if name == "Interrupt":
        return {"Interrupt": norm(x.value)}
    if name == "StateSnapshot":
        md = x.metadata or {}
        return {
            "values": norm(x.values),
            "next": norm(x.next),
            "metadata": {k: norm(md[k]) for k in ("source", "step") if k in md},
            "tasks": [norm(t) for t in x.tasks],
            "interrupts": norm(x.interrupts),
            "has_parent": x.parent_config is not None,
        }
    if name == "PregelTask":
        return {
            "name": x.name,
            "path": norm(x.path),
            "error": norm(x.error),
            "interrupts": norm(x.interrupts),
            "result": norm(x.result),
        }
    if name in ("final",) and hasattr(x, "save"):
        return {"final": [norm(x.value), norm(x.save)]}
    if isinstance(x, dict):
        out = {}
        for k, v in x.items():
            if k in ("timestamp", "id", "config", "parent_config", "checkpoint_id", "run_id", "thread_id"):
                continue
            out[_s(str(k))] = norm(v)
        return out
    if isinstance(x, (list, tuple, set, frozenset)):
        items = [norm(v) for v in x]
        return sorted(items, key=repr) if isinstance(x, (set, frozenset)) else items
    return _s(repr(x))


def _err(fn: Any) -> Any:
    try:
        return {"ok": norm(fn())}
    except BaseException as exc:  # noqa: BLE001 - the error is the observation
        return norm(exc)


async def _aerr(coro: Any) -> Any:
    try:
        return {"ok": norm(await coro)}
    except BaseException as exc:  # noqa: BLE001
        return norm(exc)


def _cfg(tid: str) -> dict:
    return {"configurable": {"thread_id": tid}}


# --- functional API -----------------------------------------------------------------


def f_basic(a: Any) -> Any:
    @a.task
    def double(x: int) -> int:
        return x * 2

    @a.entrypoint()
    def wf(xs: list) -> list:
        futs = [double(x) for x in xs]
        return [f.result() for f in futs]

    return {
        "invoke": norm(wf.invoke([1, 2, 3])),
        "name": wf.name,
        "nodes": sorted(wf.nodes),
        "channels": sorted(k for k in wf.channels if not k.startswith("branch:")),
        "stream_mode": wf.stream_mode,
        "stream_default": norm(list(wf.stream([4]))),
        "values": norm(list(wf.stream([4], stream_mode="values"))),
        "updates": norm(list(wf.stream([4], stream_mode="updates"))),
        "multi": norm(list(wf.stream([4], stream_mode=["values", "updates"]))),
        "invoke_updates": norm(wf.invoke([4], stream_mode="updates")),
    }


def f_sequential_stream(a: Any) -> Any:
    @a.task
    def one(x: int) -> int:
        return x + 1

    @a.task(name="two_named")
    def two(x: int) -> dict:
        return {"v": x * 10}

    @a.entrypoint()
    def wf(x: int, writer) -> dict:
        writer({"start": x})
        y = one(x).result()
        a.get_stream_writer()("mid")
        z = two(y).result()
        return {"out": z}

    return {
        "updates": norm(list(wf.stream(1, stream_mode="updates"))),
        "custom": norm(list(wf.stream(1, stream_mode="custom"))),
        "all": norm(list(wf.stream(1, stream_mode=["updates", "custom", "values"]))),
        "tasks": norm(list(wf.stream(1, stream_mode="tasks"))),
        "debug": norm(list(wf.stream(1, stream_mode="debug"))),
    }


def f_parallel(a: Any) -> Any:
    barrier = threading.Barrier(3, timeout=10)

    @a.task
    def slow(x: int) -> int:
        barrier.wait()  # all three run at once, or this times out
        return x

    @a.entrypoint()
    def wf(n: int) -> list:
        futs = [slow(i) for i in range(n)]
        return [f.result() for f in futs]

    chunks = list(wf.stream(3, stream_mode="updates"))
    return {"chunks": sorted((norm(c) for c in chunks), key=repr), "last": norm(chunks[-1])}


def f_previous_final(a: Any) -> Any:
    saver = a.InMemorySaver()

    @a.entrypoint(checkpointer=saver)
    def counter(x: int, *, previous: Any = None) -> Any:
        total = (previous or 0) + x
        return a.entrypoint.final(value=f"total={total}", save=total)

    cfg = _cfg("t1")
    out = [counter.invoke(1, cfg), counter.invoke(2, cfg), counter.invoke(3, _cfg("t2"))]
    history = list(counter.get_state_history(cfg))
    return {
        "outs": out,
        "state": norm(counter.get_state(cfg)),
        "history": [norm(s) for s in history],
        "stream": norm(list(counter.stream(4, cfg, stream_mode=["updates", "values"]))),
    }


def f_previous_plain(a: Any) -> Any:
    @a.entrypoint(checkpointer=a.InMemorySaver())
    def echo(x: str, previous=None, config=None) -> dict:
        return {"x": x, "previous": previous, "thread": config["configurable"]["thread_id"]}

    cfg = _cfg("p")
    return [norm(echo.invoke("a", cfg)), norm(echo.invoke("b", cfg)), norm(echo.invoke("c", _cfg("q")))]


def f_interrupt_entrypoint(a: Any) -> Any:
    calls: list = []

    @a.task
    def prep(x: str) -> str:
        calls.append(x)
        return x.upper()

    @a.entrypoint(checkpointer=a.InMemorySaver())
    def review(topic: str) -> dict:
        draft = prep(topic).result()
        answer = a.interrupt({"draft": draft})
        return {"draft": draft, "answer": answer}

    cfg = _cfg("i1")
    first = list(review.stream("cats", cfg, stream_mode="updates"))
    state = review.get_state(cfg)
    second = list(review.stream(a.Command(resume="ok"), cfg, stream_mode="updates"))
    cfg2 = _cfg("i2")
    inv = review.invoke("dogs", cfg2)
    inv2 = review.invoke(a.Command(resume="yes"), cfg2)
    return {
        "first": norm(first),
        "state": norm(state),
        "second": norm(second),
        "calls": calls,
        "final_state": norm(review.get_state(cfg)),
        "invoke": norm(inv),
        "invoke_resume": norm(inv2),
        "history_len": len(list(review.get_state_history(cfg))),
    }


def f_interrupt_task(a: Any) -> Any:
    calls: list = []

    @a.task
    def step1(x: int) -> int:
        calls.append("step1")
        return x + 1

    @a.task
    def ask(x: int) -> int:
        calls.append("ask")
        answer = a.interrupt(f"value for {x}?")
        return x + answer

    @a.entrypoint(checkpointer=a.InMemorySaver())
    def wf(x: int) -> int:
        y = step1(x).result()
        return ask(y).result()

    cfg = _cfg("t")
    first = list(wf.stream(1, cfg, stream_mode=["updates", "values"]))
    state = wf.get_state(cfg)
    second = list(wf.stream(a.Command(resume=100), cfg, stream_mode=["updates", "values"]))
    return {
        "first": norm(first),
        "state": norm(state),
        "second": norm(second),
        "calls": calls,
        "final": norm(wf.get_state(cfg)),
    }


def f_outside(a: Any) -> Any:
    @a.task
    def t(x: int) -> int:
        return x

    return {"call": _err(lambda: t(1))}


def f_errors(a: Any) -> Any:
    def no_params():
        return 1

    def gen(x):
        yield x

    @a.task
    def boom(x: int) -> int:
        raise ValueError(f"bad {x}")

    @a.entrypoint(checkpointer=a.InMemorySaver())
    def wf(x: int) -> int:
        return boom(x).result()

    @a.entrypoint()
    def catching(x: int) -> str:
        try:
            boom(x).result()
        except ValueError as exc:
            return f"caught {exc}"
        return "no"

    cfg = _cfg("e")
    res = _err(lambda: wf.invoke(3, cfg))
    return {
        "no_params": _err(lambda: a.entrypoint()(no_params)),
        "generator": _err(lambda: a.entrypoint()(gen)),
        "invoke": res,
        "state": norm(wf.get_state(cfg)),
        "updates": _err(lambda: list(wf.stream(4, _cfg("e2"), stream_mode="updates"))),
        "catching": _err(lambda: catching.invoke(5)),
    }


def f_retry(a: Any) -> Any:
    attempts: list = []

    @a.task(retry_policy=a.RetryPolicy(initial_interval=0.01, jitter=False, max_attempts=3, retry_on=ValueError))
    def flaky(x: int) -> int:
        attempts.append(x)
        if len(attempts) < 3:
            raise ValueError("again")
        return x * 3

    @a.entrypoint()
    def wf(x: int) -> int:
        return flaky(x).result()

    out = _err(lambda: wf.invoke(2))
    attempts2: list = []

    @a.task(retry_policy=a.RetryPolicy(initial_interval=0.01, jitter=False, max_attempts=2, retry_on=ValueError))
    def never(x: int) -> int:
        attempts2.append(x)
        raise ValueError("always")

    @a.entrypoint()
    def wf2(x: int) -> int:
        return never(x).result()

    return {"out": out, "attempts": attempts, "never": _err(lambda: wf2.invoke(1)), "attempts2": attempts2}


def f_async(a: Any) -> Any:
    @a.task
    async def inc(x: int) -> int:
        await asyncio.sleep(0)
        return x + 1

    @a.task
    def sync_double(x: int) -> int:
        return x * 2

    @a.entrypoint()
    async def wf(xs: list) -> list:
        incs = await asyncio.gather(*[inc(x) for x in xs])
        d = await sync_double(incs[0])
        return [*incs, d]

    @a.entrypoint(checkpointer=a.InMemorySaver())
    async def asks(x: int) -> str:
        y = await inc(x)
        return f"{y}:{a.interrupt('more?')}"

    async def main() -> Any:
        out = await wf.ainvoke([1, 2])
        chunks = [c async for c in wf.astream([5], stream_mode="updates")]
        cfg = _cfg("a")
        first = await asks.ainvoke(1, cfg)
        second = await asks.ainvoke(a.Command(resume="done"), cfg)
        state = await asks.aget_state(cfg)
        return {"out": out, "chunks": norm(chunks), "first": norm(first), "second": second, "state": norm(state)}

    res = asyncio.run(main())

    @a.task
    async def only_async(x: int) -> int:
        return x

    @a.entrypoint()
    def sync_wf(x: int) -> int:
        return only_async(x).result()

    res["sync_calls_async"] = _err(lambda: sync_wf.invoke(1))
    return res


def f_in_stategraph(a: Any) -> Any:
    class S(TypedDict):
        x: int
        log: Annotated[list, operator.add]

    @a.task
    def square(x: int) -> int:
        return x * x

    def node(state: S) -> dict:
        return {"x": square(state["x"]).result(), "log": ["node"]}

    g = a.StateGraph(S)
    g.add_node("node", node)
    g.add_edge(a.START, "node")
    app = g.compile()
    return {
        "invoke": app.invoke({"x": 3, "log": []}),
        "updates": norm(list(app.stream({"x": 4, "log": []}, stream_mode="updates"))),
    }


def f_update_state(a: Any) -> Any:
    @a.entrypoint(checkpointer=a.InMemorySaver())
    def acc(x: int, previous: Any = None) -> int:
        return (previous or 0) + x

    cfg = _cfg("u")
    acc.invoke(5, cfg)
    upd = _err(lambda: acc.update_state(cfg, 100))
    after = norm(acc.get_state(cfg))
    nxt = acc.invoke(1, cfg)
    return {"update": "ok" if "ok" in upd else upd, "after": after, "next": nxt}


def f_task_cache(a: Any) -> Any:
    calls: list = []

    @a.task(cache_policy=a.CachePolicy())
    def expensive(x: int) -> int:
        calls.append(x)
        return x * 100

    @a.entrypoint(cache=a.InMemoryCache())
    def wf(x: int) -> int:
        return expensive(x).result() + expensive(x + 1).result()

    first = list(wf.stream(1, stream_mode="updates"))
    second = list(wf.stream(1, stream_mode="updates"))
    third = list(wf.stream(2, stream_mode=["updates", "tasks"]))
    ns = sorted(list(k) for k in wf.cache._cache)
    expensive.clear_cache(wf.cache)
    fourth = wf.invoke(1)
    return {
        "first": norm(first),
        "second": norm(second),
        "third": norm(third),
        "calls": calls,
        "ns": norm(ns),
        "fourth": fourth,
    }


def f_debug_checkpointed(a: Any) -> Any:
    @a.task
    def inc(x: int) -> int:
        return x + 1

    @a.entrypoint(checkpointer=a.InMemorySaver())
    def wf(x: int) -> int:
        return inc(x).result()

    cfg = _cfg("d")
    return {
        "debug": norm(list(wf.stream(1, cfg, stream_mode="debug"))),
        "checkpoints": norm(list(wf.stream(2, cfg, stream_mode="checkpoints"))),
    }


def f_nested_and_multi_interrupt(a: Any) -> Any:
    calls: list = []

    @a.task
    def leaf(x: int) -> int:
        calls.append(("leaf", x))
        return x * 2

    @a.task
    def mid(x: int) -> int:
        calls.append(("mid", x))
        return leaf(x).result() + 1

    @a.task
    def two_questions(x: int) -> str:
        calls.append(("q", x))
        first = a.interrupt("first?")
        second = a.interrupt("second?")
        return f"{x}:{first}:{second}"

    @a.entrypoint(checkpointer=a.InMemorySaver())
    def wf(x: int) -> list:
        return [mid(x).result(), two_questions(x).result()]

    cfg = _cfg("n")
    r1 = list(wf.stream(3, cfg, stream_mode="updates"))
    r2 = list(wf.stream(a.Command(resume="A"), cfg, stream_mode="updates"))
    s2 = wf.get_state(cfg)
    r3 = list(wf.stream(a.Command(resume="B"), cfg, stream_mode="updates"))
    return {
        "r1": norm(r1),
        "r2": norm(r2),
        "s2": norm(s2),
        "r3": norm(r3),
        "calls": calls,
        "history": [norm(h) for h in wf.get_state_history(cfg)],
    }


def f_runtime_store(a: Any) -> Any:
    store_mod = importlib.import_module(f"{a.pkg}.store.memory")
    store = store_mod.InMemoryStore()
    store.put(("ns",), "k", {"v": 1})

    @a.entrypoint(checkpointer=a.InMemorySaver(), store=store)
    def wf(x: int, *, previous=None, store=None, runtime=None) -> dict:
        item = store.get(("ns",), "k")
        return {
            "x": x,
            "prev": previous,
            "rt_prev": runtime.previous,
            "same_store": runtime.store is store,
            "item": item.value,
        }

    cfg = _cfg("r")
    return [norm(wf.invoke(1, cfg)), norm(wf.invoke(2, cfg))]


def f_entrypoint_cache_policy(a: Any) -> Any:
    calls: list = []

    @a.task
    def plain(x: int) -> int:
        calls.append(("plain", x))
        return x + 1

    @a.entrypoint(cache=a.InMemoryCache(), cache_policy=a.CachePolicy())
    def wf(x: int) -> int:
        calls.append(("wf", x))
        return plain(x).result()

    first = list(wf.stream(1, stream_mode="updates"))
    second = list(wf.stream(1, stream_mode="updates"))
    return {"first": norm(first), "second": norm(second), "calls": calls}


def f_cache_and_resume(a: Any) -> Any:
    calls: list = []

    @a.task(cache_policy=a.CachePolicy())
    def fetch(x: int) -> int:
        calls.append(x)
        return x * 7

    @a.entrypoint(checkpointer=a.InMemorySaver(), cache=a.InMemoryCache())
    def wf(x: int) -> str:
        v = fetch(x).result()
        ok = a.interrupt(f"keep {v}?")
        return f"{v}:{ok}"

    cfg = _cfg("cr")
    r1 = list(wf.stream(2, cfg, stream_mode="updates"))
    r2 = list(wf.stream(a.Command(resume="y"), cfg, stream_mode="updates"))
    r3 = list(wf.stream(2, _cfg("cr2"), stream_mode="updates"))
    return {"r1": norm(r1), "r2": norm(r2), "r3": norm(r3), "calls": calls}


def f_async_more(a: Any) -> Any:
    @a.task
    async def slow_async(x: int) -> int:
        await asyncio.sleep(0.01 * (3 - x))
        return x

    @a.task
    async def boom(x: int) -> int:
        raise KeyError(x)

    @a.entrypoint()
    def sync_entry(x: int) -> int:
        return slow_async(x).result()

    @a.entrypoint()
    async def failing(x: int) -> int:
        return await boom(x)

    async def main() -> Any:
        a1 = await sync_entry.ainvoke(2)
        err = await _aerr(failing.ainvoke(1))
        chunks = []
        try:
            async for c in failing.astream(1, stream_mode=["updates", "tasks"]):
                chunks.append(c)
        except KeyError as exc:
            chunks.append(norm(exc))
        return {"sync_entry": a1, "err": err, "chunks": norm(chunks)}

    return asyncio.run(main())


def f_send_cache(a: Any) -> Any:
    Send = importlib.import_module(f"{a.pkg}.types").Send
    calls: list = []

    class S(TypedDict):
        items: list
        out: Annotated[list, operator.add]

    def work(arg: dict) -> dict:
        calls.append(arg["i"])
        return {"out": [arg["i"] * 2]}

    g = a.StateGraph(S)
    g.add_node("work", work, cache_policy=a.CachePolicy())
    g.add_conditional_edges(a.START, lambda s: [Send("work", {"i": i}) for i in s["items"]])
    app = g.compile(cache=a.InMemoryCache())
    r1 = list(app.stream({"items": [1, 2], "out": []}, stream_mode="updates"))
    r2 = list(app.stream({"items": [2, 3], "out": []}, stream_mode="updates"))
    return {"r1": sorted((norm(c) for c in r1), key=repr), "r2": sorted((norm(c) for c in r2), key=repr), "calls": sorted(calls)}


# --- node cache ---------------------------------------------------------------------


class _CS(TypedDict):
    x: int


def _cache_graph(a: Any, calls: list, policy: Any, cache: Any = None, checkpointer: Any = None) -> Any:
    def slow(state: _CS) -> dict:
        calls.append(state["x"])
        return {"x": state["x"] * 10}

    def after(state: _CS) -> dict:
        return {"x": state["x"] + 1}

    g = a.StateGraph(_CS)
    g.add_node("slow", slow, cache_policy=policy)
    g.add_node("after", after)
    g.add_edge(a.START, "slow")
    g.add_edge("slow", "after")
    return g.compile(cache=cache if cache is not None else a.InMemoryCache(), checkpointer=checkpointer)


def c_node_cache(a: Any) -> Any:
    calls: list = []
    app = _cache_graph(a, calls, a.CachePolicy(ttl=60))
    r1 = list(app.stream({"x": 2}, stream_mode="updates"))
    r2 = list(app.stream({"x": 2}, stream_mode="updates"))
    r3 = list(app.stream({"x": 3}, stream_mode="updates"))
    inv = app.invoke({"x": 2})
    values = list(app.stream({"x": 2}, stream_mode="values"))
    tasks = list(app.stream({"x": 2}, stream_mode="tasks"))
    debug = list(app.stream({"x": 2}, stream_mode="debug"))
    ns = sorted(list(k) for k in app.cache._cache)
    return {
        "r1": norm(r1),
        "r2": norm(r2),
        "r3": norm(r3),
        "invoke": inv,
        "values": norm(values),
        "tasks": norm(tasks),
        "debug": norm(debug),
        "calls": calls,
        "ns": norm(ns),
    }


def c_key_func_clear(a: Any) -> Any:
    calls: list = []
    app = _cache_graph(a, calls, a.CachePolicy(key_func=lambda s: str(s["x"] % 2)))
    outs = [app.invoke({"x": 1}), app.invoke({"x": 3}), app.invoke({"x": 2})]
    app.clear_cache()
    outs.append(app.invoke({"x": 3}))
    app.clear_cache(["after"])
    outs.append(app.invoke({"x": 5}))
    app.clear_cache(["slow"])
    outs.append(app.invoke({"x": 5}))

    g = a.StateGraph(_CS)
    g.add_node("n", lambda s: {"x": 1})
    g.add_edge(a.START, "n")
    plain = g.compile()
    return {
        "outs": outs,
        "calls": calls,
        "no_cache": _err(lambda: plain.clear_cache()),
        "no_cache_async": asyncio.run(_aerr(plain.aclear_cache())),
    }


def c_ttl(a: Any) -> Any:
    calls: list = []
    app = _cache_graph(a, calls, a.CachePolicy(ttl=1))
    app.invoke({"x": 1})
    app.invoke({"x": 1})
    time.sleep(1.2)
    app.invoke({"x": 1})
    return {"calls": calls}


def c_checkpointed(a: Any) -> Any:
    calls: list = []
    app = _cache_graph(a, calls, a.CachePolicy(), checkpointer=a.InMemorySaver())
    app.invoke({"x": 4}, _cfg("c1"))
    chunks = list(app.stream({"x": 4}, _cfg("c2"), stream_mode=["updates", "values"]))
    return {
        "chunks": norm(chunks),
        "state": norm(app.get_state(_cfg("c2"))),
        "history": [norm(s) for s in app.get_state_history(_cfg("c2"))],
        "calls": calls,
    }


def c_async(a: Any) -> Any:
    calls: list = []

    async def main() -> Any:
        app = _cache_graph(a, calls, a.CachePolicy())
        one = [c async for c in app.astream({"x": 7}, stream_mode="updates")]
        two = [c async for c in app.astream({"x": 7}, stream_mode="updates")]
        await app.aclear_cache()
        three = await app.ainvoke({"x": 7})
        return {"one": norm(one), "two": norm(two), "three": three}

    res = asyncio.run(main())
    res["calls"] = calls
    return res


def c_policy_default(a: Any) -> Any:
    p = a.CachePolicy()
    return {"ttl": p.ttl, "key_type": type(p.key_func({"x": 1})).__name__}


SCENARIOS = {
    name: fn
    for name, fn in sorted(globals().items())
    if callable(fn) and (name.startswith("f_") or name.startswith("c_"))
}
