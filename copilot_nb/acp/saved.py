"""ACP sessions are saved conversations: listed from the conversation file the kernel writes,
and replayed from it as the updates an editor showed the first time."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

from acp import (
    start_tool_call,
    update_agent_message_text,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import SessionInfo

from ..agent.conversations.place import saved_path
from ..agent.conversations.store import ConversationFile
from . import updates


def conversation_file(notebook: str | None) -> ConversationFile:
    """The file a session's kernel saves in: beside its notebook, else the console's file."""
    user_ns = {"__session__": os.path.abspath(notebook)} if notebook else {}
    return ConversationFile(saved_path(user_ns))


def sessions(file: ConversationFile, cwd: str) -> list[SessionInfo]:
    """Each saved conversation with a finished turn, newest first, as `session/list` lists it."""
    if not file.exists():
        return []
    found = sorted(file.summaries(), key=lambda s: s.last, reverse=True)
    return [
        SessionInfo(
            session_id=summary.conversation,
            cwd=cwd,
            title=summary.first_request[:80] or None,
            updated_at=summary.last or None,
        )
        for summary in found
    ]


def replay(records: Iterable[Mapping[str, Any]]) -> list[Any]:
    """A conversation's records as updates: each turn's request as the user's message, then
    what the model said and the tools it called, in order."""
    out: list[Any] = []
    held: dict[str, list[Mapping[str, Any]]] = {}
    for record in records:
        if record.get("kind") == "message":
            held.setdefault(str(record.get("turn", "")), []).append(record.get("message") or {})
        elif record.get("kind") == "turn":
            out.append(update_user_message_text(str(record.get("request", ""))))
            for message in held.pop(str(record.get("turn", "")), []):
                out.extend(_message(message))
    return out


def _message(message: Mapping[str, Any]) -> list[Any]:
    role = message.get("role")
    if role == "assistant":
        said = [update_agent_message_text(message["text"])] if message.get("text") else []
        for call in message.get("tool_calls") or []:
            said.append(
                start_tool_call(
                    call["id"],
                    call["name"],
                    kind=updates.kind_of(call["name"]),  # type: ignore[arg-type]
                    status="completed",
                    raw_input=_arguments(call.get("arguments")),
                )
            )
        return said
    if role == "tool":
        status = "failed" if message.get("is_error") else "completed"
        return [
            update_tool_call(
                str(message.get("tool_call_id", "")),
                status=status,  # type: ignore[arg-type]
                raw_output=message.get("content"),
            )
        ]
    return []


def _arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return raw
    return raw
