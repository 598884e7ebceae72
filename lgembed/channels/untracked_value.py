"""UntrackedValue (LangGraph's `langgraph.channels.untracked_value`; C-5)."""

from lgembed._channels import UntrackedValue

__all__ = ("UntrackedValue",)
