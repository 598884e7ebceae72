"""Reading and editing a thread's state: get_state, history, update_state (§9.3-§9.5).

These functions are the bodies of the `Pregel` methods of the same names; they build
a checkpointed run object only to reuse its loading and task preparation.
"""

from __future__ import annotations

import uuid
from typing import Any, Iterator, Sequence

from lgembed._constants import (
    CONF,
    CONFIG_KEY_CHECKPOINT_ID,
    CONFIG_KEY_CHECKPOINT_MAP,
    CONFIG_KEY_CHECKPOINT_NS,
    CONFIG_KEY_CHECKPOINTER,
    END,
    INPUT,
    INTERRUPT,
    NULL_TASK_ID,
    PUSH,
)
from lgembed.errors import InvalidUpdateError
from lgembed.pregel._loop import _InputTask
from lgembed.pregel._persist import (
    CheckpointedRun,
    _path_str,
    read_task_statuses,
    tasks_with_writes,
)
from lgembed.pregel._subgraphs import node_subgraph
from lgembed.pregel._task import Task
from lgembed.types import StateSnapshot, StateUpdate


def state_saver(graph: Any, config: dict) -> Any:
    """The saver state methods use: none for `checkpointer=False`, else the one a parent
    lends a subgraph through the config, else the graph's own (G-6)."""
    saver = None
    if graph.checkpointer is not False:
        conf = config.get(CONF) or {}
        if CONFIG_KEY_CHECKPOINTER in conf:
            saver = conf[CONFIG_KEY_CHECKPOINTER]
        elif graph.checkpointer is True:
            raise RuntimeError("checkpointer=True cannot be used for root graphs.")
        else:
            saver = graph.checkpointer
    if not saver or saver is True:
        raise ValueError("No checkpointer set")
    return saver


def own_checkpoint_config(graph: Any, config: dict) -> dict:
    """A `checkpointer=True` subgraph keeps one history per thread, stored under its
    namespace without the task ids (numeric parts kept)."""
    if graph.checkpointer is not True:
        return config
    ns = config[CONF].get(CONFIG_KEY_CHECKPOINT_NS, "")
    own = "|".join(part.split(":")[0] for part in ns.split("|"))
    return {**config, CONF: {**config[CONF], CONFIG_KEY_CHECKPOINT_NS: own}}


def _recast_ns(ns: str) -> str:
    """A namespace without its task ids and numeric parts ("a:id|1|b:id" -> "a|b")."""
    return "|".join(part.split(":")[0] for part in ns.split("|") if not part.isdigit())


def patch_checkpoint_map(config: dict | None, metadata: dict | None) -> dict | None:
    """Adds `checkpoint_map` to a config when the checkpoint belongs to a nested graph (P-23)."""
    if config is None:
        return None
    parents = (metadata or {}).get("parents")
    if not parents:
        return config
    conf = config[CONF]
    return {
        **config,
        CONF: {
            **conf,
            CONFIG_KEY_CHECKPOINT_MAP: {**parents, conf.get(CONFIG_KEY_CHECKPOINT_NS, ""): conf[CONFIG_KEY_CHECKPOINT_ID]},
        },
    }


def _loaded_run(graph: Any, config: dict, saver: Any, saved: Any) -> CheckpointedRun:
    conf = dict(config.get(CONF) or {})
    conf.setdefault("thread_id", (saved.config[CONF].get("thread_id") if saved is not None else None))
    cfg = {"recursion_limit": 1, "metadata": {}, "tags": [], CONF: conf}
    run = CheckpointedRun(
        graph, cfg, saver=saver, durability=None, modes=frozenset(), output_keys=graph.stream_channels
    )
    run.load_saved(saved)
    run.parent_ns = conf.get(CONFIG_KEY_CHECKPOINT_NS, "")
    run.stop = run.step + 2
    run.updated = None  # every node is a candidate, in insertion order (L-22)
    return run


def _apply_null_writes(run: CheckpointedRun, pending: list) -> set:
    null_writes = [(c, v) for t, c, v in pending if t == NULL_TASK_ID]
    if not null_writes:
        return set()
    return run.apply([_InputTask(null_writes)])


def snapshot(graph: Any, config: dict, saved: Any, saver: Any, *, live: bool, recurse: bool = False) -> StateSnapshot:
    """A StateSnapshot of a saved checkpoint (P-20…P-23)."""
    if saved is None:
        return StateSnapshot(values={}, next=(), config=config, metadata=None, created_at=None, parent_config=None, tasks=(), interrupts=())
    run = _loaded_run(graph, saved.config, saver, saved)
    tasks = run.prepare()
    pending = list(saved.pending_writes or [])
    states: dict = {}
    parent_ns = saved.config[CONF].get(CONFIG_KEY_CHECKPOINT_NS, "")
    for task in tasks:
        sub = node_subgraph(task.node)
        if sub is None:
            continue
        task_ns = f"{task.name}:{task.id}"
        if parent_ns:
            task_ns = f"{parent_ns}|{task_ns}"
        if recurse:
            sub_conf = {CONFIG_KEY_CHECKPOINTER: saver, "thread_id": saved.config[CONF]["thread_id"], CONFIG_KEY_CHECKPOINT_NS: task_ns}
            states[task.id] = sub.get_state({CONF: sub_conf}, subgraphs=True)
        else:
            # a config as the sign that the subgraph has checkpoints
            states[task.id] = {CONF: {"thread_id": saved.config[CONF]["thread_id"], CONFIG_KEY_CHECKPOINT_NS: task_ns}}
    _apply_null_writes(run, pending)
    if live and pending:
        statuses = read_task_statuses(pending)
        for task in tasks:
            status = statuses.get(task.id)
            if status is not None and status.finished:
                task.writes = list(status.output)
        done = sorted((t for t in tasks if t.writes), key=lambda t: t.order)
        if done:
            run.apply(done)
    records = tasks_with_writes(tasks, pending, states, graph.stream_channels, live=live)
    return StateSnapshot(
        values=run.read_output(graph.stream_channels),
        next=tuple(t.name for t in tasks if not t.writes),
        config=patch_checkpoint_map(saved.config, saved.metadata),
        metadata=saved.metadata,
        created_at=saved.checkpoint["ts"],
        parent_config=patch_checkpoint_map(saved.parent_config, saved.metadata),
        tasks=records,
        interrupts=tuple(i for t in records for i in t.interrupts),
    )


def _lookup_config(config: dict) -> dict:
    conf = dict(config.get(CONF) or {})
    if "thread_id" in conf and not isinstance(conf["thread_id"], str):
        conf["thread_id"] = str(conf["thread_id"])
    conf.setdefault(CONFIG_KEY_CHECKPOINT_NS, "")
    return {**config, CONF: conf}


def merge_configs(*configs: dict | None) -> dict:
    """LangGraph's merge_configs: empty values skipped, metadata and configurable merged,
    tags concatenated (no defaults added, unlike a run's config)."""
    out: dict = {}
    for config in configs:
        if not config:
            continue
        for key, value in config.items():
            if not value:
                continue
            if key in ("metadata", CONF):
                out[key] = {**(out.get(key) or {}), **value}
            elif key == "tags":
                out[key] = [*(out.get(key) or []), *value]
            else:
                out[key] = value
    return out


def _with_graph_config(graph: Any, config: dict) -> dict:
    """The caller's config over the graph's own (`with_config`)."""
    base = getattr(graph, "config", None)
    return merge_configs(base, config) if base else config


def _str_thread_id(config: dict) -> dict:
    """`config` with its thread id as a string (KeyError without one, as in LangGraph)."""
    return {**config, CONF: {**config[CONF], "thread_id": str(config[CONF]["thread_id"])}}


def get_state(graph: Any, config: dict, *, subgraphs: bool = False) -> StateSnapshot:
    saver = state_saver(graph, config)
    sub = _subgraph_for_ns(graph, config, saver)
    if sub is not None:
        return sub[0].get_state(sub[1], subgraphs=subgraphs)
    config = _str_thread_id(own_checkpoint_config(graph, _with_graph_config(graph, config)))
    saved = saver.get_tuple(_lookup_config(config))
    live = not config[CONF].get(CONFIG_KEY_CHECKPOINT_ID)
    return snapshot(graph, config, saved, saver, live=live, recurse=subgraphs)


def get_state_history(
    graph: Any, config: dict, *, filter: dict | None = None, before: dict | None = None, limit: int | None = None
) -> Iterator[StateSnapshot]:
    config = {**(config or {}), CONF: (config or {}).get(CONF) or {}}
    saver = state_saver(graph, config)
    sub = _subgraph_for_ns(graph, config, saver)
    if sub is not None:
        yield from sub[0].get_state_history(sub[1], filter=filter, before=before, limit=limit)
        return
    conf = {CONFIG_KEY_CHECKPOINT_NS: config[CONF].get(CONFIG_KEY_CHECKPOINT_NS, ""), "thread_id": str(config[CONF]["thread_id"])}
    config = own_checkpoint_config(graph, merge_configs(getattr(graph, "config", None), config, {CONF: conf}))
    for saved in list(saver.list(config, before=before, limit=limit, filter=filter)):
        yield snapshot(graph, saved.config, saved, saver, live=False)


def _subgraph_for_ns(graph: Any, config: dict, saver: Any, *, for_update: bool = False) -> tuple | None:
    """The (possibly nested) subgraph a namespaced config addresses, and the config to
    call it with, lending it this graph's checkpointer (G-6). None for this graph's
    own namespace; an unknown namespace reads this graph's channels and fails updates."""
    conf = config[CONF]
    ns = conf.get(CONFIG_KEY_CHECKPOINT_NS, "")
    if not ns or CONFIG_KEY_CHECKPOINTER in conf:
        return None
    recast = _recast_ns(ns)
    target = graph
    for name in recast.split("|"):
        node = target.nodes.get(name)
        target = node_subgraph(node) if node is not None else None
        if target is None:
            break
    if target is not None and target is not graph:
        return target, {**config, CONF: {**conf, CONFIG_KEY_CHECKPOINTER: saver}}
    if for_update:
        raise ValueError(f"Subgraph {recast} not found")
    return None


def _infer_as_node(graph: Any, versions_seen: dict) -> str | None:
    """P-31: the node that wrote last, or __start__ on a fresh thread; None when ambiguous."""
    nodes = graph.nodes
    user_nodes = [n for n in nodes]
    if len(user_nodes) == 1:
        return user_nodes[0]
    seen = {k: v for k, v in versions_seen.items() if k != "__snapshot_bumps__"}
    if not any(v for vv in seen.values() for v in vv.values()):
        ic = graph.input_channels
        if isinstance(ic, str) and ic in nodes:
            return ic
        return None
    last = sorted((v, n) for n, s in seen.items() if n in nodes for v in s.values())
    if len(last) == 1 or (last and last[-1][0] != last[-2][0]):
        return last[-1][1]
    return None


def _update_task_id(checkpoint_id: str, i: int) -> str:
    return str(uuid.uuid5(uuid.UUID(checkpoint_id), INTERRUPT if i == 0 else f"{INTERRUPT}:{i}"))


def _put(run: CheckpointedRun, saver: Any, put_config: dict, source: str, step: int, parents: dict) -> dict:
    from lgembed._typing import MISSING
    from lgembed.checkpoint._id import now_iso, uuid6_str

    values = {}
    for k in run.versions:
        ch = run.channels.get(k)
        if ch is None or k in run.graph.untracked:
            continue
        data = ch.checkpoint()
        if data is not MISSING:
            values[k] = data
    checkpoint = {
        "v": 4,
        "id": uuid6_str(step),
        "ts": now_iso(),
        "channel_values": values,
        "channel_versions": dict(run.versions),
        "versions_seen": {k: dict(v) for k, v in run.seen.items()},
        # update_state heads never record their updated channels: the next run
        # considers every node (LangGraph's create_checkpoint without updated_channels)
        "updated_channels": None,
    }
    new_versions = {k: v for k, v in run.versions.items() if run.loaded_versions.get(k) != v}
    metadata = {"source": source, "step": step, "parents": parents}
    return saver.put(put_config, checkpoint, metadata, new_versions)


def bulk_update_state(graph: Any, config: dict, supersteps: Sequence[Sequence[Any]]) -> dict:
    """Applies updates as if nodes had returned them, one checkpoint per superstep (P-30…P-34)."""
    saver = state_saver(graph, config)
    if len(supersteps) == 0:
        raise ValueError("No supersteps provided")
    if any(len(u) == 0 for u in supersteps):
        raise ValueError("No updates provided")
    sub = _subgraph_for_ns(graph, config, saver, for_update=True)
    if sub is not None:
        return sub[0].bulk_update_state(sub[1], supersteps)
    current = _str_thread_id(config)
    for i, updates in enumerate(supersteps):
        current = _update_superstep(
            graph, saver, current, [StateUpdate(*u) if not isinstance(u, StateUpdate) else u for u in updates], i == 0
        )
    return current


def _superseded(saver: Any, config: dict, saved: Any) -> bool:
    """Whether `config` addressed a checkpoint the thread has moved past."""
    if saved is None or not config[CONF].get(CONFIG_KEY_CHECKPOINT_ID):
        return False
    latest = saver.get_tuple(
        {CONF: {"thread_id": config[CONF].get("thread_id"), CONFIG_KEY_CHECKPOINT_NS: config[CONF].get(CONFIG_KEY_CHECKPOINT_NS, "")}}
    )
    return latest is not None and latest.checkpoint["id"] != saved.checkpoint["id"]


def _store_update_writes(saver: Any, config: dict, saved: Any, is_first: bool, entries: list) -> None:
    """Saves an update's writes on the checkpoint it builds on (unless that was superseded)."""
    if saved is None or (is_first and _superseded(saver, config, saved)):
        return
    for task_id, writes, path in entries:
        channel_writes = [w for w in writes if w[0] != PUSH]
        if channel_writes:
            saver.put_writes(saved.config, channel_writes, task_id, path)


def _update_superstep(graph: Any, saver: Any, config: dict, updates: list, is_first: bool = False) -> dict:
    config = own_checkpoint_config(graph, _lookup_config(_with_graph_config(graph, config)))
    saved = saver.get_tuple(config)
    run = _loaded_run(graph, config, saver, saved)
    step = saved.metadata.get("step", -1) if saved is not None else -1
    parents = (saved.metadata.get("parents") or {}) if saved is not None else {}
    put_config = saved.config if saved is not None else {CONF: {k: v for k, v in config[CONF].items() if k != CONFIG_KEY_CHECKPOINT_ID}}
    pending = list(saved.pending_writes or []) if saved is not None else []
    values, as_node = updates[0].values, updates[0].as_node
    if values is None and as_node == END:
        if len(updates) > 1:
            raise InvalidUpdateError("Cannot apply multiple updates when clearing state")
        run.updated = set()
        if saved is not None:
            tasks = run.prepare()
            run.updated = _apply_null_writes(run, pending)
            statuses = read_task_statuses(pending)
            for task in tasks:
                status = statuses.get(task.id)
                if status is not None:
                    task.writes = list(status.output)
            run.updated |= run.apply(sorted(tasks, key=lambda t: t.order))
        new = _put(run, saver, put_config, "update", step + 1, parents)
        return patch_checkpoint_map(new, saved.metadata if saved else None)
    if as_node == INPUT:
        if len(updates) > 1:
            raise InvalidUpdateError("Cannot apply multiple updates when updating as input")
        writes = graph.map_input(values)
        if not writes:
            raise InvalidUpdateError(f"Received no input writes for {graph.input_channels}")
        _store_update_writes(
            saver, config, saved, is_first, [(str(uuid.uuid5(uuid.UUID(run.checkpoint_id), INPUT)), writes, "")]
        )
        run.updated = run.apply([_InputTask(writes)])
        next_step = step + 1 if saved is not None and saved.metadata.get("step") is not None else -1
        new = _put(run, saver, put_config, "input", next_step, parents)
        return patch_checkpoint_map(new, saved.metadata if saved else None)
    if as_node == "__copy__":
        if len(updates) > 1:
            raise InvalidUpdateError("Cannot copy checkpoint with multiple updates")
        if saved is None:
            raise InvalidUpdateError("Cannot copy a non-existent checkpoint")
        from lgembed.checkpoint._id import now_iso, uuid6_str

        checkpoint = dict(saved.checkpoint)
        checkpoint["id"] = uuid6_str(step)
        checkpoint["ts"] = now_iso()
        checkpoint["updated_channels"] = None
        parent = saved.parent_config or {CONF: {k: v for k, v in saved.config[CONF].items() if k != CONFIG_KEY_CHECKPOINT_ID}}
        new = saver.put(parent, checkpoint, {"source": "fork", "step": step + 1, "parents": parents}, {})
        new = patch_checkpoint_map(new, saved.metadata)
        if isinstance(values, list) and len(values) > 0:
            # copy and update in one go, reusing the task ids the copy would prepare
            copied = saver.get_tuple(new)
            ids: dict[str, list] = {}
            for t in _loaded_run(graph, new, saver, copied).prepare():
                ids.setdefault(t.name, []).append(t.id)
            grouped: dict[str, list] = {}
            for item in values:
                if not isinstance(item, Sequence):
                    raise InvalidUpdateError(f"Invalid update item: {item} when copying checkpoint")
                item_values, item_node = item[:2]
                group = grouped.setdefault(item_node, [])
                task_ids = ids.get(item_node, [])
                task_id = task_ids[len(group)] if len(group) < len(task_ids) else None
                group.append(StateUpdate(values=item_values, as_node=item_node, task_id=task_id))
            return _update_superstep(graph, saver, new, [u for g in grouped.values() for u in g])
        return new
    node_task_ids: dict[str, list] = {}
    if saved is not None:
        for t in run.prepare():
            node_task_ids.setdefault(t.name, []).append(t.id)
    valid = []
    if len(updates) == 1:
        u = updates[0]
        name = u.as_node
        if name is None:
            name = _infer_as_node(graph, run.seen if saved is not None else {})
        if name is None:
            raise InvalidUpdateError("Ambiguous update, specify as_node")
        if name not in graph.nodes:
            raise InvalidUpdateError(f"Node {name} does not exist")
        valid.append((name, u.values, u.task_id))
    else:
        for u in updates:
            if u.as_node is None:
                raise InvalidUpdateError("as_node is required when applying multiple updates")
            if u.as_node not in graph.nodes:
                raise InvalidUpdateError(f"Node {u.as_node} does not exist")
            valid.append((u.as_node, u.values, u.task_id))
    run.step = step
    tasks = []
    for i, (name, vals, given_id) in enumerate(valid):
        node = graph.nodes[name]
        task = Task(run, name, node, vals, (INTERRUPT, i), (INTERRUPT,), (0, name, i))
        ids = node_task_ids.get(name)
        task._id = given_id or (ids.pop(0) if ids else _update_task_id(run.checkpoint_id, i))
        writes = node.writes_for(vals)
        task.writes = writes
        for branch in node.branches:
            branch.route(task, vals, writes)
        tasks.append(task)
    run.updated = {c for t in tasks for c, _ in t.writes if c != PUSH}
    _store_update_writes(saver, config, saved, is_first, [(t.id, t.writes, _path_str(t.path)) for t in tasks])
    run.apply(tasks)
    new = _put(run, saver, put_config, "update", step + 1, parents)
    return patch_checkpoint_map(new, saved.metadata if saved else None)
