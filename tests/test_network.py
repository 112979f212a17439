"""Behind a corporate proxy with a private CA: the standard variables (`HTTPS_PROXY`,
`HTTP_PROXY`, `NO_PROXY`, `SSL_CERT_FILE`, `REQUESTS_CA_BUNDLE`) reach every provider, the
GitHub sign-in, a recording cassette's own transport and MCP over HTTP. The proxy and the TLS
servers are real ones on loopback (`tests/network_proxy.py`)."""

from __future__ import annotations

import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from copilot_nb.errors import ModelConnectionError
from copilot_nb.messages import UserMessage
from copilot_nb.models.anthropic.chat import AnthropicChat
from copilot_nb.models.cassettes.cassette import Cassette
from copilot_nb.models.copilot.github_sign_in import DeviceFlow
from copilot_nb.models.network import EnvironmentTransport, ca_locations
from copilot_nb.models.openai.chat import OpenAIChat
from copilot_nb.testing import reply
from copilot_nb.testing.github_fake import FakeGitHub
from copilot_nb.testing.server import ScriptedServer
from copilot_nb.tools.mcp.config import ServerConfig
from copilot_nb.tools.mcp.connection import ServerConnection
from tests.helpers import Sleeps
from tests.network_proxy import ForwardProxy, PrivateCA, start_tls

VARIABLES = [
    "HTTPS_PROXY",
    "HTTP_PROXY",
    "ALL_PROXY",
    "NO_PROXY",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
]


@pytest.fixture
def network(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[PrivateCA, ForwardProxy]]:
    """A private CA and a forward proxy, named by `HTTPS_PROXY` and `SSL_CERT_FILE` (and no
    other proxy or CA variable, whatever the machine has)."""
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    ca = PrivateCA(tmp_path)
    proxy = ForwardProxy().start()
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    monkeypatch.setenv("SSL_CERT_FILE", str(ca.ca_file))
    yield ca, proxy
    proxy.stop()


@pytest.fixture
def tls_model_server(network) -> Iterator[ScriptedServer]:
    ca, _ = network
    server = start_tls(ScriptedServer([reply("through the proxy")]), ca)
    yield server  # type: ignore[misc]
    server.stop()


def port_of(url: str) -> int:
    return httpx.URL(url).port or 443


async def test_openai_goes_through_the_proxy_and_trusts_the_private_ca(network, tls_model_server):
    _, proxy = network
    model = OpenAIChat("scripted", base_url=tls_model_server.url, api_key="k")
    answer = await model.complete([UserMessage(content="hi")])
    assert answer.text == "through the proxy"
    assert proxy.seen == [f"CONNECT localhost:{port_of(tls_model_server.url)}"]
    await model.aclose()


async def test_anthropic_goes_through_the_proxy_too(network, tls_model_server):
    _, proxy = network
    model = AnthropicChat("claude-test", base_url=tls_model_server.base_url, api_key="k")
    answer = await model.complete([UserMessage(content="hi")])
    assert answer.text == "through the proxy"
    assert proxy.seen == [f"CONNECT localhost:{port_of(tls_model_server.url)}"]
    await model.aclose()


async def test_no_proxy_sends_straight_to_the_host(network, tls_model_server, monkeypatch):
    _, proxy = network
    monkeypatch.setenv("NO_PROXY", "localhost")
    model = OpenAIChat("scripted", base_url=tls_model_server.url, api_key="k")
    assert (await model.complete([UserMessage(content="hi")])).text == "through the proxy"
    assert proxy.seen == []
    await model.aclose()


async def test_without_the_ca_the_private_certificate_is_refused(
    network, tls_model_server, monkeypatch
):
    monkeypatch.delenv("SSL_CERT_FILE")
    model = OpenAIChat("scripted", base_url=tls_model_server.url, api_key="k", max_retries=0)
    with pytest.raises(ModelConnectionError, match="CERTIFICATE_VERIFY_FAILED"):
        await model.complete([UserMessage(content="hi")])
    assert tls_model_server.requests == []
    await model.aclose()


async def test_requests_ca_bundle_is_honoured_when_ssl_cert_file_is_not_set(
    network, tls_model_server, monkeypatch
):
    ca, _ = network
    monkeypatch.delenv("SSL_CERT_FILE")
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(ca.ca_file))
    model = OpenAIChat("scripted", base_url=tls_model_server.url, api_key="k")
    assert (await model.complete([UserMessage(content="hi")])).text == "through the proxy"
    await model.aclose()


async def test_plain_http_goes_through_http_proxy(network, serve, monkeypatch):
    _, proxy = network
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    server = serve([reply("forwarded")])
    model = OpenAIChat("scripted", base_url=server.url, api_key="k")
    assert (await model.complete([UserMessage(content="hi")])).text == "forwarded"
    assert proxy.seen == [f"POST {server.url}/chat/completions"]
    await model.aclose()


async def test_a_recording_cassette_keeps_the_proxy_and_the_ca(
    network, tls_model_server, tmp_path, monkeypatch
):
    """The cassette's client is given a transport of its own, where httpx reads no variables."""
    _, proxy = network
    monkeypatch.setenv("COPILOT_NB_CONFIG_DIR", str(tmp_path / "config"))  # its signing key
    model = OpenAIChat("scripted", base_url=tls_model_server.url, api_key="k")
    model.endpoint.tape_with(Cassette(tmp_path / "c.copilot.jsonl", "record"))
    answer = await model.complete([UserMessage(content="hi")])
    assert answer.text == "through the proxy"
    assert proxy.seen == [f"CONNECT localhost:{port_of(tls_model_server.url)}"]
    recorded = (tmp_path / "c.copilot.jsonl").read_text()
    assert "/v1/chat/completions" in recorded and "[DONE]" in recorded
    await model.aclose()


async def test_the_github_sign_in_goes_through_the_proxy(network):
    ca, proxy = network
    fake = start_tls(FakeGitHub(polls=["authorization_pending"]), ca)
    try:
        flow = DeviceFlow(fake.hosts, sleep=Sleeps())  # type: ignore[attr-defined]
        code = await flow.start()
        token = await flow.wait(code)
    finally:
        fake.stop()
    assert token in fake.github_tokens  # type: ignore[attr-defined]
    port = port_of(fake.base_url)
    assert proxy.seen and set(proxy.seen) == {f"CONNECT localhost:{port}"}


@pytest.fixture
def tls_mcp_server(network) -> Iterator[str]:
    """Our MCP test server over Streamable HTTP, on TLS with the private CA's certificate."""
    import uvicorn

    from tests.mcp_servers.behaviours import build

    ca, _ = network
    config = uvicorn.Config(
        build().streamable_http_app(),
        host="127.0.0.1",
        port=0,
        log_level="warning",
        lifespan="on",
        ssl_certfile=str(ca.cert_file),
        ssl_keyfile=str(ca.key_file),
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        thread.join(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield f"https://localhost:{port}/mcp"
    server.should_exit = True
    thread.join(10)


async def test_mcp_over_http_goes_through_the_proxy_and_trusts_the_ca(network, tls_mcp_server):
    _, proxy = network
    connection = ServerConnection(
        ServerConfig(name="corp", source="mcp.json", url=tls_mcp_server),
        on_change=lambda _: None,
    )
    try:
        await connection.start(20)
        assert "echo" in [t.name for t in connection.tools]
    finally:
        await connection.stop()
    assert proxy.seen and set(proxy.seen) == {f"CONNECT localhost:{port_of(tls_mcp_server)}"}


def test_routing_follows_the_variables(monkeypatch):
    for name in VARIABLES:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.corp.test:3128")
    monkeypatch.setenv("ALL_PROXY", "http://all.corp.test:3128")
    monkeypatch.setenv("NO_PROXY", "internal.test,.corp.test")
    transport = EnvironmentTransport()
    direct = transport.route(httpx.URL("https://llm.internal.test/v1"))
    assert direct is transport.route(httpx.URL("https://api.corp.test/v1"))
    https = transport.route(httpx.URL("https://api.openai.com/v1"))
    plain = transport.route(httpx.URL("http://ollama.example:11434/v1"))
    assert len({id(direct), id(https), id(plain)}) == 3  # http falls back to ALL_PROXY


def test_ca_variables_in_order():
    assert ca_locations({"SSL_CERT_FILE": "a", "REQUESTS_CA_BUNDLE": "b"}) == ("a", None)
    assert ca_locations({"SSL_CERT_DIR": "d", "REQUESTS_CA_BUNDLE": "b"}) == (None, "d")
    assert ca_locations({"REQUESTS_CA_BUNDLE": "b"}) == ("b", None)
    assert ca_locations({}) == (None, None)


@pytest.fixture
def hashed_ca_folder(network, tmp_path: Path) -> Path:
    """The private CA in a folder of OpenSSL's hashed layout (as `update-ca-certificates`
    makes), the file named by OpenSSL itself."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command for the CA's hashed file name")
    ca, _ = network
    subject_hash = subprocess.run(
        ["openssl", "x509", "-hash", "-noout", "-in", str(ca.ca_file)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    folder = tmp_path / "certs"
    folder.mkdir()
    (folder / f"{subject_hash}.0").write_bytes(ca.ca_file.read_bytes())
    return folder


async def test_ssl_cert_dir_is_honoured(tls_model_server, hashed_ca_folder, monkeypatch):
    monkeypatch.delenv("SSL_CERT_FILE")
    monkeypatch.setenv("SSL_CERT_DIR", str(hashed_ca_folder))
    model = OpenAIChat("scripted", base_url=tls_model_server.url, api_key="k")
    assert (await model.complete([UserMessage(content="hi")])).text == "through the proxy"
    await model.aclose()
