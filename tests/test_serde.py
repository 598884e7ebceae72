"""The checkpoint serializer: round trips, LangGraph's wire layout, write-time and load-time refusals.

Statements: docs/BEHAVIOUR.md §14 (Z-1 .. Z-4) and O-15. The byte strings pinned below were
produced by LangGraph 1.2.22's `JsonPlusSerializer` (langgraph-checkpoint 4.3.2).

Why this file is longer than 600 lines: one round-trip case per supported type plus
one refusal case per load-time check; they are kept next to each other on purpose.
"""

from __future__ import annotations

import builtins
import collections
import dataclasses
import datetime as dt
import decimal
import enum
import ipaddress
import json
import os
import pathlib
import re
import subprocess
import sys
import uuid
import zoneinfo
from typing import NamedTuple

import msgpack
import pytest

from lgembed.checkpoint.serde import (
    DeserializationError,
    MsgpackSerializer,
    SerializerCompat,
    SerializerProtocol,
    maybe_add_typed_methods,
)
from lgembed.messages import AIMessage, FunctionMessage, HumanMessage, RemoveMessage, SystemMessage, ToolMessage
from lgembed.store.base import GetOp, Item
from lgembed.types import Command, Interrupt, Overwrite, PregelTask, Send, StateSnapshot, TimeoutPolicy

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# --- user types used by the registration tests ------------------------------------------


class Color(enum.Enum):
    RED = "red"
    PAIR = (1, 2)


class Level(enum.IntEnum):
    LOW = 1


class Mode(str, enum.Enum):
    AUTO = "auto"


@dataclasses.dataclass
class Point:
    x: int
    y: tuple = (0,)


@dataclasses.dataclass(frozen=True, slots=True)
class Frozen:
    name: str
    point: Point | None = None


@dataclasses.dataclass
class WithDerived:
    a: int
    b: int = dataclasses.field(init=False, default=0)

    def __post_init__(self) -> None:
        self.b = self.a * 2


class Pair(NamedTuple):
    left: int
    right: str = "r"


class Plain:
    pass


USER_TYPES = [Color, Level, Mode, Point, Frozen, WithDerived, Pair]


@pytest.fixture
def serde() -> MsgpackSerializer:
    return MsgpackSerializer(allowed_types=USER_TYPES)


def roundtrip(serde: SerializerProtocol, value):
    return serde.loads_typed(serde.dumps_typed(value))


def ext(code: int, *payload) -> tuple[str, bytes]:
    """A hand-made ("msgpack", bytes) value whose top level is one extension type."""
    return "msgpack", msgpack.packb(msgpack.ExtType(code, msgpack.packb(list(payload))))


# --- Z-1: tags ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "tag", "data"),
    [(None, "null", b""), (b"by", "bytes", b"by"), (bytearray(b"ba"), "bytearray", b"ba")],
)
def test_typed_tags(serde, value, tag, data):
    """Z-1: None -> ("null", b""), bytes -> ("bytes", b), bytearray -> ("bytearray", b)."""
    assert serde.dumps_typed(value) == (tag, data)
    loaded = serde.loads_typed((tag, data))
    assert loaded == value and type(loaded) is type(value)


def test_other_values_use_the_msgpack_tag(serde):
    """Z-1: everything else is ("msgpack", payload)."""
    assert serde.dumps_typed({"a": 1}) == ("msgpack", b"\x81\xa1a\x01")


@pytest.mark.parametrize("tag", ["pickle", "json", "weird"])
def test_unknown_tag_raises(serde, tag):
    """Z-1: LangGraph's text for an unknown tag; "pickle" and "json" are never loaded."""
    with pytest.raises(NotImplementedError, match=re.escape(f"Unknown serialization type: {tag}")):
        serde.loads_typed((tag, b"\x80"))


def test_serializer_protocol_and_compat():
    """Z-1: the typed protocol; an untyped dumps/loads serializer is wrapped."""
    assert isinstance(MsgpackSerializer(), SerializerProtocol)

    class Untyped:
        def dumps(self, obj):
            return json.dumps(obj).encode()

        def loads(self, data):
            return json.loads(data)

    wrapped = maybe_add_typed_methods(Untyped())
    assert isinstance(wrapped, SerializerCompat)
    assert wrapped.dumps_typed({"a": 1}) == ("dict", b'{"a": 1}')
    assert wrapped.loads_typed(("dict", b'{"a": 1}')) == {"a": 1}
    plain = MsgpackSerializer()
    assert maybe_add_typed_methods(plain) is plain


# --- Z-2: native msgpack ----------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        True,
        False,
        0,
        -1,
        2**64 - 1,
        -(2**63),
        1.5,
        -0.0,
        float("inf"),
        "",
        "ü text",
        [],
        {},
        [1, [2, {"a": None}]],
        {1: "intkey", 2.5: "float", None: "none", "s": b"bytes"},
        {b"k": 1},
    ],
    ids=repr,
)
def test_native_roundtrip(serde, value):
    """Z-2: None/bool/int/float/str/bytes/list/dict (non-str keys allowed) round-trip as themselves."""
    loaded = roundtrip(serde, value)
    assert loaded == value
    assert type(loaded) is type(value)


def test_nan_roundtrip(serde):
    """Z-2: floats are float64, NaN included."""
    loaded = roundtrip(serde, float("nan"))
    assert loaded != loaded


@pytest.mark.parametrize("value", [2**64, -(2**63) - 1, 2**70, [1, {"a": 2**65}]], ids=repr)
def test_int_beyond_64_bits(serde, value):
    """Z-2/O-15: ints outside msgpack's range -> TypeError("Integer exceeds 64-bit range")."""
    with pytest.raises(TypeError, match=re.escape("Integer exceeds 64-bit range")):
        serde.dumps_typed(value)


def test_big_int_inside_an_extension_type(serde):
    """Z-2: the same error when the int sits inside an extension payload (a set)."""
    with pytest.raises(TypeError, match=re.escape("Integer exceeds 64-bit range")):
        serde.dumps_typed({2**70})


def test_tuples_become_lists(serde):
    """Z-2/O-15: `(1, 2) -> [1, 2]`, nested too: tuple is not an extension type (parity with LangGraph)."""
    assert roundtrip(serde, (1, 2)) == [1, 2]
    assert roundtrip(serde, {"a": (1, (2, 3))}) == {"a": [1, [2, 3]]}
    assert serde.dumps_typed((1, 2)) == ("msgpack", b"\x92\x01\x02")


def test_tuple_keys_stay_tuples(serde):
    """Z-2: an array used as a map key comes back as a tuple (LangGraph: `{(1, 2): 't'}`)."""
    value = {(1, 2): "t", ((1, 2), 3): "nested", "plain": 1}
    loaded = roundtrip(serde, value)
    assert loaded == value
    assert serde.dumps_typed({(1, 2): "t"}) == ("msgpack", b"\x81\x92\x01\x02\xa1t")


class MyStr(str):
    pass


class MyInt(int):
    pass


class MyDict(dict):
    pass


class MyList(list):
    pass


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (MyStr("s"), "s"),
        (MyInt(3), 3),
        (MyDict(a=1), {"a": 1}),
        (MyList([1]), [1]),
        (collections.OrderedDict(a=1), {"a": 1}),
        (collections.defaultdict(list, a=[1]), {"a": [1]}),
    ],
    ids=lambda v: type(v).__name__,
)
def test_native_subclasses_are_stored_as_the_base_type(serde, value, expected):
    """Z-2: subclasses of str/int/dict/list load as the base type (LangGraph: ormsgpack stores them natively)."""
    loaded = roundtrip(serde, value)
    assert loaded == expected and type(loaded) is type(expected)


def test_lone_surrogates_are_replaced(serde):
    """Z-2: a lone surrogate is stored as "?" (LangGraph: ormsgpack OPT_REPLACE_SURROGATES)."""
    assert serde.dumps_typed("a\ud800b") == ("msgpack", b"\xa3a?b")
    assert roundtrip(serde, {"k": ["a\ud800", {1}]}) == {"k": ["a?", {1}]}


# --- Z-3: extension types ---------------------------------------------------------------

STDLIB_VALUES = [
    {1, 2},
    frozenset({3}),
    collections.deque([1, 2]),
    dt.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=dt.timezone.utc),
    dt.datetime(2024, 1, 2, 3, 4, 5),
    dt.date(2024, 1, 2),
    dt.time(1, 2, 3, 4, fold=1),
    dt.time(1, 2, tzinfo=dt.timezone(dt.timedelta(hours=2))),
    dt.timedelta(days=-1, seconds=5, microseconds=7),
    dt.timezone.utc,
    dt.timezone(dt.timedelta(hours=-3), "Z3"),
    uuid.UUID(int=5),
    uuid.uuid4(),
    decimal.Decimal("1.10"),
    decimal.Decimal("-Infinity"),
    pathlib.Path("/a/b"),
    pathlib.PurePosixPath("a/b"),
    pathlib.PurePath("rel"),
    re.compile("ab+", re.I),
    re.compile(b"x*"),
    ipaddress.ip_address("10.0.0.1"),
    ipaddress.ip_address("::1"),
    ipaddress.ip_network("10.0.0.0/8"),
    ipaddress.ip_interface("10.0.0.1/24"),
    zoneinfo.ZoneInfo("UTC"),
    dt.datetime(2024, 6, 1, 12, tzinfo=zoneinfo.ZoneInfo("UTC")),
]


@pytest.mark.parametrize("value", STDLIB_VALUES, ids=repr)
def test_stdlib_roundtrip(serde, value):
    """Z-3/O-15: set, frozenset, deque, the datetime family, UUID, Decimal, paths, re.Pattern, IP, ZoneInfo keep their type."""
    loaded = roundtrip(serde, value)
    assert type(loaded) is type(value)
    if isinstance(value, dt.datetime) and isinstance(value.tzinfo, zoneinfo.ZoneInfo):
        assert loaded == value  # the isoformat keeps the offset, not the zone (LangGraph too)
    else:
        assert loaded == value


def test_decimal_nan(serde):
    """Z-3: Decimal('NaN') round-trips (compare as strings: NaN != NaN)."""
    assert str(roundtrip(serde, decimal.Decimal("NaN"))) == "NaN"


def test_datetime_drops_the_timezone_name(serde):
    """Z-3: datetimes are stored as isoformat (method 3), so a timezone's name is lost (LangGraph too)."""
    value = dt.datetime(2024, 1, 2, tzinfo=dt.timezone(dt.timedelta(hours=2), "X"))
    loaded = roundtrip(serde, value)
    assert loaded == value and loaded.tzinfo.tzname(None) == "UTC+02:00"


def test_deque_drops_maxlen(serde):
    """Z-3: a deque is stored as its items (LangGraph parity: maxlen is lost)."""
    loaded = roundtrip(serde, collections.deque([1, (2, 3)], maxlen=5))
    assert loaded == collections.deque([1, [2, 3]]) and loaded.maxlen is None


def test_set_of_tuples_keeps_tuples(serde):
    """Z-3: set/frozenset items come back hashable (LangGraph fails on a frozenset of tuples)."""
    assert roundtrip(serde, frozenset({(1, (2, 3))})) == frozenset({(1, (2, 3))})
    assert roundtrip(serde, {(1, 2), 3}) == {(1, 2), 3}


def test_stdlib_subclasses_are_stored_as_the_base(serde):
    """Z-3: a subclass of a stdlib value type is stored under its nearest stdlib class."""

    class MyUUID(uuid.UUID):
        pass

    class MySet(set):
        pass

    loaded = roundtrip(serde, MyUUID(int=9))
    assert type(loaded) is uuid.UUID and loaded == uuid.UUID(int=9)
    assert type(roundtrip(serde, MySet({1}))) is set


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (ValueError("boom"), "ValueError('boom')"),
        (KeyboardInterrupt(), "KeyboardInterrupt()"),
        ({"err": RuntimeError("x")}, {"err": "RuntimeError('x')"}),
    ],
    ids=repr,
)
def test_exceptions_become_repr_strings(serde, value, expected):
    """Z-3/O-15: `ValueError('boom') -> "ValueError('boom')"` (str)."""
    assert roundtrip(serde, value) == expected


# LangGraph 1.2.22 JsonPlusSerializer output for the same values (exact bytes)
LANGGRAPH_BYTES = [
    ({1, 2}, b"\xc7\x11\x00\x93\xa8builtins\xa3set\x92\x01\x02"),
    (uuid.UUID(int=5), b"\xc7-\x00\x93\xa4uuid\xa4UUID\xd9 00000000000000000000000000000005"),
    (decimal.Decimal("1.10"), b"\xc7\x16\x00\x93\xa7decimal\xa7Decimal\xa41.10"),
    (dt.date(2024, 1, 2), b"\xc7\x15\x01\x93\xa8datetime\xa4date\x93\xcd\x07\xe8\x01\x02"),
    (dt.timedelta(days=-1, seconds=5), b"\xc7\x18\x01\x93\xa8datetime\xa9timedelta\x93\xff\x05\x00"),
    (pathlib.PosixPath("/a/b"), b"\xc7\x1a\x01\x93\xa7pathlib\xa9PosixPath\x93\xa1/\xa1a\xa1b"),
    (re.compile(b"ab", re.I), b"\xc7\x12\x01\x93\xa2re\xa7compile\x92\xc4\x02ab\x02"),
    (
        {"when": dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.timezone.utc)},
        b"\x81\xa4when\xc7;\x03\x94\xa8datetime\xa8datetime\xb92024-01-02T03:04:05+00:00\xadfromisoformat",
    ),
    (
        dt.time(1, 2, 3, 4, fold=1),
        b"\xc7A\x02\x93\xa8datetime\xa4time\x86\xa4hour\x01\xa6minute\x02\xa6second\x03"
        b"\xabmicrosecond\x04\xa6tzinfo\xc0\xa4fold\x01",
    ),
    (ValueError("boom"), b"\xb2ValueError('boom')"),
]


@pytest.mark.parametrize(("value", "data"), LANGGRAPH_BYTES, ids=lambda v: type(v).__name__)
def test_wire_layout_is_langgraphs(serde, value, data):
    """Z-3: same ext codes and `[module, name, data(, method)]` payloads as LangGraph, byte for byte, both ways."""
    assert serde.dumps_typed(value) == ("msgpack", data)
    expected = repr(value) if isinstance(value, Exception) else value
    assert serde.loads_typed(("msgpack", data)) == expected


def test_loads_values_written_by_langgraph(serde):
    """Z-3/Z-4: LangGraph's `langgraph.types` payloads load as the lgembed classes of the same name."""
    send = serde.loads_typed(("msgpack", b"\xc7\x1e\x01\x93\xaflanggraph.types\xa4Send\x92\xa1n\x81\xa1a\x91\x01"))
    assert type(send) is Send and send == Send("n", {"a": [1]})
    intr = serde.loads_typed(
        ("msgpack", b"\xc7;\x02\x93\xaflanggraph.types\xa9Interrupt\x83\xa5value\xa1q\xa2id\xa2i1\xafresponse_schema\xc0")
    )
    assert type(intr) is Interrupt and (intr.value, intr.id) == ("q", "i1")


# --- lgembed's own types ----------------------------------------------------------------

LGEMBED_VALUES = [
    Send("node", {"x": 1}),
    Send("node", 1, timeout=5),
    Command(update={"a": 1}, goto=["b", Send("c", 2)], resume={"i": 1}),
    Command(graph=Command.PARENT, goto="x"),
    Interrupt("ask", id="abc"),
    Interrupt({"q": 1}, id="i", response_schema={"type": "string"}),
    Overwrite([1, 2]),
    TimeoutPolicy(run_timeout=1.5),
    HumanMessage("hi", id="1"),
    AIMessage("x", tool_calls=[{"name": "t", "args": {"a": 1}, "id": "c"}]),
    AIMessage("y", example=True),
    SystemMessage("sys", name="n"),
    ToolMessage("result", tool_call_id="c", status="error", artifact={"k": [1]}),
    FunctionMessage("f", name="fn"),
    RemoveMessage(id="z"),
    Item(
        value={"a": 1},
        key="k",
        namespace=("n", "m"),
        created_at=dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc),
        updated_at=dt.datetime(2024, 1, 2, tzinfo=dt.timezone.utc),
    ),
]


@pytest.mark.parametrize("value", LGEMBED_VALUES, ids=lambda v: type(v).__name__)
def test_lgembed_types_roundtrip(serde, value):
    """Z-3/Z-4/O-15: Send, Command, Interrupt, Overwrite, TimeoutPolicy, messages and store Item keep their type."""
    loaded = roundtrip(serde, value)
    assert type(loaded) is type(value)
    assert loaded == value
    assert repr(loaded) == repr(value)


def test_lgembed_namedtuples_lose_inner_tuples(serde):
    """Z-3: PregelTask/StateSnapshot/GetOp keep their class; tuples inside them become lists (LangGraph too)."""
    task = roundtrip(serde, PregelTask("id", "n", ("a", "b"), error=ValueError("e")))
    assert type(task) is PregelTask and task.path == ["a", "b"] and task.error == "ValueError('e')"
    snap = roundtrip(serde, StateSnapshot({"x": 1}, ("a",), {}, None, None, None, (), ()))
    assert type(snap) is StateSnapshot and snap.next == ["a"]
    op = roundtrip(serde, GetOp(("a",), "k"))
    assert type(op) is GetOp and op.key == "k"


def test_values_inside_send_are_serialized_recursively(serde):
    """Z-2/Z-3: a Send's arg goes through the same rules (tuple -> list)."""
    assert roundtrip(serde, Send("n", {"x": (1,)})) == Send("n", {"x": [1]})


_WITHOUT_LANGCHAIN = """
import re, sys
import msgpack
from lgembed.checkpoint.serde import DeserializationError, MsgpackSerializer
from lgembed.messages import HumanMessage
serde = MsgpackSerializer()
assert "langchain_core" not in sys.modules
data = (
    b"\\xc7\\x88\\x05\\x94\\xbdlangchain_core.messages.human\\xacHumanMessage\\x86\\xa7content\\xa2hi"
    b"\\xb1additional_kwargs\\x80\\xb1response_metadata\\x80\\xa4type\\xa5human\\xa4name\\xc0\\xa2id\\xa11"
    b"\\xb3model_validate_json"
)
loaded = serde.loads_typed(("msgpack", data))
assert type(loaded) is HumanMessage and loaded == HumanMessage("hi", id="1")
assert "langchain_core" not in sys.modules
chunk = msgpack.packb(msgpack.ExtType(5, msgpack.packb(["langchain_core.messages.ai", "AIMessageChunk", {"content": "c"}, "model_validate_json"])))
try:
    serde.loads_typed(("msgpack", chunk))
except DeserializationError as e:
    assert str(e) == (
        "Loading 'langchain_core.messages.ai:AIMessageChunk' from a checkpoint failed: TypeError: "
        "langchain-core is not imported; import langchain_core.messages before loading a AIMessageChunk"
    ), str(e)
else:
    raise AssertionError("loading an AIMessageChunk without langchain_core did not fail")
print("ok")
"""


def test_langchain_messages_load_as_lgembed_messages_without_langchain():
    """Z-4: a langchain-core message written by LangGraph loads as lgembed's class when
    langchain_core is not imported, and a class lgembed has no twin for needs it imported.

    Runs in a fresh interpreter: langchain-core is installed for the tests (langgraph-sdk
    needs it) and other tests of this process may have imported it.
    """
    out = subprocess.run([sys.executable, "-c", _WITHOUT_LANGCHAIN], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


# --- registered user types --------------------------------------------------------------

USER_VALUES = [
    Color.RED,
    Color.PAIR,
    Level.LOW,
    Mode.AUTO,
    Point(1, (2,)),
    Frozen("f", Point(3)),
    WithDerived(4),
    Pair(1, "x"),
    {"nested": [Pair(2), {Color.RED}]},
]


def test_kept_packer_survives_errors_nesting_and_threads(serde):
    """Z-1: the serializer keeps one Packer per thread. Packing after a refused value
    gives the same bytes as a new serializer; values nested in extension types (packed
    by the hook while the outer Packer is busy) and surrogates (the "replace" Packer)
    round-trip; threads packing at once do not mix their bytes."""
    import threading

    fresh = MsgpackSerializer(allowed_types=USER_TYPES)
    value = {"nested": [Frozen("f", Point(3)), Pair(2), "a\ud800b", {"k": [1, 2.5, None]}]}
    want = fresh.dumps_typed(value)
    with pytest.raises(TypeError):
        serde.dumps_typed({"ok": 1, "bad": Plain()})
    with pytest.raises(TypeError):
        serde.dumps_typed([Point(1), Plain()])  # fails inside the hook's nested packing
    assert serde.dumps_typed(value) == want
    assert serde.dumps_typed(value) == want
    assert roundtrip(serde, value) == {"nested": [Frozen("f", Point(3, [0])), Pair(2), "a?b", {"k": [1, 2.5, None]}]}

    failures: list = []

    def work(i: int) -> None:
        for j in range(300):
            item = {"thread": i, "j": j, "point": Point(j, (i,)), "text": "x" * (j % 50)}
            if roundtrip(serde, item) != {**item, "point": Point(j, [i])}:
                failures.append((i, j))

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


@pytest.mark.parametrize("value", USER_VALUES, ids=repr)
def test_registered_user_types_roundtrip(serde, value):
    """Z-3: registered Enum (incl. IntEnum, str mixin, tuple value), dataclass and NamedTuple keep their class."""
    loaded = roundtrip(serde, value)
    assert type(loaded) is type(value)
    if isinstance(value, Point):
        assert loaded == Point(1, [2])  # tuple field -> list (Z-2)
    elif isinstance(value, Frozen):
        assert loaded == Frozen("f", Point(3, [0]))
    else:
        assert loaded == value


def test_dataclass_field_without_init_is_restored(serde):
    """Z-3: every field is stored; fields with init=False are set after construction."""
    loaded = roundtrip(serde, WithDerived(4))
    assert (loaded.a, loaded.b) == (4, 8)


def test_enum_payload_is_its_value(serde):
    """Z-3: an Enum is ext 0 `[module, qualname, value]`."""
    tag, data = serde.dumps_typed(Level.LOW)
    assert msgpack.unpackb(msgpack.unpackb(data).data) == [__name__, "Level", 1]


class _PlainNT(NamedTuple):
    a: int


@pytest.mark.parametrize(
    "value",
    [Color.RED, Point(1), _PlainNT(1), [Point(1)], {"k": Level.LOW}],
    ids=lambda v: type(v).__name__,
)
def test_unregistered_user_type_fails_at_write(value):
    """Z-3/DESIGN §4: an unregistered Enum/dataclass/NamedTuple fails when written, naming the type and the fix."""
    serde = MsgpackSerializer()
    inner = value[0] if isinstance(value, list) else (value["k"] if isinstance(value, dict) else value)
    name = f"{type(inner).__module__}.{type(inner).__qualname__}"
    with pytest.raises(
        TypeError,
        match=re.escape(
            f"Cannot serialize object of type '{name}' for a checkpoint: not a supported type. "
            f"Register it with MsgpackSerializer(allowed_types=[{name}]) or convert it to plain data "
            "(dict/list/str/...)."
        ),
    ):
        serde.dumps_typed(value)


@pytest.mark.parametrize("value", [Plain(), object(), complex(1, 2), [1, {"a": Plain()}]], ids=repr)
def test_unsupported_type_fails_at_write(serde, value):
    """Z-3: any other object fails when written, naming the type and how to make it storable."""
    inner = value[1]["a"] if isinstance(value, list) else value
    name = f"{type(inner).__module__}.{type(inner).__qualname__}"
    with pytest.raises(
        TypeError,
        match=re.escape(
            f"Cannot serialize object of type '{name}' for a checkpoint: not a supported type. "
            "Convert it to plain data (dict/list/str/...) or to a dataclass registered with "
            "MsgpackSerializer(allowed_types=[...])."
        ),
    ):
        serde.dumps_typed(value)


def test_float_and_tuple_subclasses_are_unsupported(serde):
    """Z-3: LangGraph rejects float subclasses and plain tuple subclasses too."""

    class MyFloat(float):
        pass

    class MyTuple(tuple):
        pass

    for value in (MyFloat(1.5), MyTuple((1,))):
        with pytest.raises(TypeError, match=re.escape("Cannot serialize object of type")):
            serde.dumps_typed(value)


def test_registration_errors():
    """Z-4: only Enum/dataclass/NamedTuple/pydantic classes can be registered; names must resolve without importing."""
    with pytest.raises(
        TypeError,
        match=re.escape(
            f"Cannot register '{__name__}.Plain' with MsgpackSerializer: only Enum, dataclass, "
            "NamedTuple and pydantic model classes can be registered."
        ),
    ):
        MsgpackSerializer(allowed_types=[Plain])
    with pytest.raises(TypeError, match=re.escape("allowed_types entries must be classes (got 3)")):
        MsgpackSerializer(allowed_types=[3])
    with pytest.raises(
        ValueError,
        match=re.escape(
            "Cannot register ('zz_not_imported_mod', 'Foo') with MsgpackSerializer: module "
            "'zz_not_imported_mod' is not imported or has no class 'Foo'. Pass the class itself."
        ),
    ):
        MsgpackSerializer(allowed_types=[("zz_not_imported_mod", "Foo")])
    assert "zz_not_imported_mod" not in sys.modules


def test_registration_by_name_of_an_imported_class():
    """Z-4: a `(module, qualname)` entry resolves through sys.modules; built-in keys are no-ops."""
    serde = MsgpackSerializer(allowed_types=[(__name__, "Point"), ("uuid", "UUID"), Send])
    assert serde.allowed_types == (Point,)
    assert roundtrip(serde, Point(1)) == Point(1, [0])


def test_with_msgpack_allowlist():
    """Z-4: a derived serializer allows more types; nothing new returns the same serializer."""
    base = MsgpackSerializer(allowed_types=[Point])
    assert base.with_msgpack_allowlist([Point]) is base
    more = base.with_msgpack_allowlist([Color])
    assert more is not base and more.allowed_types == (Point, Color)
    assert roundtrip(more, Color.RED) is Color.RED
    with pytest.raises(TypeError, match=re.escape("Register it with")):
        base.dumps_typed(Color.RED)


def test_pydantic_models_when_registered():
    """Z-3: a registered pydantic v2 model is ext 5 (model_dump); loading validates, or falls back to model_construct."""
    pydantic = pytest.importorskip("pydantic")

    class Inner(pydantic.BaseModel):
        n: int

    class Model(pydantic.BaseModel):
        a: int
        t: tuple = (1,)
        inner: Inner | None = None

    serde = MsgpackSerializer(allowed_types=[Model])
    value = Model(a=1, t=(2, 3), inner=Inner(n=4))
    loaded = roundtrip(serde, value)
    assert type(loaded) is Model and loaded == value  # validation turns the list back into a tuple
    tag, data = serde.dumps_typed(value)
    assert msgpack.unpackb(data, ext_hook=lambda c, d: (c, msgpack.unpackb(d)))[0] == 5
    unregistered = MsgpackSerializer()
    with pytest.raises(TypeError, match=re.escape("Register it with MsgpackSerializer(allowed_types=[")):
        unregistered.dumps_typed(value)
    bad = ext(5, Model.__module__, Model.__qualname__, {"a": "not-an-int"}, "model_validate_json")
    constructed = serde.loads_typed(bad)
    assert type(constructed) is Model and constructed.a == "not-an-int"


def test_pydantic_v1_models_when_registered():
    """Z-3: a registered pydantic.v1 model is ext 4 (`.dict()`)."""
    pytest.importorskip("pydantic")
    v1 = pytest.importorskip("pydantic.v1")

    class Old(v1.BaseModel):
        a: int

    serde = MsgpackSerializer(allowed_types=[Old])
    loaded = roundtrip(serde, Old(a=1))
    assert type(loaded) is Old and loaded.a == 1


# --- loading refuses what it does not know ----------------------------------------------


def _refused(key: str, code: int) -> str:
    return (
        f"Refusing to load {key!r} (msgpack ext {code}) from a checkpoint: not an allowed type. "
        "If it is your class, register it with MsgpackSerializer(allowed_types=[...]) in the "
        "process that loads the checkpoint."
    )


@pytest.fixture
def import_log(monkeypatch):
    """Names passed to `__import__` while the test runs."""
    seen: list[str] = []
    real = builtins.__import__

    def recording(name, *args, **kwargs):
        seen.append(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", recording)
    return seen


@pytest.mark.parametrize(
    ("payload", "key", "code"),
    [
        ((0, "os", "system", "echo pwned"), "os:system", 0),
        ((1, "builtins", "eval", ["__import__('os')"]), "builtins:eval", 1),
        ((1, "subprocess", "Popen", [["true"]]), "subprocess:Popen", 1),
        ((2, "zz_lgembed_made_up_module", "Foo", {"a": 1}), "zz_lgembed_made_up_module:Foo", 2),
        ((5, "zz_lgembed_made_up_module.models", "M", {}, "model_validate_json"), "zz_lgembed_made_up_module.models:M", 5),
        ((4, "pickle", "loads", b"x"), "pickle:loads", 4),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_crafted_payloads_are_refused_without_importing(serde, import_log, payload, key, code):
    """Z-4 (lgembed): a payload naming any module:name outside the table raises and imports nothing."""
    with pytest.raises(DeserializationError, match=re.escape(_refused(key, code))) as info:
        serde.loads_typed(ext(*payload))
    assert info.value.key == key
    module = key.split(":")[0]
    assert not [name for name in import_log if name.split(".")[0] in (module.split(".")[0], "importlib")]
    assert "zz_lgembed_made_up_module" not in sys.modules
    assert "zz_lgembed_made_up_module.models" not in sys.modules


def test_crafted_payload_nested_in_plain_data(serde, import_log):
    """Z-4 (lgembed): refusal also applies deep inside lists and maps; no partial value is returned."""
    inner = msgpack.ExtType(1, msgpack.packb(["zz_lgembed_made_up_module", "Foo", []]))
    data = msgpack.packb({"state": [1, {"x": inner}]})
    with pytest.raises(DeserializationError, match=re.escape(_refused("zz_lgembed_made_up_module:Foo", 1))):
        serde.loads_typed(("msgpack", data))
    assert "zz_lgembed_made_up_module" not in sys.modules
    assert "zz_lgembed_made_up_module" not in import_log


@pytest.mark.parametrize(
    ("payload", "shown"),
    [
        ((3, "datetime", "datetime", "1700000000", "fromtimestamp"), "datetime:datetime.fromtimestamp"),
        ((3, "os", "system", "true", "system"), "os:system.system"),
        ((3, "datetime", "datetime", "2024-01-01"), "datetime:datetime.None"),
    ],
)
def test_only_fromisoformat_may_be_called(serde, payload, shown):
    """Z-4: ext 3 (method call) is limited to datetime.fromisoformat."""
    with pytest.raises(
        DeserializationError,
        match=re.escape(
            f"Refusing to call {shown} while loading a checkpoint: only datetime:datetime.fromisoformat is allowed."
        ),
    ):
        serde.loads_typed(ext(*payload))


def test_unregistered_user_type_on_load(serde):
    """Z-4 (lgembed): a value written with a registration does not load without it (error, not raw payload)."""
    data = serde.dumps_typed(Point(1))
    with pytest.raises(DeserializationError, match=re.escape(_refused(f"{__name__}:Point", 2))):
        MsgpackSerializer().loads_typed(data)


def test_known_type_with_wrong_ext_code(serde):
    """Z-4 (lgembed): a known type under another ext code is refused (no other constructor is tried)."""
    with pytest.raises(
        DeserializationError,
        match=re.escape("Cannot load 'uuid:UUID' from a checkpoint: stored as msgpack ext 2, expected ext 0"),
    ):
        serde.loads_typed(ext(2, "uuid", "UUID", {"hex": "00"}))


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (ext(9, "a", "b", 1)[1], "Cannot load msgpack extension type 9 from a checkpoint: unknown ext code (known: 0-5)"),
        (ext(0, "a")[1], "Cannot load msgpack extension type 0 from a checkpoint: malformed payload ['a']"),
        (ext(0, 1, "b", 2)[1], "Cannot load msgpack extension type 0 from a checkpoint: malformed payload [1, 'b', 2]"),
        (ext(0, "uuid", "UUID", 5)[1], "Loading 'uuid:UUID' from a checkpoint failed: TypeError: expected a string, got int"),
        (
            ext(0, "uuid", "UUID", "xyz")[1],
            "Loading 'uuid:UUID' from a checkpoint failed: ValueError: badly formed hexadecimal UUID string",
        ),
        (b"\xc1", "Loading a checkpoint value: corrupt msgpack data (FormatError: )"),
        (b"\x93\x01", "Loading a checkpoint value: corrupt msgpack data (ValueError: 3 exceeds max_array_len(2))"),
    ],
)
def test_malformed_data_on_load(serde, data, message):
    """Z-4 (lgembed): corrupt or ill-shaped data raises DeserializationError (a ValueError) with a clear text."""
    with pytest.raises(DeserializationError, match=re.escape(message)):
        serde.loads_typed(("msgpack", data))
    assert issubclass(DeserializationError, ValueError)


def test_no_pickle_or_eval_in_the_module():
    """DESIGN §4: the serializer never unpickles, evals or imports by name."""
    with open(os.path.join(ROOT, "lgembed", "checkpoint", "serde.py"), encoding="utf-8") as f:
        source = f.read()
    code = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith("#"))
    for needle in ("import pickle", "pickle.loads", "eval(", "exec(", "importlib", "__import__("):
        assert needle not in code.split('"""', 2)[2], needle


# --- import cost ----------------------------------------------------------------------


def test_msgpack_is_imported_on_first_use_only():
    """DESIGN §1/STYLE §H: importing the serializer (and building one) does not import msgpack."""
    code = (
        "import sys\n"
        "from lgembed.checkpoint.serde import MsgpackSerializer\n"
        "s = MsgpackSerializer()\n"
        "assert 'msgpack' not in sys.modules, 'msgpack imported early'\n"
        "s.dumps_typed({'a': 1})\n"
        "assert 'msgpack' in sys.modules\n"
    )
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-W", "error", "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


@dataclasses.dataclass
class _Point:
    x: int
    y: int


class _Level(enum.IntEnum):
    LOW = 1


class _Unregistered(enum.IntEnum):
    ONE = 1


@pytest.mark.parametrize(
    "value",
    [
        {"v": 4, "channel_versions": {"a": 1, "b": "00000000000000000000000000000002.5"}, "ts": "t"},
        [1, 2.5, True, None, "é", b"raw", {"k": [1, {"n": -(2**63)}]}],
        2**64 - 1,
        "x" * 70_000,
        {"p": _Point(1, 2)},  # needs the hook below the top level
        ("a", 1),  # a tuple: the hook keeps it a tuple (strict types)
        {"lone": "\ud800"},  # a lone surrogate: replaced by "?" as LangGraph does
        collections.OrderedDict(a=1),  # a dict subclass: the hook's business
        _Level.LOW,  # an int subclass: an enum for the hook, not an int
        {"level": [_Level.LOW]},
    ],
    ids=[
        "checkpoint", "natives", "u64max", "long-str", "nested-object", "tuple", "surrogate", "dict-subclass",
        "int-enum", "nested-int-enum",
    ],
)
def test_dumps_typed_bytes_are_those_of_the_hooked_packer(value):
    """Z-1: the plain-Packer fast path of dumps_typed gives exactly the bytes the hooked
    Packer gives, and falls back to it for anything msgpack cannot pack on its own; the
    same value serialized again (after a fallback marked its type) is still the same."""
    serde = MsgpackSerializer(allowed_types=[_Point, _Level])
    expected = ("msgpack", serde._pack_top(value))
    assert serde.dumps_typed(value) == expected
    assert serde.dumps_typed(value) == expected
    assert serde.loads_typed(serde.dumps_typed(value)) == serde.loads_typed(expected)


def test_dumps_typed_refuses_an_unregistered_int_subclass_on_the_fast_path_too():
    """Z-1: an unregistered IntEnum is refused with the registration hint, never packed as its int."""
    serde = MsgpackSerializer()
    for value in (_Unregistered.ONE, {"a": [_Unregistered.ONE]}):
        with pytest.raises(TypeError, match="Cannot serialize object of type"):
            serde.dumps_typed(value)
