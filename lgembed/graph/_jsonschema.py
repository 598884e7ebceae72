"""JSON schemas of a compiled graph's input, output and context.

Why this module exists: LangGraph's `get_input_jsonschema()`,
`get_output_jsonschema()` and `get_context_jsonschema()` are what servers and
UIs read to build forms and validate requests, and they are pydantic output
(`TypeAdapter(...).json_schema()`, `model_json_schema()` of a `create_model`
model). lgembed calls the same pydantic APIs on the same types, so titles,
`required`, defaults, descriptions and `$defs` come out identical, including
LangGraph's errors (a `typing.TypedDict` on Python < 3.12 raises pydantic's
`PydanticUserError` there too).

pydantic is optional: it is imported inside the functions only, so `import
lgembed.graph` never loads it, and a missing pydantic raises an ImportError that
says which methods need it.

lgembed's own message classes are not pydantic models. Where LangGraph's schemas
hold langchain-core messages (`MessagesState`, `Annotated[list[AnyMessage],
add_messages]`) lgembed substitutes markers while pydantic runs and then writes
the message definitions langchain-core 1.8.3 produces (`_MESSAGE_DEFS_JSON`).

Why over 600 lines: over 200 of them are that recorded JSON; the code is ~500.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import types
import warnings
from inspect import isclass
from typing import Annotated, Any, Optional, Union, get_args, get_origin, get_type_hints

__all__ = ("context_jsonschema", "input_jsonschema", "output_jsonschema")

_PLACEHOLDER = "$lgembed_message"
# key of the placeholder JSON a message marker emits; replaced after pydantic ran

_ANY_MESSAGE_REFS = (
    "AIMessage",
    "HumanMessage",
    "ChatMessage",
    "SystemMessage",
    "FunctionMessage",
    "ToolMessage",
    "AIMessageChunk",
    "HumanMessageChunk",
    "ChatMessageChunk",
    "SystemMessageChunk",
    "FunctionMessageChunk",
    "ToolMessageChunk",
)
# the members of langchain-core's discriminated `AnyMessage` union, in its order

_MESSAGE_CLASSES = (
    "AIMessage",
    "BaseMessage",
    "FunctionMessage",
    "HumanMessage",
    "RemoveMessage",
    "SystemMessage",
    "ToolMessage",
)
# lgembed.messages classes described by the langchain-core definition of the same name


# --- public entry points -------------------------------------------------------------


def input_jsonschema(graph: Any, config: Any = None) -> dict[str, Any]:
    """JSON schema of a compiled graph's input, as LangGraph 1.2 builds it.

    Args:
        graph: The compiled graph (`CompiledStateGraph`).
        config: Ignored, as in LangGraph (kept for the signature).

    Returns:
        The JSON schema of the builder's input schema.

    Raises:
        ImportError: pydantic is not installed.
        NotImplementedError: `graph` was not compiled from a StateGraph.
        pydantic.errors.PydanticUserError: pydantic rejects the schema (e.g. a
            `typing.TypedDict` on Python < 3.12, a field type without a JSON
            schema), as in LangGraph.
    """
    builder = _builder(graph, "get_input_jsonschema")
    return _get_json_schema(
        builder.input_schema, builder.schemas, builder.channels, _runnable_name(graph, "Input")
    )


def output_jsonschema(graph: Any, config: Any = None) -> dict[str, Any]:
    """JSON schema of a compiled graph's output, as LangGraph 1.2 builds it.

    Args:
        graph: The compiled graph (`CompiledStateGraph`).
        config: Ignored, as in LangGraph (kept for the signature).

    Returns:
        The JSON schema of the builder's output schema.

    Raises:
        ImportError: pydantic is not installed.
        NotImplementedError: `graph` was not compiled from a StateGraph.
        pydantic.errors.PydanticUserError: pydantic rejects the schema, as in LangGraph
            (see `input_jsonschema`).
    """
    builder = _builder(graph, "get_output_jsonschema")
    return _get_json_schema(
        builder.output_schema, builder.schemas, builder.channels, _runnable_name(graph, "Output")
    )


def context_jsonschema(graph: Any) -> dict[str, Any] | None:
    """JSON schema of a graph's context schema, or None when it has none.

    Args:
        graph: The compiled graph.

    Returns:
        The schema of a pydantic model, TypedDict or dataclass context schema; None
        without a context schema.

    Raises:
        ImportError: pydantic is not installed (only asked for when there is a schema).
        ValueError: the context schema is another kind of type (LangGraph's message).
        pydantic.errors.PydanticUserError: pydantic rejects the schema, as in LangGraph.
    """
    context_schema = getattr(graph, "context_schema", None)
    if context_schema is None:
        return None
    pydantic = _import_pydantic("get_context_jsonschema")
    if isclass(context_schema) and issubclass(context_schema, pydantic.BaseModel):
        return context_schema.model_json_schema()
    if _is_typeddict(context_schema):
        return _typeddict_schema(context_schema)
    if dataclasses.is_dataclass(context_schema):
        return pydantic.TypeAdapter(context_schema).json_schema()
    msg = (
        f"Invalid context schema type: {context_schema}. Must be a BaseModel, TypedDict or dataclass."
    )
    raise ValueError(msg)


# --- helpers ---------------------------------------------------------------------------


def _import_pydantic(method: str) -> Any:
    try:
        import pydantic
    except ImportError as e:
        msg = (
            f"{method}() needs pydantic, which is not installed: lgembed builds JSON schemas "
            "with pydantic, as LangGraph does. Install it with `pip install pydantic`."
        )
        raise ImportError(msg) from e
    return pydantic


def _builder(graph: Any, method: str) -> Any:
    builder = getattr(graph, "builder", None)
    if builder is None:
        msg = f"{method}() is available on graphs compiled from a StateGraph"
        raise NotImplementedError(msg)
    _import_pydantic(method)
    return builder


def _runnable_name(graph: Any, suffix: str) -> str:
    # langchain-core's Runnable.get_name(suffix): "LangGraph" -> "LangGraphInput",
    # "outer" -> "outer_input"
    name = getattr(graph, "name", None) or type(graph).__name__
    if name[0].isupper():
        return name + suffix.title()
    return name + "_" + suffix.lower()


def _is_typeddict(typ: Any) -> bool:
    # typing_extensions.is_typeddict: both typing's and typing_extensions' TypedDicts
    try:
        from typing_extensions import is_typeddict
    except ImportError:  # pragma: no cover - pydantic requires typing_extensions
        from typing import is_typeddict
    return is_typeddict(typ)


def _get_json_schema(typ: Any, schemas: dict, channels: dict, name: str) -> dict[str, Any]:
    # LangGraph's graph/state.py `_get_json_schema`
    import pydantic

    from lgembed._channels import BaseChannel

    if isclass(typ) and issubclass(typ, pydantic.BaseModel):
        return typ.model_json_schema()
    if _is_typeddict(typ):
        return _typeddict_schema(typ)
    keys = list(schemas[typ].keys())
    swap = _MessageSwap()
    if len(keys) == 1 and keys[0] == "__root__":
        model = _create_root_model(name, swap(channels[keys[0]].UpdateType), None)
        return swap.finish(model.model_json_schema())
    fields = {
        k: (swap(channels[k].UpdateType), _get_field_default(k, channels[k].UpdateType, typ))
        for k in schemas[typ]
        if k in channels and isinstance(channels[k], BaseChannel)
    }
    return swap.finish(_create_model(name, fields).model_json_schema())


def _create_root_model(name: str, type_: Any, default: Any) -> Any:
    # langchain-core's `_create_root_model`: a RootModel whose schema title is `name`
    from pydantic import ConfigDict, RootModel

    def model_json_schema(cls: Any, *args: Any, **kwargs: Any) -> dict[str, Any]:
        schema = super(cls, cls).model_json_schema(*args, **kwargs)
        schema["title"] = name
        return schema

    attributes = {
        "__annotations__": {"root": type_},
        "model_config": ConfigDict(arbitrary_types_allowed=True),
        "model_json_schema": classmethod(model_json_schema),
        "__module__": __name__,
        "root": default,
    }
    with warnings.catch_warnings():
        return type(name, (RootModel,), attributes)


def _create_model(name: str, fields: dict[str, tuple[Any, Any]]) -> Any:
    # LangGraph's `_internal/_pydantic.create_model` (uncached)
    from pydantic import BaseModel, ConfigDict, Field, create_model

    reserved = {key for key in dir(BaseModel) if not key.startswith("_")}
    remapped: dict[str, Any] = {}
    for key, (type_, default) in fields.items():
        if key.startswith("_") or key in reserved:
            # pydantic cannot have these names as fields: alias them (LangGraph's remap)
            remapped[f"private_{key}"] = (
                type_,
                Field(
                    default=default,
                    alias=key,
                    serialization_alias=key,
                    title=key.lstrip("_").replace("_", " ").title(),
                ),
            )
        else:
            remapped[key] = (type_, default)
    config = ConfigDict(arbitrary_types_allowed=True, frozen=True, protected_namespaces=())
    with warnings.catch_warnings():
        if any(key.startswith("model") for key in fields):
            warnings.filterwarnings(action="ignore")
        return create_model(name, __config__=config, **remapped)


def _get_field_default(name: str, type_: Any, schema: Any) -> Any:
    # LangGraph's `_internal/_fields.get_field_default`
    optional_keys = getattr(schema, "__optional_keys__", frozenset())
    irq = _is_required_type(type_)
    if name in optional_keys:
        return ... if irq else None
    if irq is not None:
        return ... if irq else None
    if dataclasses.is_dataclass(schema):
        field = next((f for f in dataclasses.fields(schema) if f.name == name), None)
        if field:
            if field.default is not dataclasses.MISSING and field.default is not ...:
                return field.default
            if field.default_factory is not dataclasses.MISSING:
                return field.default_factory()
    if _is_optional_type(type_):
        return None
    return ...


def _required_markers() -> tuple[Any, Any]:
    from typing_extensions import NotRequired, Required

    return Required, NotRequired


def _is_required_type(type_: Any) -> bool | None:
    required, not_required = _required_markers()
    origin = get_origin(type_)
    if origin is required:
        return True
    if origin is not_required:
        return False
    if origin is Annotated or getattr(origin, "__args__", None):
        return _is_required_type(type_.__args__[0])
    return None


def _is_optional_type(type_: Any) -> bool:
    if isinstance(type_, types.UnionType):
        return any(arg is type(None) or _is_optional_type(arg) for arg in type_.__args__)
    if hasattr(type_, "__origin__") and hasattr(type_, "__args__"):
        origin = get_origin(type_)
        if origin is Optional:
            return True
        if origin is Union:
            return any(arg is type(None) or _is_optional_type(arg) for arg in type_.__args__)
        if origin is Annotated:
            return _is_optional_type(type_.__args__[0])
        return origin is None
    if getattr(type_, "__bound__", None) is not None:
        return _is_optional_type(type_.__bound__)
    return type_ is None


def _typeddict_schema(typ: Any) -> dict[str, Any]:
    # TypeAdapter(typ).json_schema(), with lgembed messages swapped for markers
    from pydantic import TypeAdapter

    swap = _MessageSwap()
    rebuilt = _swap_typeddict(typ, swap)
    return swap.finish(TypeAdapter(rebuilt).json_schema())


def _swap_typeddict(typ: Any, swap: _MessageSwap) -> Any:
    """`typ`, or a copy whose fields hold message markers instead of lgembed messages.

    Why a copy: pydantic reads a TypedDict's annotations from the class. The copy
    keeps the name, module, docstring and required keys (so the schema is the same)
    and the TypedDict flavour, except that anything derived from lgembed's
    `MessagesState` (a `typing.TypedDict`) becomes a `typing_extensions.TypedDict`,
    as LangGraph's `MessagesState` and its subclasses are (pydantic rejects
    `typing.TypedDict` on Python < 3.12).
    """
    if "lgembed.messages" not in sys.modules:
        return typ
    try:
        hints = get_type_hints(typ, include_extras=True)
    except Exception:  # noqa: BLE001 - let pydantic report unresolvable annotations
        return typ
    required, not_required = _required_markers()
    fields = {}
    for key, hint in hints.items():
        while get_origin(hint) in (required, not_required):
            hint = get_args(hint)[0]
        fields[key] = hint
    swapped = {key: swap(hint) for key, hint in fields.items()}
    if all(swapped[key] is fields[key] for key in fields):
        return typ
    from lgembed.graph.message import MessagesState

    if _from_messages_state(typ, MessagesState) or type(typ).__module__ != "typing":
        from typing_extensions import TypedDict
    else:
        from typing import TypedDict
    required_keys = getattr(typ, "__required_keys__", frozenset(swapped))
    annotations = {
        key: (required if key in required_keys else not_required)[hint] for key, hint in swapped.items()
    }
    copy = TypedDict(typ.__name__, annotations)  # type: ignore[operator]
    copy.__module__ = typ.__module__
    copy.__qualname__ = typ.__qualname__
    # LangGraph's MessagesState has no docstring (so no "description")
    copy.__doc__ = None if typ is MessagesState else typ.__doc__
    if hasattr(typ, "__pydantic_config__"):
        copy.__pydantic_config__ = typ.__pydantic_config__
    return copy


def _from_messages_state(typ: Any, messages_state: Any) -> bool:
    # Python < 3.12 keeps no trace of a TypedDict's bases, but an inherited field
    # keeps its annotation object
    annotations = getattr(typ, "__annotations__", {})
    return annotations.get("messages") is messages_state.__annotations__["messages"]


class _MessageSwap:
    """Replaces lgembed message types in annotations by markers pydantic accepts.

    `swap(tp)` returns `tp` itself when it holds no lgembed message type. The
    markers emit placeholder JSON; `finish(schema)` turns the placeholders into
    langchain-core's `$ref`s and adds the definitions they need.
    """

    __slots__ = ("any_members", "any_message", "markers", "used")

    def __init__(self) -> None:
        self.markers: dict[Any, Any] = {}
        self.used: set[str] = set()
        self.any_message: Any = None
        self.any_members: tuple = ()
        module = sys.modules.get("lgembed.messages")
        if module is None:
            return
        self.any_message = module.AnyMessage
        self.any_members = get_args(module.AnyMessage)
        self.markers[module.AnyMessage] = self._marker("AnyMessage", ref=False)
        for name in _MESSAGE_CLASSES:
            self.markers[getattr(module, name)] = self._marker(name, ref=True)

    def _marker(self, name: str, *, ref: bool) -> type:
        used = self.used

        def core_schema(cls: Any, source: Any, handler: Any) -> Any:
            from pydantic_core import core_schema as cs

            # a `ref` makes pydantic treat it like a model: a $defs entry, no field title
            return cs.any_schema(ref=f"{_PLACEHOLDER}:{name}") if ref else cs.any_schema()

        def json_schema(cls: Any, schema: Any, handler: Any) -> dict[str, Any]:
            used.add(name)
            return {_PLACEHOLDER: name}

        return type(
            name,
            (),
            {
                "__get_pydantic_core_schema__": classmethod(core_schema),
                "__get_pydantic_json_schema__": classmethod(json_schema),
            },
        )

    def __call__(self, tp: Any) -> Any:
        if not self.markers:
            return tp
        try:
            marker = self.markers.get(tp)
        except TypeError:  # unhashable annotation
            return tp
        if marker is not None:
            return marker
        origin = get_origin(tp)
        if origin is None:
            return tp
        args = get_args(tp)
        if origin is Annotated:
            inner = self(args[0])
            return tp if inner is args[0] else Annotated[(inner, *tp.__metadata__)]
        if _is_literal(origin):
            return tp
        is_union = isinstance(tp, types.UnionType) or origin is Union
        if is_union and all(any(a is m for a in args) for m in self.any_members):
            # Optional[AnyMessage] flattens lgembed's plain Union into its members;
            # langchain-core's AnyMessage stays one (annotated) member
            members = [any(a is m for m in self.any_members) for a in args]
            first = members.index(True)
            rest = [self(a) for a, member in zip(args, members) if not member]
            return Union[(*rest[:first], self.markers[self.any_message], *rest[first:])]
        new_args = tuple(self(a) if not isinstance(a, (list, tuple)) else a for a in args)
        if all(n is a for n, a in zip(new_args, args)):
            return tp
        if is_union:
            return Union[new_args]  # noqa: UP007 - args only known at run time
        if isinstance(tp, types.GenericAlias):
            return types.GenericAlias(origin, new_args)
        copy_with = getattr(tp, "copy_with", None)
        return copy_with(new_args) if copy_with is not None else tp

    def finish(self, schema: dict[str, Any]) -> dict[str, Any]:
        """`schema` with placeholders replaced and the message definitions added."""
        if not self.used:
            return schema
        library = json.loads("".join(_MESSAGE_DEFS_JSON))
        defs = dict(schema.get("$defs", {}))
        renamed: dict[str, str] = {}
        for key, value in list(defs.items()):
            if isinstance(value, dict) and set(value) == {_PLACEHOLDER}:
                renamed[key] = value[_PLACEHOLDER]
                del defs[key]

        def walk(value: Any) -> Any:
            if isinstance(value, dict):
                if _PLACEHOLDER in value:
                    rest = {k: walk(v) for k, v in value.items() if k != _PLACEHOLDER}
                    name = value[_PLACEHOLDER]
                    if name == "AnyMessage":
                        rest["oneOf"] = [{"$ref": f"#/$defs/{n}"} for n in _ANY_MESSAGE_REFS]
                    else:
                        rest["$ref"] = f"#/$defs/{name}"
                    return dict(sorted(rest.items()))
                ref = value.get("$ref")
                if isinstance(ref, str) and ref.startswith("#/$defs/") and ref[8:] in renamed:
                    value = {**value, "$ref": f"#/$defs/{renamed[ref[8:]]}"}
                return {k: walk(v) if k != "$defs" else v for k, v in value.items()}
            if isinstance(value, list):
                return [walk(v) for v in value]
            return value

        out = walk(schema)
        defs = {k: walk(v) for k, v in defs.items()}
        # the langchain-core definitions used, and those they refer to
        pending = [n for n in self.used if n != "AnyMessage"]
        if "AnyMessage" in self.used:
            pending.extend(_ANY_MESSAGE_REFS)
        while pending:
            name = pending.pop()
            if name in defs:
                continue
            defs[name] = library[name]
            pending.extend(_refs(library[name]))
        out["$defs"] = dict(sorted(defs.items()))
        return dict(sorted(out.items()))


def _is_literal(origin: Any) -> bool:
    from typing import Literal

    if origin is Literal:
        return True
    te = sys.modules.get("typing_extensions")
    return te is not None and origin is getattr(te, "Literal", None)


def _refs(value: Any) -> list[str]:
    found: list[str] = []
    if isinstance(value, dict):
        ref = value.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            found.append(ref[8:])
        for v in value.values():
            found.extend(_refs(v))
    elif isinstance(value, list):
        for v in value:
            found.extend(_refs(v))
    return found


# --- langchain-core 1.8.3 message definitions -----------------------------------------
# `TypeAdapter(T).json_schema()["$defs"]` (pydantic 2.14) for a typing_extensions
# TypedDict `T` with fields of types langchain_core.messages.AnyMessage, AIMessage,
# HumanMessage, BaseMessage, RemoveMessage, ToolMessage, SystemMessage and
# FunctionMessage, dumped with json.dumps(separators=(",", ":")) and cut into pieces.

_MESSAGE_DEFS_JSON = (
    '{"AIMessage":{"additionalProperties":true,"description":"Message from an AI.\\n\\nAn `AIMessage` i'
    's returned from a chat model as a response to a prompt.\\n\\nThis message represents the output of'
    ' the model and consists of both\\nthe raw output as returned by the model and standardized fields'
    '\\n(e.g., tool calls, usage metadata) added by the LangChain framework.","properties":{"content":'
    '{"anyOf":[{"type":"string"},{"items":{"anyOf":[{"type":"string"},{"additionalProperties":true,"t'
    'ype":"object"}]},"type":"array"}],"title":"Content"},"additional_kwargs":{"additionalProperties"'
    ':true,"title":"Additional Kwargs","type":"object"},"response_metadata":{"additionalProperties":t'
    'rue,"title":"Response Metadata","type":"object"},"type":{"const":"ai","default":"ai","title":"Ty'
    'pe","type":"string"},"name":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null,"title":'
    '"Name"},"id":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null,"title":"Id"},"tool_cal'
    'ls":{"items":{"$ref":"#/$defs/ToolCall"},"title":"Tool Calls","type":"array"},"invalid_tool_call'
    's":{"items":{"$ref":"#/$defs/InvalidToolCall"},"title":"Invalid Tool Calls","type":"array"},"usa'
    'ge_metadata":{"anyOf":[{"$ref":"#/$defs/UsageMetadata"},{"type":"null"}],"default":null}},"requi'
    'red":["content"],"title":"AIMessage","type":"object"},"AIMessageChunk":{"additionalProperties":t'
    'rue,"description":"Message chunk from an AI (yielded when streaming).","properties":{"content":{'
    '"anyOf":[{"type":"string"},{"items":{"anyOf":[{"type":"string"},{"additionalProperties":true,"ty'
    'pe":"object"}]},"type":"array"}],"title":"Content"},"additional_kwargs":{"additionalProperties":'
    'true,"title":"Additional Kwargs","type":"object"},"response_metadata":{"additionalProperties":tr'
    'ue,"title":"Response Metadata","type":"object"},"type":{"const":"AIMessageChunk","default":"AIMe'
    'ssageChunk","title":"Type","type":"string"},"name":{"anyOf":[{"type":"string"},{"type":"null"}],'
    '"default":null,"title":"Name"},"id":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null,'
    '"title":"Id"},"tool_calls":{"items":{"$ref":"#/$defs/ToolCall"},"title":"Tool Calls","type":"arr'
    'ay"},"invalid_tool_calls":{"items":{"$ref":"#/$defs/InvalidToolCall"},"title":"Invalid Tool Call'
    's","type":"array"},"usage_metadata":{"anyOf":[{"$ref":"#/$defs/UsageMetadata"},{"type":"null"}],'
    '"default":null},"tool_call_chunks":{"items":{"$ref":"#/$defs/ToolCallChunk"},"title":"Tool Call '
    'Chunks","type":"array"},"chunk_position":{"anyOf":[{"const":"last","type":"string"},{"type":"nul'
    'l"}],"default":null,"title":"Chunk Position"}},"required":["content"],"title":"AIMessageChunk","'
    'type":"object"},"BaseMessage":{"additionalProperties":true,"description":"Base abstract message '
    'class.\\n\\nMessages are the inputs and outputs of a chat model.\\n\\nExamples include [`HumanMessag'
    'e`][langchain.messages.HumanMessage],\\n[`AIMessage`][langchain.messages.AIMessage], and\\n[`Syste'
    'mMessage`][langchain.messages.SystemMessage].","properties":{"content":{"anyOf":[{"type":"string'
    '"},{"items":{"anyOf":[{"type":"string"},{"additionalProperties":true,"type":"object"}]},"type":"'
    'array"}],"title":"Content"},"additional_kwargs":{"additionalProperties":true,"title":"Additional'
    ' Kwargs","type":"object"},"response_metadata":{"additionalProperties":true,"title":"Response Met'
    'adata","type":"object"},"type":{"title":"Type","type":"string"},"name":{"anyOf":[{"type":"string'
    '"},{"type":"null"}],"default":null,"title":"Name"},"id":{"anyOf":[{"type":"string"},{"type":"nul'
    'l"}],"default":null,"title":"Id"}},"required":["content","type"],"title":"BaseMessage","type":"o'
    'bject"},"ChatMessage":{"additionalProperties":true,"description":"Message that can be assigned a'
    'n arbitrary speaker (i.e. role).","properties":{"content":{"anyOf":[{"type":"string"},{"items":{'
    '"anyOf":[{"type":"string"},{"additionalProperties":true,"type":"object"}]},"type":"array"}],"tit'
    'le":"Content"},"additional_kwargs":{"additionalProperties":true,"title":"Additional Kwargs","typ'
    'e":"object"},"response_metadata":{"additionalProperties":true,"title":"Response Metadata","type"'
    ':"object"},"type":{"const":"chat","default":"chat","title":"Type","type":"string"},"name":{"anyO'
    'f":[{"type":"string"},{"type":"null"}],"default":null,"title":"Name"},"id":{"anyOf":[{"type":"st'
    'ring"},{"type":"null"}],"default":null,"title":"Id"},"role":{"title":"Role","type":"string"}},"r'
    'equired":["content","role"],"title":"ChatMessage","type":"object"},"ChatMessageChunk":{"addition'
    'alProperties":true,"description":"Chat Message chunk.","properties":{"content":{"anyOf":[{"type"'
    ':"string"},{"items":{"anyOf":[{"type":"string"},{"additionalProperties":true,"type":"object"}]},'
    '"type":"array"}],"title":"Content"},"additional_kwargs":{"additionalProperties":true,"title":"Ad'
    'ditional Kwargs","type":"object"},"response_metadata":{"additionalProperties":true,"title":"Resp'
    'onse Metadata","type":"object"},"type":{"const":"ChatMessageChunk","default":"ChatMessageChunk",'
    '"title":"Type","type":"string"},"name":{"anyOf":[{"type":"string"},{"type":"null"}],"default":nu'
    'll,"title":"Name"},"id":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null,"title":"Id"'
    '},"role":{"title":"Role","type":"string"}},"required":["content","role"],"title":"ChatMessageChu'
    'nk","type":"object"},"FunctionMessage":{"additionalProperties":true,"description":"Message for p'
    'assing the result of executing a tool back to a model.\\n\\n`FunctionMessage` are an older version'
    ' of the `ToolMessage` schema, and\\ndo not contain the `tool_call_id` field.\\n\\nThe `tool_call_id'
    '` field is used to associate the tool call request with the\\ntool call response. Useful in situa'
    'tions where a chat model is able\\nto request multiple tool calls in parallel.","properties":{"co'
    'ntent":{"anyOf":[{"type":"string"},{"items":{"anyOf":[{"type":"string"},{"additionalProperties":'
    'true,"type":"object"}]},"type":"array"}],"title":"Content"},"additional_kwargs":{"additionalProp'
    'erties":true,"title":"Additional Kwargs","type":"object"},"response_metadata":{"additionalProper'
    'ties":true,"title":"Response Metadata","type":"object"},"type":{"const":"function","default":"fu'
    'nction","title":"Type","type":"string"},"name":{"title":"Name","type":"string"},"id":{"anyOf":[{'
    '"type":"string"},{"type":"null"}],"default":null,"title":"Id"}},"required":["content","name"],"t'
    'itle":"FunctionMessage","type":"object"},"FunctionMessageChunk":{"additionalProperties":true,"de'
    'scription":"Function Message chunk.","properties":{"content":{"anyOf":[{"type":"string"},{"items'
    '":{"anyOf":[{"type":"string"},{"additionalProperties":true,"type":"object"}]},"type":"array"}],"'
    'title":"Content"},"additional_kwargs":{"additionalProperties":true,"title":"Additional Kwargs","'
    'type":"object"},"response_metadata":{"additionalProperties":true,"title":"Response Metadata","ty'
    'pe":"object"},"type":{"const":"FunctionMessageChunk","default":"FunctionMessageChunk","title":"T'
    'ype","type":"string"},"name":{"title":"Name","type":"string"},"id":{"anyOf":[{"type":"string"},{'
    '"type":"null"}],"default":null,"title":"Id"}},"required":["content","name"],"title":"FunctionMes'
    'sageChunk","type":"object"},"HumanMessage":{"additionalProperties":true,"description":"Message f'
    'rom the user.\\n\\nA `HumanMessage` is a message that is passed in from a user to the model.\\n\\nEx'
    'ample:\\n    ```python\\n    from langchain_core.messages import HumanMessage, SystemMessage\\n\\n  '
    '  messages = [\\n        SystemMessage(content=\\"You are a helpful assistant! Your name is Bob.\\"'
    '),\\n        HumanMessage(content=\\"What is your name?\\"),\\n    ]\\n\\n    # Instantiate a chat mod'
    'el and invoke it with the messages\\n    model = ...\\n    print(model.invoke(messages))\\n    ```"'
    ',"properties":{"content":{"anyOf":[{"type":"string"},{"items":{"anyOf":[{"type":"string"},{"addi'
    'tionalProperties":true,"type":"object"}]},"type":"array"}],"title":"Content"},"additional_kwargs'
    '":{"additionalProperties":true,"title":"Additional Kwargs","type":"object"},"response_metadata":'
    '{"additionalProperties":true,"title":"Response Metadata","type":"object"},"type":{"const":"human'
    '","default":"human","title":"Type","type":"string"},"name":{"anyOf":[{"type":"string"},{"type":"'
    'null"}],"default":null,"title":"Name"},"id":{"anyOf":[{"type":"string"},{"type":"null"}],"defaul'
    't":null,"title":"Id"}},"required":["content"],"title":"HumanMessage","type":"object"},"HumanMess'
    'ageChunk":{"additionalProperties":true,"description":"Human Message chunk.","properties":{"conte'
    'nt":{"anyOf":[{"type":"string"},{"items":{"anyOf":[{"type":"string"},{"additionalProperties":tru'
    'e,"type":"object"}]},"type":"array"}],"title":"Content"},"additional_kwargs":{"additionalPropert'
    'ies":true,"title":"Additional Kwargs","type":"object"},"response_metadata":{"additionalPropertie'
    's":true,"title":"Response Metadata","type":"object"},"type":{"const":"HumanMessageChunk","defaul'
    't":"HumanMessageChunk","title":"Type","type":"string"},"name":{"anyOf":[{"type":"string"},{"type'
    '":"null"}],"default":null,"title":"Name"},"id":{"anyOf":[{"type":"string"},{"type":"null"}],"def'
    'ault":null,"title":"Id"}},"required":["content"],"title":"HumanMessageChunk","type":"object"},"I'
    'nputTokenDetails":{"additionalProperties":true,"description":"Breakdown of input token counts.\\n'
    '\\nDoes *not* need to sum to full input token count. Does *not* need to have all keys.\\n\\nExample'
    ':\\n    ```python\\n    {\\n        \\"audio\\": 10,\\n        \\"cache_creation\\": 200,\\n        \\"cac'
    'he_read\\": 100,\\n    }\\n    ```\\n\\nMay also hold extra provider-specific keys.\\n\\n!!! version-ad'
    'ded \\"Added in `langchain-core` 0.3.9\\"","properties":{"audio":{"title":"Audio","type":"integer"'
    '},"cache_creation":{"title":"Cache Creation","type":"integer"},"cache_read":{"title":"Cache Read'
    '","type":"integer"}},"title":"InputTokenDetails","type":"object"},"InvalidToolCall":{"additional'
    'Properties":true,"description":"Allowance for errors made by LLM.\\n\\nHere we add an `error` key '
    'to surface errors made during generation\\n(e.g., invalid JSON arguments.)","properties":{"type":'
    '{"const":"invalid_tool_call","title":"Type","type":"string"},"id":{"anyOf":[{"type":"string"},{"'
    'type":"null"}],"title":"Id"},"name":{"anyOf":[{"type":"string"},{"type":"null"}],"title":"Name"}'
    ',"args":{"anyOf":[{"type":"string"},{"type":"null"}],"title":"Args"},"error":{"anyOf":[{"type":"'
    'string"},{"type":"null"}],"title":"Error"},"index":{"anyOf":[{"type":"integer"},{"type":"string"'
    '}],"title":"Index"},"extras":{"additionalProperties":true,"title":"Extras","type":"object"}},"re'
    'quired":["type","id","name","args","error"],"title":"InvalidToolCall","type":"object"},"OutputTo'
    'kenDetails":{"additionalProperties":true,"description":"Breakdown of output token counts.\\n\\nDoe'
    's *not* need to sum to full output token count. Does *not* need to have all keys.\\n\\nExample:\\n '
    '   ```python\\n    {\\n        \\"audio\\": 10,\\n        \\"reasoning\\": 200,\\n    }\\n    ```\\n\\nMay '
    'also hold extra provider-specific keys.\\n\\n!!! version-added \\"Added in `langchain-core` 0.3.9\\"'
    '","properties":{"audio":{"title":"Audio","type":"integer"},"reasoning":{"title":"Reasoning","typ'
    'e":"integer"}},"title":"OutputTokenDetails","type":"object"},"RemoveMessage":{"additionalPropert'
    'ies":true,"description":"Message responsible for deleting other messages.","properties":{"conten'
    't":{"anyOf":[{"type":"string"},{"items":{"anyOf":[{"type":"string"},{"additionalProperties":true'
    ',"type":"object"}]},"type":"array"}],"title":"Content"},"additional_kwargs":{"additionalProperti'
    'es":true,"title":"Additional Kwargs","type":"object"},"response_metadata":{"additionalProperties'
    '":true,"title":"Response Metadata","type":"object"},"type":{"const":"remove","default":"remove",'
    '"title":"Type","type":"string"},"name":{"anyOf":[{"type":"string"},{"type":"null"}],"default":nu'
    'll,"title":"Name"},"id":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null,"title":"Id"'
    '}},"required":["content"],"title":"RemoveMessage","type":"object"},"SystemMessage":{"additionalP'
    'roperties":true,"description":"Message for priming AI behavior.\\n\\nThe system message is usually'
    ' passed in as the first of a sequence\\nof input messages.\\n\\nExample:\\n    ```python\\n    from l'
    'angchain_core.messages import HumanMessage, SystemMessage\\n\\n    messages = [\\n        SystemMes'
    'sage(content=\\"You are a helpful assistant! Your name is Bob.\\"),\\n        HumanMessage(content='
    '\\"What is your name?\\"),\\n    ]\\n\\n    # Define a chat model and invoke it with the messages\\n  '
    '  print(model.invoke(messages))\\n    ```","properties":{"content":{"anyOf":[{"type":"string"},{"'
    'items":{"anyOf":[{"type":"string"},{"additionalProperties":true,"type":"object"}]},"type":"array'
    '"}],"title":"Content"},"additional_kwargs":{"additionalProperties":true,"title":"Additional Kwar'
    'gs","type":"object"},"response_metadata":{"additionalProperties":true,"title":"Response Metadata'
    '","type":"object"},"type":{"const":"system","default":"system","title":"Type","type":"string"},"'
    'name":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null,"title":"Name"},"id":{"anyOf":'
    '[{"type":"string"},{"type":"null"}],"default":null,"title":"Id"}},"required":["content"],"title"'
    ':"SystemMessage","type":"object"},"SystemMessageChunk":{"additionalProperties":true,"description'
    '":"System Message chunk.","properties":{"content":{"anyOf":[{"type":"string"},{"items":{"anyOf":'
    '[{"type":"string"},{"additionalProperties":true,"type":"object"}]},"type":"array"}],"title":"Con'
    'tent"},"additional_kwargs":{"additionalProperties":true,"title":"Additional Kwargs","type":"obje'
    'ct"},"response_metadata":{"additionalProperties":true,"title":"Response Metadata","type":"object'
    '"},"type":{"const":"SystemMessageChunk","default":"SystemMessageChunk","title":"Type","type":"st'
    'ring"},"name":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null,"title":"Name"},"id":{'
    '"anyOf":[{"type":"string"},{"type":"null"}],"default":null,"title":"Id"}},"required":["content"]'
    ',"title":"SystemMessageChunk","type":"object"},"ToolCall":{"additionalProperties":true,"descript'
    'ion":"Represents an AI\'s request to call a tool.\\n\\nExample:\\n    ```python\\n    {\\"name\\": \\"fo'
    'o\\", \\"args\\": {\\"a\\": 1}, \\"id\\": \\"123\\"}\\n    ```\\n\\n    This represents a request to call th'
    'e tool named `\'foo\'` with arguments\\n    `{\\"a\\": 1}` and an identifier of `\'123\'`.\\n\\n!!! note '
    '\\"Factory function\\"\\n\\n    `tool_call` may also be used as a factory to create a `ToolCall`. Be'
    'nefits\\n    include:\\n\\n    * Required arguments strictly validated at creation time","propertie'
    's":{"name":{"title":"Name","type":"string"},"args":{"additionalProperties":true,"title":"Args","'
    'type":"object"},"id":{"anyOf":[{"type":"string"},{"type":"null"}],"title":"Id"},"type":{"const":'
    '"tool_call","title":"Type","type":"string"}},"required":["name","args","id"],"title":"ToolCall",'
    '"type":"object"},"ToolCallChunk":{"additionalProperties":true,"description":"A chunk of a tool c'
    'all (yielded when streaming).\\n\\nWhen merging `ToolCallChunk` objects (e.g., via `AIMessageChunk'
    '.__add__`), all\\nstring attributes are concatenated. Chunks are only merged if their values of\\n'
    '`index` are equal and not `None`.\\n\\nExample:\\n```python\\nleft_chunks = [ToolCallChunk(name=\\"fo'
    'o\\", args=\'{\\"a\\":\', index=0)]\\nright_chunks = [ToolCallChunk(name=None, args=\\"1}\\", index=0)]\\'
    'n\\n(\\n    AIMessageChunk(content=\\"\\", tool_call_chunks=left_chunks)\\n    + AIMessageChunk(conte'
    'nt=\\"\\", tool_call_chunks=right_chunks)\\n).tool_call_chunks == [ToolCallChunk(name=\\"foo\\", args'
    '=\'{\\"a\\":1}\', index=0)]\\n```","properties":{"name":{"anyOf":[{"type":"string"},{"type":"null"}],'
    '"title":"Name"},"args":{"anyOf":[{"type":"string"},{"type":"null"}],"title":"Args"},"id":{"anyOf'
    '":[{"type":"string"},{"type":"null"}],"title":"Id"},"index":{"anyOf":[{"type":"integer"},{"type"'
    ':"null"}],"title":"Index"},"type":{"const":"tool_call_chunk","title":"Type","type":"string"}},"r'
    'equired":["name","args","id","index"],"title":"ToolCallChunk","type":"object"},"ToolMessage":{"a'
    'dditionalProperties":true,"description":"Message for passing the result of executing a tool back'
    ' to a model.\\n\\n`ToolMessage` objects contain the result of a tool invocation. Typically, the re'
    'sult\\nis encoded inside the `content` field.\\n\\n`tool_call_id` is used to associate the tool cal'
    'l request with the tool call\\nresponse. Useful in situations where a chat model is able to reque'
    'st multiple tool\\ncalls in parallel.\\n\\nExample:\\n    A `ToolMessage` representing a result of `'
    '42` from a tool call with id\\n\\n    ```python\\n    from langchain_core.messages import ToolMessa'
    'ge\\n\\n    ToolMessage(content=\\"42\\", tool_call_id=\\"call_Jja7J89XsjrOLA5r!MEOW!SL\\")\\n    ```\\n'
    '\\nExample:\\n    A `ToolMessage` where only part of the tool output is sent to the model\\n    and'
    ' the full output is passed in to artifact.\\n\\n    ```python\\n    from langchain_core.messages im'
    'port ToolMessage\\n\\n    tool_output = {\\n        \\"stdout\\": \\"From the graph we can see that th'
    'e correlation between \\"\\n        \\"x and y is ...\\",\\n        \\"stderr\\": None,\\n        \\"arti'
    'facts\\": {\\"type\\": \\"image\\", \\"base64_data\\": \\"/9j/4gIcSU...\\"},\\n    }\\n\\n    ToolMessage(\\n'
    '        content=tool_output[\\"stdout\\"],\\n        artifact=tool_output,\\n        tool_call_id=\\"'
    'call_Jja7J89XsjrOLA5r!MEOW!SL\\",\\n    )\\n    ```","properties":{"content":{"anyOf":[{"type":"str'
    'ing"},{"items":{"anyOf":[{"type":"string"},{"additionalProperties":true,"type":"object"}]},"type'
    '":"array"}],"title":"Content"},"additional_kwargs":{"additionalProperties":true,"title":"Additio'
    'nal Kwargs","type":"object"},"response_metadata":{"additionalProperties":true,"title":"Response '
    'Metadata","type":"object"},"type":{"const":"tool","default":"tool","title":"Type","type":"string'
    '"},"name":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null,"title":"Name"},"id":{"any'
    'Of":[{"type":"string"},{"type":"null"}],"default":null,"title":"Id"},"tool_call_id":{"title":"To'
    'ol Call Id","type":"string"},"artifact":{"default":null,"title":"Artifact"},"status":{"default":'
    '"success","enum":["success","error"],"title":"Status","type":"string"}},"required":["content","t'
    'ool_call_id"],"title":"ToolMessage","type":"object"},"ToolMessageChunk":{"additionalProperties":'
    'true,"description":"Tool Message chunk.","properties":{"content":{"anyOf":[{"type":"string"},{"i'
    'tems":{"anyOf":[{"type":"string"},{"additionalProperties":true,"type":"object"}]},"type":"array"'
    '}],"title":"Content"},"additional_kwargs":{"additionalProperties":true,"title":"Additional Kwarg'
    's","type":"object"},"response_metadata":{"additionalProperties":true,"title":"Response Metadata"'
    ',"type":"object"},"type":{"const":"ToolMessageChunk","default":"ToolMessageChunk","title":"Type"'
    ',"type":"string"},"name":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null,"title":"Na'
    'me"},"id":{"anyOf":[{"type":"string"},{"type":"null"}],"default":null,"title":"Id"},"tool_call_i'
    'd":{"title":"Tool Call Id","type":"string"},"artifact":{"default":null,"title":"Artifact"},"stat'
    'us":{"default":"success","enum":["success","error"],"title":"Status","type":"string"}},"required'
    '":["content","tool_call_id"],"title":"ToolMessageChunk","type":"object"},"UsageMetadata":{"addit'
    'ionalProperties":true,"description":"Usage metadata for a message, such as token counts.\\n\\nThis'
    ' is a standard representation of token usage that is consistent across models.\\n\\nExample:\\n    '
    '```python\\n    {\\n        \\"input_tokens\\": 350,\\n        \\"output_tokens\\": 240,\\n        \\"tot'
    'al_tokens\\": 590,\\n        \\"input_token_details\\": {\\n            \\"audio\\": 10,\\n            \\'
    '"cache_creation\\": 200,\\n            \\"cache_read\\": 100,\\n        },\\n        \\"output_token_de'
    'tails\\": {\\n            \\"audio\\": 10,\\n            \\"reasoning\\": 200,\\n        },\\n    }\\n    '
    '```\\n\\n!!! warning \\"Behavior changed in `langchain-core` 0.3.9\\"\\n\\n    Added `input_token_deta'
    'ils` and `output_token_details`.\\n\\n!!! note \\"LangSmith SDK\\"\\n\\n    The LangSmith SDK also has'
    " a `UsageMetadata` class. While the two share fields,\\n    LangSmith's `UsageMetadata` has addit"
    'ional fields to capture cost information\\n    used by the LangSmith platform.","properties":{"in'
    'put_tokens":{"title":"Input Tokens","type":"integer"},"output_tokens":{"title":"Output Tokens","'
    'type":"integer"},"total_tokens":{"title":"Total Tokens","type":"integer"},"input_token_details":'
    '{"$ref":"#/$defs/InputTokenDetails"},"output_token_details":{"$ref":"#/$defs/OutputTokenDetails"'
    '}},"required":["input_tokens","output_tokens","total_tokens"],"title":"UsageMetadata","type":"ob'
    'ject"}}'
)
