"""Request bodies a client sends the proxy, for the request tests: a valid one with fields
changed, a conversation, tool calls and tool definitions in OpenAI's shape."""

from __future__ import annotations

from typing import Any

READ = {
    "type": "function",
    "function": {
        "name": "read_file",
        "description": "Read a file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
    },
}
WRITE = {"type": "function", "function": {"name": "write_file"}}
CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "read_file", "arguments": '{"path": "a.py"}'},
}
ASKED = {"role": "assistant", "content": None, "tool_calls": [CALL]}


def body(**fields: Any) -> dict[str, Any]:
    """A valid request, with `fields` changed (None removes one)."""
    base: dict[str, Any] = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
    base.update(fields)
    return {key: value for key, value in base.items() if value is not None}


def chat(*messages: Any, **fields: Any) -> dict[str, Any]:
    """A request whose conversation is a user's "hi" and then `messages` (from messages[1])."""
    return body(messages=[{"role": "user", "content": "hi"}, *messages], **fields)


def user(content: Any) -> dict[str, Any]:
    return {"role": "user", "content": content}


def with_call(**changes: Any) -> dict[str, Any]:
    """An assistant message (messages[1]) whose one tool call has `changes` (None removes)."""
    function = {**CALL["function"], **changes.pop("function", {})}
    entry = {**CALL, "function": {k: v for k, v in function.items() if v is not None}, **changes}
    return chat(
        {"role": "assistant", "tool_calls": [{k: v for k, v in entry.items() if v is not None}]}
    )


def tool_fn(**function: Any) -> dict[str, Any]:
    return {"type": "function", "function": function}
