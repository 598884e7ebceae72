"""BinaryOperatorAggregate, the reducer channel (LangGraph's `langgraph.channels.binop`; C-7)."""

from lgembed._speedups import BinaryOperatorAggregate

__all__ = ("BinaryOperatorAggregate",)
