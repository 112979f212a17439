"""GitHub sign-in for Copilot: the OAuth device flow, and where a GitHub token is found and kept.

A GitHub token is looked for in this order; the first one found wins:

1. `COPILOT_NB_GITHUB_TOKEN`: an explicit choice for copilot_nb (CI, scripts).
2. Our own sign-in (`%copilot login`), kept in `<config dir>/github_token.json`.
3. A Copilot editor sign-in (copilot.vim, copilot.lua, JetBrains, Zed):
   `github-copilot/apps.json` or `hosts.json` under `$XDG_CONFIG_HOME` (default `~/.config`).
4. `GH_TOKEN`, then `GITHUB_TOKEN`: last, because these are usually personal access, `gh` or
   Actions tokens, which GitHub's Copilot token endpoint refuses; a shell-wide export must never
   shadow a real sign-in.

Every host is configurable (`COPILOT_NB_GITHUB_URL`, `COPILOT_NB_GITHUB_API_URL`), so GitHub
Enterprise works and tests run against a loopback fake (`copilot_nb.testing.github_fake`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import httpx

from ..config import config_dir
from ..errors import AuthError, ConfigError, ModelConnectionError

DEFAULT_GITHUB_URL = "https://github.com"
DEFAULT_GITHUB_API_URL = "https://api.github.com"
DEFAULT_CLIENT_ID = "Iv1.b507a08c87ecfe98"
"""The GitHub Copilot editor plugins' OAuth app (copilot.vim, the Copilot language server).

GitHub's Copilot token endpoint only issues Copilot tokens for GitHub tokens that came from an
OAuth app it allows for Copilot; a token from our own OAuth app, a PAT or `gh` would be refused.
"""
TOKEN_FILE = "github_token.json"
SCOPE = "read:user"
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
SIGN_IN_AGAIN = "Run `%copilot login` to sign in again."

try:
    USER_AGENT = f"copilot_nb/{metadata.version('copilot_nb')}"
except metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
    USER_AGENT = "copilot_nb/0"

_CLIENT_ERRORS = ("incorrect_client_credentials", "device_flow_disabled", "unauthorized_client")


@dataclass(frozen=True, kw_only=True)
class GitHubHosts:
    """Where GitHub lives: the web host (sign-in) and the REST API (Copilot token exchange)."""

    github_url: str = DEFAULT_GITHUB_URL
    api_url: str = DEFAULT_GITHUB_API_URL

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> GitHubHosts:
        """`COPILOT_NB_GITHUB_URL` / `COPILOT_NB_GITHUB_API_URL`, else github.com."""
        env = os.environ if environ is None else environ
        github = (env.get("COPILOT_NB_GITHUB_URL") or DEFAULT_GITHUB_URL).rstrip("/")
        api = env.get("COPILOT_NB_GITHUB_API_URL") or _api_url_for(github)
        return cls(github_url=github, api_url=api.rstrip("/"))

    @property
    def host(self) -> str:
        """The key a token is filed under, as editors do: `github.com`, `acme.ghe.com`."""
        return urlsplit(self.github_url).netloc.lower()


def _api_url_for(github_url: str) -> str:
    host = urlsplit(github_url).netloc.lower()
    if host in ("github.com", "www.github.com"):
        return DEFAULT_GITHUB_API_URL
    if host.endswith(".ghe.com"):
        return f"https://api.{host}"
    return f"{github_url}/api/v3"  # GitHub Enterprise Server


def default_client_id(environ: Mapping[str, str] | None = None) -> str:
    """`COPILOT_NB_GITHUB_CLIENT_ID`, else the Copilot editor plugins' OAuth app."""
    env = os.environ if environ is None else environ
    return env.get("COPILOT_NB_GITHUB_CLIENT_ID") or DEFAULT_CLIENT_ID


@dataclass(frozen=True, kw_only=True)
class GitHubToken:
    """A GitHub OAuth token and where it came from, so errors can say which one was refused."""

    value: str = field(repr=False)
    source: str
    user: str | None = None


@dataclass(frozen=True, kw_only=True)
class DeviceCode:
    """What the user needs to approve a sign-in: a code to type in at a URL."""

    device_code: str
    user_code: str
    verification_uri: str
    expires_in: float
    interval: float


# --- the OAuth device flow ------------------------------------------------------------------


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
                f"GitHub sign-in: could not reach {url}: {type(exc).__name__}: {exc or 'no details'}"
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
                user_code=str(payload.get("user_code", "")),
                verification_uri=str(
                    payload.get("verification_uri") or f"{self.hosts.github_url}/login/device"
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
        detail = payload.get("error_description") or error or response.reason_phrase
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
    async with httpx.AsyncClient(timeout=httpx.Timeout(30.0, connect=10.0)) as client:
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


# --- where tokens are kept ------------------------------------------------------------------


def token_path(environ: Mapping[str, str] | None = None) -> Path:
    """Where `%copilot login` keeps the GitHub token; delete it to sign out."""
    return config_dir(environ) / TOKEN_FILE


def save_github_token(
    token: str,
    *,
    hosts: GitHubHosts | None = None,
    user: str | None = None,
    client_id: str | None = None,
    environ: Mapping[str, str] | None = None,
) -> Path:
    """Store the token for this host, readable by the user only (0600), replacing the file atomically."""
    hosts = hosts or GitHubHosts.from_env(environ)
    path = token_path(environ)
    data = _read_json(path)
    entries = data.get("hosts")
    if not isinstance(entries, dict):
        entries = {}
    entries[hosts.host] = {
        "oauth_token": token,
        "user": user,
        "client_id": client_id,
        "saved_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    write_private(path, json.dumps({"version": 1, "hosts": entries}, indent=2) + "\n")
    return path


def write_private(path: Path, text: str) -> None:
    """Write a secret: a 0600 temp file in the same folder, fsynced, then renamed over the old one."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            os.chmod(temp, 0o600)
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise


def stored_token(
    hosts: GitHubHosts | None = None, environ: Mapping[str, str] | None = None
) -> GitHubToken | None:
    """The token `%copilot login` stored for this host, if any."""
    hosts = hosts or GitHubHosts.from_env(environ)
    path = token_path(environ)
    entries = _read_json(path).get("hosts")
    return _entry_token(entries.get(hosts.host) if isinstance(entries, dict) else None, path)


def editor_config_dir(environ: Mapping[str, str] | None = None) -> Path:
    """Where the Copilot editor plugins keep their sign-in (`github-copilot/`)."""
    env = os.environ if environ is None else environ
    if env.get("XDG_CONFIG_HOME"):
        return Path(env["XDG_CONFIG_HOME"]) / "github-copilot"
    if os.name == "nt" and env.get("LOCALAPPDATA"):
        return Path(env["LOCALAPPDATA"]) / "github-copilot"
    return Path(os.path.expanduser("~")) / ".config" / "github-copilot"


def editor_token(
    hosts: GitHubHosts | None = None, environ: Mapping[str, str] | None = None
) -> GitHubToken | None:
    """A token from a Copilot editor sign-in: keys are `host` (hosts.json) or `host:app` (apps.json)."""
    hosts = hosts or GitHubHosts.from_env(environ)
    folder = editor_config_dir(environ)
    for name in ("apps.json", "hosts.json"):
        path = folder / name
        for key, entry in _read_json(path).items():
            host = key.lower().partition(":")[0] if name == "apps.json" else key.lower()
            found = _entry_token(entry, path) if host == hosts.host else None
            if found is not None:
                return found
    return None


def _entry_token(entry: Any, path: Path) -> GitHubToken | None:
    """`{"oauth_token": ..., "user": ...}`, the entry shape of every token file we read."""
    if not isinstance(entry, dict) or not entry.get("oauth_token"):
        return None
    user = entry.get("user")
    return GitHubToken(
        value=str(entry["oauth_token"]), source=str(path), user=str(user) if user else None
    )


def find_github_token(
    hosts: GitHubHosts | None = None, environ: Mapping[str, str] | None = None
) -> GitHubToken | None:
    """The GitHub token to use, by the precedence in this module's docstring; None if there is none."""
    env = os.environ if environ is None else environ
    hosts = hosts or GitHubHosts.from_env(env)
    if env.get("COPILOT_NB_GITHUB_TOKEN"):
        return GitHubToken(value=env["COPILOT_NB_GITHUB_TOKEN"], source="COPILOT_NB_GITHUB_TOKEN")
    found = stored_token(hosts, env) or editor_token(hosts, env)
    if found is not None:
        return found
    for name in ("GH_TOKEN", "GITHUB_TOKEN"):
        if env.get(name):
            return GitHubToken(value=env[name], source=name)
    return None


def _read_json(path: Path) -> dict[str, Any]:
    """A JSON object from a file; an absent, unreadable or malformed file reads as empty."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}
