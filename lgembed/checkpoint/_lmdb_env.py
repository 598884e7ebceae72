"""LMDB environments shared by LmdbSaver and LmdbStore: ownership, locking, growth, errors.

Why this module exists: py-lmdb says opening one LMDB environment twice in a process is
"a serious error" (its locks are per process and file, so a second handle silently
shares and then releases the first one's locks). A saver and a store often want the
same directory, and a program may build several savers over one path. This module is
the one place that opens environments for lgembed, and everything that must be the
same for all users of one environment lives here, on one `SharedEnv` object:

- the registry `ENVIRONMENTS`, keyed by the real path of the environment directory,
  with reference counting (see `EnvironmentRegistry`);
- the write lock (LMDB allows one write transaction at a time; a Python lock makes
  threads queue in Python instead of inside LMDB) and the remap lock (see below);
- map growth (`MapFullError` -> abort, double the map, retry, up to a maximum);
- the fsync policy (`FSYNC_POLICIES`) and explicit flushes;
- the translation of py-lmdb's exceptions into `LmdbError` and its subclasses, which
  happens here and nowhere else.

Strategy (remap lock): `Environment.set_mapsize` replaces the memory map, so no
transaction of this process may be open while it runs (py-lmdb 3 invalidates the open
ones; older versions leave them dangling). Read transactions are therefore taken under
a shared lock that map growth takes exclusively; readers hold it only for one short
transaction, never across a `yield`. Write transactions are serialized by the write
lock, which growth also holds, so they need no shared lock. One more rule, for
py-lmdb >= 2.3: aborting a write transaction (and `set_mapsize`) waits until no other
thread is inside any LMDB call, which busy reader threads can postpone for seconds; so
every write-transaction abort happens under the exclusive lock, with readers drained.
Commits do not wait and take no extra lock.

Strategy (keys): every key is a concatenation of `enc(part)` components. `enc`
UTF-8-encodes a string, escapes each NUL byte as `00 ff` and ends it with `00 01`.
The encoding preserves string order (so checkpoint ids sort as strings), and no
encoded component is a prefix of another, so "all keys of a thread" or "of a thread
and namespace" is exactly the set of keys starting with those components: a range
scan, with no collision between ("a", "b") and ("a\\x00b",). `UPPER` (`ff`) appended
to a prefix is greater than every key with that prefix and smaller than every later
key, because UTF-8 never contains the byte `ff`.

Importing this module does not import lmdb; it is imported on first use.

Why this file is longer than 600 lines: the registry, the two locks, growth and the
error boundary are one protocol (who may call `set_mapsize` when, who closes what);
split across modules, its invariants could no longer be checked in one reading.
"""

from __future__ import annotations

import contextlib
import errno as _errno
import os
import threading
from collections.abc import Callable, Iterator
from typing import Any

__all__ = (
    "check_options",
    "DEFAULT_MAP_SIZE",
    "DEFAULT_MAX_MAP_SIZE",
    "ENVIRONMENTS",
    "FSYNC_POLICIES",
    "UPPER",
    "EnvironmentRegistry",
    "LmdbCorruptError",
    "LmdbDiskFullError",
    "LmdbError",
    "LmdbMapFullError",
    "SharedEnv",
    "decode_parts",
    "enc",
    "enc_name",
    "parts_end",
)

FSYNC_POLICIES = ("deferred", "commit", "always")
"""Values of the `fsync=` option; see the table in `lgembed.checkpoint.lmdb`."""
_ENV_FLAGS = {
    "deferred": {"sync": False, "metasync": False},
    "commit": {"sync": True, "metasync": False},
    "always": {"sync": True, "metasync": True},
}
# how each fsync policy maps onto lmdb.open(sync=..., metasync=...)
DEFAULT_MAP_SIZE = 16 * 1024 * 1024
# initial map size of an environment lgembed opens; the file is sparse, so this is
# address space, not disk space, and the map grows on demand
DEFAULT_MAX_MAP_SIZE = 1024 * 1024 * 1024
# the map never grows past this unless a larger max_map_size is passed (a guard
# against runaway growth; 32-bit devices have about 3 GiB of address space)
MAX_DBS = 16
# named databases an environment opened here can hold (saver: 1, store: 2, format: 1)
UPPER = b"\xff"
# appended to a key prefix: greater than every key with that prefix (see module doc)
_TERM = b"\x00\x01"
_NUL = b"\x00"
_NUL_ESCAPED = b"\x00\xff"
_FORMAT_DB = b"lgembed.format"
# named database holding one format version per user kind ("checkpoint", "store")

_DISK_ERRNOS = (_errno.ENOSPC, _errno.EDQUOT, _errno.EFBIG)
# errors that mean "no room to write": ENOSPC, a quota, or RLIMIT_FSIZE / file size limit
_ROOM_MARGIN = 1024 * 1024
# an EIO from a commit counts as "no room" when less than this is left (see _out_of_room)


# --- errors ---------------------------------------------------------------------------


class LmdbError(OSError):
    """An LMDB environment could not be opened, read or written.

    Every exception that py-lmdb raises inside LmdbSaver or LmdbStore reaches the caller
    as this class or a subclass, chained (`__cause__`) to the original. `filename` is
    the environment directory; `errno` is set when the failure has one.
    """

    def __init__(self, message: str, *, path: str | None = None, errno: int | None = None) -> None:
        super().__init__(message)
        self.filename = path
        self.errno = errno
        self.strerror = message

    def __str__(self) -> str:
        # the message already names the path and the errno; OSError's "[Errno n] ...: 'path'" would repeat them
        return str(self.args[0])


class LmdbMapFullError(LmdbError):
    """The map reached `max_map_size` and the write did not fit; nothing was written."""


class LmdbDiskFullError(LmdbError):
    """The file system had no room for a write (ENOSPC, quota, file size limit).

    The transaction was aborted, so nothing of the failed call is stored; everything
    committed before stays readable.
    """


class LmdbCorruptError(LmdbError):
    """The environment's files are damaged, not LMDB files, or of an unknown format."""


def _errno_of(exc: BaseException) -> int | None:
    text = str(exc)
    for code in (*_DISK_ERRNOS, _errno.EIO, _errno.EROFS, _errno.EACCES, _errno.ENOENT):
        if text.endswith(os.strerror(code)):
            return code
    return None


def _out_of_room(path: str) -> int | None:
    """Why a write to the environment at `path` may have been cut short, or None.

    Why: LMDB reports a short `pwrite` (the file system filled up, or the file hit
    RLIMIT_FSIZE, in the middle of a write) as EIO, not as ENOSPC/EFBIG.
    """
    try:
        import resource

        limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0]
        size = os.path.getsize(os.path.join(path, "data.mdb"))
        if limit != resource.RLIM_INFINITY and size + _ROOM_MARGIN >= limit:
            return _errno.EFBIG
        st = os.statvfs(path)
        if min(st.f_bavail, st.f_bfree) * st.f_frsize < _ROOM_MARGIN:
            return _errno.ENOSPC
    except (OSError, ImportError, ValueError):
        return None
    return None


def map_error(exc: BaseException, action: str, path: str) -> LmdbError:
    """The lgembed error for a py-lmdb exception raised while doing `action` on `path`.

    The message says what was being done, what failed and, where there is one, the fix.
    """
    lmdb = _lmdb()
    if isinstance(exc, LmdbError):
        return exc
    code = _errno.ENOSPC if isinstance(exc, lmdb.DiskError) else _errno_of(exc)
    if code == _errno.EIO:
        code = _out_of_room(path) or code
    if code in _DISK_ERRNOS:
        msg = (
            f"{action} in LMDB environment {path!r}: {os.strerror(code)} (errno {code}). "
            "Nothing of this call was stored; committed data is intact. Free space on that "
            "file system or move the environment."
        )
        return LmdbDiskFullError(msg, path=path, errno=code)
    corrupt = (lmdb.CorruptedError, lmdb.PageNotFoundError, lmdb.InvalidError, lmdb.VersionMismatchError)
    if isinstance(exc, corrupt):
        msg = (
            f"{action} in LMDB environment {path!r}: the files are damaged or not an LMDB "
            f"environment ({type(exc).__name__}: {exc}). Restore it from a copy or remove it."
        )
        return LmdbCorruptError(msg, path=path)
    if isinstance(exc, lmdb.DbsFullError):
        msg = (
            f"{action} in LMDB environment {path!r}: it has no room for lgembed's named "
            f"databases. Open it with lmdb.open(..., max_dbs={MAX_DBS}) or more."
        )
        return LmdbError(msg, path=path)
    msg = f"{action} in LMDB environment {path!r}: {type(exc).__name__}: {exc}"
    return LmdbError(msg, path=path, errno=code)


# --- keys -----------------------------------------------------------------------------


def enc(part: str) -> bytes:
    """One key component: UTF-8, NUL escaped as `00 ff`, terminated by `00 01`."""
    data = part.encode("utf-8", "surrogatepass")
    if 0 in data:  # Why the int: `b"\x00" in data` first tries the bytes as an int and raises inside
        data = data.replace(_NUL, _NUL_ESCAPED)
    return data + _TERM


def check_options(
    path: Any, env: Any, map_size: int, max_map_size: int, **optional: int | None
) -> tuple[Any, Any]:
    """Validates the options LmdbSaver and LmdbStore share; returns `(path, env)` with an
    `lmdb.Environment` given positionally moved to `env`.

    Not memoized: a few type checks per saver or store made, and a cache would keep the
    callers' environments alive and refuse unhashable values with a TypeError.

    Raises:
        ValueError: a size (or an `optional` count that is not None) is not a positive
            int, or `max_map_size` < `map_size`.
    """
    values = {"map_size": map_size, "max_map_size": max_map_size, **optional}
    for name, value in values.items():
        if value is None and name in optional:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            msg = f"'{name}' must be a positive int{' or None' if name in optional else ''} (got {value!r})"
            raise ValueError(msg)
    if max_map_size < map_size:
        msg = f"'max_map_size' must be >= map_size ({map_size}) (got {max_map_size})"
        raise ValueError(msg)
    if path is not None and not isinstance(path, (str, bytes, os.PathLike)):
        path, env = None, path if env is None else env  # an Environment given positionally
    return path, env


def enc_name(part: str) -> bytes:
    """`enc`, memoized, for components that repeat (namespaces, channel names)."""
    data = _NAMES.get(part)
    if data is None:
        data = enc(part)
        if len(_NAMES) >= _NAMES_MAX:
            _NAMES.clear()
        _NAMES[part] = data
    return data


_NAMES: dict = {}
_NAMES_MAX = 4096
# enc_name's memo: component -> key bytes (cleared whole when full: no per-hit upkeep)


def parts_end(key: bytes, count: int, start: int = 0) -> int:
    """The offset just past the `count` components made with `enc` that start at `start`.

    Raises:
        ValueError: when `key` has fewer components there.
    """
    end = start
    for _ in range(count):
        end = key.index(_TERM, end) + 2
    return end


def decode_parts(key: bytes, count: int) -> list[str]:
    """The first `count` components of a key made with `enc`."""
    parts = key.split(_TERM, count)[:count]
    return [p.replace(_NUL_ESCAPED, _NUL).decode("utf-8", "surrogatepass") for p in parts]


_LMDB: Any = None


def _lmdb() -> Any:
    """The py-lmdb module, imported on first use (kept: every write transaction asks)."""
    global _LMDB
    if _LMDB is None:
        import lmdb

        _LMDB = lmdb
    return _LMDB


# --- locks ----------------------------------------------------------------------------


class _RemapLock:
    """Shared by transactions, exclusive for `set_mapsize`; a waiting remap blocks new readers."""

    __slots__ = ("_active", "_cond", "_remapping", "_waiting")

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._active = 0
        self._remapping = False
        self._waiting = 0

    def acquire_shared(self) -> None:
        with self._cond:
            while self._remapping or self._waiting:
                self._cond.wait()
            self._active += 1

    def release_shared(self) -> None:
        with self._cond:
            self._active -= 1
            if not self._active:
                self._cond.notify_all()

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        with self._cond:
            self._waiting += 1
            try:
                while self._remapping or self._active:
                    self._cond.wait()
            finally:
                self._waiting -= 1
            self._remapping = True
        try:
            yield
        finally:
            with self._cond:
                self._remapping = False
                self._cond.notify_all()


# --- the shared environment -------------------------------------------------------------


class SharedEnv:
    """One open LMDB environment and the locks every user of it in this process shares.

    Made by `EnvironmentRegistry.acquire`; users call `read()`, `write()`, `sync()` and
    `db()`, and give it back with `EnvironmentRegistry.release`.

    Attributes:
        env: the `lmdb.Environment`.
        path: real path of the environment directory (the registry key).
        owned: whether lgembed opened it (and closes it when the last user releases
            it); False for an environment the caller passed in and owns.
        fsync: the policy in force, read from the environment's flags.
        refs: number of users that acquired and have not released it.
    """

    def __init__(self, env: Any, path: str, *, owned: bool) -> None:
        self.env = env
        self.path = path
        self.owned = owned
        flags = env.flags()
        self.fsync = "always" if flags["sync"] and flags["metasync"] else "commit" if flags["sync"] else "deferred"
        self.refs = 0
        self._write_lock = threading.Lock()
        self._remap = _RemapLock()
        self._dbs: dict[bytes, Any] = {}

    def __repr__(self) -> str:
        return f"<SharedEnv {self.path!r} fsync={self.fsync!r} refs={self.refs}>"

    # --- databases ----------------------------------------------------------------

    def db(self, name: bytes, owner: str) -> Any:
        """The handle of the named database `name`, created on first use."""
        handle = self._dbs.get(name)
        if handle is None:
            lmdb = _lmdb()
            with self._write_lock:
                while name not in self._dbs:
                    full = False
                    # exclusive: a failed creation aborts a write transaction (see module doc)
                    with self._remap.exclusive():
                        try:
                            self._dbs[name] = self.env.open_db(name, create=True)
                        except lmdb.MapFullError:
                            full = True
                        except lmdb.MapResizedError:
                            # another process grew the map: take its size and try again
                            self._adopt_locked()
                            continue
                        except lmdb.Error as e:
                            raise map_error(e, f"{owner}: opening database {name.decode()!r}", self.path) from e
                        if full:
                            self._grow_locked(owner, DEFAULT_MAX_MAP_SIZE)
                handle = self._dbs[name]
        return handle

    def check_format(self, kind: str, version: int, owner: str, readable: tuple = ()) -> None:
        """Records format `version` for `kind`, or checks the recorded one; a recorded
        format in `readable` (older ones this lgembed reads) is recorded as `version`.

        Raises:
            LmdbCorruptError: when the environment holds another format of `kind`; the
                message names the format found, the one expected and the ways out.
        """
        fmt = self.db(_FORMAT_DB, owner)
        key = kind.encode()
        want = str(version).encode()

        def record(txn: Any) -> bytes | None:
            found = txn.get(key, db=fmt)
            if found is None:
                txn.put(key, want, db=fmt)
            return found

        with self.read() as txn:
            found = txn.get(key, db=fmt)
        if found is None:
            found = self.write(record, owner=owner, action="recording the format version")
        if found is not None and found != want and found in [str(v).encode() for v in readable]:

            def upgrade(txn: Any) -> None:
                txn.put(key, want, db=fmt)

            self.write(upgrade, owner=owner, action="recording the format version")
            found = want
        if found is not None and found != want:
            msg = (
                f"{owner}: LMDB environment {self.path!r} holds {kind} data in format "
                f"{found.decode(errors='replace')}; this lgembed reads format {version} only"
                f"{''.join(f' (and {v}, recorded as {version} when opened)' for v in readable if v != version)}. "
                f"Open it with the lgembed release that wrote it, or give {owner} a new "
                "directory (remove this one once nothing in it is needed: other users of "
                "the environment keep their data in the same files)."
            )
            raise LmdbCorruptError(msg, path=self.path)

    # --- transactions ---------------------------------------------------------------

    @contextlib.contextmanager
    def read(self, action: str = "Reading") -> Iterator[Any]:
        """A read-only transaction, under the shared remap lock; py-lmdb errors are mapped.

        Raises:
            LmdbError: (or a subclass) for any LMDB failure.
        """
        lmdb = _lmdb()
        while True:
            self._remap.acquire_shared()
            try:
                txn = self.env.begin()
            except lmdb.MapResizedError:
                self._remap.release_shared()
                with self._write_lock, self._remap.exclusive():
                    self._adopt_locked()
                continue
            except lmdb.Error as e:
                self._remap.release_shared()
                raise map_error(e, action, self.path) from e
            break
        try:
            yield txn
        except lmdb.Error as e:
            raise map_error(e, action, self.path) from e
        finally:
            try:
                txn.abort()
            finally:
                self._remap.release_shared()

    def write(
        self,
        fn: Callable[[Any], Any],
        *,
        owner: str,
        action: str,
        max_map_size: int = DEFAULT_MAX_MAP_SIZE,
        durable: bool = False,
        db: Any = None,
    ) -> Any:
        """Runs `fn(txn)` in a write transaction and commits it; returns what `fn` returned.

        `db`: the transaction's default database (py-lmdb's `begin(db=...)`), so `fn`
        can call `txn.put(key, value)` without the keyword, whose parsing costs about
        as much as LMDB's own insert of a small row.

        On `MapFullError` the transaction is aborted, the map doubled (at most to
        `max_map_size`) and `fn` run again from the start, so `fn` must only write.
        With `durable`, the environment is flushed to disk (one fdatasync) after the
        commit, unless the fsync policy already did that.

        Raises:
            LmdbMapFullError: when the data does not fit in `max_map_size`.
            LmdbDiskFullError: when the file system has no room.
            LmdbError: for any other LMDB failure.
            Exception: whatever `fn` raises (the transaction is aborted).
        """
        lmdb = _lmdb()
        with self._write_lock:
            while True:
                try:
                    txn = self.env.begin(write=True, db=db)
                except lmdb.MapResizedError:
                    with self._remap.exclusive():
                        self._adopt_locked()
                    continue
                except lmdb.Error as e:
                    raise map_error(e, action, self.path) from e
                try:
                    result = fn(txn)
                    txn.commit()
                except lmdb.MapFullError:
                    with self._remap.exclusive():
                        txn.abort()  # nothing to do when the commit itself failed
                        self._grow_locked(owner, max_map_size)
                    continue
                except BaseException as e:
                    with self._remap.exclusive():
                        txn.abort()
                    if isinstance(e, lmdb.Error):
                        raise map_error(e, action, self.path) from e
                    raise
                break
        if durable and self.fsync != "always":
            self.sync(action)
        return result

    def sync(self, action: str = "Flushing to disk") -> None:
        """Forces everything committed so far onto the disk (one fdatasync).

        Raises:
            LmdbError: (or LmdbDiskFullError) when the flush fails.
        """
        lmdb = _lmdb()
        self._remap.acquire_shared()
        try:
            self.env.sync(True)
        except lmdb.Error as e:
            raise map_error(e, action, self.path) from e
        finally:
            self._remap.release_shared()

    # --- map size ------------------------------------------------------------------

    def _grow_locked(self, owner: str, max_map_size: int) -> None:
        """Doubles the map, at most to `max_map_size` (caller holds the write and exclusive locks).

        Raises:
            LmdbMapFullError: when the map is at `max_map_size` already.
        """
        lmdb = _lmdb()
        current = self.env.info()["map_size"]
        if current >= max_map_size:
            msg = f"LMDB map is full (map_size={current}). Pass a larger max_map_size to {owner}(...)."
            raise LmdbMapFullError(msg, path=self.path)
        page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
        new = min(max(current * 2, page), max_map_size)
        new -= new % page
        try:
            self.env.set_mapsize(max(new, current + page))
        except lmdb.Error as e:
            raise map_error(e, "Growing the map", self.path) from e

    def _adopt_locked(self) -> None:
        """Another process grew the map: take over its size (caller holds the exclusive lock)."""
        lmdb = _lmdb()
        try:
            self.env.set_mapsize(0)
        except lmdb.Error as e:
            raise map_error(e, "Adopting the map size another process set", self.path) from e


# --- the registry ---------------------------------------------------------------------


class EnvironmentRegistry:
    """The environments lgembed has open in this process, by real path, with reference counts.

    This is lgembed's one process-wide registry (docs/STYLE.md §H, "implicit LMDB
    ownership"). It exists because LMDB forbids a second open of the same environment
    in one process: `LmdbSaver(path)`, `LmdbStore(path)` and `LmdbStore(env=saver.env)`
    all end up in `acquire`, which returns the one `SharedEnv` of that directory,
    opening it on first use and counting users. `release` closes an environment
    lgembed opened when its last user releases it; an environment passed in by the
    caller is never closed here (the caller owns it).

    The registry shares, it does not cache: nothing stays open once every saver and
    store of a path is closed, and `open_paths()` shows what is open.

    LMDB environments must not be used across `fork()`: open savers and stores in
    the process that uses them (multiprocessing: the "spawn" or "forkserver" start
    method, or open them in the worker).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, SharedEnv] = {}

    def open_paths(self) -> dict[str, int]:
        """Real path -> number of users, for every environment in the registry."""
        with self._lock:
            return {path: entry.refs for path, entry in self._entries.items()}

    def acquire(
        self,
        path: str | os.PathLike | None = None,
        *,
        env: Any = None,
        owner: str,
        fsync: str | None = None,
        map_size: int = DEFAULT_MAP_SIZE,
    ) -> SharedEnv:
        """The shared environment of a directory (opened if needed) or of a caller's Environment.

        Args:
            path: the environment directory (created if missing).
            env: an open `lmdb.Environment` the caller owns (instead of `path`).
            owner: class name of the user, for messages.
            fsync: the fsync policy wanted; None accepts whatever is in force
                ("deferred" for an environment opened here).
            map_size: initial map size when the environment is opened here.

        Raises:
            ValueError: for a wrong combination of arguments, an unknown fsync policy,
                or a policy that differs from the one of the already open environment.
            LmdbError: when the environment cannot be opened, or the caller's
                Environment is not the one already open for that path.
        """
        if fsync is not None and fsync not in FSYNC_POLICIES:
            msg = f"'fsync' must be one of {FSYNC_POLICIES} (got {fsync!r})"
            raise ValueError(msg)
        if (path is None) == (env is None):
            msg = f"{owner}() needs exactly one of a path or env= (got path={path!r}, env={env!r})"
            raise ValueError(msg)
        if env is not None:
            return self._acquire_env(env, owner=owner, fsync=fsync)
        lmdb = _lmdb()
        raw = os.fspath(path)  # type: ignore[arg-type]
        if isinstance(raw, bytes):
            raw = os.fsdecode(raw)
        if os.path.exists(raw) and not os.path.isdir(raw):
            msg = f"Opening LMDB environment {raw!r} for {owner}: not a directory (pass a directory path)"
            raise LmdbError(msg, path=raw, errno=_errno.ENOTDIR)
        with self._lock:
            try:
                os.makedirs(raw, mode=0o700, exist_ok=True)
            except OSError as e:
                msg = f"Creating the LMDB environment directory {raw!r} for {owner}: {e.strerror}"
                raise LmdbError(msg, path=raw, errno=e.errno) from e
            key = os.path.realpath(raw)
            entry = self._entries.get(key)
            if entry is None:
                flags = _ENV_FLAGS[fsync or "deferred"]
                attempts = 0
                while True:
                    try:
                        handle = lmdb.open(
                            key,
                            map_size=map_size,
                            max_dbs=MAX_DBS,
                            subdir=True,
                            lock=True,
                            mode=0o600,
                            **flags,
                        )
                        break
                    except lmdb.MapResizedError as e:
                        # another process grew the map while this one opened it: open again
                        attempts += 1
                        if attempts >= 5:
                            raise map_error(e, f"Opening for {owner}", key) from e
                    except lmdb.Error as e:
                        raise map_error(e, f"Opening for {owner}", key) from e
                entry = self._entries[key] = SharedEnv(handle, key, owned=True)
            _check_policy(entry, fsync, owner)
            entry.refs += 1
            return entry

    def _acquire_env(self, env: Any, *, owner: str, fsync: str | None) -> SharedEnv:
        lmdb = _lmdb()
        if not isinstance(env, lmdb.Environment):
            msg = f"{owner}(env=...) must be an lmdb.Environment (got {type(env).__name__})"
            raise TypeError(msg)
        try:
            key = os.path.realpath(env.path())
        except lmdb.Error as e:
            raise map_error(e, f"Using the Environment passed to {owner}", "?") from e
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                entry = self._entries[key] = SharedEnv(env, key, owned=False)
            elif entry.env is not env:
                msg = (
                    f"{owner}(env=...): LMDB environment {key!r} is already open in this process "
                    "through another lmdb.Environment; opening it twice is a serious error in LMDB. "
                    "Pass the environment that is open already (saver.env / store.env)."
                )
                raise LmdbError(msg, path=key)
            _check_policy(entry, fsync, owner)
            entry.refs += 1
            return entry

    def retain(self, entry: SharedEnv) -> SharedEnv:
        """One more user of an environment already acquired (for copies of a saver)."""
        with self._lock:
            entry.refs += 1
            return entry

    def release(self, entry: SharedEnv) -> None:
        """One user fewer; the last release of an environment lgembed opened flushes and closes it.

        Raises:
            LmdbError: when the final flush fails (the environment is closed anyway).
        """
        with self._lock:
            entry.refs -= 1
            if entry.refs > 0:
                return
            if self._entries.get(entry.path) is entry:
                del self._entries[entry.path]
            if not entry.owned:
                return
            try:
                if entry.fsync != "always":
                    entry.sync("Flushing before close")
            finally:
                entry.env.close()


def _check_policy(entry: SharedEnv, fsync: str | None, owner: str) -> None:
    if fsync is not None and fsync != entry.fsync:
        msg = (
            f"{owner}(fsync={fsync!r}): LMDB environment {entry.path!r} is already open in "
            f"this process with fsync={entry.fsync!r}; use the same policy (or omit fsync)."
        )
        raise ValueError(msg)


ENVIRONMENTS = EnvironmentRegistry()
"""The process-wide registry of open environments (see `EnvironmentRegistry`)."""


class EnvUser:
    """Lifecycle shared by LmdbSaver and LmdbStore: each is one user of a SharedEnv.

    Subclasses set `_shared` (from `ENVIRONMENTS.acquire`) and `_closed = False`.
    """

    _shared: SharedEnv
    _closed: bool

    def _attach(
        self,
        path: Any,
        *,
        env: Any,
        fsync: Any,
        map_size: int,
        kind: str,
        version: int,
        names: tuple,
        readable: tuple = (),
    ) -> list:
        """Acquires the environment, checks the data format of `kind`, opens the named
        databases; returns their handles. Releases the environment again on failure."""
        owner = type(self).__name__
        self._closed = False
        self._shared = ENVIRONMENTS.acquire(path, env=env, owner=owner, fsync=fsync, map_size=map_size)
        try:
            self._shared.check_format(kind, version, owner, readable)
            return [self._shared.db(name, owner) for name in names]
        except BaseException:
            ENVIRONMENTS.release(self._shared)
            raise

    @classmethod
    @contextlib.contextmanager
    def from_conn_string(cls, path: str | os.PathLike, **kwargs: Any) -> Iterator[Any]:
        """An instance over the environment at `path` (created if missing), closed when
        the block ends; `kwargs` are the class's keyword options.

        Raises:
            As the class's constructor.
        """
        user = cls(path, **kwargs)
        try:
            yield user
        finally:
            user.close()

    @property
    def env(self) -> Any:
        """The `lmdb.Environment` (pass it to `LmdbSaver(env=...)` / `LmdbStore(env=...)` to share it)."""
        return self._shared.env

    @property
    def path(self) -> str:
        """Real path of the environment directory."""
        return self._shared.path

    def sync(self) -> None:
        """Forces everything committed so far onto the disk (one fdatasync).

        Raises:
            LmdbError: when the flush fails (LmdbDiskFullError when the disk is full).
        """
        self._shared.sync(f"{type(self).__name__}.sync()")

    def close(self) -> None:
        """Releases the environment; the last user of an environment opened here flushes
        and closes it. Closing twice does nothing; an environment passed in by the caller
        stays open.

        Raises:
            LmdbError: when the final flush fails.
        """
        if self._closed:
            return
        self._closed = True
        ENVIRONMENTS.release(self._shared)

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
