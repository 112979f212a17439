"""What a cassette holds, line by line: HTTP exchanges with a model provider and the user's answers
to approval requests, normalised so that a replay can compare and secrets are never written.

A cassette is JSON Lines: a header object, then one entry per line in the order things happened.
An HTTP entry keeps the request as it matters for replay (method, path, the JSON body with the
workspace's absolute path replaced by `<workspace>`) and the response as the provider sent it
(status, the headers a client reads, the body bytes). What is volatile (a request id, a port on
loopback, the user-agent's version) is not kept; what is secret (`Authorization`, `x-api-key`,
cookies, keys and tokens anywhere in a body, the Copilot token the exchange hands out) is never
written.
"""

from __future__ import annotations

import base64
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ..text import SECRET_VALUE, may_hold_secret

FORMAT = "copilot_nb.cassette/1"
REDACTED = "[redacted]"
WORKSPACE = "<workspace>"
HOME = "<home>"

KEPT_REQUEST_HEADERS = (
    "content-type",
    "anthropic-version",
    "anthropic-beta",
    "openai-intent",
    "x-initiator",
    "copilot-vision-request",
)
"""Request headers worth reading in a cassette; none is secret, none is compared on replay."""
KEPT_RESPONSE_HEADERS = ("content-type", "retry-after", "retry-after-ms")
"""Response headers the decoders and the retry policy read; everything else is left out."""
IN_ORDER_PATHS = ("/chat/completions", "/responses", "/messages")
"""Model requests: replayed strictly in order. Anything else (a token exchange, a model list,
Ollama's `/api/show`) is a lookup: answered from the recording whenever it is asked again."""
DURATION = re.compile(r"\bin \d+\.\d+ s\b")
"""How long a run took, as our tools tell the model (`ran cell … in 0.53 s`): never the same twice,
so a cassette compares (and keeps) it as `in <seconds> s`."""
VOLATILE_FIELDS = frozenset({"user", "metadata", "prompt_cache_key", "safety_identifier"})
"""Request body fields that name the user or the moment, not the request."""
SECRET_ENVIRONMENT = (
    "OPENAI_API_KEY",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "COPILOT_NB_GITHUB_TOKEN",
)
"""Keys in the environment whose values are redacted wherever they appear, whatever their form."""


@dataclass(frozen=True, kw_only=True)
class RecordedRequest:
    """A request as it is compared on replay."""

    method: str
    path: str
    body: Any
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def in_order(self) -> bool:
        return self.method == "POST" and self.path.split("?")[0].endswith(IN_ORDER_PATHS)

    def same_as(self, other: RecordedRequest) -> bool:
        return (self.method, self.path, self.body) == (other.method, other.path, other.body)

    def as_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "path": self.path,
            "headers": dict(self.headers),
            "body": self.body,
        }


@dataclass(frozen=True, kw_only=True)
class RecordedResponse:
    """A response as the provider sent it, or the connection error that came instead."""

    status: int = 0
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes = b""
    error: str = ""

    def as_json(self) -> dict[str, Any]:
        if self.error:
            return {"error": self.error}
        out: dict[str, Any] = {"status": self.status, "headers": dict(self.headers)}
        try:
            out["text"] = self.body.decode("utf-8")
        except UnicodeDecodeError:
            out["base64"] = base64.b64encode(self.body).decode("ascii")
        return out


@dataclass(frozen=True, kw_only=True)
class Exchange:
    """One HTTP request and its response: entry `n` of a cassette."""

    n: int
    request: RecordedRequest
    response: RecordedResponse

    def as_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "type": "http",
            "request": self.request.as_json(),
            "response": self.response.as_json(),
        }


@dataclass(frozen=True, kw_only=True)
class Answer:
    """The user's answer to one approval request: entry `n` of a cassette."""

    n: int
    tool: str
    summary: str
    approved: bool
    reason: str = ""

    def as_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "type": "approval",
            "tool": self.tool,
            "summary": self.summary,
            "approved": self.approved,
            "reason": self.reason,
        }


Entry = Exchange | Answer


def entry_from_json(item: Mapping[str, Any]) -> Entry:
    """One cassette line back as an entry; a malformed line raises ValueError saying what."""
    kind = item.get("type")
    n = int(item["n"])
    if kind == "approval":
        return Answer(
            n=n,
            tool=str(item["tool"]),
            summary=str(item.get("summary", "")),
            approved=bool(item["approved"]),
            reason=str(item.get("reason", "")),
        )
    if kind != "http":
        raise ValueError(f"entry {n} has an unknown type {kind!r}")
    request, response = item["request"], item["response"]
    return Exchange(
        n=n,
        request=RecordedRequest(
            method=str(request["method"]),
            path=str(request["path"]),
            body=request.get("body"),
            headers=dict(request.get("headers") or {}),
        ),
        response=_response_from_json(response),
    )


def _response_from_json(item: Mapping[str, Any]) -> RecordedResponse:
    if "error" in item:
        return RecordedResponse(error=str(item["error"]))
    if "base64" in item:
        body = base64.b64decode(item["base64"])
    else:
        body = str(item.get("text", "")).encode("utf-8")
    return RecordedResponse(
        status=int(item["status"]),
        headers=dict(item.get("headers") or {}),
        body=body,
    )


# --- normalising and redacting ---------------------------------------------------------------


@dataclass(frozen=True)
class Scrubber:
    """Replaces the machine's paths with placeholders and secrets with `[redacted]` in text."""

    places: tuple[tuple[str, str], ...]
    secrets: tuple[str, ...]

    @classmethod
    def here(cls, environ: Mapping[str, str] | None = None) -> Scrubber:
        """For this process now: the working directory (the workspace) and home, longest first."""
        env = os.environ if environ is None else environ
        cwd = os.getcwd()
        places = {os.path.realpath(cwd): WORKSPACE, cwd: WORKSPACE}
        home = os.path.expanduser("~")
        if len(home) > 1:
            places.setdefault(os.path.realpath(home), HOME)
            places.setdefault(home, HOME)
        ordered = sorted(places.items(), key=lambda item: -len(item[0]))
        secrets = tuple(v for name in SECRET_ENVIRONMENT if len(v := env.get(name, "")) >= 8)
        return cls(tuple(ordered), secrets)

    def text(self, value: str) -> str:
        for secret in self.secrets:
            value = value.replace(secret, REDACTED)
        if may_hold_secret(value):
            value = SECRET_VALUE.sub(REDACTED, value)
        for place, name in self.places:
            value = value.replace(place, name)
        return DURATION.sub("in <seconds> s", value)

    def json(self, value: Any) -> Any:
        """`value` with every string scrubbed, volatile top-level fields dropped."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.json(item) for item in value]
        if isinstance(value, dict):
            return {self.text(str(k)): self.json(v) for k, v in value.items()}
        return value


def recorded_request(
    method: str, url: str, headers: Mapping[str, str], content: bytes, scrubber: Scrubber
) -> RecordedRequest:
    """A request as a cassette keeps it: path and query (no host: loopback ports and regional
    hosts differ between runs), the kept headers, the body as JSON with volatile fields dropped."""
    parts = urlsplit(url)
    path = parts.path + (f"?{parts.query}" if parts.query else "")
    body: Any = None
    if content:
        try:
            body = json.loads(content)
        except ValueError:
            body = content.decode("utf-8", "replace")
    if isinstance(body, dict):
        body = {k: v for k, v in body.items() if k not in VOLATILE_FIELDS}
    kept = {
        k: v for k, v in ((k.lower(), v) for k, v in headers.items()) if k in KEPT_REQUEST_HEADERS
    }
    return RecordedRequest(
        method=method.upper(), path=scrubber.text(path), body=scrubber.json(body), headers=kept
    )


def recorded_response(
    status: int, headers: Mapping[str, str], body: bytes, scrubber: Scrubber
) -> RecordedResponse:
    """A response as a cassette keeps it: secrets in the body redacted (the Copilot token an
    exchange hands out among them), the headers a client reads, nothing else."""
    kept = {
        k: v for k, v in ((k.lower(), v) for k, v in headers.items()) if k in KEPT_RESPONSE_HEADERS
    }
    return RecordedResponse(status=status, headers=kept, body=_scrubbed_body(body, scrubber))


def _scrubbed_body(body: bytes, scrubber: Scrubber) -> bytes:
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        return body
    try:
        value = json.loads(text)
    except ValueError:
        return scrubber.text(text).encode("utf-8")
    scrubbed = scrubber.json(value)
    if isinstance(scrubbed, dict) and isinstance(scrubbed.get("token"), str):
        scrubbed["token"] = REDACTED  # the Copilot token exchange's answer
    if scrubbed == value:
        return body
    return json.dumps(scrubbed, ensure_ascii=False).encode("utf-8")
