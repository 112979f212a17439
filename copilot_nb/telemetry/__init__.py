"""OpenTelemetry traces of each turn, named as the GenAI semantic conventions name them.

Off unless asked: the standard `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
`OTEL_EXPORTER_OTLP_ENDPOINT` is set, or the administrator's policy names a collector
(`"telemetry": {"endpoint": ...}`). Only then is the OpenTelemetry SDK (the `otel` extra)
imported, by `spans.py`; this module imports nothing of it, so `%load_ext` stays fast.
Message content is never exported unless `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`
is true (or the policy says `"content": true`), and a policy's `"content": false` wins over it.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..policy import telemetry_rules

ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
"""The OpenTelemetry variables that name a collector; either turns traces on."""
CONTENT_VARIABLE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
"""The user's opt-in to message content in spans (the instrumentations' common variable)."""


@dataclass(frozen=True, kw_only=True)
class TraceSettings:
    """Where traces go and whether message content goes with them."""

    endpoint: str
    """The policy's collector (OTLP/HTTP, spans posted to `{endpoint}/v1/traces`); "": the
    exporter reads the `OTEL_*` variables itself."""
    content: bool


def trace_settings(environ: Mapping[str, str] | None = None) -> TraceSettings | None:
    """The traces asked for now, or None when telemetry is off."""
    env = os.environ if environ is None else environ
    endpoint, content_rule = telemetry_rules()
    if not endpoint and not any(env.get(name) for name in ENDPOINT_VARIABLES):
        return None
    opted = env.get(CONTENT_VARIABLE, "").strip().lower() in ("1", "true", "yes")
    content = content_rule if content_rule is not None else opted
    return TraceSettings(endpoint=endpoint, content=content and content_rule is not False)


_tool_context: list[Any] = []
"""The OpenTelemetry context of the tool call running now (its `execute_tool` span), if any."""


def running_tool(context: Any | None) -> None:
    """Name the context of the tool call now running (None: no call runs)."""
    _tool_context[:] = [context] if context is not None else []


@contextlib.contextmanager
def tool_context() -> Iterator[None]:
    """Inside: the running tool call's span is the current one, so a request the MCP SDK sends
    carries its W3C `traceparent` in `params._meta` (nothing while telemetry is off)."""
    if not _tool_context:
        yield
        return
    from opentelemetry import context as otel_context

    token = otel_context.attach(_tool_context[0])
    try:
        yield
    finally:
        otel_context.detach(token)


__all__ = [
    "CONTENT_VARIABLE",
    "ENDPOINT_VARIABLES",
    "TraceSettings",
    "running_tool",
    "tool_context",
    "trace_settings",
]
