"""`OpenAIChat`: any OpenAI-compatible Chat Completions server, streamed over httpx.

OpenAI, Azure, GitHub Copilot, Ollama, vLLM, llama.cpp, LM Studio and OpenRouter all speak this
protocol; the differences between them live in the pure decoder (`chat_stream.py`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx

from ...errors import LookupFailed, ModelConnectionError, ModelHTTPError
from ...events import ModelEvent, Notice
from ...text import SERVER_NAME_CHARS, server_text
from ..base import ChatModel, ModelRequest
from ..endpoint import Endpoint, OnEndpoint
from ..lookups import LookupLimits, lookup
from ..providers import row
from ..server_props import ask_window, configured_window, is_local, reply_limit
from ..transport import (
    DEFAULT_TIMEOUT,
    StreamDecoder,
    error_text,
    http_error,
    rejects_tools,
    stream_reply,
)
from .chat_request import chat_request, prompt_cache_key
from .chat_stream import ChatCompletionsDecoder

OPENAI_BASE_URL = row("openai").base_url
"""OpenAI's own API, the only one that is sent `prompt_cache_key` unasked."""
LIST_TIMEOUT = httpx.Timeout(30.0, connect=10.0)
"""How long a model list may take (a listing, not a generation)."""


class OpenAIChat(OnEndpoint, ChatModel):
    """A Chat Completions model on its provider's endpoint; built by hand, on OpenAI's
    (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, as the official SDK reads them)."""

    speaks_for = "openai"
    """The built-in provider whose endpoint a model built by hand (with no `endpoint`) uses."""

    def __init__(
        self,
        model: str,
        *,
        endpoint: Endpoint | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: httpx.Timeout = DEFAULT_TIMEOUT,
        max_retries: int = 2,
        http_client: httpx.AsyncClient | None = None,
        vision: bool | None = None,
        context_window: int | None = None,
        max_output_tokens: int | None = None,
    ) -> None:
        """`endpoint`: its provider's, as a row builds it; without one, `speaks_for`'s built
        with `api_key` (None: its variables, read at each request), `base_url`, `headers`,
        `timeout`, `max_retries` and `http_client`.
        `vision`: whether the model accepts images (None: known models by name).
        `context_window`: the tokens the server runs the model with (None: the user's
        `COPILOT_NB_CONTEXT_WINDOW`, else what a local server says, else known by name);
        `max_output_tokens`: the most a reply may take (None: an eighth of a known window)."""
        self.name = model
        self.endpoint: Endpoint = endpoint or row(self.speaks_for).endpoint(
            model,
            api_key=api_key,
            base_url=base_url,
            headers=headers,
            timeout=timeout,
            max_retries=max_retries,
            http_client=http_client,
        )
        self.vision = vision
        self.context_window = context_window
        self.max_output_tokens = max_output_tokens
        self.server_window: int | None = None
        """The window a local server said it runs the model with (`server_props`)."""
        self._window_asked_at: str | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, base_url={self.base_url!r})"

    def sign_in_hint(self) -> str:
        """What to do when the server refuses the key (a method on every wire)."""
        return self.endpoint.sign_in_hint()

    lookups = LookupLimits()
    """The deadline and size cap of what it asks a server before a turn or for a model list
    (`lookups.py`); a model of its own can be given others."""
    lookup_note: str | None = None
    """Why a lookup before the turn failed, said once at the start of the next reply."""

    def lookup_notes(self) -> list[Notice]:
        """The note of a lookup that failed before this reply (`lookup_note`), said once."""
        note, self.lookup_note = self.lookup_note, None
        return [Notice(text=note)] if note else []

    @property
    def local_limits(self) -> bool:
        """Whether a local server is asked for its context window (`learn_limits`) and requests
        carry a reply limit from it: where its provider's row says the window comes from the
        server (a hosted API with a model list of its own, Copilot, says no)."""
        return self.endpoint.provider.window in ("server", "ollama")

    @property
    def context_window(self) -> int | None:
        """The window given in code, else `COPILOT_NB_CONTEXT_WINDOW`, else the server's."""
        return self._window or configured_window() or self.server_window

    @context_window.setter
    def context_window(self, value: int | None) -> None:
        self._window = value

    async def learn_limits(self) -> None:
        """Ask a local server once (per address) for the window it runs the model with."""
        base_url = self.base_url
        if self.context_window and self.server_window is None:
            return  # the user said
        if not self.local_limits or self._window_asked_at == base_url or not is_local(base_url):
            return
        if self.endpoint.cassette() is not None:
            return  # a cassette holds the model's requests; a replay asks no live server
        _, headers = await self.prepare_request()
        headers["Accept"] = "application/json"
        try:
            self.server_window = await ask_window(
                self.endpoint.client(base_url), base_url, self.name, headers, self.lookups
            )
        except LookupFailed as exc:
            self.server_window = None
            self.lookup_note = (
                f"{self.provider}: {exc}. The model's context window is not known; set "
                "COPILOT_NB_CONTEXT_WINDOW to the tokens the server runs it with"
            )
        self._window_asked_at = base_url

    def output_limit(self) -> int | None:
        """`max_tokens` for a request that sets none: without it a small local model filled its
        whole context with one reply (84 tool calls); None where the window is not known."""
        if self.max_output_tokens:
            return self.max_output_tokens
        if not self.local_limits:
            return None
        window = self._window or configured_window() or self.server_window
        return reply_limit(window) if window else None

    auth: httpx.Auth | None = None
    """Authentication that renews itself (CopilotChat's token); None: the API key header, and the
    `http_client`'s own auth if it has one."""

    async def prepare_request(
        self, request: ModelRequest | None = None
    ) -> tuple[str, dict[str, str]]:
        """The base URL and headers for the next request (`request`: the chat request, if it is one).

        Subclasses that name their API or add headers per request (GitHub Copilot) override this.
        """
        return self.base_url, {"Accept": "text/event-stream", **self.endpoint.auth_headers()}

    sends_cache_key: bool | None = None
    """Whether requests carry `prompt_cache_key` (None: only to OpenAI's own API, which
    documents it; another server may refuse a field it does not know)."""

    def cache_hints(self, body: dict[str, Any], request: ModelRequest) -> None:
        """Add to a request body what this API offers for prompt caching: `prompt_cache_key`
        where it is sent and none was given (a gateway in front of other models, Copilot,
        adds its own)."""
        sends = self.sends_cache_key
        if sends is None:
            sends = (self.base_url or "").rstrip("/") == OPENAI_BASE_URL
        if sends and "prompt_cache_key" not in body:
            body["prompt_cache_key"] = prompt_cache_key(request)

    async def _stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Deltas as they arrive, then the complete message; a model that refuses tools (some
        local models) is asked once more without them."""
        for notice in self.lookup_notes():
            yield notice
        request = self.with_images(request)
        body = chat_request(self.name, request, max_tokens=self.output_limit())
        self.cache_hints(body, request)
        try:
            async for event in self._post(
                request, "/chat/completions", body, ChatCompletionsDecoder()
            ):
                yield event
        except ModelHTTPError as error:
            if not request.tools or not rejects_tools(error):
                raise
            yield Notice(text=f"{self.name} does not accept tools; asking again without them")
            async for event in self._stream(request.without_tools()):
                yield event

    def _post(
        self, request: ModelRequest, path: str, body: Mapping[str, Any], decoder: StreamDecoder
    ) -> AsyncIterator[ModelEvent]:
        """POST `body` to `path` under the base URL and stream the reply through `decoder`, with
        the request's headers and auth, the retry policy and the error mapping."""
        auth = self.auth if self.auth is not None else httpx.USE_CLIENT_DEFAULT

        async def send() -> httpx.Response:
            base_url, headers = await self.prepare_request(request)
            client = self.endpoint.client(base_url)  # the administrator's policy, for this URL
            wire = client.build_request("POST", f"{base_url}{path}", json=body, headers=headers)
            return await client.send(wire, stream=True, auth=auth)

        return stream_reply(
            send,
            decoder,
            provider=self.provider,
            where=self.base_url,
            sign_in_hint=self.sign_in_hint(),
            policy=self.retry,
            reach_hint=self.endpoint.reach_hint(),
        )

    async def model_ids(self) -> list[str]:
        """`GET {base}/models` of an OpenAI-compatible server (OpenAI, Ollama, vLLM, …), through
        the model's own client: the policy that refuses its chat refuses the list too."""
        base_url, headers = await self.prepare_request()
        headers["Accept"] = "application/json"
        client = self.endpoint.client(base_url)
        url = f"{base_url}/models"
        asked = client.build_request("GET", url, headers=headers, timeout=LIST_TIMEOUT)
        try:
            response = await lookup(
                client, asked, limits=self.lookups, what=f"{self.provider}: the model list at {url}"
            )
        except httpx.TransportError as exc:
            raise ModelConnectionError(
                f"{self.provider}: could not reach {url}: {error_text(exc)}"
            ) from exc
        if response.status_code >= 400:
            raise http_error(response, provider=self.provider, sign_in_hint=self.sign_in_hint())
        payload = response.json()
        data = payload.get("data") if isinstance(payload, dict) else None
        return sorted(
            server_text(m["id"], SERVER_NAME_CHARS, one_line=True)
            for m in (data if isinstance(data, list) else [])
            if isinstance(m, dict) and m.get("id")
        )

    async def aclose(self) -> None:
        await self.endpoint.aclose()
