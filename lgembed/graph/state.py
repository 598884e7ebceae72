"""StateGraph: the builder API, its validation, and compilation to a Pregel graph (§1, §3).

Why this file is long-ish: it holds the whole builder surface LangGraph exposes
(add_node's options, edges, branches, sequences, entry/finish points, compile-time
validation) in one place, as LangGraph's users know it.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from inspect import isfunction, ismethod, signature
from typing import Any, Literal, Sequence, Union, get_args, get_origin, get_type_hints

from lgembed._constants import END, NS_END, NS_SEP, RESERVED, START, TAG_HIDDEN, TASKS
from lgembed._channels import (
    BinaryOperatorAggregate,
    EphemeralValue,
    LastValue,
    LastValueAfterFinish,
    NamedBarrierValue,
    NamedBarrierValueAfterFinish,
    Topic,
    UntrackedValue,
)
from lgembed._schema import pick_mapper, schema_value_types
from lgembed.graph._fields import get_channels
from lgembed.managed import is_managed_value
from lgembed.pregel._branch import BranchSpec, CompiledBranch, branch_name
from lgembed.pregel._call import NodeCallable, callable_name
from lgembed.pregel._node import PregelNode
from lgembed.pregel.main import Pregel
from lgembed.types import Command, RetryPolicy, TimeoutPolicy
from lgembed.warnings import LangGraphDeprecatedSinceV05, LangGraphDeprecatedSinceV10

__all__ = ("StateGraph", "CompiledStateGraph")


def _log_warning(message: str) -> None:
    """Logs `message` on the "lgembed.graph" logger; logging is imported on first use,
    not by `import lgembed.graph` (it adds about 4 ms to a graph's import)."""
    import logging

    logging.getLogger("lgembed.graph").warning(message)


_DEFAULT_ERROR_HANDLER_NODE = "__default_error_handler__"


class StateNodeSpec:
    """A node as declared with `add_node` (before compilation)."""

    __slots__ = (
        "runnable",
        "metadata",
        "input_schema",
        "retry_policy",
        "cache_policy",
        "ends",
        "defer",
        "timeout",
        "error_handler_node",
        "is_error_handler",
    )

    def __init__(
        self,
        runnable: Any,
        metadata: dict | None,
        *,
        input_schema: Any,
        retry_policy: Any = None,
        cache_policy: Any = None,
        ends: Any = (),
        defer: bool = False,
        timeout: Any = None,
        error_handler_node: str | None = None,
        is_error_handler: bool = False,
    ) -> None:
        self.runnable = runnable
        self.metadata = metadata
        self.input_schema = input_schema
        self.retry_policy = retry_policy
        self.cache_policy = cache_policy
        self.ends = ends
        self.defer = defer
        self.timeout = timeout
        self.error_handler_node = error_handler_node
        self.is_error_handler = is_error_handler


class _NodeDefaults:
    __slots__ = ("retry_policy", "cache_policy", "error_handler", "timeout")

    def __init__(self) -> None:
        self.retry_policy = None
        self.cache_policy = None
        self.error_handler = None
        self.timeout = None


def _warn_invalid_state_schema(schema: Any) -> None:
    if isinstance(schema, type):
        return
    if getattr(schema, "__args__", None):
        return
    warnings.warn(
        f"Invalid state_schema: {schema}. Expected a type or Annotated[type, reducer]. "
        "Please provide a valid schema to ensure correct updates.\n"
        " See: https://langchain-ai.github.io/langgraph/reference/graphs/#stategraph"
    )


def _node_name(node: Any) -> str:
    if isinstance(node, tuple) and len(node) == 2:
        return node[0]
    return callable_name(node)


def _infer_from_hints(action: Any, want_input: bool) -> tuple[Any, tuple]:
    """(input schema from the first parameter's annotation, ends from `-> Command[Literal[...]]`) (B-13, B-14)."""
    inferred = None
    ends: tuple = ()
    try:
        call = getattr(action, "__call__", None)
        if isfunction(action) or ismethod(action) or ismethod(call):
            hints = get_type_hints(call) or get_type_hints(action)
            if hints:
                if want_input:
                    first = next(iter(signature(action).parameters.keys()))
                    hint = hints.get(first)
                    if hint is not None and isinstance(hint, type) and get_type_hints(hint):
                        inferred = hint
                rtn = hints.get("return")
                if rtn is not None:
                    origin = get_origin(rtn)
                    if origin is Union:
                        for arg in get_args(rtn):
                            if get_origin(arg) is Command:
                                rtn, origin = arg, Command
                                break
                    if origin is Command:
                        rargs = get_args(rtn)
                        if rargs and get_origin(rargs[0]) is Literal:
                            ends = get_args(rargs[0])
    except (NameError, TypeError, StopIteration):
        pass
    return inferred, ends


class StateGraph:
    """A graph whose nodes read and write a shared state described by a schema.

    Args:
        state_schema: TypedDict, dataclass, pydantic model or annotated class; each
            field becomes a channel (`Annotated[T, reducer]` for reducers). A type
            without annotations becomes a single `__root__` value.
        context_schema: schema of the run-scoped `context` (`runtime.context`).
        input_schema: keys accepted as graph input (default: state_schema).
        output_schema: keys returned by `invoke` (default: state_schema).
    """

    def __init__(
        self,
        state_schema: Any,
        context_schema: Any = None,
        *,
        input_schema: Any = None,
        output_schema: Any = None,
        **kwargs: Any,
    ) -> None:
        if "config_schema" in kwargs:
            warnings.warn(
                LangGraphDeprecatedSinceV10(
                    "`config_schema` is deprecated and will be removed. Please use `context_schema` instead."
                ),
                stacklevel=2,
            )
            if context_schema is None:
                context_schema = kwargs["config_schema"]
        if "input" in kwargs:
            warnings.warn(
                LangGraphDeprecatedSinceV05(
                    "`input` is deprecated and will be removed. Please use `input_schema` instead."
                ),
                stacklevel=2,
            )
            if input_schema is None:
                input_schema = kwargs["input"]
        if "output" in kwargs:
            warnings.warn(
                LangGraphDeprecatedSinceV05(
                    "`output` is deprecated and will be removed. Please use `output_schema` instead."
                ),
                stacklevel=2,
            )
            if output_schema is None:
                output_schema = kwargs["output"]
        self.nodes: dict[str, StateNodeSpec] = {}
        self.edges: set[tuple[str, str]] = set()
        self.branches: defaultdict[str, dict[str, BranchSpec]] = defaultdict(dict)
        self.schemas: dict[Any, dict[str, Any]] = {}
        self.channels: dict[str, Any] = {}
        self.managed: dict[str, Any] = {}
        self.compiled = False
        self.waiting_edges: set[tuple[tuple[str, ...], str]] = set()
        self.state_schema = state_schema
        self.input_schema = input_schema or state_schema
        self.output_schema = output_schema or state_schema
        self.context_schema = context_schema
        self._node_defaults = _NodeDefaults()
        self._add_schema(self.state_schema)
        self._add_schema(self.input_schema, allow_managed=False)
        self._add_schema(self.output_schema, allow_managed=False)

    # --- schemas -----------------------------------------------------------------------

    def _add_schema(self, schema: Any, /, allow_managed: bool = True) -> None:
        if schema in self.schemas:
            return
        _warn_invalid_state_schema(schema)
        channels, managed, _hints = get_channels(schema)
        if managed and not allow_managed:
            names = ", ".join(managed)
            schema_name = getattr(schema, "__name__", "")
            raise ValueError(
                f"Invalid managed channels detected in {schema_name}: {names}."
                " Managed channels are not permitted in Input/Output schema."
            )
        self.schemas[schema] = {**channels, **managed}
        for key, channel in channels.items():
            if key in self.channels:
                if self.channels[key] != channel and not isinstance(channel, LastValue):
                    raise ValueError(f"Channel '{key}' already exists with a different type")
            else:
                self.channels[key] = channel
        for key, value in managed.items():
            if key in self.managed:
                if self.managed[key] != value:
                    raise ValueError(f"Managed value '{key}' already exists with a different type")
            else:
                self.managed[key] = value

    @property
    def _all_edges(self) -> set[tuple[str, str]]:
        return self.edges | {(start, end) for starts, end in self.waiting_edges for start in starts}

    # --- nodes -------------------------------------------------------------------------

    def set_node_defaults(
        self,
        *,
        retry_policy: Any = None,
        cache_policy: Any = None,
        error_handler: Any = None,
        timeout: Any = None,
    ) -> StateGraph:
        """Default retry/cache/error-handler/timeout policies for nodes lacking their own."""
        d = self._node_defaults
        if retry_policy is not None:
            d.retry_policy = retry_policy
        if cache_policy is not None:
            d.cache_policy = cache_policy
        if error_handler is not None:
            d.error_handler = error_handler
        if timeout is not None:
            d.timeout = TimeoutPolicy.coerce(timeout)
        return self

    def add_node(
        self,
        node: Any,
        action: Any = None,
        *,
        defer: bool = False,
        metadata: dict | None = None,
        input_schema: Any = None,
        retry_policy: RetryPolicy | Sequence[RetryPolicy] | None = None,
        cache_policy: Any = None,
        error_handler: Any = None,
        destinations: dict[str, str] | tuple[str, ...] | None = None,
        timeout: Any = None,
        trace_policy: Any = None,
        **kwargs: Any,
    ) -> StateGraph:
        """Adds a node (B-10…B-18). Returns the builder.

        Raises:
            ValueError: duplicate or reserved name, reserved characters.
        """
        if "retry" in kwargs:
            warnings.warn(
                LangGraphDeprecatedSinceV05(
                    "`retry` is deprecated and will be removed. Please use `retry_policy` instead."
                ),
            )
            if retry_policy is None:
                retry_policy = kwargs["retry"]
        if "input" in kwargs:
            warnings.warn(
                LangGraphDeprecatedSinceV05(
                    "`input` is deprecated and will be removed. Please use `input_schema` instead."
                ),
            )
            if input_schema is None:
                input_schema = kwargs["input"]
        timeout = TimeoutPolicy.coerce(timeout)
        if not isinstance(node, str):
            action = node
            node = callable_name(action)
            if node is None:
                raise ValueError("Node name must be provided if action is not a function")
        if self.compiled:
            _log_warning(
                "Adding a node to a graph that has already been compiled. This will "
                "not be reflected in the compiled graph."
            )
        if action is None:
            raise RuntimeError
        if node in self.nodes:
            raise ValueError(f"Node `{node}` already present.")
        if node == END or node == START:
            raise ValueError(f"Node `{node}` is reserved.")
        for character in (NS_SEP, NS_END):
            if character in node:
                raise ValueError(
                    f"'{character}' is a reserved character and is not allowed in the node names."
                )
        inferred, ends = _infer_from_hints(action, input_schema is None)
        if destinations is not None:
            ends = destinations
        resolved_input = input_schema or inferred or self.state_schema
        handler_name = None
        if error_handler is not None:
            handler_name = f"__error_handler__{node}"
            if handler_name in self.nodes:
                raise ValueError(f"Auto-generated error handler node `{handler_name}` already exists.")
            self.nodes[handler_name] = StateNodeSpec(
                error_handler, None, input_schema=resolved_input, is_error_handler=True
            )
        self.nodes[node] = StateNodeSpec(
            action,
            metadata,
            input_schema=resolved_input,
            retry_policy=retry_policy,
            cache_policy=cache_policy,
            ends=ends,
            defer=defer,
            timeout=timeout,
            error_handler_node=handler_name,
        )
        if input_schema or inferred:
            self._add_schema(input_schema or inferred)
        return self

    # --- edges -------------------------------------------------------------------------

    def add_edge(self, start_key: str | list[str], end_key: str) -> StateGraph:
        """Adds an edge, or a waiting edge (join) when `start_key` is a list (B-20, B-21)."""
        if self.compiled:
            _log_warning(
                "Adding an edge to a graph that has already been compiled. This will "
                "not be reflected in the compiled graph."
            )
        if isinstance(start_key, str):
            if start_key == END:
                raise ValueError("END cannot be a start node")
            if end_key == START:
                raise ValueError("START cannot be an end node")
            self.edges.add((start_key, end_key))
            return self
        for start in start_key:
            if start == END:
                raise ValueError("END cannot be a start node")
            if start not in self.nodes:
                raise ValueError(f"Need to add_node `{start}` first")
        if end_key == START:
            raise ValueError("START cannot be an end node")
        if end_key != END and end_key not in self.nodes:
            raise ValueError(f"Need to add_node `{end_key}` first")
        self.waiting_edges.add((tuple(start_key), end_key))
        return self

    def add_conditional_edges(self, source: str, path: Any, path_map: Any = None) -> StateGraph:
        """Adds a router after `source` (B-22). `path_map`: dict, list or None."""
        if self.compiled:
            _log_warning(
                "Adding an edge to a graph that has already been compiled. This will "
                "not be reflected in the compiled graph."
            )
        raw_name = branch_name(path)
        name = raw_name or "condition"
        if name in self.branches[source]:
            raise ValueError(f"Branch with name `{raw_name}` already exists for node `{source}`")
        self.branches[source][name] = BranchSpec.from_path(path, path_map, True)
        schema = self.branches[source][name].input_schema
        if schema:
            self._add_schema(schema)
        return self

    def add_sequence(self, nodes: Sequence[Any]) -> StateGraph:
        """Adds nodes chained by edges in the given order (B-23); no edge from START."""
        if len(nodes) < 1:
            raise ValueError("Sequence requires at least one node.")
        previous = None
        for node in nodes:
            if isinstance(node, tuple) and len(node) == 2:
                name, node = node
            else:
                name = _node_name(node)
            if name in self.nodes:
                raise ValueError(
                    f"Node names must be unique: node with the name '{name}' already exists. "
                    "If you need to use two different runnables/callables with the same name "
                    "(for example, using `lambda`), please provide them as tuples (name, runnable/callable)."
                )
            self.add_node(name, node)
            if previous is not None:
                self.add_edge(previous, name)
            previous = name
        return self

    def set_entry_point(self, key: str) -> StateGraph:
        return self.add_edge(START, key)

    def set_conditional_entry_point(self, path: Any, path_map: Any = None) -> StateGraph:
        return self.add_conditional_edges(START, path, path_map)

    def set_finish_point(self, key: str) -> StateGraph:
        return self.add_edge(key, END)

    # --- compile -----------------------------------------------------------------------

    def validate(self, interrupt: Sequence[str] | None = None) -> StateGraph:
        """Checks sources, entry point, targets and interrupt names, in LangGraph's order (B-31)."""
        sources = {src for src, _ in self._all_edges}
        sources.update(self.branches)
        for name, spec in self.nodes.items():
            if spec.ends:
                sources.add(name)
        for source in sources:
            if source not in self.nodes and source != START:
                raise ValueError(f"Found edge starting at unknown node '{source}'")
        if START not in sources:
            raise ValueError(
                "Graph must have an entrypoint: add at least one edge from START to another node"
            )
        targets = {end for _, end in self._all_edges}
        for start, branches in self.branches.items():
            for cond, branch in branches.items():
                if branch.ends is not None:
                    for end in branch.ends.values():
                        if end not in self.nodes and end != END:
                            raise ValueError(
                                f"At '{start}' node, '{cond}' branch found unknown target '{end}'"
                            )
                        targets.add(end)
                else:
                    targets.add(END)
                    targets.update(n for n in self.nodes if n != start)
        for name, spec in self.nodes.items():
            if spec.ends:
                targets.update(spec.ends)
        for target in targets:
            if target not in self.nodes and target != END:
                raise ValueError(f"Found edge ending at unknown node `{target}`")
        if interrupt:
            for node in interrupt:
                if node not in self.nodes:
                    raise ValueError(f"Interrupt node `{node}` not found")
        self.compiled = True
        return self

    def compile(
        self,
        checkpointer: Any = None,
        *,
        cache: Any = None,
        store: Any = None,
        interrupt_before: Any = None,
        interrupt_after: Any = None,
        debug: bool = False,
        name: str | None = None,
        transformers: Any = None,
    ) -> CompiledStateGraph:
        """Validates the graph and compiles it to a runnable Pregel graph (B-30, B-31)."""
        from lgembed.pregel.main import ensure_valid_checkpointer

        checkpointer = ensure_valid_checkpointer(checkpointer)
        interrupt_before = interrupt_before or []
        interrupt_after = interrupt_after or []
        # LangGraph's precedence: with interrupt_after="*" no name is checked here
        self.validate(
            interrupt=(
                (interrupt_before if interrupt_before != "*" else []) + interrupt_after
                if interrupt_after != "*"
                else []
            )
        )
        if TASKS in self.channels:
            raise ValueError(f"Channel '{TASKS}' is reserved and cannot be used in the graph.")
        if checkpointer not in (None, True, False) and hasattr(checkpointer, "with_allowlist"):
            schemas = [self.state_schema, self.input_schema, self.output_schema, self.context_schema]
            schemas.extend(spec.input_schema for spec in self.nodes.values())
            schemas.extend(b.input_schema for bs in self.branches.values() for b in bs.values())
            types = schema_value_types(schemas)
            if types:
                checkpointer = checkpointer.with_allowlist(types)
        return CompiledStateGraph(
            self,
            checkpointer=checkpointer,
            cache=cache,
            store=store,
            interrupt_before=interrupt_before,
            interrupt_after=interrupt_after,
            debug=debug,
            name=name or "LangGraph",
        )


def _validate_timeout(name: str, node: PregelNode) -> None:
    """B-17: timeouts need an async node; idle timeouts are not implemented in lgembed."""
    policy = node.timeout
    if policy is None:
        return
    proc = node.proc
    if proc is None or not (proc.is_async or (proc.is_runnable and hasattr(proc.func, "ainvoke"))):
        from lgembed.pregel._runner import sync_timeout_unsupported

        raise sync_timeout_unsupported(name)
    if policy.idle_timeout is not None:
        raise NotImplementedError(
            f"Compiling node {name!r}: idle_timeout is not supported by lgembed "
            f"(got idle_timeout={policy.idle_timeout}). Use run_timeout (a number of seconds) instead."
        )


class CompiledStateGraph(Pregel):
    """A compiled StateGraph: the builder's nodes, edges and branches as Pregel nodes and channels."""

    def __init__(self, builder: StateGraph, **kwargs: Any) -> None:
        self.builder = builder
        channels: dict[str, Any] = dict(builder.channels)
        only_root = len(builder.channels) == 1 and "__root__" in builder.channels
        output_keys = (
            "__root__"
            if only_root
            else [k for k, v in builder.schemas[builder.output_schema].items() if not is_managed_value(v)]
        )
        stream_keys = "__root__" if only_root else [k for k in builder.channels]
        channels[START] = EphemeralValue(builder.input_schema)
        mappers: dict[Any, Any] = {}

        def mapper_for(schema: Any, keys: list) -> Any:
            if schema not in mappers:
                mappers[schema] = pick_mapper(keys, schema)
            return mappers[schema]

        defaults = builder._node_defaults
        specs = dict(builder.nodes)
        default_handler = None
        if defaults.error_handler is not None:
            if _DEFAULT_ERROR_HANDLER_NODE in specs:
                raise ValueError(
                    f"Auto-generated default error handler node `{_DEFAULT_ERROR_HANDLER_NODE}` already exists."
                )
            default_handler = _DEFAULT_ERROR_HANDLER_NODE
            specs[default_handler] = StateNodeSpec(
                defaults.error_handler, None, input_schema=builder.state_schema, is_error_handler=True
            )
            # B-18: LangGraph adds the handler to the builder itself, so compiling the
            # same builder again raises the error above
            builder.nodes[default_handler] = specs[default_handler]

        nodes: dict[str, PregelNode] = {}
        input_keys = [k for k, v in builder.schemas[builder.input_schema].items() if not is_managed_value(v)]
        start = PregelNode(START, triggers=[START], reads=START, proc=None, output_keys=input_keys)
        start.hidden = True
        start.tags = [TAG_HIDDEN]
        nodes[START] = start
        all_state_keys = list(builder.channels) + list(builder.managed)
        for key, spec in specs.items():
            schema_keys = list(builder.schemas[spec.input_schema])
            single = schema_keys == ["__root__"]
            node = PregelNode(
                key,
                triggers=[f"branch:to:{key}"],
                reads="__root__" if single else [k for k in schema_keys if k not in builder.managed],
                proc=NodeCallable(spec.runnable, key),
                output_keys=all_state_keys,
            )
            if not single:
                node.managed = tuple((k, builder.managed[k]) for k in schema_keys if k in builder.managed)
            node.mapper = mapper_for(spec.input_schema, schema_keys)
            retry = spec.retry_policy if spec.retry_policy is not None else defaults.retry_policy
            node.retry_policy = (
                () if retry is None else (retry,) if isinstance(retry, RetryPolicy) else tuple(retry)
            )
            if not spec.is_error_handler:
                node.cache_policy = spec.cache_policy or defaults.cache_policy
                node.error_handler = spec.error_handler_node or default_handler
            node.is_error_handler = spec.is_error_handler
            node.timeout = spec.timeout or defaults.timeout
            node.metadata = spec.metadata
            node.defer = spec.defer
            node.ends = spec.ends
            if getattr(spec.runnable, "_lg_is_graph", False):
                node.subgraphs = (spec.runnable,)
            channels[f"branch:to:{key}"] = (
                LastValueAfterFinish(Any) if spec.defer else EphemeralValue(Any, guard=False)
            )
            nodes[key] = node
        for start_key, end in sorted(builder.edges):
            if end != END:
                nodes[start_key].edge_writes.append((f"branch:to:{end}", None))
        for starts, end in sorted(builder.waiting_edges):
            if end == END:
                continue
            channel_name = f"join:{'+'.join(starts)}:{end}"
            channels[channel_name] = (
                NamedBarrierValueAfterFinish(str, set(starts))
                if builder.nodes[end].defer
                else NamedBarrierValue(str, set(starts))
            )
            nodes[end].triggers.append(channel_name)
            for s in starts:
                nodes[s].edge_writes.append((channel_name, s))
        for start_key, branches in builder.branches.items():
            for bname, branch in branches.items():
                schema = branch.input_schema or (
                    builder.nodes[start_key].input_schema if start_key in builder.nodes else builder.state_schema
                )
                keys = list(builder.schemas[schema])
                select = keys[0] if keys == ["__root__"] else keys
                nodes[start_key].branches.append(CompiledBranch(branch, select, mapper_for(schema, keys)))
        channels[TASKS] = Topic(Any)
        for key, node in nodes.items():
            _validate_timeout(key, node)
        for key in channels:
            if key in RESERVED:
                raise ValueError(f"Channel name '{key}' is reserved")
        for key in builder.managed:
            if key in RESERVED:
                raise ValueError(f"Managed name '{key}' is reserved")
        for key in nodes:
            if key in RESERVED:
                raise ValueError(f"Node name '{key}' is reserved")
        for names in (kwargs.get("interrupt_after"), kwargs.get("interrupt_before")):
            if names and names != "*":
                for n in names:
                    if n not in nodes:
                        raise ValueError(f"Node {n} not in nodes")
        for name, ch in channels.items():
            if not getattr(ch, "key", ""):
                ch.key = name
        super().__init__(
            nodes=nodes,
            channels=channels,
            managed=dict(builder.managed),
            input_channels=START,
            output_channels=output_keys,
            stream_channels=stream_keys,
            stream_mode="updates",
            context_schema=builder.context_schema,
            output_schema=builder.output_schema,
            state_schema=builder.state_schema,
            **kwargs,
        )
        self._index_view(builder, channels, nodes)

    view_keys: Any = None
    view_set: frozenset = frozenset()

    def _index_view(self, builder: StateGraph, channels: dict, nodes: dict) -> None:
        """Sets up the engine's state view (docs/DESIGN.md §3, `Run.read_view`).

        `view_keys` is the list of state keys when every state channel is of a kind
        whose `get()` is its `value` slot and that only a write can change (an exact
        LastValue, BinaryOperatorAggregate or UntrackedValue); else None, and every
        read walks the channels. Readers of exactly those keys (node inputs, router
        selects, the output keys) are given the very same list object, which is how
        the engine recognises them: an identity test per read, no per-step comparison.
        """
        keys = list(builder.channels)
        if not keys or keys == ["__root__"]:
            return
        stable = (LastValue, BinaryOperatorAggregate, UntrackedValue)
        if any(type(channels[k]) not in stable for k in keys):
            return
        self.view_keys = keys
        self.view_set = frozenset(keys)
        for node in nodes.values():
            if type(node.reads) is list and node.reads == keys:
                node.reads = keys
            for branch in node.branches:
                if type(branch.select) is list and branch.select == keys:
                    branch.select = keys
        if type(self.output_channels) is list and self.output_channels == keys:
            self.output_channels = keys

    def get_graph(self, config: Any = None, *, xray: Any = False) -> Any:
        """The graph's structure, for drawing (`.draw_mermaid()`); `xray` expands subgraphs."""
        from lgembed.graph._draw import get_graph

        return get_graph(self, config, xray=xray)

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
