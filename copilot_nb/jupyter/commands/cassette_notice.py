"""What `%copilot replay` tells the user before a replay starts: whose cassette it is, whether its
recorded approvals will stand in for asking, and each call its replies make that changes or runs
something (read from the recorded replies, not from what the file says of itself)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ...agent.cassette_calls import RecordedCall, recorded_calls
from ...agent.loop.tool_calls import summarize_call
from ...agent.session import CopilotSession
from ...errors import CopilotError
from ...messages import ToolCall
from ...models.cassettes.cassette import Cassette
from ...text import shorten
from ...workspace.workspace import Workspace


def replay_notice(session: CopilotSession, cassette: Cassette, path: Path) -> list[str]:
    """The lines shown under `%copilot replay`: who recorded it, and the calls that act."""
    if cassette.signed:
        lines = [
            "Recorded by you (signed with your key): its recorded approvals answer exactly the "
            "calls they were given for."
        ]
    elif cassette.trusted:
        lines = [
            "Not signed by you; trusted with --trust: its recorded approvals answer exactly the "
            "calls they were given for, once each (no MCP server becomes trusted)."
        ]
    else:
        lines = [
            "Not signed by you: its recorded approvals are not used; each call below that needs "
            "approval asks you again (denied where nobody can answer). To use them, run "
            f"`%copilot replay {path.name} --trust`."
        ]
    categories = _categories(session)
    acting = [
        (call, category)
        for call in recorded_calls(cassette)
        if (category := categories(call)) != "read"
    ]
    if not acting:
        lines.append("Its replies make no call that changes or runs anything.")
        return lines
    lines.append("Calls its replies make that change or run something:")
    for call, category in acting:
        summary = summarize_call(ToolCall(id="", name=call.name, arguments=call.arguments))
        lines.append(f"  #{call.entry} {call.name} ({category}): {shorten(summary, 100)}")
    return lines


def _categories(session: CopilotSession) -> Any:
    """A call's approval category by the kernel's tools as they are now; a tool not known yet
    (defined later in the notebook) is shown as such, an MCP server's tool as external."""
    try:
        tools = {t.name: t for t in session.tools_for(Workspace(os.getcwd()))}
    except (CopilotError, OSError):
        tools = {}

    def category(call: RecordedCall) -> str:
        tool = tools.get(call.name)
        if tool is not None and isinstance(call.arguments, dict):
            return str(tool.category_for(call.arguments))
        return "external" if "__" in call.name else "a tool not defined yet"

    return category
