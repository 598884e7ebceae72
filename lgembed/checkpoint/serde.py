"""Checkpoint serialization: msgpack with a closed, documented set of extension types.

Why this module exists: every checkpoint, channel value and pending write goes
through `dumps_typed`/`loads_typed` on its way to a saver. LangGraph's default
(`JsonPlusSerializer`) imports and calls whatever `module.name` a stored payload
names (with a warning), so anyone who can write the checkpoint store can run code
in the process that reads it. lgembed keeps LangGraph's wire layout but closes the
set: loading resolves a stored type only through a table of known entries, never by
importing the module a payload names, and never through pickle or eval.

Interface (LangGraph's `SerializerProtocol`, Z-1): `dumps_typed(obj) -> (tag, bytes)`
with `None -> ("null", b"")`, `bytes -> ("bytes", b)`, `bytearray -> ("bytearray", b)`,
anything else `("msgpack", payload)`; `loads_typed((tag, bytes))` reverses it.

Native msgpack (Z-2): None, bool, int (-2**63 .. 2**64-1; others raise
`TypeError("Integer exceeds 64-bit range")`), float, str, bytes, list, dict (keys may
be any of these; array keys come back as tuples). Subclasses of str/int/dict/list
that are not Enums are stored as the base type, as LangGraph does.

Decisions, with LangGraph's behaviour for comparison:

- tuple: stored as a msgpack array and loaded as a **list** (Z-2, O-15
  `(1, 2) -> [1, 2]`). docs/DESIGN.md §4 lists tuple as an extension type; parity with
  LangGraph wins, so there is none. Exceptions: items of a set/frozenset and dict keys
  come back as tuples (a list cannot be hashed; LangGraph returns the raw payload for
  a frozenset of tuples).
- exceptions (any BaseException): stored as the string `repr(exc)` (Z-3).
- user types (Enum, dataclass, NamedTuple, pydantic model) must be registered:
  `MsgpackSerializer(allowed_types=[mymod.Foo])`. An unregistered one fails when it
  is *written*, with a TypeError naming the type and how to register it. LangGraph
  writes any such object and imports its module on load.
- loading an unknown or refused type raises `DeserializationError` naming the stored
  `module:name`. It never returns the raw payload (LangGraph does, with a warning,
  in strict mode) and never imports the named module.
- deque `maxlen`, a timezone's name inside a datetime, and non-str dict keys of
  extension types follow msgpack rules: the first two are dropped as in LangGraph;
  UUID/Enum/date dict keys keep their type (LangGraph turns them into strings).

Extension types. Every payload is a msgpack array `[module, name, data]` (plus a
fourth item for codes 3 and 5), exactly LangGraph's layout, so the values of the
stdlib types below are byte-compatible with `JsonPlusSerializer` both ways:

====  =======================  ==========================================================
code  meaning                  `module:name` -> data
====  =======================  ==========================================================
0     constructor, 1 arg       `uuid:UUID` -> 32 hex digits; `decimal:Decimal` -> str;
                               `builtins:set`, `builtins:frozenset`,
                               `collections:deque` -> array of items;
                               `ipaddress:IPv4Address|IPv4Interface|IPv4Network|
                               IPv6Address|IPv6Interface|IPv6Network` -> str;
                               `zoneinfo:ZoneInfo` -> key; registered Enum -> its value
1     constructor, args        `pathlib:Path|PosixPath|WindowsPath|PurePath|
                               PurePosixPath|PureWindowsPath` -> parts;
                               `re:compile` -> [pattern, flags];
                               `datetime:timedelta` -> [days, seconds, microseconds];
                               `datetime:date` -> [year, month, day];
                               `datetime:timezone` -> [offset] or [offset, name];
                               `lgembed.types:Send` -> [node, arg] or [node, arg, timeout]
2     constructor, kwargs      `datetime:time` -> {hour, minute, second, microsecond,
                               tzinfo, fold}; `lgembed.types:Interrupt|Command|
                               Overwrite|TimeoutPolicy` and registered dataclasses ->
                               {field: value} for every field; `lgembed.types:PregelTask|
                               StateSnapshot`, `lgembed.store.base:GetOp` and registered
                               NamedTuples -> `_asdict()`
3     classmethod, 1 arg       `datetime:datetime` -> isoformat string, 4th item
                               `"fromisoformat"` (the only method ever called)
4     model, `.dict()`         `lgembed.store.base:Item` -> `item.dict()`;
                               registered pydantic v1 models -> `.dict()`
5     model, `model_dump()`    `lgembed.messages:HumanMessage|AIMessage|SystemMessage|
                               ToolMessage|FunctionMessage|RemoveMessage`, the 15
                               langchain-core message classes (only when the program
                               has imported langchain_core), registered pydantic v2
                               models -> `model_dump()`, 4th item `"model_validate_json"`
                               (stored for LangGraph, ignored on load)
====  =======================  ==========================================================

msgpack's own ext type -1 (Timestamp) is never written; msgpack decodes it itself,
into a plain `msgpack.Timestamp` value, before any hook could refuse it.

Aliases accepted on load: `pathlib._local:*` (Python 3.13 module name),
`langgraph.types:*` and `langgraph.store.base:*` for the lgembed classes of the same
name, so checkpoints written by LangGraph load. A langchain-core message loads as the
langchain-core class when `langchain_core.messages` is already imported, otherwise as
the lgembed class of the same name (chunk classes and ChatMessage need langchain-core).

Why this file is longer than 600 lines: the type table is the security boundary of
checkpoint loading; its encoders, decoders and the refusal paths are kept in one
module so that the whole closed set can be reviewed at once.

What loading may import: the fixed stdlib module of a table entry (`uuid`, `decimal`,
`datetime`, `pathlib`, `re`, `collections`, `ipaddress`, `zoneinfo`) and lgembed's own
`lgembed.types`, `lgembed.messages`, `lgembed.store.base`, chosen by this module, never
by the payload. msgpack itself is imported on first use, not at import time.
"""

from __future__ import annotations

import sys
import threading
from typing import Any, Callable, Iterable, Protocol, runtime_checkable

__all__ = (
    "DeserializationError",
    "MsgpackSerializer",
    "SerializerCompat",
    "SerializerProtocol",
    "UntypedSerializerProtocol",
    "maybe_add_typed_methods",
)

EXT_CONSTRUCTOR_SINGLE_ARG = 0
EXT_CONSTRUCTOR_POS_ARGS = 1
EXT_CONSTRUCTOR_KW_ARGS = 2
EXT_METHOD_SINGLE_ARG = 3
EXT_PYDANTIC_V1 = 4
EXT_PYDANTIC_V2 = 5
# LangGraph's ext codes (jsonplus.py); the payload layouts are in the module docstring

_ENCODER_CACHE_MAX = 1024
# distinct types whose encoder a serializer remembers; bounds memory with dynamic classes

_LC_MESSAGES = {
    "langchain_core.messages.base": ("BaseMessage", "BaseMessageChunk"),
    "langchain_core.messages.human": ("HumanMessage", "HumanMessageChunk"),
    "langchain_core.messages.ai": ("AIMessage", "AIMessageChunk"),
    "langchain_core.messages.system": ("SystemMessage", "SystemMessageChunk"),
    "langchain_core.messages.chat": ("ChatMessage", "ChatMessageChunk"),
    "langchain_core.messages.tool": ("ToolMessage", "ToolMessageChunk"),
    "langchain_core.messages.function": ("FunctionMessage", "FunctionMessageChunk"),
    "langchain_core.messages.modifier": ("RemoveMessage",),
}
# the langchain-core message classes LangGraph trusts (SAFE_MSGPACK_TYPES)
_LG_MESSAGES = ("HumanMessage", "AIMessage", "SystemMessage", "ToolMessage", "FunctionMessage", "RemoveMessage")
# lgembed.messages classes; also the fallback for the same-named langchain-core classes
_LG_TYPES_DATACLASSES = ("Interrupt", "Command", "Overwrite", "TimeoutPolicy")
_LG_TYPES_NAMEDTUPLES = ("PregelTask", "StateSnapshot")
_PATH_CLASSES = ("Path", "PosixPath", "WindowsPath", "PurePath", "PurePosixPath", "PureWindowsPath")
_PATH_ENCODE_ORDER = ("PosixPath", "WindowsPath", "Path", "PurePosixPath", "PureWindowsPath", "PurePath")
# pathlib classes, most derived first
_IP_CLASSES = ("IPv4Address", "IPv4Interface", "IPv4Network", "IPv6Address", "IPv6Interface", "IPv6Network")
_IP_ENCODE_ORDER = ("IPv4Interface", "IPv6Interface") + _IP_CLASSES
# IPvXInterface subclasses IPvXAddress, so it is tried first
_INT64_RANGE = "Integer exceeds 64-bit range"
# LangGraph's (ormsgpack's) text for ints outside msgpack's range (Z-2)


class DeserializationError(ValueError):
    """A stored value could not be loaded: unknown or refused type, or corrupt data.

    Attributes:
        key: the stored `module:name` when the error concerns an extension type.
    """

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.key = key


@runtime_checkable
class SerializerProtocol(Protocol):
    """A checkpoint serializer: `dumps_typed(obj) -> (tag, bytes)` and its inverse."""

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]: ...

    def loads_typed(self, data: tuple[str, bytes]) -> Any: ...


class UntypedSerializerProtocol(Protocol):
    """An older serializer with plain `dumps`/`loads` (wrapped by `SerializerCompat`)."""

    def dumps(self, obj: Any) -> bytes: ...

    def loads(self, data: bytes) -> Any: ...


class SerializerCompat:
    """Gives a `dumps`/`loads` serializer the typed interface (tag = type name)."""

    def __init__(self, serde: UntypedSerializerProtocol) -> None:
        self.serde = serde

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        return type(obj).__name__, self.serde.dumps(obj)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        return self.serde.loads(data[1])


def maybe_add_typed_methods(serde: Any) -> SerializerProtocol:
    """`serde` itself if it has `dumps_typed`/`loads_typed`, else wrapped in `SerializerCompat`."""
    if isinstance(serde, SerializerProtocol):
        return serde
    return SerializerCompat(serde)


def _msgpack() -> Any:
    import msgpack

    return msgpack


_LOCAL = threading.local()


def thread_pack(strict_types: bool = False) -> Callable[[Any], bytes]:
    """This thread's `msgpack.Packer(strict_types=...).pack` (no `default` hook), made
    once per thread and kind.

    Why: `msgpack.packb` builds a Packer, with a 256 kB buffer, per call; reusing one
    saves that allocation on every record a saver writes. Safe because a Packer without
    a hook never calls back into Python, so a thread cannot re-enter it, and `pack`
    resets the buffer after an error. A Packer is never shared between threads.
    """
    local = _LOCAL
    try:  # (constant attribute names: a direct lookup, cheaper than getattr)
        return local.strict if strict_types else local.plain
    except AttributeError:
        pack = _msgpack().Packer(strict_types=strict_types).pack
        setattr(local, "strict" if strict_types else "plain", pack)
        return pack


def _type_name(t: type) -> str:
    return f"{t.__module__}.{t.__qualname__}"


# --- kinds of registrable classes ------------------------------------------------------


def _pydantic_kind(t: type) -> str | None:
    pyd = sys.modules.get("pydantic")
    if pyd is not None and isinstance(t, type) and issubclass(t, pyd.BaseModel):
        return "pydantic"
    v1 = sys.modules.get("pydantic.v1")
    if v1 is not None and isinstance(t, type) and issubclass(t, v1.BaseModel):
        return "pydantic_v1"
    return None


def _registrable_kind(t: type) -> str | None:
    """'enum', 'dataclass', 'namedtuple', 'pydantic', 'pydantic_v1', or None."""
    enum = sys.modules.get("enum")
    if enum is not None and issubclass(t, enum.Enum):
        return "enum"
    if hasattr(t, "__dataclass_fields__"):
        return "dataclass"
    if issubclass(t, tuple) and hasattr(t, "_fields") and hasattr(t, "_asdict"):
        return "namedtuple"
    return _pydantic_kind(t)


# --- encoders: obj -> (code, module, name, data[, method]) ---------------------------


def _dataclass_kwargs(obj: Any) -> dict[str, Any]:
    # Why not dataclasses.asdict: it deep-copies and recurses into nested dataclasses
    return {f.name: getattr(obj, f.name) for f in sys.modules["dataclasses"].fields(obj)}


def _encoder_for_class(t: type, kind: str, module: str, name: str) -> Callable[[Any], tuple]:
    if kind == "enum":
        return lambda o: (EXT_CONSTRUCTOR_SINGLE_ARG, module, name, o.value)
    if kind == "dataclass":
        return lambda o: (EXT_CONSTRUCTOR_KW_ARGS, module, name, _dataclass_kwargs(o))
    if kind == "namedtuple":
        return lambda o: (EXT_CONSTRUCTOR_KW_ARGS, module, name, o._asdict())
    if kind == "pydantic":
        return lambda o: (EXT_PYDANTIC_V2, module, name, o.model_dump(), "model_validate_json")
    return lambda o: (EXT_PYDANTIC_V1, module, name, o.dict())


def _stdlib_encoder(t: type) -> Callable[[Any], tuple] | None:
    """The encoder of a stdlib value type (or a subclass, stored as the base type)."""
    m = sys.modules
    dt = m.get("datetime")
    if dt is not None:
        if issubclass(t, dt.datetime):
            return lambda o: (EXT_METHOD_SINGLE_ARG, "datetime", "datetime", o.isoformat(), "fromisoformat")
        if issubclass(t, dt.date):
            return lambda o: (EXT_CONSTRUCTOR_POS_ARGS, "datetime", "date", [o.year, o.month, o.day])
        if issubclass(t, dt.time):
            return lambda o: (
                EXT_CONSTRUCTOR_KW_ARGS, "datetime", "time",
                {"hour": o.hour, "minute": o.minute, "second": o.second,
                 "microsecond": o.microsecond, "tzinfo": o.tzinfo, "fold": o.fold},
            )  # fmt: skip
        if issubclass(t, dt.timedelta):
            return lambda o: (
                EXT_CONSTRUCTOR_POS_ARGS, "datetime", "timedelta", [o.days, o.seconds, o.microseconds]
            )  # fmt: skip
        if issubclass(t, dt.timezone):
            return lambda o: (EXT_CONSTRUCTOR_POS_ARGS, "datetime", "timezone", list(o.__getinitargs__()))
    if issubclass(t, (set, frozenset)):
        name = "frozenset" if issubclass(t, frozenset) else "set"
        return lambda o: (EXT_CONSTRUCTOR_SINGLE_ARG, "builtins", name, list(o))
    for mod, names, code, data in (
        ("uuid", ("UUID",), EXT_CONSTRUCTOR_SINGLE_ARG, lambda o: o.hex),
        ("decimal", ("Decimal",), EXT_CONSTRUCTOR_SINGLE_ARG, str),
        ("collections", ("deque",), EXT_CONSTRUCTOR_SINGLE_ARG, list),
        ("zoneinfo", ("ZoneInfo",), EXT_CONSTRUCTOR_SINGLE_ARG, lambda o: o.key),
        ("ipaddress", _IP_ENCODE_ORDER, EXT_CONSTRUCTOR_SINGLE_ARG, str),
        ("pathlib", _PATH_ENCODE_ORDER, EXT_CONSTRUCTOR_POS_ARGS, lambda o: list(o.parts)),
    ):
        module = m.get(mod)
        if module is None:
            continue
        for name in names:  # most derived first, so a subclass is stored as its nearest base
            if issubclass(t, getattr(module, name)):
                return lambda o, mod=mod, name=name, code=code, data=data: (code, mod, name, data(o))
    re_mod = m.get("re")
    if re_mod is not None and issubclass(t, re_mod.Pattern):
        return lambda o: (EXT_CONSTRUCTOR_POS_ARGS, "re", "compile", [o.pattern, o.flags])
    return None


def _lgembed_encoder(t: type) -> Callable[[Any], tuple] | None:
    """The encoder of lgembed's own value types (only their modules can define them)."""
    types_mod = sys.modules.get("lgembed.types")
    if types_mod is not None:
        if t is types_mod.Send:
            return lambda o: (
                EXT_CONSTRUCTOR_POS_ARGS, "lgembed.types", "Send",
                [o.node, o.arg] if o.timeout is None else [o.node, o.arg, o.timeout],
            )  # fmt: skip
        for name in _LG_TYPES_DATACLASSES + _LG_TYPES_NAMEDTUPLES:
            if t is getattr(types_mod, name, None):
                kind = "dataclass" if name in _LG_TYPES_DATACLASSES else "namedtuple"
                return _encoder_for_class(t, kind, "lgembed.types", name)
    messages = sys.modules.get("lgembed.messages")
    if messages is not None and t.__module__ == "lgembed.messages" and t.__name__ in _LG_MESSAGES:
        if t is getattr(messages, t.__name__):
            return _encoder_for_class(t, "pydantic", "lgembed.messages", t.__name__)
    store = sys.modules.get("lgembed.store.base")
    if store is not None:
        if t is getattr(store, "Item", None):
            return lambda o: (EXT_PYDANTIC_V1, "lgembed.store.base", "Item", o.dict())
        if t is getattr(store, "GetOp", None):
            return _encoder_for_class(t, "namedtuple", "lgembed.store.base", "GetOp")
    lc = sys.modules.get("langchain_core.messages")
    if lc is not None and issubclass(t, lc.BaseMessage) and t.__name__ in _LC_MESSAGES.get(t.__module__, ()):
        return _encoder_for_class(t, "pydantic", t.__module__, t.__name__)
    return None


def _base_type_encoder(t: type) -> Callable[[Any], Any] | None:
    """Replacement (not an ext) for a subclass of a native type; None if not one."""
    for base, convert in ((str, str.__str__), (int, int.__int__), (dict, dict), (list, list), (bytes, bytes)):
        if issubclass(t, base):
            return convert
    return None


# --- decoders: data -> obj ---------------------------------------------------------


def _hashable(value: Any) -> Any:
    """`value` with lists turned into tuples (set items and dict keys were hashable)."""
    if type(value) is list:
        return tuple(_hashable(v) for v in value)
    return value


def _as_list(data: Any) -> list:
    if type(data) is not list:
        msg = f"expected an array, got {type(data).__name__}"
        raise TypeError(msg)
    return data


def _as_str(data: Any) -> str:
    if type(data) is not str:
        msg = f"expected a string, got {type(data).__name__}"
        raise TypeError(msg)
    return data


def _as_dict(data: Any) -> dict:
    if type(data) is not dict:
        msg = f"expected a map, got {type(data).__name__}"
        raise TypeError(msg)
    return data


def _load_enum(cls: Any, value: Any) -> Any:
    try:
        return cls(value)
    except ValueError:
        # a tuple-valued member was stored with its value as a list
        for member in cls:
            if _hashable(value) == member.value:
                return member
        raise


def _load_dataclass(cls: Any, data: Any) -> Any:
    kwargs = _as_dict(data)
    fields = cls.__dataclass_fields__
    no_init = [k for k in kwargs if k in fields and not fields[k].init]
    obj = cls(**{k: v for k, v in kwargs.items() if k not in no_init})
    for k in no_init:
        object.__setattr__(obj, k, kwargs[k])
    return obj


def _load_model(cls: Any, data: Any, fallback: str) -> Any:
    kwargs = _as_dict(data)
    try:
        return cls(**kwargs)
    except Exception:  # noqa: BLE001 - LangGraph parity: rebuild without validation
        return getattr(cls, fallback)(**kwargs)


def _decoder_for_class(cls: type, kind: str) -> tuple[int, Callable[[Any], Any]]:
    if kind == "enum":
        return EXT_CONSTRUCTOR_SINGLE_ARG, lambda d: _load_enum(cls, d)
    if kind == "dataclass":
        return EXT_CONSTRUCTOR_KW_ARGS, lambda d: _load_dataclass(cls, d)
    if kind == "namedtuple":
        return EXT_CONSTRUCTOR_KW_ARGS, lambda d: cls(**_as_dict(d))
    if kind == "pydantic":
        return EXT_PYDANTIC_V2, lambda d: _load_model(cls, d, "model_construct")
    return EXT_PYDANTIC_V1, lambda d: _load_model(cls, d, "construct")


def _stdlib(module: str, name: str) -> Any:
    """`module.name` of a fixed stdlib or lgembed module (never a payload's choice)."""
    if module == "uuid":
        import uuid as mod
    elif module == "decimal":
        import decimal as mod
    elif module == "datetime":
        import datetime as mod
    elif module == "pathlib":
        import pathlib as mod
    elif module == "re":
        import re as mod
    elif module == "collections":
        import collections as mod
    elif module == "ipaddress":
        import ipaddress as mod
    elif module == "zoneinfo":
        import zoneinfo as mod
    elif module == "lgembed.types":
        import lgembed.types as mod
    elif module == "lgembed.messages":
        import lgembed.messages as mod
    elif module == "lgembed.store.base":
        import lgembed.store.base as mod
    else:  # pragma: no cover - only called with the modules above
        raise AssertionError(module)
    return getattr(mod, name)


def _load_send(data: Any) -> Any:
    args = _as_list(data)
    send = _stdlib("lgembed.types", "Send")
    if len(args) == 2:
        return send(args[0], args[1])
    node, arg, timeout = args
    return send(node, arg, timeout=timeout)


def _load_lc_message(name: str, data: Any) -> Any:
    lc = sys.modules.get("langchain_core.messages")
    if lc is not None:
        return getattr(lc, name)(**_as_dict(data))
    if name not in _LG_MESSAGES:
        msg = f"langchain-core is not imported; import langchain_core.messages before loading a {name}"
        raise TypeError(msg)
    return _stdlib("lgembed.messages", name)(**_as_dict(data))


def _builtin_decoders() -> dict[str, tuple[int, Callable[[Any], Any]]]:
    """The fixed table `module:name -> (ext code, builder)` (see the module docstring)."""
    one, pos, kw = EXT_CONSTRUCTOR_SINGLE_ARG, EXT_CONSTRUCTOR_POS_ARGS, EXT_CONSTRUCTOR_KW_ARGS
    table: dict[str, tuple[int, Callable[[Any], Any]]] = {
        "uuid:UUID": (one, lambda d: _stdlib("uuid", "UUID")(hex=_as_str(d))),
        "decimal:Decimal": (one, lambda d: _stdlib("decimal", "Decimal")(_as_str(d))),
        "builtins:set": (one, lambda d: {_hashable(v) for v in _as_list(d)}),
        "builtins:frozenset": (one, lambda d: frozenset(_hashable(v) for v in _as_list(d))),
        "collections:deque": (one, lambda d: _stdlib("collections", "deque")(_as_list(d))),
        "zoneinfo:ZoneInfo": (one, lambda d: _stdlib("zoneinfo", "ZoneInfo")(_as_str(d))),
        "re:compile": (pos, lambda d: _stdlib("re", "compile")(*_as_list(d))),
        "datetime:timedelta": (pos, lambda d: _stdlib("datetime", "timedelta")(*_as_list(d))),
        "datetime:date": (pos, lambda d: _stdlib("datetime", "date")(*_as_list(d))),
        "datetime:timezone": (pos, lambda d: _stdlib("datetime", "timezone")(*_as_list(d))),
        "datetime:time": (kw, lambda d: _stdlib("datetime", "time")(**_as_dict(d))),
        "datetime:datetime": (
            EXT_METHOD_SINGLE_ARG,
            lambda d: _stdlib("datetime", "datetime").fromisoformat(_as_str(d)),
        ),
    }
    for name in _IP_CLASSES:
        table[f"ipaddress:{name}"] = (one, lambda d, n=name: _stdlib("ipaddress", n)(_as_str(d)))
    for name in _PATH_CLASSES:
        entry = (pos, lambda d, n=name: _stdlib("pathlib", n)(*_as_list(d)))
        table[f"pathlib:{name}"] = table[f"pathlib._local:{name}"] = entry
    for prefix in ("lgembed.types", "langgraph.types"):
        table[f"{prefix}:Send"] = (pos, _load_send)
        for name in _LG_TYPES_DATACLASSES:
            table[f"{prefix}:{name}"] = (kw, lambda d, n=name: _load_dataclass(_stdlib("lgembed.types", n), d))
        for name in _LG_TYPES_NAMEDTUPLES:
            table[f"{prefix}:{name}"] = (kw, lambda d, n=name: _stdlib("lgembed.types", n)(**_as_dict(d)))
    for prefix in ("lgembed.store.base", "langgraph.store.base"):
        table[f"{prefix}:Item"] = (EXT_PYDANTIC_V1, lambda d: _stdlib("lgembed.store.base", "Item")(**_as_dict(d)))
        table[f"{prefix}:GetOp"] = (kw, lambda d: _stdlib("lgembed.store.base", "GetOp")(**_as_dict(d)))
    for name in _LG_MESSAGES:
        table[f"lgembed.messages:{name}"] = (
            EXT_PYDANTIC_V2,
            lambda d, n=name: _stdlib("lgembed.messages", n)(**_as_dict(d)),
        )
    for module, names in _LC_MESSAGES.items():
        for name in names:
            table[f"{module}:{name}"] = (EXT_PYDANTIC_V2, lambda d, n=name: _load_lc_message(n, d))
    return table


_BUILTIN_DECODERS: dict[str, tuple[int, Callable[[Any], Any]]] | None = None
# built on first load; an immutable table (module-level only as a cache of constants)


def _pairs_to_dict(pairs: list) -> dict:
    return {_hashable(k): v for k, v in pairs}


class MsgpackSerializer:
    """The default checkpoint serializer: msgpack with a closed set of extension types.

    See the module docstring for the supported types and the wire format.

    Args:
        allowed_types: user classes that may be stored and loaded: Enum subclasses,
            dataclasses, NamedTuples and pydantic models (v2, or v1 via pydantic.v1).
            Each is keyed by `"module:qualname"`. A `(module, qualname)` tuple is
            accepted too when that module is already imported.

    Raises:
        TypeError: when an entry is not one of the registrable kinds.
        ValueError: when a `(module, qualname)` entry cannot be resolved without
            importing, or collides with a built-in entry.
    """

    def __init__(self, *, allowed_types: Iterable[type | tuple[str, str]] = ()) -> None:
        self._allowed: tuple[type, ...] = ()
        self._encoders: dict[type, Callable[[Any], tuple]] = {}
        # registered class -> encoder
        self._decoders: dict[str, tuple[int, Callable[[Any], Any]]] = {}
        # "module:qualname" of a registered class -> (ext code, builder)
        self._cache: dict[type, tuple[Callable[[Any], Any], bool]] = {}
        # type -> (encoder, returns-ext-spec); filled on first sight of each type
        self._defaults: dict[str, Callable[[Any], Any]] = {}
        # unicode error mode -> msgpack `default` hook
        self._packers = threading.local()
        # per thread: `busy` while its Packer packs, `by_mode` {unicode error mode: Packer}
        self._hooked: set[type] = set()
        # top-level types a plain pack failed on once: packed with the hook right away
        for entry in allowed_types:
            self._register(entry)

    @property
    def allowed_types(self) -> tuple[type, ...]:
        """The registered user classes, in registration order."""
        return self._allowed

    def __repr__(self) -> str:
        names = ", ".join(_type_name(t) for t in self._allowed)
        return f"MsgpackSerializer(allowed_types=[{names}])"

    # --- registration -------------------------------------------------------------

    def _register(self, entry: type | tuple[str, str]) -> None:
        if isinstance(entry, tuple):
            module, qualname = entry[0], entry[1]
            if f"{module}:{qualname}" in _builtin_table():
                return  # always allowed already
            obj: Any = sys.modules.get(module)
            for part in qualname.split(".") if obj is not None else ():
                obj = getattr(obj, part, None)
            if not isinstance(obj, type):
                msg = (
                    f"Cannot register {entry!r} with MsgpackSerializer: "
                    f"module {module!r} is not imported or has no class {qualname!r}. "
                    "Pass the class itself."
                )
                raise ValueError(msg)
            entry = obj
        if not isinstance(entry, type):
            msg = f"allowed_types entries must be classes (got {entry!r})"
            raise TypeError(msg)
        key = f"{entry.__module__}:{entry.__qualname__}"
        if key in _builtin_table():
            if _lgembed_encoder(entry) is not None:
                return  # one of lgembed's own types, allowed already
            msg = f"Cannot register '{_type_name(entry)}': {key!r} is a built-in entry"
            raise ValueError(msg)
        kind = _registrable_kind(entry)
        if kind is None:
            msg = (
                f"Cannot register '{_type_name(entry)}' with MsgpackSerializer: only Enum, "
                "dataclass, NamedTuple and pydantic model classes can be registered."
            )
            raise TypeError(msg)
        self._allowed += (entry,)
        self._encoders[entry] = _encoder_for_class(entry, kind, entry.__module__, entry.__qualname__)
        self._decoders[key] = _decoder_for_class(entry, kind)
        self._cache.pop(entry, None)

    def with_msgpack_allowlist(self, extra: Iterable[type | tuple[str, str]]) -> MsgpackSerializer:
        """A serializer that also allows `extra` (this one when nothing is new)."""
        extra = [e for e in extra if e not in self._allowed]
        if not extra:
            return self
        return MsgpackSerializer(allowed_types=(*self._allowed, *extra))

    # --- SerializerProtocol ---------------------------------------------------------

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """Serializes `obj` to `(tag, bytes)` (Z-1).

        Raises:
            TypeError: for a type outside the supported set (the message names the
                type and how to register it), or an int outside -2**63 .. 2**64-1.
        """
        if obj is None:
            return "null", b""
        if isinstance(obj, bytes):
            return "bytes", obj
        if isinstance(obj, bytearray):
            return "bytearray", bytes(obj)
        t = type(obj)
        if t not in self._hooked:
            # Strategy: a value made of msgpack's own types only packs to the same bytes
            # without the hook (same options, strict types), by this thread's Packer and
            # without the nested-call bookkeeping; anything else raises before a byte
            # is kept, and its top-level type goes to the hook from then on
            try:
                return "msgpack", thread_pack(True)(obj)
            except (TypeError, ValueError, OverflowError):
                self._hooked.add(t)
        return "msgpack", self._pack_top(obj)

    def loads_typed(self, data: tuple[str, bytes]) -> Any:
        """Loads a value stored by `dumps_typed`.

        Raises:
            DeserializationError: for an unknown or refused extension type, a payload
                that does not match its type, or corrupt msgpack data.
            NotImplementedError: for a tag other than null/bytes/bytearray/msgpack
                (LangGraph's "json" and "pickle" tags are not supported).
        """
        tag, payload = data
        if tag == "msgpack":
            return self._unpack(payload)
        if tag == "null":
            return None
        if tag == "bytes":
            return payload
        if tag == "bytearray":
            return bytearray(payload)
        msg = f"Unknown serialization type: {tag}"
        raise NotImplementedError(msg)

    # --- packing --------------------------------------------------------------------

    def _pack_top(self, obj: Any) -> bytes:
        try:
            try:
                return self._packb(obj, "strict")
            except UnicodeEncodeError:
                # lone surrogates: replaced by "?" as LangGraph (ormsgpack) does
                return self._packb(obj, "replace")
        except OverflowError as e:
            raise TypeError(_INT64_RANGE) from e

    def _packb(self, obj: Any, errors: str) -> bytes:
        """msgpack of `obj` with this serializer's hook, by this thread's Packer.

        Why a kept Packer: building one per call (what `msgpack.packb` does) costs more
        than packing a small value. The hook packs extension payloads by calling this
        method again while the outer Packer is mid-pack, so a nested call (`busy`) gets
        a fresh Packer. A Packer resets its buffer when packing fails.
        """
        local = self._packers
        try:
            busy = local.busy
        except AttributeError:
            local.busy = busy = False
            local.by_mode = {}
        if busy:
            return self._new_packer(errors).pack(obj)
        packer = local.by_mode.get(errors)
        if packer is None:
            packer = local.by_mode[errors] = self._new_packer(errors)
        local.busy = True
        try:
            return packer.pack(obj)
        finally:
            local.busy = False

    def _new_packer(self, errors: str) -> Any:
        default = self._defaults.get(errors)
        if default is None:
            default = self._defaults[errors] = self._make_default(errors)
        # "strict" is msgpack's own behaviour when no mode is given, which encodes str
        # by a faster path (about half the time of an explicit mode for a 40-key dict)
        return _msgpack().Packer(
            default=default,
            use_bin_type=True,
            strict_types=True,
            datetime=False,
            unicode_errors=None if errors == "strict" else errors,
        )

    def _make_default(self, errors: str) -> Callable[[Any], Any]:
        msgpack = _msgpack()
        cache = self._cache

        def default(obj: Any) -> Any:
            t = type(obj)
            hit = cache.get(t)
            if hit is None:
                hit = self._resolve(t)
                if len(cache) < _ENCODER_CACHE_MAX:
                    cache[t] = hit
            encode, is_ext = hit
            if not is_ext:
                return encode(obj)
            spec = encode(obj)
            return msgpack.ExtType(spec[0], self._packb(list(spec[1:]), errors))

        return default

    def _resolve(self, t: type) -> tuple[Callable[[Any], Any], bool]:
        """(encoder, returns-ext-spec) for objects of type `t`.

        Raises:
            TypeError: when `t` is not supported (see `_unsupported`).
        """
        if t is tuple:
            return list, False
        enc = self._encoders.get(t)
        if enc is None:
            enc = _lgembed_encoder(t) or _stdlib_encoder(t)
        if enc is not None:
            return enc, True
        if issubclass(t, BaseException):
            return repr, False
        if _registrable_kind(t) is None:
            base = _base_type_encoder(t)
            if base is not None:
                return base, False
        raise self._unsupported(t)

    def _unsupported(self, t: type) -> TypeError:
        name = _type_name(t)
        if _registrable_kind(t) is not None:
            msg = (
                f"Cannot serialize object of type '{name}' for a checkpoint: not a supported type. "
                f"Register it with MsgpackSerializer(allowed_types=[{name}]) or convert it to "
                "plain data (dict/list/str/...)."
            )
        else:
            msg = (
                f"Cannot serialize object of type '{name}' for a checkpoint: not a supported type. "
                "Convert it to plain data (dict/list/str/...) or to a dataclass registered with "
                "MsgpackSerializer(allowed_types=[...])."
            )
        return TypeError(msg)

    # --- unpacking ------------------------------------------------------------------

    def _unpack(self, data: bytes) -> Any:
        msgpack = _msgpack()
        try:
            try:
                return msgpack.unpackb(data, ext_hook=self._ext_hook, raw=False, strict_map_key=False)
            except TypeError as e:
                if "unhashable" not in str(e):
                    raise
                # an array used as a map key (a tuple key when written): slower path
                return msgpack.unpackb(
                    data,
                    ext_hook=self._ext_hook,
                    raw=False,
                    strict_map_key=False,
                    object_pairs_hook=_pairs_to_dict,
                )
        except DeserializationError:
            raise
        except (ValueError, TypeError) as e:
            msg = f"Loading a checkpoint value: corrupt msgpack data ({type(e).__name__}: {e})"
            raise DeserializationError(msg) from e

    def _ext_hook(self, code: int, data: bytes) -> Any:
        if not EXT_CONSTRUCTOR_SINGLE_ARG <= code <= EXT_PYDANTIC_V2:
            msg = f"Cannot load msgpack extension type {code} from a checkpoint: unknown ext code (known: 0-5)"
            raise DeserializationError(msg)
        payload = self._unpack(data)
        if (
            type(payload) is not list
            or len(payload) not in (3, 4)
            or type(payload[0]) is not str
            or type(payload[1]) is not str
        ):
            msg = f"Cannot load msgpack extension type {code} from a checkpoint: malformed payload {payload!r:.200}"
            raise DeserializationError(msg)
        key = f"{payload[0]}:{payload[1]}"
        if code == EXT_METHOD_SINGLE_ARG and (len(payload) != 4 or payload[3] != "fromisoformat"):
            method = payload[3] if len(payload) == 4 else None
            msg = (
                f"Refusing to call {key}.{method} while loading a checkpoint: "
                "only datetime:datetime.fromisoformat is allowed."
            )
            raise DeserializationError(msg, key)
        entry = self._decoders.get(key) or _builtin_table().get(key)
        if entry is not None and entry[0] != code:
            msg = f"Cannot load {key!r} from a checkpoint: stored as msgpack ext {code}, expected ext {entry[0]}"
            raise DeserializationError(msg, key)
        if entry is None:
            msg = (
                f"Refusing to load {key!r} (msgpack ext {code}) from a checkpoint: not an allowed type. "
                "If it is your class, register it with MsgpackSerializer(allowed_types=[...]) "
                "in the process that loads the checkpoint."
            )
            raise DeserializationError(msg, key)
        try:
            return entry[1](payload[2])
        except DeserializationError:
            raise
        except Exception as e:
            msg = f"Loading {key!r} from a checkpoint failed: {type(e).__name__}: {e}"
            raise DeserializationError(msg, key) from e


def _builtin_table() -> dict[str, tuple[int, Callable[[Any], Any]]]:
    global _BUILTIN_DECODERS
    if _BUILTIN_DECODERS is None:
        _BUILTIN_DECODERS = _builtin_decoders()
    return _BUILTIN_DECODERS
