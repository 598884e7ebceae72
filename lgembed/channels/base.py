"""The channel base class (LangGraph's `langgraph.channels.base`).

Subclass `BaseChannel` to write a custom channel; `Value`, `Update` and `Checkpoint`
are its type parameters.
"""

from lgembed._channels import BaseChannel
from lgembed.errors import EmptyChannelError  # noqa: F401  (importable from here, as in LangGraph)

__all__ = ("BaseChannel",)

Value, Update, Checkpoint = BaseChannel.__parameters__
# the TypeVars BaseChannel is generic over (the selected build's own objects)
