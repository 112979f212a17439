"""Running the proxy: uvicorn on the caller's event loop (the kernel's, in a notebook).

The socket is bound here first, so a port in use is a clear error at once, not uvicorn's
`sys.exit`; uvicorn's signal handlers are left out, so the kernel keeps its own (an interrupt
still interrupts the cell, not the server). Binding anywhere but loopback is the user's explicit
choice, and `warning` says what it exposes.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import ConfigError
from ..policy import check_serve
from .backend import Backend
from .http.read_deadline import HEADER_TIMEOUT, with_header_deadline
from .http.security import BODY_TIMEOUT, Gate, new_token

LOOPBACK = "127.0.0.1"
START_TIMEOUT = 10.0


@dataclass(kw_only=True)
class ProxyServer:
    """One running proxy: where it listens, its token, and how to stop it."""

    backend: Backend
    host: str = LOOPBACK
    port: int = 0
    token: str = field(default_factory=new_token)
    header_timeout: float = HEADER_TIMEOUT
    """Seconds a connection may take to send a request's headers (after opening, or after the
    previous response) before it is closed."""
    body_timeout: float = BODY_TIMEOUT
    """Seconds from a request's headers to the end of its body before it is answered 408."""
    _server: Any = None
    _task: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def warning(self) -> str:
        """What binding beyond loopback means, or '' on loopback."""
        if _is_loopback(self.host):
            return ""
        return (
            f"the proxy listens on {self.host}: anyone who can reach this machine on port "
            f"{self.port} and has the token can use your model and tools"
        )

    async def start(self) -> None:
        """Bind, then serve on the running loop; returns once requests are answered."""
        import uvicorn
        from uvicorn.protocols.http.auto import AutoHTTPProtocol

        from .app import proxy_app

        check_serve(self.host)  # the administrator's policy: whether, and on which host
        sock = _bind(self.host, self.port)
        self.port = sock.getsockname()[1]
        gate = Gate(
            token=self.token,
            host=self.host,
            port=self.port,
            body_timeout=self.body_timeout,
            token_hint=self.backend.surface.token_hint,
        )
        config = uvicorn.Config(
            proxy_app(self.backend, gate),
            http=with_header_deadline(AutoHTTPProtocol, self.header_timeout),
            log_level="warning",
            lifespan="on",
            access_log=False,
            timeout_graceful_shutdown=3,
        )
        self._server = quiet_server(config)
        self._task = asyncio.get_running_loop().create_task(self._server.serve([sock]))
        deadline = asyncio.get_running_loop().time() + START_TIMEOUT
        while not self._server.started:
            if self._task.done():
                sock.close()
                raise ConfigError(f"the proxy did not start: {self._task.exception()!r}")
            if asyncio.get_running_loop().time() > deadline:
                await self.stop()
                raise ConfigError(f"the proxy did not start within {START_TIMEOUT:g} s")
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        """Stop accepting, end open requests (a streaming one is cancelled), close the socket."""
        if self._server is not None:
            self._server.should_exit = True
        if self._task is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(self._task, 10)
        self._task = None


def quiet_server(config: Any) -> Any:
    """uvicorn's Server without its signal handlers (the kernel keeps SIGINT for interrupts)."""
    import uvicorn

    class Server(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    return Server(config)


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP said out loud: asyncio turns Nagle off (TCP_NODELAY) only for sockets that
    # say it, and with Nagle on, every kept-alive request waited 40 ms for a delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise ConfigError(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}; choose another --port"
        ) from None
    sock.listen(128)
    sock.setblocking(False)
    return sock


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
