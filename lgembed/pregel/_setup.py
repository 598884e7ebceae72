"""Run setup: the run config, the `Run` object a call of invoke / stream starts (L-1…L-8, G-1…G-3).

Why a module of its own: `lgembed.pregel.main` holds the public `Pregel` API; what
happens between a call and the first step (merging configs as LangGraph's
ensure_config does, nesting under a parent graph's task, choosing the checkpointer,
applying a Command given as input) is here.
"""

from __future__ import annotations

import warnings
from typing import Any

from lgembed._constants import CONF, CONFIG_KEY_TASK, DEFAULT_RECURSION_LIMIT
from lgembed._schema import is_pydantic_model_class
from lgembed.config import _TASK
from lgembed.errors import EmptyInputError
from lgembed.pregel._loop import Run, _InputTask
from lgembed.types import Command

__all__ = ("ensure_valid_checkpointer", "merge_configs", "prepare", "stream_modes")


def ensure_valid_checkpointer(checkpointer: Any) -> Any:
    """Checks the `checkpointer` argument of `compile()` (B-30)."""
    if checkpointer in (None, True, False):  # LangGraph's test: 0 and 1 pass too
        return checkpointer
    from lgembed.checkpoint.base import BaseCheckpointSaver

    if isinstance(checkpointer, BaseCheckpointSaver):
        return checkpointer
    raise TypeError(
        "Invalid checkpointer provided. Expected an instance of `BaseCheckpointSaver`, `True`, "
        f"`False`, or `None`. Received {type(checkpointer).__name__}. Pass a proper saver "
        "(e.g., InMemorySaver, AsyncPostgresSaver)."
    )


_PROPAGATE_TO_METADATA = ("thread_id", "checkpoint_id", "checkpoint_ns", "task_id", "run_id", "assistant_id", "graph_id")
# configurable keys LangGraph's ensure_config copies into metadata when set (L-24)


def merge_configs(*configs: dict | None) -> dict:
    """LangGraph's run config merge (ensure_config): configurable and metadata shallow-
    merged, tags concatenated; `recursion_limit` and `tags` only when some config has
    them (nodes see exactly that); set `_PROPAGATE_TO_METADATA` keys copied to metadata."""
    out: dict = {"metadata": {}, "callbacks": None, CONF: {}}
    for config in configs:
        if not config:
            continue
        for k, v in config.items():
            if v is None:
                continue
            if k == CONF:
                out[CONF] = {**out[CONF], **v}
            elif k == "metadata":
                out["metadata"] = {**out["metadata"], **v}
            elif k == "tags":
                out["tags"] = [*out.get("tags", ()), *v]
            else:
                out[k] = v
    configurable = out[CONF]
    if configurable:
        metadata = out["metadata"]
        for key in _PROPAGATE_TO_METADATA:
            if key not in metadata:
                value = configurable.get(key)
                if value:
                    metadata[key] = value
    return out


def run_config(graph: Any, config: dict | None) -> dict:
    """The run config: the running task's config (a graph called inside a node) under
    the graph's and the caller's, as LangGraph's ensure_config merges them."""
    task = _TASK.get()
    if task is None:
        return merge_configs(graph.config, config)
    ambient = task.config
    explicit = (config or {}).get(CONF) or {}
    if any(explicit.get(k) for k in ("thread_id", "checkpoint_ns", "checkpoint_id", "checkpoint_map")):
        ambient = {k: v for k, v in ambient.items() if k != CONF}
    ambient = {k: v for k, v in ambient.items() if k not in ("run_name",)}
    return merge_configs(ambient, graph.config, config)


def saver_for(graph: Any, config: dict) -> Any:
    """The checkpointer of this run: the graph's own, or one inherited from a parent graph."""
    cp = graph.checkpointer
    if cp is False:
        return None
    if cp is None or cp is True:
        return config[CONF].get("__pregel_checkpointer")
    return cp


def stream_modes(stream_mode: Any, default: str) -> tuple[list, bool]:
    """The stream modes asked for, and whether one mode was given as a string (S-2)."""
    if stream_mode is None:
        stream_mode = default
    if isinstance(stream_mode, str):
        return [stream_mode], True
    return list(dict.fromkeys(stream_mode)), False


def prepare(
    graph: Any,
    input: Any,
    config: dict | None,
    *,
    context: Any,
    stream_mode: Any,
    output_keys: Any,
    interrupt_before: Any,
    interrupt_after: Any,
    durability: Any,
    default_output: Any,
    subgraphs: bool = False,
    lazy_values: bool = False,
) -> Run:
    """The run a call of invoke / stream starts, prepared up to its first step."""
    config = run_config(graph, config)
    if config.get("recursion_limit", DEFAULT_RECURSION_LIMIT) < 1:
        raise ValueError("recursion_limit must be at least 1")
    if durability is not None and not graph.checkpointer:
        warnings.warn("`durability` has no effect when no checkpointer is present.")
    if context is not None and graph.context_schema is not None and isinstance(context, dict):
        from dataclasses import is_dataclass

        schema = graph.context_schema
        if is_dataclass(schema) or is_pydantic_model_class(schema):
            context = schema(**context)
    modes = frozenset(stream_mode)
    kwargs = dict(
        modes=modes,
        output_keys=output_keys if output_keys is not None else default_output,
        interrupt_before=interrupt_before or graph.interrupt_before_nodes,
        interrupt_after=interrupt_after or graph.interrupt_after_nodes,
        context=context,
    )
    configurable = config[CONF]
    parent_task = configurable.get(CONFIG_KEY_TASK)
    if parent_task is None and graph.checkpointer is True:
        raise RuntimeError("checkpointer=True cannot be used for root graphs.")
    if parent_task is not None:
        # G-1: running as (or inside) a task of a parent graph
        ns = configurable.get("checkpoint_ns", "")
        count = parent_task.subgraph_counter
        parent_task.subgraph_counter = count + 1
        if count:
            ns = f"{ns}|{count}"  # G-3: later graphs called by the same task
        if graph.checkpointer is True:
            # G-2: one history per thread under the namespace without task ids
            ns = "|".join(part.split(":")[0] for part in ns.split("|"))
        configurable = config[CONF] = {**configurable, "checkpoint_ns": ns}
        stream = configurable.get("__pregel_stream")
        parent_runtime = configurable.get("__pregel_runtime")
        kwargs.update(
            parent_ns=ns,
            ns=tuple(ns.split("|")) if ns else (),
            parent_task=parent_task,
            parent_sink=stream[0] if stream else None,
            parent_modes=stream[1] if stream else frozenset(),
            # S-8: a nested graph's custom chunks reach the caller only when the
            # caller streams subgraphs (it then passes its stream down)
            parent_writer=parent_runtime.stream_writer if parent_runtime is not None and stream else None,
        )
        if parent_runtime is not None:
            # T-5: a nested graph uses the store of the graph that runs it, not its own
            kwargs["store"] = parent_runtime.store
        if context is None and parent_runtime is not None:
            kwargs["context"] = parent_runtime.context
    saver = saver_for(graph, config)
    if saver is not None:
        from lgembed.pregel._persist import CheckpointedRun  # runs without a checkpointer never load it

        run = CheckpointedRun(graph, config, saver=saver, durability=durability, **kwargs)
        run.static_interrupt = False
        run.set_lazy_values(lazy_values)
        if subgraphs or run.parent_sink is not None:
            run.child_sink = run.sink
        run.start(input)
        return run
    run = Run(graph, config, **kwargs)
    run.static_interrupt = False
    run.set_lazy_values(lazy_values)
    if subgraphs or run.parent_sink is not None:
        run.child_sink = run.sink
    if isinstance(input, Command):
        if input.resume is not None and not graph.checkpointer:
            raise RuntimeError("Cannot use Command(resume=...) without checkpointer")
        writes = graph._command_writes(input)
        if not writes:
            raise EmptyInputError("Received empty Command input")
        run.apply([_InputTask(writes)])
    run.start(input)
    return run
