"""Thread and run records of the service, persisted beside the checkpoints.

Why this module exists: LangGraph's Agent Server keeps threads (metadata, status) and
runs (what was asked, how it ended) in its database; a device keeps them in the LMDB
environment its `LmdbSaver` already writes, so a restarted service still knows its
threads and which runs a SIGTERM, a SIGKILL or a power cut cut off. The records are
items of an `LmdbStore` opened on the saver's environment (`InMemoryStore` when the
saver is not an LMDB one, e.g. in tests with `InMemorySaver`):

=================================  ==========  ==============================================
namespace                          key         value
=================================  ==========  ==============================================
("lgembed", "threads")             thread id   thread record (metadata, status, error, ...)
("lgembed", "runs", label(thread)) run id      run record (status, kwargs, ...)
("lgembed", "active")              run id      {"thread_id"}: runs that are pending or running
=================================  ==========  ==============================================

`label()` escapes "%" and "." (a store label may not contain a period), so any thread
id is a valid label. Run ids are UUIDv7 strings, so a thread's runs sort by creation
time as keys do. The `active` namespace makes `resume_interrupted` at start read only
the runs that were cut off, not every run ever made. Several records written together
(a run and its thread, an active marker) go into one store batch: one LMDB transaction,
all or nothing.

Nothing is cached in memory: every read goes to the store (a few microseconds on LMDB),
so a service that made a million runs holds no more than one that made none.

JSON: `jsonable` / `dumps` turn graph values (messages, interrupts, dataclasses, ...)
into the JSON LangGraph's server sends (its `serde.json_dumpb`: orjson plus a default
hook); the records hold what the API received, so they are JSON-like already.

Secrets: `scrub_secrets` removes the keys that look like credentials from what the API
receives as config, metadata or context before anything is persisted or reaches
checkpoint metadata (see its docstring for the rule).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import sys
import threading
import time
import uuid
from collections.abc import Callable
from datetime import date, datetime, time as dtime, timedelta, timezone
from enum import Enum
from typing import Any

__all__ = (
    "Records",
    "dumps",
    "is_secret_key",
    "jsonable",
    "now_iso",
    "scrub_secrets",
    "thread_record",
    "uuid7",
)

THREADS_NS = ("lgembed", "threads")
"""Store namespace of the thread records."""
ACTIVE_NS = ("lgembed", "active")
"""Store namespace of the markers of runs that are pending or running."""
_RUNS_ROOT = ("lgembed", "runs")
# runs live under _RUNS_ROOT + (label(thread_id),)
_ALL = 1 << 62
# a search limit meaning "every item"

_SECRET_WORDS = frozenset(
    {"token", "secret", "password", "passwd", "passphrase", "apikey", "authorization", "credential", "credentials"}
)
# words of a key that mark it as a credential (whole words: "max_tokens" is not one)
_WORD_SPLIT = re.compile(r"[^a-z0-9]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def now_iso() -> str:
    """The current UTC time in ISO 8601 with offset, as LangGraph's server writes times."""
    return datetime.now(timezone.utc).isoformat()


_uuid7_lock = threading.Lock()
_uuid7_last = [0, 0]
# [milliseconds, sequence] of the last id made, so ids made in one millisecond still increase


def uuid7() -> str:
    """A new UUIDv7 (RFC 9562) as a string: 48 bits of Unix milliseconds, a 12-bit
    sequence that keeps ids of the same millisecond increasing, 62 random bits.

    Why: LangGraph's server names threads and runs with UUIDv7, and their time order
    makes a thread's runs sort by creation in the store.
    """
    ms = time.time_ns() // 1_000_000
    with _uuid7_lock:
        last_ms, seq = _uuid7_last
        if ms <= last_ms:
            ms, seq = last_ms, seq + 1
            if seq > 0xFFF:
                ms, seq = ms + 1, 0
        else:
            seq = 0
        _uuid7_last[0], _uuid7_last[1] = ms, seq
    rand = int.from_bytes(os.urandom(8), "big") & ((1 << 62) - 1)
    value = (ms << 80) | (0x7 << 76) | (seq << 64) | (0b10 << 62) | rand
    return str(uuid.UUID(int=value))


def _json_key(key: Any) -> str:
    # orjson's OPT_NON_STR_KEYS
    if isinstance(key, str):
        return str(key)
    if key is None:
        return "null"
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, Enum):
        return _json_key(key.value)
    if isinstance(key, (datetime, date, dtime)):
        return key.isoformat()
    return str(key)


def jsonable(obj: Any) -> Any:
    """`obj` as JSON-ready data, the way LangGraph's server serializes stream chunks and
    state: objects with `model_dump()` (messages, pydantic models) or `dict()` by those,
    dataclasses (Interrupt, Command) by their fields, named tuples as objects, `Send` as
    `{"node", "args"}`, tuples/sets as lists, enums by value, datetimes in ISO 8601,
    UUIDs and paths as text, bytes in base64, NaN and infinities as null, exceptions as
    `{"error", "message"}`; anything else by `str()`.
    """
    t = type(obj)
    if obj is None or t is str or t is bool or t is int:
        return obj
    if t is float:
        return obj if math.isfinite(obj) else None
    if t is dict:
        return {(k if type(k) is str else _json_key(k)): jsonable(v) for k, v in obj.items()}
    if t is list:
        return [jsonable(v) for v in obj]
    if isinstance(obj, Enum):
        return jsonable(obj.value)
    if isinstance(obj, str):
        return str(obj)
    if isinstance(obj, bool):
        return bool(obj)
    if isinstance(obj, int):
        return int(obj)
    if isinstance(obj, float):
        return jsonable(float(obj))
    if isinstance(obj, dict):
        return {_json_key(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, tuple) and hasattr(obj, "_asdict"):
        return jsonable(dict(obj._asdict()))
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if type(obj).__name__ == "Send" and hasattr(obj, "node") and hasattr(obj, "arg"):
        return {"node": obj.node, "args": jsonable(obj.arg)}
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    dump = getattr(obj, "model_dump", None)
    if callable(dump) and not isinstance(obj, type):
        return jsonable(dump())
    as_dict = getattr(obj, "dict", None)
    if callable(as_dict) and not isinstance(obj, type):
        return jsonable(as_dict())
    if isinstance(obj, (datetime, date, dtime)):
        return obj.isoformat()
    if isinstance(obj, (set, frozenset)) or type(obj).__name__ == "deque":
        return [jsonable(v) for v in obj]
    if isinstance(obj, timedelta):
        return obj.total_seconds()
    decimal = sys.modules.get("decimal")  # a Decimal exists only if its module was imported
    if decimal is not None and isinstance(obj, decimal.Decimal):
        return int(obj) if obj.is_finite() and obj.as_tuple().exponent >= 0 else float(obj)
    if isinstance(obj, (bytes, bytearray, memoryview)):
        import base64

        return base64.b64encode(bytes(obj)).decode()
    if isinstance(obj, BaseException):
        return {"error": type(obj).__name__, "message": str(obj)}
    return str(obj)


def dumps(obj: Any) -> bytes:
    """`jsonable(obj)` as compact UTF-8 JSON (lone surrogates become "?")."""
    text = json.dumps(jsonable(obj), ensure_ascii=False, separators=(",", ":"))
    return text.encode("utf-8", "replace")


def is_secret_key(key: Any) -> bool:
    """Whether a config/metadata key names a credential.

    The key is split into lower-case words (at camelCase humps and at every character
    that is not a letter or a digit); it is a credential when a word is one of
    token, secret, password, passwd, passphrase, apikey, authorization, credential(s),
    or when the words contain "api" directly followed by "key". So `openai_api_key`,
    `apiKey`, `x-api-key`, `access_token`, `db_password` are; `max_tokens`,
    `tokenizer`, `keyword` are not.
    """
    if not isinstance(key, str):
        return False
    words = [w for w in _WORD_SPLIT.split(_CAMEL.sub("_", key).lower()) if w]
    if any(w in _SECRET_WORDS for w in words):
        return True
    return any(a == "api" and b == "key" for a, b in zip(words, words[1:], strict=False))


def scrub_secrets(value: Any, dropped: set | None = None) -> Any:
    """A copy of `value` without the dict keys `is_secret_key` calls credentials, at any depth.

    Args:
        value: a JSON-like value (dicts, lists, scalars).
        dropped: when given, the names of the removed keys are added to it (names only,
            never values: they are logged).

    Returns:
        The scrubbed copy (scalars are returned as they are).
    """
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if is_secret_key(k):
                if dropped is not None:
                    dropped.add(k)
                continue
            out[k] = scrub_secrets(v, dropped)
        return out
    if isinstance(value, list):
        return [scrub_secrets(v, dropped) for v in value]
    return value


def thread_record(thread_id: str, metadata: dict, status: str, now: str) -> dict:
    """A new thread record, with the fields LangGraph's server gives a thread."""
    return {
        "thread_id": thread_id,
        "created_at": now,
        "updated_at": now,
        "state_updated_at": now,
        "metadata": metadata,
        "status": status,
        "config": {},
        "error": None,
    }


def label(thread_id: str) -> str:
    """The store label of a thread id: "%" and "." escaped (labels may not hold periods)."""
    return thread_id.replace("%", "%25").replace(".", "%2E")


class Records:
    """Thread and run records in a store on the saver's environment.

    Args:
        saver: the checkpointer the served graphs use. An `LmdbSaver` (anything with an
            `env` attribute holding an `lmdb.Environment`) gets an `LmdbStore` on that
            environment; any other saver an `InMemoryStore` (records then last as long
            as the process, like the saver's checkpoints).
        store: a `BaseStore` to keep the records in instead (the caller closes it).

    Raises:
        LmdbError: when the saver's environment cannot be opened as a store.
    """

    def __init__(self, saver: Any, store: Any = None) -> None:
        self._owned = store is None
        if store is None:
            env = getattr(saver, "env", None)
            if env is not None:
                from lgembed.checkpoint._lmdb_env import DEFAULT_MAP_SIZE, DEFAULT_MAX_MAP_SIZE
                from lgembed.store.lmdb import LmdbStore

                # the saver's ceiling holds for the whole environment (a service's max_map_size);
                # with env= the map is already open, so map_size only has to be <= the ceiling
                ceiling = getattr(saver, "max_map_size", DEFAULT_MAX_MAP_SIZE)
                store = LmdbStore(env=env, map_size=min(DEFAULT_MAP_SIZE, ceiling), max_map_size=ceiling)
            else:
                from lgembed.store.memory import InMemoryStore

                store = InMemoryStore()
        self.store = store
        self.lock = threading.RLock()
        """Held around every read-modify-write of a thread record (HTTP handlers and
        run workers update the same records)."""

    def close(self) -> None:
        """Closes the store this object opened (not one passed in).

        Raises:
            LmdbError: when the final flush of the environment fails.
        """
        if self._owned:
            close = getattr(self.store, "close", None)
            if close is not None:
                close()
            self._owned = False

    # --- low level ------------------------------------------------------------------

    def _put_ops(self, ops: list) -> None:
        from lgembed.store.base import PutOp

        self.store.batch([PutOp(ns, key, value) for ns, key, value in ops])

    def _get(self, namespace: tuple, key: str) -> dict | None:
        item = self.store.get(namespace, key)
        return None if item is None else dict(item.value)

    def _all(self, namespace: tuple, filter: dict | None = None) -> list[dict]:
        return [dict(i.value) for i in self.store.search(namespace, filter=filter, limit=_ALL)]

    def write(self, *, thread: dict | None = None, runs: tuple = (), active: tuple = (), inactive: tuple = ()) -> None:
        """Writes records in one batch (one transaction on LMDB).

        Args:
            thread: a thread record to store.
            runs: run records to store.
            active: run records to mark as pending/running.
            inactive: run ids whose marker is removed.

        Raises:
            LmdbError: (LmdbDiskFullError, LmdbMapFullError) when the write fails;
                nothing of the batch is stored then.
        """
        ops: list = []
        if thread is not None:
            ops.append((THREADS_NS, thread["thread_id"], thread))
        for run in runs:
            ops.append((_RUNS_ROOT + (label(run["thread_id"]),), run["run_id"], run))
        for run in active:
            ops.append((ACTIVE_NS, run["run_id"], {"thread_id": run["thread_id"], "run_id": run["run_id"]}))
        for run_id in inactive:
            ops.append((ACTIVE_NS, run_id, None))
        if ops:
            self._put_ops(ops)

    # --- threads --------------------------------------------------------------------

    def get_thread(self, thread_id: str) -> dict | None:
        """The thread record, or None when there is no such thread.

        Raises:
            LmdbError: when the store cannot be read.
        """
        return self._get(THREADS_NS, thread_id)

    def threads(self) -> list[dict]:
        """Every thread record (in thread-id order).

        Raises:
            LmdbError: when the store cannot be read.
        """
        return self._all(THREADS_NS)

    def update_thread(self, thread_id: str, change: Callable[[dict], Any]) -> dict | None:
        """Reads a thread record, lets `change` modify it in place and writes it back,
        under `self.lock`. Returns the new record, or None when the thread does not exist
        (then `change` is not called).

        Raises:
            LmdbError: when the store cannot be read or written.
            Exception: whatever `change` raises (nothing is written then).
        """
        with self.lock:
            rec = self.get_thread(thread_id)
            if rec is None:
                return None
            change(rec)
            self.write(thread=rec)
            return rec

    def end_run(
        self, run: dict, *, status: str | None, error: Any, graph_id: str, now: str, keep: int, protect: set
    ) -> None:
        """Records a run's end and its thread's new status in one batch, and removes its
        active marker. A thread that is gone is not written again (nor is the run). When
        the thread has made more than `keep` + 10 runs, its oldest finished runs beyond
        the newest `keep` are deleted, except those in `protect`.

        Raises:
            LmdbError: when the store cannot be read or written.
        """
        tid = run["thread_id"]
        with self.lock:
            thread = self.get_thread(tid)
            if thread is not None:
                thread["status"] = status
                thread["updated_at"] = thread["state_updated_at"] = now
                thread["error"] = error
                thread.setdefault("metadata", {})["graph_id"] = graph_id
            self.write(thread=thread, runs=(run,) if thread is not None else (), inactive=(run["run_id"],))
            if thread is not None and thread.get("_runs", 0) > keep + 10:
                self.prune_runs(tid, keep, protect)
                self.update_thread(tid, lambda t: t.__setitem__("_runs", keep))

    def delete_thread(self, thread_id: str) -> bool:
        """Removes a thread record, its runs and their active markers; True when it existed.

        Raises:
            LmdbError: when the store cannot be read or written.
        """
        with self.lock:
            existed = self.get_thread(thread_id) is not None
            runs = self.runs(thread_id)
            ns = _RUNS_ROOT + (label(thread_id),)
            ops = [(THREADS_NS, thread_id, None)]
            ops += [(ns, r["run_id"], None) for r in runs]
            ops += [(ACTIVE_NS, r["run_id"], None) for r in runs if r.get("status") in ("pending", "running")]
            self._put_ops(ops)
            return existed or bool(runs)

    # --- runs -----------------------------------------------------------------------

    def get_run(self, thread_id: str, run_id: str) -> dict | None:
        """The run record, or None.

        Raises:
            LmdbError: when the store cannot be read.
        """
        return self._get(_RUNS_ROOT + (label(thread_id),), run_id)

    def runs(self, thread_id: str) -> list[dict]:
        """The thread's run records, oldest first.

        Raises:
            LmdbError: when the store cannot be read.
        """
        return self._all(_RUNS_ROOT + (label(thread_id),))

    def delete_run(self, thread_id: str, run_id: str) -> bool:
        """Removes one run record and its active marker; True when it existed.

        Raises:
            LmdbError: when the store cannot be read or written.
        """
        existed = self.get_run(thread_id, run_id) is not None
        self._put_ops([(_RUNS_ROOT + (label(thread_id),), run_id, None), (ACTIVE_NS, run_id, None)])
        return existed

    def prune_runs(self, thread_id: str, keep: int, protect: set) -> int:
        """Deletes the oldest finished runs of a thread beyond the newest `keep`; returns
        how many were deleted. Runs whose id is in `protect` are never deleted.

        Raises:
            LmdbError: when the store cannot be read or written.
        """
        runs = self.runs(thread_id)
        excess = len(runs) - keep
        if excess <= 0:
            return 0
        ns = _RUNS_ROOT + (label(thread_id),)
        doomed = [
            r["run_id"]
            for r in runs[:excess]
            if r["run_id"] not in protect and r.get("status") not in ("pending", "running")
        ]
        if doomed:
            self._put_ops([(ns, rid, None) for rid in doomed])
        return len(doomed)

    def active(self) -> list[dict]:
        """Markers `{"thread_id", "run_id"}` of the runs recorded as pending or running,
        in run-id (creation) order.

        Raises:
            LmdbError: when the store cannot be read.
        """
        return self._all(ACTIVE_NS)
