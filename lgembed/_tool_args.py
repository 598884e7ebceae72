"""Tool arguments: type hints -> JSON schema, and lax validation with pydantic's error shapes.

Why this module exists: langchain-core turns a tool function's signature into a
pydantic model, validates the model's arguments with it, and LangGraph's `ToolNode`
shows the model pydantic's error lines (`"a: Input should be a valid integer, unable
to parse string as an integer"`, docs/BEHAVIOUR.md §13 M-4). lgembed has no pydantic, so this
module reproduces the part of pydantic's *lax mode* that tool signatures use, with the
same error `type`, `loc` and `msg` values and the same JSON-schema fragments.

Covered: `int`, `float`, `str`, `bool`, `bytes`, `None`, `Any`/unannotated,
`list`/`tuple`/`set`/`frozenset`/`Sequence` (with item types), `dict`/`Mapping`
(with key/value types), `Optional`/`Union` (pydantic's "smart" union: an exact-type
match wins, then the first member that validates), `Literal`, `Annotated` (a str in
the metadata becomes the field description), `Enum`, dataclasses, TypedDicts and, when
the program uses pydantic, pydantic models (validated by pydantic itself). Any other
class is checked with `isinstance` (pydantic's `arbitrary_types_allowed`).

Deviations (documented, tested): nested classes (Enum, dataclass, TypedDict) are
inlined in the JSON schema instead of referenced through `$defs`; str validators have
no length/pattern constraints; errors carry no documentation URL.

Why slightly over 600 lines: one validator and one schema fragment per supported type
form, kept side by side so that a type's coercion rules, error texts and schema are
reviewed together against pydantic's.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import math
import sys
from collections import deque
from collections.abc import Iterator, KeysView, Mapping, ValuesView
from collections.abc import Sequence as _AbcSequence
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

__all__ = ("ArgError", "error_text", "field_schema", "json_schema", "lc_module", "title_of", "validate_value")

try:  # Python 3.10+: `int | None`
    from types import UnionType as _UnionType
except ImportError:  # pragma: no cover - Python < 3.10 is not supported
    _UnionType = Union  # type: ignore[assignment,misc]


_EMPTY = inspect.Parameter.empty
_FAIL = object()
# returned by a validator that appended errors (never a valid value)

ArgError = dict
"""One error: `{"type", "loc", "msg", "input"}` (+ `"ctx"`), pydantic's `ErrorDetails` keys."""

_BOOL_TRUE = frozenset(("1", "on", "t", "true", "y", "yes"))
_BOOL_FALSE = frozenset(("0", "off", "f", "false", "n", "no"))
# str values pydantic's lax bool accepts (case-insensitive, not stripped)

_LISTLIKE = (list, tuple, set, frozenset, deque, KeysView, ValuesView, Iterator)
# inputs pydantic's lax list/tuple/set validators accept (never str, bytes or a mapping)


def title_of(name: str) -> str:
    """A field title the way pydantic derives it: `some_arg` -> `Some Arg`."""
    return name.title().replace("_", " ")


def _err(errors: list, kind: str, loc: tuple, msg: str, value: Any, ctx: dict | None = None) -> object:
    e = {"type": kind, "loc": loc, "msg": msg, "input": value}
    if ctx is not None:
        e["ctx"] = ctx
    errors.append(e)
    return _FAIL


# --- scalars -------------------------------------------------------------------------


def _decode(value: Any) -> Any:
    if isinstance(value, (bytes, bytearray)):
        try:
            return bytes(value).decode()
        except UnicodeDecodeError:
            return None
    return value


def _v_int(value: Any, loc: tuple, errors: list, strict: bool) -> Any:
    if value.__class__ is int:
        return value
    if strict:
        return _err(errors, "int_type", loc, "Input should be a valid integer", value)
    if isinstance(value, int):  # bool and int subclasses
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            return _err(errors, "finite_number", loc, "Input should be a finite number", value)
        if value.is_integer():
            return int(value)
        return _err(
            errors, "int_from_float", loc, "Input should be a valid integer, got a number with a fractional part", value
        )
    text = _decode(value)
    if isinstance(text, str):
        s = text.strip()
        sign = ""
        if s[:1] in "+-" and s:
            sign, s = s[0], s[1:]
        whole, dot, frac = s.partition(".")
        digits = whole.replace("_", "")
        if (
            digits
            and digits.isascii()
            and digits.isdigit()
            and not whole.startswith("_")
            and not whole.endswith("_")
            and "__" not in whole
            and (not dot or (frac and frac.isascii() and frac.isdigit() and not frac.strip("0")))
        ):
            return int(sign + digits)
        return _err(
            errors, "int_parsing", loc, "Input should be a valid integer, unable to parse string as an integer", value
        )
    return _err(errors, "int_type", loc, "Input should be a valid integer", value)


def _v_float(value: Any, loc: tuple, errors: list, strict: bool) -> Any:
    if value.__class__ is float:
        return value
    if isinstance(value, (int, float)) and (not strict or value.__class__ is int):
        return float(value)
    if strict:
        return _err(errors, "float_type", loc, "Input should be a valid number", value)
    text = _decode(value)
    if isinstance(text, str):
        s = text.strip()
        if s and s.isascii():
            try:
                return float(s)
            except ValueError:
                pass
        return _err(
            errors, "float_parsing", loc, "Input should be a valid number, unable to parse string as a number", value
        )
    return _err(errors, "float_type", loc, "Input should be a valid number", value)


def _v_bool(value: Any, loc: tuple, errors: list, strict: bool) -> Any:
    if value is True or value is False:
        return value
    if strict:
        return _err(errors, "bool_type", loc, "Input should be a valid boolean", value)
    if isinstance(value, int):
        if value in (0, 1):
            return bool(value)
        return _err(errors, "bool_parsing", loc, "Input should be a valid boolean, unable to interpret input", value)
    if isinstance(value, float) and value in (0.0, 1.0):
        return bool(value)
    text = _decode(value)
    if isinstance(text, str):
        low = text.lower()
        if low in _BOOL_TRUE:
            return True
        if low in _BOOL_FALSE:
            return False
        return _err(errors, "bool_parsing", loc, "Input should be a valid boolean, unable to interpret input", value)
    return _err(errors, "bool_type", loc, "Input should be a valid boolean", value)


def _v_str(value: Any, loc: tuple, errors: list, strict: bool) -> Any:
    if isinstance(value, str):
        return value
    if not strict and isinstance(value, (bytes, bytearray)):
        text = _decode(value)
        if text is None:
            return _err(
                errors,
                "string_unicode",
                loc,
                "Input should be a valid string, unable to parse raw data as a unicode string",
                value,
            )
        return text
    return _err(errors, "string_type", loc, "Input should be a valid string", value)


def _v_bytes(value: Any, loc: tuple, errors: list, strict: bool) -> Any:
    if isinstance(value, bytes):
        return value
    if not strict:
        if isinstance(value, bytearray):
            return bytes(value)
        if isinstance(value, str):
            return value.encode()
    return _err(errors, "bytes_type", loc, "Input should be a valid bytes", value)


_SCALARS = {int: _v_int, float: _v_float, bool: _v_bool, str: _v_str, bytes: _v_bytes}


# --- containers ----------------------------------------------------------------------


def _items(tp_args: tuple, value: Any, loc: tuple, errors: list, strict: bool) -> Any:
    item_tp = tp_args[0] if tp_args else Any
    out = []
    failed = False
    for i, item in enumerate(value):
        v = validate_value(item_tp, item, loc + (i,), errors, strict)
        if v is _FAIL:
            failed = True
        out.append(v)
    return _FAIL if failed else out


def _v_list(args: tuple, value: Any, loc: tuple, errors: list, strict: bool) -> Any:
    if isinstance(value, list) or (not strict and isinstance(value, _LISTLIKE)):
        return _items(args, value, loc, errors, strict)
    return _err(errors, "list_type", loc, "Input should be a valid list", value)


def _v_sequence(args: tuple, value: Any, loc: tuple, errors: list, strict: bool) -> Any:
    if isinstance(value, str):
        return _err(errors, "sequence_str", loc, "'str' instances are not allowed as a Sequence value", value)
    if isinstance(value, (list, tuple, deque)) or (not strict and isinstance(value, _AbcSequence)):
        out = _items(args, value, loc, errors, strict)
        return tuple(out) if out is not _FAIL and isinstance(value, tuple) else out
    return _err(errors, "is_instance_of", loc, "Input should be an instance of Sequence", value)


def _v_tuple(args: tuple, value: Any, loc: tuple, errors: list, strict: bool) -> Any:
    if not (isinstance(value, tuple) or (not strict and isinstance(value, _LISTLIKE))):
        return _err(errors, "tuple_type", loc, "Input should be a valid tuple", value)
    if not args or (len(args) == 2 and args[1] is Ellipsis):
        out = _items(args[:1], value, loc, errors, strict)
        return _FAIL if out is _FAIL else tuple(out)
    if args == ((),):  # tuple[()]
        args = ()
    items = list(value)
    n = len(args)
    if len(items) > n:
        return _err(
            errors,
            "too_long",
            loc,
            f"Tuple should have at most {n} item{'s' if n != 1 else ''} after validation, not {len(items)}",
            value,
            {"field_type": "Tuple", "max_length": n, "actual_length": len(items)},
        )
    out = []
    failed = False
    for i, tp in enumerate(args):
        if i >= len(items):
            _err(errors, "missing", loc + (i,), "Field required", value)
            failed = True
            continue
        v = validate_value(tp, items[i], loc + (i,), errors, strict)
        failed = failed or v is _FAIL
        out.append(v)
    return _FAIL if failed else tuple(out)


def _v_set(args: tuple, value: Any, loc: tuple, errors: list, strict: bool, frozen: bool) -> Any:
    want = frozenset if frozen else set
    if isinstance(value, want) or (not strict and isinstance(value, _LISTLIKE)):
        out = _items(args, value, loc, errors, strict)
        if out is _FAIL:
            return _FAIL
        try:
            return want(out)
        except TypeError:
            return _err(errors, "set_item_not_hashable", loc, "Set items should be hashable", value)
    if frozen:
        return _err(errors, "frozen_set_type", loc, "Input should be a valid frozenset", value)
    return _err(errors, "set_type", loc, "Input should be a valid set", value)


def _v_dict(args: tuple, value: Any, loc: tuple, errors: list, strict: bool) -> Any:
    if not (isinstance(value, dict) or (not strict and isinstance(value, Mapping))):
        return _err(errors, "dict_type", loc, "Input should be a valid dictionary", value)
    if not args:
        return dict(value)
    key_tp, val_tp = args if len(args) == 2 else (Any, Any)
    out = {}
    failed = False
    for k, v in value.items():
        kv = validate_value(key_tp, k, loc + (k, "[key]"), errors, strict)
        vv = validate_value(val_tp, v, loc + (k,), errors, strict)
        if kv is _FAIL or vv is _FAIL:
            failed = True
        else:
            out[kv] = vv
    return _FAIL if failed else out


# --- unions and literals -------------------------------------------------------------


def _tag(tp: Any) -> str:
    # pydantic's name for a union member in error locations: 'int', 'list[int]', ...
    origin = get_origin(tp)
    if origin is Literal:
        return "literal[" + ",".join(repr(a) for a in get_args(tp)) + "]"
    if origin is Annotated:
        return _tag(get_args(tp)[0])
    if origin is not None:
        name = getattr(origin, "__name__", str(origin))
        return f"{name}[{','.join(_tag(a) for a in get_args(tp))}]"
    if tp is None or tp is type(None):
        return "none"
    return getattr(tp, "__name__", str(tp))


def _v_union(args: tuple, value: Any, loc: tuple, errors: list, strict: bool) -> Any:
    members = [a for a in args if a is not type(None)]
    if len(members) < len(args):  # Optional[...]: None is valid, other errors are the inner type's
        if value is None:
            return None
        if len(members) == 1:
            return validate_value(members[0], value, loc, errors, strict)
    # pydantic's smart mode: an exact (strict) match wins, then the first lax match
    for tp in members:
        scratch: list = []
        v = validate_value(tp, value, loc, scratch, True)
        if v is not _FAIL:
            return v
    if strict:
        return _err(errors, "union_tag_invalid", loc, "Input should match one of the union members", value)
    collected: list = []
    for tp in members:
        scratch = []
        v = validate_value(tp, value, loc + (_tag(tp),), scratch, False)
        if v is not _FAIL:
            return v
        collected.extend(scratch)
    errors.extend(collected)
    return _FAIL


def _expected(choices: list) -> str:
    # "'a'", "'a' or 'b'", "'a', 'b' or 'c'" (pydantic's literal/enum wording)
    reprs = [repr(c) for c in choices]
    if len(reprs) == 1:
        return reprs[0]
    return ", ".join(reprs[:-1]) + " or " + reprs[-1]


def _v_literal(args: tuple, value: Any, loc: tuple, errors: list, strict: bool) -> Any:
    for choice in args:
        if choice.__class__ is value.__class__ and choice == value:
            return choice
    if not strict:
        for choice in args:
            # lax: 1.0 and True match 1; a str never matches a number
            if not isinstance(choice, str) and not isinstance(value, str):
                try:
                    equal = choice == value
                except Exception:  # noqa: BLE001 - values whose == raises do not match
                    equal = False
                if equal:
                    return choice
    expected = _expected(list(args))
    return _err(errors, "literal_error", loc, f"Input should be {expected}", value, {"expected": expected})


# --- classes -------------------------------------------------------------------------


def _is_typeddict(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, dict) and hasattr(tp, "__total__") and hasattr(tp, "__annotations__")


def _is_pydantic_class(tp: Any) -> bool:
    return isinstance(tp, type) and hasattr(tp, "model_validate") and hasattr(tp, "model_fields")


def _hints(tp: Any) -> dict:
    import typing

    try:
        return typing.get_type_hints(tp, include_extras=True)
    except Exception:  # noqa: BLE001 - unresolvable forward references: validate as Any
        return {k: Any for k in getattr(tp, "__annotations__", {})}


def _v_fields(tp: Any, value: Any, loc: tuple, errors: list, strict: bool, required: set) -> Any:
    out = {}
    failed = False
    for name, ftp in _hints(tp).items():
        if name in value:
            v = validate_value(ftp, value[name], loc + (name,), errors, strict)
            failed = failed or v is _FAIL
            out[name] = v
        elif name in required:
            _err(errors, "missing", loc + (name,), "Field required", value)
            failed = True
    return _FAIL if failed else out


def _v_class(tp: type, value: Any, loc: tuple, errors: list, strict: bool) -> Any:
    if issubclass(tp, enum.Enum):
        if isinstance(value, tp):
            return value
        if not strict:
            for member in tp:
                if member.value == value and (isinstance(member.value, str) == isinstance(value, str)):
                    return member
        expected = _expected([m.value for m in tp])
        return _err(errors, "enum", loc, f"Input should be {expected}", value, {"expected": expected})
    if _is_typeddict(tp):
        if not isinstance(value, Mapping):
            return _err(errors, "dict_type", loc, "Input should be a valid dictionary", value)
        required = set(getattr(tp, "__required_keys__", ()))
        return _v_fields(tp, value, loc, errors, strict, required)
    if dataclasses.is_dataclass(tp):
        if isinstance(value, tp):
            return value
        if not isinstance(value, Mapping):
            return _err(
                errors,
                "dataclass_type",
                loc,
                f"Input should be a dictionary or an instance of {tp.__name__}",
                value,
                {"class_name": tp.__name__},
            )
        fields = [f for f in dataclasses.fields(tp) if f.init]
        required = {
            f.name
            for f in fields
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING  # type: ignore[misc]
        }
        kwargs = _v_fields(tp, value, loc, errors, strict, required)
        if kwargs is _FAIL:
            return _FAIL
        return tp(**{f.name: kwargs[f.name] for f in fields if f.name in kwargs})
    if _is_pydantic_class(tp):
        if isinstance(value, tp):
            return value
        try:
            return tp.model_validate(value)
        except Exception as e:
            details = getattr(e, "errors", None)
            if details is None:
                raise
            for d in details():
                errors.append(
                    {"type": d["type"], "loc": loc + tuple(d["loc"]), "msg": d["msg"], "input": d.get("input")}
                )
            return _FAIL
    if isinstance(value, tp):
        return value
    return _err(
        errors,
        "is_instance_of",
        loc,
        f"Input should be an instance of {tp.__name__}",
        value,
        {"class": tp.__name__},
    )


# --- entry points --------------------------------------------------------------------


def validate_value(tp: Any, value: Any, loc: tuple, errors: list, strict: bool = False) -> Any:
    """`value` validated (and coerced, in lax mode) against the type hint `tp`.

    Args:
        tp: a type hint (see the module docstring for the supported forms).
        value: the input.
        loc: the error location of `value` (a tuple of field names / indexes).
        errors: list the errors are appended to (pydantic's `ErrorDetails` dicts).
        strict: exact types only (used for the first pass of a union).

    Returns:
        The validated value, or a private failure sentinel when errors were appended.
    """
    if tp is Any or tp is _EMPTY or tp is object or isinstance(tp, (str, TypeVar)):
        return value
    scalar = _SCALARS.get(tp)
    if scalar is not None:
        return scalar(value, loc, errors, strict)
    origin = get_origin(tp)
    if origin is Annotated:
        return validate_value(get_args(tp)[0], value, loc, errors, strict)
    if origin is Union or origin is _UnionType:
        return _v_union(get_args(tp), value, loc, errors, strict)
    if origin is Literal:
        return _v_literal(get_args(tp), value, loc, errors, strict)
    if tp is None or tp is type(None):
        if value is None:
            return None
        return _err(errors, "none_required", loc, "Input should be None", value)
    container = origin or tp
    args = get_args(tp)
    if container is list:
        return _v_list(args, value, loc, errors, strict)
    if container is tuple:
        return _v_tuple(args, value, loc, errors, strict)
    if container is set:
        return _v_set(args, value, loc, errors, strict, False)
    if container is frozenset:
        return _v_set(args, value, loc, errors, strict, True)
    if container is dict or container is Mapping or _is_abc(container, "Mapping", "MutableMapping"):
        return _v_dict(args, value, loc, errors, strict)
    if _is_abc(container, "Sequence", "MutableSequence", "Iterable", "Collection"):
        return _v_sequence(args, value, loc, errors, strict)
    if isinstance(container, type):
        return _v_class(container, value, loc, errors, strict)
    return value  # Callable, NewType, other typing constructs: not checked


def _is_abc(container: Any, *names: str) -> bool:
    return getattr(container, "__module__", "") == "collections.abc" and getattr(container, "__name__", "") in names


def json_schema(tp: Any) -> dict:
    """The JSON-schema fragment pydantic gives the type hint `tp` (keys sorted, no title).

    Nested Enum/dataclass/TypedDict/pydantic classes are inlined rather than put in `$defs`.
    """
    if tp is Any or tp is _EMPTY or tp is object or isinstance(tp, (str, TypeVar)):
        return {}
    simple = {int: "integer", float: "number", str: "string", bool: "boolean"}.get(tp)
    if simple is not None:
        return {"type": simple}
    if tp is bytes:
        return {"format": "binary", "type": "string"}
    if tp is None or tp is type(None):
        return {"type": "null"}
    origin = get_origin(tp)
    args = get_args(tp)
    if origin is Annotated:
        inner = json_schema(args[0])
        desc = next((m for m in tp.__metadata__ if isinstance(m, str)), None)
        if desc is not None:
            inner = dict(sorted({**inner, "description": desc}.items()))
        return inner
    if origin is Union or origin is _UnionType:
        return {"anyOf": [json_schema(a) for a in args]}
    if origin is Literal:
        values = list(args)
        out: dict = {"const": values[0]} if len(values) == 1 else {"enum": values}
        kinds = {_json_kind(v) for v in values}
        if len(kinds) == 1 and None not in kinds:
            out["type"] = kinds.pop()
        return dict(sorted(out.items()))
    container = origin or tp
    if container in (list, set, frozenset) or _is_abc(
        container, "Sequence", "MutableSequence", "Iterable", "Collection"
    ):
        out = {"items": json_schema(args[0]) if args else {}, "type": "array"}
        if container in (set, frozenset):
            out["uniqueItems"] = True
        return out
    if container is tuple:
        if not args or (len(args) == 2 and args[1] is Ellipsis):
            return {"items": json_schema(args[0]) if args else {}, "type": "array"}
        n = len(args)
        return {"maxItems": n, "minItems": n, "prefixItems": [json_schema(a) for a in args], "type": "array"}
    if container is dict or container is Mapping or _is_abc(container, "Mapping", "MutableMapping"):
        return {"additionalProperties": json_schema(args[1]) if len(args) == 2 else True, "type": "object"}
    if isinstance(container, type):
        return _class_schema(container)
    return {}


def _json_kind(value: Any) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return None


def _class_schema(tp: type) -> dict:
    if issubclass(tp, enum.Enum):
        values = [m.value for m in tp]
        out: dict = {"enum": values, "title": tp.__name__}
        kinds = {_json_kind(v) for v in values}
        if len(kinds) == 1 and None not in kinds:
            out["type"] = kinds.pop()
        return dict(sorted(out.items()))
    if _is_pydantic_class(tp):
        return tp.model_json_schema()
    if _is_typeddict(tp) or dataclasses.is_dataclass(tp):
        props = {}
        required = []
        defaults = {}
        if dataclasses.is_dataclass(tp):
            for f in dataclasses.fields(tp):
                if f.default is not dataclasses.MISSING:
                    defaults[f.name] = f.default
                elif f.default_factory is dataclasses.MISSING:  # type: ignore[misc]
                    required.append(f.name)
        else:
            required = [k for k in _hints(tp) if k in getattr(tp, "__required_keys__", ())]
        for name, ftp in _hints(tp).items():
            props[name] = field_schema(name, ftp, defaults.get(name, _EMPTY))
        out = {"properties": props, "title": tp.__name__, "type": "object"}
        if required:
            out["required"] = required
        return dict(sorted(out.items()))
    return {}


def field_schema(name: str, tp: Any, default: Any = _EMPTY) -> dict:
    """The schema of one argument: the type's fragment plus `title` and (JSON-able) `default`."""
    out = dict(json_schema(tp))
    out["title"] = title_of(name)
    if default is not _EMPTY and _jsonable(default):
        out["default"] = default
    return dict(sorted(out.items()))


def _jsonable(value: Any) -> bool:
    if value is None or isinstance(value, (str, int, float, bool)):
        return True
    if isinstance(value, (list, tuple)):
        return all(_jsonable(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _jsonable(v) for k, v in value.items())
    return False


def _short_repr(value: Any) -> str:
    # pydantic shortens long input reprs to their first 25 and last 24 characters
    r = repr(value)
    if len(r) > 50:
        return r[:25] + "..." + r[-24:]
    return r


def error_text(title: str, errors: list) -> str:
    """pydantic's `str(ValidationError)` for `errors`, without the documentation URL lines."""
    n = len(errors)
    lines = [f"{n} validation error{'s' if n != 1 else ''} for {title}"]
    for e in errors:
        if e["loc"]:
            lines.append(".".join(str(x) for x in e["loc"]))
        value = e.get("input")
        lines.append(
            f"  {e['msg']} [type={e['type']}, input_value={_short_repr(value)}, input_type={type(value).__name__}]"
        )
    return "\n".join(lines)


def lc_module(name: str) -> Any:
    """A langchain-core module if the program already imported it, else None (never imports)."""
    return sys.modules.get(name)
