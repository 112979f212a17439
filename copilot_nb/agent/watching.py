"""A turn's watch: its budget and, while telemetry is on, its spans (`telemetry.watch`).

Kept apart from the stages so the OpenTelemetry SDK is imported only here, and only when
telemetry is on. The conversation's id (the spans' `gen_ai.conversation.id`, LiteLLM's
`x-litellm-trace-id`) lives as long as the session's conversation: `new` starts another.
"""

from __future__ import annotations

import uuid
import weakref
from collections.abc import Callable, Iterable
from typing import Any

from ..events import AgentEvent, Done
from ..models.base import Model
from ..policy import budget_left
from ..telemetry import trace_settings
from ..telemetry.watch import TurnWatch
from ..tools.redaction.masking import redact_text
from .conversations.usage import tokens_of
from .turn import TurnEvent, TurnNote

_conversations: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def conversation_id(host: Any, *, new: bool = False) -> str:
    """The id of the session's conversation, made at its first turn and again after `new`
    (a turn with no session, the proxy's, is a conversation of its own)."""
    if host is None:
        return uuid.uuid4().hex
    found = _conversations.get(host)
    if found is None or new:
        found = _conversations[host] = uuid.uuid4().hex
    return found


def watch_for(host: Any, model: Model, *, new: bool = False, prompt: str = "") -> TurnWatch:
    """The watch of one turn of `host`'s conversation with `model`."""
    conversation = conversation_id(host, new=new)
    settings = trace_settings()
    trace = None
    if settings is not None:
        from ..telemetry.spans import TurnTrace, tracer_for

        trace = TurnTrace(
            tracer_for(settings),
            provider=model.provider or model.name.partition(":")[0],
            model=model.name,
            conversation=conversation,
            content=settings.content,
            tokens_of=lambda event: tokens_of(event.usage),
            mask=lambda text: redact_text(text)[0],
            prompt=prompt,
        )
    return TurnWatch(
        conversation=conversation, trace=trace, tokens_of=lambda event: tokens_of(event.usage)
    )


def with_budget_note(watch: TurnWatch) -> Callable[[AgentEvent], Iterable[TurnEvent]]:
    """The watch's hook on each event, and at the answer a note of what the budgets leave."""

    def before(event: AgentEvent) -> Iterable[TurnEvent]:
        watch.before(event)
        left = budget_left() if isinstance(event, Done) else ""
        return (TurnNote(text=left),) if left else ()

    return before
