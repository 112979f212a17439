"""The kernel's turn events (`event_wire.py`) as ACP session updates: text as message chunks,
tool calls with their kind, edits with `diff` content, a plan as `plan`, usage as `usage_update`.
Pure: it reads only the event, so every mapping is tested without a kernel."""

from __future__ import annotations

import re
from typing import Any

from acp import (
    plan_entry,
    start_tool_call,
    tool_content,
    tool_diff_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
)
from acp.schema import PermissionOption, ToolCallUpdate, UsageUpdate

KINDS: dict[str, str] = {
    "read_file": "read",
    "list_directory": "read",
    "list_cells": "read",
    "read_cell": "read",
    "find_cell": "search",
    "list_variables": "read",
    "inspect_variable": "read",
    "get_history": "read",
    "load_skill": "read",
    "write_file": "edit",
    "edit_file": "edit",
    "edit_cell": "edit",
    "insert_cell": "edit",
    "delete_cell": "delete",
    "delete_path": "delete",
    "move_path": "move",
    "run_code": "execute",
    "run_cell": "execute",
    "find_files": "search",
    "search_text": "search",
    "tool_search": "search",
    "fetch": "fetch",
    "web_fetch": "fetch",
    "ask_user": "think",
    "delegate": "think",
}
"""Each built-in tool's ACP kind; an MCP tool is "fetch" if its name says it, else "other"."""

ALLOW_ONCE, ALLOW_ALWAYS, REJECT_ONCE = "allow_once", "allow_always", "reject_once"
PERMISSION_OPTIONS = [
    PermissionOption(option_id=ALLOW_ONCE, name="Allow once", kind="allow_once"),
    PermissionOption(option_id=ALLOW_ALWAYS, name="Always allow this tool", kind="allow_always"),
    PermissionOption(option_id=REJECT_ONCE, name="Reject", kind="reject_once"),
]
PLAN_OPTIONS = [
    PermissionOption(option_id=ALLOW_ONCE, name="Carry out the plan", kind="allow_once"),
    PermissionOption(option_id=REJECT_ONCE, name="Keep planning", kind="reject_once"),
]
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s*)?(?P<text>\S.*)$")


def kind_of(name: str) -> str:
    """The ACP tool kind of a tool by its name (`read`, `edit`, `execute`, `search`, `fetch`)."""
    if name in KINDS:
        return KINDS[name]
    return "fetch" if "fetch" in name or "http" in name else "other"


def title_of(event: dict[str, Any]) -> str:
    """What the editor shows on a tool call's card: the call's own summary, else its name."""
    summary = str(event.get("summary") or "")
    return f"{event['name']}: {summary}" if summary else str(event["name"])


def update_of(event: dict[str, Any]) -> Any | None:
    """The session update for one event, or None for those that are not updates (an approval,
    a question, the end): the agent handles those itself."""
    kind = event["type"]
    if kind == "text":
        return update_agent_message_text(event["text"])
    if kind == "thought":
        return update_agent_thought_text(event["text"])
    if kind == "tool_started":
        return start_tool_call(
            event["call_id"],
            title_of(event),
            kind=kind_of(event["name"]),  # type: ignore[arg-type]
            status="in_progress",
            raw_input=event.get("arguments"),
        )
    if kind == "tool_finished":
        return update_tool_call(
            event["call_id"],
            status="completed" if event["ok"] else "failed",
            content=[tool_content(_text_block(event["content"]))] if event["content"] else None,
            raw_output=event["content"],
        )
    if kind == "note":
        return update_agent_thought_text(event["text"] + "\n")
    return None


def diff_update(event: dict[str, Any], call_id: str) -> Any:
    """A file's or a cell's change as `diff` content on the call that made it."""
    old, new = sides_of(event["diff"])
    return update_tool_call(call_id, content=[tool_diff_content(event["path"], new, old)])


def sides_of(diff: str) -> tuple[str, str]:
    """A unified diff's old and new text (its hunks, context included): what an editor's diff
    view shows of the change."""
    old: list[str] = []
    new: list[str] = []
    for line in diff.splitlines():
        if line.startswith(("---", "+++", "@@")):
            continue
        if line.startswith("-"):
            old.append(line[1:])
        elif line.startswith("+"):
            new.append(line[1:])
        else:
            text = line[1:] if line.startswith(" ") else line
            old.append(text)
            new.append(text)
    return "\n".join(old), "\n".join(new)


def plan_of(text: str) -> Any:
    """A plan's Markdown as ACP plan entries: each list item one entry, else the whole text."""
    items = [m.group("text") for line in text.splitlines() if (m := _LIST_ITEM.match(line))]
    entries = items or [text.strip() or "(empty plan)"]
    return update_plan([plan_entry(item, priority="medium", status="pending") for item in entries])


def permission_call(event: dict[str, Any]) -> ToolCallUpdate:
    """The tool call an approval asks about, as `session/request_permission` names it."""
    raw = {"plan": event["arguments"].get("plan")} if event["category"] == "plan" else None
    return ToolCallUpdate(
        tool_call_id=event["call_id"],
        title=title_of(event),
        kind=kind_of(event["name"]) if event["category"] != "plan" else "switch_mode",  # type: ignore[arg-type]
        status="pending",
        raw_input=raw or event.get("arguments"),
        content=[tool_content(_text_block(event["preview"]))] if event.get("preview") else None,
    )


def usage_update(used: int, size: int) -> UsageUpdate:
    """Tokens in context against the window."""
    return UsageUpdate(session_update="usage_update", used=used, size=max(size, used))


def _text_block(text: str) -> Any:
    from acp import text_block

    return text_block(text)
