"""EphemeralValue (LangGraph's `langgraph.channels.ephemeral_value`; C-4)."""

from lgembed._channels import EphemeralValue

__all__ = ("EphemeralValue",)
