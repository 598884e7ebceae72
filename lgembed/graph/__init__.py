"""The StateGraph API: `from lgembed.graph import StateGraph, START, END`."""

from lgembed.constants import END, START
from lgembed.graph.message import MessagesState, add_messages
from lgembed.graph.state import CompiledStateGraph, StateGraph

__all__ = ("END", "START", "StateGraph", "CompiledStateGraph", "MessagesState", "add_messages")
