"""The upstream model's stream, relayed to a client by either API's encoder.

Both routes (Chat Completions and Responses) open the upstream stream before the response
starts, so an upstream refusal keeps its status (429 and 5xx with the provider's `Retry-After`)
and its words, with the credentials in them masked (`relayed.py`); a failure after the first
event goes out in the stream as each API sends one; a client that goes away closes the
upstream stream at once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any, Protocol

from ..errors import AuthError, ConfigError, ContextLengthError, ModelError, ModelHTTPError
from ..events import ModelEvent
from ..models.base import Model
from .http.replies import error_response, event_stream
from .openai.chat_request import ApiError, ChatRequest
from .relayed import Relay


class StreamEncoder(Protocol):
    """One API's stream framing: its opening bytes, each event's, a failure's, the closing."""

    def start(self) -> bytes: ...
    def event(self, event: ModelEvent) -> bytes: ...
    def error(self, error: ApiError) -> bytes: ...
    def done(self) -> bytes: ...


async def read_json(request: Any) -> Any:
    """The request's JSON body, or OpenAI's error for one that is not JSON."""
    try:
        return await request.json()
    except (ValueError, UnicodeDecodeError):
        raise ApiError("The request body is not valid JSON.", code="invalid_json") from None


def upstream_options(chat: ChatRequest) -> dict[str, Any]:
    """The request's tools and options as our models take them."""
    return {
        "tools": list(chat.tools) or None,
        "tool_choice": chat.tool_choice if chat.tools else None,
        **chat.options,
    }


async def stream_response(
    model: Model, chat: ChatRequest, encoder: StreamEncoder, relay: Relay
) -> Any:
    """A streamed answer, or the upstream's error with its status when it fails at once."""
    events = model.stream(list(chat.messages), **upstream_options(chat))
    try:
        first = await anext(events)
    except (ModelError, ConfigError) as exc:
        await close_stream(events)
        return upstream_error(exc, relay)
    return event_stream(_relay(first, events, encoder, relay))


async def _relay(
    first: ModelEvent, events: AsyncIterator[ModelEvent], encoder: StreamEncoder, relay: Relay
) -> AsyncIterator[bytes]:
    """The upstream's events as the encoder frames them; closing this (the client left) closes
    the upstream."""
    try:
        yield encoder.start()
        try:
            if chunk := encoder.event(first):
                yield chunk
            async for event in events:
                if chunk := encoder.event(event):
                    yield chunk
        except (ModelError, ConfigError) as exc:
            yield encoder.error(api_error_for(exc, relay))
        if closing := encoder.done():
            yield closing
    finally:
        await close_stream(events)


async def close_stream(events: AsyncIterator[Any]) -> None:
    """End an upstream stream now: its connection goes back, or is dropped, at once."""
    close = getattr(events, "aclose", None)
    if close is not None:
        await close()


def api_error_for(exc: ModelError | ConfigError, relay: Relay) -> ApiError:
    """An upstream failure in OpenAI's words: its status where the client can act on it, its
    credentials masked."""
    return relay.error(_api_error(exc))


def _api_error(exc: ModelError | ConfigError) -> ApiError:
    if isinstance(exc, ConfigError):  # an option or message this model cannot take
        return ApiError(str(exc))
    if isinstance(exc, ContextLengthError):
        return ApiError(str(exc), code="context_length_exceeded", param="messages")
    if isinstance(exc, AuthError):
        return ApiError(
            f"the proxy's own credentials were refused upstream: {exc}",
            status=502,
            type="upstream_error",
        )
    if isinstance(exc, ModelHTTPError):
        kind = "rate_limit_error" if exc.status == 429 else "upstream_error"
        if exc.status < 500 and exc.status != 429:
            kind = "invalid_request_error"
        return ApiError(str(exc), status=exc.status, type=kind, code=f"upstream_{exc.status}")
    return ApiError(
        f"the upstream model could not answer: {exc}", status=502, type="upstream_error"
    )


def upstream_error(exc: ModelError | ConfigError, relay: Relay) -> Any:
    """The error response for an upstream failure, its `Retry-After` kept."""
    headers = {}
    retry_after = getattr(exc, "retry_after", None)
    if retry_after is not None:
        headers["retry-after"] = str(max(1, round(retry_after)))
        headers["retry-after-ms"] = str(round(retry_after * 1000))
    return error_response(api_error_for(exc, relay), headers)


def model_unavailable(exc: ConfigError, token: str) -> Any:
    """The server's own model cannot be built (a missing key): a 500, its words masked."""
    refusal = ApiError(str(exc), status=500, type="server_error")
    return error_response(Relay.of(token).error(refusal))
