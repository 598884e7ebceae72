"""Prebuilt agent pieces: `ToolNode`, `tools_condition`, `create_react_agent`,
`ValidationNode` (docs/BEHAVIOUR.md §13 M-3…M-6).

`from lgembed.prebuilt import ToolNode` works like `from langgraph.prebuilt import
ToolNode`. `ValidationNode` needs pydantic (`lgembed[pydantic]`) when constructed, not
when imported. Not provided: `ToolCallTransformer` (LangGraph builds it on
langchain-core's streaming callbacks).
"""

from lgembed.prebuilt.chat_agent_executor import create_react_agent
from lgembed.prebuilt.tool_node import (
    InjectedState,
    InjectedStore,
    ToolNode,
    ToolRuntime,
    tools_condition,
)
from lgembed.prebuilt.tool_validator import ValidationNode

__all__ = (
    "InjectedState",
    "InjectedStore",
    "ToolNode",
    "ToolRuntime",
    "ValidationNode",
    "create_react_agent",
    "tools_condition",
)
