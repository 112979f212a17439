"""How a model's stream is read: the pieces one read of the body holds merged into one event per
run of text, and a fast stream read in batches (its reader pauses now and then, so pieces gather
in the socket), with every character kept and in order."""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from copilot_nb.events import ReasoningDelta, TextDelta, ToolCallDelta
from copilot_nb.models import transport
from copilot_nb.models.anthropic.stream import MessagesStreamDecoder
from copilot_nb.models.fast_json import available, use
from copilot_nb.models.openai.chat_stream import ChatCompletionsDecoder
from copilot_nb.models.openai.responses_stream import ResponsesDecoder
from copilot_nb.models.read_pace import ARRIVING, BULK, GATHER, ReadPace
from copilot_nb.models.transport import merged
from copilot_nb.testing import ScriptedServer, call, reply
from copilot_nb.testing.anthropic_wire import anthropic_sse_events
from copilot_nb.testing.openai_wire import openai_sse_events
from copilot_nb.testing.responses_wire import responses_sse_events
from copilot_nb.testing.server import _Handler

HI = [{"role": "user", "content": "hi"}]


class _WholeHandler(_Handler):
    """The scripted model's reply framed as providers frame it (an HTTP chunk per event), but
    sent in one write: a reply the server had ready before it began to send."""

    def _send_stream(
        self, events: Iterable[bytes], *, delay: float, break_after: int | None
    ) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        body = b"".join(b"%x\r\n%s\r\n" % (len(data), data) for data in events)
        self.wfile.write(body + b"0\r\n\r\n")
        self.wfile.flush()


class WholeReplyServer(ScriptedServer):
    handler = _WholeHandler


@pytest.fixture
def pauses(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The pauses the stream reader takes, recorded through its injectable `pause`."""
    taken: list[float] = []

    async def pause(seconds: float) -> None:
        taken.append(seconds)

    assert transport.stream_reply.__kwdefaults__ is not None
    monkeypatch.setitem(transport.stream_reply.__kwdefaults__, "pause", pause)
    return taken


def test_one_reads_runs_of_text_and_of_reasoning_become_one_piece_each():
    tool = ToolCallDelta(index=0, id="c", name="f", arguments="{")
    events = [
        ReasoningDelta(text="hm"),
        ReasoningDelta(text="m."),
        TextDelta(text="Hel"),
        TextDelta(text="lo"),
        tool,
        TextDelta(text="!"),
    ]
    assert merged(events) == [
        ReasoningDelta(text="hmm."),
        TextDelta(text="Hello"),
        tool,
        TextDelta(text="!"),
    ]
    assert merged([TextDelta(text="a")]) == [TextDelta(text="a")]
    assert merged([tool, ReasoningDelta(text="a"), TextDelta(text="b"), TextDelta(text="c")]) == [
        tool,
        ReasoningDelta(text="a"),
        TextDelta(text="bc"),
    ]


async def test_a_fast_stream_read_in_batches_arrives_whole_and_in_order(serve):
    text = "".join(f"{n:05d} " for n in range(3_000))
    server = serve([reply(text, chunk_size=6)])  # 3,000 pieces sent as fast as they go
    pieces = [e.text async for e in server.model().stream(HI) if isinstance(e, TextDelta)]
    assert "".join(pieces) == text


async def test_a_reply_sent_whole_is_read_with_no_pause(pauses):
    """A short answer, a tool call, a long answer: each reply already sent whole is read
    straight through, however many pieces it holds."""
    text = "".join(f"{n:05d} " for n in range(200))
    steps = [reply("Sure.", call("read_file", path="a.py")), reply(text, chunk_size=6)]
    with WholeReplyServer(steps) as server:
        model = server.model()
        first = [e async for e in model.stream(HI)]
        pieces = [e.text async for e in model.stream(HI) if isinstance(e, TextDelta)]
    assert any(isinstance(e, ToolCallDelta) for e in first)
    assert "".join(pieces) == text
    assert pauses == [], "nothing was on its way: a pause only waits"


async def test_pieces_that_come_faster_than_they_are_read_are_gathered(pauses, serve):
    """A token flood (a piece every millisecond) still pauses the reader, so the pieces that
    arrive meanwhile are read at once."""
    text = "".join(f"{n:05d} " for n in range(300))
    server = serve([reply(text, chunk_size=6, delay=0.001)])
    pieces = [e.text async for e in server.model().stream(HI) if isinstance(e, TextDelta)]
    assert "".join(pieces) == text
    assert pauses, "a fast stream is read in batches"


def test_the_reader_pauses_only_after_a_quick_piece_it_had_to_wait_for():
    """Never after the first read, a piece already received or arriving, a slow piece or a big
    read; after a piece that came from the socket soon, in a small read, it pauses to gather
    the next ones."""
    pace = ReadPace()
    assert pace.pause_after(200, waited=0.001, received=False) == 0, "the first words at once"
    assert pace.pause_after(200, waited=0.001, received=False) == GATHER
    assert pace.pause_after(200, waited=0.00001, received=True) == 0, "already in memory"
    assert pace.pause_after(200, waited=ARRIVING / 2, received=False) == 0, "already arriving"
    assert pace.pause_after(200, waited=GATHER, received=False) == 0, "a slow piece"
    assert pace.pause_after(BULK, waited=ARRIVING, received=False) == GATHER
    assert pace.pause_after(200, waited=0.001, received=False) == 0, "the last read was big"
    assert pace.pause_after(200, waited=0.001, received=False) == GATHER


def test_a_big_read_counts_the_pieces_it_brought_from_memory():
    pace = ReadPace()
    pace.pause_after(100, waited=0.01, received=False)
    for _ in range(BULK // 100):
        assert pace.pause_after(100, waited=0.0, received=True) == 0
    assert pace.pause_after(100, waited=0.001, received=False) == 0, "a burst: nothing to gather"


WIRES = {
    "chat": (ChatCompletionsDecoder, lambda t: openai_sse_events(t, model="m", completion_id="c")),
    "responses": (ResponsesDecoder, lambda t: responses_sse_events(t, model="m", response_id="r")),
    "anthropic": (
        MessagesStreamDecoder,
        lambda t: anthropic_sse_events(t, model="m", message_id="m"),
    ),
}


@pytest.mark.parametrize("parser", available())
@pytest.mark.parametrize("wire", list(WIRES))
def test_each_decoder_gives_one_reads_run_of_text_as_one_piece(wire, parser):
    """Each wire's decoder joins the text pieces one read holds (with either JSON parser), and
    keeps the pieces of separate reads apart, every character in order."""
    make, encode = WIRES[wire]
    events = list(encode(reply("".join(f"{n:03d} " for n in range(60)), chunk_size=4)))
    previous = use(parser)
    try:
        decoder = make()
        first = decoder.feed(b"".join(events[:30]))
        second = decoder.feed(b"".join(events[30:]))
        message = decoder.close()
    finally:
        use(previous)
    texts = [[e.text for e in read if isinstance(e, TextDelta)] for read in (first, second)]
    assert [len(t) for t in texts] == [1, 1]
    assert texts[0][0] + texts[1][0] == message.text
