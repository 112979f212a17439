"""A tool call as the loop shows and keeps it: the few words that name its target, and the reply
with any argument text that was refused unparsed replaced by a short note."""

from __future__ import annotations

import json
import re
from dataclasses import replace

from ...messages import AssistantMessage, ToolCall
from ...text import first_line
from ...tools.files.patch import is_patch, patch_paths
from ...tools.schemas.arguments import arguments_problem


def kept_reply(message: AssistantMessage) -> AssistantMessage:
    """The reply as the conversation keeps it: a call whose argument text was refused unparsed
    (nested too deep, too big) keeps a short note instead, so every later request stays small."""
    calls = []
    for call in message.tool_calls:
        problem = arguments_problem(call.arguments) if isinstance(call.arguments, str) else None
        if problem is None:
            calls.append(call)
            continue
        size = len(call.raw_arguments or call.arguments)
        note = {"refused_arguments": f"{size:,} characters, not kept: {problem}"}
        calls.append(
            ToolCall(id=call.id, name=call.name, arguments=note, raw_arguments=json.dumps(note))
        )
    if all(a is b for a, b in zip(calls, message.tool_calls, strict=True)):
        return message
    return replace(message, tool_calls=tuple(calls))


_SUMMARY_KEYS = (
    "path",
    "cell_id",
    "notebook",
    "source",
    "glob",
    "regex",
    "pattern",
    "name",
    "code",
)
"""Arguments that name a call's target, first found first. Not `after_cell_id`: an insert's
line names the new cell (its result says which number it got), never the anchor."""


def summarize_call(call: ToolCall) -> str:
    """The few words that identify what a call works on, e.g. the path it reads."""
    if not isinstance(call.arguments, dict):
        return "(arguments are not valid JSON)"
    patch = call.arguments.get("input")
    if is_patch(patch):  # apply_patch: the files it changes
        paths = patch_paths(patch)
        return ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    for key in _SUMMARY_KEYS:
        value = call.arguments.get(key)
        if isinstance(value, str) and value:
            return code_line(value) if key == "code" else first_line(value)
    return ""


_DOCSTRING = re.compile(r"\A\s*[rRuU]?(\"\"\"|''')[\s\S]*?\1[ \t]*(?:\n|\Z)")


def code_line(code: str) -> str:
    """The first line of code past a leading docstring: a pasted script's docstring says what
    the script is, not what this call does."""
    return first_line(_DOCSTRING.sub("", code, count=1)) or first_line(code)
