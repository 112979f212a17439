"""`CopilotAuth`: the Copilot API's bearer token, as an `httpx.Auth` that renews itself.

A GitHub token (see `github_tokens`) is not accepted by the Copilot API itself: it is exchanged at
`{github api}/copilot_internal/v2/token` for a short-lived Copilot token (about 30 minutes) and the
API base URL to use (`endpoints.api`, which differs for individual, business and enterprise
accounts). The token is cached and shared by concurrent requests; it is renewed at `refresh_in`
or a minute before it expires, and once more, inside the same request, after a 401.

The exchange is awaited in `async_auth_flow` rather than yielded through it, as httpx's
`requires_response_body` recipe would: that recipe reads every response in full before the flow
sees it, the streamed reply too. And the model needs the token's API base URL before it can name
the request's URL, so `token()` is public: `CopilotChat` awaits it first, and the flow finds it
cached.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import Any, NoReturn

import httpx

from ...errors import AuthError, ModelConnectionError, ModelError, ModelHTTPError
from ...text import server_text, shorten
from ..cassettes.cassette import Cassette
from ..providers import row
from ..transport import error_text
from .github_tokens import GitHubHosts, GitHubToken, find_github_token
from .headers import EditorHeaders

COPILOT_API_URL = row("copilot").base_url
"""The Copilot API when the token exchange names no `endpoints.api` (its provider's row)."""
COPILOT_PROXY_URL = "https://proxy.individual.githubcopilot.com"
"""Where the editors' ghost-text completions go when the exchange names no `endpoints.proxy`."""
REFRESH_MARGIN = 60.0
"""Seconds before `expires_at` at which a Copilot token is renewed rather than used."""


@dataclass(frozen=True, kw_only=True)
class CopilotToken:
    """A short-lived Copilot API token and the API base URL it is good for."""

    value: str = field(repr=False)
    api_url: str
    expires_at: float
    refresh_at: float
    proxy_url: str = COPILOT_PROXY_URL
    """The completions proxy (`endpoints.proxy`, else the token's `proxy-ep=`): ghost text."""

    def usable(self, now: float, margin: float = REFRESH_MARGIN) -> bool:
        """Still good for a request: before `refresh_in` and more than `margin` before expiry."""
        return now < min(self.refresh_at, self.expires_at - margin)


class CopilotAuth(httpx.Auth):
    """Sets `Authorization: Bearer <Copilot token>`; after a 401, renews the token and sends the
    request once more, to the same URL (an account's API base does not change between tokens).
    Async only: the exchange is an HTTP request of its own."""

    def __init__(
        self,
        *,
        github_token: GitHubToken | None,
        hosts: GitHubHosts,
        client: Callable[[], httpx.AsyncClient],
        cassette: Callable[[], Cassette | None] = lambda: None,
        clock: Callable[[], float] = time.time,
        refresh_margin: float = REFRESH_MARGIN,
        editor: EditorHeaders | None = None,
    ) -> None:
        self.hosts = hosts
        self.editor = editor or EditorHeaders()
        """The editor identification the exchange sends, as the API requests do."""
        self.refresh_margin = refresh_margin
        self.exchanges = 0
        """How many Copilot tokens were obtained (one per expiry, plus one per 401)."""
        self._github_token = github_token
        self._client = client
        self._cassette = cassette
        """The cassette the model's requests go to now (its endpoint's tape), if any."""
        self._clock = clock
        self._token: CopilotToken | None = None
        self._lock_and_loop: tuple[asyncio.Lock, asyncio.AbstractEventLoop] | None = None

    def sync_auth_flow(self, request: httpx.Request) -> NoReturn:
        raise RuntimeError("CopilotAuth renews tokens asynchronously; use an httpx.AsyncClient")

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        token = await self.token()
        request.headers["Authorization"] = f"Bearer {token.value}"
        response = yield request
        if response.status_code == 401:
            await response.aread()  # a short body; reading it frees the connection for the exchange
            token = await self.token(refused=token)
            request.headers["Authorization"] = f"Bearer {token.value}"
            yield request

    async def token(self, *, refused: CopilotToken | None = None) -> CopilotToken:
        """The cached Copilot token, exchanged anew when due, or when the API `refused` it (a 401)
        and no other request has renewed it meanwhile."""
        async with self._lock():
            token = self._token
            if (
                token is not None
                and token is not refused
                and token.usable(self._clock(), self.refresh_margin)
            ):
                return token
            self._token = token = await self._exchange()
            self.exchanges += 1
            return token

    def _lock(self) -> asyncio.Lock:
        """One lock per event loop, so concurrent requests share one exchange on any loop."""
        loop = asyncio.get_running_loop()
        if self._lock_and_loop is None or self._lock_and_loop[1] is not loop:
            self._lock_and_loop = (asyncio.Lock(), loop)
        return self._lock_and_loop[0]

    async def _exchange(self) -> CopilotToken:
        """Trade the GitHub token for a Copilot token at `/copilot_internal/v2/token`."""
        github = (
            self._github_token or find_github_token(self.hosts) or replay_token(self._cassette())
        )
        if github is None:
            raise AuthError(
                "copilot: not signed in to GitHub. Run `%copilot login` (or set "
                "COPILOT_NB_GITHUB_TOKEN to a GitHub token that has Copilot access).",
                status=401,
            )
        url = f"{self.hosts.api_url}/copilot_internal/v2/token"
        headers = {"Authorization": f"token {github.value}", "Accept": "application/json"}
        try:
            response = await self._client().get(
                url, headers={**self.editor.as_headers(), **headers}
            )
        except httpx.TransportError as exc:
            raise ModelConnectionError(
                f"copilot: could not reach {url}: {error_text(exc)}"
            ) from exc
        if response.status_code >= 400:
            raise _exchange_error(response, github)
        try:
            payload = response.json()
            value = str(payload["token"])
        except (ValueError, KeyError, TypeError):
            raise ModelError(
                f"copilot: {url} answered without a token: {shorten(response.text, 200)!r}"
            ) from None
        return _copilot_token(value, payload, now=self._clock())


def replay_token(cassette: Cassette | None) -> GitHubToken | None:
    """A stand-in GitHub token while `cassette` replays: the exchange is answered from the
    recording, so a reader replaying a notebook needs no GitHub sign-in of their own."""
    if cassette is None or cassette.recording:
        return None
    return GitHubToken(value="replayed", source="the cassette being replayed")


def _copilot_token(value: str, payload: dict[str, Any], *, now: float) -> CopilotToken:
    """The exchange's answer as a token: lifetime, when to renew it, and the API to use."""
    expires_at = float(payload.get("expires_at") or now + 1500)
    refresh_in = payload.get("refresh_in")
    refresh_at = now + float(refresh_in) if refresh_in else expires_at
    endpoints = payload.get("endpoints")
    api = endpoints.get("api") if isinstance(endpoints, dict) else None
    api_url = str(api or COPILOT_API_URL).rstrip("/")
    proxy = endpoints.get("proxy") if isinstance(endpoints, dict) else None
    if not proxy:
        named = re.search(r"(?:^|;)proxy-ep=([^;]+)", value)
        proxy = f"https://{named.group(1)}" if named else COPILOT_PROXY_URL
    return CopilotToken(
        value=value,
        api_url=api_url,
        expires_at=expires_at,
        refresh_at=refresh_at,
        proxy_url=str(proxy).rstrip("/"),
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
    said = f"HTTP {status}: {server_text(detail or response.reason_phrase)}"
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
