"""`lgembed run MODULE:ATTR`: run a graph once and print its stream as JSON lines.

Why: the quickest way to try a graph on a board, and the way a shell script or a cron
job drives one: input as JSON, output as JSON lines, the outcome in the exit code
(0 done, 3 stopped at an interrupt, 2 failed), and `--resume` to answer an interrupt
later, from another process, on the same `--thread` of the same `--db`.

Graphs: MODULE:ATTR (or path/file.py:ATTR) names a StateGraph builder, a compiled
graph, or a zero-argument function returning either. With `--db DIR` a builder is
compiled with `LmdbSaver(DIR)`; a compiled graph without a checkpointer gets that saver
attached (as LangGraph's server does for the graphs it serves); a compiled graph with
a checkpointer of its own is refused with `--db` (use its own: drop `--db`).

Output: one line per stream chunk; with several `--stream` modes each line is
`[mode, chunk]`. When the run stops at an interrupt the last line is
`{"__interrupt__": [{"value": ..., "id": ...}]}` and the exit code is 3. With a
checkpointer and no `--thread`, a new thread id is generated and written to stderr.
Runs with `--db` use durability "sync": every superstep is on disk before the next
starts, so a run cut off by a power loss resumes from its last step
(`--thread ID --input null`).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from lgembed.cli._common import (
    EXIT_ERROR,
    EXIT_INTERRUPTED,
    EXIT_OK,
    UsageError,
    create_saver,
    describe,
    emit,
    load_target,
    parse_json,
    resolve_graph,
)

__all__ = ("STREAM_MODES", "add_arguments", "main")

STREAM_MODES = ("values", "updates", "custom", "messages", "tasks", "debug", "checkpoints")
"""Values `--stream` accepts (comma-separated), LangGraph's stream modes."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Adds `run`'s arguments to `parser`."""
    parser.add_argument(
        "target", metavar="MODULE:ATTR", help="a StateGraph builder or compiled graph (or file.py:ATTR)"
    )
    parser.add_argument(
        "--input",
        default=None,
        metavar="JSON|-",
        help="the graph input as JSON, '-' to read it from stdin (default {}; null continues a thread)",
    )
    parser.add_argument("--thread", metavar="ID", help="thread id (a new one is generated when a checkpointer is used)")
    parser.add_argument(
        "--db", metavar="DIR", help="LMDB environment directory: checkpoints go there (created if missing)"
    )
    parser.add_argument(
        "--stream",
        default="values",
        metavar="MODES",
        help=f"comma-separated stream modes: {', '.join(STREAM_MODES)} (default: values)",
    )
    parser.add_argument("--resume", metavar="JSON", help="resume the interrupted --thread with Command(resume=JSON)")
    parser.add_argument(
        "--config", metavar="JSON", help='run config, e.g. {"recursion_limit": 50, "configurable": {...}}'
    )
    parser.add_argument("--context", metavar="JSON", help="the run's context (for graphs with a context_schema)")
    parser.add_argument("--pretty", action="store_true", help="indent each JSON output (for people)")


def _modes(text: str) -> list[str]:
    modes = [m.strip() for m in text.split(",") if m.strip()]
    if not modes:
        raise UsageError(f"--stream: no mode given; allowed: {', '.join(STREAM_MODES)}")
    for m in modes:
        if m not in STREAM_MODES:
            msg = f"--stream: unknown mode {m!r}; allowed: {', '.join(STREAM_MODES)} (comma-separated)"
            raise UsageError(msg)
    return list(dict.fromkeys(modes))


def main(args: argparse.Namespace) -> int:
    """Runs `lgembed run`; returns the exit code.

    Raises:
        UsageError: bad JSON, unknown stream mode, `--resume` without `--thread`, or
            `--resume` together with `--input`.
        CliError: the graph cannot be loaded or the environment cannot be opened.
    """
    modes = _modes(args.stream)
    if args.resume is not None and args.input is not None:
        raise UsageError("--resume and --input exclude each other: --resume answers an interrupt, --input starts a run")
    if args.resume is not None and not args.thread:
        raise UsageError("--resume needs --thread ID: the thread whose interrupt it answers")
    config: dict[str, Any] = {}
    if args.config is not None:
        config = parse_json(args.config, "--config")
        if not isinstance(config, dict):
            raise UsageError(f"--config: expected a JSON object (got {type(config).__name__})")
    context = parse_json(args.context, "--context") if args.context is not None else None
    resume: Any = None
    payload: Any = None
    if args.resume is not None:
        resume = parse_json(args.resume, "--resume")
    else:
        payload = {} if args.input is None else parse_json(args.input, "--input")

    obj = load_target(args.target)
    saver = create_saver(args.db) if args.db else None
    try:
        graph = resolve_graph(obj, args.target, checkpointer=saver)
        return _run(graph, args, modes, config, context, payload, resume)
    finally:
        if saver is not None:
            saver.close()


def _run(
    graph: Any, args: argparse.Namespace, modes: list[str], config: dict, context: Any, payload: Any, resume: Any
) -> int:
    from lgembed.types import Command

    persistent = getattr(graph, "checkpointer", None) not in (None, False)
    configurable = dict(config.get("configurable") or {})
    thread_id = args.thread or configurable.get("thread_id")
    if args.resume is not None and not persistent:
        msg = (
            f"--resume: '{args.target}' has no checkpointer, so there is no interrupted thread to resume. "
            "Fix: pass --db DIR (the directory of the interrupted run)"
        )
        raise UsageError(msg)
    if persistent and not thread_id:
        import uuid

        thread_id = str(uuid.uuid4())
        print(f"lgembed run: thread_id {thread_id}", file=sys.stderr)
    if thread_id:
        configurable["thread_id"] = str(thread_id)
    config = {**config, "configurable": configurable}
    run_input = Command(resume=resume) if args.resume is not None else payload
    # "updates" is always streamed: its "__interrupt__" chunks say the run stopped at an interrupt
    wanted = modes if "updates" in modes else [*modes, "updates"]
    kwargs: dict[str, Any] = {"stream_mode": wanted}
    if context is not None:
        kwargs["context"] = context
    if persistent:
        kwargs["durability"] = "sync"
    interrupts: list = []
    stopped = False
    try:
        for mode, chunk in graph.stream(run_input, config, **kwargs):
            if mode == "updates" and isinstance(chunk, dict) and "__interrupt__" in chunk:
                stopped = True
                interrupts.extend(chunk["__interrupt__"] or ())
            if mode not in modes:
                continue
            emit(chunk if len(modes) == 1 else [mode, chunk], args.pretty)
    except (KeyboardInterrupt, BrokenPipeError):
        raise
    except Exception as e:  # noqa: BLE001 - the graph's error is the command's result
        where = (
            f" (thread {thread_id}: its last checkpoint is kept; retry with --thread {thread_id} --input null)"
            if persistent
            else ""
        )
        print(f"lgembed run: graph error: {describe(e)}{where}", file=sys.stderr)
        return EXIT_ERROR
    if persistent:
        state = graph.get_state({"configurable": {"thread_id": configurable["thread_id"]}})
        if state.next:
            stopped = True
            interrupts = list(state.interrupts)
    if stopped:
        emit({"__interrupt__": interrupts}, args.pretty)
        return EXIT_INTERRUPTED
    return EXIT_OK
