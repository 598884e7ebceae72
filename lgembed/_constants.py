"""Private constants of the Pregel engine: reserved channel, write and config keys.

Why a separate module: these names are part of checkpoints and stream output (so
they must equal LangGraph's), but they are not public API.
"""

import sys

from lgembed.constants import CONF, END, START, TASKS, TAG_HIDDEN  # noqa: F401

INPUT = sys.intern("__input__")
# pseudo-node name whose versions_seen entry records graph input
INTERRUPT = sys.intern("__interrupt__")
# write key of dynamic interrupts; versions_seen key of static breakpoints
RESUME = sys.intern("__resume__")
# write key of resume values
ERROR = sys.intern("__error__")
# write key of a task's exception
ERROR_SOURCE_NODE = sys.intern("__error_source_node__")
# write key naming the failed node for error handlers
NO_WRITES = sys.intern("__no_writes__")
# marker write of a task that finished without writing anything
RETURN = sys.intern("__return__")
# write key of a functional-API task's return value
PUSH = sys.intern("__pregel_push")
# first element of the path of a task created by Send
PULL = sys.intern("__pregel_pull")
# first element of the path of a task created by a channel trigger
NULL_TASK_ID = "00000000-0000-0000-0000-000000000000"
# task id of writes that belong to no task (Command input, update_state)
ROOT = sys.intern("__root__")
# channel of a state schema that is a single value (e.g. StateGraph(int))
SELF = sys.intern("__self__")
NS_SEP = sys.intern("|")
# separator of nested checkpoint namespaces
NS_END = sys.intern(":")
# separator of node name and task id in a checkpoint namespace
OVERWRITE = sys.intern("__overwrite__")
# key of the dict form of an Overwrite write

# config["configurable"] keys used by the engine (reserved, never user-visible)
CONFIG_KEY_SEND = sys.intern("__pregel_send")
CONFIG_KEY_READ = sys.intern("__pregel_read")
CONFIG_KEY_CHECKPOINTER = sys.intern("__pregel_checkpointer")
CONFIG_KEY_STREAM = sys.intern("__pregel_stream")
CONFIG_KEY_RUNTIME = sys.intern("__pregel_runtime")
CONFIG_KEY_SCRATCHPAD = sys.intern("__pregel_scratchpad")
CONFIG_KEY_TASK_ID = sys.intern("__pregel_task_id")
CONFIG_KEY_RESUMING = sys.intern("__pregel_resuming")
CONFIG_KEY_DURABILITY = sys.intern("__pregel_durability")
CONFIG_KEY_CHECKPOINT_NS = sys.intern("checkpoint_ns")
CONFIG_KEY_CHECKPOINT_ID = sys.intern("checkpoint_id")
CONFIG_KEY_CHECKPOINT_MAP = sys.intern("checkpoint_map")
CONFIG_KEY_TASK = "__pregel_lgembed_task"
# the running Task in a task's configurable (nested graphs find their parent task by it);
# `__pregel_` like LangGraph's engine keys, which user code filters out
CONFIG_KEY_THREAD_ID = sys.intern("thread_id")

RESERVED = frozenset(
    {
        TAG_HIDDEN,
        INPUT,
        INTERRUPT,
        RESUME,
        ERROR,
        ERROR_SOURCE_NODE,
        NO_WRITES,
        "__snapshot_bumps__",
        CONFIG_KEY_SEND,
        CONFIG_KEY_READ,
        CONFIG_KEY_CHECKPOINTER,
        CONFIG_KEY_STREAM,
        CONFIG_KEY_CHECKPOINT_MAP,
        CONFIG_KEY_RESUMING,
        "__pregel_replay_state",
        CONFIG_KEY_TASK_ID,
        CONFIG_KEY_CHECKPOINT_ID,
        CONFIG_KEY_CHECKPOINT_NS,
        "__pregel_timed_attempt_observer",
        "__pregel_resume_map",
        "__pregel_strict_resume",
        "__pregel_stream_messages_v2",
        PUSH,
        PULL,
        NS_SEP,
        NS_END,
        CONF,
    }
)
# names that may not be used as channel or node names (B-7, B-12); LangGraph's set

DEFAULT_RECURSION_LIMIT = 10007
# LangGraph's default (L-1); overridden per call by config["recursion_limit"]

EXCLUDED_METADATA_KEYS = frozenset(
    (
        "thread_id",
        "checkpoint_id",
        "checkpoint_ns",
        "checkpoint_map",
        "langgraph_step",
        "langgraph_node",
        "langgraph_triggers",
        "langgraph_path",
        "langgraph_checkpoint_ns",
    )
)
# config metadata keys never copied into checkpoint metadata (P-2) nor into task events (S-5)
