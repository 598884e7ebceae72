"""InMemorySaver: checkpoints in process memory, with LangGraph's storage semantics.

Why this module exists: tests, examples and short-lived runs need a saver without a
database, and its observable behaviour must be LangGraph's `InMemorySaver` (P-5,
P-10 .. P-13, L-49) so programs and tests move between the two unchanged:

- values are stored serialized through `serde` (so a tuple comes back as a list);
- a channel value is stored once per `(thread, ns, channel, version)`, only for the
  channels in `new_versions`; a checkpoint's `channel_values` are rebuilt from its
  `channel_versions` (a channel in `new_versions` without a value is stored as
  "empty" and left out);
- pending writes are keyed `(task_id, idx)` per `(thread, ns, checkpoint_id)`:
  re-putting a regular write is a no-op, the special channels (`WRITES_IDX_MAP`)
  overwrite; they are returned ordered by `(task_path, task_id, idx)`;
- versions are strings `f"{n:032}.{random.random():016}"`.

Additions: a lock makes every method safe to call from several threads (listing
releases it between the tuples it yields), and `copy_thread` / `prune` are
implemented (LangGraph's InMemorySaver raises NotImplementedError for both).
"""

from __future__ import annotations

import random
import threading
from typing import Any, Iterator, Sequence

from lgembed.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    RunnableConfig,
    SerializerProtocol,
    get_checkpoint_id,
    get_checkpoint_metadata,
    writes_sort_key,
)

__all__ = ("InMemorySaver", "MemorySaver")

_PRUNE_STRATEGIES = ("keep_latest", "delete")


def _config(thread_id: str, checkpoint_ns: str, checkpoint_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns, "checkpoint_id": checkpoint_id}}


class InMemorySaver(BaseCheckpointSaver[str]):
    """A checkpoint saver that keeps everything in dicts (lost when the process ends).

    Usable as a (async) context manager, like LangGraph's.

    Args:
        serde: serializer of checkpoints, metadata, values and writes
            (`MsgpackSerializer()` by default).

    Attributes:
        storage: `thread_id -> checkpoint_ns -> checkpoint_id -> (checkpoint, metadata,
            parent_checkpoint_id)`, the first two serialized `(tag, bytes)` pairs.
        writes: `(thread_id, checkpoint_ns, checkpoint_id) -> (task_id, idx) ->
            (task_id, channel, serialized value, task_path)`.
        blobs: `(thread_id, checkpoint_ns, channel, version) -> serialized value`.
    """

    _lg_serializes_on_put = True
    # put() serializes the checkpoint before returning: the engine may pass live dicts

    def __init__(self, *, serde: SerializerProtocol | None = None) -> None:
        super().__init__(serde=serde)
        self.storage: dict[str, dict[str, dict[str, tuple[tuple[str, bytes], tuple[str, bytes], str | None]]]] = {}
        self.writes: dict[tuple[str, str, str], dict[tuple[str, int], tuple[str, str, tuple[str, bytes], str]]]
        self.writes = {}
        self.blobs: dict[tuple[str, str, str, Any], tuple[str, bytes]] = {}
        self._lock = threading.RLock()

    def __enter__(self) -> InMemorySaver:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        return None

    async def __aenter__(self) -> InMemorySaver:
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        return None

    # --- loading helpers (call with the lock held) -----------------------------------

    def _load_blobs(self, thread_id: str, checkpoint_ns: str, versions: ChannelVersions) -> dict[str, Any]:
        values: dict[str, Any] = {}
        for channel, version in versions.items():
            blob = self.blobs.get((thread_id, checkpoint_ns, channel, version))
            if blob is None or blob[0] == "empty":
                continue
            values[channel] = self.serde.loads_typed(blob)
        return values

    def _load_writes(self, thread_id: str, checkpoint_ns: str, checkpoint_id: str) -> list[tuple[str, str, Any]]:
        stored = self.writes.get((thread_id, checkpoint_ns, checkpoint_id), {})
        ordered = sorted(stored.items(), key=lambda item: writes_sort_key(item[1][3], *item[0]))
        return [(task_id, channel, self.serde.loads_typed(value)) for _, (task_id, channel, value, _) in ordered]

    def _make_tuple(
        self,
        config: RunnableConfig,
        thread_id: str,
        checkpoint_ns: str,
        checkpoint_id: str,
        saved: tuple[tuple[str, bytes], tuple[str, bytes], str | None],
        metadata: CheckpointMetadata | None = None,
    ) -> CheckpointTuple:
        checkpoint_b, metadata_b, parent_id = saved
        checkpoint: dict[str, Any] = self.serde.loads_typed(checkpoint_b)
        return CheckpointTuple(
            config=config,
            checkpoint={  # type: ignore[typeddict-item]
                **checkpoint,
                "channel_values": self._load_blobs(thread_id, checkpoint_ns, checkpoint["channel_versions"]),
            },
            metadata=self.serde.loads_typed(metadata_b) if metadata is None else metadata,
            parent_config=_config(thread_id, checkpoint_ns, parent_id) if parent_id else None,
            pending_writes=self._load_writes(thread_id, checkpoint_ns, checkpoint_id),
        )

    # --- read ---------------------------------------------------------------------

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        """The checkpoint `config` addresses, or the latest of its thread and namespace (P-10).

        With a `checkpoint_id` the returned tuple's `config` is `config` itself (as in
        LangGraph); otherwise a new config naming the latest checkpoint.

        Raises:
            KeyError: when `config["configurable"]` has no `thread_id`.
        """
        thread_id: str = config["configurable"]["thread_id"]
        checkpoint_ns: str = config["configurable"].get("checkpoint_ns", "")
        with self._lock:
            checkpoints = self.storage.get(thread_id, {}).get(checkpoint_ns, {})
            checkpoint_id = get_checkpoint_id(config)
            if checkpoint_id:
                saved = checkpoints.get(checkpoint_id)
                if saved is None:
                    return None
                return self._make_tuple(config, thread_id, checkpoint_ns, checkpoint_id, saved)
            if not checkpoints:
                return None
            checkpoint_id = max(checkpoints)
            own_config = _config(thread_id, checkpoint_ns, checkpoint_id)
            return self._make_tuple(own_config, thread_id, checkpoint_ns, checkpoint_id, checkpoints[checkpoint_id])

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        """Checkpoint tuples, newest first within each thread and namespace (P-11).

        Args:
            config: its `thread_id` (required), `checkpoint_ns` (all namespaces when
                absent) and `checkpoint_id` (that one only, when given) restrict the
                listing; None lists every thread, in the order threads were first written.
            filter: metadata keys whose values must equal these (a missing key equals None).
            before: only checkpoints whose id is smaller than this config's `checkpoint_id`.
            limit: at most this many tuples (0 or less: none).
        """
        configurable = config["configurable"] if config else {}
        ns_filter = configurable.get("checkpoint_ns") if config else None
        id_filter = get_checkpoint_id(config) if config else None
        before_id = get_checkpoint_id(before) if before else None
        with self._lock:
            thread_ids = [configurable["thread_id"]] if config else [*self.storage]
            candidates = [
                (thread_id, ns, checkpoint_id)
                for thread_id in thread_ids
                for ns, checkpoints in self.storage.get(thread_id, {}).items()
                if ns_filter is None or ns == ns_filter
                for checkpoint_id in sorted(checkpoints, reverse=True)
                if (not id_filter or checkpoint_id == id_filter) and (not before_id or checkpoint_id < before_id)
            ]
        remaining = limit
        for thread_id, ns, checkpoint_id in candidates:
            if remaining is not None and remaining <= 0:
                return
            # Strategy: the lock is held while one tuple is built, never across a yield
            with self._lock:
                saved = self.storage.get(thread_id, {}).get(ns, {}).get(checkpoint_id)
                if saved is None:
                    continue  # deleted since the listing started
                metadata = self.serde.loads_typed(saved[1])
                if filter and not all(metadata.get(k) == v for k, v in filter.items()):
                    continue
                own_config = _config(thread_id, ns, checkpoint_id)
                item = self._make_tuple(own_config, thread_id, ns, checkpoint_id, saved, metadata)
            if remaining is not None:
                remaining -= 1
            yield item

    # --- write --------------------------------------------------------------------

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        """Stores `checkpoint`; its parent is `config`'s `checkpoint_id` (P-12, P-13).

        Only the channels in `new_versions` get a stored value; metadata is merged with
        the config's user values (`get_checkpoint_metadata`).

        Returns:
            The config of the stored checkpoint.

        Raises:
            KeyError: when `config["configurable"]` has no `thread_id`.
            TypeError: when a value cannot be serialized (nothing is stored then).
        """
        thread_id = config["configurable"]["thread_id"]
        checkpoint_ns = config["configurable"].get("checkpoint_ns", "")
        rest = dict(checkpoint)
        values: dict[str, Any] = rest.pop("channel_values")
        # serialize everything first, so a bad value stores nothing
        blobs = {
            (thread_id, checkpoint_ns, channel, version): (
                self.serde.dumps_typed(values[channel]) if channel in values else ("empty", b"")
            )
            for channel, version in new_versions.items()
        }
        saved = (
            self.serde.dumps_typed(rest),
            self.serde.dumps_typed(get_checkpoint_metadata(config, metadata)),
            config["configurable"].get("checkpoint_id"),
        )
        with self._lock:
            self.blobs.update(blobs)
            self.storage.setdefault(thread_id, {}).setdefault(checkpoint_ns, {})[checkpoint["id"]] = saved
        return _config(thread_id, checkpoint_ns, checkpoint["id"])

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        """Stores a task's writes against `config`'s checkpoint (P-5).

        A regular write is keyed by its position in `writes` and kept if already
        stored; `__error__`, `__scheduled__`, `__interrupt__` and `__resume__` have a
        fixed negative index and replace the task's previous one.

        Raises:
            KeyError: when `config["configurable"]` has no `thread_id` or `checkpoint_id`.
            TypeError: when a value cannot be serialized (nothing is stored then).
        """
        thread_id = config["configurable"]["thread_id"]
        checkpoint_ns = config["configurable"].get("checkpoint_ns", "")
        checkpoint_id = config["configurable"]["checkpoint_id"]
        outer_key = (thread_id, checkpoint_ns, checkpoint_id)
        keyed = [
            ((task_id, WRITES_IDX_MAP.get(channel, idx)), channel, value) for idx, (channel, value) in enumerate(writes)
        ]
        with self._lock:
            stored = self.writes.get(outer_key, {})
            new = {
                inner_key: (task_id, channel, self.serde.dumps_typed(value), task_path)
                for inner_key, channel, value in keyed
                if inner_key[1] < 0 or inner_key not in stored
            }
            if new:
                self.writes.setdefault(outer_key, {}).update(new)

    # --- maintenance --------------------------------------------------------------

    def delete_thread(self, thread_id: str) -> None:
        """Deletes every checkpoint, write and stored value of `thread_id`."""
        with self._lock:
            self.storage.pop(thread_id, None)
            for key in [k for k in self.writes if k[0] == thread_id]:
                del self.writes[key]
            for key in [k for k in self.blobs if k[0] == thread_id]:
                del self.blobs[key]

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Copies every checkpoint (same ids, all namespaces), write and value to another thread.

        The target keeps its own checkpoints except those with a copied namespace and
        id. A missing source copies nothing. Stored metadata has no thread id, so
        copies are byte-identical.
        """
        with self._lock:
            source = self.storage.get(source_thread_id)
            if not source:
                return
            target = self.storage.setdefault(target_thread_id, {})
            for ns, checkpoints in source.items():
                target.setdefault(ns, {}).update(checkpoints)
            for (thread_id, ns, checkpoint_id), stored in list(self.writes.items()):
                if thread_id == source_thread_id:
                    self.writes[(target_thread_id, ns, checkpoint_id)] = dict(stored)
            for (thread_id, ns, channel, version), blob in list(self.blobs.items()):
                if thread_id == source_thread_id:
                    self.blobs[(target_thread_id, ns, channel, version)] = blob

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """Removes old checkpoints of `thread_ids` (unknown ids are ignored).

        `"keep_latest"` keeps the newest checkpoint of each namespace, its pending
        writes and the values it references (its `parent_config` then names a removed
        checkpoint); `"delete"` removes the threads entirely.

        Raises:
            ValueError: for another strategy.
        """
        if strategy not in _PRUNE_STRATEGIES:
            msg = f"'strategy' must be one of {_PRUNE_STRATEGIES} (got {strategy!r})"
            raise ValueError(msg)
        with self._lock:
            for thread_id in thread_ids:
                if strategy == "delete":
                    self.delete_thread(thread_id)
                    continue
                keep_blobs: set[tuple[str, str, str, Any]] = set()
                for ns, checkpoints in self.storage.get(thread_id, {}).items():
                    if not checkpoints:
                        continue
                    latest = max(checkpoints)
                    for checkpoint_id in [c for c in checkpoints if c != latest]:
                        del checkpoints[checkpoint_id]
                    versions = self.serde.loads_typed(checkpoints[latest][0])["channel_versions"]
                    keep_blobs.update((thread_id, ns, ch, v) for ch, v in versions.items())
                for key in [k for k in self.blobs if k[0] == thread_id and k not in keep_blobs]:
                    del self.blobs[key]
                kept = self.storage.get(thread_id, {})
                for key in [k for k in self.writes if k[0] == thread_id and k[2] not in kept.get(k[1], {})]:
                    del self.writes[key]  # writes of removed checkpoints

    def get_next_version(self, current: str | int | None, channel: None) -> str:
        """The version after `current`: `f"{n + 1:032}.{random.random():016}"` (L-49).

        The integer part orders versions; the random fraction makes concurrent
        branches' versions differ.
        """
        if current is None:
            current_v = 0
        elif isinstance(current, (int, float)):
            current_v = int(current)
        else:
            current_v = int(current.split(".")[0])
        return f"{current_v + 1:032}.{random.random():016}"


MemorySaver = InMemorySaver
"""Alias kept for LangGraph compatibility."""
