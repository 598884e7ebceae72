"""Schema introspection: state fields to channels, objects to state updates (B-2, B-3, N-1).

Strategy: nothing here imports pydantic; a pydantic model is recognised through
`sys.modules` only when the application has already imported pydantic.
"""

from __future__ import annotations

import sys
import types
import weakref
from dataclasses import is_dataclass
from inspect import isclass, signature
from typing import Any, Sequence, get_args, get_origin, get_type_hints

from lgembed._channels import BaseChannel, BinaryOperatorAggregate, LastValue
from lgembed._typing import MISSING
from lgembed.managed import is_managed_value

try:  # Python 3.11+
    from typing import NotRequired, Required
except ImportError:  # pragma: no cover - Python 3.10
    NotRequired = Required = None  # type: ignore[assignment]

_REQ = tuple(x for x in (Required, NotRequired) if x is not None)
_ANNOTATED_KEYS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def is_pydantic_model_class(obj: Any) -> bool:
    pyd = sys.modules.get("pydantic")
    return pyd is not None and isclass(obj) and issubclass(obj, pyd.BaseModel)


def is_pydantic_model(obj: Any) -> bool:
    pyd = sys.modules.get("pydantic")
    return pyd is not None and isinstance(obj, pyd.BaseModel)


def annotated_keys(cls: type) -> tuple[str, ...]:
    """Annotated attribute names of `cls` and its bases (base classes first)."""
    try:
        return _ANNOTATED_KEYS[cls]
    except (KeyError, TypeError):
        pass
    keys: list[str] = []
    for base in reversed(cls.__mro__):
        ann = base.__dict__.get("__annotations__")
        if ann is None:
            ann = getattr(base, "__annotations__", None)
        if ann is None or isinstance(ann, types.GetSetDescriptorType):
            continue
        keys.extend(ann.keys())
    result = tuple(keys)
    try:
        _ANNOTATED_KEYS[cls] = result
    except TypeError:
        pass
    return result


def update_tuples(obj: Any, keys: Sequence[str]) -> list[tuple[str, Any]]:
    """Writes of an annotated object (dataclass / pydantic instance) returned by a node (N-1).

    A key is written when the attribute exists and its value is not None, or the
    field's default is not None, or (pydantic) the field was set explicitly.
    """
    if is_pydantic_model(obj):
        keep = obj.model_fields_set
        defaults = {k: f.default for k, f in type(obj).model_fields.items()}
    else:
        keep = None
        defaults = {}
    out = []
    for k in keys:
        value = getattr(obj, k, MISSING)
        if value is MISSING:
            continue
        if value is not None or defaults.get(k, MISSING) is not None or (keep is not None and k in keep):
            out.append((k, value))
    return out


def annotated_update_tuples(obj: Any) -> list[tuple[str, Any]] | None:
    """`update_tuples` over all annotated keys of `obj`'s class, or None if it has none."""
    keys = annotated_keys(type(obj))
    if not keys:
        return None
    return update_tuples(obj, keys)


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


def pick_mapper(keys: Sequence[str], schema: Any):
    """Callable turning a read state dict into the schema class (pydantic / dataclass), or None (K-3)."""
    if list(keys) == ["__root__"]:
        return None
    if isclass(schema) and (is_pydantic_model_class(schema) or is_dataclass(schema)):
        return lambda values: schema(**values)
    return None


def schema_value_types(schemas: Any) -> list:
    """User classes a checkpoint of these schemas may hold: the dataclass / pydantic schemas
    themselves and every Enum, dataclass, NamedTuple or pydantic class named in their
    field annotations (recursively). The serializer allows these (Z-4, strict mode)."""
    from dataclasses import is_dataclass
    from enum import Enum

    found: list = []
    seen: set = set()

    def visit(tp: Any, depth: int) -> None:
        if depth > 8:
            return
        try:
            hash(tp)
        except TypeError:
            return
        if tp in seen:
            return
        seen.add(tp)
        for arg in get_args(tp):
            visit(arg, depth + 1)
        meta = getattr(tp, "__metadata__", None)
        if meta is not None:
            visit(getattr(tp, "__origin__", None), depth + 1)
        if not isclass(tp) or tp.__module__ in ("builtins", "typing", "collections.abc"):
            return
        user = (
            issubclass(tp, Enum)
            or is_dataclass(tp)
            or (issubclass(tp, tuple) and hasattr(tp, "_fields"))
            or is_pydantic_model_class(tp)
        )
        if user and tp not in found:
            found.append(tp)
        if user or getattr(tp, "__annotations__", None):
            try:
                hints = get_type_hints(tp, include_extras=True)
            except Exception:
                hints = {}
            for hint in hints.values():
                visit(hint, depth + 1)

    for schema in schemas:
        if schema is not None:
            visit(schema, 0)
    return found
