"""ToolNode's error texts and `handle_tool_errors` strategies (docs/BEHAVIOUR.md §13 M-4).

Why a separate module: the templates and the rules deciding which exceptions become
error ToolMessages are LangGraph's observable contract; keeping them apart from the
node's plumbing makes them easy to compare with LangGraph's texts.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable
from typing import Any, Union, get_args, get_origin

from lgembed.tools import ValidationError

__all__ = (
    "INVALID_TOOL_NAME_ERROR_TEMPLATE",
    "TOOL_CALL_ERROR_TEMPLATE",
    "TOOL_INVOCATION_ERROR_TEMPLATE",
    "ToolInvocationError",
)

INVALID_TOOL_NAME_ERROR_TEMPLATE = "Error: {requested_tool} is not a valid tool, try one of [{available_tools}]."
# M-4: content of the ToolMessage for a call to an unknown tool
TOOL_CALL_ERROR_TEMPLATE = "Error: {error}\n Please fix your mistakes."
# M-4: content for a handled exception (handle_tool_errors=True / exception types)
TOOL_INVOCATION_ERROR_TEMPLATE = (
    "Error invoking tool '{tool_name}' with kwargs {tool_kwargs} with error:\n"
    " {error}\n"
    " Please fix the error and try again."
)
# M-4: content for arguments that failed validation (handled by default)


class ToolInvocationError(Exception):
    """A tool was called with arguments that failed validation (only raised by `ToolNode`).

    `str(e)` is the M-4 text `"Error invoking tool 'add' with kwargs {...} with error:\\n
    a: ...\\n Please fix the error and try again."`.

    Attributes:
        message: that text.
        tool_name, tool_kwargs: the call (arguments as the model gave them).
        source: the validation error.
        filtered_errors: the errors about model-supplied arguments, or None.
    """

    def __init__(
        self, tool_name: str, source: Exception, tool_kwargs: dict, filtered_errors: list | None = None
    ) -> None:
        if filtered_errors is not None:
            display = "\n".join(
                f"{'.'.join(str(x) for x in e.get('loc', ()))}: {e.get('msg', 'Unknown error')}"
                for e in filtered_errors
            )
        else:
            display = str(source)
        self.message = TOOL_INVOCATION_ERROR_TEMPLATE.format(
            tool_name=tool_name, tool_kwargs=tool_kwargs, error=display
        )
        self.tool_name = tool_name
        self.tool_kwargs = tool_kwargs
        self.source = source
        self.filtered_errors = filtered_errors
        super().__init__(self.message)


def default_handle_tool_errors(e: Exception) -> str:
    """LangGraph's default: argument-validation errors become ToolMessages, others re-raise."""
    if isinstance(e, ToolInvocationError):
        return e.message
    raise e


def handle_tool_error(e: Exception, *, flag: Any) -> str:
    if isinstance(flag, (bool, tuple)) or (isinstance(flag, type) and issubclass(flag, Exception)):
        return TOOL_CALL_ERROR_TEMPLATE.format(error=repr(e))
    if isinstance(flag, str):
        return flag
    if callable(flag):
        return flag(e)
    msg = f"Got unexpected type of `handle_tool_error`. Expected bool, str or callable. Received: {flag}"
    raise ValueError(msg)


def infer_handled_types(handler: Callable) -> tuple[type[BaseException], ...]:
    """Exception types a handler callable accepts, from its first parameter's annotation.

    Raises:
        ValueError: an annotation that is not an Exception type or a union of them.
    """
    import typing

    params = list(inspect.signature(handler).parameters.values())
    if params:
        first = params[1] if params[0].name in ("self", "cls") and len(params) == 2 else params[0]
        hints = typing.get_type_hints(handler)
        if first.name in hints:
            origin = get_origin(first.annotation)
            if origin is Union or (origin is not None and getattr(origin, "__name__", "") == "UnionType"):
                args = get_args(first.annotation)
                if all(issubclass(a, Exception) for a in args):
                    return tuple(args)
                msg = (
                    "All types in the error handler error annotation must be "
                    "Exception types. For example, "
                    "`def custom_handler(e: Union[ValueError, TypeError])`. "
                    f"Got '{first.annotation}' instead."
                )
                raise ValueError(msg)
            exc_type = hints[first.name]
            if Exception in getattr(exc_type, "__mro__", ()):
                return (exc_type,)
            msg = (
                f"Arbitrary types are not supported in the error handler "
                f"signature. Please annotate the error with either a "
                f"specific Exception type or a union of Exception types. "
                "For example, `def custom_handler(e: ValueError)` or "
                "`def custom_handler(e: Union[ValueError, TypeError])`. "
                f"Got '{exc_type}' instead."
            )
            raise ValueError(msg)
    return (Exception,)


def validation_error_types() -> tuple[type[BaseException], ...]:
    # ours, plus pydantic's when the program uses it (langchain-core tools raise that one)
    types: list = [ValidationError]
    core = sys.modules.get("pydantic_core")
    if core is not None:
        types.append(core.ValidationError)
    v1 = sys.modules.get("pydantic.v1")
    if v1 is not None:
        types.append(v1.ValidationError)
    return tuple(types)
