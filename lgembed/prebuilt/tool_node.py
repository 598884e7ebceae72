"""`ToolNode` and `tools_condition`: run a model's tool calls inside a graph (docs/BEHAVIOUR.md §13 M-3…M-5).

Why this module exists: it is LangGraph's `langgraph.prebuilt.tool_node` for programs
that run on lgembed. It takes lgembed `Tool`s, plain functions (made tools with
`lgembed.tools.tool`) and, duck-typed, langchain-core tools when the program uses them
(an object with `name`, `description` and `invoke`); it never imports langchain-core.

Behaviour follows LangGraph 1.2.22 (observed): input shapes, concurrent execution,
output order and content formatting, error texts (`"Error: nope is not a valid tool,
try one of [add, boom]."`, the argument-validation text, the
`handle_tool_errors` strategies), Command collection, state/store/runtime injection.

Like LangGraph's, a ToolNode runs only inside a graph, where it gets the Runtime
(store, context, stream writer): invoking it elsewhere raises LangGraph's
`ValueError("Missing required config key 'N/A' for 'tools'.")`. Inside a node,
`tool_node.invoke(...)` picks up the running task's config.

Which message classes come out: the ToolMessages ToolNode builds are langchain-core's
when the AIMessage that carried the tool calls is a langchain-core message (so a
langchain chat model gets its own classes back), lgembed's otherwise.

Deviations:
- A single tool call runs in the calling thread (LangGraph uses a worker thread even
  for one call); several calls run in a thread pool of at most
  `config["max_concurrency"]` (default: as many as the calls, capped like the stdlib
  pool at `cpu_count + 4`).
- With a list of tool calls as input, the injected state is read from the task's own
  view of the graph's state channels (LangGraph reads every channel).

Layout: this module runs the calls; `_tool_errors` has the error texts and
`handle_tool_errors` rules, `_injection` the injected arguments, `_tool_messages` the
output formatting and Command collection. Their public names are re-exported here,
where LangGraph programs import them from.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypedDict

from lgembed._constants import CONF, CONFIG_KEY_RUNTIME
from lgembed.errors import GraphBubbleUp, is_invalid_resume
from lgembed.prebuilt._injection import (
    InjectedState,
    InjectedStore,
    ToolCallRequest,
    ToolRuntime,
    _InjectedArgs,
    inject_tool_args,
    injected_args_of,
)
from lgembed.prebuilt._tool_errors import (
    INVALID_TOOL_NAME_ERROR_TEMPLATE,
    TOOL_CALL_ERROR_TEMPLATE,
    TOOL_INVOCATION_ERROR_TEMPLATE,
    ToolInvocationError,
    default_handle_tool_errors,
    handle_tool_error,
    infer_handled_types,
    validation_error_types,
)
from lgembed.prebuilt._tool_messages import (
    TOOL_MESSAGE_BLOCK_TYPES,
    combine_tool_outputs,
    is_ai,
    is_tool,
    lc_family,
    make_tool_message,
    msg_content_output,
    normalize_tool_response,
)
from lgembed.tools import tool

__all__ = (
    "INVALID_TOOL_NAME_ERROR_TEMPLATE",
    "TOOL_CALL_ERROR_TEMPLATE",
    "TOOL_INVOCATION_ERROR_TEMPLATE",
    "TOOL_MESSAGE_BLOCK_TYPES",
    "InjectedState",
    "InjectedStore",
    "ToolCallRequest",
    "ToolCallWithContext",
    "ToolInvocationError",
    "ToolNode",
    "ToolRuntime",
    "msg_content_output",
    "tools_condition",
)


ToolCallWithContext = TypedDict(
    "ToolCallWithContext",
    {"tool_call": dict, "__type": Literal["tool_call_with_context"], "state": Any},
)
"""Send payload of one tool call plus the state it was made in (`create_react_agent` v2)."""


# --- ToolNode ----------------------------------------------------------------------------


class ToolNode:
    """A graph node that runs the tool calls of the last AIMessage (M-3, M-4).

    Input: a dict state with a list under `messages_key` (the last AIMessage's
    `tool_calls` are run), a list of messages, a list of tool call dicts, or a
    `ToolCallWithContext` Send payload. Output: `{messages_key: [ToolMessage, ...]}`
    in call order (a list for list-of-messages input); when a tool returns a
    `Command`, a list mixing the Commands and the message updates.

    Args:
        tools: lgembed `Tool`s, plain functions (made tools with `tool()`, so they
            need a docstring), or langchain-core tools.
        name: the node name (`add_node(ToolNode(...))` uses it).
        tags: kept for compatibility.
        handle_tool_errors: True (every exception becomes an error ToolMessage),
            a str (that text), a callable (its return; it handles the exception types
            its first parameter is annotated with), an exception type or tuple of them,
            False (re-raise). The default handles argument-validation errors only.
        messages_key: the state key of the messages (input and output).
        wrap_tool_call: interceptor `(request, execute) -> ToolMessage | Command`.
        awrap_tool_call: async interceptor (falls back to `wrap_tool_call`).

    Raises:
        ValueError: a function without a docstring, or something that is not a tool.
    """

    def __init__(
        self,
        tools: Any,
        *,
        name: str = "tools",
        tags: list[str] | None = None,
        handle_tool_errors: Any = default_handle_tool_errors,
        messages_key: str = "messages",
        wrap_tool_call: Callable | None = None,
        awrap_tool_call: Callable | None = None,
    ) -> None:
        self.name = name
        self.tags = tags
        self._handle_tool_errors = handle_tool_errors
        self._messages_key = messages_key
        self._wrap_tool_call = wrap_tool_call
        self._awrap_tool_call = awrap_tool_call
        self._tools_by_name: dict[str, Any] = {}
        self._injected_args: dict[str, _InjectedArgs] = {}
        for t in tools:
            t_ = t if is_tool(t) else tool(t)
            self._tools_by_name[t_.name] = t_
            self._injected_args[t_.name] = injected_args_of(t_)

    @property
    def tools_by_name(self) -> dict[str, Any]:
        """The tools, by name."""
        return self._tools_by_name

    def get_name(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"ToolNode(tools=[{', '.join(self._tools_by_name)}], name={self.name!r})"

    # --- entry points --------------------------------------------------------------------

    def _config_and_runtime(self, config: dict | None) -> tuple[dict, Any]:
        if config is None or config.get(CONF, {}).get(CONFIG_KEY_RUNTIME) is None:
            from lgembed.config import get_config

            try:
                base = get_config()
            except RuntimeError:
                base = None
            if base is not None:
                config = {**base, **(config or {})}
                if CONFIG_KEY_RUNTIME not in config.get(CONF, {}):
                    config[CONF] = {**base.get(CONF, {}), **config.get(CONF, {})}
        runtime = (config or {}).get(CONF, {}).get(CONFIG_KEY_RUNTIME)
        if runtime is None:
            # LangGraph's text when the node runs outside a graph (no Runtime to give it)
            msg = f"Missing required config key 'N/A' for '{self.name}'."
            raise ValueError(msg)
        # a tool's config is a child config: without the node's run_name, with the
        # defaults langchain-core's ensure_config gives a tool call (tags, recursion_limit 25)
        child = {"tags": [], "metadata": {}, "callbacks": None, "recursion_limit": 25}
        child.update((k, v) for k, v in config.items() if k != "run_name")  # type: ignore[union-attr]
        return child, runtime

    def invoke(self, input: Any, config: dict | None = None, **kwargs: Any) -> Any:
        """Runs the tool calls of `input` concurrently (threads) and collects the results.

        Raises:
            ValueError: no messages / no AIMessage in the input; called outside a graph;
                an invalid Command returned by a tool.
            Exception: a tool's exception that `handle_tool_errors` does not handle.
        """
        config, runtime = self._config_and_runtime(config)
        tool_calls, input_type, lc = self._parse_input(input)
        runtimes = [self._tool_runtime(input, config, runtime, call) for call in tool_calls]
        if len(tool_calls) <= 1:
            outputs = [self._run_one(c, input_type, rt, lc) for c, rt in zip(tool_calls, runtimes)]
        else:
            outputs = self._run_threads(tool_calls, input_type, runtimes, lc, config)
        return self._combine_tool_outputs(outputs, input_type)

    async def ainvoke(self, input: Any, config: dict | None = None, **kwargs: Any) -> Any:
        """Async `invoke`: the tool calls run concurrently on the event loop (`ainvoke` of each tool).

        Raises:
            As `invoke`.
        """
        import asyncio

        config, runtime = self._config_and_runtime(config)
        tool_calls, input_type, lc = self._parse_input(input)
        runtimes = [self._tool_runtime(input, config, runtime, call) for call in tool_calls]
        outputs = await asyncio.gather(*(self._arun_one(c, input_type, rt, lc) for c, rt in zip(tool_calls, runtimes)))
        return self._combine_tool_outputs(list(outputs), input_type)

    def _run_threads(self, calls: list, input_type: str, runtimes: list, lc: Any, config: dict) -> list:
        import contextvars
        import os
        from concurrent.futures import ThreadPoolExecutor

        workers = config.get("max_concurrency") or min(len(calls), (os.cpu_count() or 1) + 4)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [
                pool.submit(contextvars.copy_context().run, self._run_one, call, input_type, rt, lc)
                for call, rt in zip(calls, runtimes)
            ]
            # results (and the first exception) in call order, like executor.map
            return [f.result() for f in futures]

    # --- input -----------------------------------------------------------------------------

    def _parse_input(self, input: Any) -> tuple[list, str, Any]:
        # (tool calls, "list" | "dict" | "tool_calls", langchain-core module or None)
        if isinstance(input, list):
            if isinstance(input[-1], dict) and input[-1].get("type") == "tool_call":
                return list(input), "tool_calls", None
            messages = input
            input_type = "list"
        elif isinstance(input, dict) and input.get("__type") == "tool_call_with_context":
            state = input.get("state")
            msgs = (
                state.get(self._messages_key) if isinstance(state, dict) else getattr(state, self._messages_key, None)
            )
            lc = next((lc_family(m) for m in reversed(msgs or []) if is_ai(m)), None)
            return [input["tool_call"]], "tool_calls", lc
        elif (
            isinstance(input, dict)
            and (messages := input.get(self._messages_key, []))
            or (messages := getattr(input, self._messages_key, []))
        ):
            input_type = "dict"
        else:
            msg = "No message found in input"
            raise ValueError(msg)
        latest = next((m for m in reversed(messages) if is_ai(m)), None)
        if latest is None:
            msg = "No AIMessage found in input"
            raise ValueError(msg)
        return list(latest.tool_calls), input_type, lc_family(latest)

    def _extract_state(self, input: Any, config: dict) -> Any:
        if isinstance(input, dict) and input.get("__type") == "tool_call_with_context":
            return input["state"]
        if isinstance(input, list) and input and isinstance(input[-1], dict) and input[-1].get("type") == "tool_call":
            read_state = config.get(CONF, {}).get("__pregel_read_state")
            return {} if read_state is None else read_state()
        return input

    def _tool_runtime(self, input: Any, config: dict, runtime: Any, call: dict) -> ToolRuntime:
        return ToolRuntime(
            state=self._extract_state(input, config),
            tool_call_id=call.get("id"),
            config=dict(config),
            context=runtime.context,
            store=runtime.store,
            stream_writer=runtime.stream_writer,
            tools=list(self._tools_by_name.values()),
            execution_info=runtime.execution_info,
            server_info=runtime.server_info,
        )

    # --- one call ----------------------------------------------------------------------------

    def _run_one(self, call: dict, input_type: str, rt: ToolRuntime, lc: Any) -> Any:
        request = ToolCallRequest(
            tool_call=call, tool=self._tools_by_name.get(call["name"]), state=rt.state, runtime=rt
        )
        if self._wrap_tool_call is None:
            return self._execute_sync(request, input_type, rt.config, lc)

        def execute(req: ToolCallRequest) -> Any:
            return self._execute_sync(req, input_type, rt.config, lc)

        try:
            return self._wrap_tool_call(request, execute)
        except GraphBubbleUp:
            raise
        except Exception as e:
            if not self._handle_tool_errors or is_invalid_resume(e):
                raise
            return self._error_message(e, request.tool_call, lc)

    async def _arun_one(self, call: dict, input_type: str, rt: ToolRuntime, lc: Any) -> Any:
        request = ToolCallRequest(
            tool_call=call, tool=self._tools_by_name.get(call["name"]), state=rt.state, runtime=rt
        )
        if self._awrap_tool_call is None and self._wrap_tool_call is None:
            return await self._execute_async(request, input_type, rt.config, lc)

        async def execute(req: ToolCallRequest) -> Any:
            return await self._execute_async(req, input_type, rt.config, lc)

        def sync_execute(req: ToolCallRequest) -> Any:
            return self._execute_sync(req, input_type, rt.config, lc)

        try:
            if self._awrap_tool_call is not None:
                return await self._awrap_tool_call(request, execute)
            return self._wrap_tool_call(request, sync_execute)  # type: ignore[misc]
        except GraphBubbleUp:
            raise
        except Exception as e:
            if not self._handle_tool_errors or is_invalid_resume(e):
                raise
            return self._error_message(e, request.tool_call, lc)

    def _error_message(self, e: Exception, call: dict, lc: Any) -> Any:
        content = handle_tool_error(e, flag=self._handle_tool_errors)
        return make_tool_message(lc, content, name=call["name"], tool_call_id=call["id"], status="error")

    def _prepare_call(self, request: ToolCallRequest, lc: Any) -> tuple[Any, dict | None, Any]:
        # (tool, call dict with injected args, or an error ToolMessage for an unknown tool)
        call = request.tool_call
        t = request.tool
        if t is None:
            invalid = self._validate_tool_call(call, lc)
            if invalid is not None:
                return None, None, invalid
            msg = f"Tool {call['name']} is not registered with ToolNode"
            raise TypeError(msg)
        injected = self._inject_tool_args(call, request.runtime, t)
        return t, {**injected, "type": "tool_call"}, None

    def _on_error(self, e: Exception, call: dict, lc: Any) -> Any:
        if is_invalid_resume(e):
            raise e
        flag = self._handle_tool_errors
        if isinstance(flag, type) and issubclass(flag, Exception):
            handled: tuple = (flag,)
        elif isinstance(flag, tuple):
            handled = flag
        elif callable(flag) and not isinstance(flag, type):
            handled = infer_handled_types(flag)
        else:
            handled = (Exception,)
        if not flag or not isinstance(e, handled):
            raise e
        return self._error_message(e, call, lc)

    def _invocation_error(self, exc: Exception, call: dict) -> ToolInvocationError:
        injected = self._injected_args.get(call["name"])
        names: set = set()
        if injected:
            names.update(injected.state)
            if injected.store:
                names.add(injected.store)
            if injected.runtime:
                names.add(injected.runtime)
        filtered = []
        for err in exc.errors():  # type: ignore[attr-defined]
            if err["loc"] and err["loc"][0] not in names:
                err = dict(err)
                if isinstance(err.get("input"), dict):
                    err["input"] = {k: v for k, v in err["input"].items() if k not in names}
                filtered.append(err)
        return ToolInvocationError(call["name"], exc, call["args"], filtered)

    def _execute_sync(self, request: ToolCallRequest, input_type: str, config: dict, lc: Any) -> Any:
        t, call_args, invalid = self._prepare_call(request, lc)
        if invalid is not None:
            return invalid
        call = request.tool_call
        try:
            try:
                response = t.invoke(call_args, config)
            except validation_error_types() as exc:
                if is_invalid_resume(exc):
                    raise
                raise self._invocation_error(exc, call) from exc
            return self._normalize_tool_response(response, call, input_type, lc)
        except GraphBubbleUp:
            raise
        except Exception as e:  # noqa: BLE001 - handle_tool_errors decides what is handled
            return self._on_error(e, call, lc)

    async def _execute_async(self, request: ToolCallRequest, input_type: str, config: dict, lc: Any) -> Any:
        t, call_args, invalid = self._prepare_call(request, lc)
        if invalid is not None:
            return invalid
        call = request.tool_call
        try:
            try:
                ainvoke = getattr(t, "ainvoke", None)
                if ainvoke is not None:
                    response = await ainvoke(call_args, config)
                else:
                    response = t.invoke(call_args, config)
            except validation_error_types() as exc:
                if is_invalid_resume(exc):
                    raise
                raise self._invocation_error(exc, call) from exc
            return self._normalize_tool_response(response, call, input_type, lc)
        except GraphBubbleUp:
            raise
        except Exception as e:  # noqa: BLE001 - handle_tool_errors decides what is handled
            return self._on_error(e, call, lc)

    def _validate_tool_call(self, call: dict, lc: Any) -> Any:
        requested = call["name"]
        if requested in self._tools_by_name:
            return None
        content = INVALID_TOOL_NAME_ERROR_TEMPLATE.format(
            requested_tool=requested, available_tools=", ".join(self._tools_by_name)
        )
        return make_tool_message(lc, content, name=requested, tool_call_id=call["id"], status="error")

    # --- injection --------------------------------------------------------------------------

    def _inject_tool_args(self, tool_call: dict, rt: ToolRuntime, t: Any = None) -> dict:
        """The call with state/store/runtime arguments filled in (see `_injection.inject_tool_args`)."""
        injected = self._injected_args.get(tool_call["name"])
        if not injected and t is not None:
            injected = injected_args_of(t)
        return inject_tool_args(tool_call, rt, injected, self._messages_key)

    # --- output -------------------------------------------------------------------------------

    def _normalize_tool_response(self, response: Any, call: dict, input_type: str, lc: Any) -> Any:
        return normalize_tool_response(response, call, input_type, lc, self._messages_key)

    def _combine_tool_outputs(self, outputs: list, input_type: str) -> Any:
        return combine_tool_outputs(outputs, input_type, self._messages_key)


def tools_condition(state: Any, messages_key: str = "messages") -> Literal["tools", "__end__"]:
    """`"tools"` if the last message has tool calls, else `"__end__"` (M-5).

    Args:
        state: a list of messages, a dict with `messages_key`, or an object with that attribute.
        messages_key: where the messages are.

    Raises:
        ValueError: no messages in the state.
    """
    if isinstance(state, list):
        ai_message = state[-1]
    elif (isinstance(state, dict) and (messages := state.get(messages_key, []))) or (
        messages := getattr(state, messages_key, [])
    ):
        ai_message = messages[-1]
    else:
        msg = f"No messages found in input state to tool_edge: {state}"
        raise ValueError(msg)
    if hasattr(ai_message, "tool_calls") and len(ai_message.tool_calls) > 0:
        return "tools"
    return "__end__"
