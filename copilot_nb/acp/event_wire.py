"""A turn's events as the JSON the kernel sends to the ACP agent process: plain data, one shape
per event, with nothing of the kernel's (futures, models) in it. Pure, so both ends can test it."""

from __future__ import annotations

import os
from typing import Any

from ..agent.turn import TurnEvent, TurnNote
from ..events import (
    ApprovalNeeded,
    CellChanged,
    Done,
    Failed,
    FileChanged,
    Notice,
    Question,
    ReasoningDelta,
    TextDelta,
    ToolFinished,
    ToolStarted,
    ToolsUpdated,
    UsageReported,
)


def wire_of(event: TurnEvent, cwd: str) -> dict[str, Any] | None:
    """The event as the agent process reads it, or None for one an editor has no use for.
    One branch per event type, as a cell's view has: the dispatch is the whole function."""
    if isinstance(event, TextDelta):
        return {"type": "text", "text": event.text}
    if isinstance(event, ReasoningDelta):
        return {"type": "thought", "text": event.text}
    if isinstance(event, ToolStarted):
        return {
            "type": "tool_started",
            "call_id": event.call_id,
            "name": event.name,
            "arguments": _plain(event.arguments),
            "summary": event.summary,
            "parent": event.parent,
        }
    if isinstance(event, ToolFinished):
        return {
            "type": "tool_finished",
            "call_id": event.call_id,
            "name": event.name,
            "ok": event.ok,
            "summary": event.summary,
            "content": event.content,
        }
    if isinstance(event, Question):
        return {
            "type": "question",
            "call_id": event.call_id,
            "question": event.question,
            "options": list(event.options),
            "asker": event.asker,
        }
    if isinstance(event, ApprovalNeeded):
        preview = event.preview
        return {
            "type": "approval",
            "call_id": event.call_id,
            "name": event.name,
            "arguments": _plain(event.arguments),
            "summary": event.summary,
            "category": event.category,
            "note": event.note,
            "preview": preview.text if preview is not None else "",
        }
    if isinstance(event, FileChanged):
        return {"type": "diff", "path": _absolute(event.path, cwd), "diff": event.diff}
    if isinstance(event, CellChanged):
        return {
            "type": "diff",
            "path": _absolute(event.notebook, cwd),
            "diff": event.diff,
            "cell_id": event.cell_id,
        }
    if isinstance(event, UsageReported):
        usage = event.usage
        return {
            "type": "usage",
            "input": usage.input_tokens,
            "output": usage.output_tokens,
            "estimated": event.estimated,
        }
    if isinstance(event, (Notice, TurnNote)):
        return {"type": "note", "text": event.text}
    if isinstance(event, ToolsUpdated):
        return {"type": "note", "text": event.text}
    if isinstance(event, Done):
        return {"type": "done", "text": event.text}
    if isinstance(event, Failed):
        return {"type": "failed", "error": event.error}
    return None


def _absolute(path: str, cwd: str) -> str:
    return path if os.path.isabs(path) else os.path.normpath(os.path.join(cwd, path))


def _plain(value: Any) -> Any:
    """JSON-safe arguments: what the model sent is data, kept as such (unknown types as text)."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return str(value)
