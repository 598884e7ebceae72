"""Pregel: a compiled graph of nodes and channels, and LangGraph's public API to run it (§5, §7, §8).

`Pregel` holds the compiled layout (nodes, channel prototypes, trigger index) and
exposes LangGraph's run API: invoke / stream / batch and their async twins, the state
API (get_state, update_state, history) and introspection. The logic behind them lives
along these seams:
- run setup (configs, nesting, checkpointer, Command input): `_setup`;
- the step driver (one step loop for invoke, stream and their async forms, the
  worker pool): `_driver`, over `_runner` (a step's tasks) and `_exec` (one task);
- one run's state and steps: `_loop.Run` (`_persist.CheckpointedRun` with a saver);
- stream chunk shapes and invoke's result: `_chunks`;
- the state API: `_state`; which nodes run subgraphs: `_subgraphs`.

Why over 600 lines: LangGraph's public run and state methods each take a dozen
keyword arguments, in sync and async forms.
"""

from __future__ import annotations

from typing import Any, AsyncIterator, Iterator, Sequence

from lgembed._channels import Topic, UntrackedValue
from lgembed._constants import RESUME, START, TASKS
from lgembed._typing import MISSING
from lgembed.errors import InvalidUpdateError
from lgembed.pregel._chunks import InvokeFold, formatter, invoke_result
from lgembed.pregel._driver import adrive, drive
from lgembed.pregel._loop import Run
from lgembed.pregel._setup import ensure_valid_checkpointer, prepare, stream_modes
from lgembed.types import Command, Send

__all__ = ("Pregel", "ensure_valid_checkpointer")

_RECYCLED_MAX = 2
# channel sets a graph keeps for its next runs (runs at the same time in other threads
# make their own)


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
        untracked_cls = UntrackedValue
        self.untracked = frozenset(k for k, ch in self._specs.items() if isinstance(ch, untracked_cls))
        self.finishing = [k for k, ch in self._specs.items() if getattr(ch, "_lg_finishes", True)]
        # what a finished run's channels need before another run uses them
        # (_recycle_channels): exact LastValue / EphemeralValue get their value slot
        # emptied, an exact Topic is made anew if the run wrote it, any other is made anew
        topic_cls = Topic
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
        modes, single = stream_modes(stream_mode, self.stream_mode)
        fmt = formatter(single, modes[0] if single else None, subgraphs, version, self)
        run = prepare(
            self,
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
            for _ in drive(run, False):
                while out:
                    yield fmt(out.popleft())
        except BaseException:
            while out:
                yield fmt(out.popleft())
            raise
        finally:
            run.close()
        self._recycle_channels(run)  # the chunks left hold values, not channels
        while out:
            yield fmt(out.popleft())

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
        run = prepare(
            self,
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
            for _ in drive(run, True):  # no chunks: values are read once at the end (V-2)
                pass
        finally:
            run.close()
        latest = run.read_output(run.output_keys) if run.values_emitted else None
        self._recycle_channels(run)
        return invoke_result(self, latest, run, version)

    def _invoke_by_streaming(
        self, input: Any, config: Any, stream_mode: Any, subgraphs: bool, version: str, **options: Any
    ) -> Any:
        fold = InvokeFold(stream_mode, version)
        for chunk in self.stream(input, config, stream_mode=fold.modes, subgraphs=subgraphs, version=version, **options):
            fold.add(chunk)
        return fold.result()

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
        modes, single = stream_modes(stream_mode, self.stream_mode)
        fmt = formatter(single, modes[0] if single else None, subgraphs, version, self)
        run = prepare(
            self,
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
            async for _ in adrive(run):
                while out:
                    yield fmt(out.popleft())
        except BaseException:
            while out:
                yield fmt(out.popleft())
            raise
        finally:
            run.close()
        self._recycle_channels(run)  # as stream does
        while out:
            yield fmt(out.popleft())

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
            fold = InvokeFold(stream_mode, version)
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
        run = prepare(
            self,
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
            async for _ in adrive(run):
                pass
        finally:
            run.close()
        latest = run.read_output(run.output_keys) if run.values_emitted else None
        self._recycle_channels(run)
        return invoke_result(self, latest, run, version)

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
        from lgembed.pregel._subgraphs import node_subgraph

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
        raise NotImplementedError("get_input_jsonschema() is available on graphs compiled from a StateGraph")

    def get_output_jsonschema(self, config: dict | None = None) -> dict[str, Any]:
        raise NotImplementedError("get_output_jsonschema() is available on graphs compiled from a StateGraph")

    def get_context_jsonschema(self) -> dict[str, Any] | None:
        raise NotImplementedError("get_context_jsonschema() is available on graphs compiled from a StateGraph")

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
