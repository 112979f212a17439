"""The proxy's gate: only programs on this machine that hold the token get through.

The proxy spends the user's model quota and runs the agent's tools, so a request must pass four
checks, in this order, before the app sees it:

1. Host is one of the bound addresses, with its port. A web page that rebinds its own DNS name
   to 127.0.0.1 still sends its own name as Host, so this stops DNS rebinding.
2. No browser context from another origin: an Origin header must be this server's own, a
   `Sec-Fetch-Site: cross-site|same-site` is refused, and CORS preflights (OPTIONS) get 403. No
   CORS header is ever sent, so no page can read a response.
3. The bearer token (`Authorization: Bearer` or `x-api-key`), compared in constant time.
4. A body of at most `max_body` bytes: refused from Content-Length before reading, and a chunked
   body is read here up to the limit and replayed to the app, so the app never sees an oversized one.
5. The whole body within `body_timeout` seconds of the headers (408, and the connection closed),
   so a client that promises more than it sends cannot hold a connection and a task forever; the
   headers' own deadline is the protocol's (`read_deadline.py`), since no ASGI app runs before
   they are complete.
6. Arrays and objects nested at most `max_depth` deep, counted on the bytes before any parser
   runs: `json.loads` raises RecursionError on 200,000 brackets and validators recurse on far
   fewer, and either would become a 500 with a traceback somewhere in the app.

Refusals use OpenAI's error shape, so OpenAI clients show the message; at `/mcp` they are a
JSON-RPC error, which MCP clients show as the call's error. The proxy does no OAuth, so the
`/.well-known/` discovery paths need no token and answer 404 (`not_served.py`): a client that
looks for an authorization server on a 401 learns at once there is none, and the 401's message
(pass the token) is what its user reads. `Gate.check` is the pure
core (headers in, refusal out); `GateMiddleware` is the thin ASGI shell around any app. Nothing
here logs, and no refusal echoes the credentials a request carried.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import json
import secrets
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypeAlias

from copilot_nb.messages import MAX_ARGUMENT_DEPTH, nested_deeper_than
from copilot_nb.text import human_bytes, shorten

from .surface import NOTEBOOK

Scope: TypeAlias = MutableMapping[str, Any]
Message: TypeAlias = MutableMapping[str, Any]
Receive: TypeAlias = Callable[[], Awaitable[Message]]
Send: TypeAlias = Callable[[Message], Awaitable[None]]
ASGIApp: TypeAlias = Callable[[Scope, Receive, Send], Awaitable[None]]
Headers: TypeAlias = Iterable[tuple[bytes, bytes]]
"""ASGI's headers: (name, value) byte pairs, names lower-cased by the server."""

TOKEN_PREFIX = "cnb-"
BODY_TIMEOUT = 30.0
"""Seconds from a request's headers to the end of its body: 4 MB at 140 KB/s, far more than a
program on this machine needs."""
MAX_JSON_DEPTH = MAX_ARGUMENT_DEPTH
"""Nesting a request body may have: the limit tool arguments have, one for all JSON from outside."""
_SCAN_INLINE = 64 * 2**10
"""Bodies under this many bytes are scanned for depth on the loop: well under a millisecond."""
MCP_PATH = "/mcp"
DISCOVERY_PREFIX = "/.well-known/"
"""OAuth and OpenID discovery: open, so a client finds no authorization server, not a 401."""
MCP_REFUSED = -32001
"""The JSON-RPC error code of an auth refusal at `/mcp` (the server-defined range); any other
refusal is JSON-RPC's Invalid Request."""
MCP_INVALID_REQUEST = -32600
_BROWSER_SITES = (b"cross-site", b"same-site")
"""Sec-Fetch-Site values of a request a page on another origin made (same-site: another port)."""


def new_token() -> str:
    """A fresh bearer token; the prefix tells a reader (and secret scanners) what it is for."""
    return TOKEN_PREFIX + secrets.token_urlsafe(32)


@dataclass(frozen=True, kw_only=True)
class Refusal:
    """The answer the gate gives instead of the app: a status and OpenAI's error body."""

    status: int
    code: str
    message: str
    headers: tuple[tuple[bytes, bytes], ...] = field(default=())
    rpc: bool = False
    """At `/mcp`: the body is a JSON-RPC error, which MCP clients surface as the error."""

    def body(self) -> bytes:
        """OpenAI's error JSON, which its SDKs turn into an exception carrying `message`; at
        `/mcp`, JSON-RPC's, with the code in `data`."""
        if self.rpc:
            number = MCP_REFUSED if self.status in (401, 403) else MCP_INVALID_REQUEST
            error = {"code": number, "message": self.message, "data": {"code": self.code}}
            return json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
        error = {"message": self.message, "type": "invalid_request_error", "param": None}
        return json.dumps({"error": {**error, "code": self.code}}).encode()

    def response_headers(self) -> list[tuple[bytes, bytes]]:
        """JSON, its length, never cached; plus this refusal's own (WWW-Authenticate)."""
        return [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(self.body())).encode()),
            (b"cache-control", b"no-store"),
            *self.headers,
        ]


@dataclass(frozen=True, kw_only=True)
class Gate:
    """What the proxy accepts: its token, the address it is bound on, the largest body.

    `port` is the real bound port, never 0: bind the socket first, then build the gate, since the
    Host a client sends carries that port."""

    token: str
    host: str
    port: int
    max_body: int = 4 * 2**20
    max_depth: int = MAX_JSON_DEPTH
    body_timeout: float = BODY_TIMEOUT
    open_paths: frozenset[str] = frozenset()
    """Paths that need no token (the other checks still apply); none by default."""
    token_hint: str = NOTEBOOK.token_hint
    """Where the user finds the token, worded for who started the server (`surface.py`)."""

    def __post_init__(self) -> None:
        token = self.token
        if not token or not token.isascii() or not token.isprintable() or " " in token:
            raise ValueError("Gate: the token must be non-empty printable ASCII; use new_token()")
        if not 0 < self.port < 65536:
            raise ValueError(
                f"Gate: port {self.port} is not a bound port; bind the socket first and pass "
                "the port it got, since clients send it in the Host header"
            )
        if self.max_body < 0:
            raise ValueError(f"Gate: max_body must be 0 or more bytes, not {self.max_body}")
        if self.max_depth < 1 or not self.body_timeout > 0:
            raise ValueError("Gate: max_depth must be 1 or more, body_timeout more than 0 s")

    def allowed_hosts(self) -> frozenset[str]:
        """The Host header values accepted, lower-cased and always with the port.

        The bound host itself (the address a user chose), and every loopback spelling when that
        is loopback or all interfaces (0.0.0.0, ::), which include loopback. A Host without the
        port is never accepted."""
        hosts = {_authority(self.host, self.port)}
        if _is_loopback_or_any(self.host):
            hosts |= {_authority(h, self.port) for h in ("127.0.0.1", "localhost", "::1")}
        return frozenset(hosts)

    def check(self, method: str, path: str, headers: Headers) -> Refusal | None:
        """The refusal for a request with these headers, or None to let it through (its body
        still has to fit `max_body` as it is read: `too_large()`)."""
        headers = list(headers)
        allowed = self.allowed_hosts()
        hosts = _values(headers, b"host")
        if len(hosts) != 1 or _text(hosts[0]).lower() not in allowed:
            sent = shorten(_text(hosts[0]), 100) if hosts else "(none)"
            return Refusal(
                status=400,
                code="invalid_host",
                message=f"Host {sent!r} is not this server's address; send requests to "
                f"http://{_authority(self.host, self.port)} (accepted Host values: "
                f"{', '.join(sorted(allowed))}). Other names are refused so that a web page "
                "cannot reach the proxy by pointing its own DNS name at this machine.",
            )
        browser = _from_another_origin(method, headers, allowed)
        if browser:
            return Refusal(
                status=403,
                code="cross_origin",
                message=f"Refused a request from a web page ({browser}): the proxy answers "
                "programs on this machine, never pages in a browser, and sends no CORS headers.",
            )
        if not self._is_open(path) and not self._has_token(headers):
            keys = _values(headers, b"authorization") + _values(headers, b"x-api-key")
            what = "The API key is wrong" if keys else "No API key was sent"
            return Refusal(
                status=401,
                code="invalid_api_key",
                message=f"{what}: {self.token_hint}, as `Authorization: Bearer <token>` "
                "or `x-api-key: <token>`.",
                headers=((b"www-authenticate", b"Bearer"),),
            )
        for length in _values(headers, b"content-length"):
            if not length.strip().isdigit():
                return Refusal(
                    status=400,
                    code="invalid_content_length",
                    message="Content-Length is not a number of bytes; send the body's size.",
                )
            if int(length) > self.max_body:
                return self.too_large()
        return None

    def _is_open(self, path: str) -> bool:
        return path in self.open_paths or path.startswith(DISCOVERY_PREFIX)

    def too_large(self) -> Refusal:
        """413 for a body over `max_body`, saying the limit."""
        return Refusal(
            status=413,
            code="request_too_large",
            message=f"The request body is larger than the proxy's limit of "
            f"{human_bytes(self.max_body)} ({self.max_body:,} bytes); send a shorter "
            "conversation or smaller attachments.",
        )

    def too_deep(self) -> Refusal:
        """400 for a body nested deeper than `max_depth`, before anything parses it."""
        return Refusal(
            status=400,
            code="json_too_deep",
            message=f"The request body nests arrays and objects more than {self.max_depth} "
            "levels deep, which no request to this proxy needs; send flatter JSON.",
        )

    def too_slow(self) -> Refusal:
        """408 for a body still incomplete `body_timeout` seconds after its headers."""
        return Refusal(
            status=408,
            code="request_timeout",
            message=f"The request body did not arrive within {self.body_timeout:g} s of its "
            "headers (a Content-Length larger than the body sent?); send the whole body at once.",
            headers=((b"connection", b"close"),),
        )

    def _has_token(self, headers: list[tuple[bytes, bytes]]) -> bool:
        """True when a header carries the token, compared on bytes in constant time (bytes,
        because compare_digest raises on non-ASCII str and a request may send any byte)."""
        token = self.token.encode()
        for name, value in ((name.lower(), value) for name, value in headers):
            if name == b"authorization":
                scheme, _, credential = value.strip().partition(b" ")
                if scheme.lower() == b"bearer" and hmac.compare_digest(credential.strip(), token):
                    return True
            elif name == b"x-api-key" and hmac.compare_digest(value.strip(), token):
                return True
        return False


class GateMiddleware:
    """The gate around any ASGI app: HTTP requests pass `Gate.check` and the body limit first,
    lifespan events pass through, WebSockets are refused (the proxy speaks none)."""

    def __init__(self, app: ASGIApp, gate: Gate) -> None:
        self.app = app
        self.gate = gate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "lifespan":
            await self.app(scope, receive, send)
            return
        if kind == "websocket":
            await receive()  # websocket.connect; a close before accept refuses the handshake
            await send({"type": "websocket.close", "code": 1008})
            return
        if kind != "http":
            raise RuntimeError(f"GateMiddleware: unknown ASGI scope type {kind!r}")
        path = scope["path"]
        refusal = self.gate.check(scope["method"], path, scope["headers"])
        if refusal is not None:
            await _answer(send, refusal, path)
            return
        try:
            body = await asyncio.wait_for(
                _read_body(receive, self.gate.max_body), self.gate.body_timeout
            )
        except TimeoutError:
            await _answer(send, self.gate.too_slow(), path)  # connection: close ends it
            return
        if body == "gone":
            return  # the client went away mid-body; nobody is left to answer
        if body == "too_large":
            await _answer(send, self.gate.too_large(), path)
            return
        if await _too_deep(body, self.gate.max_depth):
            await _answer(send, self.gate.too_deep(), path)
            return
        await self.app(scope, _replay(body, receive), send)


async def _read_body(receive: Receive, limit: int) -> bytes | Literal["gone", "too_large"]:
    """The whole body, read here so a chunked one over `limit` is refused before the app starts;
    at most `limit` bytes plus one chunk are ever held."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return "gone"
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return "too_large"
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _too_deep(body: bytes, limit: int) -> bool:
    """Whether the body nests deeper than `limit`; a large body is scanned in a thread (a 4 MB
    one takes up to 0.25 s), so the loop (the kernel's) goes on answering meanwhile."""
    text = body.decode("latin-1")  # keeps each byte; UTF-8 puts no ASCII byte inside a character
    if len(body) < _SCAN_INLINE:
        return nested_deeper_than(text, limit)
    return await asyncio.to_thread(nested_deeper_than, text, limit)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that gives the app the body in one message, then the server's own messages
    (http.disconnect, which streaming responses wait for)."""
    pending: list[Message] = [{"type": "http.request", "body": body, "more_body": False}]

    async def replay() -> Message:
        return pending.pop() if pending else await receive()

    return replay


async def _answer(send: Send, refusal: Refusal, path: str) -> None:
    if path == MCP_PATH or path.startswith(MCP_PATH + "/"):
        refusal = replace(refusal, rpc=True)
    start = {"status": refusal.status, "headers": refusal.response_headers()}
    await send({"type": "http.response.start", **start})
    await send({"type": "http.response.body", "body": refusal.body()})


def _from_another_origin(
    method: str, headers: list[tuple[bytes, bytes]], allowed: frozenset[str]
) -> str:
    """Why the request looks like a page on another origin made it, or "" when it does not."""
    if method.upper() == "OPTIONS":
        return "a CORS preflight"
    for origin in _values(headers, b"origin"):
        scheme, sep, authority = _text(origin).lower().partition("://")
        if not sep or scheme not in ("http", "https") or authority not in allowed:
            return f"Origin {shorten(_text(origin), 100)!r}"
    for site in _values(headers, b"sec-fetch-site"):
        if site.strip().lower() in _BROWSER_SITES:
            return f"Sec-Fetch-Site: {_text(site)}"
    return ""


def _values(headers: list[tuple[bytes, bytes]], name: bytes) -> list[bytes]:
    return [value for key, value in headers if key.lower() == name]


def _text(value: bytes) -> str:
    """A header value as text; latin-1 never fails, whatever bytes a client sent."""
    return value.decode("latin-1")


def _authority(host: str, port: int) -> str:
    """`host:port` as a Host header spells it: lower-case, an IPv6 address in brackets."""
    host = host.strip().lower()
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"{host}:{port}"


def _is_loopback_or_any(host: str) -> bool:
    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified
