"""`CopilotChat`: GitHub Copilot's chat models, which speak Chat Completions behind a token exchange.

A GitHub token (see `github_auth`) is not accepted by the Copilot API itself: it is exchanged at
`{github api}/copilot_internal/v2/token` for a short-lived Copilot token (about 30 minutes) and the
API base URL to use (`endpoints.api`, which differs for individual, business and enterprise
accounts). The token is cached, renewed ahead of its expiry and after a 401, and every request
carries the editor headers the Copilot API insists on.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from ..errors import AuthError, CopilotError, ModelConnectionError, ModelError, ModelHTTPError
from ..events import ModelEvent
from .base import MessagesIn, ToolChoice, ToolsIn
from .github_auth import USER_AGENT, GitHubHosts, GitHubToken, find_github_token
from .openai import OpenAIChat
from .transport import http_error

COPILOT_API_URL = "https://api.githubcopilot.com"
INTEGRATION_ID = "vscode-chat"
"""The integration id open-source Copilot chat clients (e.g. Zed) send; the API requires one."""
REFRESH_MARGIN = 60.0
"""Seconds before `expires_at` at which a Copilot token is renewed rather than used."""

_initiator: contextvars.ContextVar[str] = contextvars.ContextVar(
    "copilot_nb_initiator", default="user"
)


def copilot_headers() -> dict[str, str]:
    """The editor identification the Copilot API and the token exchange require."""
    return {
        "Editor-Version": USER_AGENT,
        "Editor-Plugin-Version": USER_AGENT,
        "User-Agent": USER_AGENT,
        "Copilot-Integration-Id": INTEGRATION_ID,
    }


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
class CopilotToken:
    """A short-lived Copilot API token and the API base URL it is good for."""

    value: str = field(repr=False)
    api_url: str
    expires_at: float
    refresh_at: float

    def usable(self, now: float, margin: float = REFRESH_MARGIN) -> bool:
        """Still good for a request: before `refresh_in` and more than `margin` before expiry."""
        return now < min(self.refresh_at, self.expires_at - margin)


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
    can_refresh = True

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
        self.hosts = hosts or GitHubHosts.from_env()
        self.refresh_margin = refresh_margin
        self.exchanges = 0
        """How many Copilot tokens this model obtained (one per expiry, plus one per 401)."""
        self._github_token = github_token
        self._clock = clock
        self._token: CopilotToken | None = None
        self.context_window: int | None = None
        self.max_prompt_tokens: int | None = None
        self._limits_known = False
        self._lock_and_loop: tuple[asyncio.Lock, asyncio.AbstractEventLoop] | None = None

    def _lock(self) -> asyncio.Lock:
        """One lock per event loop, so concurrent requests share one exchange on any loop."""
        loop = asyncio.get_running_loop()
        if self._lock_and_loop is None or self._lock_and_loop[1] is not loop:
            self._lock_and_loop = (asyncio.Lock(), loop)
        return self._lock_and_loop[0]

    async def copilot_token(self, *, refresh: bool = False) -> CopilotToken:
        """The cached Copilot token, exchanged anew when due, or when `refresh` (after a 401)."""
        seen = self.exchanges
        async with self._lock():
            token = self._token
            if token is not None:
                if refresh and self.exchanges != seen:
                    return token  # another request renewed it while this one waited
                if not refresh and token.usable(self._clock(), self.refresh_margin):
                    return token
            self._token = token = await self._exchange()
            self.exchanges += 1
            self.base_url = token.api_url
            return token

    async def prepare_request(self, *, refresh: bool = False) -> tuple[str, dict[str, str]]:
        """The Copilot API base URL and headers, with a fresh Copilot token."""
        token = await self.copilot_token(refresh=refresh)
        headers = {
            "Accept": "text/event-stream",
            **copilot_headers(),
            "Openai-Intent": "conversation-panel",
            "X-Initiator": _initiator.get(),
            "X-Request-Id": str(uuid.uuid4()),
            **self.headers,
            "Authorization": f"Bearer {token.value}",
        }
        return token.api_url, headers

    async def stream(
        self,
        messages: MessagesIn,
        *,
        tools: ToolsIn | None = None,
        tool_choice: ToolChoice = None,
        **options: Any,
    ) -> AsyncIterator[ModelEvent]:
        """As OpenAIChat, after signing in, and marking who initiated the request."""
        await self.copilot_token()  # a sign-in problem surfaces as such, before the chat request
        if not self._limits_known:
            self._limits_known = True
            with contextlib.suppress(CopilotError):  # limits are a help, not a requirement
                await self.list_models()
        reset = _initiator.set(initiator(messages))
        try:
            async for event in super().stream(
                messages, tools=tools, tool_choice=tool_choice, **options
            ):
                yield event
        finally:
            with contextlib.suppress(ValueError):  # closed from another context: nothing to undo
                _initiator.reset(reset)

    async def list_models(self) -> list[CopilotModelInfo]:
        """The models this account may use, from `{api}/models`."""
        for refresh in (False, True):
            base_url, headers = await self.prepare_request(refresh=refresh)
            headers["Accept"] = "application/json"
            try:
                response = await self._http.get().get(f"{base_url}/models", headers=headers)
            except httpx.TransportError as exc:
                raise ModelConnectionError(
                    f"copilot: could not reach {base_url}/models: {type(exc).__name__}: {exc}"
                ) from exc
            if response.status_code != 401:
                break
        if response.status_code >= 400:
            raise http_error(response, provider=self.provider, sign_in_hint=self.sign_in_hint)
        models = parse_models(response.json())
        for info in models:
            if info.id == self.name:  # the context budget reads these limits
                self.context_window = info.context_window
                self.max_prompt_tokens = info.max_prompt_tokens
        return models

    async def _exchange(self) -> CopilotToken:
        """Trade the GitHub token for a Copilot token at `/copilot_internal/v2/token`."""
        github = self._github_token or find_github_token(self.hosts)
        if github is None:
            raise AuthError(
                "copilot: not signed in to GitHub. Run `%copilot login` (or set "
                "COPILOT_NB_GITHUB_TOKEN to a GitHub token that has Copilot access).",
                status=401,
            )
        url = f"{self.hosts.api_url}/copilot_internal/v2/token"
        headers = {"Authorization": f"token {github.value}", "Accept": "application/json"}
        try:
            response = await self._http.get().get(url, headers={**copilot_headers(), **headers})
        except httpx.TransportError as exc:
            raise ModelConnectionError(
                f"copilot: could not reach {url}: {type(exc).__name__}: {exc or 'no details'}"
            ) from exc
        if response.status_code >= 400:
            raise _exchange_error(response, github)
        try:
            payload = response.json()
            value = str(payload["token"])
        except (ValueError, KeyError, TypeError):
            raise ModelError(
                f"copilot: {url} answered without a token: {response.text[:200]!r}"
            ) from None
        now = self._clock()
        expires_at = float(payload.get("expires_at") or now + 1500)
        refresh_in = payload.get("refresh_in")
        refresh_at = now + float(refresh_in) if refresh_in else expires_at
        endpoints = payload.get("endpoints") if isinstance(payload.get("endpoints"), dict) else {}
        api_url = str(endpoints.get("api") or COPILOT_API_URL).rstrip("/")
        return CopilotToken(
            value=value, api_url=api_url, expires_at=expires_at, refresh_at=refresh_at
        )


def _exchange_error(response: httpx.Response, github: GitHubToken) -> ModelHTTPError:
    """Why GitHub would not give a Copilot token, in words that say what to do."""
    try:
        body: Any = response.json()
    except ValueError:
        body = response.text
    detail = body.get("message") if isinstance(body, dict) else None
    details = body.get("error_details") if isinstance(body, dict) else None
    if isinstance(details, dict) and details.get("message"):
        detail = details["message"]
    status = response.status_code
    said = f"HTTP {status}: {detail or response.reason_phrase}"
    who = f"the GitHub token from {github.source}" + (f" ({github.user})" if github.user else "")
    if status == 401:
        return AuthError(
            f"copilot: GitHub rejected {who} ({said}). Run `%copilot login` to sign in again.",
            status=status,
            body=body,
        )
    if status in (403, 404):
        return AuthError(
            f"copilot: GitHub issued no Copilot token for {who} ({said}). Either the account "
            "has no Copilot access, or the token was not made by a Copilot sign-in (personal "
            "access, `gh` and Actions tokens are refused). Run `%copilot login`.",
            status=status,
            body=body,
        )
    return ModelHTTPError(f"copilot: token exchange failed ({said})", status=status, body=body)
