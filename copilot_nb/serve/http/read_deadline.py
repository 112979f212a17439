"""A deadline for a request's headers, which uvicorn does not have.

uvicorn closes a connection only when it stays silent `timeout_keep_alive` seconds after a
response, and any byte received stops that timer; a new connection has no timer at all. A client
that opens connections and sends headers a byte at a time (slowloris), or nothing, would hold
each one open forever. No ASGI app runs before the headers are complete, so the deadline lives
in the protocol: `with_header_deadline` wraps uvicorn's HTTP protocol class (h11 or httptools,
whichever uvicorn chose) so that the headers of each request must arrive within `timeout`
seconds of the connection opening or of the previous response. The body's own deadline is the
gate's (`security.py`), which can still answer.
"""

from __future__ import annotations

import asyncio
from typing import Any

HEADER_TIMEOUT = 10.0
"""Seconds for a request's headers: a program on this machine sends them in one write."""
_MESSAGE = b"The request headers did not arrive in time; send them in one write.\n"
TIMED_OUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
    b"connection: close\r\ncontent-length: %d\r\n\r\n%s" % (len(_MESSAGE), _MESSAGE)
)
"""Written raw to a connection that sent part of a request, then closed: the protocol's own
state machine has no request to answer yet."""


def with_header_deadline(protocol: type[Any], timeout: float) -> type[asyncio.Protocol]:
    """`protocol` (uvicorn's H11Protocol or HttpToolsProtocol) with a headers deadline.

    Both create `self.cycle` once a request's headers are parsed and call
    `on_response_complete` when its response is sent, which is all the deadline relies on."""
    if not timeout > 0:
        raise ValueError(f"the header timeout must be more than 0 s, not {timeout}")

    class HeaderDeadline(protocol):
        _deadline: asyncio.TimerHandle | None = None
        _waiting_cycle: Any = None
        _bytes_since: int = 0

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            self._bytes_since += len(data)
            super().data_received(data)
            if self.cycle is not self._waiting_cycle:
                self._disarm()  # a request's headers arrived: its body is the gate's to time

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def _arm(self) -> None:
            self._disarm()
            self._waiting_cycle, self._bytes_since = self.cycle, 0
            self._deadline = self.loop.call_later(timeout, self._expired)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expired(self) -> None:
            self._deadline = None
            cycle = self.cycle
            if cycle is not self._waiting_cycle or not (cycle is None or cycle.response_complete):
                return  # a request is being served (pipelined after the last response)
            if self.transport.is_closing() or self.transport.get_protocol() is not self:
                return  # closed already, or handed to a WebSocket protocol
            if self._bytes_since:
                self.transport.write(TIMED_OUT)
            self.transport.close()

    HeaderDeadline.__name__ = HeaderDeadline.__qualname__ = f"HeaderDeadline{protocol.__name__}"
    return HeaderDeadline
