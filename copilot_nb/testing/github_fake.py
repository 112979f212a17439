"""`FakeGitHub`: GitHub's sign-in, the Copilot token exchange and the Copilot API, on loopback.

It answers the OAuth device flow (`/login/device/code`, `/login/oauth/access_token`, with a
scripted sequence of `authorization_pending`, `slow_down`, `expired_token` or `access_denied`),
`/user`, `/copilot_internal/v2/token` (short-lived tokens with a chosen lifetime, counted, or
refused) and, under `/copilot-api` (what the exchange names as `endpoints.api`), Copilot's
`/models`, `/chat/completions`, `/responses` and `/v1/messages`. Replies come from a script,
exactly as `ScriptedServer` plays them, in the format of the endpoint asked.

As the real API does (samples in `tests/data/conformance/responses/copilot/`): `/models` lists
`supported_endpoints` and `billing` per model, in the real list's shape; a model asked through an
endpoint it does not list is answered `400 unsupported_api_for_model` with the real body; a
request without `Editor-Version`, or with one that does not name a known editor, is answered
`400 bad request: missing (unknown) Editor-Version header for IDE auth` in plain text; and
without a valid Copilot token, 401. Every request is recorded.
"""

from __future__ import annotations

import io
import itertools
import json
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from ..models.copilot.github_sign_in import DEFAULT_CLIENT_ID, DEVICE_GRANT
from ..models.copilot.github_tokens import GitHubHosts
from .copilot_catalog import CHAT, COPILOT_MODELS, MESSAGES, RESPONSES
from .script import Reply, ScriptedRequest, Step
from .scripted import Script
from .server import LoopbackService, _Handler

API_PREFIX = "/copilot-api"
REQUIRED_HEADERS = ("Editor-Version", "Copilot-Integration-Id")
KNOWN_EDITORS = ("vscode/", "Neovim/", "vim/", "JetBrains-")
"""`Editor-Version` prefixes the fake recognises (the real API's list is not public)."""


@dataclass(frozen=True, kw_only=True)
class RecordedRequest:
    """One request the fake received, whatever its route."""

    method: str
    path: str
    headers: Mapping[str, str] = field(default_factory=dict)
    body: Any = None


class FakeGitHub(LoopbackService):
    """github.com, api.github.com and the Copilot API in one loopback server.

    `polls` scripts what each access-token poll answers before the token is granted, e.g.
    `["authorization_pending", "slow_down"]`; `github_tokens` are accepted without a sign-in.
    Use as a context manager, or `start()`/`stop()`.
    """

    handler: type[BaseHTTPRequestHandler]  # set below, once _FakeHandler exists

    def __init__(
        self,
        steps: Iterable[Step] = (),
        *,
        responder: Callable[[ScriptedRequest], Reply] | None = None,
        polls: Sequence[str] = (),
        interval: float = 0,
        user: str = "octocat",
        github_tokens: Iterable[str] = (),
        client_id: str = DEFAULT_CLIENT_ID,
        token_lifetime: float = 1800,
        refresh_in: float | None = None,
        reject_exchange: int | None = None,
        models: Sequence[Mapping[str, Any]] | None = None,
        required_headers: Sequence[str] = REQUIRED_HEADERS,
        known_editors: Sequence[str] = KNOWN_EDITORS,
        serves: Mapping[str, Sequence[str]] | None = None,
        model_name: str = "gpt-4o",
    ) -> None:
        self.script = Script(steps, responder=responder)
        self.model_name = model_name
        self.sends_usage = True  # the chat route it shares with ScriptedServer reads it
        self.polls = list(polls)
        self.interval = interval
        self.user = user
        self.client_id = client_id
        self.token_lifetime = token_lifetime
        self.refresh_in = refresh_in
        self.reject_exchange = reject_exchange
        """An HTTP status (401, 403, 404) the token exchange answers instead of a token."""
        self.models = list(models if models is not None else COPILOT_MODELS)
        self.required_headers = tuple(required_headers)
        self.known_editors = tuple(known_editors)
        self.serves = dict(serves or {})
        """Endpoints that really serve a model, where the API disagrees with its own list."""
        self.requests: list[RecordedRequest] = []
        self.received: list[str] = []
        """`METHOD path` of every request that reached the server, of any kind, in order."""
        self.github_tokens: set[str] = set(github_tokens)
        self.copilot_tokens: dict[str, float] = {}
        """Every Copilot token issued, with its expiry (`time.time()` seconds)."""
        self.exchanges = 0
        self.proxy_url: str | None = None
        """What the exchange names as `endpoints.proxy` (Copilot's ghost-text completions)."""
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._device_codes: dict[str, list[float]] = {}  # code -> [polls so far, interval]

    # --- what tests use ---------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The base URL, standing in for both https://github.com and https://api.github.com."""
        return self.base_url

    @property
    def api_url(self) -> str:
        """The Copilot API base the token exchange hands out as `endpoints.api`."""
        return f"{self.url}{API_PREFIX}"

    @property
    def hosts(self) -> GitHubHosts:
        return GitHubHosts(github_url=self.url, api_url=self.url)

    @property
    def environ(self) -> dict[str, str]:
        """The environment variables that point copilot_nb (e.g. in a kernel) at this fake."""
        return {"COPILOT_NB_GITHUB_URL": self.url, "COPILOT_NB_GITHUB_API_URL": self.url}

    @property
    def chat_requests(self) -> list[ScriptedRequest]:
        """The chat requests that reached the script, with their bodies and headers."""
        return self.script.requests

    def add_github_token(self, token: str = "gho_fake_preset") -> str:
        """Accept `token` as if the user had signed in with it; returns it."""
        with self._lock:
            self.github_tokens.add(token)
        return token

    def revoke_copilot_tokens(self) -> None:
        """Make every Copilot token issued so far invalid (the API answers 401)."""
        with self._lock:
            self.copilot_tokens = dict.fromkeys(self.copilot_tokens, 0.0)

    def model(self, name: str | None = None, **options: Any) -> Any:
        """A `CopilotChat` signed in to this fake with a preset GitHub token."""
        from ..models.copilot.chat import CopilotChat

        token = options.pop("github_token", None) or self.add_github_token()
        return CopilotChat(name or self.model_name, github_token=token, hosts=self.hosts, **options)

    def assert_complete(self) -> None:
        self.script.assert_complete()

    # --- the routes (called from the handler's threads) -------------------------------------

    def device_code(self, form: Mapping[str, str]) -> tuple[int, dict[str, Any]]:
        if form.get("client_id") != self.client_id:
            return 401, {
                "error": "incorrect_client_credentials",
                "error_description": "The client_id and/or client_secret passed are incorrect.",
            }
        with self._lock:
            code = f"dc-{next(self._ids)}"
            self._device_codes[code] = [0, self.interval]
            user_code = f"FAKE-{len(self._device_codes):04d}"
        return 200, {
            "device_code": code,
            "user_code": user_code,
            "verification_uri": f"{self.url}/login/device",
            "expires_in": 900,
            "interval": self.interval,
        }

    def access_token(self, form: Mapping[str, str]) -> dict[str, Any]:
        if form.get("grant_type") != DEVICE_GRANT:
            return {"error": "unsupported_grant_type", "error_description": "Unsupported grant."}
        with self._lock:
            state = self._device_codes.get(form.get("device_code", ""))
            if state is None or form.get("client_id") != self.client_id:
                return {"error": "incorrect_device_code", "error_description": "Bad code."}
            index = int(state[0])
            state[0] += 1
            if index >= len(self.polls):
                token = f"gho_fake_{next(self._ids)}"
                self.github_tokens.add(token)
                return {"access_token": token, "token_type": "bearer", "scope": "read:user"}
            outcome = self.polls[index]
            if outcome == "slow_down":
                state[1] += 5
                return {
                    "error": outcome,
                    "error_description": "Too many requests.",
                    "interval": state[1],
                }
            return {"error": outcome, "error_description": f"scripted {outcome}"}

    def github_user(self, headers: Mapping[str, str]) -> tuple[int, dict[str, Any]]:
        if _credential(headers, "token") not in self.github_tokens:
            return 401, {"message": "Bad credentials"}
        return 200, {"login": self.user, "id": 1, "type": "User"}

    def exchange(self, headers: Mapping[str, str]) -> tuple[int, dict[str, Any]]:
        if self.reject_exchange is not None:
            return self.reject_exchange, {"message": "Resource not accessible by integration"}
        if _credential(headers, "token") not in self.github_tokens:
            return 401, {"message": "Bad credentials"}
        now = time.time()
        with self._lock:
            self.exchanges += 1
            token = f"tid=fake{next(self._ids)};exp={int(now + self.token_lifetime)};sku=free"
            self.copilot_tokens[token] = now + self.token_lifetime
        refresh_in = self.refresh_in
        if refresh_in is None:
            refresh_in = self.token_lifetime * 5 / 6
        endpoints = {"api": self.api_url, "telemetry": f"{self.url}/telemetry"}
        if self.proxy_url:
            endpoints["proxy"] = self.proxy_url
        return 200, {
            "token": token,
            "expires_at": int(now + self.token_lifetime),
            "refresh_in": int(refresh_in),
            "endpoints": endpoints,
            "chat_enabled": True,
            "sku": "copilot_for_individuals",
        }

    def copilot_refusal(
        self, headers: Mapping[str, str]
    ) -> tuple[int, str | dict[str, Any]] | None:
        """Why the Copilot API would refuse this request, or None; a str is a plain-text body."""
        expiry = self.copilot_tokens.get(_credential(headers, "bearer") or "")
        if expiry is None:
            return 401, {"error": {"message": "unauthorized: invalid token", "code": "invalid"}}
        if expiry <= time.time():
            return 401, {"error": {"message": "unauthorized: token expired", "code": "expired"}}
        editor = headers.get("Editor-Version")
        if "Editor-Version" in self.required_headers and not editor:
            return 400, "bad request: missing Editor-Version header for IDE auth"
        if editor and not editor.startswith(self.known_editors):
            return 400, "bad request: unknown Editor-Version header for IDE auth"
        for name in self.required_headers:
            if not headers.get(name):
                message = f"bad request: missing {name} header for IDE auth"
                return 400, {"error": {"message": message, "code": "bad_request"}}
        return None

    def served_on(self, model: str, endpoint: str) -> bool:
        """Whether the model list says `endpoint` serves `model` (models it does not list, and
        models that list no endpoints, speak Chat Completions only)."""
        with self._lock:
            if model in self.serves:
                return endpoint in self.serves[model]
            entry = next((m for m in self.models if m.get("id") == model), None)
        listed = entry.get("supported_endpoints") if entry is not None else None
        return endpoint in (listed if listed else [CHAT])


def unsupported_api_body(model: str, endpoint: str) -> bytes:
    """The real answer's bytes (compact JSON, a line feed at the end)."""
    message = f'model "{model}" is not accessible via the {endpoint} endpoint'
    error = {"message": message, "code": "unsupported_api_for_model"}
    return json.dumps({"error": error}, separators=(",", ":")).encode() + b"\n"


def _credential(headers: Mapping[str, str], scheme: str) -> str | None:
    kind, _, value = (headers.get("Authorization") or "").partition(" ")
    return value.strip() if kind.lower() == scheme else None


class _FakeHandler(_Handler):
    owner: FakeGitHub  # type: ignore[assignment]  # serves the same script as ScriptedServer

    def _record(self, body: Any) -> dict[str, str]:
        headers = dict(self.headers.items())
        with self.owner._lock:
            self.owner.requests.append(
                RecordedRequest(method=self.command, path=self.path, headers=headers, body=body)
            )
        return headers

    def _answer(self, status: int, payload: dict[str, Any]) -> None:
        """JSON when the client asked for it (as GitHub does), form-encoded otherwise."""
        if "json" in (self.headers.get("Accept") or ""):
            self._send_json(status, payload)
            return
        data = urlencode({k: str(v) for k, v in payload.items()}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        headers = self._record(None)
        path = urlsplit(self.path).path.rstrip("/")
        if path == "/copilot_internal/v2/token":
            self._send_json(*self.owner.exchange(headers))
        elif path == "/user":
            self._send_json(*self.owner.github_user(headers))
        elif path == f"{API_PREFIX}/models":
            refusal = self.owner.copilot_refusal(headers)
            if refusal is not None:
                self._refuse(*refusal)
            else:
                self._send_json(200, {"data": self.owner.models, "object": "list"})
        else:
            self._send_json(404, {"message": "Not Found"})

    def _refuse(self, status: int, body: str | dict[str, Any]) -> None:
        if isinstance(body, dict):
            self._send_json(status, body)
        else:
            self._send_bytes(status, body.encode(), "text/plain; charset=utf-8")

    def _send_bytes(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = _parse_body(raw, self.headers.get("Content-Type") or "")
        headers = self._record(body)
        path = urlsplit(self.path).path.rstrip("/")
        if path == "/login/device/code":
            self._answer(*self.owner.device_code(body))
        elif path == "/login/oauth/access_token":
            self._answer(200, self.owner.access_token(body))
        elif path in (f"{API_PREFIX}{CHAT}", f"{API_PREFIX}{RESPONSES}", f"{API_PREFIX}{MESSAGES}"):
            refusal = self.owner.copilot_refusal(headers)
            if refusal is not None:
                self._refuse(*refusal)
                return
            endpoint = path[len(API_PREFIX) :]
            model = str(body.get("model", "")) if isinstance(body, dict) else ""
            if not self.owner.served_on(model, endpoint):
                data = unsupported_api_body(model, endpoint)
                self._send_bytes(400, data, "application/json")
                return
            self.path = self.path[len(API_PREFIX) :]
            self.rfile = io.BytesIO(raw)  # the scripted server's handler reads the body again
            super().do_POST()
        else:
            self._send_json(404, {"message": "Not Found"})


def _parse_body(raw: bytes, content_type: str) -> Any:
    text = raw.decode("utf-8", "replace")
    if "json" in content_type:
        try:
            return json.loads(text or "{}")
        except ValueError:
            return {}
    return dict(parse_qsl(text))


FakeGitHub.handler = _FakeHandler
