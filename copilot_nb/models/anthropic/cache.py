"""Where a request marks Claude's prompt cache (pure): one choice, written by each wire.

Claude reads a cached prefix only up to a breakpoint the request marks, at most
`MAX_BREAKPOINTS` of them. `choose_breakpoints` picks the same places for every wire that
reaches Claude: the end of the tools and of the system prompt (the same for every request of a
conversation), the end of the previous request (so its cache is read) and of this one (so the
next request reads it). Anthropic's Messages API takes them as `cache_control` on a content
block (`cache_breakpoints`, here); Copilot's Chat Completions takes its own
`copilot_cache_control` on a message or tool (`copilot/cache_hints.py`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..capabilities import by_model_name

EPHEMERAL = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4
"""Anthropic refuses a request with more `cache_control` blocks than this."""
ASKING = frozenset({"user", "tool"})
"""The roles a request ends with: the user's words, or the results of the last tool calls."""
_CACHEABLE = ("text", "image", "tool_use", "tool_result", "document")
"""Block types that may carry a breakpoint (thinking blocks may not)."""
BREAKPOINT_MODELS: dict[str, bool] = {"claude": True}
"""Model lines that read a cached prefix only up to a breakpoint the request marks, by
model-name prefix; OpenAI's and Google's models cache a repeated prefix by themselves."""


def takes_breakpoints(name: str, listed: str = "") -> bool:
    """Whether a model's prompt cache needs breakpoints: by the family its provider lists
    (Copilot's `capabilities.family`, e.g. `claude-sonnet-4`) once known, else by its name."""
    return by_model_name(listed or name, BREAKPOINT_MODELS, False)


@dataclass(frozen=True, kw_only=True)
class Breakpoints:
    """The places chosen for one request, never more than `MAX_BREAKPOINTS` in all."""

    tools: bool = False
    """At the end of the tool list."""
    system: bool = False
    """At the end of the system prompt."""
    messages: tuple[int, ...] = ()
    """At the end of these messages (indices): this request's last, then the previous one's."""


def choose_breakpoints(
    roles: Sequence[str], *, tools: bool, system: bool, taken: int = 0
) -> Breakpoints:
    """The breakpoints of a request whose messages have these `roles`, with a tool list and a
    system prompt where said; `taken` breakpoints the caller set itself count towards the limit.

    A request ends where a run of user and tool messages ends (the next message is the model's),
    so the last two such ends are this request's and the previous one's, on any wire: Anthropic's
    alternating turns and Chat Completions' separate tool messages alike."""
    ends = [
        i
        for i, role in enumerate(roles)
        if role in ASKING and (i + 1 == len(roles) or roles[i + 1] not in ASKING)
    ]
    room = max(0, MAX_BREAKPOINTS - taken)
    mark_tools = tools and room > 0
    room -= mark_tools
    mark_system = system and room > 0
    room -= mark_system
    return Breakpoints(
        tools=mark_tools, system=mark_system, messages=tuple(reversed(ends[-2:]))[:room]
    )


def count_marks(value: Any, key: str) -> int:
    """How many objects in a request body carry `key` (breakpoints a caller set)."""
    if isinstance(value, dict):
        return (key in value) + sum(count_marks(v, key) for v in value.values())
    if isinstance(value, list):
        return sum(count_marks(v, key) for v in value)
    return 0


def cache_breakpoints(body: dict[str, Any]) -> None:
    """Mark, in place, a Messages API body's breakpoints (`choose_breakpoints`) with
    `cache_control` on the last block of each place that may carry one."""
    if isinstance(body.get("system"), str):
        body["system"] = [{"type": "text", "text": body["system"]}]
    turns = body.get("messages") or []
    chosen = choose_breakpoints(
        [turn.get("role", "") for turn in turns],
        tools=bool(body.get("tools")),
        system=bool(body.get("system")),
        taken=count_marks(body, "cache_control"),
    )
    marks: list[dict[str, Any] | None] = []
    if chosen.tools:
        marks.append(body["tools"][-1])
    if chosen.system:
        marks.append(body["system"][-1])
    marks += [_last_cacheable(turns[i]) for i in chosen.messages]
    for block in marks:
        if block is not None:
            block.setdefault("cache_control", dict(EPHEMERAL))


def _last_cacheable(turn: dict[str, Any]) -> dict[str, Any] | None:
    """A turn's last block that may carry a breakpoint (a string content becomes a block)."""
    if isinstance(turn.get("content"), str):
        if not turn["content"]:
            return None
        turn["content"] = [{"type": "text", "text": turn["content"]}]
    for block in reversed(turn.get("content") or []):
        kind = block.get("type") if isinstance(block, dict) else None
        if kind in _CACHEABLE and (kind != "text" or block.get("text")):
            return block
    return None
