"""State fields to channels (B-2): the builder's half of schema introspection.

What the engine and the other layers need (annotated keys, objects to state updates,
pydantic recognition) lives below, in `lgembed._schema`; its names are re-exported
here for the builder's modules.
"""

from __future__ import annotations

from inspect import isclass, signature
from typing import Any, get_args, get_origin, get_type_hints

from lgembed._channels import BaseChannel, BinaryOperatorAggregate, LastValue
from lgembed._schema import (  # noqa: F401  (re-exported for the builder's modules)
    annotated_keys,
    annotated_update_tuples,
    is_pydantic_model,
    is_pydantic_model_class,
    pick_mapper,
    schema_value_types,
    update_tuples,
)
from lgembed.managed import is_managed_value

try:  # Python 3.11+
    from typing import NotRequired, Required
except ImportError:  # pragma: no cover - Python 3.10
    NotRequired = Required = None  # type: ignore[assignment]

_REQ = tuple(x for x in (Required, NotRequired) if x is not None)


def get_channels(schema: Any) -> tuple[dict[str, BaseChannel], dict[str, Any], dict[str, Any]]:
    """Channels, managed values and type hints of a state schema (B-2)."""
    if not hasattr(schema, "__annotations__"):
        return {"__root__": get_channel("__root__", schema, allow_managed=False)}, {}, {}
    hints = get_type_hints(schema, include_extras=True)
    channels: dict[str, BaseChannel] = {}
    managed: dict[str, Any] = {}
    for name, typ in hints.items():
        if name == "__slots__":
            continue
        item = get_channel(name, typ)
        if isinstance(item, BaseChannel):
            channels[name] = item
        elif is_managed_value(item):
            managed[name] = item
    return channels, managed, hints


def get_channel(name: str, annotation: Any, *, allow_managed: bool = True) -> Any:
    """The channel (or managed value class) of one field (B-3)."""
    if _REQ and getattr(annotation, "__origin__", None) in _REQ:
        annotation = annotation.__args__[0]
    manager = _managed_value(annotation)
    if manager is not None:
        if allow_managed:
            return manager
        raise ValueError(f"This {annotation} not allowed in this position")
    channel = _field_channel(annotation)
    if channel is None:
        channel = _field_binop(annotation)
    if channel is None:
        channel = LastValue(annotation)
    channel.key = name
    return channel


def _field_channel(typ: Any) -> BaseChannel | None:
    for item in getattr(typ, "__metadata__", ()):
        if isinstance(item, BaseChannel):
            return item
        if isclass(item) and issubclass(item, BaseChannel):
            return item(typ.__origin__ if hasattr(typ, "__origin__") else typ)
    return None


def _field_binop(typ: Any) -> BinaryOperatorAggregate | None:
    meta = getattr(typ, "__metadata__", None)
    if meta and callable(meta[-1]):
        sig = signature(meta[-1])
        positional = sum(
            p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in sig.parameters.values()
        )
        if positional == 2:
            return BinaryOperatorAggregate(typ, meta[-1])
        raise ValueError(f"Invalid reducer signature. Expected (a, b) -> c. Got {sig}")
    return None


def _managed_value(typ: Any) -> Any:
    meta = getattr(typ, "__metadata__", None)
    if meta:
        decoration = get_origin(meta[-1]) or meta[-1]
        if is_managed_value(decoration):
            return decoration
    if get_origin(typ) is not None:
        args = get_args(typ)
        if args and args[0]:
            return _managed_value(args[0])
    return None
