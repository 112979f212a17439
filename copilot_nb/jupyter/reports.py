"""What `%copilot undo`, `%copilot diff` and `%copilot history` show: safe HTML with a plain-text
twin, built from what the workspace and the agent report (none of them renders anything itself)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..agent.context.compaction import SummaryMessage, is_elided
from ..agent.context.window import ContextWindow
from ..messages import AssistantMessage, Message, ToolResult
from ..text import counted, diffstat, first_line, shorten
from ..workspace.restore import RestoredPath
from .safe_html import Rendered, diff_html, escape, table_html

MAX_RENDER_LINES = 400
"""Diff lines shown by `render_diff`; the rest is counted."""


_VERBS = {
    "restored": "restored",
    "recreated": "recreated (the turn had deleted it)",
    "removed": "removed (the turn had created it)",
    "moved back": "moved back",
    "kept": "kept",
    "not restored": "not restored",
}


def render_undo(restored: Sequence[RestoredPath]) -> Rendered:
    """`%copilot undo`: which turn was undone, and what happened to each path."""
    if not restored:
        return _paragraph(
            "Nothing to undo: no turn of this session changed a file (or all were undone)."
        )
    label = _label(restored[0].turn)
    items = [
        (item.path, _VERBS[item.action] + (f" — {item.detail}" if item.detail else ""))
        for item in restored[:100]
    ]
    loud = {item.path for item in restored[:100] if item.action == "not restored"}
    more = f"… and {len(restored) - 100} more" if len(restored) > 100 else ""
    paths = counted(len(restored), "path")
    lead = f"Undid the turn “{label}” ({paths}):"
    markup = (
        f"<p>Undid the turn <strong>{escape(label)}</strong> ({paths}):</p><ul>"
        + "".join(
            f"<li><code>{escape(path)}</code> "
            + (f"<strong>{escape(what)}</strong>" if path in loud else escape(what))
            + "</li>"
            for path, what in items
        )
        + (f"<li>{escape(more)}</li>" if more else "")
        + "</ul>"
    )
    plain = [
        lead,
        "",
        *(f"- {path} {what}" for path, what in items),
        *([f"- {more}"] if more else []),
    ]
    return Rendered(markup, "\n".join(plain))


def render_diff(diff: str, *, label: str = "", max_lines: int = MAX_RENDER_LINES) -> Rendered:
    """`%copilot diff`: a diffstat per file, then the unified diff (escaped, never fenced)."""
    if not diff.strip():
        return _paragraph(
            "No changes to show: the agent has not changed a file or a cell in this session's "
            "last turns."
        )
    stats = diffstat(diff)
    lines = diff.rstrip("\n").split("\n")
    shown = lines[:max_lines]
    if len(lines) > max_lines:
        shown.append(f"… {len(lines) - max_lines:,} more diff lines not shown")
    counts = [(name, f"+{added} −{removed}") for name, (added, removed) in stats.items()]
    if label:
        lead = f"Changes of the turn “{_label(label)}”:"
        heading = f"Changes of the turn <strong>{escape(_label(label))}</strong>:"
    else:
        lead = heading = "Changes of the last turn:"
    markup = (
        f"<p>{heading}</p><ul>"
        + "".join(f"<li><code>{escape(name)}</code> {escape(n)}</li>" for name, n in counts)
        + "</ul>"
        + diff_html("\n".join(shown))
    )
    plain = [lead, "", *(f"- {name} {n}" for name, n in counts), "", *shown]
    return Rendered(markup, "\n".join(plain))


def _paragraph(text: str) -> Rendered:
    return Rendered(f"<p>{escape(text)}</p>", text)


def render_history(agent: Any) -> Rendered:
    """`%copilot history`: the token meter and every message with what it costs, as safe HTML."""
    context: ContextWindow = getattr(agent, "context", None) or ContextWindow()
    tools = agent.tools.list_tools()
    report = context.report(agent.messages, agent.model, tools)
    share = report.used / report.input_limit if report.input_limit else 0
    meter = (
        f"{report.used:,} of {report.input_limit:,} input tokens ({share:.0%}) · "
        f"window {report.window:,}"
    )
    notes = [
        f"system prompt {report.system:,} · tools {report.tools:,} · "
        f"conversation {report.history:,} tokens in {report.messages} messages"
    ]
    if report.compactions:
        notes.append(
            f"{report.compactions} compaction{'s' * (report.compactions != 1)}: "
            f"{report.elided} tool results shortened, {report.summarized} messages summarised"
        )
    if report.reports:
        notes.append(f"estimates × {report.ratio:.2f}, from {report.reports} usage reports")
    rows = [
        (
            number,
            _role(message),
            f"{context.calibration.scale(context.cost(message)):,}",
            _gist(message),
        )
        for number, message in enumerate(agent.messages, 1)
    ]
    header = ("#", "role", "tokens", "message")
    markup = (
        f"<p><strong>{escape(report.model)}</strong> · {escape(meter)}</p>"
        + "".join(f"<p>{escape(note)}</p>" for note in notes)
        + table_html(header, rows, align="rlrl")
    )
    plain = [f"{report.model} · {meter}", *notes, ""]
    plain += [f"{n:>3}  {role:<16} {tokens:>8}  {gist}" for n, role, tokens, gist in rows]
    return Rendered(markup, "\n".join(plain))


def _role(message: Message) -> str:
    if isinstance(message, SummaryMessage):
        return "summary"
    if isinstance(message, ToolResult):
        return "tool (shortened)" if is_elided(message.content) else "tool"
    return message.role


def _gist(message: Message, limit: int = 80) -> str:
    if isinstance(message, AssistantMessage):
        calls = ", ".join(f"{c.name}({_args(c.arguments)})" for c in message.tool_calls)
        text = " ".join(part for part in (message.text, f"→ {calls}" if calls else "") if part)
    elif isinstance(message, ToolResult):
        text = f"{message.name}: {message.content}"
    else:
        text = message.content
    return shorten(" ".join(text.split()), limit)


def _args(arguments: Any) -> str:
    if not isinstance(arguments, dict):
        return "…"
    first = next(iter(arguments.items()), None)
    return "" if first is None else f"{first[0]}={str(first[1])[:40]!r}"


def _label(text: str) -> str:
    """A turn's prompt as a one-line label."""
    return first_line(text, 80) or "(no label)"
