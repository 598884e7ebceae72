"""Time-ordered checkpoint ids (UUID version 6), laid out as LangGraph lays them out.

Why: a checkpoint id is the sort key of a thread's history. Savers find "the latest"
as the greatest id and `list(before=...)` compares ids as strings, so ids must sort
in creation order. UUIDv6 puts the timestamp's most significant bits first, so the
canonical 8-4-4-4-12 string of a later id compares greater. LangGraph additionally
stores the superstep in the 14-bit clock sequence (P-1): step -1 gives `...-bfff-...`,
step 0 `...-8000-...`, step 1 `...-8001-...`, i.e. the step modulo 2**14 behind the
RFC 4122 variant bits `10`.

Bit layout of the 128-bit value (most significant first)::

    48 bits  timestamp >> 12        (100 ns ticks since 1582-10-15, high part)
     4 bits  version = 6
    12 bits  timestamp & 0xfff      (low part)
     2 bits  variant = 0b10
    14 bits  clock_seq              (the step, or random bits)
    48 bits  node                   (random bits)

Strategy: ids must also be strictly increasing within a process even when the clock
does not move between two calls (100 ns resolution) or steps backwards. One
process-wide "last timestamp" under a lock does that. It is the only state in this
module; it cannot live on a saver because ids are made by the engine, and one
thread's history may be written through several graph objects.
"""

from __future__ import annotations

import _thread
import random
import time
import uuid

__all__ = ("now_iso", "uuid6", "uuid6_str")

_GREGORIAN_OFFSET = 0x01B21DD213814000
# 100 ns intervals between the UUID epoch (1582-10-15) and the Unix epoch
_LOCK = _thread.allocate_lock()
_LAST_TIMESTAMP = [0]
# the timestamp of the last id made in this process (a list so the lock guards a cell)
_acquire = _LOCK.acquire
_release = _LOCK.release
_getrandbits = random.getrandbits
# bound once: a checkpoint id is made once per checkpoint


def _next_timestamp() -> int:
    """The UUID timestamp of a new id: now, or one tick past the last id's if the clock
    did not move forward (see the module docstring)."""
    timestamp = time.time_ns() // 100 + _GREGORIAN_OFFSET
    _acquire()
    try:
        last = _LAST_TIMESTAMP[0]
        if timestamp <= last:
            timestamp = last + 1
        _LAST_TIMESTAMP[0] = timestamp
    finally:
        _release()
    return timestamp


def uuid6(node: int | None = None, clock_seq: int | None = None) -> uuid.UUID:
    """A new UUIDv6, greater than every id made before it in this process.

    Same signature as LangGraph's `langgraph.checkpoint.base.id.uuid6`.

    Args:
        node: the low 48 bits; random when None.
        clock_seq: the 14-bit clock sequence; only its low 14 bits are used, so a
            negative step wraps (-1 -> 0x3fff, shown as `bfff`). Random when None.

    Returns:
        A `uuid.UUID` whose `version` is 6.
    """
    timestamp = _next_timestamp()
    if clock_seq is None:
        clock_seq = random.getrandbits(14)
    if node is None:
        node = random.getrandbits(48)
    value = (
        ((timestamp >> 12) & 0xFFFF_FFFF_FFFF) << 80
        | 0x6 << 76
        | (timestamp & 0x0FFF) << 64
        | 0b10 << 62
        | (clock_seq & 0x3FFF) << 48
        | (node & 0xFFFF_FFFF_FFFF)
    )
    return uuid.UUID(int=value)


def uuid6_str(clock_seq: int) -> str:
    """`str(uuid6(clock_seq=clock_seq))` without building a `uuid.UUID` (once per checkpoint).

    Strategy: the id's two 64-bit halves are computed apart, so the compiled build
    (`_id.pxd`) does the arithmetic on C integers instead of 128-bit Python ints.
    """
    timestamp = _next_timestamp()
    seq = clock_seq & 0x3FFF
    node = _getrandbits(48)
    high = ((timestamp >> 12) & 0xFFFF_FFFF_FFFF) << 16 | 0x6 << 12 | (timestamp & 0x0FFF)
    return "%08x-%04x-%04x-%04x-%012x" % (high >> 32, (high >> 16) & 0xFFFF, high & 0xFFFF, 0x8000 | seq, node)


_ISO_SECOND: tuple = (None, "")
# (Unix second, its "YYYY-MM-DDTHH:MM:SS" in UTC) of the last `now_iso` call


def now_iso() -> str:
    """`datetime.now(timezone.utc).isoformat()`, the checkpoint timestamp, made from
    `time.time_ns()` with the date and time of the current second cached.

    Same string: microseconds truncated as `datetime.now` does, and no fraction when
    they are 0, as `isoformat` does. The date is computed from the integer seconds,
    so it is right on 32-bit time_t platforms after 2038 too.
    """
    micros = time.time_ns() // 1000
    second = micros // 1_000_000
    micro = micros - second * 1_000_000
    cached = _ISO_SECOND
    if cached[0] != second:
        # The civil date from the day count, in integers (H. Hinnant's days -> civil
        # algorithm, proleptic Gregorian, eras of 400 years = 146097 days), not
        # time.gmtime: a 32-bit time_t (Debian 12 armhf) makes gmtime raise
        # OverflowError after 2038-01-19.
        days = second // 86400
        sod = second - days * 86400
        z = days + 719468  # days since 0000-03-01
        era = z // 146097
        doe = z - era * 146097  # [0, 146096]
        yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365  # [0, 399]
        doy = doe - (365 * yoe + yoe // 4 - yoe // 100)  # [0, 365], from March 1st
        mp = (5 * doy + 2) // 153  # [0, 11], March = 0
        day = doy - (153 * mp + 2) // 5 + 1
        month = mp + 3 if mp < 10 else mp - 9
        year = yoe + era * 400 + (1 if month <= 2 else 0)
        cached = (
            second,
            "%04d-%02d-%02dT%02d:%02d:%02d" % (year, month, day, sod // 3600, sod // 60 % 60, sod % 60),
        )
        globals()["_ISO_SECOND"] = cached
    if micro:
        return "%s.%s+00:00" % (cached[1], str(1_000_000 + micro)[1:])  # 6 digits, without a format call
    return cached[1] + "+00:00"
