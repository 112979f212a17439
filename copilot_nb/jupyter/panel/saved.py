"""A saved conversation as the panel's ops: the transcript a panel shows when it opens on a
conversation that began before it (after a kernel restart, or in cells before the panel).

The saved records are turned back into the events a live turn yielded and those go through the
same `event_ops`, so a resumed transcript renders exactly as the live one did: requests, text,
tool cards with their results, diffs, errors, each turn's end. Pure but for
`conversation_ops`, which reads the file.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ...agent.conversations.format import message_from
from ...agent.conversations.keeper import Keeper
from ...agent.conversations.usage import rows
from ...agent.loop.tool_calls import summarize_call
from ...errors import ConfigError
from ...events import (
    CellChanged,
    FileChanged,
    ReasoningDelta,
    TextDelta,
    ToolFinished,
    ToolStarted,
)
from ...messages import AssistantMessage, ToolResult, UserMessage
from ...text import counted, first_line
from .feed import end_op, error_op, event_ops, note_op
from .wire import Op

SHOWN_TURNS = 50
"""Turns a panel shows of a saved conversation; earlier ones are in `%copilot export`."""


def saved_ops(
    records: Iterable[Mapping[str, Any]], *, turns: int = SHOWN_TURNS
) -> tuple[list[Op], list[Mapping[str, Any]]]:
    """The ops of the newest `turns` turns (a note first when there were more), and every
    turn's record (for the meter's note of cost).

    Live, a call's card starts when the call runs, its diffs follow, then its result: so a
    saved call's card is shown when its result is, and the result once its diffs are."""
    by_turn: dict[str, list[Op]] = {}
    ended: list[Mapping[str, Any]] = []
    waiting: dict[str, list[Op]] = {}  # cards of calls whose result has not come yet
    pending: list[Op] = []  # a result's `done`, after the diffs its call made
    for item in records:
        kind = item.get("kind")
        if kind not in ("message", "shown", "turn"):
            continue
        ops = by_turn.setdefault(str(item.get("turn", "")), [])
        if kind == "shown" and item.get("event") == "done":
            done = pending[0] if pending else None
            if done is not None and done["op"] == "done" and done["id"] == item.get("call_id"):
                done["summary"] = str(item.get("summary", ""))
            continue
        if kind == "shown":
            ops += _change_ops(item)
            continue
        ops += pending
        pending = []
        if kind == "message":
            message = _message(item.get("message") or {})
            if isinstance(message, ToolResult):
                ops += waiting.pop(message.tool_call_id, [])
                pending = event_ops(_finished(message))
            elif message is not None:
                ops += _reply_ops(message, waiting)
            continue
        for cards in waiting.values():  # calls a stop or a crash left without a result
            ops += cards
        waiting = {}
        ended.append(item)
        if item.get("error"):
            ops.append(error_op(str(item["error"])))
        ops.append(end_op(str(item.get("outcome", "done"))))
    if by_turn:
        last = list(by_turn.values())[-1]
        last += pending
        for cards in waiting.values():
            last += cards
    kept = list(by_turn.values())
    out: list[Op] = []
    if len(kept) > turns:
        earlier = counted(len(kept) - turns, "earlier turn")
        out.append(note_op(f"{earlier} not shown: %copilot export has them all"))
        kept = kept[-turns:]
    for ops in kept:
        out += ops
    return out, ended


def _message(data: Mapping[str, Any]) -> UserMessage | AssistantMessage | ToolResult | None:
    try:
        message = message_from(data)
    except Exception:  # a message this version cannot read: left out of the view
        return None
    return message if isinstance(message, (UserMessage, AssistantMessage, ToolResult)) else None


def _reply_ops(message: UserMessage | AssistantMessage, waiting: dict[str, list[Op]]) -> list[Op]:
    if isinstance(message, UserMessage):
        return [{"op": "user", "text": message.content}]
    shown: list[Op] = []
    if message.reasoning:
        shown += event_ops(ReasoningDelta(text=message.reasoning))
    if message.text:
        shown += event_ops(TextDelta(text=message.text))
    for call in message.tool_calls:
        started = ToolStarted(
            call_id=call.id, name=call.name, arguments=call.arguments, summary=summarize_call(call)
        )
        waiting[call.id] = event_ops(started)
    return shown


def _finished(message: ToolResult) -> ToolFinished:
    return ToolFinished(
        call_id=message.tool_call_id,
        name=message.name,
        ok=not message.is_error,
        summary=first_line(message.content),
        content=message.content,
    )


def _change_ops(item: Mapping[str, Any]) -> list[Op]:
    diff = str(item.get("diff", ""))
    if item.get("event") == "cell":
        return event_ops(
            CellChanged(
                notebook=str(item.get("notebook", "")),
                cell_id=str(item.get("cell_id", "")),
                change=str(item.get("change", "")),
                diff=diff,
            )
        )
    return event_ops(FileChanged(path=str(item.get("path", "")), diff=diff))


def conversation_ops(keeper: Keeper) -> tuple[list[Op], list[Mapping[str, Any]]]:
    """The session's saved conversation as ops (none when nothing is saved, or unreadable)."""
    recorder = keeper.recorder
    if recorder is None or not recorder.file.exists():
        return [], []
    try:
        return saved_ops(recorder.file.records(recorder.conversation))
    except (OSError, ConfigError):
        return [], []


def usage_note(turns: list[Mapping[str, Any]], prices: Mapping[str, Any]) -> str:
    """What the meter's tooltip adds: premium requests (where Copilot gave a multiplier) and
    cost, or why there is no cost."""
    if not turns:
        return ""
    row = rows([{**t, "conversation": ""} for t in turns], by="conversation", prices=prices)[0]
    cached = int(row.tokens.get("cached", 0))
    parts = [f"{cached:,} input tokens cached"] if cached else []
    if row.premium is not None:
        parts.append(f"{row.premium:g} premium request{'s' * (row.premium != 1)}")
    if row.cost is not None:
        parts.append(f"${row.cost:,.4f}")
    else:
        unpriced = ", ".join(m or "an unnamed model" for m in row.unpriced)
        parts.append(f"cost unknown: no price set for {unpriced} (CopilotMagics.prices)")
    return " · ".join(parts)
