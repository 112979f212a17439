"""The network guard: a test that tries to leave this machine fails at once, loopback works."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.network_guard import NetworkGuardError, is_loopback

PUBLIC = "203.0.113.1"
"""TEST-NET-3 (RFC 5737): documentation only, never routed; a real connect would hang or fail."""


def test_a_connect_to_a_public_address_is_refused_before_any_packet(
    refused_connections: list[str],
) -> None:
    with socket.socket() as sock:
        with pytest.raises(
            NetworkGuardError, match=f"connect to {PUBLIC}:80, which is not loopback"
        ):
            sock.connect((PUBLIC, 80))
        # A connect binds a local port before its first SYN: the socket still has none.
        assert sock.getsockname() == ("0.0.0.0", 0)
        with pytest.raises(NetworkGuardError):
            sock.connect_ex((PUBLIC, 443))  # not an errno to retry on: the same error
    assert refused_connections == [f"{PUBLIC}:80", f"{PUBLIC}:443"]


def test_a_name_that_is_not_localhost_is_refused_before_it_is_looked_up(
    refused_connections: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def no_lookup(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"looked up {args[0]!r}")

    monkeypatch.setattr(socket, "getaddrinfo", no_lookup)
    with pytest.raises(NetworkGuardError, match=r"api\.openai\.com:443"):
        socket.create_connection(("api.openai.com", 443))
    with pytest.raises(NetworkGuardError, match=r"api\.openai\.com:443"):
        httpx.get("https://api.openai.com/v1/models")
    assert refused_connections == ["api.openai.com:443"] * 2


async def test_asyncio_and_the_async_http_client_are_refused_too(
    refused_connections: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(socket, "getaddrinfo", lambda *args, **kwargs: pytest.fail("lookup"))
    with pytest.raises(NetworkGuardError):
        await asyncio.open_connection("api.anthropic.com", 443)
    with pytest.raises(NetworkGuardError):
        await asyncio.open_connection(PUBLIC, 443)
    async with httpx.AsyncClient() as client:
        with pytest.RaisesGroup(NetworkGuardError):  # anyio tries each address in a task group
            await client.get(f"http://{PUBLIC}/")
        with pytest.raises(NetworkGuardError):
            await client.get("https://api.githubcopilot.com/models")
    assert refused_connections == [
        "api.anthropic.com:443",
        f"{PUBLIC}:443",
        f"{PUBLIC}:80",
        "api.githubcopilot.com:443",
    ]


def listening(family: int, address: Any) -> socket.socket:
    """A server socket; a client's connect completes in its backlog, before `accept`."""
    server = socket.socket(family, socket.SOCK_STREAM)
    server.bind(address)
    server.listen()
    return server


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "127.0.0.2"])
def test_loopback_connections_go_through(host: str) -> None:
    with listening(socket.AF_INET, ("127.0.0.1" if host == "localhost" else host, 0)) as server:
        port = server.getsockname()[1]
        with socket.create_connection((host, port), timeout=10):
            server.accept()[0].close()


def test_ipv6_loopback_and_unix_sockets_go_through(tmp_path: Path) -> None:
    try:
        six = listening(socket.AF_INET6, ("::1", 0))
    except OSError:
        pass  # IPv6 is off on this machine
    else:
        with six, socket.create_connection(("::1", six.getsockname()[1]), timeout=10):
            six.accept()[0].close()
    path = str(tmp_path / "s.sock")
    with listening(socket.AF_UNIX, path) as server, socket.socket(socket.AF_UNIX) as client:
        client.connect(path)
        server.accept()[0].close()


async def test_the_loopback_http_server_still_answers(serve: Any) -> None:
    from copilot_nb.testing import reply

    server = serve([reply("offline and local")])
    assert (await server.model().complete([{"role": "user", "content": "hi"}])).text == (
        "offline and local"
    )


@pytest.mark.parametrize(
    ("host", "local"),
    [
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("::ffff:127.0.0.1", True),
        ("localhost", True),
        ("LocalHost.", True),
        ("lab.localhost", True),
        (b"127.0.0.1", True),
        (PUBLIC, False),
        ("10.0.0.1", False),
        ("0.0.0.0", False),
        ("", False),
        ("::", False),
        ("::ffff:203.0.113.1", False),
        ("example.com", False),
        ("localhost.example.com", False),
        (None, False),
    ],
)
def test_what_counts_as_loopback(host: object, local: bool) -> None:
    assert is_loopback(host) is local


def test_a_test_that_swallows_the_error_still_fails(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent.parent))
    pytester.makeconftest('pytest_plugins = ["tests.network_guard"]')
    pytester.makepyfile(
        f"""
        import socket

        def test_quietly_online():
            try:
                socket.create_connection(("{PUBLIC}", 80), timeout=1)
            except Exception:
                pass  # a retry loop, an error event: the attempt is hidden

        def test_offline():
            pass
        """
    )
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [f"*network guard: this test tried to connect past loopback ({PUBLIC}:80)*"]
    )
