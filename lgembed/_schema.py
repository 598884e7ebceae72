"""Schema introspection without channels: annotated keys, objects to state updates,
pydantic / dataclass recognition, the user classes a schema names (B-3, N-1, K-3, Z-4).

Why apart from `lgembed.graph._fields` (which turns state fields into channels): the
engine (`lgembed.pregel`), `lgembed.types` (Command updates), the prebuilt agent and
the service need these, and the builder sits above the engine: living here, in the
bottom layer, they are imported downwards by everyone (tests/test_layers.py).

Strategy: nothing here imports pydantic; a pydantic model is recognised through
`sys.modules` only when the application has already imported pydantic.
"""

from __future__ import annotations

import sys
import types
import weakref
from dataclasses import is_dataclass
from inspect import isclass
from typing import Any, Sequence, get_args, get_type_hints

from lgembed._typing import MISSING

__all__ = (
    "annotated_keys",
    "annotated_update_tuples",
    "is_pydantic_model",
    "is_pydantic_model_class",
    "pick_mapper",
    "schema_value_types",
    "update_tuples",
)

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
