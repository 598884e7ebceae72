"""AnyValue (LangGraph's `langgraph.channels.any_value`; C-3)."""

from lgembed._channels import AnyValue

__all__ = ("AnyValue",)
