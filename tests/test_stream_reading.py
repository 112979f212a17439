"""How a model's stream is read: the pieces one read of the body holds merged into one event per
run of text, and a fast stream read in batches (its reader pauses now and then, so pieces gather
in the socket), with every character kept and in order."""

from __future__ import annotations

from copilot_nb.events import ReasoningDelta, TextDelta, ToolCallDelta
from copilot_nb.models.transport import merged
from copilot_nb.testing import reply

HI = [{"role": "user", "content": "hi"}]


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


async def test_a_fast_stream_read_in_batches_arrives_whole_and_in_order(serve):
    text = "".join(f"{n:05d} " for n in range(3_000))
    server = serve([reply(text, chunk_size=6)])  # 3,000 pieces sent as fast as they go
    pieces = [e.text async for e in server.model().stream(HI) if isinstance(e, TextDelta)]
    assert "".join(pieces) == text
