"""One turn's spans, as the OpenTelemetry GenAI semantic conventions name them.

`invoke_agent copilot_nb` spans the turn; under it a `chat {model}` span for each model request
(opened as the request leaves, closed by its usage) and an `execute_tool {tool}` span for each
tool call, with the approval decision as a `gen_ai.tool.call.decision` event (a proposed name:
the conventions have no approval event yet). Imported only while telemetry is on: it imports
the OpenTelemetry SDK and its OTLP/HTTP exporter (the `otel` extra).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Mapping
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.propagate import inject
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor
from opentelemetry.trace import Span, SpanKind, Status, StatusCode

from ..events import (
    AgentEvent,
    ApprovalNeeded,
    Done,
    Failed,
    ToolFinished,
    ToolStarted,
    UsageReported,
)
from . import ENDPOINT_VARIABLES, TraceSettings, running_tool

AGENT = "copilot_nb"
DECISION_EVENT = "gen_ai.tool.call.decision"

_providers: dict[tuple[str | None, ...], TracerProvider] = {}


def tracer_for(settings: TraceSettings) -> trace.Tracer:
    """The kernel's tracer for this collector, made once: our own provider (a user's global
    one is left alone), batching spans to the OTLP/HTTP exporter."""
    key = (settings.endpoint, *(os.environ.get(name) for name in ENDPOINT_VARIABLES))
    provider = _providers.get(key)
    if provider is None:
        endpoint = settings.endpoint.rstrip("/") + "/v1/traces" if settings.endpoint else None
        provider = TracerProvider(resource=Resource.create({"service.name": AGENT}))
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
        _providers[key] = provider
    return provider.get_tracer(AGENT)


def shutdown() -> None:
    """Send the spans still batched and stop every exporter (an unload, a test's end)."""
    while _providers:
        _, provider = _providers.popitem()
        provider.shutdown()


class TurnTrace:
    """The spans of one turn, fed its events in order."""

    def __init__(
        self,
        tracer: trace.Tracer,
        *,
        provider: str,
        model: str,
        conversation: str,
        content: bool,
        tokens_of: Callable[[UsageReported], Mapping[str, int]],
        mask: Callable[[str], str],
        prompt: str = "",
    ) -> None:
        self._tracer, self._model = tracer, model
        self._content, self._tokens_of, self._mask = content, tokens_of, mask
        common = {"gen_ai.provider.name": provider, "gen_ai.conversation.id": conversation}
        self._common = common
        self.agent = tracer.start_span(
            f"invoke_agent {AGENT}",
            kind=SpanKind.INTERNAL,
            attributes={
                **common,
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": AGENT,
                "gen_ai.request.model": model,
            },
        )
        if content:  # opted in: the request and, at the end, the answer (secrets masked)
            self.agent.set_attribute("gen_ai.input.messages", self._messages("user", prompt))
        self._inside = trace.set_span_in_context(self.agent)
        self.chat: Span | None = None
        self.tools: dict[str, Span] = {}
        self._decided: set[str] = set()
        self.failed = ""

    def request(self) -> None:
        """A model request is leaving: its `chat` span opens (once, whatever its retries)."""
        if self.chat is None:
            self.chat = self._tracer.start_span(
                f"chat {self._model}",
                context=self._inside,
                kind=SpanKind.CLIENT,
                attributes={
                    **self._common,
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": self._model,
                },
            )

    def traceparent(self) -> dict[str, str]:
        """The W3C headers of the request now leaving (its `chat` span)."""
        carrier: dict[str, str] = {}
        span = self.chat or self.agent
        inject(carrier, context=trace.set_span_in_context(span))
        return carrier

    def observe(self, event: AgentEvent) -> None:
        """Open, annotate or close the span an event belongs to."""
        if isinstance(event, UsageReported):
            self._usage(event)
        elif isinstance(event, ToolStarted):
            self._tool_started(event)
        elif isinstance(event, ApprovalNeeded):
            self._asked(event)
        elif isinstance(event, ToolFinished):
            self._tool_finished(event)
        elif isinstance(event, Done) and self._content:
            self.agent.set_attribute(
                "gen_ai.output.messages", self._messages("assistant", event.text)
            )
        elif isinstance(event, Failed) and not self.failed:
            self.fail("_OTHER")

    def fail(self, kind: str) -> None:
        """The turn failed (`kind`: `error.type`): the open request and the turn say so."""
        self.failed = kind
        for span in (self.chat, self.agent):
            if span is not None:
                span.set_attribute("error.type", kind)
                span.set_status(Status(StatusCode.ERROR))
        if self.chat is not None:
            self.chat.end()
            self.chat = None

    def end(self) -> None:
        """The turn is over: every span still open ends (a tool call cut off, the turn)."""
        running_tool(None)
        for span in [*self.tools.values(), self.chat]:
            if span is not None:
                span.end()
        self.tools.clear()
        self.chat = None
        self.agent.end()

    def _usage(self, event: UsageReported) -> None:
        if event.parent:  # a subagent's request: counted, not one of this turn's own spans
            return
        self.request()
        assert self.chat is not None
        tokens = self._tokens_of(event)
        self.chat.set_attributes(
            {
                "gen_ai.response.model": str(event.usage.raw.get("model") or self._model),
                "gen_ai.usage.input_tokens": int(tokens.get("input", 0)),
                "gen_ai.usage.output_tokens": int(tokens.get("output", 0)),
                "gen_ai.usage.cache_read.input_tokens": int(tokens.get("cached", 0)),
                "gen_ai.usage.cache_creation.input_tokens": int(tokens.get("cache_write", 0)),
                "copilot_nb.usage.estimated": event.estimated,
            }
        )
        self.chat.end()
        self.chat = None

    def _tool_started(self, event: ToolStarted) -> None:
        attributes: dict[str, Any] = {
            **self._common,
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": event.name,
            "gen_ai.tool.call.id": event.call_id,
            "gen_ai.tool.type": "function",
        }
        if self._content:
            attributes["gen_ai.tool.call.arguments"] = self._mask(str(event.arguments))
        span = self._tracer.start_span(
            f"execute_tool {event.name}",
            context=self._inside,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
        )
        self.tools[event.call_id] = span
        if not event.parent:
            running_tool(trace.set_span_in_context(span, Context()))

    def _asked(self, event: ApprovalNeeded) -> None:
        """Someone is asked: the decision is recorded when they answer (or the turn ends)."""
        span = self.tools.get(event.call_id)
        if span is None:
            return
        self._decided.add(event.call_id)

        def answered(future: asyncio.Future[tuple[bool, str]]) -> None:
            allowed = not future.cancelled() and future.exception() is None and future.result()[0]
            self._decide(span, event.call_id, "allow" if allowed else "deny", asked=True)

        event.decision.add_done_callback(answered)

    def _tool_finished(self, event: ToolFinished) -> None:
        span = self.tools.pop(event.call_id, None)
        if span is None:
            return
        if event.call_id not in self._decided:  # decided by a rule, no one asked
            denied = not event.ok and event.summary.startswith("denied")
            self._decide(span, event.call_id, "deny" if denied else "allow", asked=False)
        self._decided.discard(event.call_id)
        if not event.ok:
            span.set_attribute("error.type", "tool_error")
            span.set_status(Status(StatusCode.ERROR))
        if self._content:
            span.set_attribute("gen_ai.tool.call.result", self._mask(event.content))
        span.end()
        if not event.parent:
            running_tool(None)

    def _messages(self, role: str, text: str) -> str:
        """One message as the conventions' `gen_ai.*.messages` JSON, its text masked."""
        parts = [{"type": "text", "content": self._mask(text)}]
        return json.dumps([{"role": role, "parts": parts}], ensure_ascii=False)

    def _decide(self, span: Span, call_id: str, decision: str, *, asked: bool) -> None:
        span.add_event(
            DECISION_EVENT,
            {
                "gen_ai.tool.call.id": call_id,
                "gen_ai.tool.call.decision": decision,
                "gen_ai.tool.call.decision.asked": asked,
            },
        )
