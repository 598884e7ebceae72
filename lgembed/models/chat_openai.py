"""`ChatOpenAI`: a chat model for any OpenAI-compatible server, without langchain-openai.

Why this module exists: LangGraph agents get their model from langchain-openai; lgembed
does not depend on langchain-core, so it ships this small client with the same constructor
arguments and methods (`invoke`, `ainvoke`, `stream`, `astream`, `batch`, `abatch`,
`bind_tools`, `with_structured_output`, `with_config`, `bind`). Replies are lgembed
`AIMessage`s shaped as langchain-openai shapes them (see `_convert`).

Inside a graph run that streams `messages`, a call streams from the server and sends each
`AIMessageChunk` to the run's stream with LangGraph's metadata (lgembed.pregel._messages
.model_stream), as LangGraph's callback handler does; `invoke` then returns the sum of the
chunks (same id, so the node's returned message is not streamed twice).

Deviations from langchain-openai: no Responses API, no `n > 1`, no tiktoken counting, no
callbacks (`config["callbacks"]` is ignored); an API key is optional when `base_url` is
given (local servers need none); `ainvoke`/`astream` run the blocking client in a worker
thread; `tool_grammar` (lgembed-only) constrains small models with a GBNF grammar or a
JSON schema (see `lgembed.models.grammar`).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from typing import Any

from lgembed.models import _convert
from lgembed.models._http import HTTPClient

__all__ = ("ChatOpenAI",)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# langchain-openai's (the openai SDK's) default endpoint
DEFAULT_TIMEOUT = 600.0
# seconds; the openai SDK's default request timeout
DEFAULT_MAX_RETRIES = 2
# the openai SDK's default
TOOL_GRAMMARS = (None, "gbnf", "json_schema")
# accepted values of `tool_grammar`

_ALIASES = {
    "model_name": "model",
    "openai_api_key": "api_key",
    "openai_api_base": "base_url",
    "request_timeout": "timeout",
    "max_completion_tokens": "max_tokens",
    "stop_sequences": "stop",
}
# langchain-openai's alternative constructor names


def _new_run_id() -> str:
    return f"lc_run--{uuid.uuid4()}"


class _Runnable:
    """What `ChatOpenAI` and its bindings share: config merging, batch, async wrappers."""

    def _call_parts(self) -> tuple[Any, dict, dict]:  # (model, kwargs, config)
        raise NotImplementedError

    def invoke(self, input: Any, config: dict | None = None, **kwargs: Any) -> Any:
        """The model's reply to `input` (an `AIMessage`; a parsed value after with_structured_output).

        Raises:
            lgembed.models.errors.APIError: the server failed (see `ChatOpenAI`).
        """
        model, bound, base = self._call_parts()
        return model._invoke(input, _merge_config(base, config), {**bound, **kwargs})

    def stream(self, input: Any, config: dict | None = None, **kwargs: Any) -> Iterator[Any]:
        """The reply as `AIMessageChunk`s (their sum is the reply); the last has chunk_position "last".

        Raises:
            lgembed.models.errors.APIError: the server failed.
        """
        model, bound, base = self._call_parts()
        return model._stream(input, _merge_config(base, config), {**bound, **kwargs})

    async def ainvoke(self, input: Any, config: dict | None = None, **kwargs: Any) -> Any:
        """`invoke` in a worker thread (the context, so the running task, is carried over)."""
        import asyncio

        return await asyncio.to_thread(self.invoke, input, config, **kwargs)

    async def astream(self, input: Any, config: dict | None = None, **kwargs: Any) -> Any:
        """`stream` driven from a worker thread, chunk by chunk."""
        import asyncio
        import contextvars

        loop = asyncio.get_running_loop()
        queue: asyncio.Queue = asyncio.Queue()
        done = object()
        ctx = contextvars.copy_context()

        def produce() -> None:
            try:
                for chunk in self.stream(input, config, **kwargs):
                    loop.call_soon_threadsafe(queue.put_nowait, (chunk, None))
            except BaseException as e:  # noqa: BLE001 - handed to the consumer
                loop.call_soon_threadsafe(queue.put_nowait, (done, e))
                return
            loop.call_soon_threadsafe(queue.put_nowait, (done, None))

        # run in the caller's context, so the running task (token streaming) is visible
        fut = loop.run_in_executor(None, ctx.run, produce)
        try:
            while True:
                item, error = await queue.get()
                if item is done:
                    if error is not None:
                        raise error
                    break
                yield item
        finally:
            await fut

    def batch(self, inputs: list, config: dict | list | None = None, *, return_exceptions: bool = False, **kwargs: Any) -> list:
        """`invoke` on each input, in parallel threads (config `max_concurrency`, default 4).

        Raises:
            Exception: the first failure, unless `return_exceptions`.
        """
        from concurrent.futures import ThreadPoolExecutor
        import contextvars

        configs = config if isinstance(config, list) else [config] * len(inputs)
        limit = (configs[0] or {}).get("max_concurrency") if configs else None

        def one(pair: tuple) -> Any:
            try:
                return self.invoke(pair[0], pair[1], **kwargs)
            except Exception as e:
                if return_exceptions:
                    return e
                raise

        if not inputs:
            return []
        with ThreadPoolExecutor(max_workers=limit or min(4, len(inputs))) as pool:
            ctxs = [contextvars.copy_context() for _ in inputs]
            futures = [pool.submit(c.run, one, p) for c, p in zip(ctxs, zip(inputs, configs))]
            return [f.result() for f in futures]

    async def abatch(self, inputs: list, config: dict | list | None = None, *, return_exceptions: bool = False, **kwargs: Any) -> list:
        """`batch` from a worker thread."""
        import asyncio

        return await asyncio.to_thread(self.batch, inputs, config, return_exceptions=return_exceptions, **kwargs)

    def with_config(self, config: dict | None = None, **fields: Any) -> _Binding:
        """A binding that adds `config` (tags, metadata, ...) to every call."""
        model, bound, base = self._call_parts()
        return _Binding(model, bound, _merge_config(base, {**(config or {}), **fields}), parser=getattr(self, "parser", None))

    def bind(self, **kwargs: Any) -> _Binding:
        """A binding that adds request fields to every call."""
        model, bound, base = self._call_parts()
        return _Binding(model, {**bound, **kwargs}, base, parser=getattr(self, "parser", None))

    def bind_tools(self, tools: Any, *, tool_choice: Any = None, **kwargs: Any) -> _Binding:
        """A binding that offers `tools` to the model (langchain-openai's `bind_tools`).

        Args:
            tools: lgembed tools, plain functions (made tools), OpenAI tool dicts, JSON
                schemas with a `title`, langchain-core tools (when the program uses it).
            tool_choice: a tool name, "auto", "none", "any"/"required"/True, or an OpenAI dict.
            **kwargs: more request fields (`parallel_tool_calls`, `strict`, ...).

        Raises:
            ValueError: a tool_choice of an unknown type, or a tool that cannot be converted.
        """
        from lgembed.models._tools import bind_tools_kwargs

        model, bound, base = self._call_parts()
        return _Binding(model, {**bound, **bind_tools_kwargs(tools, tool_choice, kwargs)}, base)

    def with_structured_output(self, schema: Any, *, method: str = "json_schema", include_raw: bool = False, strict: bool | None = None, **kwargs: Any) -> _Binding:
        """A binding whose `invoke` returns the reply parsed into `schema`.

        Args:
            schema: a JSON schema dict (needs a `title`, or an OpenAI tool dict), a
                TypedDict, a dataclass, or a pydantic model class (when installed).
            method: "json_schema" (response_format) or "function_calling" (a forced tool).
            include_raw: return `{"raw": AIMessage, "parsed": value, "parsing_error": exc|None}`.

        Raises:
            ValueError: an unknown method or a schema that cannot be converted.
        """
        from lgembed.models._tools import structured_binding

        model, bound, base = self._call_parts()
        extra, parser = structured_binding(schema, method, include_raw, strict)
        return _Binding(model, {**bound, **extra, **kwargs}, base, parser=parser)


def _merge_config(base: dict | None, config: dict | None) -> dict:
    if not base:
        return dict(config or {})
    if not config:
        return dict(base)
    out = {**base, **config}
    if base.get("tags") or config.get("tags"):
        tags = list(base.get("tags") or ())
        tags.extend(t for t in config.get("tags") or () if t not in tags)
        out["tags"] = tags
    if base.get("metadata") or config.get("metadata"):
        out["metadata"] = {**(base.get("metadata") or {}), **(config.get("metadata") or {})}
    return out


class _Binding(_Runnable):
    """A model with request fields (`kwargs`: tools, tool_choice, ...) and config bound,
    like langchain-core's RunnableBinding (`bound`, `kwargs`, `config` attributes;
    `create_react_agent` reads `kwargs["tools"]` to check pre-bound tools)."""

    def __init__(self, bound: ChatOpenAI, kwargs: dict, config: dict, parser: Any = None) -> None:
        self.bound = bound
        self.kwargs = kwargs
        self.config = config
        self.parser = parser

    def _call_parts(self) -> tuple[Any, dict, dict]:
        return self.bound, self.kwargs, self.config

    def invoke(self, input: Any, config: dict | None = None, **kwargs: Any) -> Any:
        message = super().invoke(input, config, **kwargs)
        return self.parser(message) if self.parser is not None else message

    def __repr__(self) -> str:
        return f"RunnableBinding(bound={self.bound!r}, kwargs={self.kwargs!r}, config={self.config!r})"


class ChatOpenAI(_Runnable):
    """A chat model served over OpenAI's chat-completions API (OpenAI, llama.cpp's server,
    Ollama, vLLM, LM Studio, ...).

    Args:
        model: the model name the server expects (`model_name` also accepted).
        base_url: e.g. "http://127.0.0.1:8080/v1"; default env OPENAI_BASE_URL, then
            OPENAI_API_BASE, then OpenAI's URL.
        api_key: default env OPENAI_API_KEY; may be omitted when base_url is given.
        temperature, max_tokens, stop, top_p, seed, presence_penalty, frequency_penalty:
            sampling fields sent when set.
        timeout: seconds to connect and for each read (default 600; None: no limit).
        max_retries: retries on connection errors, timeouts, 408/409/429/5xx (default 2).
        streaming: stream from the server even outside `stream()` (invoke sums the chunks).
        stream_usage: ask for usage in the last streamed chunk (default: only for OpenAI's URL).
        model_kwargs: extra request fields; extra_body: extra fields merged into the body
            (e.g. llama.cpp's `cache_prompt`, vLLM's `guided_json`).
        default_headers: extra HTTP headers.
        tool_grammar: None (plain OpenAI tools), "gbnf" (llama.cpp's `grammar` field) or
            "json_schema" (`response_format`): constrain bound tools' calls, see grammar.py.

    Raises:
        ValueError: an unknown argument, a bad tool_grammar, or no API key for OpenAI's URL.
    """

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        max_retries: int | None = DEFAULT_MAX_RETRIES,
        stop: list[str] | str | None = None,
        streaming: bool = False,
        stream_usage: bool | None = None,
        model_kwargs: dict | None = None,
        extra_body: dict | None = None,
        top_p: float | None = None,
        seed: int | None = None,
        presence_penalty: float | None = None,
        frequency_penalty: float | None = None,
        default_headers: dict | None = None,
        tool_grammar: str | None = None,
        name: str | None = None,
        **kwargs: Any,
    ) -> None:
        for alias, target in _ALIASES.items():
            if alias in kwargs:
                value = kwargs.pop(alias)
                if target == "model":
                    model = value
                elif target == "api_key":
                    api_key = value
                elif target == "base_url":
                    base_url = value
                elif target == "timeout":
                    timeout = value
                elif target == "max_tokens":
                    max_tokens = value
                elif target == "stop":
                    stop = value
        if kwargs:
            msg = (
                f"ChatOpenAI got unknown arguments {sorted(kwargs)}; pass extra request fields in "
                "model_kwargs={...} or extra_body={...}"
            )
            raise ValueError(msg)
        if tool_grammar not in TOOL_GRAMMARS:
            msg = f"ChatOpenAI: tool_grammar must be one of {TOOL_GRAMMARS} (got {tool_grammar!r})"
            raise ValueError(msg)
        env_base = os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE")
        self.openai_api_base = base_url
        url = base_url or env_base or DEFAULT_BASE_URL
        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        if key is None and url.rstrip("/") == DEFAULT_BASE_URL:
            msg = (
                "ChatOpenAI: no API key for https://api.openai.com/v1. Pass api_key=... or set "
                "OPENAI_API_KEY, or pass base_url=... for a local server."
            )
            raise ValueError(msg)
        self.model_name = model or "gpt-3.5-turbo"
        self.base_url = url
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.max_retries = DEFAULT_MAX_RETRIES if max_retries is None else max_retries
        self.stop = [stop] if isinstance(stop, str) else stop
        self.streaming = streaming
        # langchain-openai turns usage streaming on by default only for OpenAI's own URL
        self.stream_usage = stream_usage if stream_usage is not None else (True if base_url is None and env_base is None else None)
        self.model_kwargs = dict(model_kwargs or {})
        self.extra_body = extra_body
        self.top_p = top_p
        self.seed = seed
        self.presence_penalty = presence_penalty
        self.frequency_penalty = frequency_penalty
        self.tool_grammar = tool_grammar
        self.name = name
        self._client = HTTPClient(url, key, timeout, self.max_retries, default_headers)

    @property
    def model(self) -> str:
        """The model name (langchain-openai's `model` alias of `model_name`)."""
        return self.model_name

    def __repr__(self) -> str:
        return f"ChatOpenAI(model={self.model_name!r}, base_url={self.base_url!r})"

    def _call_parts(self) -> tuple[Any, dict, dict]:
        return self, {}, {}

    # --- request building ----------------------------------------------------------------

    def _default_params(self) -> dict:
        optional = {
            "presence_penalty": self.presence_penalty,
            "frequency_penalty": self.frequency_penalty,
            "seed": self.seed,
            "top_p": self.top_p,
            "stop": self.stop or None,
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
        }
        return {
            "model": self.model_name,
            "stream": self.streaming,
            **{k: v for k, v in optional.items() if v is not None},
            **self.model_kwargs,
        }

    def ls_params(self, kwargs: dict) -> dict:
        """The `ls_*` metadata LangChain attaches to a model run (streamed with each chunk)."""
        params = {**self._default_params(), **kwargs}
        out = {
            "ls_provider": "openai",
            "ls_model_name": params.get("model", self.model_name),
            "ls_model_type": "chat",
            "ls_temperature": params.get("temperature", self.temperature),
        }
        if params.get("max_tokens") or self.max_tokens:
            out["ls_max_tokens"] = params.get("max_tokens") or self.max_tokens
        if params.get("stop"):
            out["ls_stop"] = params["stop"]
        return out

    def _payload(self, input: Any, kwargs: dict, *, stream: bool) -> dict:
        messages = _convert.input_messages(input)
        kwargs = dict(kwargs)
        kwargs.pop("stream_usage", None)
        grammar_mode = kwargs.pop("tool_grammar", self.tool_grammar)
        payload = {**self._default_params(), **kwargs}
        if stream:
            payload["stream"] = True
        extra = payload.pop("extra_body", None)
        dicts = [_convert.message_to_dict(m) for m in messages]
        tools = payload.get("tools")
        if grammar_mode and tools:
            from lgembed.models._tools import apply_grammar

            apply_grammar(payload, dicts, grammar_mode)
        payload["messages"] = dicts
        for body_extra in (self.extra_body, extra):
            if body_extra:
                payload.update(body_extra)
        return payload

    def _wants_usage(self, kwargs: dict) -> bool:
        for source in (
            kwargs.get("stream_usage"),
            (kwargs.get("stream_options") or {}).get("include_usage"),
            (self.model_kwargs.get("stream_options") or {}).get("include_usage"),
            self.stream_usage,
        ):
            if isinstance(source, bool):
                return source
        return bool(self.stream_usage)

    # --- calls -----------------------------------------------------------------------------

    def _tags(self, config: dict) -> list:
        return list(config.get("tags") or ())

    def _invoke(self, input: Any, config: dict, kwargs: dict) -> Any:
        from lgembed.pregel._messages import model_stream

        sink = model_stream(self._tags(config), self.ls_params(kwargs))
        if sink is not None or self.streaming or _messages_mode_running():
            total = None
            for chunk in self._chunks(input, kwargs, sink):
                total = chunk if total is None else total + chunk
            from lgembed.messages._chunks import message_chunk_to_message

            message = message_chunk_to_message(total)
            return self._after_grammar(message, kwargs)
        payload = self._payload(input, kwargs, stream=False)
        data = self._client.post("/chat/completions", payload)
        message = _convert.message_from_response(data, self.model_name, _new_run_id() + "-0")
        return self._after_grammar(message, kwargs)

    def _after_grammar(self, message: Any, kwargs: dict) -> Any:
        mode = kwargs.get("tool_grammar", self.tool_grammar)
        if not mode or not kwargs.get("tools") or message.tool_calls:
            return message
        from lgembed.models._tools import tool_names
        from lgembed.models.grammar import parse_reply

        content, calls, invalid = parse_reply(message.text, tool_names(kwargs["tools"]))
        message.content = content
        message.tool_calls = calls
        message.invalid_tool_calls = invalid
        return message

    def _stream(self, input: Any, config: dict, kwargs: dict) -> Iterator[Any]:
        from lgembed.pregel._messages import model_stream

        sink = model_stream(self._tags(config), self.ls_params(kwargs))
        return self._chunks(input, kwargs, sink)

    def _chunks(self, input: Any, kwargs: dict, sink: Any) -> Iterator[Any]:
        from lgembed.messages import AIMessageChunk

        payload = self._payload(input, kwargs, stream=True)
        if self._wants_usage(kwargs):
            payload["stream_options"] = {"include_usage": True}
        run_id = _new_run_id()
        for event in self._client.stream("/chat/completions", payload):
            chunk = _convert.chunk_from_event(event, run_id)
            if chunk is None:
                continue
            if sink is not None:
                sink.emit(chunk)
            yield chunk
        last = AIMessageChunk(content="", id=run_id, chunk_position="last")
        if sink is not None:
            sink.emit(last)
        yield last


def _messages_mode_running() -> bool:
    # a task of a run that streams `messages` (even when this model's tokens are filtered out,
    # LangGraph's model still streams from the server)
    from lgembed.config import _current_task

    task = _current_task()
    return task is not None and "messages" in task.run.modes
