"""GitHub sign-in for Copilot: the OAuth device flow (`%copilot login`).

The token it obtains is stored, and later found, by `github_tokens`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl

import httpx

from ...errors import AuthError, ConfigError, ModelConnectionError
from ...text import SERVER_NAME_CHARS, server_text
from ..network import http_client
from ..transport import USER_AGENT, error_text
from .github_tokens import GitHubHosts, GitHubToken, save_github_token

DEFAULT_CLIENT_ID = "Iv1.b507a08c87ecfe98"
"""The GitHub Copilot editor plugins' OAuth app (copilot.vim, the Copilot language server).

GitHub's Copilot token endpoint only issues Copilot tokens for GitHub tokens that came from an
OAuth app it allows for Copilot; a token from our own OAuth app, a PAT or `gh` would be refused.
"""
SCOPE = "read:user"
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
SIGN_IN_AGAIN = "Run `%copilot login` to sign in again."

_CLIENT_ERRORS = ("incorrect_client_credentials", "device_flow_disabled", "unauthorized_client")


def default_client_id(environ: Mapping[str, str] | None = None) -> str:
    """`COPILOT_NB_GITHUB_CLIENT_ID`, else the Copilot editor plugins' OAuth app."""
    env = os.environ if environ is None else environ
    return env.get("COPILOT_NB_GITHUB_CLIENT_ID") or DEFAULT_CLIENT_ID


@dataclass(frozen=True, kw_only=True)
class DeviceCode:
    """What the user needs to approve a sign-in: a code to type in at a URL."""

    device_code: str
    user_code: str
    verification_uri: str
    expires_in: float
    interval: float


class DeviceFlow:
    """GitHub's OAuth device flow: `start()` gets a code to show, `wait()` polls until approved.

    Both are coroutines; cancelling `wait()` (an interrupt) stops the polling at once.
    """

    def __init__(
        self,
        hosts: GitHubHosts | None = None,
        *,
        client_id: str | None = None,
        scope: str = SCOPE,
        http_client: httpx.AsyncClient | None = None,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.hosts = hosts or GitHubHosts.from_env()
        self.client_id = client_id or default_client_id()
        self.scope = scope
        self._given = http_client
        self._sleep = sleep
        self._clock = clock

    async def _post(
        self, client: httpx.AsyncClient, path: str, data: dict[str, str]
    ) -> tuple[httpx.Response, dict[str, Any]]:
        url = f"{self.hosts.github_url}{path}"
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        try:
            response = await client.post(url, data=data, headers=headers)
        except httpx.TransportError as exc:
            raise ModelConnectionError(
                f"GitHub sign-in: could not reach {url}: {error_text(exc)}"
            ) from exc
        return response, _payload(response)

    async def start(self) -> DeviceCode:
        """Ask GitHub for a device code and the user code to show."""
        async with _client(self._given) as client:
            response, payload = await self._post(
                client, "/login/device/code", {"client_id": self.client_id, "scope": self.scope}
            )
        if response.status_code < 400 and payload.get("device_code"):
            return DeviceCode(
                device_code=str(payload["device_code"]),
                user_code=server_text(payload.get("user_code", ""), 40, one_line=True),
                verification_uri=server_text(
                    payload.get("verification_uri") or f"{self.hosts.github_url}/login/device",
                    SERVER_NAME_CHARS,
                    one_line=True,
                ),
                expires_in=float(payload.get("expires_in") or 900),
                interval=float(payload.get("interval") or 5),
            )
        raise self._refusal("did not start the sign-in", response, payload)

    async def wait(self, code: DeviceCode) -> str:
        """Poll until the user approves; return the GitHub token. Honours `interval`/`slow_down`."""
        interval = max(0.0, code.interval)
        deadline = self._clock() + code.expires_in
        data = {
            "client_id": self.client_id,
            "device_code": code.device_code,
            "grant_type": DEVICE_GRANT,
        }
        failures = 0
        async with _client(self._given) as client:
            while True:
                await self._sleep(interval)
                if self._clock() > deadline:
                    raise _expired(code, None)
                try:
                    response, payload = await self._post(client, "/login/oauth/access_token", data)
                except ModelConnectionError:
                    failures += 1
                    if failures >= 3:
                        raise
                    continue  # a blip: the code is still valid, poll again
                failures = 0
                if payload.get("access_token"):
                    return str(payload["access_token"])
                error = payload.get("error")
                if error == "authorization_pending":
                    continue
                if error == "slow_down":
                    interval = max(interval + 5, float(payload.get("interval") or 0))
                    continue
                if error == "expired_token":
                    raise _expired(code, response)
                if error == "access_denied":
                    raise AuthError(
                        "GitHub sign-in was denied: the request was cancelled on GitHub. "
                        "Run `%copilot login` to try again.",
                        status=response.status_code,
                        body=payload,
                    )
                raise self._refusal("refused the sign-in", response, payload)

    def _refusal(self, what: str, response: httpx.Response, payload: dict[str, Any]) -> Exception:
        error = str(payload.get("error") or "")
        detail = server_text(payload.get("error_description") or error or response.reason_phrase)
        if error in _CLIENT_ERRORS:
            return ConfigError(
                f"GitHub {what} for OAuth app {self.client_id}: {detail} ({error}). "
                "Check COPILOT_NB_GITHUB_CLIENT_ID (unset it to use the default app)."
            )
        return AuthError(
            f"GitHub {what} (HTTP {response.status_code}: {detail}). {SIGN_IN_AGAIN}",
            status=response.status_code,
            body=payload,
        )


def _expired(code: DeviceCode, response: httpx.Response | None) -> AuthError:
    return AuthError(
        f"GitHub sign-in code {code.user_code} expired before it was approved. "
        "Run `%copilot login` for a new code.",
        status=response.status_code if response is not None else 401,
        body=_payload(response) if response is not None else None,
    )


@contextlib.asynccontextmanager
async def _client(given: httpx.AsyncClient | None) -> AsyncIterator[httpx.AsyncClient]:
    """The caller's client, or one of our own for as long as it is needed."""
    if given is not None:
        yield given
        return
    async with http_client(httpx.Timeout(30.0, connect=10.0)) as client:
        yield client


def _payload(response: httpx.Response) -> dict[str, Any]:
    """GitHub answers JSON when asked, form-encoded otherwise; accept either."""
    try:
        value = response.json()
    except ValueError:
        return dict(parse_qsl(response.text))
    return value if isinstance(value, dict) else {}


async def fetch_user(
    token: str, hosts: GitHubHosts | None = None, *, http_client: httpx.AsyncClient | None = None
) -> str | None:
    """The login name for a token, to say who is signed in; None when GitHub won't say."""
    hosts = hosts or GitHubHosts.from_env()
    headers = {"Authorization": f"token {token}", "Accept": "application/json"}
    try:
        async with _client(http_client) as client:
            response = await client.get(
                f"{hosts.api_url}/user", headers={**headers, "User-Agent": USER_AGENT}
            )
    except httpx.TransportError:
        return None
    login = _payload(response).get("login") if response.status_code < 400 else None
    return str(login) if login else None


async def login(
    *,
    show: Callable[[DeviceCode], object],
    hosts: GitHubHosts | None = None,
    client_id: str | None = None,
    http_client: httpx.AsyncClient | None = None,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    environ: Mapping[str, str] | None = None,
) -> GitHubToken:
    """Sign in with the device flow, `show` the code to the user, and store the token."""
    flow = DeviceFlow(hosts, client_id=client_id, http_client=http_client, sleep=sleep)
    code = await flow.start()
    show(code)
    token = await flow.wait(code)
    user = await fetch_user(token, flow.hosts, http_client=http_client)
    path = save_github_token(
        token, hosts=flow.hosts, user=user, client_id=flow.client_id, environ=environ
    )
    return GitHubToken(value=token, source=str(path), user=user)
