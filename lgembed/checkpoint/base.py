"""The checkpoint saver port: LangGraph's `BaseCheckpointSaver` API and data shapes.

Why this module exists: the engine talks to persistence only through this class, so
a saver written for it (InMemorySaver, LmdbSaver, a user's own) is interchangeable,
and engine code written against LangGraph's saver API (`langgraph.checkpoint.base`)
works unchanged. Method names, signatures, defaults and tuple shapes are LangGraph
1.2's (docs/BEHAVIOUR.md §9, P-0 .. P-13). Differences, all deliberate:

- the async twins (`aget_tuple`, `alist`, `aput`, ...) default to running the sync
  method in the calling thread (LangGraph's base raises NotImplementedError); savers
  whose sync methods block for long should override them;
- `empty_checkpoint`, `create_checkpoint` and `copy_checkpoint` are the v4 helpers
  the LangGraph 1.2 engine uses (`langgraph.pregel._checkpoint`), not the deprecated
  v2 ones of `langgraph.checkpoint.base` (those add `pending_sends`);
- the default serializer is `lgembed.checkpoint.serde.MsgpackSerializer`.

Importing this module loads neither msgpack nor lmdb nor asyncio.
"""

from __future__ import annotations

import copy as _copy
from typing import (
    Any,
    AsyncIterator,
    Dict,
    Generic,
    Iterator,
    Literal,
    Mapping,
    NamedTuple,
    Sequence,
    TypedDict,
    TypeVar,
)

from lgembed._constants import EXCLUDED_METADATA_KEYS  # config keys never copied into metadata (P-2)
from lgembed._typing import MISSING
from lgembed.checkpoint.serde import (
    MsgpackSerializer,
    SerializerProtocol,
    maybe_add_typed_methods,
)
from lgembed.errors import EmptyChannelError

__all__ = (
    "EXCLUDED_METADATA_KEYS",
    "LATEST_VERSION",
    "WRITES_IDX_MAP",
    "BaseCheckpointSaver",
    "ChannelVersions",
    "Checkpoint",
    "CheckpointMetadata",
    "CheckpointTuple",
    "DeltaChannelHistory",
    "EmptyChannelError",
    "PendingWrite",
    "RunnableConfig",
    "SerializerProtocol",
    "V",
    "copy_checkpoint",
    "create_checkpoint",
    "empty_checkpoint",
    "get_checkpoint_id",
    "get_checkpoint_metadata",
    "get_serializable_checkpoint_metadata",
    "writes_sort_key",
)

V = TypeVar("V", int, float, str)
"""Type of channel versions: int for the base saver, str for InMemorySaver."""
RunnableConfig = Dict[str, Any]
"""A run config (LangGraph's RunnableConfig shape, P-0): `{"configurable": {...}, ...}`."""
ChannelVersions = Dict[str, Any]
"""Channel name -> version (str, int or float; increasing per channel)."""
PendingWrite = tuple  # tuple[str, str, Any]
"""`(task_id, channel, value)` as returned in `CheckpointTuple.pending_writes` (P-5)."""

LATEST_VERSION = 2
# `v` of the checkpoints `empty_checkpoint`/`create_checkpoint` of this module make, as
# langgraph.checkpoint.base's (the engine itself writes v4 checkpoints, P-1)

ERROR = "__error__"
SCHEDULED = "__scheduled__"
INTERRUPT = "__interrupt__"
RESUME = "__resume__"
WRITES_IDX_MAP = {ERROR: -1, SCHEDULED: -2, INTERRUPT: -3, RESUME: -4}
"""Fixed write index of the special channels (P-5).

Regular writes are indexed by their position in the `put_writes` call; these
channels use a negative index instead, so they never collide with a regular write
and a task's later error/interrupt/resume overwrites its earlier one.
"""



class CheckpointMetadata(TypedDict, total=False):
    """Metadata saved with a checkpoint (P-2); user config values are merged in by the saver."""

    source: Literal["input", "loop", "update", "fork"]
    """What made the checkpoint: graph input, a loop step, update_state, or a fork (copy)."""
    step: int
    """-1 for the first input checkpoint, 0 for the first loop checkpoint, then 1, 2, ... (P-3)."""
    parents: Dict[str, str]
    """Checkpoint ids of the enclosing graphs, by checkpoint namespace."""
    run_id: str
    """Id of the run that created the checkpoint."""


class Checkpoint(TypedDict):
    """A snapshot of a graph's channels at the start of a step (P-1)."""

    v: int
    """Format version (4 in the engine's checkpoints, 2 from `empty_checkpoint`)."""
    id: str
    """A uuid6 string; unique and increasing, so ids sort in creation order."""
    ts: str
    """Creation time, UTC ISO 8601."""
    channel_values: Dict[str, Any]
    """Checkpointed value of every channel that has a version and a value."""
    channel_versions: ChannelVersions
    """Current version of every channel ever written."""
    versions_seen: Dict[str, ChannelVersions]
    """Node name -> the channel versions it has seen (decides which nodes run next)."""
    updated_channels: list | None
    """Sorted names of the channels the step that produced this checkpoint updated, or None."""
    pending_sends: list
    """Only in v2 checkpoints (`empty_checkpoint`, `create_checkpoint`): always empty."""


class CheckpointTuple(NamedTuple):
    """A checkpoint with its config, metadata, parent and pending writes (P-4)."""

    config: RunnableConfig
    checkpoint: Checkpoint
    metadata: CheckpointMetadata
    parent_config: RunnableConfig | None = None
    pending_writes: list | None = None


class _DeltaChannelHistoryBase(TypedDict):
    writes: list


class DeltaChannelHistory(_DeltaChannelHistoryBase, total=False):
    """What one channel contributed along a checkpoint's ancestor chain.

    `writes`: that channel's pending writes, oldest first; `seed`: the stored value at
    the nearest ancestor that has one (absent when no ancestor has one).
    """

    seed: Any


def writes_sort_key(task_path: str, task_id: str = "", idx: int = 0) -> tuple[str, str, int]:
    """The order in which a step's stored writes are returned and applied (P-5).

    Writes without a task path (graph input, update_state, Command) sort first.
    """
    return (task_path, task_id, idx)


def get_checkpoint_id(config: RunnableConfig) -> str | None:
    """`config["configurable"]["checkpoint_id"]`, or None."""
    return config["configurable"].get("checkpoint_id")


def get_checkpoint_metadata(config: RunnableConfig, metadata: CheckpointMetadata) -> CheckpointMetadata:
    """`metadata` plus the user values of `config` that belong in checkpoint metadata (P-2).

    From `config["metadata"]`, then `config["configurable"]`: every str/int/float/bool
    value whose key is not already in `metadata`, does not start with `__` and is not
    in `EXCLUDED_METADATA_KEYS`. NUL characters are stripped from str values (also
    those already in `metadata`).
    """
    out: dict[str, Any] = dict(metadata)
    for k, v in metadata.items():
        if isinstance(v, str) and (type(v) is not str or "\x00" in v):
            out[k] = v.replace("\x00", "")  # (a str subclass comes out as a str, as from replace)
    for source in (config.get("metadata"), config.get("configurable")):
        if not source:
            continue
        for key, value in source.items():
            if key in out or key in EXCLUDED_METADATA_KEYS or key.startswith("__"):
                continue
            if isinstance(value, str):
                out[key] = value.replace("\x00", "")
            elif isinstance(value, (int, float, bool)):
                out[key] = value
    return out  # type: ignore[return-value]


def get_serializable_checkpoint_metadata(
    config: RunnableConfig, metadata: CheckpointMetadata
) -> CheckpointMetadata:
    """`get_checkpoint_metadata` without the legacy `writes` key."""
    out = get_checkpoint_metadata(config, metadata)
    out.pop("writes", None)  # type: ignore[misc]
    return out


def _now_iso() -> str:
    from lgembed.checkpoint._id import now_iso

    return now_iso()


def empty_checkpoint() -> Checkpoint:
    """A checkpoint with no channels (v2 with `pending_sends`, id with clock sequence -2),
    as langgraph.checkpoint.base's `empty_checkpoint`."""
    from lgembed.checkpoint._id import uuid6

    return Checkpoint(  # type: ignore[typeddict-item]
        v=LATEST_VERSION,
        id=str(uuid6(clock_seq=-2)),
        ts=_now_iso(),
        channel_values={},
        channel_versions={},
        versions_seen={},
        pending_sends=[],
        updated_channels=None,
    )


def create_checkpoint(
    checkpoint: Checkpoint,
    channels: Mapping[str, Any] | None,
    step: int,
    *,
    id: str | None = None,
    updated_channels: Sequence[str] | set[str] | None = None,
) -> Checkpoint:
    """A new checkpoint for `step` from the previous one and the live channels (P-1).

    `channel_values` holds `channel.checkpoint()` of every channel that has a version,
    leaving out channels that are empty (MISSING, or raising EmptyChannelError). With
    `channels=None` the previous checkpoint's values are reused. The id is a new
    uuid6 whose clock sequence is `step`, unless `id` is given.
    """
    from lgembed.checkpoint._id import uuid6

    if channels is None:
        values = checkpoint["channel_values"]
        versions = checkpoint["channel_versions"]
    else:
        values = {}
        versions = dict(checkpoint["channel_versions"])
        for name, channel in channels.items():
            if name not in versions:
                continue
            try:
                value = channel.checkpoint()
            except EmptyChannelError:
                continue
            if value is not MISSING:
                values[name] = value
    return Checkpoint(
        v=LATEST_VERSION,
        ts=_now_iso(),
        id=id or str(uuid6(clock_seq=step)),
        channel_values=values,
        channel_versions=versions,
        versions_seen=checkpoint["versions_seen"],
        pending_sends=checkpoint.get("pending_sends", []),
        updated_channels=None if updated_channels is None else sorted(updated_channels),
    )


def copy_checkpoint(checkpoint: Checkpoint) -> Checkpoint:
    """A copy whose value/version maps can be changed without touching `checkpoint`."""
    return Checkpoint(
        v=checkpoint["v"],
        ts=checkpoint["ts"],
        id=checkpoint["id"],
        channel_values=checkpoint["channel_values"].copy(),
        channel_versions=checkpoint["channel_versions"].copy(),
        versions_seen={k: v.copy() for k, v in checkpoint["versions_seen"].items()},
        updated_channels=checkpoint.get("updated_channels", None),
    )


class BaseCheckpointSaver(Generic[V]):
    """Base class of checkpoint savers (P-10 .. P-13).

    A saver stores checkpoints per `(thread_id, checkpoint_ns)`, the pending writes of
    the tasks that ran from each checkpoint, and serializes values through `serde`.
    Subclasses implement `get_tuple`, `list`, `put`, `put_writes` and, where they can,
    `delete_thread`, `copy_thread`, `prune`. Every `a*` method defaults to calling its
    sync twin.

    Args:
        serde: the serializer of checkpoint values; a `MsgpackSerializer()` by default.
            An object with only `dumps`/`loads` is wrapped.
    """

    serde: SerializerProtocol = MsgpackSerializer()
    # class default: the instance attribute set by __init__ replaces it

    def __init__(self, *, serde: SerializerProtocol | None = None) -> None:
        self.serde = maybe_add_typed_methods(serde or self.serde)

    @property
    def config_specs(self) -> list:
        """Configuration options of the saver (none)."""
        return []

    # --- read ---------------------------------------------------------------------

    def get(self, config: RunnableConfig) -> Checkpoint | None:
        """The checkpoint `config` addresses (or the latest of its thread), or None (P-10)."""
        value = self.get_tuple(config)
        return value.checkpoint if value else None

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint tuple `config` addresses, or the latest of its thread and namespace (P-10).

        Its `pending_writes` are in `writes_sort_key` order.

        Raises:
            NotImplementedError: unless the saver implements it.
        """
        raise NotImplementedError

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Checkpoint tuples, newest first (P-11).

        Args:
            config: restricts to its thread (and namespace and checkpoint id, when
                given); None lists every thread.
            filter: metadata keys and the values they must equal.
            before: only checkpoints whose id is smaller than this config's.
            limit: at most this many tuples.

        Raises:
            NotImplementedError: unless the saver implements it.
        """
        raise NotImplementedError

    # --- write --------------------------------------------------------------------

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Stores `checkpoint` as the child of `config`'s checkpoint id (P-12).

        Returns:
            `{"configurable": {"thread_id", "checkpoint_ns", "checkpoint_id"}}` of the stored checkpoint.

        Raises:
            NotImplementedError: unless the saver implements it.
        """
        raise NotImplementedError

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Stores a task's writes against the checkpoint `config` addresses (P-5).

        Raises:
            NotImplementedError: unless the saver implements it.
        """
        raise NotImplementedError

    # --- maintenance --------------------------------------------------------------

    def put_step(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
        task_writes: Sequence[tuple[str, Sequence[tuple[str, Any]], str]],
    ) -> RunnableConfig:
        """lgembed extension: `put_writes(config, writes, task_id, task_path)` for each
        entry of `task_writes`, then `put(config, checkpoint, metadata, new_versions)`.

        The engine calls this at the end of a superstep whose only task finished just
        before, so a saver can store both in one transaction (LmdbSaver does).
        """
        for task_id, writes, task_path in task_writes:
            self.put_writes(config, writes, task_id, task_path)
        return self.put(config, checkpoint, metadata, new_versions)

    def delete_thread(self, thread_id: str) -> None:
        """Deletes every checkpoint, write and value of `thread_id` (all namespaces).

        Raises:
            NotImplementedError: unless the saver implements it.
        """
        raise NotImplementedError

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Deletes the checkpoints and writes created by the given runs.

        Raises:
            NotImplementedError: unless the saver implements it.
        """
        raise NotImplementedError

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copies every checkpoint (same ids, all namespaces) and write of one thread to another.

        Checkpoints already on the target thread stay, unless a copied one has the
        same namespace and id. A missing source thread copies nothing.

        Raises:
            NotImplementedError: unless the saver implements it.
        """
        raise NotImplementedError

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Removes old checkpoints of the given threads.

        Args:
            thread_ids: threads to prune; unknown ids are ignored.
            strategy: `"keep_latest"` keeps only the newest checkpoint of each
                namespace (with its pending writes); `"delete"` removes everything.

        Raises:
            NotImplementedError: unless the saver implements it.
        """
        raise NotImplementedError

    def get_next_version(self, current: V | None, channel: None) -> V:
        """The version after `current` (None -> 1); ints by default.

        Args:
            current: the channel's current version, or None.
            channel: unused (kept for LangGraph compatibility).

        Raises:
            NotImplementedError: for str versions; savers using them override this.
        """
        if isinstance(current, str):
            raise NotImplementedError
        if current is None:
            return 1  # type: ignore[return-value]
        return current + 1  # type: ignore[return-value,operator]

    def get_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Per channel: its writes along the parent chain of `config`'s checkpoint, and the nearest stored value.

        Walks `parent_config` links (so only the ancestors of this branch count),
        collecting each channel's pending writes until an ancestor stores a value for
        it (the `seed`). Writes stored under the target checkpoint itself are not included.
        """
        if not channels:
            return {}
        collected: dict[str, list] = {c: [] for c in channels}
        seeds: dict[str, Any] = {}
        remaining = set(channels)
        target = self.get_tuple(config)
        cursor = target.parent_config if target else None
        while cursor is not None and remaining:
            tup = self.get_tuple(cursor)
            if tup is None:
                break
            for write in reversed(tup.pending_writes or ()):
                if write[1] in remaining:
                    collected[write[1]].append(write)
            values = tup.checkpoint["channel_values"]
            for ch in [c for c in remaining if c in values]:
                seeds[ch] = values[ch]
                remaining.discard(ch)
            cursor = tup.parent_config
        out: dict[str, DeltaChannelHistory] = {}
        for ch in channels:
            entry: DeltaChannelHistory = {"writes": collected[ch][::-1]}
            if ch in seeds:
                entry["seed"] = seeds[ch]
            out[ch] = entry
        return out

    def with_allowlist(self, extra_allowlist: Sequence[Any]) -> BaseCheckpointSaver[V]:
        """A shallow clone whose serializer also allows `extra_allowlist` (classes or `(module, name)`).

        Returns this saver when its serializer has no allow-list or already allows all of them.
        """
        method = getattr(self.serde, "with_msgpack_allowlist", None)
        if method is None:
            return self
        serde = method(extra_allowlist)
        if serde is self.serde:
            return self
        clone = _copy.copy(self)
        clone.serde = serde
        return clone

    # --- async twins: run the sync method ------------------------------------------

    async def aget(self, config: RunnableConfig) -> Checkpoint | None:
        """Async `get`."""
        value = await self.aget_tuple(config)
        return value.checkpoint if value else None

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """Async `get_tuple` (runs the sync method)."""
        return self.get_tuple(config)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        """Async `list` (iterates the sync method)."""
        for item in self.list(config, filter=filter, before=before, limit=limit):
            yield item

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Async `put` (runs the sync method)."""
        return self.put(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Async `put_writes` (runs the sync method)."""
        return self.put_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        """Async `delete_thread` (runs the sync method)."""
        return self.delete_thread(thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        """Async `delete_for_runs` (runs the sync method)."""
        return self.delete_for_runs(run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Async `copy_thread` (runs the sync method)."""
        return self.copy_thread(source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Async `prune` (runs the sync method)."""
        return self.prune(thread_ids, strategy=strategy)

    async def aget_delta_channel_history(
        self, *, config: RunnableConfig, channels: Sequence[str]
    ) -> Mapping[str, DeltaChannelHistory]:
        """Async `get_delta_channel_history` (runs the sync method)."""
        return self.get_delta_channel_history(config=config, channels=channels)
