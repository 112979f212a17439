"""`OpenAIChat`: any OpenAI-compatible Chat Completions server, streamed over httpx.

OpenAI, Azure, GitHub Copilot, Ollama, vLLM, llama.cpp, LM Studio and OpenRouter all speak this
protocol; the differences between them live in the pure decoder (`openai_stream.py`).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx

from ..errors import ModelConnectionError
from ..events import ModelEvent, ModelResponse
from ..messages import AssistantMessage
from .base import MessagesIn, ToolChoice, ToolsIn, collect
from .http import DEFAULT_TIMEOUT, LoopBoundClient, http_error
from .openai_format import chat_request
from .openai_stream import ChatCompletionsDecoder

OPENAI_BASE_URL = "https://api.openai.com/v1"


class OpenAIChat:
    """A Chat Completions model; configured like the official SDK (`OPENAI_API_KEY`, `OPENAI_BASE_URL`)."""

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        base_url: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        http_client: httpx.AsyncClient | None = None,
        provider: str = "openai",
    ) -> None:
        self.name = model
        self.provider = provider
        self.api_key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_BASE_URL).rstrip(
            "/"
        )
        self.headers = dict(headers or {})
        self._http = LoopBoundClient(timeout=timeout, client=http_client)

    def __repr__(self) -> str:
        return f"OpenAIChat({self.name!r}, base_url={self.base_url!r})"

    async def prepare_request(self, *, refresh: bool = False) -> tuple[str, dict[str, str]]:
        """The base URL and headers for the next request.

        Subclasses whose credentials expire (GitHub Copilot) override this; `refresh=True` is
        passed once after a 401, to renew them before the request is repeated.
        """
        headers = {"Accept": "text/event-stream", **self.headers}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return self.base_url, headers

    async def stream(
        self,
        messages: MessagesIn,
        *,
        tools: ToolsIn | None = None,
        tool_choice: ToolChoice = None,
        **options: Any,
    ) -> AsyncIterator[ModelEvent]:
        """Stream one reply: deltas as they arrive, then the complete message."""
        body = chat_request(self.name, messages, tools=tools, tool_choice=tool_choice, **options)
        base_url, headers = await self.prepare_request()
        url = f"{base_url}/chat/completions"
        decoder = ChatCompletionsDecoder()
        received = False
        try:
            async with self._http.get().stream(
                "POST", url, json=body, headers=headers
            ) as response:
                if response.status_code >= 400:
                    await response.aread()
                    raise http_error(
                        response,
                        provider=self.provider,
                        sign_in_hint="Check OPENAI_API_KEY (or the key for this server).",
                    )
                async for chunk in response.aiter_bytes():
                    received = True
                    for event in decoder.feed(chunk):
                        yield event
                    if decoder.done:
                        break
        except httpx.TransportError as exc:
            what = "the stream broke off before the reply was complete" if received else "failed"
            raise ModelConnectionError(
                f"{self.provider}: connection to {self.base_url} {what}: "
                f"{type(exc).__name__}: {exc or 'no details'}"
            ) from exc
        message = decoder.close()
        if not decoder.done and message.finish_reason is None:
            raise ModelConnectionError(
                f"{self.provider}: the stream from {self.base_url} ended before the reply was complete"
            )
        yield ModelResponse(message=message)

    async def complete(
        self,
        messages: MessagesIn,
        *,
        tools: ToolsIn | None = None,
        tool_choice: ToolChoice = None,
        **options: Any,
    ) -> AssistantMessage:
        """The whole reply at once; it is the stream, collected."""
        return await collect(self.stream(messages, tools=tools, tool_choice=tool_choice, **options))

    async def aclose(self) -> None:
        await self._http.aclose()
