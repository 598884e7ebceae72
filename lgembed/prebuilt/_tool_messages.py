"""ToolNode output: message classes, content formatting, Command checks and collection (M-3).

Why a separate module: what a tool returns is turned into the node's output by rules
that do not depend on how the calls ran (threads or asyncio): content formatting
(langchain-core's), the checks on returned Commands (LangGraph's texts), and the
combination of messages and Commands into one node return value.

Message classes: a ToolMessage is built as langchain-core's class when the tool call
came from a langchain-core AIMessage (its module is passed around as `lc`), else as
lgembed's.
"""

from __future__ import annotations

import inspect
from dataclasses import replace
from typing import Any

from lgembed.graph.message import REMOVE_ALL_MESSAGES
from lgembed.messages import (
    AIMessage,
    ToolMessage,
    convert_to_messages,
    lc_messages_module,
)
from lgembed.tools import TOOL_MESSAGE_BLOCK_TYPES, Tool
from lgembed.types import Command, Send

__all__ = (
    "TOOL_MESSAGE_BLOCK_TYPES",
    "combine_tool_outputs",
    "msg_content_output",
    "normalize_tool_response",
)



def msg_content_output(output: Any) -> str | list:
    """Tool output as ToolMessage content: a str or a list of content blocks as is,
    anything else as JSON text (`json.dumps(..., ensure_ascii=False)`), else `str()`."""
    if isinstance(output, str) or (
        isinstance(output, list)
        and all(isinstance(x, dict) and x.get("type") in TOOL_MESSAGE_BLOCK_TYPES for x in output)
    ):
        return output
    from lgembed.tools import stringify

    return stringify(output)


def lc_family(message: Any) -> Any:
    """langchain-core's messages module if `message` is one of its messages, else None."""
    lc = lc_messages_module()
    if lc is not None and isinstance(message, lc.BaseMessage):
        return lc
    return None


def is_ai(message: Any) -> bool:
    if isinstance(message, AIMessage):
        return True
    lc = lc_messages_module()
    return lc is not None and isinstance(message, lc.AIMessage)


def is_tool_message(message: Any) -> bool:
    if isinstance(message, ToolMessage):
        return True
    lc = lc_messages_module()
    return lc is not None and isinstance(message, lc.ToolMessage)


def make_tool_message(lc: Any, content: Any, **kwargs: Any) -> Any:
    cls = lc.ToolMessage if lc is not None else ToolMessage
    return cls(content, **kwargs)


def as_family(message: Any, lc: Any) -> Any:
    # an lgembed ToolMessage made by ToolNode or an lgembed Tool, as langchain-core's class
    if lc is None or not isinstance(message, ToolMessage):
        return message
    return lc.ToolMessage(
        message.content,
        tool_call_id=message.tool_call_id,
        name=message.name,
        id=message.id,
        artifact=message.artifact,
        status=message.status,
        **message.__dict__,
    )


def is_tool(obj: Any) -> bool:
    return isinstance(obj, Tool) or (
        hasattr(obj, "name") and hasattr(obj, "invoke") and hasattr(obj, "description") and not inspect.isfunction(obj)
    )


def normalize_tool_response(response: Any, call: dict, input_type: str, lc: Any, messages_key: str) -> Any:
    """A tool's return value checked and prepared for the node output (Command, ToolMessage or a list of them).

    Raises:
        TypeError: any other return value.
        ValueError: a Command without the ToolMessage answering the call.
    """
    if isinstance(response, Command):
        return validate_tool_command(response, call, input_type, messages_key)
    if is_tool_message(response):
        response = as_family(response, lc)
        response.content = msg_content_output(response.content)
        return response
    if isinstance(response, list):
        if all(isinstance(r, Command) or is_tool_message(r) for r in response):
            return validate_tool_command_list(response, call, input_type, lc, messages_key)
        msg = f"Tool {call['name']} returned a list with invalid element types: expected all Command or ToolMessage"
        raise TypeError(msg)
    msg = f"Tool {call['name']} returned unexpected type: {type(response)}"
    raise TypeError(msg)


def validate_tool_command_list(response: list, call: dict, input_type: str, lc: Any, messages_key: str) -> list:
    expected = call["id"]
    count = 0
    for item in response:
        if is_tool_message(item):
            count += item.tool_call_id == expected
        elif isinstance(item, Command) and isinstance(item.update, dict):
            for m in item.update.get(messages_key, []):
                if is_tool_message(m) and m.tool_call_id == expected:
                    count += 1
    if count != 1:
        msg = (
            f"Tool {call['name']} returned a list with "
            f"{count} messages bound to tool_call_id "
            f"{expected!r}; expected exactly one terminating ToolMessage."
        )
        raise ValueError(msg)
    out = []
    for item in response:
        if isinstance(item, Command):
            out.append(validate_tool_command(item, call, input_type, messages_key, require_terminator=False))
        else:
            item = as_family(item, lc)
            item.content = msg_content_output(item.content)
            out.append(item)
    return out


def validate_tool_command(
    command: Command, call: dict, input_type: str, messages_key: str, *, require_terminator: bool = True
) -> Command:
    import copy

    if isinstance(command.update, dict):
        if input_type not in ("dict", "tool_calls"):
            msg = (
                "Tools can provide a dict in Command.update only when using dict "
                f"with '{messages_key}' key as ToolNode input, "
                f"got: {command.update} for tool '{call['name']}'"
            )
            raise ValueError(msg)
        updated = copy.deepcopy(command)
        messages_update = (updated.update or {}).get(messages_key, [])
    elif isinstance(command.update, list):
        if input_type != "list":
            msg = (
                "Tools can provide a list of messages in Command.update "
                "only when using list of messages as ToolNode input, "
                f"got: {command.update} for tool '{call['name']}'"
            )
            raise ValueError(msg)
        updated = copy.deepcopy(command)
        messages_update = updated.update
    else:
        return command
    messages_update = convert_to_messages(messages_update)
    if (
        len(messages_update) == 1
        and getattr(messages_update[0], "type", None) == "remove"
        and messages_update[0].id == REMOVE_ALL_MESSAGES
    ):
        return updated
    has_match = False
    for m in messages_update:
        if is_tool_message(m) and m.tool_call_id == call["id"]:
            m.name = call["name"]
            has_match = True
    if require_terminator and updated.graph is None and not has_match:
        example = (
            '`Command(update={"messages": [ToolMessage("Success", tool_call_id=tool_call_id), ...]}, ...)`'
            if input_type == "dict"
            else '`Command(update=[ToolMessage("Success", tool_call_id=tool_call_id), ...], ...)`'
        )
        msg = (
            "Expected to have a matching ToolMessage in Command.update "
            f"for tool '{call['name']}', got: {messages_update}. "
            "Every tool call (LLM requesting to call a tool) "
            "in the message history MUST have a corresponding ToolMessage. "
            f"You can fix it by modifying the tool to return {example}."
        )
        raise ValueError(msg)
    return updated


def combine_tool_outputs(outputs: list, input_type: str, messages_key: str) -> Any:
    """The node's return value: the messages, or (with Commands) a list of updates and Commands
    with the Sends to the parent graph merged into one Command."""
    if any(isinstance(o, list) for o in outputs):
        flat: list = []
        for o in outputs:
            if isinstance(o, list):
                flat.extend(o)
            else:
                flat.append(o)
    else:
        flat = outputs
    if not any(isinstance(o, Command) for o in flat):
        return flat if input_type == "list" else {messages_key: flat}
    combined: list = []
    parent: Command | None = None
    for o in flat:
        if isinstance(o, Command):
            if o.graph is Command.PARENT and isinstance(o.goto, list) and all(isinstance(s, Send) for s in o.goto):
                parent = (
                    replace(parent, goto=parent.goto + o.goto)
                    if parent is not None
                    else Command(graph=Command.PARENT, goto=o.goto)
                )
            else:
                combined.append(o)
        else:
            combined.append([o] if input_type == "list" else {messages_key: [o]})
    if parent is not None:
        combined.append(parent)
    return combined
