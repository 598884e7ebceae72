"""Channels: the state containers behind every key of a graph (LangGraph's `langgraph.channels`).

The classes come from `lgembed._speedups`, so they are the compiled ones when built.
`DeltaChannel` (beta in LangGraph, reference C-10) is not provided.
"""

from lgembed._speedups import (
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
