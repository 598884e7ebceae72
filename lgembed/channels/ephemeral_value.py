"""EphemeralValue (LangGraph's `langgraph.channels.ephemeral_value`; C-4)."""

from lgembed._speedups import EphemeralValue

__all__ = ("EphemeralValue",)
