"""Task and interrupt ids never change between lgembed versions.

Saved pending writes are matched to the tasks of a resumed step by task id, and resume
maps name interrupts by id (I-2, L-23), so a checkpoint written by one lgembed version
must get the same ids from the next. The values below were computed with the original
derivation (BLAKE2b-128 of the checkpoint id and the parts, NUL-separated); an
implementation change that alters them breaks resuming saved threads.
"""

from __future__ import annotations

from hashlib import blake2b

from lgembed._ids import interrupt_id, task_id

CID = "1ef2b3c4-1234-6abc-8def-0123456789ab"


def _reference(checkpoint_id: str, *parts: str) -> str:
    h = blake2b(checkpoint_id.encode() + b"\x00" + "\x00".join(parts).encode(), digest_size=16).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def test_task_ids_keep_their_values():
    assert task_id(CID, "n3", "3", "n3", "__pregel_pull", "branch:to:n3") == "777909ef-f4fa-5464-c3d6-422cc30bebd9"
    assert task_id(CID, "sub|x", "0", "x", "__pregel_push", "2") == "4a7f7203-91bd-a660-61b0-bdff5c6cdbcb"
    assert task_id(CID) == "bba940d7-4d1f-0356-5988-51e584dd7724"


def test_task_ids_are_the_reference_derivation_for_any_parts():
    for parts in [(), ("a",), ("", ""), ("é", "ü|x", "\x00"), tuple(str(i) for i in range(9))]:
        assert task_id(CID, *parts) == _reference(CID, *parts)


def test_interrupt_ids_keep_their_values():
    assert interrupt_id("a:1|b", 0) == "927f05eb8b3edfd3090114bf90d1dc3b"
    assert interrupt_id("a:1|b", 2) == "cf35f544372635daf5eeb4260efd7c7c"
    assert interrupt_id("a:1|b", 2) == blake2b(b"a:1|b|2", digest_size=16).hexdigest()
