"""Tool arguments ToolNode fills in: `InjectedState`, `InjectedStore`, `ToolRuntime`.

Why a separate module: which parameters are injected is found once per tool from its
function's type hints, then applied to each call; both steps follow LangGraph 1.2
(texts of the errors included) and are independent of how calls are run.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Annotated, Any, Generic, TypeVar, Union, get_args, get_origin

from lgembed.tools import InjectedToolArg, _DirectlyInjectedToolArg, injection_kind

__all__ = ("InjectedState", "InjectedStore", "ToolCallRequest", "ToolRuntime", "inject_tool_args", "injected_args_of")

StateT = TypeVar("StateT")
ContextT = TypeVar("ContextT")


class InjectedState(InjectedToolArg):
    """`Annotated[dict, InjectedState]` (the whole state) or `InjectedState("key")` (one field).

    ToolNode fills the argument from the graph state; the model never sees it.
    """

    def __init__(self, field: str | None = None) -> None:
        self.field = field


class InjectedStore(InjectedToolArg):
    """`Annotated[BaseStore, InjectedStore()]`: ToolNode passes the graph's store."""


@dataclass
class ToolRuntime(_DirectlyInjectedToolArg, Generic[ContextT, StateT]):
    """What a tool parameter typed `ToolRuntime` (or named `runtime`) receives.

    Attributes:
        state: the graph state the tool call was made in.
        context: the run's context (`invoke(..., context=...)`).
        config: the task's config.
        stream_writer: writes to the `custom` stream mode.
        tool_call_id: the id of the tool call.
        store: the graph's store, or None.
        tools: the tools of the ToolNode.
        execution_info, server_info: as on `lgembed.runtime.Runtime`.
    """

    state: Any
    context: Any
    config: dict
    stream_writer: Callable
    tool_call_id: str | None
    store: Any
    tools: list = field(default_factory=list)
    execution_info: Any = None
    server_info: Any = None

    def emit_output_delta(self, delta: Any) -> None:
        """LangGraph streams partial tool output on a `tools` stream mode; lgembed has
        none, so this is a no-op (as LangGraph's is when that mode is off)."""


@dataclass
class ToolCallRequest:
    """One tool call as seen by a `wrap_tool_call` interceptor.

    Attributes:
        tool_call: the call dict (`name`, `args`, `id`).
        tool: the tool, or None when no tool has that name.
        state: the graph state.
        runtime: the `ToolRuntime` of the call.
    """

    tool_call: dict
    tool: Any
    state: Any
    runtime: Any

    def override(self, **overrides: Any) -> ToolCallRequest:
        """A copy with `tool_call`, `tool` and/or `state` replaced (`state` also on the runtime)."""
        request = replace(self, **overrides)
        if "state" in overrides and isinstance(request.runtime, ToolRuntime):
            request = replace(request, runtime=replace(request.runtime, state=request.state))
        return request


@dataclass
class _InjectedArgs:
    state: dict  # tool arg -> state field (None: the whole state)
    store: str | None
    runtime: str | None
    all_injected_keys: set
    optional_state_args: set


def _is_injection(type_arg: Any, injection_type: type) -> bool:
    if isinstance(type_arg, injection_type) or (isinstance(type_arg, type) and issubclass(type_arg, injection_type)):
        return True
    origin = get_origin(type_arg)
    if origin is Union or origin is Annotated:
        return any(_is_injection(ta, injection_type) for ta in get_args(type_arg))
    return origin is not None and (
        origin is injection_type or (isinstance(origin, type) and issubclass(origin, injection_type))
    )


def _injection_from_type(type_: Any, injection_type: type) -> Any:
    matches = [a for a in get_args(type_) if _is_injection(a, injection_type)]
    if len(matches) > 1:
        msg = f"A tool argument should not be annotated with {injection_type.__name__} more than once. Found: {matches}"
        raise ValueError(msg)
    if len(matches) == 1:
        return matches[0]
    if _is_injection(type_, injection_type):
        return True
    return None


def injected_args_of(t: Any) -> _InjectedArgs:
    """Which arguments of tool `t` ToolNode fills, from its function's type hints."""
    import typing

    func = getattr(t, "func", None) or getattr(t, "coroutine", None)
    hints: dict = {}
    if func is not None:
        try:
            hints = typing.get_type_hints(func, include_extras=True)
        except Exception:  # noqa: BLE001 - unresolvable hints: nothing injected
            hints = {}
    defaults: dict = {}
    if func is not None:
        try:
            defaults = {k: p.default for k, p in inspect.signature(func).parameters.items()}
        except (TypeError, ValueError):
            defaults = {}
    state: dict = {}
    store = runtime = None
    all_keys: set = set()
    optional: set = set()
    for name, tp in hints.items():
        if name == "return":
            continue
        if injection_kind(tp) is not None:
            all_keys.add(name)
        if name == "runtime":
            runtime = name
        inj = _injection_from_type(tp, InjectedState)
        if inj:
            if isinstance(inj, InjectedState) and inj.field:
                state[name] = inj.field
                if defaults.get(name, inspect.Parameter.empty) is not inspect.Parameter.empty:
                    optional.add(name)
            else:
                state[name] = None
        if _injection_from_type(tp, InjectedStore):
            store = name
        if _injection_from_type(tp, ToolRuntime):
            runtime = name
    return _InjectedArgs(state, store, runtime, all_keys, optional)


def inject_tool_args(tool_call: dict, rt: ToolRuntime, injected: _InjectedArgs | None, messages_key: str) -> dict:
    """The call with state/store/runtime arguments filled in (model-supplied values for
    injected names are dropped first).

    Raises:
        ValueError: a list state when a tool needs state fields; InjectedStore without a store.
        KeyError, AttributeError: a state field the tool needs is missing.
    """
    if not injected or not (injected.state or injected.store or injected.runtime or injected.all_injected_keys):
        return tool_call
    call = dict(tool_call)
    values: dict = {}
    if injected.state:
        state = rt.state
        if isinstance(state, list):
            required = list(injected.state.values())
            if (len(required) == 1 and required[0] == messages_key) or required[0] is None:
                state = {messages_key: state}
            else:
                err = f"Invalid input to ToolNode. Tool {tool_call['name']} requires graph state dict as input."
                if any(f for f in injected.state.values()):
                    err += f" State should contain fields {', '.join(f for f in required if f)}."
                raise ValueError(err)
        if isinstance(state, dict):
            for arg, key in injected.state.items():
                if not key:
                    values[arg] = state
                elif key in state:
                    values[arg] = state[key]
                elif arg not in injected.optional_state_args:
                    raise KeyError(key)
        else:
            for arg, key in injected.state.items():
                if not key:
                    values[arg] = state
                elif hasattr(state, key):
                    values[arg] = getattr(state, key)
                elif arg not in injected.optional_state_args:
                    raise AttributeError(key)
    if injected.store:
        if rt.store is None:
            msg = (
                "Cannot inject store into tools with InjectedStore annotations - "
                "please compile your graph with a store."
            )
            raise ValueError(msg)
        values[injected.store] = rt.store
    if injected.runtime:
        values[injected.runtime] = rt
    stripped = {k: v for k, v in call["args"].items() if k not in injected.all_injected_keys}
    call["args"] = {**stripped, **values}
    return call
