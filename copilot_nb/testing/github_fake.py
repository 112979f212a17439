"""`FakeGitHub`: GitHub's sign-in, the Copilot token exchange and the Copilot API, on loopback.

It answers the OAuth device flow (`/login/device/code`, `/login/oauth/access_token`, with a
scripted sequence of `authorization_pending`, `slow_down`, `expired_token` or `access_denied`),
`/user`, `/copilot_internal/v2/token` (short-lived tokens with a chosen lifetime, counted, or
refused) and, under `/copilot-api` (what the exchange names as `endpoints.api`), Copilot's
`/models` and `/chat/completions`. Chat replies come from a script, exactly as `ScriptedServer`
plays them; chat and model requests are refused without a valid Copilot token and editor headers.
Every request is recorded.
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

from ..models.github_auth import DEFAULT_CLIENT_ID, DEVICE_GRANT
from ..models.github_tokens import GitHubHosts
from .script import Reply, ScriptedRequest, Step
from .scripted import Script
from .server import LoopbackService, _Handler

API_PREFIX = "/copilot-api"
REQUIRED_HEADERS = ("Editor-Version", "Copilot-Integration-Id")


def _model(
    id: str, name: str, vendor: str, family: str, window: int, prompt: int, output: int, **more: Any
) -> dict[str, Any]:
    kind = more.pop("type", "chat")
    supports = {"streaming": True, "tool_calls": more.pop("tool_calls", True)}
    limits = {"max_context_window_tokens": window, "max_prompt_tokens": prompt}
    limits["max_output_tokens"] = output
    entry: dict[str, Any] = {
        "id": id,
        "name": name,
        "vendor": vendor,
        "version": id,
        "object": "model",
        "preview": more.pop("preview", False),
        "model_picker_enabled": more.pop("picker", True),
        "capabilities": {
            "family": family,
            "type": kind,
            "object": "model_capabilities",
            "tokenizer": "o200k_base",
            "limits": limits,
            "supports": supports,
        },
    }
    entry.update(more)
    return entry


COPILOT_MODELS: list[dict[str, Any]] = [
    _model("gpt-4o", "GPT-4o", "Azure OpenAI", "gpt-4o", 128000, 64000, 4096),
    _model("gpt-4.1", "GPT-4.1", "Azure OpenAI", "gpt-4.1", 128000, 128000, 16384),
    _model(
        "claude-sonnet-4",
        "Claude Sonnet 4",
        "Anthropic",
        "claude-sonnet-4",
        216000,
        128000,
        16000,
        policy={"state": "enabled", "terms": "Enable access to Claude Sonnet 4."},
    ),
    _model("o3-mini", "o3-mini", "Azure OpenAI", "o3-mini", 200000, 64000, 100000, picker=False),
    _model(
        "gemini-2.5-pro",
        "Gemini 2.5 Pro (Preview)",
        "Google",
        "gemini-2.5-pro",
        128000,
        128000,
        64000,
        preview=True,
        policy={"state": "disabled"},
    ),
    _model(
        "text-embedding-3-small",
        "Embedding V3 small",
        "Azure OpenAI",
        "text-embedding-3-small",
        8191,
        8191,
        0,
        type="embeddings",
        tool_calls=False,
        picker=False,
    ),
]
"""A `/models` answer shaped like Copilot's: chat and embedding models, limits, policies."""


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
        model_name: str = "gpt-4o",
    ) -> None:
        self.script = Script(steps, responder=responder)
        self.model_name = model_name
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
        self.requests: list[RecordedRequest] = []
        self.github_tokens: set[str] = set(github_tokens)
        self.copilot_tokens: dict[str, float] = {}
        """Every Copilot token issued, with its expiry (`time.time()` seconds)."""
        self.exchanges = 0
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
        from ..models.copilot import CopilotChat

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
        return 200, {
            "token": token,
            "expires_at": int(now + self.token_lifetime),
            "refresh_in": int(refresh_in),
            "endpoints": {"api": self.api_url, "telemetry": f"{self.url}/telemetry"},
            "chat_enabled": True,
            "sku": "copilot_for_individuals",
        }

    def copilot_refusal(self, headers: Mapping[str, str]) -> tuple[int, dict[str, Any]] | None:
        """Why the Copilot API would refuse this request, or None."""
        expiry = self.copilot_tokens.get(_credential(headers, "bearer") or "")
        if expiry is None:
            return 401, {"error": {"message": "unauthorized: invalid token", "code": "invalid"}}
        if expiry <= time.time():
            return 401, {"error": {"message": "unauthorized: token expired", "code": "expired"}}
        for name in self.required_headers:
            if not headers.get(name):
                message = f"bad request: missing {name} header for IDE auth"
                return 400, {"error": {"message": message, "code": "bad_request"}}
        return None


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
                self._send_json(*refusal)
            else:
                self._send_json(200, {"object": "list", "data": self.owner.models})
        else:
            self._send_json(404, {"message": "Not Found"})

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        body = _parse_body(raw, self.headers.get("Content-Type") or "")
        headers = self._record(body)
        path = urlsplit(self.path).path.rstrip("/")
        if path == "/login/device/code":
            self._answer(*self.owner.device_code(body))
        elif path == "/login/oauth/access_token":
            self._answer(200, self.owner.access_token(body))
        elif path == f"{API_PREFIX}/chat/completions":
            refusal = self.owner.copilot_refusal(headers)
            if refusal is not None:
                self._send_json(*refusal)
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
