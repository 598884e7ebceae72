"""Channels: the state containers behind every key of a graph (LangGraph's `langgraph.channels`).

The classes come from `lgembed._channels`, compiled when built (`lgembed._engine`).
`DeltaChannel` (beta in LangGraph, docs/BEHAVIOUR.md C-10) is not provided.
"""

from lgembed._channels import (
    AnyValue,
    BaseChannel,
    BinaryOperatorAggregate,
    EphemeralValue,
    LastValue,
    LastValueAfterFinish,
    NamedBarrierValue,
    NamedBarrierValueAfterFinish,
    Topic,
    UntrackedValue,
)

__all__ = (
    # base
    "BaseChannel",
    # value types
    "AnyValue",
    "LastValue",
    "LastValueAfterFinish",
    "UntrackedValue",
    "EphemeralValue",
    "BinaryOperatorAggregate",
    "NamedBarrierValue",
    "NamedBarrierValueAfterFinish",
    # topics
    "Topic",
)
