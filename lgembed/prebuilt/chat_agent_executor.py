"""`create_react_agent`: a model that calls tools in a loop until it answers (docs/BEHAVIOUR.md §13 M-6).

Why this module exists: it is LangGraph's `langgraph.prebuilt.chat_agent_executor` for
programs that run on lgembed, building the same graph (nodes `agent`, `tools`, optional
`pre_model_hook`, `post_model_hook`, `generate_structured_response`; the same edges,
channels and routing) without langchain-core.

The model: any object with `invoke(messages) -> AIMessage` (it may also accept the
config as second argument, as langchain-core chat models do, and have `ainvoke` for
async runs). When it has `bind_tools(tools)`, that is called once with the tools, and
the object it returns is used. lgembed `Tool`s are passed to a langchain-core model's
`bind_tools` as OpenAI tool dicts (`lgembed.tools.convert_to_openai_tool`), which it
accepts; other models get the tool objects themselves. A callable without `invoke`
is a dynamic model: `model(state, runtime)` returns the model to call for each step.
`response_format` needs a model with `with_structured_output(schema)` (its result's
`invoke(messages)` gives the structured response); `response_format=(prompt, schema)`
puts a SystemMessage first for that call.

A "provider:model" string is parsed as langchain's `init_chat_model` parses it:
"openai:MODEL" (or a bare OpenAI model name such as "gpt-4o-mini") becomes
`lgembed.models.ChatOpenAI(model=MODEL)`, imported only then; other providers are
refused with a ValueError that says what to pass instead.

Wrong model objects are refused early, with the protocol in the error: at
`create_react_agent` time an object without `invoke` that is not callable, a function
that cannot be called as `model(state, runtime)`, and a `response_format` with a
model that has no `with_structured_output`; at run time a model whose `invoke`
returns something other than a message, and a dynamic model that returns something
without `invoke` (all TypeErrors; LangGraph fails later, with bare TypeErrors and
AttributeErrors, or its own text for `response_format`, which ours starts with).

The deprecation warning keeps LangGraph's category and first words ("create_react_agent
has been moved to `langchain.agents`") but does not tell the user to import
`langchain.agents`, which lgembed does not ship: `lgembed.prebuilt.create_react_agent`
is the supported API. (`lgembed.agents.create_agent` is not provided: langchain's
`create_agent` is a different, middleware-based API with its own graph shape; a
look-alike would mislead.)

Deviations: `prompt` given as a Runnable must have `invoke(state)`; `AgentState` & co.
do not emit LangGraph's deprecation warnings when used (only `create_react_agent`
does); a duck-typed model (any object with `invoke`) is accepted where LangGraph wants
a langchain-core Runnable, and one without `bind_tools` is used as is.

Why slightly over 600 lines: `create_react_agent` is one function whose closures
(model call, routing, hooks, structured output) share its arguments, as in LangGraph's
module (1,015 lines); splitting it would pass a dozen values between helpers.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, TypedDict

from lgembed._constants import CONF, CONFIG_KEY_RUNTIME
from lgembed.constants import END
from lgembed.errors import ErrorCode, create_error_message
from lgembed.graph import StateGraph
from lgembed.graph._fields import is_pydantic_model_class
from lgembed.graph.message import add_messages
from lgembed.managed import RemainingSteps
from lgembed.messages import AIMessage, BaseMessage, SystemMessage, lc_messages_module
from lgembed.prebuilt._agent_model import (
    check_dynamic_result,
    check_model,
    check_response,
    check_structured_model,
    is_lc_runnable,
    model_from_string,
)
from lgembed.prebuilt._tool_messages import is_ai, is_tool_message
from lgembed.prebuilt.tool_node import ToolCallWithContext, ToolNode
from lgembed.types import Send
from lgembed.warnings import LangGraphDeprecatedSinceV10

try:
    from typing import NotRequired
except ImportError:  # Python 3.10: the field is simply declared (lgembed fills managed values anyway)
    NotRequired = None  # type: ignore[assignment]

__all__ = (
    "AgentState",
    "AgentStateWithStructuredResponse",
    "create_react_agent",
    "create_tool_calling_executor",
)

_MISSING = object()

if NotRequired is not None:

    class AgentState(TypedDict):
        """The state of the agent: `messages` (merged by add_messages) and `remaining_steps`."""

        messages: Annotated[Sequence[BaseMessage], add_messages]
        remaining_steps: NotRequired[RemainingSteps]

else:  # pragma: no cover - Python 3.10

    class AgentState(TypedDict):  # type: ignore[no-redef]
        """The state of the agent: `messages` (merged by add_messages) and `remaining_steps`."""

        messages: Annotated[Sequence[BaseMessage], add_messages]
        remaining_steps: RemainingSteps


class AgentStateWithStructuredResponse(AgentState):
    """`AgentState` plus the `structured_response` of `response_format`."""

    structured_response: Any


def __getattr__(name: str) -> Any:
    # the pydantic variants exist only for programs that use pydantic (imported on request)
    if name in ("AgentStatePydantic", "AgentStateWithStructuredResponsePydantic"):
        from pydantic import BaseModel

        class AgentStatePydantic(BaseModel):
            """The state of the agent, as a pydantic model."""

            messages: Annotated[Sequence[Any], add_messages]
            remaining_steps: RemainingSteps = 25

        class AgentStateWithStructuredResponsePydantic(AgentStatePydantic):
            """`AgentStatePydantic` plus the `structured_response` of `response_format`."""

            structured_response: Any = None

        globals()["AgentStatePydantic"] = AgentStatePydantic
        globals()["AgentStateWithStructuredResponsePydantic"] = AgentStateWithStructuredResponsePydantic
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


_DEPRECATION = (
    "create_react_agent has been moved to `langchain.agents` in LangGraph 1.x (as `create_agent`). "
    "lgembed does not ship `langchain.agents`: keep importing `create_react_agent` from "
    "`lgembed.prebuilt`, which lgembed supports"
)
# LangGraph's category and first sentence (what warning filters match), without sending
# the user to a module lgembed lacks; the class adds "Deprecated in LangGraph V1.0 ..."


def _get_state_value(state: Any, key: str, default: Any = None) -> Any:
    return state.get(key, default) if isinstance(state, dict) else getattr(state, key, default)


def _accepts_config(fn: Any) -> bool:
    # whether `fn(input, config)` is allowed (langchain-core's invoke(input, config=None, ...))
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return (
        len(positional) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in params) or "config" in {p.name for p in params}
    )


def _call(fn: Any, value: Any, config: dict) -> Any:
    return fn(value, config) if _accepts_config(fn) else fn(value)


def _prompt_fn(prompt: Any) -> tuple[Callable | None, Callable | None]:
    """(sync, async) functions turning the state into the model input.

    Raises:
        ValueError: a prompt of an unsupported type.
    """
    if prompt is None:
        return (lambda state: _get_state_value(state, "messages")), None
    if isinstance(prompt, str):
        system = SystemMessage(content=prompt)
        return (lambda state: [system] + list(_get_state_value(state, "messages"))), None
    if getattr(prompt, "type", None) == "system" and hasattr(prompt, "content"):
        return (lambda state: [prompt] + list(_get_state_value(state, "messages"))), None
    if inspect.iscoroutinefunction(prompt):
        return None, prompt
    if hasattr(prompt, "invoke"):
        return prompt.invoke, getattr(prompt, "ainvoke", None)
    if callable(prompt):
        return prompt, None
    msg = f"Got unexpected type for `prompt`: {type(prompt)}"
    raise ValueError(msg)


def _should_bind_tools(model: Any, tools: Sequence[Any], num_builtin: int = 0) -> bool:
    """Whether to call `bind_tools`: not when the model already has tools bound
    (a langchain-core RunnableBinding with `tools` in its kwargs), which must then match.

    Raises:
        ValueError: the bound tools differ from `tools` (LangGraph's texts).
    """
    kwargs = getattr(model, "kwargs", None)
    if not (hasattr(model, "bound") and isinstance(kwargs, dict) and "tools" in kwargs):
        return True
    bound_tools = kwargs["tools"]
    if len(tools) != len(bound_tools) - num_builtin:
        msg = (
            "Number of tools in the model.bind_tools() and tools passed to create_react_agent must match"
            f" Got {len(tools)} tools, expected {len(bound_tools) - num_builtin}"
        )
        raise ValueError(msg)
    names = {t.name for t in tools}
    bound_names = set()
    for bt in bound_tools:
        if bt.get("type") == "function":
            bound_names.add(bt["function"]["name"])
        elif bt.get("name"):
            bound_names.add(bt["name"])
    if missing := names - bound_names:
        msg = f"Missing tools '{missing}' in the model.bind_tools()"
        raise ValueError(msg)
    return False


def _validate_chat_history(messages: Sequence[Any]) -> None:
    """Every tool call in the history must have its ToolMessage.

    Raises:
        ValueError: LangGraph's INVALID_CHAT_HISTORY text.
    """
    calls = [tc for m in messages if is_ai(m) for tc in m.tool_calls]
    answered = {m.tool_call_id for m in messages if is_tool_message(m)}
    missing = [tc for tc in calls if tc["id"] not in answered]
    if not missing:
        return
    msg = create_error_message(
        message="Found AIMessages with tool_calls that do not have a corresponding ToolMessage. "
        f"Here are the first few of those tool calls: {missing[:3]}.\n\n"
        "Every tool call (LLM requesting to call a tool) in the message history MUST have a corresponding ToolMessage "
        "(result of a tool invocation to return to the LLM) - this is required by most LLM providers.",
        error_code=ErrorCode.INVALID_CHAT_HISTORY,
    )
    raise ValueError(msg)


class _AgentNode:
    """A node with a sync and an async body, both given `(state, runtime, config)`.

    Why a class: lgembed runs an object with `invoke`/`ainvoke` through the matching
    method, so the agent node works under `invoke` and `ainvoke` (LangGraph's
    RunnableCallable(func, afunc)).
    """

    def __init__(self, name: str, func: Callable, afunc: Callable) -> None:
        self.name = name
        self.func = func
        self.afunc = afunc

    def get_name(self) -> str:
        return self.name

    def invoke(self, state: Any, config: dict | None = None, **kwargs: Any) -> Any:
        config = config or {}
        return self.func(state, config.get(CONF, {}).get(CONFIG_KEY_RUNTIME), config)

    async def ainvoke(self, state: Any, config: dict | None = None, **kwargs: Any) -> Any:
        config = config or {}
        return await self.afunc(state, config.get(CONF, {}).get(CONFIG_KEY_RUNTIME), config)


async def _in_thread(fn: Callable, *args: Any) -> Any:
    import asyncio
    import contextvars
    import functools

    ctx = contextvars.copy_context()
    return await asyncio.get_running_loop().run_in_executor(None, functools.partial(ctx.run, fn, *args))


def create_react_agent(
    model: Any,
    tools: Any,
    *,
    prompt: Any = None,
    response_format: Any = None,
    pre_model_hook: Any = None,
    post_model_hook: Any = None,
    state_schema: Any = None,
    context_schema: Any = None,
    checkpointer: Any = None,
    store: Any = None,
    interrupt_before: list[str] | None = None,
    interrupt_after: list[str] | None = None,
    debug: bool = False,
    version: Literal["v1", "v2"] = "v2",
    name: str | None = None,
    **deprecated_kwargs: Any,
) -> Any:
    """A compiled graph that calls `model`, runs the tools it asks for, and repeats (M-6).

    Emits LangGraph's deprecation warning category (`LangGraphDeprecatedSinceV10`: moved
    to `langchain.agents`), saying that lgembed keeps this function. Graph: `agent` →
    (tool calls?) → `tools` → `agent`, ending when the model answers without tool calls. v2 sends each tool call to `tools` as its own
    task (`Send("tools", ToolCallWithContext)`); v1 runs them all in one `tools` task.
    With fewer than 2 remaining steps and tool calls in the response, the response is
    replaced by `AIMessage(id=response.id, content="Sorry, need more steps to process
    this request.")`. Tools with `return_direct` end the run after they ran.

    Args:
        model: a chat model, a dynamic model, or an "openai:MODEL" string (module docstring).
        tools: tools, functions, OpenAI-style tool dicts (given to the model only) or a ToolNode.
        prompt: None, a str or SystemMessage (put first), or a callable/Runnable on the state.
        response_format: a schema (or `(system prompt, schema)`) for a final structured
            response in `structured_response`.
        pre_model_hook, post_model_hook: nodes run before / after the model.
        state_schema: defaults to `AgentState`; must have `messages` and `remaining_steps`.
        context_schema, checkpointer, store, interrupt_before, interrupt_after, debug, name:
            passed to `StateGraph` / `compile`.
        version: "v1" or "v2".

    Returns:
        The compiled graph.

    Raises:
        ValueError: unknown version; state_schema missing keys; bad prompt type;
            bound tools that do not match; a model string of a provider other than openai.
        ImportError: an "openai:MODEL" string in an lgembed without `lgembed.models`.
        TypeError: unexpected keyword arguments; a model that is neither a chat model nor
            a function of (state, runtime); response_format with a model that has no
            `with_structured_output`.
    """
    warnings.warn(LangGraphDeprecatedSinceV10(_DEPRECATION), stacklevel=2)
    if (config_schema := deprecated_kwargs.pop("config_schema", _MISSING)) is not _MISSING:
        warnings.warn(
            LangGraphDeprecatedSinceV10(
                "`config_schema` is deprecated and will be removed. Please use `context_schema` instead."
            ),
            stacklevel=2,
        )
        if context_schema is None:
            context_schema = config_schema
    if deprecated_kwargs:
        msg = f"create_react_agent() got unexpected keyword arguments: {deprecated_kwargs}"
        raise TypeError(msg)
    if version not in ("v1", "v2"):
        msg = f"Invalid version {version}. Supported versions are 'v1' and 'v2'."
        raise ValueError(msg)
    if state_schema is not None:
        import typing

        required = {"messages", "remaining_steps"}
        if response_format is not None:
            required.add("structured_response")
        if missing_keys := required - set(typing.get_type_hints(state_schema)):
            msg = f"Missing required key(s) {missing_keys} in state_schema"
            raise ValueError(msg)
    if state_schema is None:
        state_schema = AgentStateWithStructuredResponse if response_format is not None else AgentState

    builtin_tools: list = []
    if isinstance(tools, ToolNode):
        tool_classes = list(tools.tools_by_name.values())
        tool_node = tools
    else:
        builtin_tools = [t for t in tools if isinstance(t, dict)]
        tool_node = ToolNode([t for t in tools if not isinstance(t, dict)])
        tool_classes = list(tool_node.tools_by_name.values())

    if isinstance(model, str):
        model = model_from_string(model)
    is_dynamic = check_model(model)
    is_async_dynamic = is_dynamic and inspect.iscoroutinefunction(model)
    tool_calling_enabled = len(tool_classes) > 0
    structured_source = model

    if not is_dynamic:
        if (
            hasattr(model, "bind_tools")
            and _should_bind_tools(model, tool_classes, num_builtin=len(builtin_tools))
            and len(tool_classes) + len(builtin_tools) > 0
        ):
            to_bind: list = list(tool_classes) + builtin_tools
            if is_lc_runnable(model):
                from lgembed.tools import Tool, convert_to_openai_tool

                to_bind = [convert_to_openai_tool(t) if isinstance(t, Tool) else t for t in to_bind]
            model = model.bind_tools(to_bind)
        if response_format is not None:
            check_structured_model(structured_source)

    prompt_sync, prompt_async = _prompt_fn(prompt)
    should_return_direct = {t.name for t in tool_classes if getattr(t, "return_direct", False)}

    def _resolve(state: Any, runtime: Any) -> Any:
        return check_dynamic_result(model, model(state, runtime)) if is_dynamic else model

    def _model_input(state: Any) -> Any:
        if prompt_sync is None:
            msg = "Async prompt function provided but agent invoked synchronously. Use agent.ainvoke() or agent.astream()."
            raise RuntimeError(msg)
        return prompt_sync(state)

    async def _amodel_input(state: Any, config: dict) -> Any:
        if prompt_async is not None:
            return await prompt_async(state)
        return prompt_sync(state)  # type: ignore[misc]

    def _are_more_steps_needed(state: Any, response: Any) -> bool:
        has_tool_calls = is_ai(response) and response.tool_calls
        all_direct = (
            all(call["name"] in should_return_direct for call in response.tool_calls) if is_ai(response) else False
        )
        remaining = _get_state_value(state, "remaining_steps", None)
        if remaining is not None:
            if remaining < 1 and all_direct:
                return True
            if remaining < 2 and has_tool_calls:
                return True
        return False

    def _get_model_input_state(state: Any) -> Any:
        if pre_model_hook is not None:
            messages = _get_state_value(state, "llm_input_messages") or _get_state_value(state, "messages")
            expected = "'llm_input_messages' or 'messages' key"
        else:
            messages = _get_state_value(state, "messages")
            expected = "'messages' key"
        if messages is None:
            msg = f"Expected input to call_model to have {expected}, but got {state}"
            raise ValueError(msg)
        _validate_chat_history(messages)
        if is_pydantic_model_class(state_schema):
            state.messages = messages
        else:
            state["messages"] = messages
        return state

    def _finish(state: Any, response: Any) -> dict:
        check_response(response)
        response.name = name
        if _are_more_steps_needed(state, response):
            lc = lc_messages_module()
            cls = lc.AIMessage if lc is not None and isinstance(response, lc.BaseMessage) else AIMessage
            return {"messages": [cls(id=response.id, content="Sorry, need more steps to process this request.")]}
        return {"messages": [response]}

    def call_model(state: Any, runtime: Any, config: dict) -> Any:
        if is_async_dynamic:
            msg = (
                "Async model callable provided but agent invoked synchronously. "
                "Use agent.ainvoke() or agent.astream(), or "
                "provide a sync model callable."
            )
            raise RuntimeError(msg)
        state = _get_model_input_state(state)
        m = _resolve(state, runtime)
        response = _call(m.invoke, _model_input(state), config)
        return _finish(state, response)

    async def acall_model(state: Any, runtime: Any, config: dict) -> Any:
        state = _get_model_input_state(state)
        m = check_dynamic_result(model, await model(state, runtime)) if is_async_dynamic else _resolve(state, runtime)
        model_input = await _amodel_input(state, config)
        ainvoke = getattr(m, "ainvoke", None)
        if ainvoke is not None:
            response = await (ainvoke(model_input, config) if _accepts_config(ainvoke) else ainvoke(model_input))
        else:
            response = await _in_thread(_call, m.invoke, model_input, config)
        return _finish(state, response)

    input_schema: Any
    if pre_model_hook is not None:
        if is_pydantic_model_class(state_schema):
            from pydantic import create_model

            input_schema = create_model(
                "CallModelInputSchema", llm_input_messages=(list[Any], ...), __base__=state_schema
            )
        else:

            class CallModelInputSchema(state_schema):  # type: ignore[misc,valid-type]
                llm_input_messages: list[Any]

            input_schema = CallModelInputSchema
    else:
        input_schema = state_schema

    def _structured_messages(state: Any) -> tuple[list, Any]:
        messages = _get_state_value(state, "messages")
        schema = response_format
        if isinstance(response_format, tuple):
            system_prompt, schema = response_format
            messages = [SystemMessage(content=system_prompt)] + list(messages)
        return messages, schema

    def generate_structured_response(state: Any, runtime: Any, config: dict) -> Any:
        if is_async_dynamic:
            msg = (
                "Async model callable provided but agent invoked synchronously. "
                "Use agent.ainvoke() or agent.astream(), or provide a sync model callable."
            )
            raise RuntimeError(msg)
        messages, schema = _structured_messages(state)
        base = _resolve(state, runtime) if is_dynamic else structured_source
        structured = check_structured_model(base).with_structured_output(schema)
        return {"structured_response": _call(structured.invoke, messages, config)}

    async def agenerate_structured_response(state: Any, runtime: Any, config: dict) -> Any:
        messages, schema = _structured_messages(state)
        if is_async_dynamic:
            base = check_dynamic_result(model, await model(state, runtime))
        else:
            base = _resolve(state, runtime) if is_dynamic else structured_source
        structured = check_structured_model(base).with_structured_output(schema)
        ainvoke = getattr(structured, "ainvoke", None)
        if ainvoke is not None:
            response = await (ainvoke(messages, config) if _accepts_config(ainvoke) else ainvoke(messages))
        else:
            response = await _in_thread(_call, structured.invoke, messages, config)
        return {"structured_response": response}

    agent_node = _AgentNode("agent", call_model, acall_model)
    compile_kwargs = {
        "checkpointer": checkpointer,
        "store": store,
        "interrupt_before": interrupt_before,
        "interrupt_after": interrupt_after,
        "debug": debug,
        "name": name,
    }

    if not tool_calling_enabled:
        workflow = StateGraph(state_schema=state_schema, context_schema=context_schema)
        workflow.add_node("agent", agent_node, input_schema=input_schema)
        if pre_model_hook is not None:
            workflow.add_node("pre_model_hook", pre_model_hook)
            workflow.add_edge("pre_model_hook", "agent")
            entrypoint = "pre_model_hook"
        else:
            entrypoint = "agent"
        workflow.set_entry_point(entrypoint)
        if post_model_hook is not None:
            workflow.add_node("post_model_hook", post_model_hook)
            workflow.add_edge("agent", "post_model_hook")
        if response_format is not None:
            workflow.add_node(
                "generate_structured_response",
                _AgentNode("generate_structured_response", generate_structured_response, agenerate_structured_response),
            )
            if post_model_hook is not None:
                workflow.add_edge("post_model_hook", "generate_structured_response")
            else:
                workflow.add_edge("agent", "generate_structured_response")
        return workflow.compile(**compile_kwargs)

    def should_continue(state: Any) -> Any:
        messages = _get_state_value(state, "messages")
        last = messages[-1]
        if not is_ai(last) or not last.tool_calls:
            if post_model_hook is not None:
                return "post_model_hook"
            if response_format is not None:
                return "generate_structured_response"
            return END
        if version == "v1":
            return "tools"
        if post_model_hook is not None:
            return "post_model_hook"
        return [
            Send("tools", ToolCallWithContext(__type="tool_call_with_context", tool_call=call, state=state))
            for call in last.tool_calls
        ]

    workflow = StateGraph(state_schema=state_schema, context_schema=context_schema)
    workflow.add_node("agent", agent_node, input_schema=input_schema)
    workflow.add_node("tools", tool_node)
    if pre_model_hook is not None:
        workflow.add_node("pre_model_hook", pre_model_hook)
        workflow.add_edge("pre_model_hook", "agent")
        entrypoint = "pre_model_hook"
    else:
        entrypoint = "agent"
    workflow.set_entry_point(entrypoint)

    agent_paths: list = []
    post_model_hook_paths = [entrypoint, "tools"]
    if post_model_hook is not None:
        workflow.add_node("post_model_hook", post_model_hook)
        agent_paths.append("post_model_hook")
        workflow.add_edge("agent", "post_model_hook")
    else:
        agent_paths.append("tools")
    if response_format is not None:
        workflow.add_node(
            "generate_structured_response",
            _AgentNode("generate_structured_response", generate_structured_response, agenerate_structured_response),
        )
        if post_model_hook is not None:
            post_model_hook_paths.append("generate_structured_response")
        else:
            agent_paths.append("generate_structured_response")
    elif post_model_hook is not None:
        post_model_hook_paths.append(END)
    else:
        agent_paths.append(END)

    if post_model_hook is not None:

        def post_model_hook_router(state: Any) -> Any:
            """Pending tool calls → `tools`; a tool result last → the entrypoint; else the end."""
            messages = _get_state_value(state, "messages")
            answered = [m.tool_call_id for m in messages if is_tool_message(m)]
            last_ai = next(m for m in reversed(messages) if is_ai(m))
            pending = [c for c in last_ai.tool_calls if c["id"] not in answered]
            if pending:
                return [
                    Send("tools", ToolCallWithContext(__type="tool_call_with_context", tool_call=call, state=state))
                    for call in pending
                ]
            if is_tool_message(messages[-1]):
                return entrypoint
            if response_format is not None:
                return "generate_structured_response"
            return END

        workflow.add_conditional_edges("post_model_hook", post_model_hook_router, path_map=post_model_hook_paths)

    workflow.add_conditional_edges("agent", should_continue, path_map=agent_paths)

    def route_tool_responses(state: Any) -> str:
        m = None
        for m in reversed(_get_state_value(state, "messages")):
            if not is_tool_message(m):
                break
            if m.name in should_return_direct:
                return END
        # parallel calls (v2): a return_direct tool may have run in another Send
        if is_ai(m) and m.tool_calls and any(call["name"] in should_return_direct for call in m.tool_calls):
            return END
        return entrypoint

    if should_return_direct:
        workflow.add_conditional_edges("tools", route_tool_responses, path_map=[entrypoint, END])
    else:
        workflow.add_edge("tools", entrypoint)
    return workflow.compile(**compile_kwargs)


create_tool_calling_executor = create_react_agent
"""Older name of `create_react_agent`, kept like LangGraph."""
