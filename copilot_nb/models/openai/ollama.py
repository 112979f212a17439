"""`OllamaChat`: a model served by Ollama, asked through its OpenAI-compatible `/v1` API.

Ollama says what each model can do: `POST /api/show` (its native API, beside `/v1`) answers
`"capabilities": ["completion", "tools", "vision", ...]`. The model asks once, before its first
request: a model without `tools` is asked without them (and a `Notice` says so) instead of
failing, and one with `vision` is sent the plots of the cells it reads or runs. An Ollama that
does not answer (too old to list capabilities, a 404, not reachable) changes nothing: the tools
are offered, and a refusal is still asked again without them (`transport.rejects_tools`).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import httpx

from ...errors import LookupFailed
from ...events import ModelEvent, Notice
from ..base import ModelRequest
from ..capabilities import ImageLimits, image_limits_for, ollama_capabilities
from ..lookups import lookup
from ..server_props import window_from_ollama_show
from .chat import OpenAIChat

SHOW_TIMEOUT = httpx.Timeout(10.0)
"""How long `/api/show` may take: it reads the model's metadata, not its weights."""


def native_url(base_url: str) -> str:
    """Ollama's own API base from its OpenAI-compatible one (`.../v1` -> `...`)."""
    return re.sub(r"/v1/?$", "", base_url.rstrip("/"))


class OllamaChat(OpenAIChat):
    """A model on an Ollama server (`ollama:qwen3:8b`); `OLLAMA_BASE_URL` points elsewhere."""

    speaks_for = "ollama"

    def __init__(self, model: str, **options: Any) -> None:
        """`options` are OpenAIChat's (endpoint, base_url, headers, timeout, max_retries,
        http_client, vision)."""
        super().__init__(model, **options)
        self.capabilities: frozenset[str] | None = None
        """What `/api/show` listed for the model; None until it answered with a list."""
        self._asked = False
        self._asked_at = ""
        """The server that answered: one that `OLLAMA_BASE_URL` now names is asked again."""

    async def show(self) -> frozenset[str] | None:
        """The model's capabilities from `POST /api/show`, asked once; None when Ollama does
        not say (asked again next time only if it could not be reached)."""
        base = self.base_url
        if self._asked and self._asked_at == base:
            return self.capabilities
        if self._asked_at != base:
            self.capabilities = None
        _, headers = await self.prepare_request()
        headers["Accept"] = "application/json"
        client = self.endpoint.client()
        url = f"{native_url(base)}/api/show"
        asked = client.build_request(
            "POST", url, json={"model": self.name}, headers=headers, timeout=SHOW_TIMEOUT
        )
        try:
            response = await lookup(client, asked, limits=self.lookups, what=f"ollama: {url}")
        except httpx.TransportError:
            return None  # the chat request reports the connection problem
        except LookupFailed as exc:  # not asked again: each turn would wait as long
            self._asked, self._asked_at = True, base
            self.lookup_note = (
                f"{exc}. Asking as if Ollama had not said what the model can do; set "
                "COPILOT_NB_CONTEXT_WINDOW to the tokens it runs the model with"
            )
            return None
        self._asked, self._asked_at = True, base
        if response.status_code == 200:
            try:
                payload = response.json()
                self.capabilities = ollama_capabilities(payload)
                self.server_window = window_from_ollama_show(payload)
            except (ValueError, RecursionError):
                self.capabilities = None
        return self.capabilities

    def image_limits(self) -> ImageLimits | None:
        """`vision` if set, else what `/api/show` listed, else the name table."""
        said = None if self.capabilities is None else "vision" in self.capabilities
        return image_limits_for(self.name, self.vision, said)

    async def learn_limits(self) -> None:
        """Ollama says its window in `/api/show` (`num_ctx`), asked once with the capabilities."""
        if self.local_limits and not self.context_window:
            await self.show()

    async def _stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """Ask Ollama what the model can do first; a model without tools is asked without."""
        capabilities = await self.show()
        if request.tools and capabilities is not None and "tools" not in capabilities:
            yield Notice(
                text=f"ollama: {self.name} cannot call tools (Ollama's /api/show says so); "
                "asking without them, so it can only answer in text"
            )
            request = request.without_tools()
        async for event in super()._stream(request):
            yield event
