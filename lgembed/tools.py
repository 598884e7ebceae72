"""Tools for plain Python callables: the `@tool` decorator and the `Tool` class.

Why this module exists: LangGraph programs give `ToolNode` and `create_react_agent`
langchain-core tools (`@tool`, `StructuredTool`): objects with a name, a description,
a JSON schema of their arguments for the model, and `invoke(args)`, which validates
the model's arguments against the function's type hints (with pydantic) before
calling it. lgembed runs without langchain-core and pydantic, so this module gives
the same surface for plain functions (sync or async), with validation done by
`lgembed._tool_args` (pydantic's lax-mode rules and error texts for the types tool
signatures use).

What matches langchain-core 1.x (observed with langchain-core 1.8.3):
- `tool(func)`, `@tool`, `@tool("name")`, `@tool(description=..., return_direct=True,
  response_format="content_and_artifact")`; a function without a docstring needs a
  `description` ("Function must have a docstring if description not provided.").
- `.name`, `.description` (the docstring, stripped), `.return_direct`, `.args` (the
  argument schemas, pydantic's JSON-schema fragments with titles and defaults),
  `.tool_call_schema` (the object schema a model is given), `.func`, `.coroutine`.
- `invoke(input)` with a dict of arguments, a str (single-argument tools), or a tool
  call `{"name", "args", "id", "type": "tool_call"}`; the tool call form returns a
  `ToolMessage` whose content is formatted as langchain-core does (str as is, a list
  of content blocks as a list, anything else `json.dumps(..., ensure_ascii=False)`,
  falling back to `str()`). Extra arguments are dropped.
- Invalid arguments raise `ValidationError` (a `ValueError`) whose `errors()` have
  pydantic's `type`/`loc`/`msg`/`input` and whose text is pydantic's
  (`"2 validation errors for add\\na\\n  Input should be a valid integer, ..."`)
  without the "For further information visit https://errors.pydantic.dev/..." lines.
  It is not a `pydantic.ValidationError`: code that catches that class by name does
  not catch ours (catch `ValueError`).
- Injected arguments are hidden from the schema and not validated: parameters
  annotated `Annotated[T, InjectedToolCallId]` (filled from the tool call id),
  `Annotated[T, <any InjectedToolArg>]` (e.g. LangGraph's `InjectedState`,
  `InjectedStore`, filled by `ToolNode`), parameters typed `ToolRuntime`, and a
  parameter typed `RunnableConfig` (filled with the config passed to `invoke`).
  langchain-core's own markers are recognised when the program imported it.

Not provided (langchain-core features outside what LangGraph programs need from a
tool): callbacks, `handle_tool_error`/`handle_validation_error`,
`parse_docstring`, `infer_schema=False`, the single-string `Tool` class of
langchain-core (our `Tool` is the structured kind), and `args_schema` given as a
pydantic model is validated by pydantic itself.

Why slightly over 600 lines: the decorator, the `Tool` class, the injection markers
and the output formatting are one contract (langchain-core's tool surface, which
ToolNode relies on); the type-by-type validation rules live in `lgembed._tool_args`.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from typing import Annotated, Any, Literal, get_origin

from lgembed._tool_args import error_text, field_schema, lc_module, validate_value
from lgembed.messages import ToolMessage

__all__ = (
    "InjectedToolArg",
    "InjectedToolCallId",
    "StructuredTool",
    "Tool",
    "ToolException",
    "ValidationError",
    "convert_to_openai_tool",
    "tool",
)

_EMPTY = inspect.Parameter.empty
_FILTERED_ARGS = ("run_manager", "callbacks")
# parameters langchain-core leaves out of a tool's schema (its callback plumbing)

TOOL_MESSAGE_BLOCK_TYPES = (
    "text",
    "image_url",
    "image",
    "json",
    "search_result",
    "custom_tool_call_output",
    "document",
    "file",
)
# content-block types a tool may return as message content unchanged (langchain-core's list)


class ToolException(Exception):
    """An error a tool raises on purpose (langchain-core's `ToolException`)."""


class ValidationError(ValueError):
    """Tool arguments that do not match the function's type hints.

    Shaped like pydantic's `ValidationError`: `errors()` lists dicts with `type`,
    `loc`, `msg` and `input` (plus `ctx` for some types), `title` is the tool name,
    and `str()` is pydantic's text without the documentation URL lines.
    """

    def __init__(self, title: str, errors: list[dict]) -> None:
        self.title = title
        self._errors = errors
        super().__init__(error_text(title, errors))

    def errors(self) -> list[dict]:
        """The errors, in argument order (pydantic's `ErrorDetails` keys)."""
        return [dict(e) for e in self._errors]

    def error_count(self) -> int:
        """How many errors there are."""
        return len(self._errors)


class InjectedToolArg:
    """Marks a tool argument the runtime fills in (hidden from the model's schema).

    Use it in `Annotated[T, InjectedToolArg]`; `InjectedToolCallId` and LangGraph's
    `InjectedState`/`InjectedStore` are subclasses.
    """


class InjectedToolCallId(InjectedToolArg):
    """`Annotated[str, InjectedToolCallId]`: the id of the tool call being run."""


class _DirectlyInjectedToolArg:
    """Base of classes injected by type alone, without `Annotated` (LangGraph's `ToolRuntime`)."""


def _is_marker(obj: Any, base_name: str) -> bool:
    # an instance or subclass of lgembed's marker class, or of langchain-core's when imported
    bases: list = [InjectedToolArg if base_name == "InjectedToolArg" else InjectedToolCallId]
    lc = lc_module("langchain_core.tools.base")
    if lc is not None and hasattr(lc, base_name):
        bases.append(getattr(lc, base_name))
    for b in bases:
        if isinstance(obj, b) or (isinstance(obj, type) and issubclass(obj, b)):
            return True
    return False


def _is_directly_injected(tp: Any) -> bool:
    bases: list = [_DirectlyInjectedToolArg]
    lc = lc_module("langchain_core.tools.base")
    if lc is not None and hasattr(lc, "_DirectlyInjectedToolArg"):
        bases.append(lc._DirectlyInjectedToolArg)
    cls = get_origin(tp) or tp
    return isinstance(cls, type) and issubclass(cls, tuple(bases))


def injection_kind(tp: Any) -> str | None:
    """How a parameter with hint `tp` is injected: "tool_call_id", "injected", "direct", or None.

    Args:
        tp: the parameter's type hint (with `Annotated` extras).
    """
    if _is_directly_injected(tp):
        return "direct"
    if get_origin(tp) is Annotated:
        meta = tp.__metadata__
        if any(_is_marker(m, "InjectedToolCallId") for m in meta):
            return "tool_call_id"
        if any(_is_marker(m, "InjectedToolArg") for m in meta):
            return "injected"
    return None


def _is_config_hint(tp: Any) -> bool:
    name = tp if isinstance(tp, str) else getattr(tp, "__name__", None)
    return name == "RunnableConfig" or (isinstance(name, str) and name.startswith("Optional[RunnableConfig"))


class _Param:
    """One parameter of a tool function: how it is filled and validated."""

    __slots__ = ("default", "hint", "kind", "name", "positional")

    def __init__(self, name: str, hint: Any, default: Any, positional: bool, kind: str | None) -> None:
        self.name = name
        self.hint = hint
        self.default = default
        self.positional = positional
        self.kind = kind  # None (a model argument), "tool_call_id", "injected", "direct", "config"


def _params_of(func: Callable) -> list[_Param]:
    import typing

    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return []
    try:
        hints = typing.get_type_hints(func, include_extras=True)
    except Exception:  # noqa: BLE001 - unresolvable forward references: those params are Any
        hints = {}
    out = []
    for p in sig.parameters.values():
        if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        if p.name in _FILTERED_ARGS:
            continue
        hint = hints.get(p.name, p.annotation if not isinstance(p.annotation, str) else Any)
        kind = injection_kind(hint)
        if kind is None and _is_config_hint(p.annotation if isinstance(p.annotation, str) else hint):
            kind = "config"
        out.append(_Param(p.name, hint, p.default, p.kind is inspect.Parameter.POSITIONAL_ONLY, kind))
    return out


class Tool:
    """A callable exposed to a model: name, description, argument schema, `invoke`.

    Build one with `tool(func)` / `@tool` or `Tool.from_function(func, ...)`.

    Attributes:
        name: the name the model calls the tool by.
        description: what the tool does (shown to the model).
        return_direct: whether `create_react_agent` ends the run after this tool.
        response_format: "content", or "content_and_artifact" when the function
            returns `(content, artifact)`.
        func: the sync function (None for an async-only tool).
        coroutine: the async function, if any.
        metadata, tags: free-form values, kept for the program.
    """

    def __init__(
        self,
        name: str,
        description: str,
        *,
        func: Callable | None = None,
        coroutine: Callable | None = None,
        return_direct: bool = False,
        args_schema: dict | type | None = None,
        response_format: Literal["content", "content_and_artifact"] = "content",
        metadata: dict | None = None,
        tags: list | None = None,
        extras: dict | None = None,
    ) -> None:
        if func is None and coroutine is None:
            msg = "Tool: pass `func` or `coroutine` (got neither)"
            raise ValueError(msg)
        if response_format not in ("content", "content_and_artifact"):
            msg = f"Tool: 'response_format' must be 'content' or 'content_and_artifact' (got {response_format!r})"
            raise ValueError(msg)
        self.name = name
        self.description = description
        self.func = func
        self.coroutine = coroutine
        self.return_direct = return_direct
        self.response_format = response_format
        self.metadata = metadata
        self.tags = tags
        self.extras = extras
        self._args_schema = args_schema
        self._params = _params_of(func if func is not None else coroutine)  # type: ignore[arg-type]

    # --- construction ----------------------------------------------------------------

    @classmethod
    def from_function(
        cls,
        func: Callable | None = None,
        coroutine: Callable | None = None,
        name: str | None = None,
        description: str | None = None,
        return_direct: bool = False,
        args_schema: dict | type | None = None,
        response_format: Literal["content", "content_and_artifact"] = "content",
        **kwargs: Any,
    ) -> Tool:
        """A tool for `func` (and/or `coroutine`), named after the function and
        described by its docstring unless `name`/`description` are given.

        Raises:
            ValueError: neither function given, or no description and no docstring.
        """
        source = func if func is not None else coroutine
        if source is None:
            msg = "Function and/or coroutine must be provided"
            raise ValueError(msg)
        if func is not None and inspect.iscoroutinefunction(func) and coroutine is None:
            func, coroutine = None, func
        name = name or source.__name__
        if description is None:
            doc = source.__doc__
            if doc is None and isinstance(args_schema, dict):
                doc = args_schema.get("description")
            if not doc:
                msg = "Function must have a docstring if description not provided."
                raise ValueError(msg)
            description = doc.strip()
        return cls(
            name,
            description,
            func=func,
            coroutine=coroutine,
            return_direct=return_direct,
            args_schema=args_schema,
            response_format=response_format,
            **kwargs,
        )

    # --- schema ------------------------------------------------------------------------

    @property
    def args(self) -> dict[str, dict]:
        """Schemas of the arguments the model fills, by name (pydantic's JSON-schema fragments)."""
        schema = self._args_schema
        if isinstance(schema, dict):
            return dict(schema.get("properties", {}))
        if schema is not None and hasattr(schema, "model_json_schema"):
            return dict(schema.model_json_schema().get("properties", {}))
        return {p.name: field_schema(p.name, p.hint, p.default) for p in self._params if p.kind is None}

    @property
    def tool_call_schema(self) -> dict:
        """The JSON schema of the arguments object a model produces for this tool."""
        schema = self._args_schema
        if isinstance(schema, dict):
            return dict(schema)
        out: dict = {"description": self.description, "properties": self.args}
        required = [p.name for p in self._params if p.kind is None and p.default is _EMPTY]
        if required:
            out["required"] = required
        out["title"] = self.name
        out["type"] = "object"
        return out

    # --- running -------------------------------------------------------------------------

    def _prepare(self, input: Any, tool_call_id: str | None, config: Any) -> tuple[tuple, dict]:
        """Positional and keyword arguments for the function, validated.

        Raises:
            ValidationError: an argument does not match its type hint, or is missing.
            ValueError: an `InjectedToolCallId` argument without a tool call.
        """
        schema = self._args_schema
        if isinstance(schema, dict):
            if isinstance(input, str):
                msg = "String tool inputs are not allowed when using tools with JSON schema args_schema."
                raise ValueError(msg)  # noqa: TRY004 - langchain-core's exception class
            return (), dict(input)
        model_params = [p for p in self._params if p.kind is None]
        if schema is not None and hasattr(schema, "model_validate"):
            return self._prepare_pydantic(schema, input)
        if not model_params and not isinstance(input, dict):
            input = {}
        if isinstance(input, str):
            # a single str: validated as the first argument, passed through as given
            self._validate({model_params[0].name: input}, model_params)
            return (input,), {}
        if not isinstance(input, dict):
            err = {
                "type": "model_type",
                "loc": (),
                "msg": f"Input should be a valid dictionary or instance of {self.name}",
                "input": input,
                "ctx": {"class_name": self.name},
            }
            raise ValidationError(self.name, [err])
        values = self._validate(input, model_params)
        for p in self._params:
            if p.kind is None:
                continue
            if p.name in input:
                values[p.name] = input[p.name]
            elif p.kind == "tool_call_id":
                if tool_call_id is None:
                    msg = (
                        "When tool includes an InjectedToolCallId "
                        "argument, tool must always be invoked with a full "
                        "model ToolCall of the form: {'args': {...}, "
                        "'name': '...', 'type': 'tool_call', "
                        "'tool_call_id': '...'}"
                    )
                    raise ValueError(msg)
                values[p.name] = tool_call_id
            elif p.kind == "config":
                values[p.name] = config
            elif p.default is _EMPTY:
                err = {"type": "missing", "loc": (p.name,), "msg": "Field required", "input": input}
                raise ValidationError(self.name, [err])
        args = tuple(values.pop(p.name) for p in self._params if p.positional and p.name in values)
        return args, values

    def _validate(self, input: dict, params: list[_Param]) -> dict:
        errors: list = []
        out = {}
        for p in params:
            if p.name in input:
                n = len(errors)
                v = validate_value(p.hint, input[p.name], (p.name,), errors)
                if len(errors) == n:
                    out[p.name] = v
            elif p.default is _EMPTY:
                errors.append({"type": "missing", "loc": (p.name,), "msg": "Field required", "input": input})
        if errors:
            raise ValidationError(self.name, errors)
        return out

    def _prepare_pydantic(self, schema: Any, input: Any) -> tuple[tuple, dict]:
        # args_schema given as a pydantic model (the program uses pydantic): its own rules
        if isinstance(input, str):
            key = next(iter(schema.model_fields))
            schema.model_validate({key: input})
            return (input,), {}
        result = schema.model_validate(input)
        out = {}
        for k, info in schema.model_fields.items():
            if k in input or k in result.model_fields_set or not info.is_required():
                out[k] = getattr(result, k)
        return (), out

    def _format(self, response: Any, tool_call_id: str | None) -> Any:
        content, artifact = response, None
        if self.response_format == "content_and_artifact":
            msg = (
                "Since response_format='content_and_artifact' "
                "a two-tuple of the message content and raw tool output is "
                f"expected. Instead, generated response is of type: "
                f"{type(response)}."
            )
            if not isinstance(response, tuple) or len(response) != 2:
                raise ValueError(msg)
            content, artifact = response
        return format_output(content, artifact, tool_call_id, self.name, "success")

    @staticmethod
    def _split(input: Any) -> tuple[Any, str | None]:
        if isinstance(input, dict) and input.get("type") == "tool_call":
            return dict(input["args"]), input["id"]
        return input, None

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        """Validates `input` and calls the function.

        Args:
            input: a dict of arguments, a str (for a tool with one argument), or a tool
                call dict (`{"name", "args", "id", "type": "tool_call"}`).
            config: passed to a `RunnableConfig`-typed parameter, if the function has one.

        Returns:
            The function's result; for a tool call input, a `ToolMessage` (or the
            `Command`/`ToolMessage` the function returned).

        Raises:
            ValidationError: invalid arguments.
            NotImplementedError: the tool has only an async function.
            Exception: whatever the function raises.
        """
        if self.func is None:
            msg = f"{type(self).__name__} does not support sync invocation."
            raise NotImplementedError(msg)
        args, call_id = self._split(input)
        pos, kw = self._prepare(args, call_id, config)
        return self._format(self.func(*pos, **kw), call_id)

    async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        """Async `invoke`: awaits the coroutine, or runs the sync function in a worker thread.

        Raises:
            ValidationError, Exception: as `invoke`.
        """
        args, call_id = self._split(input)
        pos, kw = self._prepare(args, call_id, config)
        if self.coroutine is not None:
            response = await self.coroutine(*pos, **kw)
        else:
            import asyncio
            import contextvars
            import functools

            ctx = contextvars.copy_context()
            loop = asyncio.get_running_loop()
            response = await loop.run_in_executor(None, functools.partial(ctx.run, self.func, *pos, **kw))
        return self._format(response, call_id)

    def get_name(self) -> str:
        return self.name

    def __repr__(self) -> str:
        fn = self.func if self.func is not None else self.coroutine
        return f"{type(self).__name__}(name={self.name!r}, description={self.description!r}, func={fn!r})"


class StructuredTool(Tool):
    """What `tool()` returns: a `Tool` (named like langchain-core's class for familiar reprs and errors)."""


def _is_tool_output(obj: Any) -> bool:
    # langchain-core's ToolOutputMixin: a ToolMessage (either kind) or a Command
    if isinstance(obj, ToolMessage):
        return True
    types_mod = sys.modules.get("lgembed.types")
    if types_mod is not None and isinstance(obj, types_mod.Command):
        return True
    lc = lc_module("langchain_core.messages.tool")
    return lc is not None and isinstance(obj, lc.ToolOutputMixin)


def _is_content_block(obj: Any) -> bool:
    if isinstance(obj, str):
        return True
    if isinstance(obj, dict):
        return obj.get("type", None) in TOOL_MESSAGE_BLOCK_TYPES
    return False


def stringify(content: Any) -> str:
    """`json.dumps(content, ensure_ascii=False)`, or `str(content)` when that fails."""
    import json

    try:
        return json.dumps(content, ensure_ascii=False)
    except Exception:  # noqa: BLE001 - langchain-core falls back to str() for anything
        return str(content)


def format_output(content: Any, artifact: Any, tool_call_id: str | None, name: str, status: str) -> Any:
    """A tool result as langchain-core returns it from `invoke`: the raw result without a
    tool call id, else a `ToolMessage` with formatted content (see the module docstring)."""
    from collections.abc import Sequence

    if isinstance(content, list) and content and all(_is_tool_output(x) for x in content):
        return content
    if _is_tool_output(content) or tool_call_id is None:
        return content
    if isinstance(content, str):
        text: Any = content
    elif isinstance(content, Sequence) and all(_is_content_block(x) for x in content):
        text = list(content)
    else:
        text = stringify(content)
    return ToolMessage(text, artifact=artifact, tool_call_id=tool_call_id, name=name, status=status)


def tool(
    name_or_callable: str | Callable | None = None,
    runnable: Any = None,
    *args: Any,
    description: str | None = None,
    return_direct: bool = False,
    args_schema: dict | type | None = None,
    infer_schema: bool = True,
    response_format: Literal["content", "content_and_artifact"] = "content",
    parse_docstring: bool = False,
    error_on_invalid_docstring: bool = True,
    extras: dict | None = None,
) -> Any:
    """Makes a tool from a function; usable as `tool(f)`, `@tool`, `@tool("name")`, `@tool(...)`.

    Args:
        name_or_callable: the function, or the tool's name (then a decorator is returned).
        runnable: not supported (langchain-core turns Runnables into tools).
        description: overrides the docstring.
        return_direct: end a `create_react_agent` run after this tool.
        args_schema: a JSON schema dict (arguments then go unvalidated) or a pydantic model.
        response_format: "content" or "content_and_artifact".
        infer_schema, parse_docstring, error_on_invalid_docstring: accepted for
            signature compatibility; only the defaults are supported.
        extras: free-form provider-specific values, kept on the tool.

    Returns:
        A `StructuredTool`, or a decorator that makes one.

    Raises:
        ValueError: no docstring and no description; a first argument that is neither
            a str nor a named callable; an unsupported option.
        TypeError: a `runnable` that is not callable.
    """
    if not infer_schema or parse_docstring:
        msg = "tool(): infer_schema=False and parse_docstring=True are not supported by lgembed"
        raise ValueError(msg)

    def make(func: Callable, name: str | None = None) -> StructuredTool:
        coroutine = func if inspect.iscoroutinefunction(func) else None
        return StructuredTool.from_function(
            None if coroutine is not None else func,
            coroutine,
            name=name,
            description=description,
            return_direct=return_direct,
            args_schema=args_schema,
            response_format=response_format,
            extras=extras,
        )

    if runnable is not None:
        if not callable(runnable):
            msg = f"{runnable!r} is not a callable object"
            raise TypeError(msg)
        msg = "tool(name, runnable): Runnables are not supported by lgembed; pass a function"
        raise ValueError(msg)
    if isinstance(name_or_callable, str):
        tool_name = name_or_callable
        return lambda func: make(func, tool_name)
    if callable(name_or_callable) and hasattr(name_or_callable, "__name__"):
        return make(name_or_callable)
    if name_or_callable is not None:
        msg = (
            "The first argument must be a string or a callable with a __name__ "
            f"for tool decorator. Got {type(name_or_callable)}"
        )
        raise ValueError(msg)
    return lambda func: make(func)


def _rm_titles(schema: Any, in_properties: bool = False) -> Any:
    # langchain-core's convert_to_openai_tool drops "title" keys (not properties named "title")
    if isinstance(schema, dict):
        out = {}
        for k, v in schema.items():
            if k == "title" and not in_properties and isinstance(v, str):
                continue
            out[k] = _rm_titles(v, k == "properties")
        return out
    if isinstance(schema, list):
        return [_rm_titles(v) for v in schema]
    return schema


def convert_to_openai_tool(t: Any) -> dict:
    """A tool as an OpenAI `{"type": "function", "function": {...}}` spec (langchain-core's shape).

    Args:
        t: an lgembed `Tool`, a plain function (made a tool first), or a dict already
            in OpenAI format (returned unchanged).

    Raises:
        ValueError: a function without a docstring.
    """
    if isinstance(t, dict):
        return t
    if not isinstance(t, Tool):
        t = tool(t)
    schema = t.tool_call_schema
    params = {k: v for k, v in schema.items() if k not in ("title", "description")}
    params = _rm_titles(params)
    params.setdefault("properties", {})
    params.setdefault("type", "object")
    return {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": params}}
