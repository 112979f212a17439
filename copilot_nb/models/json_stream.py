"""What the Chat Completions and Responses decoders share: SSE bytes in, JSON objects out, and
one discipline for errors (deltas decoded before an error are returned first; the error is
raised by the next `feed()` or `close()`, and input after it is ignored)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, NoReturn

from ..errors import StreamError
from ..events import ModelEvent
from ..text import shorten
from .sse import ServerSentEvent, SSEDecoder

_loads = json.loads


class JSONStreamDecoder:
    """The feed/flush/error lifecycle of a stream of JSON objects; subclasses turn SSE events
    into model events in `_events` and say what an object should be in `EXPECTED`."""

    EXPECTED = "a JSON event"
    """Said in the error for data that is not JSON (what the server should have sent)."""

    def __init__(self) -> None:
        self.done = False
        self.error: Any = None
        self._sse = SSEDecoder()
        self._stopped = False  # an error was seen: ignore all input after it
        self._failure: StreamError | None = None  # seen but not raised yet
        self._flushed = False

    def feed(self, data: bytes) -> list[ModelEvent]:
        """Decode one network read of the response body."""
        self._raise_pending()
        if self.done or self._stopped:
            return []
        return self._guarded(self._sse.feed(data))

    def flush(self) -> list[ModelEvent]:
        """End of body: decode an event the server did not finish with a blank line."""
        self._raise_pending()
        if self.done or self._stopped or self._flushed:
            return []
        self._flushed = True
        return self._guarded(self._sse.flush())

    def _events(self, sse_events: Iterable[ServerSentEvent], out: list[ModelEvent]) -> None:
        raise NotImplementedError

    def _guarded(self, sse_events: Iterable[ServerSentEvent]) -> list[ModelEvent]:
        """Decode events; an error after some deltas waits for the next call, so they are kept."""
        out: list[ModelEvent] = []
        try:
            self._events(sse_events, out)
        except StreamError as exc:
            if not out:
                raise
            self._failure = exc
        return out

    def _json_object(self, data: str) -> dict[str, Any]:
        """One event's data as a JSON object, or the stream fails saying what came instead."""
        try:
            value = _loads(data)
        except ValueError:
            self._fail(
                StreamError(
                    f"the stream sent data that is not JSON: {shorten(data, 120)!r}; expected "
                    f"{self.EXPECTED}",
                    body=data,
                )
            )
        if not isinstance(value, dict):
            self._fail(
                StreamError(
                    f"the stream sent an event that is not a JSON object: {shorten(data, 120)!r}",
                    body=value,
                )
            )
        return value

    def _fail(self, error: StreamError) -> NoReturn:
        """Remember the error (input after it is ignored) and raise it."""
        self.error = error.body
        self._stopped = True
        raise error

    def _raise_pending(self) -> None:
        """Raise an error that was held back so the deltas before it could be returned."""
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure
