"""No test reaches past this machine: a connection to anything but loopback fails at once.

A pytest plugin (conftest.py loads it). From the start of the session it wraps the Python ways to
open a connection in the test process:

- `socket.socket.connect` and `connect_ex`, which every other path ends in: `socket.create_connection`
  (httpx's sync transport), `ssl`, and asyncio's `sock_connect` and `create_connection` (httpx's
  async transport through anyio), whose selector loop calls `sock.connect` too;
- `socket.create_connection` and asyncio's `loop.getaddrinfo`, which see a host *name* before it is
  looked up, so a name that is not localhost is refused before a DNS query goes out.

Allowed: 127.0.0.0/8, ::1 (also as ::ffff:127.x.y.z), `localhost` and `*.localhost`, and every
address family but IPv4 and IPv6 (Unix sockets). Anything else raises NetworkGuardError before the
real call, so no packet leaves. The error is also recorded, and the test in which it happened
fails even when the code under test caught it (a retry loop, an error event).

The guard applies in the test process only. The kernels `tests/kernel_session.py` starts, the
JupyterLab server and Chromium of the browser tests are other processes, which it cannot patch;
ZMQ's sockets (jupyter_client talks to its kernels over 127.0.0.1) are C sockets, not Python ones.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Generator, Iterator
from typing import Any

import pytest

refused: list[str] = []
"""What was refused since the current test began, as "host:port"."""

_patches = pytest.MonkeyPatch()
_connect = socket.socket.connect
_connect_ex = socket.socket.connect_ex
_create_connection = socket.create_connection
_getaddrinfo = asyncio.base_events.BaseEventLoop.getaddrinfo


class NetworkGuardError(RuntimeError):
    """A test tried to reach an address that is not loopback.

    Not an OSError, so no retry loop takes it for a flaky network and tries again."""


def is_loopback(host: object) -> bool:
    """True for a loopback IP literal, `localhost` and names under `.localhost` (RFC 6761)."""
    if isinstance(host, bytes):
        host = host.decode("ascii", "replace")
    if not isinstance(host, str):
        return False
    name = host.rstrip(".").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name.partition("%")[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return address.is_loopback


def _is_ip_literal(host: object) -> bool:
    try:
        ipaddress.ip_address(str(host).partition("%")[0])
    except ValueError:
        return False
    return True


def _refuse(host: object, port: object) -> None:
    if isinstance(host, bytes):  # anyio looks names up IDNA-encoded
        host = host.decode("ascii", "replace")
    where = f"{host}:{port}"
    refused.append(where)
    raise NetworkGuardError(
        f"network guard: a test tried to connect to {where}, which is not loopback; tests reach "
        "only 127.0.0.1, ::1 and localhost (copilot_nb.testing.ScriptedServer serves a provider "
        "there)"
    )


def _check(family: int, address: Any) -> None:
    inet = family in (socket.AF_INET, socket.AF_INET6) and isinstance(address, tuple)
    if inet and not is_loopback(address[0]):
        _refuse(address[0], address[1] if len(address) > 1 else "?")


def _guarded_connect(self: socket.socket, address: Any) -> None:
    _check(self.family, address)
    return _connect(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    _check(self.family, address)
    return _connect_ex(self, address)


def _guarded_create_connection(address: tuple[str, int], *args: Any, **kwargs: Any) -> Any:
    if not is_loopback(address[0]):
        _refuse(address[0], address[1])
    return _create_connection(address, *args, **kwargs)


async def _guarded_getaddrinfo(
    self: asyncio.AbstractEventLoop, host: Any, port: Any, **kwargs: Any
) -> Any:
    # None or "" binds a server; an IP literal needs no lookup (connect checks it).
    if host and not _is_ip_literal(host) and not is_loopback(host):
        _refuse(host, port)
    return await _getaddrinfo(self, host, port, **kwargs)  # type: ignore[arg-type]


def install() -> None:
    """Wrap the connection paths; `uninstall` puts them back."""
    _patches.setattr(socket.socket, "connect", _guarded_connect)
    _patches.setattr(socket.socket, "connect_ex", _guarded_connect_ex)
    _patches.setattr(socket, "create_connection", _guarded_create_connection)
    _patches.setattr(asyncio.base_events.BaseEventLoop, "getaddrinfo", _guarded_getaddrinfo)


def uninstall() -> None:
    _patches.undo()


def pytest_configure(config: pytest.Config) -> None:
    install()


def pytest_unconfigure(config: pytest.Config) -> None:
    uninstall()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    """Fail a test whose refused connection was caught and hidden by the code under test."""
    refused.clear()
    result = yield
    if refused and "refused_connections" not in getattr(item, "fixturenames", ()):
        seen = ", ".join(refused)
        refused.clear()
        pytest.fail(
            f"network guard: this test tried to connect past loopback ({seen}); the error was "
            "caught on the way, but the attempt alone is a failure",
            pytrace=False,
        )
    return result


@pytest.fixture
def refused_connections() -> Iterator[list[str]]:
    """The connections refused during this test, for a test that provokes them on purpose."""
    refused.clear()
    yield refused
    refused.clear()
