"""Pregel: a compiled graph of nodes and channels, and the drivers that run it (§5, §7, §8).

`Pregel` holds the compiled layout (nodes, channel prototypes, trigger index) and
exposes LangGraph's run API: invoke / stream / batch and their async twins. One
run's state lives in `lgembed.pregel._loop.Run`; task execution in `_runner`.

Why over 600 lines: LangGraph's public run and state methods each take a dozen
keyword arguments with docstrings, in sync and async forms; the logic behind them
lives in `_loop`, `_persist`, `_state` and `_runner`.
"""

from __future__ import annotations

import warnings
from typing import Any, AsyncIterator, Iterator, Sequence

from lgembed._constants import (
    CONF,
    CONFIG_KEY_TASK,
    DEFAULT_RECURSION_LIMIT,
    INTERRUPT,
    RESUME,
    START,
    TASKS,
)
from lgembed._typing import MISSING
from lgembed.config import _TASK
from lgembed.errors import EmptyInputError, InvalidUpdateError
from lgembed.pregel._loop import Run, _InputTask
from lgembed.types import Command, GraphOutput, Send

__all__ = ("Pregel", "ensure_valid_checkpointer")

import os as _os
import sys as _sys
import threading as _threading

_POOL_LOCK = _threading.Lock()
# guards the lazy creation of each graph's worker pool
POOL_SIZE = min(32, (_os.cpu_count() or 1) + 4)
# worker threads of a graph's pool
_RECYCLED_MAX = 2
# channel sets a graph keeps for its next runs (runs at the same time in other threads
# make their own)

_ALL_MODES = ("values", "updates", "checkpoints", "tasks", "debug", "messages", "custom")


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


def _merge_configs(*configs: dict | None) -> dict:
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


class Pregel:
    """A compiled graph: nodes subscribed to channels, run in supersteps."""

    _lg_is_graph = True

    def __init__(
        self,
        *,
        nodes: dict,
        channels: dict,
        managed: dict | None = None,
        input_channels: Any,
        output_channels: Any,
        stream_channels: Any = None,
        stream_mode: str = "values",
        checkpointer: Any = None,
        store: Any = None,
        cache: Any = None,
        interrupt_before: Any = (),
        interrupt_after: Any = (),
        debug: bool = False,
        name: str = "LangGraph",
        context_schema: Any = None,
        output_schema: Any = None,
        state_schema: Any = None,
        retry_policy: Sequence[Any] = (),
    ) -> None:
        self.nodes = nodes
        self.managed = managed or {}
        self._specs = channels
        # channel prototypes copied into every run; `channels` also lists managed values
        self.channels = {**channels, **self.managed}
        self.input_channels = input_channels
        self.output_channels = output_channels
        self.stream_channels = stream_channels if stream_channels is not None else output_channels
        self.stream_mode = stream_mode
        self.checkpointer = checkpointer
        self.store = store
        self.cache = cache
        self.interrupt_before_nodes = interrupt_before
        self.interrupt_after_nodes = interrupt_after
        self.debug = debug
        self.name = name
        self.context_schema = context_schema
        self.output_schema = output_schema
        self.state_schema = state_schema
        self.retry_policy = tuple(retry_policy)
        self.config: dict | None = None
        self._index()

    def _index(self) -> None:
        """Precomputes the trigger index and the channels that react to finish() (K-6)."""
        trigger_to_nodes: dict[str, list[str]] = {}
        for name, node in self.nodes.items():
            node.sorted_triggers = tuple(sorted(node.triggers))
            for ch in node.triggers:
                trigger_to_nodes.setdefault(ch, []).append(name)
        self.trigger_to_nodes = trigger_to_nodes
        self.node_names = tuple(self.nodes)
        untracked_cls = _untracked_class()
        self.untracked = frozenset(k for k, ch in self._specs.items() if isinstance(ch, untracked_cls))
        self.finishing = [k for k, ch in self._specs.items() if getattr(ch, "_lg_finishes", True)]
        # what a finished run's channels need before another run uses them
        # (_recycle_channels): exact LastValue / EphemeralValue get their value slot
        # emptied, an exact Topic is made anew if the run wrote it, any other is made anew
        topic_cls = _topic_class()
        self._written_made = frozenset(k for k, ch in self._specs.items() if type(ch) is topic_cls)
        self._fresh_made = tuple(
            k for k, ch in self._specs.items() if not getattr(ch, "_lg_kind", 0) and type(ch) is not topic_cls
        )
        self._recycled = (self._specs, [])

    def _empty_channels(self) -> dict:
        """Empty channels for a run without a checkpointer or on a new thread: a set a
        finished run gave back (`_recycle_channels`), or new copies of the prototypes."""
        specs = self._specs
        recycled = self._recycled
        if recycled[0] is specs and recycled[1]:
            try:
                return recycled[1].pop()
            except IndexError:  # another thread took it first
                pass
        return {k: ch.from_checkpoint(MISSING) for k, ch in specs.items()}

    def _recycle_channels(self, run: Run) -> None:
        """Keeps the channels of a run that ended normally for the next run, emptied.

        Strategy: making a channel is a Python class call (about 2,000 instructions,
        13 per run of a 10-node chain); emptying the value slot of one that a run
        wrote is one store. Kept as they are: exact LastValue / EphemeralValue channels
        (`_lg_kind`), emptied if the run versioned them (only those can hold a value),
        and exact Topics the run did not write (`get()` hands out copies, so nothing
        could change them). Every other channel is made anew, so no state of a custom
        channel or a reducer's initial value outlives its run. The run no longer holds
        the set afterwards.
        """
        specs = self._specs
        recycled = self._recycled
        channels = run.channels
        if recycled[0] is not specs or len(recycled[1]) >= _RECYCLED_MAX or not channels:
            return
        run.channels = {}
        written_made = self._written_made
        for k in run.versions:
            ch = channels.get(k)
            if ch is None:
                continue
            if ch._lg_kind:
                ch.value = MISSING
            elif k in written_made:
                channels[k] = specs[k].from_checkpoint(MISSING)
        for k in self._fresh_made:
            channels[k] = specs[k].from_checkpoint(MISSING)
        recycled[1].append(channels)

    def _executor(self) -> Any:
        """The graph's worker pool for parallel steps, created on first use.

        Why one pool per compiled graph: starting threads costs far more than a small
        step; idle workers are reused across runs. Threads start only when needed, up
        to POOL_SIZE, the size of the per-run pool LangGraph uses (Python's default,
        min(32, CPUs + 4)), so a step runs at most that many tasks at once as there.
        """
        pool = self.__dict__.get("_pool")
        if pool is None:
            from concurrent.futures import ThreadPoolExecutor

            with _POOL_LOCK:
                pool = self.__dict__.get("_pool")
                if pool is None:
                    pool = ThreadPoolExecutor(max_workers=POOL_SIZE, thread_name_prefix="lgembed")
                    self._pool = pool
        return pool

    # --- identity ---------------------------------------------------------------------

    def get_name(self, suffix: str | None = None) -> str:
        return f"{self.name}{suffix}" if suffix else self.name

    def copy(self, update: dict | None = None) -> Pregel:
        import copy as _copy

        new = _copy.copy(self)
        for k, v in (update or {}).items():
            setattr(new, k, v)
        return new

    def with_config(self, config: dict | None = None, **kwargs: Any) -> Pregel:
        from lgembed.pregel._state import merge_configs

        return self.copy({"config": merge_configs(self.config, config, kwargs)})

    # --- input ------------------------------------------------------------------------

    def map_input(self, input: Any) -> list:
        """Writes of the graph input to the input channel(s) (L-8)."""
        ic = self.input_channels
        if isinstance(ic, str):
            return [(ic, input)] if input is not None else []
        if not isinstance(input, dict):
            raise TypeError(f"Expected input to be a dict, got {type(input).__name__}")
        return [(k, input[k]) for k in ic if k in input]

    def _command_writes(self, cmd: Command) -> list:
        """Null-task writes of a Command given as input (L-5)."""
        if cmd.graph == Command.PARENT:
            raise InvalidUpdateError("There is no parent graph")
        writes: list = []
        if cmd.goto:
            gotos = cmd.goto if isinstance(cmd.goto, (tuple, list)) else [cmd.goto]
            for go in gotos:
                if isinstance(go, Send):
                    writes.append((TASKS, go))
                elif isinstance(go, str):
                    writes.append((f"branch:to:{go}", START))
                else:
                    raise TypeError(f"In Command.goto, expected Send/str, got {type(go).__name__}")
        if cmd.resume is not None:
            writes.append((RESUME, cmd.resume))
        if cmd.update:
            writes.extend(cmd._update_as_tuples())
        return writes

    # --- run setup ----------------------------------------------------------------------

    def _run_config(self, config: dict | None) -> dict:
        """The run config: the running task's config (a graph called inside a node) under
        the graph's and the caller's, as LangGraph's ensure_config merges them."""
        task = _TASK.get()
        if task is None:
            return _merge_configs(self.config, config)
        ambient = task.config
        explicit = (config or {}).get(CONF) or {}
        if any(explicit.get(k) for k in ("thread_id", "checkpoint_ns", "checkpoint_id", "checkpoint_map")):
            ambient = {k: v for k, v in ambient.items() if k != CONF}
        ambient = {k: v for k, v in ambient.items() if k not in ("run_name",)}
        return _merge_configs(ambient, self.config, config)

    def _prepare(
        self,
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
        config = self._run_config(config)
        if config.get("recursion_limit", DEFAULT_RECURSION_LIMIT) < 1:
            raise ValueError("recursion_limit must be at least 1")
        if durability is not None and not self.checkpointer:
            warnings.warn("`durability` has no effect when no checkpointer is present.")
        if context is not None and self.context_schema is not None and isinstance(context, dict):
            from dataclasses import is_dataclass

            from lgembed.graph._fields import is_pydantic_model_class

            schema = self.context_schema
            if is_dataclass(schema) or is_pydantic_model_class(schema):
                context = schema(**context)
        modes = frozenset(stream_mode)
        kwargs = dict(
            modes=modes,
            output_keys=output_keys if output_keys is not None else default_output,
            interrupt_before=interrupt_before or self.interrupt_before_nodes,
            interrupt_after=interrupt_after or self.interrupt_after_nodes,
            context=context,
        )
        configurable = config[CONF]
        parent_task = configurable.get(CONFIG_KEY_TASK)
        if parent_task is None and self.checkpointer is True:
            raise RuntimeError("checkpointer=True cannot be used for root graphs.")
        if parent_task is not None:
            # G-1: running as (or inside) a task of a parent graph
            ns = configurable.get("checkpoint_ns", "")
            count = parent_task.subgraph_counter
            parent_task.subgraph_counter = count + 1
            if count:
                ns = f"{ns}|{count}"  # G-3: later graphs called by the same task
            if self.checkpointer is True:
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
        saver = self._saver(config)
        if saver is not None:
            run = _run_module("lgembed.pregel._persist").CheckpointedRun(
                self, config, saver=saver, durability=durability, **kwargs
            )
            run.static_interrupt = False
            run.set_lazy_values(lazy_values)
            if subgraphs or run.parent_sink is not None:
                run.child_sink = run.sink
            run.start(input)
            return run
        run = Run(self, config, **kwargs)
        run.static_interrupt = False
        run.set_lazy_values(lazy_values)
        if subgraphs or run.parent_sink is not None:
            run.child_sink = run.sink
        if isinstance(input, Command):
            if input.resume is not None and not self.checkpointer:
                raise RuntimeError("Cannot use Command(resume=...) without checkpointer")
            writes = self._command_writes(input)
            if not writes:
                raise EmptyInputError("Received empty Command input")
            run.apply([_InputTask(writes)])
        run.start(input)
        return run

    def _saver(self, config: dict) -> Any:
        """The checkpointer of this run: the graph's own, or one inherited from a parent graph."""
        cp = self.checkpointer
        if cp is False:
            return None
        if cp is None or cp is True:
            return config[CONF].get("__pregel_checkpointer")
        return cp

    @staticmethod
    def _modes(stream_mode: Any, default: str) -> tuple[list, bool]:
        if stream_mode is None:
            stream_mode = default
        if isinstance(stream_mode, str):
            return [stream_mode], True
        return list(dict.fromkeys(stream_mode)), False

    # --- sync API -----------------------------------------------------------------------

    def stream(
        self,
        input: Any,
        config: dict | None = None,
        *,
        context: Any = None,
        stream_mode: Any = None,
        print_mode: Any = (),
        output_keys: Any = None,
        interrupt_before: Any = None,
        interrupt_after: Any = None,
        durability: Any = None,
        subgraphs: bool = False,
        debug: bool | None = None,
        version: str = "v1",
        **kwargs: Any,
    ) -> Iterator[Any]:
        """Runs the graph, yielding stream chunks (S-1…S-11)."""
        modes, single = self._modes(stream_mode, self.stream_mode)
        fmt = _formatter(single, modes[0] if single else None, subgraphs, version, self)
        run = self._prepare(
            input,
            config,
            context=context,
            stream_mode=modes,
            output_keys=output_keys,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            durability=durability,
            default_output=self.stream_channels,
            subgraphs=subgraphs,
        )
        out = run.out
        holder: list = []
        try:
            while out:
                yield fmt(out.popleft())
            for _ in self._drive(run, holder):
                while out:
                    yield fmt(out.popleft())
        except BaseException:
            while out:
                yield fmt(out.popleft())
            raise
        finally:
            if holder:
                holder[0].shutdown(wait=False)
            run.close()
        self._recycle_channels(run)  # the chunks left hold values, not channels
        while out:
            yield fmt(out.popleft())

    def _drive(self, run: Run, holder: list) -> Iterator[None]:
        run_alone = _exec().run_alone
        # yields hand the chunks in `run.out` to stream(); none when there are none
        out = run.out
        while True:
            tasks = run.tick()
            if out:
                yield None
            if tasks is None:
                run.end_of_tasks()
                break
            if run_alone(run, tasks):
                if out:
                    yield None
            else:
                from lgembed.pregel._runner import run_tasks

                yield from run_tasks(run, tasks, holder)
            over = run.after_tasks()
            if out:
                yield None
            if over:
                break

    def invoke(
        self,
        input: Any,
        config: dict | None = None,
        *,
        context: Any = None,
        stream_mode: Any = "values",
        print_mode: Any = (),
        output_keys: Any = None,
        interrupt_before: Any = None,
        interrupt_after: Any = None,
        durability: Any = None,
        version: str = "v1",
        **kwargs: Any,
    ) -> Any:
        """Runs the graph to completion and returns its output (V-1…V-5)."""
        subgraphs = bool(kwargs.get("subgraphs"))
        if stream_mode != "values" or subgraphs:
            # V-2: LangGraph's invoke streams (extra keywords such as subgraphs=True go to
            # stream); its values come from the last values chunk of any namespace and its
            # interrupts from every namespace's updates
            return self._invoke_by_streaming(
                input,
                config,
                stream_mode,
                subgraphs,
                version,
                context=context,
                output_keys=output_keys if output_keys is not None else self.output_channels,
                interrupt_before=interrupt_before,
                interrupt_after=interrupt_after,
                durability=durability,
            )
        run = self._prepare(
            input,
            config,
            context=context,
            stream_mode=("values",),
            output_keys=output_keys,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            durability=durability,
            default_output=self.output_channels,
            lazy_values=True,
        )
        holder: list = []
        try:
            # `_drive` without yielding: values are read once at the end (V-2)
            _exec().run_to_end(run, holder)
        finally:
            if holder:
                holder[0].shutdown(wait=False)
            run.close()
        latest = run.read_output(run.output_keys) if run.values_emitted else None
        self._recycle_channels(run)
        return self._invoke_result(latest, run, version)

    def _invoke_by_streaming(
        self, input: Any, config: Any, stream_mode: Any, subgraphs: bool, version: str, **options: Any
    ) -> Any:
        fold = _InvokeFold(stream_mode, version)
        for chunk in self.stream(input, config, stream_mode=fold.modes, subgraphs=subgraphs, version=version, **options):
            fold.add(chunk)
        return fold.result()

    def _invoke_result(self, latest: Any, run: Run, version: str) -> Any:
        interrupts = run.interrupts
        if version == "v2":
            value = latest
            if isinstance(value, dict) and INTERRUPT in value:
                value = {k: v for k, v in value.items() if k != INTERRUPT}
            value = self._coerce_output(value)
            return GraphOutput(value=value, interrupts=tuple(interrupts))
        if interrupts:
            if isinstance(latest, dict):
                return {**latest, INTERRUPT: list(interrupts)}
            return {INTERRUPT: list(interrupts)}
        return latest

    def _coerce_output(self, value: Any) -> Any:
        schema = self.output_schema
        if value is None or not isinstance(value, dict) or schema is None:
            return value
        from dataclasses import is_dataclass

        from lgembed.graph._fields import is_pydantic_model_class

        if is_dataclass(schema) or is_pydantic_model_class(schema):
            return schema(**value)
        return value

    def batch(self, inputs: Sequence[Any], config: Any = None, *, return_exceptions: bool = False, **kwargs: Any) -> list:
        """`invoke` for each input, in parallel threads (like langchain-core's Runnable.batch)."""
        if not inputs:
            return []
        configs = config if isinstance(config, list) else [config] * len(inputs)

        def one(args: tuple) -> Any:
            inp, cfg = args
            try:
                return self.invoke(inp, cfg, **kwargs)
            except Exception as exc:
                if return_exceptions:
                    return exc
                raise

        if len(inputs) == 1:
            return [one((inputs[0], configs[0]))]
        from concurrent.futures import ThreadPoolExecutor

        max_workers = (configs[0] or {}).get("max_concurrency") if configs[0] else None
        with ThreadPoolExecutor(max_workers=max_workers) as ex:
            return list(ex.map(one, zip(inputs, configs)))

    # --- async API ----------------------------------------------------------------------

    async def astream(
        self,
        input: Any,
        config: dict | None = None,
        *,
        context: Any = None,
        stream_mode: Any = None,
        print_mode: Any = (),
        output_keys: Any = None,
        interrupt_before: Any = None,
        interrupt_after: Any = None,
        durability: Any = None,
        subgraphs: bool = False,
        debug: bool | None = None,
        version: str = "v1",
        **kwargs: Any,
    ) -> AsyncIterator[Any]:
        """Async twin of `stream`."""
        modes, single = self._modes(stream_mode, self.stream_mode)
        fmt = _formatter(single, modes[0] if single else None, subgraphs, version, self)
        run = self._prepare(
            input,
            config,
            context=context,
            stream_mode=modes,
            output_keys=output_keys,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            durability=durability,
            default_output=self.stream_channels,
            subgraphs=subgraphs,
        )
        out = run.out
        try:
            while out:
                yield fmt(out.popleft())
            async for _ in self._adrive(run):
                while out:
                    yield fmt(out.popleft())
        except BaseException:
            while out:
                yield fmt(out.popleft())
            raise
        finally:
            run.close()
        while out:
            yield fmt(out.popleft())

    async def _adrive(self, run: Run) -> AsyncIterator[None]:
        from lgembed.pregel._runner import arun_tasks

        while True:
            tasks = run.tick()
            yield None
            if tasks is None:
                run.end_of_tasks()
                break
            async for _ in arun_tasks(run, tasks):
                yield None
            over = run.after_tasks()
            yield None
            if over:
                break

    async def ainvoke(
        self,
        input: Any,
        config: dict | None = None,
        *,
        context: Any = None,
        stream_mode: Any = "values",
        print_mode: Any = (),
        output_keys: Any = None,
        interrupt_before: Any = None,
        interrupt_after: Any = None,
        durability: Any = None,
        version: str = "v1",
        **kwargs: Any,
    ) -> Any:
        """Async twin of `invoke`."""
        subgraphs = bool(kwargs.get("subgraphs"))
        if stream_mode != "values" or subgraphs:
            fold = _InvokeFold(stream_mode, version)
            async for chunk in self.astream(
                input,
                config,
                context=context,
                stream_mode=fold.modes,
                output_keys=output_keys if output_keys is not None else self.output_channels,
                interrupt_before=interrupt_before,
                interrupt_after=interrupt_after,
                durability=durability,
                subgraphs=subgraphs,
                version=version,
            ):
                fold.add(chunk)
            return fold.result()
        run = self._prepare(
            input,
            config,
            context=context,
            stream_mode=("values",),
            output_keys=output_keys,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            durability=durability,
            default_output=self.output_channels,
            lazy_values=True,
        )
        try:
            async for _ in self._adrive(run):
                pass
        finally:
            run.close()
        latest = run.read_output(run.output_keys) if run.values_emitted else None
        self._recycle_channels(run)
        return self._invoke_result(latest, run, version)

    async def abatch(self, inputs: Sequence[Any], config: Any = None, *, return_exceptions: bool = False, **kwargs: Any) -> list:
        """`ainvoke` for each input, concurrently."""
        import asyncio

        configs = config if isinstance(config, list) else [config] * len(inputs)
        coros = [self.ainvoke(i, c, **kwargs) for i, c in zip(inputs, configs)]
        return list(await asyncio.gather(*coros, return_exceptions=return_exceptions))

    def batch_as_completed(
        self, inputs: Sequence[Any], config: Any = None, *, return_exceptions: bool = False, **kwargs: Any
    ) -> Iterator[tuple[int, Any]]:
        """`(index, output)` of `invoke` for each input, in completion order, from
        parallel threads (like langchain-core's Runnable.batch_as_completed)."""
        if not inputs:
            return
        configs = config if isinstance(config, list) else [config] * len(inputs)

        def one(index: int) -> tuple[int, Any]:
            try:
                return index, self.invoke(inputs[index], configs[index], **kwargs)
            except Exception as exc:
                if return_exceptions:
                    return index, exc
                raise

        if len(inputs) == 1:
            yield one(0)
            return
        from concurrent.futures import ThreadPoolExecutor, as_completed

        max_workers = (configs[0] or {}).get("max_concurrency") if configs[0] else None
        with ThreadPoolExecutor(max_workers=max_workers) as ex:
            futures = [ex.submit(one, i) for i in range(len(inputs))]
            try:
                for future in as_completed(futures):
                    yield future.result()
            finally:
                for future in futures:
                    future.cancel()

    async def abatch_as_completed(
        self, inputs: Sequence[Any], config: Any = None, *, return_exceptions: bool = False, **kwargs: Any
    ) -> AsyncIterator[tuple[int, Any]]:
        """Async twin of `batch_as_completed`: `ainvoke` for each input, concurrently."""
        import asyncio

        if not inputs:
            return
        configs = config if isinstance(config, list) else [config] * len(inputs)

        async def one(index: int) -> tuple[int, Any]:
            try:
                return index, await self.ainvoke(inputs[index], configs[index], **kwargs)
            except Exception as exc:
                if return_exceptions:
                    return index, exc
                raise

        tasks = [asyncio.ensure_future(one(i)) for i in range(len(inputs))]
        try:
            for next_done in asyncio.as_completed(tasks):
                yield await next_done
        finally:
            for task in tasks:
                task.cancel()

    # --- state ---------------------------------------------------------------------------

    def get_state(self, config: dict, *, subgraphs: bool = False) -> Any:
        """The thread's current state (or the addressed checkpoint's) as a StateSnapshot (P-20…P-22)."""
        from lgembed.pregel._state import get_state

        return get_state(self, config, subgraphs=subgraphs)

    def get_state_history(self, config: dict, *, filter: dict | None = None, before: dict | None = None, limit: int | None = None) -> Iterator[Any]:
        """Snapshots of the thread's checkpoints, newest first (P-24)."""
        from lgembed.pregel._state import get_state_history

        return get_state_history(self, config, filter=filter, before=before, limit=limit)

    def update_state(self, config: dict, values: Any, as_node: str | None = None, task_id: str | None = None) -> dict:
        """Applies `values` as if `as_node` had returned them, in a new checkpoint (P-30…P-33)."""
        from lgembed.pregel._state import bulk_update_state
        from lgembed.types import StateUpdate

        return bulk_update_state(self, config, [[StateUpdate(values, as_node, task_id)]])

    def bulk_update_state(self, config: dict, supersteps: Sequence[Sequence[Any]]) -> dict:
        """Several update supersteps, one checkpoint each (P-34)."""
        from lgembed.pregel._state import bulk_update_state

        return bulk_update_state(self, config, supersteps)

    async def aget_state(self, config: dict, *, subgraphs: bool = False) -> Any:
        return self.get_state(config, subgraphs=subgraphs)

    async def aget_state_history(self, config: dict, *, filter: dict | None = None, before: dict | None = None, limit: int | None = None) -> AsyncIterator[Any]:
        for snap in self.get_state_history(config, filter=filter, before=before, limit=limit):
            yield snap

    async def aupdate_state(self, config: dict, values: Any, as_node: str | None = None, task_id: str | None = None) -> dict:
        return self.update_state(config, values, as_node, task_id)

    async def abulk_update_state(self, config: dict, supersteps: Sequence[Sequence[Any]]) -> dict:
        return self.bulk_update_state(config, supersteps)

    # --- introspection ----------------------------------------------------------------------

    def get_subgraphs(self, *, namespace: str | None = None, recurse: bool = False) -> Iterator[tuple[str, Any]]:
        """(name, graph) of the nodes that are compiled graphs; `namespace` selects one
        ("a|b" with `recurse`), `recurse` descends into them (G-5)."""
        from lgembed.pregel._state import node_subgraph

        for name, node in self.nodes.items():
            if namespace is not None and namespace != name and not namespace.startswith(name + "|"):
                continue
            # a subgraph node, or a graph the node's function calls; LangGraph does not
            # count graphs compiled with checkpointer=False
            graph = node_subgraph(node)
            if graph is None:
                continue
            if name == namespace:
                yield name, graph
                return
            if namespace is None:
                yield name, graph
            if recurse and isinstance(graph, Pregel):
                inner = namespace[len(name) + 1 :] if namespace is not None else None
                for sub_name, sub in graph.get_subgraphs(namespace=inner, recurse=recurse):
                    yield f"{name}|{sub_name}", sub

    async def aget_subgraphs(self, *, namespace: str | None = None, recurse: bool = False) -> AsyncIterator[tuple[str, Any]]:
        for item in self.get_subgraphs(namespace=namespace, recurse=recurse):
            yield item

    def get_input_jsonschema(self, config: dict | None = None) -> dict[str, Any]:
        """JSON schema of the graph's input, as LangGraph derives it from the input schema."""
        from lgembed.graph._jsonschema import input_jsonschema

        return input_jsonschema(self, config)

    def get_output_jsonschema(self, config: dict | None = None) -> dict[str, Any]:
        """JSON schema of the graph's output, as LangGraph derives it from the output schema."""
        from lgembed.graph._jsonschema import output_jsonschema

        return output_jsonschema(self, config)

    def get_context_jsonschema(self) -> dict[str, Any] | None:
        """JSON schema of the context schema, or None without one."""
        from lgembed.graph._jsonschema import context_jsonschema

        return context_jsonschema(self)

    # --- drawing ----------------------------------------------------------------------------

    def clear_cache(self, nodes: Sequence[str] | None = None) -> None:
        """Drops the cached writes of `nodes` (all nodes by default) from `compile(cache=...)`.

        Raises:
            ValueError: when the graph has no cache.
        """
        from lgembed.pregel._cache import clear_cache  # hook: node caching

        clear_cache(self, nodes)

    async def aclear_cache(self, nodes: Sequence[str] | None = None) -> None:
        """Async `clear_cache`.

        Raises:
            ValueError: when the graph has no cache.
        """
        from lgembed.pregel._cache import aclear_cache  # hook: node caching

        await aclear_cache(self, nodes)

    def get_graph(self, config: Any = None, *, xray: Any = False) -> Any:
        raise NotImplementedError("get_graph() is available on graphs compiled from a StateGraph")


class _InvokeFold:
    """What invoke/ainvoke return when they stream (V-2): LangGraph's folding of the
    chunks of `stream` (values from the last values chunk of any namespace, interrupts
    from every namespace's updates; v2 from the values parts; other modes: the list)."""

    __slots__ = ("mode", "version", "modes", "latest", "interrupts", "chunks")

    def __init__(self, stream_mode: Any, version: str) -> None:
        self.mode = stream_mode
        self.version = version
        if stream_mode != "values":
            self.modes = stream_mode
        else:
            self.modes = "values" if version == "v2" else ["updates", "values"]
        self.latest: Any = None
        self.interrupts: list = []
        self.chunks: list = []

    def add(self, chunk: Any) -> None:
        if self.mode != "values":
            self.chunks.append(chunk)
        elif self.version == "v2":
            self.latest = chunk["data"]
            self.interrupts.extend(chunk.get("interrupts", ()))
        else:
            mode, payload = chunk if len(chunk) == 2 else chunk[1:]
            if mode == "updates" and isinstance(payload, dict) and payload.get(INTERRUPT) is not None:
                self.interrupts.extend(payload[INTERRUPT])
            elif mode == "values":
                self.latest = payload

    def result(self) -> Any:
        if self.mode != "values":
            return self.chunks
        latest, interrupts = self.latest, self.interrupts
        if self.version == "v2":
            return GraphOutput(value=latest, interrupts=tuple(interrupts))
        if interrupts:
            return {**latest, INTERRUPT: interrupts} if isinstance(latest, dict) else {INTERRUPT: interrupts}
        return latest


def _topic_class() -> Any:
    from lgembed._speedups import Topic

    return Topic


def _untracked_class() -> Any:
    from lgembed._speedups import UntrackedValue

    return UntrackedValue


def _formatter(single: bool, mode: Any, subgraphs: bool, version: str, graph: Pregel) -> Any:
    """Chunk shape for the requested stream options (S-2)."""
    if version == "v2":

        output_mapper = _v2_mapper(graph.output_channels, graph.output_schema)
        state_mapper = _v2_mapper(graph.stream_channels, graph.state_schema)

        def fmt_v2(item: tuple) -> Any:
            ns, m, payload = item
            if m == "values":
                interrupts: tuple = ()
                if isinstance(payload, dict):
                    if INTERRUPT in payload:
                        payload = dict(payload)
                        interrupts = payload.pop(INTERRUPT)
                    if output_mapper is not None:
                        payload = output_mapper(payload)
                return {"type": m, "ns": ns, "data": payload, "interrupts": interrupts}
            if state_mapper is not None and m in ("checkpoints", "debug"):
                _coerce_checkpoint_values(payload, state_mapper)
            return {"type": m, "ns": ns, "data": payload}

        return fmt_v2
    if subgraphs:
        if single:
            return lambda item: (item[0], item[2])
        return lambda item: item
    if single:
        return lambda item: item[2]
    return lambda item: (item[1], item[2])


def _v2_mapper(keys: Any, schema: Any) -> Any:
    """LangGraph's v2 stream coercion: a pydantic/dataclass schema builds the chunk's
    data (S-2, O-12); None for other schemas and for a root-channel graph."""
    if schema is None or keys == "__root__" or keys == ["__root__"]:
        return None
    from dataclasses import is_dataclass

    from lgembed.graph._fields import is_pydantic_model_class

    if isinstance(schema, type) and (is_dataclass(schema) or is_pydantic_model_class(schema)):
        return lambda values: schema(**values)
    return None


def _coerce_checkpoint_values(payload: Any, mapper: Any) -> None:
    """Coerces the `values` of a checkpoint (or debug checkpoint) payload in place,
    except the first checkpoint of a run (its next holds `__start__`), as LangGraph."""
    if not isinstance(payload, dict):
        return
    if payload.get("type") == "checkpoint" and isinstance(payload.get("payload"), dict):
        payload = payload["payload"]
    if isinstance(payload.get("values"), dict) and "__start__" not in payload.get("next", ()):
        payload["values"] = mapper(payload["values"])


_RUN_MODULES: dict = {}
# name -> module, for the modules runs use that `import lgembed.graph` does not import
# (lgembed.pregel._exec added about 1 ms to a graph's import and compile): each is
# imported by the first run that needs it and kept: a function-level import runs the
# import machinery on every call (about 8,000 instructions for a module already loaded)


def _run_module(name: str) -> Any:
    module = _RUN_MODULES.get(name)
    if module is None:
        __import__(name)
        module = _RUN_MODULES[name] = _sys.modules[name]
    return module


def _exec() -> Any:
    return _run_module("lgembed.pregel._exec")
