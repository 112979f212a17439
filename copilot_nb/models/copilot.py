"""`CopilotChat`: GitHub Copilot's chat models, which speak Chat Completions behind a token exchange.

Every request carries a short-lived Copilot token, set and renewed by `CopilotAuth` (see
`copilot_auth`), and the editor headers the Copilot API insists on. The model asks the auth for
the token before it builds a request, because the token names the API base URL to use
(`endpoints.api`, which differs for individual, business and enterprise accounts).
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx

from ..errors import CopilotError, ModelConnectionError
from ..events import ModelEvent
from .base import MessagesIn, ModelRequest
from .copilot_auth import (
    COPILOT_API_URL,
    REFRESH_MARGIN,
    CopilotAuth,
    CopilotToken,
    copilot_headers,
)
from .github_tokens import GitHubHosts, GitHubToken
from .openai import OpenAIChat
from .transport import error_text, http_error


def initiator(messages: MessagesIn) -> str:
    """`user` when the user just asked, `agent` for the loop's follow-up rounds (tool results).

    Copilot counts premium requests by this header, as VS Code's agent mode sends it.
    """
    if not messages:
        return "user"
    last = messages[-1]
    role = last.get("role") if isinstance(last, Mapping) else getattr(last, "role", None)
    return "user" if role == "user" else "agent"


@dataclass(frozen=True, kw_only=True)
class CopilotModelInfo:
    """One entry of Copilot's `/models`: what `%copilot models` shows and a picker needs."""

    id: str
    name: str
    vendor: str = ""
    family: str = ""
    kind: str = "chat"
    context_window: int | None = None
    max_prompt_tokens: int | None = None
    max_output_tokens: int | None = None
    tool_calls: bool = False
    streaming: bool = False
    picker_enabled: bool = False
    preview: bool = False
    enabled: bool = True
    """False when an admin or the user must first enable the model (`policy.state`)."""


def parse_models(payload: Any) -> list[CopilotModelInfo]:
    """Copilot's `/models` answer as `CopilotModelInfo`s; missing fields get neutral defaults."""
    entries = payload.get("data") if isinstance(payload, Mapping) else payload
    models = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, Mapping) or not entry.get("id"):
            continue
        capabilities = _mapping(entry.get("capabilities"))
        limits = _mapping(capabilities.get("limits"))
        supports = _mapping(capabilities.get("supports"))
        policy = _mapping(entry.get("policy"))
        models.append(
            CopilotModelInfo(
                id=str(entry["id"]),
                name=str(entry.get("name") or entry["id"]),
                vendor=str(entry.get("vendor") or ""),
                family=str(capabilities.get("family") or ""),
                kind=str(capabilities.get("type") or "chat"),
                context_window=_count(limits.get("max_context_window_tokens")),
                max_prompt_tokens=_count(limits.get("max_prompt_tokens")),
                max_output_tokens=_count(limits.get("max_output_tokens")),
                tool_calls=bool(supports.get("tool_calls")),
                streaming=bool(supports.get("streaming")),
                picker_enabled=bool(entry.get("model_picker_enabled")),
                preview=bool(entry.get("preview")),
                enabled=policy.get("state", "enabled") == "enabled",
            )
        )
    return models


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _count(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


class CopilotChat(OpenAIChat):
    """A GitHub Copilot chat model (`copilot:gpt-4o`); sign in once with `%copilot login`."""

    sign_in_hint = (
        "Run `%copilot login` to sign in to GitHub again, and check that the account has Copilot."
    )

    def __init__(
        self,
        model: str,
        *,
        github_token: str | GitHubToken | None = None,
        hosts: GitHubHosts | None = None,
        clock: Callable[[], float] = time.time,
        refresh_margin: float = REFRESH_MARGIN,
        **options: Any,
    ) -> None:
        super().__init__(model, api_key="", base_url=COPILOT_API_URL, provider="copilot", **options)
        if isinstance(github_token, str):
            github_token = GitHubToken(value=github_token, source="the github_token argument")
        self.auth: CopilotAuth = CopilotAuth(
            github_token=github_token,
            hosts=hosts or GitHubHosts.from_env(),
            client=self._http.get,
            clock=clock,
            refresh_margin=refresh_margin,
        )
        self.context_window: int | None = None
        self.max_prompt_tokens: int | None = None
        self._limits_known = False

    async def copilot_token(self) -> CopilotToken:
        """The Copilot token for the next request, signing in first; it also names the API base
        URL, which becomes `base_url`."""
        token = await self.auth.token()
        self.base_url = token.api_url
        return token

    async def prepare_request(
        self, request: ModelRequest | None = None
    ) -> tuple[str, dict[str, str]]:
        """The Copilot API base URL and the editor headers; the auth adds the token."""
        await self.copilot_token()
        headers = {
            "Accept": "text/event-stream",
            **copilot_headers(),
            "Openai-Intent": "conversation-panel",
            "X-Initiator": initiator(request.messages) if request is not None else "user",
            "X-Request-Id": str(uuid.uuid4()),
            **self.headers,
        }
        return self.base_url, headers

    async def _stream(self, request: ModelRequest) -> AsyncIterator[ModelEvent]:
        """As OpenAIChat, after signing in, so a sign-in problem surfaces as such."""
        await self.copilot_token()
        if not self._limits_known:
            self._limits_known = True
            with contextlib.suppress(CopilotError):  # limits are a help, not a requirement
                await self.list_models()
        async for event in super()._stream(request):
            yield event

    async def list_models(self) -> list[CopilotModelInfo]:
        """The models this account may use, from `{api}/models`."""
        base_url, headers = await self.prepare_request()
        headers["Accept"] = "application/json"
        try:
            response = await self._http.get().get(
                f"{base_url}/models", headers=headers, auth=self.auth
            )
        except httpx.TransportError as exc:
            raise ModelConnectionError(
                f"copilot: could not reach {base_url}/models: {error_text(exc)}"
            ) from exc
        if response.status_code >= 400:
            raise http_error(response, provider=self.provider, sign_in_hint=self.sign_in_hint)
        models = parse_models(response.json())
        for info in models:
            if info.id == self.name:  # the context budget reads these limits
                self.context_window = info.context_window
                self.max_prompt_tokens = info.max_prompt_tokens
        return models
