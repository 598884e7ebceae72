"""Messages <-> OpenAI chat-completions JSON, as langchain-openai converts them.

Why this module exists: the request and reply shapes decide what a LangGraph program
sees (`response_metadata`, `usage_metadata`, tool-call parsing, chunk contents), so they
follow langchain-openai 1.x (`_convert_message_to_dict`, `_convert_dict_to_message`,
`_convert_chunk_to_generation_chunk`, `_create_usage_metadata`) key for key. Both lgembed
and langchain-core message objects are accepted as input (recognised by `.type`).
"""

from __future__ import annotations

import json
from typing import Any

from lgembed.messages import AIMessage, AIMessageChunk, convert_to_messages, invalid_tool_call, tool_call

__all__ = (
    "chunk_from_event",
    "input_messages",
    "message_from_response",
    "message_to_dict",
    "usage_metadata",
)

_SKIPPED_BLOCKS = ("tool_use", "thinking", "reasoning_content", "function_call", "code_interpreter_call")
# content blocks langchain-openai leaves out of a chat-completions request


def input_messages(value: Any) -> list:
    """A model input (str, list of message-likes, prompt value) as a list of messages.

    Raises:
        ValueError: an input that is not a str, a sequence of messages or a prompt value.
    """
    if isinstance(value, str):
        return convert_to_messages([value])
    if hasattr(value, "to_messages"):
        return list(value.to_messages())
    if isinstance(value, (list, tuple)):
        return convert_to_messages(value)
    msg = (
        f"Invalid input type {type(value)}. Must be a PromptValue, str, or list of BaseMessages."
    )
    raise ValueError(msg)


def _content(content: Any) -> Any:
    if not (content and isinstance(content, list)):
        return content
    out = []
    for block in content:
        if isinstance(block, dict) and block.get("type") in _SKIPPED_BLOCKS:
            continue
        if isinstance(block, dict) and block.get("type") == "image":
            source = block.get("source")
            if isinstance(source, dict) and source.get("type") == "base64":
                out.append({"type": "image_url", "image_url": {"url": f"data:{source['media_type']};base64,{source['data']}"}})
                continue
            if isinstance(source, dict) and source.get("type") == "url":
                out.append({"type": "image_url", "image_url": {"url": source["url"]}})
                continue
            if block.get("url"):
                out.append({"type": "image_url", "image_url": {"url": block["url"]}})
                continue
            if block.get("base64"):
                mime = block.get("mime_type", "image/png")
                out.append({"type": "image_url", "image_url": {"url": f"data:{mime};base64,{block['base64']}"}})
                continue
        out.append(block)
    return out


def _tool_content(content: Any) -> Any:
    # tool results: chat completions takes a str or a list of text parts
    if isinstance(content, list):
        parts = [b if isinstance(b, dict) else {"type": "text", "text": str(b)} for b in content]
        if all(p.get("type") == "text" for p in parts):
            return parts
        return json.dumps(content, ensure_ascii=False, default=str)
    return content


def message_to_dict(message: Any) -> dict:
    """One message as a chat-completions message dict (langchain-openai's rules).

    Raises:
        TypeError: a message type chat completions has no role for.
    """
    kind = message.type
    out: dict[str, Any] = {"content": _content(message.content)}
    name = message.name or message.additional_kwargs.get("name")
    if name is not None:
        out["name"] = name
    if kind == "human":
        out["role"] = "user"
    elif kind in ("ai", "AIMessageChunk"):
        out["role"] = "assistant"
        tcs = getattr(message, "tool_calls", None) or []
        itcs = getattr(message, "invalid_tool_calls", None) or []
        if tcs or itcs:
            out["tool_calls"] = [
                {
                    "type": "function",
                    "id": tc["id"],
                    "function": {"name": tc["name"], "arguments": json.dumps(tc["args"], ensure_ascii=False)},
                }
                for tc in tcs
            ] + [
                {"type": "function", "id": tc["id"], "function": {"name": tc["name"], "arguments": tc["args"]}}
                for tc in itcs
            ]
        elif "tool_calls" in message.additional_kwargs:
            out["tool_calls"] = [
                {k: v for k, v in tc.items() if k in ("id", "type", "function")}
                for tc in message.additional_kwargs["tool_calls"]
            ]
        elif "function_call" in message.additional_kwargs:
            out["function_call"] = message.additional_kwargs["function_call"]
        if "function_call" in out or "tool_calls" in out:
            out["content"] = out["content"] or None
    elif kind == "system":
        out["role"] = message.additional_kwargs.get("__openai_role__", "system")
    elif kind == "function":
        out["role"] = "function"
    elif kind == "tool":
        out = {"content": _tool_content(out["content"]), "role": "tool", "tool_call_id": message.tool_call_id}
    elif kind == "chat":
        out["role"] = message.role
    else:
        msg = f"Got unknown type {message}"
        raise TypeError(msg)
    return out


def usage_metadata(usage: dict) -> dict:
    """An OpenAI `usage` object as langchain-core's `usage_metadata`."""
    inp = usage.get("prompt_tokens")
    inp = inp if inp is not None else 0
    outp = usage.get("completion_tokens")
    outp = outp if outp is not None else 0
    total = usage.get("total_tokens")
    total = total if total is not None else inp + outp
    pd = usage.get("prompt_tokens_details") or {}
    cd = usage.get("completion_tokens_details") or {}
    in_details = {"audio": pd.get("audio_tokens"), "cache_read": pd.get("cached_tokens"), "cache_creation": pd.get("cache_write_tokens")}
    out_details = {"audio": cd.get("audio_tokens"), "reasoning": cd.get("reasoning_tokens")}
    return {
        "input_tokens": inp,
        "output_tokens": outp,
        "total_tokens": total,
        "input_token_details": {k: v for k, v in in_details.items() if v is not None},
        "output_token_details": {k: v for k, v in out_details.items() if v is not None},
    }


_USAGE_FIELDS = ("completion_tokens", "prompt_tokens", "total_tokens", "completion_tokens_details", "prompt_tokens_details")
# the openai SDK's CompletionUsage fields (model_dump fills the missing ones with None)


def _parse_tool_calls(raw: list) -> tuple[list, list]:
    calls: list = []
    invalid: list = []
    for rtc in raw:
        fn = rtc.get("function") or {}
        try:
            arguments = fn.get("arguments")
            args = json.loads(arguments, strict=False) if arguments else {}
            if not isinstance(args, dict):
                raise ValueError(f"Function {fn.get('name')} arguments:\n\n{arguments}\n\nare not valid JSON. Received a non-object value.")
            calls.append(tool_call(name=fn.get("name") or "", args=args, id=rtc.get("id")))
        except Exception as e:  # noqa: BLE001 - langchain-openai turns any parse failure into an invalid call
            text = str(e)
            if isinstance(e, json.JSONDecodeError):
                text = f"Function {fn.get('name')} arguments:\n\n{fn.get('arguments')}\n\nare not valid JSON. Received JSONDecodeError {e}"
            invalid.append(invalid_tool_call(name=fn.get("name"), args=fn.get("arguments"), id=rtc.get("id"), error=text))
    return calls, invalid


def message_from_response(data: dict, model_name: str, message_id: str) -> AIMessage:
    """A non-streaming chat completion as an `AIMessage` (langchain-openai's fields).

    Raises:
        ValueError: the reply carries an `error` instead of choices.
        KeyError: the reply has no `choices`.
        TypeError: `choices` is null.
    """
    if data.get("error"):
        raise ValueError(data.get("error"))
    try:
        choices = data["choices"]
    except KeyError as e:
        msg = f"Response missing 'choices' key: {data.keys()}"
        raise KeyError(msg) from e
    if choices is None:
        msg = (
            "Received response with null value for 'choices'. This can happen when using OpenAI-compatible "
            f"APIs (e.g., vLLM) that return a response in an unexpected format. Full response keys: {list(data.keys())}"
        )
        raise TypeError(msg)
    res = choices[0]
    raw = res.get("message") or {}
    additional: dict = {}
    if raw.get("function_call"):
        additional["function_call"] = dict(raw["function_call"])
    if raw.get("audio"):
        additional["audio"] = raw["audio"]
    calls, invalid = _parse_tool_calls(raw.get("tool_calls") or [])
    additional["refusal"] = raw.get("refusal")
    if raw.get("reasoning_content"):
        # llama.cpp / vLLM / LM Studio put a reasoning model's thinking here
        additional["reasoning_content"] = raw["reasoning_content"]
    usage = data.get("usage")
    token_usage = {k: usage.get(k) for k in _USAGE_FIELDS} | usage if isinstance(usage, dict) else usage
    metadata: dict = {
        "token_usage": token_usage,
        "model_provider": "openai",
        "model_name": data.get("model", model_name),
        "system_fingerprint": data.get("system_fingerprint", ""),
    }
    if "id" in data:
        metadata["id"] = data["id"]
    if data.get("service_tier"):
        metadata["service_tier"] = data["service_tier"]
    metadata["finish_reason"] = res.get("finish_reason")
    metadata["logprobs"] = res.get("logprobs")
    return AIMessage(
        content=raw.get("content") or "",
        additional_kwargs=additional,
        response_metadata=metadata,
        name=raw.get("name"),
        id=message_id,
        tool_calls=calls,
        invalid_tool_calls=invalid,
        usage_metadata=usage_metadata(usage) if usage else None,
    )


def chunk_from_event(event: dict, message_id: str) -> AIMessageChunk | None:
    """One streamed `chat.completion.chunk` as an `AIMessageChunk` (None to skip it).

    The response metadata is what langchain-core gives a streamed chunk: the generation
    info (`finish_reason`, `model_name`, `system_fingerprint` on the final choice) followed
    by `model_provider`; a usage-only event (no choices) has empty metadata.
    """
    usage = event.get("usage")
    choices = event.get("choices") or []
    um = usage_metadata(usage) if usage else None
    if not choices:
        return AIMessageChunk(content="", usage_metadata=um, id=message_id)
    choice = choices[0]
    delta = choice.get("delta")
    if delta is None:
        return None
    additional: dict = {}
    if delta.get("function_call"):
        fc = dict(delta["function_call"])
        if "name" in fc and fc["name"] is None:
            fc["name"] = ""
        additional["function_call"] = fc
    if delta.get("reasoning_content"):
        additional["reasoning_content"] = delta["reasoning_content"]
    chunks = []
    for rtc in delta.get("tool_calls") or ():
        fn = rtc.get("function") or {}
        chunks.append({"name": fn.get("name"), "args": fn.get("arguments"), "id": rtc.get("id"), "index": rtc.get("index")})
    info: dict = {}
    if choice.get("finish_reason"):
        info["finish_reason"] = choice["finish_reason"]
        if event.get("model"):
            info["model_name"] = event["model"]
        if event.get("system_fingerprint"):
            info["system_fingerprint"] = event["system_fingerprint"]
        if event.get("service_tier"):
            info["service_tier"] = event["service_tier"]
    if choice.get("logprobs"):
        info["logprobs"] = choice["logprobs"]
    info["model_provider"] = "openai"
    return AIMessageChunk(
        content=delta.get("content") or "",
        additional_kwargs=additional,
        tool_call_chunks=chunks,
        response_metadata=info,
        usage_metadata=um,
        id=message_id,
    )
