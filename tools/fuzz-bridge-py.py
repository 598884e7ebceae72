#!/usr/bin/env python3
"""Fuzzes the bridge's Python decoders: FrameDecoder, decode_packet and decode_message.

Why: the host reads whatever a microcontroller, a noisy cable or a wrong baud rate puts on
the line. The decoders must never raise anything but the documented RemoteProtocolError
(a DecodeError event from the stream decoder), never hang, and keep their memory bounded.
Hypothesis covers the properties in the test suite; this script pushes a million inputs
through them (issue 14 acceptance 4).

Inputs, in equal shares: random bytes; mutations (bit flips, byte changes, insertions,
deletions, truncation, splices, repeated chunks) of valid frames of every message type
(from firmware-bridge/tests/vectors/frames.txt when present, plus generated ones); and
well-framed packets with a good CRC around random or mutated msgpack payloads, which
reach the payload decoder. Each input goes through a fresh FrameDecoder, through one
long-lived decoder fed everything (state across inputs), and as a raw packet through
decode_packet (the ISO-TP path); each packet decoded goes through decode_message. Every
1000th input is also fed one byte at a time and compared with the bulk result.

    .venv/bin/python tools/fuzz-bridge-py.py                 # 1,000,000 inputs
    .venv/bin/python tools/fuzz-bridge-py.py --runs 20000    # a short run (CI)

Exit status 0 when nothing but documented errors happened; 1 with the failing input's hex.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
import traceback
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import msgpack  # noqa: E402

from lgembed.bridge import messages as m  # noqa: E402
from lgembed.bridge.codec import (  # noqa: E402
    DecodeError,
    FrameDecoder,
    Packet,
    decode_message,
    decode_packet,
    encode_frame,
)
from lgembed.bridge.errors import RemoteProtocolError  # noqa: E402

MAX_PAYLOAD = 128
# the MCU's default limit (PROTOCOL.md §13): the decoders are run with it

DOCUMENTED = set(m.ERRORS) - {m.OK}


def seeds() -> list[bytes]:
    """Valid frames of every message type: the vectors' and generated ones."""
    out = []
    vec = ROOT / "firmware-bridge" / "tests" / "vectors" / "frames.txt"
    if vec.exists():
        for line in vec.read_text().splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[0] in ("valid", "invalid"):
                try:
                    out.append(bytes.fromhex(parts[2]) if parts[2] != "-" else b"")
                except ValueError:
                    pass
    payloads = {
        m.MSG_HELLO: msgpack.packb(["sensor-node", "1.0.0", 128, [["read_temp", "", "f"], ["set_led", "b", "b"], ["echo", "y", "y"]], ["button"]]),
        m.MSG_HELLO_REQ: b"",
        m.MSG_PING: b"\x01\x02\x03\x04",
        m.MSG_PONG: b"\x01\x02\x03\x04",
        m.MSG_CALL: msgpack.packb([1, 1, [True]]),
        m.MSG_RESULT: msgpack.packb([1, 0, 21.5]),
        m.MSG_EVENT: msgpack.packb([0, 12345, True]),
        m.MSG_ACK: b"\x07",
        m.MSG_NAK: b"\x08\x05",
    }
    for t, p in payloads.items():
        for flags in (0, 1, 3):
            out.append(encode_frame(t, 7, p, flags))
    out.append(encode_frame(m.MSG_CALL, 9, msgpack.packb([2, 2, [bytes(range(100))]]), 1))
    return out


MSGPACK_SEEDS = [
    msgpack.packb(v, use_bin_type=True)
    for v in (
        [1, 0, []],
        [1, 0, [1, -1, 2**40, -(2**63), 2**64 - 1, 1.5, True, None, "s", b"b"]],
        ["d", "v", 128, [["f", "if", "b"]], ["e"]],
        [1, 0, 21.5],
        [0, 4294967295, {"k": [1, 2]}],
        [[[[[]]]]],
    )
]


def mutate(rng: random.Random, data: bytes, pool: list[bytes]) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(8)
        if op == 0 and b:
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
        elif op == 1 and b:
            b[rng.randrange(len(b))] = rng.choice((0, 1, 0xFF, 0x7F, 0x80, rng.randrange(256)))
        elif op == 2:
            i = rng.randrange(len(b) + 1)
            b[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
        elif op == 3 and b:
            i = rng.randrange(len(b))
            del b[i : i + rng.randint(1, 8)]
        elif op == 4 and b:
            del b[rng.randrange(len(b)) :]
        elif op == 5:
            other = rng.choice(pool)
            i = rng.randrange(len(b) + 1)
            b[i:i] = other[rng.randrange(len(other) + 1) :]
        elif op == 6 and b:
            i = rng.randrange(len(b))
            b[i:i] = b[i : i + rng.randint(1, 32)] * rng.randint(1, 8)
        else:
            b += b"\x00"
    return bytes(b)


def framed_payload(rng: random.Random) -> bytes:
    """A frame with a good CRC around a random or mutated payload: reaches decode_message."""
    t = rng.choice(sorted(m.MESSAGE_TYPES) + [rng.randrange(256)])
    if rng.random() < 0.5:
        p = mutate(rng, rng.choice(MSGPACK_SEEDS), MSGPACK_SEEDS)
    else:
        p = bytes(rng.randrange(256) for _ in range(rng.randint(0, 40)))
    version = m.VERSION if rng.random() < 0.95 else rng.randrange(256)
    return encode_frame(t, rng.randrange(256), p[:MAX_PAYLOAD], rng.randrange(256) if rng.random() < 0.05 else rng.randrange(4), version)


def check_events(events: list, stats: Counter) -> None:
    for ev in events:
        if isinstance(ev, DecodeError):
            if ev.code not in DOCUMENTED:
                raise AssertionError(f"undocumented DecodeError code {ev.code}")
            stats[f"frame error {ev.name}"] += 1
        elif isinstance(ev, Packet):
            if len(ev.payload) > MAX_PAYLOAD:
                raise AssertionError(f"a {len(ev.payload)}-byte payload passed max_payload {MAX_PAYLOAD}")
            stats["packets"] += 1
            try:
                msg = decode_message(ev)
                stats[f"message {type(msg).__name__}"] += 1
            except RemoteProtocolError as e:
                if e.code not in DOCUMENTED:
                    raise AssertionError(f"undocumented RemoteProtocolError code {e.code}") from e
                stats[f"payload error {m.error_name(e.code)}"] += 1
        else:
            raise AssertionError(f"unexpected event {ev!r}")


def one(data: bytes, stream: FrameDecoder, stats: Counter, bytewise: bool) -> None:
    dec = FrameDecoder(MAX_PAYLOAD)
    events = dec.feed(data) + dec.feed(b"\x00")
    check_events(events, stats)
    if len(dec._dec) > 8 + MAX_PAYLOAD:
        raise AssertionError("decoder buffer above its bound")
    check_events(stream.feed(data), stats)
    try:
        pkt = decode_packet(data, MAX_PAYLOAD)
        stats["raw packets"] += 1
        try:
            decode_message(pkt)
        except RemoteProtocolError as e:
            if e.code not in DOCUMENTED:
                raise AssertionError(f"undocumented code {e.code}") from e
    except RemoteProtocolError as e:
        if e.code not in DOCUMENTED:
            raise AssertionError(f"undocumented code {e.code}") from e
    if bytewise:
        d1, d2 = FrameDecoder(MAX_PAYLOAD), FrameDecoder(MAX_PAYLOAD)
        whole = d1.feed(data)
        parts = []
        for i in range(len(data)):
            parts += d2.feed(data[i : i + 1])
        if whole != parts:
            raise AssertionError("byte-at-a-time feeding differs from bulk feeding")
        stats["bytewise checks"] += 1


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=1_000_000, help="inputs to try (default 1000000)")
    ap.add_argument("--seed", type=int, default=int(os.environ.get("LGEMBED_FUZZ_SEED", "1")))
    ap.add_argument("--max-len", type=int, default=400, help="longest random input")
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    pool = seeds()
    stream = FrameDecoder(MAX_PAYLOAD)
    stats: Counter = Counter()
    t0 = time.perf_counter()
    slowest = 0.0
    for n in range(args.runs):
        kind = n % 3
        if kind == 0:
            data = bytes(rng.randrange(256) for _ in range(rng.randint(0, args.max_len))) if rng.random() < 0.5 else os.urandom(rng.randint(0, args.max_len))
        elif kind == 1:
            data = mutate(rng, rng.choice(pool), pool)
        else:
            data = framed_payload(rng)
        t = time.perf_counter()
        try:
            one(data, stream, stats, bytewise=(n % 1000 == 0))
        except Exception:  # noqa: BLE001 - any undocumented failure is the finding
            print(f"FAILED on input {n} (seed {args.seed}): {data.hex()}", file=sys.stderr)
            traceback.print_exc()
            return 1
        slowest = max(slowest, time.perf_counter() - t)
        stats["inputs"] += 1
        if n and n % 100_000 == 0:
            el = time.perf_counter() - t0
            print(f"  {n} inputs, {el:.1f} s, {n / el:.0f}/s", file=sys.stderr)
    el = time.perf_counter() - t0
    print(f"fuzz-bridge-py: {stats['inputs']} inputs in {el:.1f} s ({stats['inputs'] / el:.0f}/s), seed {args.seed}, no undocumented exception")
    print(f"  slowest input: {slowest * 1000:.2f} ms; long-lived decoder: {stream.packets} packets, errors {dict(sorted(stream.errors.items()))}")
    for k, v in sorted(stats.items()):
        if k != "inputs":
            print(f"  {k}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
