"""Prebuilt agent pieces: `ToolNode`, `tools_condition`, `create_react_agent` (docs/BEHAVIOUR.md §13 M-3…M-6).

`from lgembed.prebuilt import ToolNode` works like `from langgraph.prebuilt import
ToolNode`. Not provided: `ValidationNode` and `ToolCallTransformer` (LangGraph builds
them on pydantic and langchain-core's streaming callbacks).
"""

from lgembed.prebuilt.chat_agent_executor import create_react_agent
from lgembed.prebuilt.tool_node import (
    InjectedState,
    InjectedStore,
    ToolNode,
    ToolRuntime,
    tools_condition,
)

__all__ = (
    "InjectedState",
    "InjectedStore",
    "ToolNode",
    "ToolRuntime",
    "create_react_agent",
    "tools_condition",
)
