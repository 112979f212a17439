"""The proxy's edges: bodies nested too deep, and clients that never finish sending.

Each story runs against a real proxy on loopback (uvicorn on its own loop, a scripted upstream),
with httpx and raw sockets as clients. The timeouts are set short here so the waits take about a
second; the assertions wait for the connection to close, never for a fixed time.
"""

from __future__ import annotations

import json
import select
import socket
import time
from typing import Any

import httpx
import pytest

from copilot_nb.messages import MAX_ARGUMENT_DEPTH, nested_deeper_than
from copilot_nb.testing import reply
from tests.proxy_fixtures import MODEL, RunningProxy, proxy_for

__all__ = ["proxy_for"]

TIMEOUT = 1.0
"""The header and body timeouts of the test server, in seconds."""
SHORT = {"header_timeout": TIMEOUT, "body_timeout": TIMEOUT}
SLACK = 3.0
"""How much later than its timeout a connection may close on a busy machine."""
MCP_HEADERS = {"accept": "application/json, text/event-stream"}


def post(proxy: RunningProxy, path: str, body: str | bytes) -> httpx.Response:
    headers = {
        "authorization": f"Bearer {proxy.token}",
        "content-type": "application/json",
        **(MCP_HEADERS if path == "/mcp" else {}),
    }
    return httpx.post(f"{proxy.url}{path}", content=body, headers=headers, trust_env=False)


def chat_with_schema(parameters: Any) -> str:
    """A chat request whose one tool takes `parameters` (where a deep body hides most easily)."""
    tool = {"type": "function", "function": {"name": "deep", "parameters": parameters}}
    messages = [{"role": "user", "content": "hi"}]
    return json.dumps({"model": MODEL, "messages": messages, "tools": [tool]})


def schema_nested(levels: int) -> dict[str, Any]:
    """An object schema `levels` objects deep: two JSON levels each."""
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    for _ in range(levels - 1):
        schema = {"type": "object", "properties": {"inner": schema}}
    return schema


def our_code(error: dict) -> str:
    """The proxy's code of a refusal: OpenAI's `code`, or at `/mcp` the JSON-RPC error's
    `data.code` (its `code` is JSON-RPC's number)."""
    if "data" in error:
        assert error["code"] == -32600, error
        return error["data"]["code"]
    return error["code"]


def objects(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


DEEP_BODIES = {
    "200,000 arrays, never closed": "[" * 200_000,
    "200,000 objects": objects(200_000),
    "900 arrays, valid JSON": "[" * 900 + "]" * 900,
    "900 levels of tool schema": chat_with_schema(schema_nested(450)),
    "one level over the limit": objects(MAX_ARGUMENT_DEPTH + 1),
}


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/mcp"])
def test_a_body_nested_too_deep_is_a_clear_400_on_every_route(proxy_for, path):
    proxy = proxy_for([reply("still here")])
    for name, body in DEEP_BODIES.items():
        response = post(proxy, path, body)
        assert response.status_code == 400, (name, response.text)
        error = response.json()["error"]
        assert our_code(error) == "json_too_deep", name
        assert f"more than {MAX_ARGUMENT_DEPTH} levels deep" in error["message"]
        assert "Traceback" not in response.text
    assert proxy.upstream.requests == []
    answer = post(proxy, "/v1/chat/completions", chat_with_schema(schema_nested(1)))
    assert answer.status_code == 200 and "still here" in answer.text


def test_a_body_exactly_as_deep_as_the_limit_is_served(proxy_for):
    proxy = proxy_for([reply("deep enough")])
    levels = next(
        n for n in range(1, 64) if nested_deeper_than(chat_with_schema(schema_nested(n)), 62)
    )
    body = chat_with_schema(schema_nested(levels))
    assert not nested_deeper_than(body, MAX_ARGUMENT_DEPTH)
    assert nested_deeper_than(body, MAX_ARGUMENT_DEPTH - 2)
    response = post(proxy, "/v1/chat/completions", body)
    assert response.status_code == 200, response.text
    assert "deep enough" in response.text
    sent = proxy.upstream.requests[0].body["tools"][0]["function"]["parameters"]
    assert sent == schema_nested(levels)


def test_brackets_inside_strings_are_text_not_nesting(proxy_for):
    proxy = proxy_for([reply("read it")])
    text = "[{" * 5000
    body = {"model": MODEL, "messages": [{"role": "user", "content": text}]}
    response = post(proxy, "/v1/chat/completions", json.dumps(body))
    assert response.status_code == 200, response.text
    assert proxy.upstream.requests[0].messages[-1]["content"] == text


def connect(proxy: RunningProxy) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", proxy.server.port), timeout=10)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def head(proxy: RunningProxy, path: str = "/v1/chat/completions", length: int = 0) -> bytes:
    lines = [
        f"POST {path} HTTP/1.1",
        f"Host: 127.0.0.1:{proxy.server.port}",
        f"Authorization: Bearer {proxy.token}",
        "Content-Type: application/json",
        f"Content-Length: {length}",
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def until_closed(
    sock: socket.socket, *, since: float, drip: bytes = b"", limit: float
) -> tuple[float, bytes]:
    """Read (sending `drip` a byte at a time meanwhile) until the server closes the connection:
    the seconds from `since` (when the server's clock started) and what the server sent."""
    start, received = since, b""
    while time.monotonic() - start < limit:
        readable, _, _ = select.select([sock], [], [], 0.1)
        if readable:
            try:
                data = sock.recv(65536)
            except ConnectionResetError:
                data = b""
            if not data:
                return time.monotonic() - start, received
            received += data
        elif drip:
            sock.sendall(drip[:1])
            drip = drip[1:]
    raise AssertionError(f"the connection was still open after {limit:g} s; got {received!r}")


def models_answered(proxy: RunningProxy) -> None:
    """Another client is served meanwhile."""
    response = httpx.get(
        f"{proxy.url}/v1/models", headers={"authorization": f"Bearer {proxy.token}"}, timeout=5
    )
    assert response.status_code == 200 and MODEL in response.text


def test_headers_sent_a_byte_at_a_time_are_cut_off_while_others_are_served(proxy_for):
    proxy = proxy_for([], server=SHORT)
    with connect(proxy) as slow, connect(proxy) as silent:
        opened = time.monotonic()
        request = head(proxy, length=2)
        slow.sendall(request[:10])
        models_answered(proxy)
        took, said = until_closed(slow, since=opened, drip=request[10:], limit=TIMEOUT + SLACK)
        assert TIMEOUT * 0.9 <= took < TIMEOUT + SLACK
        assert said.startswith(b"HTTP/1.1 408 ")
        _, said_silent = until_closed(silent, since=opened, limit=TIMEOUT + SLACK)
        assert said_silent == b""  # nothing was asked, so nothing is answered
    models_answered(proxy)


def test_a_kept_alive_connection_has_the_same_deadline_for_its_next_request(proxy_for):
    proxy = proxy_for([], server=SHORT)
    with connect(proxy) as sock:
        get = f"GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1:{proxy.server.port}\r\n"
        sock.sendall(f"{get}Authorization: Bearer {proxy.token}\r\n\r\n".encode())
        first = b""
        while b'"data"' not in first or not first.endswith(b"}"):
            first += sock.recv(65536)
        assert first.startswith(b"HTTP/1.1 200 ")
        answered = time.monotonic()
        took, said = until_closed(sock, since=answered, drip=get.encode(), limit=TIMEOUT + SLACK)
        assert said.startswith(b"HTTP/1.1 408 ")
        assert TIMEOUT * 0.5 <= took < TIMEOUT + SLACK


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/mcp"])
def test_a_body_that_never_arrives_is_answered_408_and_closed(proxy_for, path):
    proxy = proxy_for([reply("never")], server=SHORT)
    with connect(proxy) as sock:
        sent = time.monotonic()
        sock.sendall(head(proxy, path, length=1000) + b'{"model": ')
        models_answered(proxy)
        took, said = until_closed(sock, since=sent, limit=TIMEOUT + SLACK)
    assert TIMEOUT * 0.9 <= took < TIMEOUT + SLACK
    status, _, rest = said.partition(b"\r\n")
    assert status == b"HTTP/1.1 408 Request Timeout"
    headers, _, body = rest.partition(b"\r\n\r\n")
    assert b"connection: close" in headers.lower()
    error = json.loads(body)["error"]
    assert our_code(error) == "request_timeout"
    assert f"within {TIMEOUT:g} s" in error["message"]
    assert proxy.upstream.requests == []


def test_a_body_dripped_a_byte_at_a_time_has_one_deadline_in_all(proxy_for):
    proxy = proxy_for([reply("never")], server=SHORT)
    body = json.dumps({"model": MODEL, "messages": [{"role": "user", "content": "x" * 500}]})
    with connect(proxy) as sock:
        sent = time.monotonic()
        sock.sendall(head(proxy, length=len(body)))
        took, said = until_closed(sock, since=sent, drip=body.encode(), limit=TIMEOUT + SLACK)
    assert said.startswith(b"HTTP/1.1 408 ")
    assert took < TIMEOUT + SLACK
