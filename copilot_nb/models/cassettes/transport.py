"""The HTTP side of cassettes: the httpx transport of an endpoint whose tape names a cassette.

With no cassette named it is the plain network transport. Recording, it passes each request on
and copies the response's bytes as they stream by (the reply still streams to the cell), writing
the exchange when the response closes. Replaying, it answers from the cassette without opening a
connection: the recorded bytes come back one server-sent event at a time, so the same decoders
see what they would have seen live, and the cell fills in as it would.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable
from dataclasses import replace

import httpx

from ..network import EnvironmentTransport
from ..recording_scrub import withhold_results
from .cassette import Cassette
from .entries import (
    WORKSPACE,
    RecordedRequest,
    RecordedResponse,
    Scrubber,
    recorded_request,
    recorded_response,
)


class CassetteTransport(httpx.AsyncBaseTransport):
    """Records to or replays from the cassette `tape` names at each request (None: the network);
    sends on through the network (through the environment's proxy and CA bundle, as a plain
    client would) when recording."""

    def __init__(self, tape: Callable[[], Cassette | None]) -> None:
        self._tape = tape
        self._network = EnvironmentTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        cassette = self._tape()
        if cassette is None:
            return await self._network.handle_async_request(request)
        scrubber = Scrubber.here()
        content = await request.aread()
        wanted = recorded_request(
            request.method, str(request.url), request.headers, content, scrubber
        )
        if cassette.withheld:  # approved secret contents: never written, compared as withheld
            wanted = replace(wanted, body=withhold_results(wanted.body, cassette.withheld))
        recorded = cassette.answer_for(wanted)
        if recorded is not None:
            return replayed(recorded, request)
        request.headers["Accept-Encoding"] = "identity"  # the bytes as they are decoded
        try:
            response = await self._network.handle_async_request(request)
        except httpx.TransportError as exc:
            error = f"{type(exc).__name__}: {exc}"
            cassette.record(wanted, RecordedResponse(error=error))
            raise
        assert isinstance(response.stream, httpx.AsyncByteStream)
        stream = _Recording(response.stream, cassette, wanted, response, scrubber)
        return httpx.Response(
            response.status_code,
            headers=response.headers,
            stream=stream,
            extensions=response.extensions,
            request=request,
        )

    async def aclose(self) -> None:
        await self._network.aclose()


def replayed(recorded: RecordedResponse, request: httpx.Request) -> httpx.Response:
    """A response served from the recording (a recorded connection error is raised again)."""
    if recorded.error:
        raise httpx.ConnectError(f"{recorded.error} (replayed from the cassette)", request=request)
    body = recorded.body.replace(WORKSPACE.encode(), os.path.realpath(os.getcwd()).encode())
    return httpx.Response(
        recorded.status,
        headers=recorded.headers,
        stream=_Replay(body),
        request=request,
    )


class _Replay(httpx.AsyncByteStream):
    """Recorded bytes, one server-sent event (or the whole body) at a time."""

    def __init__(self, body: bytes) -> None:
        self._body = body

    async def __aiter__(self) -> AsyncIterator[bytes]:
        start = 0
        while start < len(self._body):
            end = self._body.find(b"\n\n", start)
            end = len(self._body) if end < 0 else end + 2
            yield self._body[start:end]
            start = end


class _Recording(httpx.AsyncByteStream):
    """The live response's bytes, passed on as they come and kept for the cassette: all of
    them, written when the client closes the response (a decoder closes it once the reply is
    whole; an interrupt closes it early, and the cassette keeps what had arrived)."""

    def __init__(
        self,
        inner: httpx.AsyncByteStream,
        cassette: Cassette,
        request: RecordedRequest,
        response: httpx.Response,
        scrubber: Scrubber,
    ) -> None:
        self._inner = inner
        self._cassette = cassette
        self._request = request
        self._response = response
        self._scrubber = scrubber
        self._chunks: list[bytes] = []
        self._written = False

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._inner:
            self._chunks.append(chunk)
            yield chunk

    async def aclose(self) -> None:
        try:
            await self._inner.aclose()
        finally:
            if not self._written:
                self._written = True
                self._cassette.record(
                    self._request,
                    recorded_response(
                        self._response.status_code,
                        self._response.headers,
                        b"".join(self._chunks),
                        self._scrubber,
                    ),
                )
