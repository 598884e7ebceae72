"""The model side of `create_react_agent`: model strings, the chat-model protocol checks.

Why a separate module: `create_react_agent` accepts several model shapes (a chat model,
a `bind_tools` binding, a dynamic `model(state, runtime)`, an "openai:MODEL" string) and
must refuse wrong ones with an error that states the protocol; these checks and the
string resolution are independent of the graph the agent builds.
"""

from __future__ import annotations

import inspect
from typing import Any

from lgembed.messages import BaseMessage, lc_messages_module

__all__ = (
    "PROTOCOL",
    "check_dynamic_result",
    "check_model",
    "check_response",
    "check_structured_model",
    "is_lc_runnable",
    "model_from_string",
    "unbound",
)

PROTOCOL = (
    "A model must be an object with invoke(messages) returning an AIMessage (invoke(messages, config) "
    "also works; ainvoke is used for async runs when present; bind_tools(tools) returning the model to "
    "call, when the agent has tools; with_structured_output(schema), for response_format), e.g. "
    "lgembed.models.ChatOpenAI(base_url=..., model=...); or a function model(state, runtime) returning "
    "such an object for each step (a dynamic model)."
)

_LC_PROVIDERS = frozenset(
    (
        "openai anthropic azure_openai azure_ai cohere google_vertexai google_genai fireworks ollama "
        "together mistralai huggingface groq bedrock bedrock_converse google_anthropic_vertex deepseek "
        "ibm xai perplexity upstage"
    ).split()
)
# the providers langchain's init_chat_model knows, so "provider:model" is told from "llama3:8b"
_OPENAI_PREFIXES = ("gpt-", "o1", "o3", "chatgpt", "text-davinci")
# model names init_chat_model attributes to OpenAI when no provider is given


def model_from_string(spec: str) -> Any:
    """The model for a "provider:model" string, as langchain's init_chat_model parses it.

    "openai:MODEL" (and bare OpenAI model names such as "gpt-4o-mini") become
    `lgembed.models.ChatOpenAI(model=MODEL)`, imported only then.

    Raises:
        ValueError: another provider, or a string naming none.
        ImportError: this lgembed has no `lgembed.models`.
    """
    prefix, sep, rest = spec.partition(":")
    if sep and prefix in _LC_PROVIDERS:
        provider, name = prefix, rest
    else:
        provider, name = ("openai" if spec.lower().startswith(_OPENAI_PREFIXES) else None), spec
    fix = (
        "Pass a model object instead: lgembed.models.ChatOpenAI(base_url=..., model=...) talks to any "
        "OpenAI-compatible server (llama.cpp's server, Ollama, vLLM, LM Studio), or any object with "
        "invoke(messages) returning an AIMessage."
    )
    if provider is None:
        msg = (
            f"create_react_agent(model={spec!r}): cannot tell the model provider from this string; "
            f"lgembed resolves only 'openai:MODEL' strings (and OpenAI model names). {fix}"
        )
        raise ValueError(msg)
    if provider != "openai":
        msg = (
            f"create_react_agent(model={spec!r}): lgembed resolves only 'openai:MODEL' strings "
            f"(to lgembed.models.ChatOpenAI); provider {provider!r} needs langchain's init_chat_model "
            f"and its integration package, which lgembed does not use. {fix}"
        )
        raise ValueError(msg)
    import importlib

    try:
        models = importlib.import_module("lgembed.models")
    except ModuleNotFoundError as exc:
        if exc.name != "lgembed.models":
            raise
        msg = (
            f"create_react_agent(model={spec!r}): 'openai:MODEL' strings resolve to "
            "lgembed.models.ChatOpenAI, which this lgembed does not have. Pass a model object with "
            "invoke(messages) returning an AIMessage."
        )
        raise ImportError(msg) from exc
    return models.ChatOpenAI(model=name)


def describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def check_model(model: Any) -> bool:
    """Whether `model` is a dynamic model (a function of the state and runtime).

    Raises:
        TypeError: `model` is neither a chat model nor a function of (state, runtime),
            with the protocol it must follow.
    """
    if isinstance(model, type) and hasattr(model, "invoke"):
        msg = (
            f"create_react_agent(model={model.__name__}): got the class, not a model object; create one, "
            f"e.g. {model.__name__}(...). {PROTOCOL}"
        )
        raise TypeError(msg)
    if hasattr(model, "invoke"):
        if callable(model.invoke):
            return False
        msg = f"create_react_agent(model=...): {type(model).__name__}.invoke is not callable. {PROTOCOL}"
        raise TypeError(msg)
    if not callable(model):
        msg = (
            f"create_react_agent(model=...): got {type(model).__name__} {describe(model)}, which has no "
            f"invoke() and is not callable. {PROTOCOL}"
        )
        raise TypeError(msg)
    try:
        signature = inspect.signature(model)
    except (TypeError, ValueError):
        return True
    try:
        signature.bind(None, None)
    except TypeError:
        label = getattr(model, "__name__", type(model).__name__)
        msg = (
            f"create_react_agent(model={label}): a callable without invoke() is a dynamic model, called as "
            f"model(state, runtime) to get the chat model for each step, but {label}{signature} cannot "
            f"take (state, runtime). To use a function as the chat model itself, give it the chat-model "
            f"shape (an object with invoke). {PROTOCOL}"
        )
        raise TypeError(msg) from None
    return True


def check_dynamic_result(fn: Any, value: Any) -> Any:
    """The chat model a dynamic model returned.

    Raises:
        TypeError: the value has no `invoke`.
    """
    if hasattr(value, "invoke"):
        return value
    label = getattr(fn, "__name__", type(fn).__name__)
    msg = (
        f"create_react_agent: the dynamic model {label}(state, runtime) returned {type(value).__name__} "
        f"{describe(value)}, not a chat model: it must return an object with invoke(messages) returning "
        f"an AIMessage (with the agent's tools bound via bind_tools), e.g. "
        f"lgembed.models.ChatOpenAI(...).bind_tools(tools). {PROTOCOL}"
    )
    raise TypeError(msg)


def check_response(response: Any) -> None:
    """Check what a model's `invoke` returned.

    Raises:
        TypeError: the model returned something other than a message.
    """
    if isinstance(response, BaseMessage):
        return
    lc = lc_messages_module()
    if lc is not None and isinstance(response, lc.BaseMessage):
        return
    msg = (
        f"create_react_agent: the model's invoke(messages) returned {type(response).__name__} "
        f"{describe(response)}, not a message: it must return an AIMessage (lgembed.messages.AIMessage "
        f"or langchain-core's), with tool_calls to call tools, e.g. AIMessage(content='...'). {PROTOCOL}"
    )
    raise TypeError(msg)


def check_structured_model(model: Any) -> Any:
    """The model whose `with_structured_output` makes the structured response.

    As LangGraph's `_get_model`: the first model step of a langchain-core sequence, the
    model under a `bind_tools` binding, else the model itself.

    Raises:
        TypeError: the model has no `with_structured_output` (LangGraph's text, then the
            protocol).
    """
    steps = getattr(model, "steps", None)
    if isinstance(steps, list) and is_lc_runnable(model):
        model = next((s for s in steps if hasattr(unbound(s), "with_structured_output")), model)
    base = unbound(model)
    if hasattr(base, "with_structured_output"):
        return base
    msg = (
        f"Expected `model` to be a ChatModel or RunnableBinding (e.g. model.bind_tools(...)), got {type(model)}. "
        "lgembed: response_format needs a model with with_structured_output(schema), which returns an object "
        "whose invoke(messages) gives the structured response (lgembed.models.ChatOpenAI has it)."
    )
    raise TypeError(msg)


def is_lc_runnable(model: Any) -> bool:
    import sys

    runnables = sys.modules.get("langchain_core.runnables")
    return runnables is not None and isinstance(model, runnables.Runnable)


def unbound(model: Any) -> Any:
    # the model under a langchain-core RunnableBinding (bind_tools result), else the model
    bound = getattr(model, "bound", None)
    if bound is not None and isinstance(getattr(model, "kwargs", None), dict):
        return bound
    return model
