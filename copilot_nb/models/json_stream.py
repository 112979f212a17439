"""What the Chat Completions and Responses decoders share: SSE bytes in, JSON objects out, and
one discipline for errors (deltas decoded before an error are returned first; the error is
raised by the next `feed()` or `close()`, and input after it is ignored).

Decoding has two paths with one outcome. The hot one: a one-line event whose data parses at
once as a JSON object (`fast_json`) goes straight to the subclass's `_on_object`. Every other
event (`[DONE]`, an `error` event, data that is not a JSON object, ...) goes through the
subclass's `_events`, the general path, which parses with the standard library and says what
was wrong."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, NoReturn

from ..errors import StreamError
from ..events import ModelEvent, TextDelta
from ..text import shorten
from . import fast_json
from .sse import RawEvent, ServerSentEvent, SSEDecoder

_loads = json.loads
_new = object.__new__


def text_delta(text: str) -> TextDelta:
    """`TextDelta(text=text)` at half the cost: a frozen dataclass's `__init__` sets its field
    through `object.__setattr__`, which is most of the price of the one event every delta is."""
    event = _new(TextDelta)
    event.__dict__["text"] = text
    return event


class TextRun:
    """The text pieces one read holds, leaving the decoder as one piece per run: a read holds
    some 200, and each event costs every layer above a hop. `transport.merged` joins the runs
    of every other decoder too, but only after each piece has been made an event."""

    def __init__(self) -> None:
        self._piece: TextDelta | None = None
        self._parts: list[str] = []

    def add(self, out: list[ModelEvent], text: str) -> None:
        """`out.append(text_delta(text))`, or `text` onto the piece `out` ends with."""
        if out and out[-1] is self._piece:
            self._parts.append(text)
            return
        self.end()
        self._piece = text_delta(text)
        self._parts = [text]
        out.append(self._piece)

    def end(self) -> None:
        """The read is decoded: its last piece gets its run's text (no one has seen it yet)."""
        if self._piece is not None and len(self._parts) > 1:
            self._piece.__dict__["text"] = "".join(self._parts)
        self._piece, self._parts = None, []


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
        self._run = TextRun()

    def feed(self, data: bytes) -> list[ModelEvent]:
        """Decode one network read of the response body."""
        self._raise_pending()
        if self.done or self._stopped:
            return []
        return self._guarded(self._sse.feed_raw(data))

    def flush(self) -> list[ModelEvent]:
        """End of body: decode an event the server did not finish with a blank line."""
        self._raise_pending()
        if self.done or self._stopped or self._flushed:
            return []
        self._flushed = True
        return self._guarded(self._sse.flush())

    def _events(self, sse_events: Iterable[ServerSentEvent], out: list[ModelEvent]) -> None:
        """The general path: decode events, stopping at the stream's end or an error."""
        raise NotImplementedError

    _on_object: Any = None
    """The hot path, if the subclass has one: `_on_object(value, out)` decodes one event whose
    data is the JSON object `value`, as `_events` would have."""

    SHAPE: Any = None
    """The commonest event's shape (`fast_json.shaped`), if the subclass has one; an event that
    fits it goes to `_on_shape(value, out)`, which does what `_on_object` would, or returns
    False untouched to have the event parsed as a dict."""

    def _on_shape(self, value: Any, out: list[ModelEvent]) -> bool:
        raise NotImplementedError

    def _decode(self, items: Iterable[RawEvent], out: list[ModelEvent]) -> None:
        """Each item by the hot path when it can take it, else by the general path, in order."""
        on_object = self._on_object
        loads = fast_json.loads
        shaped = fast_json.shaped(self.SHAPE) if self.SHAPE is not None else None
        event_of = self._sse.event_of
        for item in items:
            if type(item) is tuple:
                name, data = item
                if on_object is not None and data[:1] == b"{" and name != b"error":
                    if shaped is not None:
                        try:
                            value = shaped(data)
                        except fast_json.DECLINED:
                            value = None
                        if value is not None and self._on_shape(value, out):
                            if self.done:
                                return
                            continue
                    try:
                        value = loads(data)
                    except fast_json.DECLINED:
                        value = None
                    if type(value) is dict:
                        on_object(value, out)
                        if self.done:
                            return
                        continue
                item = event_of(item)
            self._events((item,), out)  # type: ignore[arg-type]
            if self.done:
                return

    def _guarded(self, items: Iterable[RawEvent]) -> list[ModelEvent]:
        """Decode events; an error after some deltas waits for the next call, so they are kept."""
        out: list[ModelEvent] = []
        try:
            self._decode(items, out)
        except StreamError as exc:
            if not out:
                raise
            self._failure = exc
        finally:
            self._run.end()
        return out

    def _json_object(self, data: str) -> dict[str, Any]:
        """One event's data as a JSON object, or the stream fails saying what came instead."""
        try:  # the fast parser first: an event split across reads can be the stream's largest
            value = fast_json.loads(data.encode("utf-8", "surrogatepass"))
        except fast_json.DECLINED:
            value = None
        if type(value) is dict:
            return value
        try:
            value = _loads(data)
        except (ValueError, RecursionError) as exc:
            what = "JSON nested too deep to read" if isinstance(exc, RecursionError) else "not JSON"
            self._fail(
                StreamError(
                    f"the stream sent data that is {what}: {shorten(data, 120)!r}; expected "
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
