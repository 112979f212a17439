"""The proxy's gate: only a program on this machine that holds the token reaches the app.

A rebound DNS name, a web page, a missing or wrong key and an oversized body are each refused
before the app sees anything, over real HTTP: uvicorn in a thread on loopback, httpx, openai's SDK
and curl as clients, and a tiny echo app behind the gate that records what reached it.
"""

from __future__ import annotations

import hmac
import json
import shutil
import socket
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from copilot_nb.serve.http.security import Gate, GateMiddleware, Refusal, new_token

TOKEN = new_token()
LIMIT = 1000
"""The test server's max_body: small, so the over-limit bodies are small too."""


class Echo:
    """An ASGI app that records each request that reached it and answers with its body.

    `/stream` answers one chunk and then waits for the client to go away (as a streaming
    completion does), setting `disconnected` when http.disconnect arrives."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, bytes]] = []
        self.lifespan: list[str] = []
        self.disconnected = threading.Event()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (message := await receive())["type"] == "lifespan.startup":
                self.lifespan.append(message["type"])
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        body, more = b"", True
        while more:
            message = await receive()
            body += message.get("body", b"")
            more = message.get("more_body", False)
        self.seen.append((scope["path"], body))
        await send({"type": "http.response.start", "status": 200, "headers": []})
        if scope["path"] != "/stream":
            await send({"type": "http.response.body", "body": body})
            return
        await send({"type": "http.response.body", "body": b"first", "more_body": True})
        if (await receive())["type"] == "http.disconnect":
            self.disconnected.set()


@dataclass
class Proxy:
    url: str
    port: int
    echo: Echo


@pytest.fixture(scope="module")
def proxy() -> Iterator[Proxy]:
    """The echo app behind the gate, served by uvicorn on a socket bound first: the gate needs
    the real port, which the Host header carries."""
    import uvicorn

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    echo = Echo()
    gate = Gate(
        token=TOKEN, host="127.0.0.1", port=port, max_body=LIMIT, open_paths=frozenset({"/health"})
    )
    config = uvicorn.Config(GateMiddleware(echo, gate), log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    while not server.started:
        thread.join(0.02)
    yield Proxy(f"http://127.0.0.1:{port}", port, echo)
    server.should_exit = True
    thread.join(10)
    sock.close()


def no_cors(response: httpx.Response) -> None:
    """Every response, refused or not: no CORS header, so no web page may read it."""
    assert not [h for h in response.headers if h.lower().startswith("access-control-")]


@pytest.fixture
def client(proxy: Proxy) -> Iterator[httpx.Client]:
    proxy.echo.seen.clear()
    hooks = {"response": [no_cors]}
    with httpx.Client(base_url=proxy.url, trust_env=False, event_hooks=hooks) as client:
        yield client


GOOD = {"Authorization": f"Bearer {TOKEN}"}


def error(response: httpx.Response, status: int) -> dict[str, Any]:
    """The OpenAI-shaped error of a refusal with `status`."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert set(body) == {"error"}
    assert body["error"]["type"] == "invalid_request_error" and body["error"]["param"] is None
    return body["error"]


# -- Gate, the pure core ---------------------------------------------------------------------


def test_a_loopback_gate_accepts_every_loopback_spelling_with_the_port() -> None:
    expected = {"127.0.0.1:8123", "localhost:8123", "[::1]:8123"}
    assert Gate(token="t", host="127.0.0.1", port=8123).allowed_hosts() == expected
    assert Gate(token="t", host="LOCALHOST", port=8123).allowed_hosts() == expected
    assert Gate(token="t", host="::1", port=8123).allowed_hosts() == expected
    assert Gate(token="t", host="127.0.0.2", port=8123).allowed_hosts() == {
        *expected,
        "127.0.0.2:8123",
    }


def test_a_gate_bound_elsewhere_accepts_that_address_and_loopback_only_for_all_interfaces() -> None:
    assert Gate(token="t", host="192.168.1.5", port=80).allowed_hosts() == {"192.168.1.5:80"}
    assert Gate(token="t", host="MyBox.lan", port=80).allowed_hosts() == {"mybox.lan:80"}
    assert Gate(token="t", host="fe80::1", port=80).allowed_hosts() == {"[fe80::1]:80"}
    everywhere = Gate(token="t", host="0.0.0.0", port=80).allowed_hosts()
    assert everywhere == {"0.0.0.0:80", "127.0.0.1:80", "localhost:80", "[::1]:80"}


@pytest.mark.parametrize(
    ("fields", "complaint"),
    [
        ({"token": "", "port": 80}, "token"),
        ({"token": "with space", "port": 80}, "token"),
        ({"token": "tøken", "port": 80}, "token"),
        ({"token": "t", "port": 0}, "bind the socket first"),
        ({"token": "t", "port": 80, "max_body": -1}, "max_body"),
    ],
)
def test_a_gate_that_cannot_work_says_so(fields: dict[str, Any], complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        Gate(host="127.0.0.1", **fields)


def test_new_tokens_are_long_random_and_marked() -> None:
    tokens = {new_token() for _ in range(20)}
    assert len(tokens) == 20
    assert all(t.startswith("cnb-") and len(t) >= 40 for t in tokens)
    assert all(Gate(token=t, host="127.0.0.1", port=1) for t in tokens)


def headers(**values: str | bytes) -> list[tuple[bytes, bytes]]:
    return [
        (k.replace("_", "-").lower().encode(), v if isinstance(v, bytes) else v.encode())
        for k, v in values.items()
    ]


def test_the_checks_come_in_order_host_origin_token_size() -> None:
    gate = Gate(token=TOKEN, host="127.0.0.1", port=9, max_body=10)

    def code(**values: str) -> str | None:
        refusal = gate.check("POST", "/v1/x", headers(**values))
        return refusal.code if refusal else None

    big = {"content_length": "11"}
    assert code(host="evil.example:9", origin="https://evil.example", **big) == "invalid_host"
    assert code(host="127.0.0.1:9", origin="https://evil.example", **big) == "cross_origin"
    assert code(host="127.0.0.1:9", **big) == "invalid_api_key"
    assert code(host="127.0.0.1:9", x_api_key=TOKEN, **big) == "request_too_large"
    assert code(host="127.0.0.1:9", x_api_key=TOKEN, content_length="ten") == (
        "invalid_content_length"
    )
    assert code(host="127.0.0.1:9", x_api_key=TOKEN, content_length="10") is None


def test_two_host_headers_are_refused() -> None:
    gate = Gate(token=TOKEN, host="127.0.0.1", port=9)
    twice = [(b"host", b"127.0.0.1:9"), (b"host", b"evil.example:9"), (b"x-api-key", b"x")]
    refusal = gate.check("GET", "/", twice)
    assert refusal is not None and refusal.code == "invalid_host"


def test_the_token_is_compared_with_compare_digest_on_bytes(monkeypatch) -> None:
    compared: list[tuple[object, object]] = []

    def spy(a: bytes, b: bytes) -> bool:
        compared.append((a, b))
        return real(a, b)

    real = hmac.compare_digest
    monkeypatch.setattr(hmac, "compare_digest", spy)
    gate = Gate(token=TOKEN, host="127.0.0.1", port=9)
    assert (
        gate.check("GET", "/", headers(host="127.0.0.1:9", authorization=f"Bearer {TOKEN}")) is None
    )
    assert gate.check("GET", "/", headers(host="127.0.0.1:9", x_api_key="short")) is not None
    assert compared == [(TOKEN.encode(), TOKEN.encode()), (b"short", TOKEN.encode())]


def test_a_refusal_is_openai_shaped_json() -> None:
    refusal = Refusal(status=401, code="invalid_api_key", message="m", headers=((b"a", b"b"),))
    assert json.loads(refusal.body()) == {
        "error": {
            "message": "m",
            "type": "invalid_request_error",
            "param": None,
            "code": "invalid_api_key",
        }
    }
    assert dict(refusal.response_headers())[b"content-type"] == b"application/json"
    assert (b"a", b"b") in refusal.response_headers()


async def test_websockets_are_refused_with_a_close() -> None:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    echo = Echo()
    gate = GateMiddleware(echo, Gate(token=TOKEN, host="127.0.0.1", port=9))
    scope = {"type": "websocket", "path": "/mcp", "headers": headers(x_api_key=TOKEN)}
    await gate(scope, receive, send)
    assert sent == [{"type": "websocket.close", "code": 1008}] and not echo.seen


def test_lifespan_events_pass_through_to_the_app(proxy: Proxy) -> None:
    assert proxy.echo.lifespan == ["lifespan.startup"], "uvicorn's startup reached the app"


# -- over HTTP -------------------------------------------------------------------------------


def test_a_good_token_passes_in_either_header(client: httpx.Client, proxy: Proxy) -> None:
    bearer = client.post("/v1/chat/completions", content=b"hello", headers=GOOD)
    assert bearer.status_code == 200 and bearer.content == b"hello"
    lower = client.get("/v1/models", headers={"authorization": f"bearer {TOKEN}"})
    assert lower.status_code == 200
    api_key = client.post("/v1/messages", content=b"hi", headers={"x-api-key": TOKEN})
    assert api_key.status_code == 200 and api_key.content == b"hi"
    assert [path for path, _ in proxy.echo.seen] == [
        "/v1/chat/completions",
        "/v1/models",
        "/v1/messages",
    ]


def test_a_missing_or_wrong_token_is_refused_without_echoing_it(
    client: httpx.Client, proxy: Proxy
) -> None:
    missing = error(client.get("/v1/models"), 401)
    assert missing["code"] == "invalid_api_key"
    assert "No API key was sent" in missing["message"]
    assert "%copilot serve prints it" in missing["message"]
    wrong = "cnb-a-guess-that-is-not-the-token"
    for sent in ({"Authorization": f"Bearer {wrong}"}, {"x-api-key": wrong}):
        response = client.get("/v1/models", headers=sent)
        assert error(response, 401)["message"].startswith("The API key is wrong")
        assert response.headers["www-authenticate"] == "Bearer"
        assert wrong not in response.text and TOKEN not in response.text
    basic = client.get("/v1/models", headers={"Authorization": f"Basic {TOKEN}"})
    assert error(basic, 401)["code"] == "invalid_api_key"
    assert not proxy.echo.seen


@pytest.mark.parametrize(
    "sent",
    [
        f"Bearer {TOKEN[:-1]}",
        f"Bearer {TOKEN}x",
        "Bearer",
        "Bearer " + "x" * 500,
        b"Bearer " + TOKEN.encode() + b"\xff",
        b"Bearer " + b"\xc3\xa9" * 30,
    ],
    ids=["shorter", "longer", "empty", "very-long", "non-ascii-suffix", "non-ascii"],
)
def test_tokens_of_any_length_or_bytes_are_refused_without_error(
    client: httpx.Client, sent: str | bytes
) -> None:
    response = client.get("/v1/models", headers={"Authorization": sent})
    assert error(response, 401)["code"] == "invalid_api_key"


def test_an_open_path_needs_no_token_but_still_the_right_host(
    client: httpx.Client, proxy: Proxy
) -> None:
    assert client.get("/health").status_code == 200
    evil = client.get("/health", headers={"Host": f"evil.example:{proxy.port}"})
    assert error(evil, 400)["code"] == "invalid_host"


@pytest.mark.parametrize(
    "host", ["evil.example:{port}", "127.0.0.1", "localhost:{other}", "127.0.0.1.nip.io:{port}"]
)
def test_a_request_for_another_host_is_refused_even_with_the_token(
    client: httpx.Client, proxy: Proxy, host: str
) -> None:
    sent = host.format(port=proxy.port, other=proxy.port + 1)
    response = client.get("/v1/models", headers={**GOOD, "Host": sent})
    found = error(response, 400)
    assert found["code"] == "invalid_host"
    assert f"127.0.0.1:{proxy.port}" in found["message"], "it says where to send requests"
    assert not proxy.echo.seen


@pytest.mark.parametrize("host", ["localhost:{port}", "LOCALHOST:{port}", "[::1]:{port}"])
def test_every_loopback_name_with_the_port_passes(
    client: httpx.Client, proxy: Proxy, host: str
) -> None:
    response = client.get("/v1/models", headers={**GOOD, "Host": host.format(port=proxy.port)})
    assert response.status_code == 200


@pytest.mark.parametrize(
    "sent",
    [
        {"Origin": "https://evil.example"},
        {"Origin": "null"},
        {"Origin": "http://localhost:{other}"},
        {"Origin": "chrome-extension://{port}"},
        {"Sec-Fetch-Site": "cross-site"},
        {"Sec-Fetch-Site": "same-site"},
    ],
)
def test_a_request_from_a_web_page_is_refused_even_with_the_token(
    client: httpx.Client, proxy: Proxy, sent: dict[str, str]
) -> None:
    fields = {k: v.format(port=proxy.port, other=proxy.port + 1) for k, v in sent.items()}
    response = client.post("/v1/chat/completions", content=b"{}", headers={**GOOD, **fields})
    assert error(response, 403)["code"] == "cross_origin"
    assert not proxy.echo.seen


@pytest.mark.parametrize(
    "sent",
    [
        {"Origin": "http://127.0.0.1:{port}"},
        {"Origin": "http://localhost:{port}", "Sec-Fetch-Site": "same-origin"},
        {"Sec-Fetch-Site": "none"},
    ],
)
def test_the_servers_own_origin_passes(
    client: httpx.Client, proxy: Proxy, sent: dict[str, str]
) -> None:
    fields = {k: v.format(port=proxy.port) for k, v in sent.items()}
    assert client.get("/v1/models", headers={**GOOD, **fields}).status_code == 200


def test_a_cors_preflight_is_refused(client: httpx.Client, proxy: Proxy) -> None:
    preflight = {
        "Origin": "https://evil.example",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type",
    }
    assert error(client.options("/v1/chat/completions", headers=preflight), 403)["code"] == (
        "cross_origin"
    )
    own = client.options("/v1/models", headers={**GOOD, "Origin": proxy.url})
    assert error(own, 403)["code"] == "cross_origin", "not even from its own origin"
    assert not proxy.echo.seen


def test_a_body_over_the_limit_is_refused_before_the_app_sees_it(
    client: httpx.Client, proxy: Proxy
) -> None:
    declared = client.post("/v1/declared", content=b"x" * (LIMIT + 1), headers=GOOD)
    assert error(declared, 413)["code"] == "request_too_large"
    assert "1,000 bytes" in error(declared, 413)["message"]

    def chunks() -> Iterator[bytes]:
        for _ in range(8):
            yield b"y" * 300

    chunked = client.post("/v1/chunked", content=chunks(), headers=GOOD)
    assert error(chunked, 413)["code"] == "request_too_large"
    assert not proxy.echo.seen
    assert client.get("/v1/models", headers=GOOD).status_code == 200, "the server is still fine"


def test_a_body_exactly_at_the_limit_arrives_whole(client: httpx.Client, proxy: Proxy) -> None:
    body = bytes(range(256)) * 3 + b"z" * (LIMIT - 768)
    assert client.post("/v1/declared", content=body, headers=GOOD).content == body

    def chunks() -> Iterator[bytes]:
        for start in range(0, LIMIT, 70):
            yield body[start : start + 70]

    assert client.post("/v1/chunked", content=chunks(), headers=GOOD).content == body
    assert proxy.echo.seen == [("/v1/declared", body), ("/v1/chunked", body)]


def test_the_app_still_hears_the_client_go_away(client: httpx.Client, proxy: Proxy) -> None:
    with client.stream("POST", "/stream", content=b"{}", headers=GOOD) as response:
        assert response.status_code == 200
        assert next(response.iter_raw()) == b"first"
    assert proxy.echo.disconnected.wait(10), "http.disconnect reached the app after the body"


def test_an_openai_client_with_a_wrong_key_shows_where_the_token_is(proxy: Proxy) -> None:
    openai = pytest.importorskip("openai")
    with httpx.Client(trust_env=False) as http:
        client = openai.OpenAI(
            base_url=f"{proxy.url}/v1", api_key="wrong", max_retries=0, http_client=http
        )
        with pytest.raises(openai.AuthenticationError) as raised:
            client.models.list()
    assert raised.value.code == "invalid_api_key"
    assert "%copilot serve prints it" in str(raised.value)


def test_curl_gets_through_with_the_token_and_not_without(proxy: Proxy) -> None:
    curl = shutil.which("curl")
    if curl is None:
        pytest.skip("curl is not installed: the other tests cover the same checks with httpx")

    def status(*arguments: str) -> str:
        run = [curl, "-sS", "--noproxy", "*", "-o", "/dev/null", "-w", "%{http_code}"]
        done = subprocess.run(
            [*run, *arguments, f"{proxy.url}/v1/models"], capture_output=True, text=True, timeout=30
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert status("-H", f"Authorization: Bearer {TOKEN}") == "200"
    assert status() == "401"
    assert status("-H", f"x-api-key: {TOKEN}", "-H", "Origin: https://evil.example") == "403"


async def test_the_app_is_not_called_when_the_client_leaves_mid_body() -> None:
    seen: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append(scope["path"])

    messages = iter(
        [{"type": "http.request", "body": b"ab", "more_body": True}, {"type": "http.disconnect"}]
    )

    async def receive() -> dict[str, Any]:
        return next(messages)

    async def send(message: dict[str, Any]) -> None:
        raise AssertionError(f"nobody is left to answer: {message}")

    scope = {"type": "http", "method": "POST", "path": "/v1/x"}
    scope["headers"] = headers(host="127.0.0.1:9", x_api_key=TOKEN)
    await GateMiddleware(app, Gate(token=TOKEN, host="127.0.0.1", port=9))(scope, receive, send)
    assert not seen
