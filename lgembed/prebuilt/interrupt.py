"""Shapes of human-in-the-loop requests and answers (`langgraph.prebuilt.interrupt`).

Why: agent programs pass these TypedDicts to `interrupt()` and read them back on
resume; they are plain dicts at runtime. LangGraph marks them deprecated (moved to
`langchain.agents.interrupt`); lgembed keeps them without warnings.
"""

from __future__ import annotations

from typing import Literal, TypedDict

__all__ = ("ActionRequest", "HumanInterrupt", "HumanInterruptConfig", "HumanResponse")


class HumanInterruptConfig(TypedDict):
    """Which answers a human may give: ignore, respond, edit, accept."""

    allow_ignore: bool
    allow_respond: bool
    allow_edit: bool
    allow_accept: bool


class ActionRequest(TypedDict):
    """The action a human is asked about, with its arguments."""

    action: str
    args: dict


class HumanInterrupt(TypedDict):
    """What the graph asks: the action, the allowed answers, and a description."""

    action_request: ActionRequest
    config: HumanInterruptConfig
    description: str | None


class HumanResponse(TypedDict):
    """The human's answer: `type` is accept/ignore/response/edit; `args` its payload."""

    type: Literal["accept", "ignore", "response", "edit"]
    args: None | str | ActionRequest
