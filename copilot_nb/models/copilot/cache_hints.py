"""Copilot's own prompt-cache hint on Chat Completions: `copilot_cache_control` (pure).

Copilot serves Claude through Chat Completions too, and passes Claude's cache breakpoints on
when a message or tool carries `"copilot_cache_control": {"type": "ephemeral"}`. The field is
Copilot's own and undocumented: its own clients send it (VS Code's Copilot Chat on messages,
the Copilot CLI on the last tool definition), for Claude models, at most four. The places are
those Anthropic's `cache_control` marks (`anthropic/cache.choose_breakpoints`), so the two
wires cache the same prefix; GPT models on Copilot cache by themselves and get none, and no
other server's Chat Completions is sent the field (one may refuse a field it does not know).
"""

from __future__ import annotations

from typing import Any

from ..anthropic.cache import EPHEMERAL, choose_breakpoints, count_marks

COPILOT_CACHE_CONTROL = "copilot_cache_control"


def copilot_cache_hints(body: dict[str, Any]) -> None:
    """Mark, in place, a Chat Completions body's breakpoints with `copilot_cache_control`: on
    the last tool, the system prompt's last message, and the last message of the previous
    request and of this one (a message with no content is skipped: Claude marks no empty
    block)."""
    messages: list[dict[str, Any]] = body.get("messages") or []
    roles = [str(message.get("role", "")) for message in messages]
    system = next((i for i, role in enumerate(roles) if role != "system"), len(roles)) - 1
    chosen = choose_breakpoints(
        roles,
        tools=bool(body.get("tools")),
        system=system >= 0,
        taken=count_marks(body, COPILOT_CACHE_CONTROL),
    )
    ends = [system] if chosen.system else []
    marks = [messages[i] for i in [*ends, *chosen.messages] if messages[i].get("content")]
    if chosen.tools:
        marks.append(body["tools"][-1])
    for target in marks:
        target.setdefault(COPILOT_CACHE_CONTROL, dict(EPHEMERAL))
