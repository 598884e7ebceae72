"""Topic (LangGraph's `langgraph.channels.topic`; C-6)."""

from lgembed._channels import Topic

__all__ = ("Topic",)
