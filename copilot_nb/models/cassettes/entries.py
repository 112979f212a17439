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
import contextlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ..recording_scrub import (
    DURATION,
    HOME,
    REDACTED,
    WORKSPACE,
    Scrubber,
    scrub_stream,
)

__all__ = ["DURATION", "HOME", "REDACTED", "WORKSPACE", "Scrubber"]

FORMAT = "copilot_nb.cassette/1"

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
VOLATILE_FIELDS = frozenset({"user", "metadata", "prompt_cache_key", "safety_identifier"})
"""Request body fields that name the user or the moment, not the request."""


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
    arguments: Any = None
    """The call's arguments as a cassette keeps them (`call_arguments`): the answer applies to
    this call exactly, never to another call of the same tool."""
    category: str = ""
    sig: str = ""
    """The recorder's signature (`cassette_signing`); '' in a cassette from elsewhere."""

    def signed_parts(self, cassette_id: str) -> list[Any]:
        """What the signature covers: the cassette, the place, the call and the answer."""
        return [
            "approval",
            cassette_id,
            self.n,
            self.tool,
            self.arguments,
            self.category,
            self.approved,
            self.reason,
        ]

    def as_json(self) -> dict[str, Any]:
        return {
            "n": self.n,
            "type": "approval",
            "tool": self.tool,
            "summary": self.summary,
            "arguments": self.arguments,
            "category": self.category,
            "approved": self.approved,
            "reason": self.reason,
            "sig": self.sig,
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
            arguments=item.get("arguments"),
            category=str(item.get("category", "")),
            sig=str(item.get("sig", "")),
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


def call_arguments(arguments: Any, scrubber: Scrubber) -> Any:
    """A tool call's arguments as an answer keeps and compares them: parsed when they came as
    JSON text, with the machine's paths as placeholders (the same call matches on any machine)."""
    if isinstance(arguments, str):
        with contextlib.suppress(ValueError):
            arguments = json.loads(arguments)
    return scrubber.json(arguments)


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
    except ValueError:  # a stream: secrets split across its pieces are found in the joined text
        return scrubber.text(scrub_stream(text, scrubber)).encode("utf-8")
    scrubbed = scrubber.json(value)
    if isinstance(scrubbed, dict) and isinstance(scrubbed.get("token"), str):
        scrubbed["token"] = REDACTED  # the Copilot token exchange's answer
    if scrubbed == value:
        return body
    return json.dumps(scrubbed, ensure_ascii=False).encode("utf-8")
