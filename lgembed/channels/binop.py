"""BinaryOperatorAggregate, the reducer channel (LangGraph's `langgraph.channels.binop`; C-7)."""

from lgembed._channels import BinaryOperatorAggregate

__all__ = ("BinaryOperatorAggregate",)
