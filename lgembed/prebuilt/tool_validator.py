"""`ValidationNode`: validates the tool calls of the last AIMessage without running tools.

Why this module exists: it is LangGraph's `langgraph.prebuilt.tool_validator` for programs
that run on lgembed. Extraction graphs use it to check a model's tool calls against
pydantic schemas and re-prompt the model with the validation errors: each call becomes a
`ToolMessage` whose content is the validated arguments as JSON
(`model_dump_json()`), or the error text with `additional_kwargs={"is_error": True}`.

Behaviour and texts are LangGraph 1.2's (checked with LangGraph 1.2.22 + langchain-core
1.8.3 + pydantic 2.14): the schemas (pydantic models by class name, tools by tool name,
functions by function name through a model named "Validation" built from the signature
as langchain-core's `create_schema_from_function` builds it), the default error text
(`repr(error)` + "Respond after fixing all validation errors."), `format_error(error,
call, schema)`, list or `{"messages": [...]}` input and output, and the errors for bad
input. lgembed `Tool`s built from a function are validated against a pydantic model of
the function's signature named after the tool (what langchain-core's `@tool` builds).

pydantic is optional in lgembed (`pip install 'lgembed[pydantic]'`): ValidationNode is
importable without it, and constructing one says what to install.

Deviations: the calls are validated one after the other in the node's task, not in a
thread pool (validation is CPU-bound under the GIL; results and order are the same);
`tags` are kept on the node but not added to the run's config.
"""

from __future__ import annotations

import inspect
import sys
import textwrap
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from lgembed.messages import ToolMessage
from lgembed.prebuilt._tool_messages import is_ai, lc_family
from lgembed.warnings import LangGraphDeprecatedSinceV10

__all__ = ("ValidationNode",)

_FILTERED_ARGS = ("run_manager", "callbacks")
# parameters langchain-core leaves out of a schema built from a function

_DEPRECATION = (
    "ValidationNode is deprecated. LangGraph 1.x points to `create_agent` from `langchain.agents` "
    "with custom tool error handling; lgembed does not ship `langchain.agents` and keeps "
    "`lgembed.prebuilt.ValidationNode` working"
)


def _default_format_error(error: BaseException, call: dict, schema: type) -> str:
    """Default error formatting function."""
    return f"{error!r}\n\nRespond after fixing all validation errors."


def _pydantic() -> Any:
    """The pydantic module.

    Raises:
        ImportError: pydantic is not installed, with the install command.
    """
    try:
        import pydantic
    except ImportError as exc:
        msg = (
            "ValidationNode validates tool calls with pydantic, which is not installed: "
            "install it with `pip install 'lgembed[pydantic]'` (or `pip install 'pydantic>=2'`)."
        )
        raise ImportError(msg) from exc
    return pydantic


def _pydantic_v1_base() -> Any:
    # pydantic.v1's BaseModel only when the program imported pydantic.v1 (its models exist only then)
    v1 = sys.modules.get("pydantic.v1")
    return getattr(v1, "BaseModel", None) if v1 is not None else None


def _is_model_class(obj: Any) -> bool:
    if not isinstance(obj, type):
        return False
    pydantic = sys.modules.get("pydantic")
    if pydantic is not None and issubclass(obj, pydantic.BaseModel):
        return True
    v1 = _pydantic_v1_base()
    return v1 is not None and issubclass(obj, v1)


def _is_config_param(param: inspect.Parameter, hint: Any) -> bool:
    from lgembed.tools import _is_config_hint

    return _is_config_hint(param.annotation if isinstance(param.annotation, str) else hint)


def schema_from_function(model_name: str, func: Callable, *, filter_config: bool = False) -> type:
    """A pydantic model of `func`'s parameters, as langchain-core's `create_schema_from_function`.

    Parameters become fields with their annotations (Any when unannotated) and defaults
    (required when none); `run_manager` and `callbacks` are left out, and `self`/`cls` of
    a method; `*args` is a tuple field and `**kwargs` a dict field; extra keys are ignored;
    arbitrary types are allowed. `filter_config` also leaves out a `RunnableConfig`
    parameter (what langchain-core's `@tool` does).

    Raises:
        ImportError: pydantic is not installed.
    """
    import typing

    pydantic = _pydantic()
    from pydantic.fields import FieldInfo
    from pydantic_core import PydanticUndefined

    sig = inspect.signature(func)
    try:
        hints = typing.get_type_hints(func, include_extras=True)
    except Exception:  # noqa: BLE001 - unresolvable forward references: those params are Any
        hints = {}
    params = list(sig.parameters.values())
    in_class = bool(getattr(func, "__qualname__", "") and "." in func.__qualname__)
    if params and params[0].name in ("self", "cls") and in_class:
        params = params[1:]
    fields: dict[str, Any] = {}
    for p in params:
        if p.name in _FILTERED_ARGS:
            continue
        hint = Any if p.annotation is p.empty else hints.get(p.name, Any)
        if filter_config and _is_config_param(p, hint):
            continue
        if p.kind is p.VAR_POSITIONAL:
            fields[p.name] = (tuple[hint, ...], FieldInfo(default=None))
        elif p.kind is p.VAR_KEYWORD:
            fields[p.name] = (dict[Any, hint], FieldInfo(default=None))
        else:
            default = PydanticUndefined if p.default is p.empty else p.default
            fields[p.name] = (hint, FieldInfo(default=default))
    model = pydantic.create_model(
        model_name, __config__=pydantic.ConfigDict(arbitrary_types_allowed=True), **fields
    )
    model.__doc__ = textwrap.dedent(func.__doc__ or "")
    return model


def _tool_schema(t: Any) -> type:
    """The pydantic model a tool's arguments are validated against.

    Raises:
        ValueError: the tool has no schema, or a schema that is not a pydantic model
            (LangGraph's texts).
    """
    from lgembed.tools import Tool

    if isinstance(t, Tool):
        args_schema = t._args_schema  # noqa: SLF001 - the schema the tool was given, if any
        if args_schema is None:
            return schema_from_function(t.name, t.func or t.coroutine, filter_config=True)
    else:
        args_schema = t.args_schema
    if args_schema is None:
        msg = f"Tool {t.name} does not have an args_schema defined."
        raise ValueError(msg)
    if not _is_model_class(args_schema):
        msg = (
            "Validation node only works with tools that have a pydantic BaseModel args_schema. "
            f"Got {t.name} with args_schema: {args_schema}."
        )
        raise ValueError(msg)
    return args_schema


def _is_tool(obj: Any) -> bool:
    from lgembed.tools import Tool

    if isinstance(obj, Tool):
        return True
    lc_tools = sys.modules.get("langchain_core.tools")
    return lc_tools is not None and isinstance(obj, lc_tools.BaseTool)


class ValidationNode:
    """A node that validates all tool calls of the last AIMessage (LangGraph's ValidationNode).

    It does not run the tools: each call is validated against its schema, and becomes a
    ToolMessage (`name` and `tool_call_id` of the call) whose content is the validated
    arguments as JSON, or `format_error(error, call, schema)` with
    `additional_kwargs={"is_error": True}` when validation fails. Given a list of
    messages it returns a list; given a state dict, `{"messages": [...]}`.

    Example (re-prompting the model until its call is valid)::

        builder = StateGraph(MessagesState)
        builder.add_node("model", call_model)
        builder.add_node(ValidationNode([SelectNumber]))  # node "validation"
    """

    def __init__(
        self,
        schemas: Sequence[Any],
        *,
        format_error: Callable[[BaseException, dict, type], str] | None = None,
        name: str = "validation",
        tags: list[str] | None = None,
    ) -> None:
        """Collect the schemas by the name the model calls them by.

        Args:
            schemas: pydantic model classes (by class name), tools (lgembed `Tool`s or
                langchain-core tools, by tool name), or functions (by function name; a
                model of their signature).
            format_error: `(error, call, schema) -> str`, the content of an error message.
            name: the node's name.
            tags: kept on the node.

        Raises:
            ImportError: pydantic is not installed.
            ValueError: a schema of another kind, or a tool without a pydantic schema
                (LangGraph's texts).
        """
        if type(self) is ValidationNode:
            warnings.warn(LangGraphDeprecatedSinceV10(_DEPRECATION), stacklevel=2)
        _pydantic()
        self.name = name
        self.tags = tags
        self._format_error = format_error or _default_format_error
        self.schemas_by_name: dict[str, type] = {}
        for schema in schemas:
            if _is_tool(schema):
                self.schemas_by_name[schema.name] = _tool_schema(schema)
            elif _is_model_class(schema):
                self.schemas_by_name[schema.__name__] = schema
            elif callable(schema):
                self.schemas_by_name[schema.__name__] = schema_from_function("Validation", schema)
            else:
                msg = f"Unsupported input to ValidationNode. Expected BaseModel, tool or function. Got: {type(schema)}."
                raise ValueError(msg)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        warnings.warn(LangGraphDeprecatedSinceV10(_DEPRECATION), stacklevel=2)
        super().__init_subclass__(**kwargs)

    def get_name(self) -> str:
        return self.name

    def __repr__(self) -> str:
        return f"ValidationNode(schemas=[{', '.join(self.schemas_by_name)}], name={self.name!r})"

    def _get_message(self, input: Any) -> tuple[str, Any]:
        """("list" or "dict", the last AIMessage).

        Raises:
            ValueError: no messages, or the last one is not an AIMessage (LangGraph's texts).
        """
        if isinstance(input, list):
            output_type = "list"
            messages: list = input
        elif messages := input.get("messages", []):
            output_type = "dict"
        else:
            msg = "No message found in input"
            raise ValueError(msg)
        message = messages[-1]
        if not is_ai(message):
            msg = "Last message is not an AIMessage"
            raise ValueError(msg)
        return output_type, message

    def _run_one(self, call: dict, lc: Any) -> Any:
        pydantic = sys.modules["pydantic"]
        v1 = sys.modules.get("pydantic.v1")
        errors: tuple = (pydantic.ValidationError,) + ((v1.ValidationError,) if v1 is not None else ())
        schema = self.schemas_by_name[call["name"]]
        cls = lc.ToolMessage if lc is not None else ToolMessage
        try:
            if issubclass(schema, pydantic.BaseModel):
                content = schema.model_validate(call["args"]).model_dump_json()
            else:
                content = schema.validate(call["args"]).json()
        except errors as e:
            return cls(
                content=self._format_error(e, call, schema),
                name=call["name"],
                tool_call_id=call["id"],
                additional_kwargs={"is_error": True},
            )
        return cls(content=content, name=call["name"], tool_call_id=call["id"])

    def invoke(self, input: Any, config: dict | None = None, **kwargs: Any) -> Any:
        """Validate the tool calls of the last AIMessage of `input`.

        Raises:
            ValueError: no messages, or the last message is not an AIMessage.
            KeyError: a tool call names no schema (as in LangGraph).
        """
        output_type, message = self._get_message(input)
        lc = lc_family(message)
        outputs = [self._run_one(call, lc) for call in message.tool_calls]
        return outputs if output_type == "list" else {"messages": outputs}

    async def ainvoke(self, input: Any, config: dict | None = None, **kwargs: Any) -> Any:
        """`invoke` (validation does no I/O)."""
        return self.invoke(input, config)
