"""A pure, incremental Server-Sent-Events decoder: bytes in, events out, no I/O.

It follows the WHATWG event-stream rules
(https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation):
CRLF, LF and CR line endings, `:` comments, `field: value` with one optional space, lines with no
colon, multi-line `data` joined with "\\n", a leading UTF-8 BOM, `id` that persists across events
and `retry` with digits only. Bytes are split on line endings before decoding (those are ASCII, so
a UTF-8 character split across network reads is never cut), and each line is decoded once.

Two departures, both because real provider streams need them (`strict=True` turns off the second):

- `flush()` dispatches a pending event at end of stream even without the final blank line.
- Unless `strict=True`, a non-blank `data:` line that arrives while the pending event's data is
  already a complete JSON object or array dispatches that event first. Streams that put `data:`
  lines one per event with a single newline between them (seen from GitHub Copilot) then read as one
  event per line, while genuine multi-line data (a JSON value spread over several lines, or text)
  still joins, since its first lines never parse on their own.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True, kw_only=True, slots=True)  # slots: the decoder's hot path sets them
class ServerSentEvent:
    """One dispatched event; `id` is the last event id seen so far, as the spec defines it."""

    event: str = "message"
    data: str = ""
    id: str | None = None
    retry: int | None = None


RawEvent = ServerSentEvent | tuple[bytes, bytes]
"""What `SSEDecoder.feed_raw` gives: an event, or the `(name, data)` bytes of a one-line one."""


class SSEDecoder:
    """Turns a byte stream, fed in pieces of any size, into `ServerSentEvent`s."""

    def __init__(self, *, strict: bool = False) -> None:
        self._strict = strict
        self._pending: list[bytes] = []  # bytes after the last line ending seen
        self._skip_lf = False  # the last region ended in CR: a leading LF is its CRLF's second half
        self._bom_head: bytes | None = b""  # None once the stream start is past the BOM check
        self._event = ""
        self._data: list[str] = []
        self._last_id: str | None = None
        self._retry: int | None = None

    def feed(self, chunk: bytes) -> list[ServerSentEvent]:
        """Decode one network read; returns the events it completed (often none, often several)."""
        return [
            item if type(item) is ServerSentEvent else self.event_of(item)  # type: ignore[arg-type]
            for item in self.feed_raw(chunk)
        ]

    def feed_raw(self, chunk: bytes) -> list[RawEvent]:
        """`feed`, for a consumer that parses the data itself (the model stream decoders).

        The commonest event, one `data:` line (maybe after an `event:` line) while no id was
        ever set, comes as a `(name, data)` pair of undecoded bytes (`name` empty for a
        "message"), so its data is not decoded twice; every other event is a `ServerSentEvent`.
        `event_of()` turns a pair into the `ServerSentEvent` that `feed` gives.
        """
        if (  # the commonest read: exactly one one-line `data:` event, nothing pending
            chunk.endswith(b"\n\n")
            and chunk.startswith(b"data:")
            and chunk.find(b"\n") == len(chunk) - 2
            and b"\r" not in chunk
            and self._idle
        ):
            value = chunk[6:-2] if chunk[5] == 32 else chunk[5:-2]
            if self._last_id is None:
                return [(b"", value)]
            return [_data_event(value.decode("utf-8", "replace"), self._last_id)]
        if self._bom_head is not None:
            head = self._bom_head + chunk
            if len(head) < 3 and _BOM.startswith(head):
                self._bom_head = head
                return []
            self._bom_head = None
            chunk = head[3:] if head.startswith(_BOM) else head
        if self._skip_lf and chunk:
            self._skip_lf = False
            if chunk[0] == 10:
                chunk = chunk[1:]
        cut = max(chunk.rfind(b"\n"), chunk.rfind(b"\r")) + 1
        if cut == 0:
            if chunk:
                self._pending.append(chunk)
            return []
        if self._pending:
            self._pending.append(chunk[:cut])
            region = b"".join(self._pending)
            self._pending = []
        else:
            region = chunk[:cut]
        if cut < len(chunk):
            self._pending.append(chunk[cut:])
        elif region[-1] == 13:
            self._skip_lf = True
        if b"\r" in region:
            region = region.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        return self._region(region)

    @staticmethod
    def event_of(pair: tuple[bytes, bytes]) -> ServerSentEvent:
        """The `ServerSentEvent` of a `(name, data)` pair from `feed_raw`."""
        name, value = pair
        event = _data_event(value.decode("utf-8", "replace"), None)
        if name:
            _set_event(event, name.decode("utf-8", "replace"))
        return event

    def flush(self) -> list[ServerSentEvent]:
        """End of stream: finish a last unterminated line and dispatch a pending event."""
        tail = b"".join(self._pending)
        if self._bom_head:  # fewer than 3 bytes in the whole stream, all of them a BOM prefix
            tail, self._bom_head = self._bom_head + tail, None
        self._pending = []
        self._skip_lf = False
        lines = [tail.decode("utf-8", "replace")] if tail else []
        lines.append("")
        return self._lines(lines)

    @property
    def _idle(self) -> bool:
        """Nothing pending: no partial line, no half-seen BOM or CRLF, no event being built."""
        return not (
            self._pending
            or self._skip_lf
            or self._bom_head is not None
            or self._data
            or self._event
            or self._retry is not None
        )

    def _region(self, region: bytes) -> list[RawEvent]:
        """Interpret whole lines (`region` ends with LF, its only line ending).

        The hot path is a run of whole one-line events (one `data:` line, maybe after an `event:`
        line) from an idle start: one regex checks the run and another lists its `(name, data)`
        pairs (see `feed_raw`). The event the last read left unfinished, before the run, and the
        lines of the next one, after it, go through `_tokens`.
        """
        if self._last_id is not None:
            return self._tokens(region)
        events: list[RawEvent] = []
        start = 0
        if self._data or self._event or self._retry is not None:
            # the pending event ends at the first blank line: this region's first byte when the
            # last one ended with the event's last line
            start = 1 if region[0] == 10 else region.find(b"\n\n") + 2
            if start == 1 and region[0] != 10:  # no blank line: the event goes on past this region
                return self._tokens(region)
            events = self._tokens(region[:start])
            if self._data or self._event or self._retry is not None or self._last_id is not None:
                return events + self._tokens(region[start:])
        end = region.rfind(b"\n\n") + 2
        if end > start and end > 1 and _EVENTS.fullmatch(region, start, end):
            events += _PAIRS.findall(region, start, end)
            start = end
        if start < len(region):
            events += self._tokens(region[start:] if start else region)
        return events

    def _tokens(self, region: bytes) -> list[RawEvent]:
        """Interpret whole lines one token at a time: a one-line event or any one line."""
        events: list[RawEvent] = []
        lines: list[str] = []
        for head_line, name, value, line in _TOKENS.findall(region):
            if line:
                lines.append(line[:-1].decode("utf-8", "replace"))
                continue
            if lines:
                events += self._lines(lines)
                lines = []
            if self._data or self._event or self._retry is not None:
                # an `event:` line with an empty value still resets the pending event's type
                text = value.decode("utf-8", "replace")
                head = ["event: " + name.decode("utf-8", "replace")] if head_line else []
                events += self._lines([*head, "data: " + text, ""])
            elif self._last_id is None:
                events.append((name, value))
            else:
                event = _data_event(value.decode("utf-8", "replace"), self._last_id)
                if name:
                    _set_event(event, name.decode("utf-8", "replace"))
                events.append(event)
        if lines:
            events += self._lines(lines)
        return events

    def _lines(self, lines: list[str]) -> list[ServerSentEvent]:
        """Interpret complete lines one by one, by the spec's field rules."""
        events: list[ServerSentEvent] = []
        data = self._data
        for line in lines:
            if not line:
                if data or self._retry is not None:
                    events.append(self._dispatch())
                else:
                    self._event = ""
                continue
            if line.startswith("data:"):
                value = line[5:]
                if value[:1] == " ":
                    value = value[1:]
                if data and not self._strict and _complete_json(data, value):
                    events.append(self._dispatch())
                data.append(value)
                continue
            if line[0] == ":":
                continue
            name, _, value = line.partition(":")
            if value[:1] == " ":
                value = value[1:]
            if name == "data":  # "data" with no colon: an empty data line
                data.append(value)
            elif name == "event":
                self._event = value
            elif name == "id":
                if "\0" not in value:
                    self._last_id = value
            elif name == "retry" and value.isascii() and value.isdigit():
                self._retry = int(value)
        return events

    def _dispatch(self) -> ServerSentEvent:
        """Emit the pending event and reset the per-event buffers (the last id persists)."""
        data = self._data
        event = ServerSentEvent(
            event=self._event or "message",
            data=data[0] if len(data) == 1 else "\n".join(data),
            id=self._last_id,
            retry=self._retry,
        )
        data.clear()
        self._event = ""
        self._retry = None
        return event


_TOKENS = re.compile(rb"(event: ?([^\n]*)\n)?data: ?([^\n]*)\n\n|([^\n]*\n)")
"""A one-line `data:` event, maybe after an `event:` line (groups 1 and 2; OpenAI's Responses and
Anthropic's framing), or else any one line (group 3)."""

_PAIRS = re.compile(rb"(?:event: ?([^\n]*)\n)?data: ?([^\n]*)\n\n")
"""The same one-line events as `(name, data)` pairs, for a region made of nothing else ..."""
_EVENTS = re.compile(rb"(?:(?:event:[^\n]*\n)?data:[^\n]*\n\n)*")
"""... which this matches whole."""

_new = object.__new__
_set_event, _set_data, _set_id, _set_retry = (
    ServerSentEvent.__dict__[name].__set__ for name in ("event", "data", "id", "retry")
)


def _data_event(data: str, last_id: str | None) -> ServerSentEvent:
    """`ServerSentEvent(data=data, id=last_id)`, twice as fast: the slots are set directly.

    A frozen dataclass's `__init__` pays one `object.__setattr__` call per field, which costs as
    much as the rest of decoding an event.
    """
    event = _new(ServerSentEvent)
    _set_event(event, "message")
    _set_data(event, data)
    _set_id(event, last_id)
    _set_retry(event, None)
    return event


def _complete_json(data: list[str], value: str) -> bool:
    """Whether pending `data` is already a whole JSON object/array, so `value` must start anew."""
    if not value.strip():
        return False
    text = "\n".join(data).strip()
    if not text or text[0] not in "{[" or text[-1] not in "}]":
        return False
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def sse_event(payload: Any) -> bytes:
    """One SSE event with a JSON body (or a bare string such as `[DONE]`), framed as OpenAI does:
    compact, ASCII-escaped JSON, so a lone surrogate in model text cannot break the UTF-8."""
    data = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
    return f"data: {data}\n\n".encode()
