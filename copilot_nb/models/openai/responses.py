"""`OpenAIResponses`: a model served by the OpenAI Responses API (`POST /responses`), streamed.

OpenAI's newer models (gpt-5 codex models, o-series reasoning), GitHub Copilot's `/responses`,
OpenRouter and DeepSeek speak it. The conversation is stateless (`store: false`): encrypted
reasoning comes back in `AssistantMessage.reasoning_items` and is sent with the next request.
The wire's quirks live in the pure decoder (`responses_stream.py`).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

from ...events import ModelEvent
from ..base import ModelRequest
from .chat import OpenAIChat
from .responses_request import responses_request
from .responses_stream import ResponsesDecoder

_REASONING_MODELS = re.compile(r"^(o\d|gpt-5|gpt-oss)|codex", re.IGNORECASE)


def reasons(model: str) -> bool:
    """Whether a model name looks like a reasoning model, whose encrypted reasoning is asked for."""
    return _REASONING_MODELS.search(model.rpartition("/")[2]) is not None


class OpenAIResponses(OpenAIChat):
    """A Responses API model on its provider's endpoint (built by hand: OpenAI's, as the official
    SDK configures it); `reasoning` asks for encrypted reasoning (None: guessed from the name)."""

    speaks_for = "openai-responses"

    def __init__(self, model: str, *, reasoning: bool | None = None, **options: Any) -> None:
        """`options` are OpenAIChat's: endpoint, api_key, base_url, headers, timeout,
        max_retries, http_client, vision."""
        super().__init__(model, **options)
        self.reasoning = reasons(model) if reasoning is None else reasoning

    async def _stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Deltas as they arrive, then the complete message (with reasoning items to carry)."""
        for notice in self.lookup_notes():
            yield notice
        request = self.with_images(request)
        body = responses_request(self.name, request, reasoning=self.reasoning)
        self.cache_hints(body, request)
        async for event in self._post(request, "/responses", body, ResponsesDecoder()):
            yield event
