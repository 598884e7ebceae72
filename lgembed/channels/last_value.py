"""LastValue and LastValueAfterFinish (LangGraph's `langgraph.channels.last_value`; C-1, C-2)."""

from lgembed._channels import LastValue, LastValueAfterFinish

__all__ = ("LastValue", "LastValueAfterFinish")
