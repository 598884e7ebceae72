"""Deterministic ids of tasks and interrupts.

Why: a task's id must be the same every time the same step of the same checkpoint
is prepared (resume matches saved writes to tasks by id), and an interrupt's id the
same every time its task asks. LangGraph derives both from xxh3-128 digests of the
same parts; lgembed uses BLAKE2b-128 of the same parts (stdlib, no dependency), so
ids have LangGraph's shape but not its values.
"""

from __future__ import annotations


# this module is imported on first use of an id, never by `import lgembed.graph`
try:  # CPython's own BLAKE2: hashlib would also load OpenSSL (about 3.5 MB of RSS) only to re-export it
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - interpreters without the _blake2 module
    from hashlib import blake2b


_EMPTY = blake2b(digest_size=16)
# copied for each digest: cheaper than a constructor call with a keyword argument


def _digest(data: bytes) -> str:
    h = _EMPTY.copy()
    h.update(data)
    return h.hexdigest()


def task_id(checkpoint_id: str, *parts: str) -> str:
    """Id `8-4-4-4-12` of a task, from the id of the checkpoint its step starts from."""
    h = _digest(("%s\x00%s" % (checkpoint_id, "\x00".join(parts))).encode())
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def interrupt_id(ns: str, answered: int) -> str:
    """Id (32 hex digits) of the interrupt a task asks after `answered` answers (I-2)."""
    return _digest((f"{ns}|{answered}" if answered else ns).encode())
