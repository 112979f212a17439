"""`POST /v1/responses`: the Responses API over the same backend as Chat Completions.

The request becomes the chat route's `ChatRequest` (`responses_request.py`), goes to the same
model with the same tools and options, and comes back in the Responses API's events
(`responses_events.py`): streamed as OpenAI streams them, or as one Response object, which is
the same encoder given the model's final message (what `complete()` returns), so the two
answers cannot differ. Tool calls come back to the
client to run (pass-through); the proxy stores nothing (`store` is always false).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from ..errors import ConfigError, ModelError
from ..events import ModelResponse
from .backend import Backend
from .http.replies import error_response, json_response
from .openai.chat_request import ApiError
from .openai.responses_events import ResponseEncoder
from .openai.responses_request import parse_responses_request
from .relayed import Relay, model_credentials
from .upstream import (
    close_stream,
    model_unavailable,
    read_json,
    stream_response,
    upstream_error,
    upstream_options,
)


async def create_response(backend: Backend, request: Any, token: str = "") -> Any:
    """Answer one Responses request; `token` is masked, with the model's key, in what an
    upstream failure relays."""
    try:
        parsed = parse_responses_request(await read_json(request), models=backend.model_names())
        model = backend.model(parsed.chat.model)
    except ApiError as exc:
        return error_response(exc)
    except ConfigError as exc:
        return model_unavailable(exc, token)
    chat = parsed.chat
    relay = Relay.of(token, model_credentials(model))
    encoder = ResponseEncoder(
        model=chat.model,
        response_id=f"resp_{uuid.uuid4().hex}",
        created=int(time.time()),
        echo=parsed.echo,
    )
    if chat.stream:
        return await stream_response(model, chat, encoder, relay)
    events = model.stream(list(chat.messages), **upstream_options(chat))
    try:
        async for event in events:
            if isinstance(event, ModelResponse):  # the whole reply, as complete() has it
                encoder.event(event)
    except (ModelError, ConfigError) as exc:
        return upstream_error(exc, relay)
    finally:
        await close_stream(events)
    return json_response(encoder.response)
