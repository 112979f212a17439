"""`OpenAIResponses`: a model served by the OpenAI Responses API (`POST /responses`), streamed.

OpenAI's newer models (gpt-5 codex models, o-series reasoning), GitHub Copilot's `/responses`,
OpenRouter and DeepSeek speak it. The conversation is stateless (`store: false`): encrypted
reasoning comes back in `AssistantMessage.reasoning_items` and is sent with the next request.
The wire's quirks live in the pure decoder (`responses_stream.py`).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping

import httpx

from ..events import ModelEvent
from .base import ModelRequest
from .openai import OpenAIChat
from .responses_request import responses_request
from .responses_stream import ResponsesDecoder
from .transport import DEFAULT_TIMEOUT, stream_reply

_REASONING_MODELS = re.compile(r"^(o\d|gpt-5|gpt-oss)|codex", re.IGNORECASE)


def reasons(model: str) -> bool:
    """Whether a model name looks like a reasoning model, whose encrypted reasoning is asked for."""
    return _REASONING_MODELS.search(model.rpartition("/")[2]) is not None


class OpenAIResponses(OpenAIChat):
    """A Responses API model, configured like the official SDK (`OPENAI_API_KEY`,
    `OPENAI_BASE_URL`); `reasoning` asks for encrypted reasoning (None: guessed from the name)."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        max_retries: int = 2,
        http_client: httpx.AsyncClient | None = None,
        provider: str = "openai-responses",
        reasoning: bool | None = None,
    ) -> None:
        super().__init__(
            model,
            api_key=api_key,
            base_url=base_url,
            headers=headers,
            timeout=timeout,
            max_retries=max_retries,
            http_client=http_client,
            provider=provider,
        )
        self.reasoning = reasons(model) if reasoning is None else reasoning

    async def _stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Deltas as they arrive, then the complete message (with reasoning items to carry)."""
        body = responses_request(self.name, request, reasoning=self.reasoning)
        auth = self.auth if self.auth is not None else httpx.USE_CLIENT_DEFAULT

        async def send() -> httpx.Response:
            base_url, headers = await self.prepare_request(request)
            client = self._http.get()
            wire = client.build_request("POST", f"{base_url}/responses", json=body, headers=headers)
            return await client.send(wire, stream=True, auth=auth)

        async for event in stream_reply(
            send,
            ResponsesDecoder(),
            provider=self.provider,
            where=self.base_url,
            sign_in_hint=self.sign_in_hint,
            policy=self.retry,
        ):
            yield event
