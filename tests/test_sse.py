"""The SSE decoder gives the same events however the network splits the bytes."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from copilot_nb.models.sse import ServerSentEvent, SSEDecoder


def decode(pieces: list[bytes], *, strict: bool = False) -> list[ServerSentEvent]:
    decoder = SSEDecoder(strict=strict)
    events = [event for piece in pieces for event in decoder.feed(piece)]
    return events + decoder.flush()


def every_split(data: bytes) -> list[list[bytes]]:
    """The stream whole, in two pieces at every offset, and one byte at a time."""
    splits = [[data[:cut], data[cut:]] for cut in range(len(data) + 1)]
    return [*splits, [data[i : i + 1] for i in range(len(data))]]


def oracle(data: bytes) -> list[ServerSentEvent]:
    """A direct, slow reading of the WHATWG rules over the whole stream (strict mode)."""
    text = data.decode("utf-8", "replace")
    text = text.removeprefix("\ufeff")
    events: list[ServerSentEvent] = []
    event, lines, last_id, retry = "", [], None, None
    for line in [*re.split(r"\r\n|\r|\n", text), ""]:
        if line == "":
            if lines or retry is not None:
                events.append(
                    ServerSentEvent(
                        event=event or "message", data="\n".join(lines), id=last_id, retry=retry
                    )
                )
            event, lines, retry = "", [], None
        elif line.startswith(":"):
            continue
        else:
            name, _, value = line.partition(":")
            value = value.removeprefix(" ")
            if name == "data":
                lines.append(value)
            elif name == "event":
                event = value
            elif name == "id" and "\0" not in value:
                last_id = value
            elif name == "retry" and re.fullmatch(r"[0-9]+", value):
                retry = int(value)
    return events


BASIC = (
    b": a comment\n"
    b'data: {"a": 1}\n'
    b"\n"
    b"event: ping\n"
    b"data: caf\xc3\xa9 \xf0\x9f\x98\x80\n"
    b"\n"
    b"id: 7\n"
    b"retry: 3000\n"
    b"data: first\n"
    b"data:second\n"
    b"data\n"
    b"\n"
)
BASIC_EVENTS = [
    ServerSentEvent(data='{"a": 1}'),
    ServerSentEvent(event="ping", data="café 😀"),
    ServerSentEvent(data="first\nsecond\n", id="7", retry=3000),
]


@pytest.mark.parametrize("ending", [b"\n", b"\r\n", b"\r"], ids=["LF", "CRLF", "CR"])
def test_every_split_of_a_stream_gives_the_same_events(ending: bytes) -> None:
    data = BASIC.replace(b"\n", ending)
    for pieces in every_split(data):
        assert decode(pieces) == BASIC_EVENTS, pieces


def test_mixed_line_endings_and_a_cr_lf_pair_split_across_reads() -> None:
    data = b"data: a\r\ndata: b\rdata: c\n\r\n" + b"data: d\r\r"
    expected = [ServerSentEvent(data="a\nb\nc"), ServerSentEvent(data="d")]
    for pieces in every_split(data):
        assert decode(pieces) == expected, pieces
    assert decode([b"data: x\r", b"\n", b"\r", b"\n"]) == [ServerSentEvent(data="x")]


def test_a_multibyte_character_split_inside_itself() -> None:
    data = "data: Grüße, 世界 🎉\n\n".encode()
    for pieces in every_split(data):
        assert decode(pieces) == [ServerSentEvent(data="Grüße, 世界 🎉")]


def test_invalid_utf8_becomes_the_replacement_character() -> None:
    assert decode([b"data: a\xffb\n\n"]) == [ServerSentEvent(data="a\ufffdb")]


def test_a_leading_bom_is_dropped_even_split_but_a_later_one_is_data() -> None:
    data = b"\xef\xbb\xbfdata: x\n\n\xef\xbb\xbfdata: y\n\n"
    for pieces in every_split(data):
        assert decode(pieces) == [ServerSentEvent(data="x")], pieces  # "\ufeffdata" is no field
    assert decode([b"\xef\xbb", b"\xbf", b"data: z\n\n"]) == [ServerSentEvent(data="z")]
    assert decode([b"\xef\xbbdata: z\n\n"]) == []  # not a BOM: the line's field is "\ufffddata"


def test_only_one_space_after_the_colon_is_removed() -> None:
    assert decode([b"data:  two\n\ndata:none\n\n"]) == [
        ServerSentEvent(data=" two"),
        ServerSentEvent(data="none"),
    ]


def test_comments_and_unknown_fields_are_ignored() -> None:
    data = b": keep-alive\n:\nfoo: bar\nbaz\ndata: x\n: between\n\n"
    assert decode([data]) == [ServerSentEvent(data="x")]


def test_a_block_without_data_is_not_dispatched_and_its_event_type_is_forgotten() -> None:
    assert decode([b"event: ping\n\ndata: x\n\n"]) == [ServerSentEvent(data="x")]


def test_retry_only_block_is_dispatched_so_the_delay_is_not_lost() -> None:
    assert decode([b"retry: 1500\n\nretry: soon\ndata: x\n\n"]) == [
        ServerSentEvent(retry=1500),
        ServerSentEvent(data="x"),
    ]


def test_id_persists_until_changed_and_an_id_with_nul_is_ignored() -> None:
    data = b"id: 1\ndata: a\n\ndata: b\n\nid: 2\0\ndata: c\n\nid\ndata: d\n\n"
    assert [(e.data, e.id) for e in decode([data])] == [
        ("a", "1"),
        ("b", "1"),
        ("c", "1"),
        ("d", ""),
    ]


def test_empty_data_line_dispatches_an_empty_event() -> None:
    assert decode([b"data:\n\ndata\n\n"]) == [ServerSentEvent(), ServerSentEvent()]


def test_flush_dispatches_an_event_left_without_its_blank_line() -> None:
    for pieces in every_split(b"data: a\n\ndata: b\ndata: c"):
        assert decode(pieces) == [ServerSentEvent(data="a"), ServerSentEvent(data="b\nc")]
    assert decode([b"data: x\n"]) == [ServerSentEvent(data="x")]
    assert decode([b""]) == []


def test_events_are_frozen_and_equal_however_they_were_built() -> None:
    fast, generic = decode([b"data: x\n\n:c\ndata: x\n\n"])  # one-line block vs. line by line
    assert fast == generic == ServerSentEvent(data="x")
    assert hash(fast) == hash(generic)
    with pytest.raises(dataclasses.FrozenInstanceError):
        fast.data = "y"  # type: ignore[misc]


def test_one_event_per_read_as_servers_usually_send_them() -> None:
    reads = [
        b"data: a\n\n",
        b"id: 3\n\n",
        b"data:b\n\n",
        b"event: e\n",
        b"data: c\n\n",
        b"data: d\n",
        b"\n",
        b'data: {"x": 1}\n',
        b'data: {"y": 2}\n\n',
        b"data: \xf0\x9f\x98\x80\n\n",
    ]
    expected = [
        ServerSentEvent(data="a"),
        ServerSentEvent(data="b", id="3"),
        ServerSentEvent(event="e", data="c", id="3"),
        ServerSentEvent(data="d", id="3"),
        ServerSentEvent(data='{"x": 1}', id="3"),
        ServerSentEvent(data='{"y": 2}', id="3"),
        ServerSentEvent(data="😀", id="3"),
    ]
    assert decode(reads) == decode([b"".join(reads)]) == expected


def test_the_decoder_can_be_fed_empty_reads() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"") == []
    assert decoder.feed(b"data: x\r") == []
    assert decoder.feed(b"") == []
    assert decoder.feed(b"\n\n") == [ServerSentEvent(data="x")]


# --- consecutive data lines (the single-newline quirk) -----------------------------------------

SINGLE_NEWLINE = b'data: {"n": 1}\ndata: {"n": 2}\ndata: [1, 2]\ndata: [DONE]\n'


def test_json_data_lines_without_blank_lines_are_one_event_each() -> None:
    expected = [
        ServerSentEvent(data='{"n": 1}'),
        ServerSentEvent(data='{"n": 2}'),
        ServerSentEvent(data="[1, 2]"),
        ServerSentEvent(data="[DONE]"),
    ]
    for pieces in every_split(SINGLE_NEWLINE):
        assert decode(pieces) == expected, pieces


def test_strict_mode_joins_them_as_the_spec_says() -> None:
    joined = '{"n": 1}\n{"n": 2}\n[1, 2]\n[DONE]'
    assert decode([SINGLE_NEWLINE], strict=True) == [ServerSentEvent(data=joined)]


def test_json_spread_over_several_data_lines_still_joins() -> None:
    value = {"a": [1, 2], "b": {"c": "}"}}
    text = json.dumps(value, indent=2)
    data = "".join(f"data: {line}\n" for line in text.split("\n")).encode() + b"\n"
    for pieces in every_split(data):
        assert decode(pieces) == [ServerSentEvent(data=text)]


def test_text_data_lines_join_and_an_empty_continuation_stays_with_the_json() -> None:
    assert decode([b"data: {a}\ndata: b\n\n"]) == [ServerSentEvent(data="{a}\nb")]
    assert decode([b'data: {"a": 1}\ndata:\n\n']) == [ServerSentEvent(data='{"a": 1}\n')]
    assert decode([b"data: hello\ndata: {}\n\n"]) == [ServerSentEvent(data="hello\n{}")]


def test_split_events_keep_their_own_event_type() -> None:
    data = b'event: error\ndata: {"e": 1}\ndata: {"n": 2}\n\n'
    assert decode([data]) == [
        ServerSentEvent(event="error", data='{"e": 1}'),
        ServerSentEvent(data='{"n": 2}'),
    ]


# --- random streams -----------------------------------------------------------------------------

_value = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"),
    max_size=12,
)
_line = st.one_of(
    st.builds(lambda v: f"data: {v}", _value),
    st.builds(lambda v: f"data:{v}", _value),
    st.just("data"),
    st.just(""),
    st.just(""),
    st.builds(lambda v: f"event: {v}", _value),
    st.builds(lambda v: f"id: {v}", _value),
    st.builds(lambda v: f"retry: {v}", st.sampled_from(["10", "x1", "", "٣"])),
    st.builds(lambda v: f":{v}", _value),
    st.builds(lambda v: f"x-{v}", _value),
)


@st.composite
def streams(draw: st.DrawFn) -> bytes:
    lines = draw(st.lists(_line, max_size=25))
    endings = draw(st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=len(lines)))
    text = "".join(line + end for line, end in zip(lines, endings[: len(lines)], strict=True))
    bom = draw(st.sampled_from(["", "\ufeff"]))
    return (bom + text).encode()


@st.composite
def chunked(draw: st.DrawFn, data: bytes) -> list[bytes]:
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=12)))
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_random_streams_match_the_spec_reading_whatever_the_chunking(data: st.DataObject) -> None:
    stream = data.draw(streams())
    pieces = data.draw(chunked(stream))
    assert decode(pieces, strict=True) == oracle(stream)
    assert decode(pieces) == decode([stream])


_json_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\r\n"), max_size=8
)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.dictionaries(_json_text, _json_text, max_size=3),
            st.lists(st.integers(), max_size=3),
            _json_text,
        ),
        min_size=1,
        max_size=6,
    ),
    st.data(),
)
def test_random_json_lines_with_single_newlines(values: list[object], data: st.DataObject) -> None:
    """A JSON object/array line is a whole event; the next non-blank line starts another."""
    payloads = [v if isinstance(v, str) else json.dumps(v, ensure_ascii=False) for v in values]
    stream = "".join(f"data: {p}\n" for p in payloads).encode()
    expected: list[list[str]] = []
    for payload in payloads:
        pending = "\n".join(expected[-1]).strip() if expected else ""
        if not expected or (payload.strip() and pending[:1] in "{[" and _is_json(pending)):
            expected.append([payload])
        else:
            expected[-1].append(payload)
    events = [ServerSentEvent(data="\n".join(lines)) for lines in expected]
    assert decode([stream]) == events
    assert decode(data.draw(chunked(stream))) == events


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


def test_event_and_data_pairs_keep_their_type_and_the_last_id() -> None:
    """OpenAI's Responses and Anthropic's framing (`event:` then one `data:` line) read fast."""
    data = b"id: 7\n\nevent: a\ndata: 1\n\nevent:b\ndata:2\n\nevent: \ndata: 3\n\n"
    assert decode([data]) == [
        ServerSentEvent(event="a", data="1", id="7"),
        ServerSentEvent(event="b", data="2", id="7"),
        ServerSentEvent(data="3", id="7"),
    ]


def test_an_empty_event_line_resets_the_type_whatever_the_split() -> None:
    """`event:` with no value sets the type back to the default, also on the one-line fast path."""
    stream = b"event: 0\nevent: \ndata: \n\n"
    for cut in range(len(stream) + 1):
        pieces = [stream[:cut], stream[cut:]]
        assert decode(pieces, strict=True) == oracle(stream)
        assert [event.event for event in decode(pieces)] == ["message"]
