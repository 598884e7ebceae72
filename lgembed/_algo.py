"""Hot kernels of a superstep: applying a step's writes and finding the next step's PULL tasks.

Pure Python, compiled in place by the build (types in `lgembed/_algo.pxd`). Behaviour: docs/BEHAVIOUR.md
§5.3 and §5.5 (L-20…L-22, L-40…L-46).

Strategy: the engine keeps, besides the channel map, the set of channels that an
empty update could change (`live`: available ephemeral-like channels) and the list
of channels that react to `finish()`, so no step scans every channel.
"""

from __future__ import annotations


from lgembed._typing import MISSING

__all__ = ("apply_writes", "triggered_nodes", "node_triggered")


SKIP_WRITE_KEYS = frozenset(
    (
        "__no_writes__",
        "__pregel_push",
        "__resume__",
        "__interrupt__",
        "__return__",
        "__error__",
        "__error_source_node__",
    )
)
# control writes that never reach a channel (L-44)
_RESERVED_TRIGGERS = frozenset(("__pregel_push", "__interrupt__", "__resume__", "__error__", "__input__"))


def apply_writes(
    channels: dict,
    versions: dict,
    seen: dict,
    tasks: list,
    next_version: object,
    trigger_to_nodes: dict,
    live: set,
    finishing: list,
) -> set:
    """Applies the writes of `tasks` (already in task-path order) to `channels`.

    Args:
        channels: channel name -> channel (mutated).
        versions: channel name -> version (mutated: changed channels get `next_version`).
        seen: node name -> {channel: version seen} (mutated for each task's triggers).
        tasks: objects with `name`, `triggers` and `writes` (list of (channel, value)).
        next_version: the version given to every channel changed by this apply.
        trigger_to_nodes: channel name -> nodes it triggers.
        live: available channels an empty update may change (kept up to date).
        finishing: names of channels that react to `finish()`.

    Returns:
        The set of channels that changed and are available (L-44…L-46).

    Raises:
        InvalidUpdateError: from a channel rejecting its writes (C-1, C-4, C-7, C-8).
    """
    bump_step = False
    consumed = []
    for task in tasks:
        triggers = task.triggers
        if triggers:
            bump_step = True
            node_seen = seen.get(task.name)
            if node_seen is None:
                node_seen = seen[task.name] = {}
            for chan in triggers:
                v = versions.get(chan)
                if v is not None:
                    node_seen[chan] = v
                if chan not in consumed and chan not in _RESERVED_TRIGGERS:
                    consumed.append(chan)
    for chan in consumed:
        ch = channels.get(chan)
        if ch is not None and ch._lg_consumes and ch.consume():
            versions[chan] = next_version

    updated: set = set()
    if len(tasks) == 1 and _one_each(tasks[0].writes):
        # Strategy: one task writing each channel at most once (most steps) needs no
        # grouping; the same checks and updates, in the same order
        task = tasks[0]
        writes = task.writes
        for chan, _ in writes:
            if chan not in channels and chan not in SKIP_WRITE_KEYS:
                _warn_unknown(task, chan)
        for chan, val in writes:
            ch = channels.get(chan)
            if ch is None:
                continue
            kind = ch._lg_kind
            if not (kind and _store(ch, kind, chan, val, versions, next_version, updated, live)):
                _update(ch, chan, [val], versions, next_version, updated, live)
    else:
        grouped: dict = {}
        for task in tasks:
            for chan, val in task.writes:
                if chan in channels:
                    vals = grouped.get(chan)
                    if vals is None:
                        grouped[chan] = [val]
                    else:
                        vals.append(val)
                elif chan not in SKIP_WRITE_KEYS:
                    _warn_unknown(task, chan)
        for chan, vals in grouped.items():
            ch = channels[chan]
            kind = ch._lg_kind
            if not (kind and len(vals) == 1 and _store(ch, kind, chan, vals[0], versions, next_version, updated, live)):
                _update(ch, chan, vals, versions, next_version, updated, live)

    if bump_step:
        if live and not live <= updated:
            gone = None  # leaving `live`: removed after the loop (no copy of the set to iterate)
            for chan in live:
                if chan in updated:
                    continue
                ch = channels[chan]
                if ch._lg_kind == 2:
                    # an exact EphemeralValue: its update([]) inlined, it empties
                    if ch.value is not MISSING:
                        ch.value = MISSING
                        versions[chan] = next_version
                elif not ch.is_available():
                    pass
                elif ch.update(()):
                    versions[chan] = next_version
                    if ch.is_available():
                        updated.add(chan)
                        continue
                else:
                    continue
                if gone is None:
                    gone = [chan]
                else:
                    gone.append(chan)
            if gone is not None:
                for chan in gone:
                    live.discard(chan)
        # Why a loop: set.isdisjoint(dict) iterates the dict, every trigger channel
        for chan in updated:
            if chan in trigger_to_nodes:
                break
        else:
            for chan in finishing:
                ch = channels[chan]
                if ch.finish():
                    versions[chan] = next_version
                    if ch.is_available():
                        updated.add(chan)
                        if ch._lg_clears_on_empty:
                            live.add(chan)
    return updated


def _one_each(writes: list) -> bool:
    """Whether no channel appears twice in `writes` (one or two writes: no set built)."""
    n = len(writes)
    if n < 2:
        return True
    if n == 2:
        return writes[0][0] != writes[1][0]
    names = set()
    for chan, _ in writes:
        if chan in names:
            return False
        names.add(chan)
    return True


def _warn_unknown(task: object, chan: object) -> None:
    import logging  # on first use: `import lgembed.graph` loads this module, not logging

    logging.getLogger("lgembed.pregel").warning(
        f"Task {task.name} with path {task.path} wrote to unknown channel {chan}, ignoring it."
    )


def _store(
    ch: object, kind: int, chan: object, val: object, versions: dict, next_version: object, updated: set, live: set
) -> bool:
    """One write to an exact LastValue / EphemeralValue (`kind`, its `_lg_kind`): its
    update() and is_available() inlined (the value is stored, the channel is available).
    False, doing nothing, for MISSING (left to update())."""
    if val is MISSING:
        return False
    ch.value = val
    versions[chan] = next_version
    updated.add(chan)
    if kind == 2:  # EphemeralValue._lg_clears_on_empty
        live.add(chan)
    return True


def _update(ch: object, chan: object, vals: list, versions: dict, next_version: object, updated: set, live: set) -> None:
    """A channel's writes of a step through its update()."""
    if ch.update(vals):
        versions[chan] = next_version
        if ch.is_available():
            updated.add(chan)
            if ch._lg_clears_on_empty:
                live.add(chan)


def triggered_nodes(updated: set, trigger_to_nodes: dict) -> list:
    """Names of the nodes subscribed to any channel in `updated`, sorted (L-21)."""
    first = None
    found = None
    for chan in updated:
        nodes = trigger_to_nodes.get(chan)
        if nodes is None:
            continue
        if first is None:
            first = nodes
        else:
            # Strategy: a set only when two updated channels have subscribers
            if found is None:
                found = set(first)
            found.update(nodes)
    if found is not None:
        return sorted(found)
    if first is None:
        return []
    if len(first) == 1:
        return list(first)
    return sorted(first) if len(updated) == 1 else sorted(set(first))


def node_triggered(triggers: list, channels: dict, versions: dict, node_seen: object, null_version: object) -> bool:
    """Whether a node with these trigger channels runs in the next step (L-21)."""
    if node_seen is None:
        for chan in triggers:
            if _available(channels[chan]):
                return True
        return False
    for chan in triggers:
        if _available(channels[chan]):
            if versions.get(chan, null_version) > node_seen.get(chan, null_version):
                return True
    return False


def _available(ch: object) -> bool:
    """`ch.is_available()`, read from the `value` slot for the kinds that have one."""
    if ch._lg_kind:
        return ch.value is not MISSING
    return ch.is_available()
