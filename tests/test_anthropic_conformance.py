"""Every Anthropic stream in the corpus decodes to its expected result, however it is split."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from copilot_nb.errors import StreamError
from copilot_nb.events import ModelEvent, ReasoningDelta, TextDelta, ToolCallDelta
from copilot_nb.models.anthropic.stream import MessagesStreamDecoder
from tests.stream_splits import SPLITS, feed_all

CORPUS = Path(__file__).parent / "data" / "conformance"


def _anthropic_cases() -> list[Path]:
    return [
        sse
        for sse in sorted(CORPUS.glob("*.sse"))
        if json.loads(sse.with_suffix(".expected.json").read_text())["provider"] == "anthropic"
    ]


CASES = _anthropic_cases()


def decode(pieces: list[bytes]) -> tuple[dict[str, Any], list[ModelEvent], StreamError | None]:
    decoder = MessagesStreamDecoder()
    events, error = feed_all(decoder, pieces)
    message = decoder.close()  # after the error: what arrived before it
    result = {
        "text": message.text,
        "tool_calls": [
            {"id": c.id, "name": c.name, "arguments": c.arguments} for c in message.tool_calls
        ],
        "finish_reason": message.finish_reason,
        "usage": dict(message.usage.raw) if message.usage is not None else None,
        "reasoning": message.reasoning,
        "reasoning_signature": message.reasoning_signature,
    }
    return result, events, error


def test_the_corpus_has_anthropic_streams() -> None:
    assert len(CASES) >= 8


@pytest.mark.parametrize("split", list(SPLITS))
@pytest.mark.parametrize("path", CASES, ids=[p.stem for p in CASES])
def test_stream_decodes_to_expected_result(path: Path, split: str) -> None:
    expected = json.loads(path.with_suffix(".expected.json").read_text())
    result, events, error = decode(SPLITS[split](path.read_bytes()))

    for key in ("text", "tool_calls", "finish_reason", "usage"):
        assert result[key] == expected[key], key
    assert result["reasoning"] == expected.get("reasoning", "")
    assert result["reasoning_signature"] == expected.get("reasoning_signature")
    if "error" in expected:
        assert error is not None
        assert error.body == expected["error"]["body"]
        assert expected["error"]["body"]["error"]["message"] in str(error)
    else:
        assert error is None

    # The deltas tell the same story as the final message.
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == expected["text"]
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == expected.get(
        "reasoning", ""
    )
    starts = [e for e in events if isinstance(e, ToolCallDelta) and e.id is not None]
    assert [(e.id, e.name) for e in starts] == [
        (c["id"], c["name"]) for c in expected["tool_calls"]
    ]
    for position, call in enumerate(expected["tool_calls"]):
        streamed = "".join(
            e.arguments for e in events if isinstance(e, ToolCallDelta) and e.index == position
        )
        if isinstance(call["arguments"], str):
            assert streamed == call["arguments"]
        elif streamed:
            assert json.loads(streamed) == call["arguments"]


def test_error_event_keeps_what_came_before() -> None:
    """An overloaded_error mid-stream raises, and close() still returns the partial reply."""
    path = CORPUS / "anthropic_overloaded_error_midstream.sse"
    decoder = MessagesStreamDecoder()
    events = decoder.feed(path.read_bytes())  # the deltas before the error come out first...
    assert "".join(e.text for e in events if isinstance(e, TextDelta)).startswith("I'll check")
    with pytest.raises(StreamError, match="overloaded_error"):
        decoder.close()  # ...and the error is raised next
    assert decoder.error == {
        "type": "error",
        "error": {"type": "overloaded_error", "message": "Overloaded"},
    }
    message = decoder.close()
    assert message.text == "I'll check the current weather in Paris for you."
    assert message.tool_calls[0].arguments == '{"location": "P'
    assert message.finish_reason is None
    assert not decoder.done


def test_server_tool_use_is_not_a_client_tool_call() -> None:
    decoder = MessagesStreamDecoder()
    events = [
        {
            "type": "message_start",
            "message": {"id": "m", "usage": {"input_tokens": 5, "output_tokens": 1}},
        },
        {
            "type": "content_block_start",
            "index": 0,
            "content_block": {
                "type": "server_tool_use",
                "id": "srvtoolu_1",
                "name": "web_search",
                "input": {},
            },
        },
        {
            "type": "content_block_delta",
            "index": 0,
            "delta": {"type": "input_json_delta", "partial_json": '{"query": "jupyter"}'},
        },
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        {
            "type": "content_block_delta",
            "index": 1,
            "delta": {"type": "text_delta", "text": "Found it."},
        },
        {"type": "content_block_stop", "index": 1},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "end_turn"},
            "usage": {"output_tokens": 9},
        },
        {"type": "message_stop"},
    ]
    out = [event for raw in events for event in decoder.feed_event(raw)]
    message = decoder.close()
    assert out == [TextDelta(text="Found it.")]
    assert message.tool_calls == ()
    assert [(c.name, c.arguments) for c in decoder.server_tool_calls] == [
        ("web_search", {"query": "jupyter"})
    ]
    assert decoder.done
    assert message.usage is not None and message.usage.total_tokens == 14


def test_data_that_is_not_json_is_a_stream_error() -> None:
    decoder = MessagesStreamDecoder()
    with pytest.raises(StreamError, match="not JSON"):
        decoder.feed(b"event: content_block_delta\ndata: {oops\n\n")


@pytest.mark.parametrize("index", ["null", '"0"', "1.5", "true"])
@pytest.mark.parametrize("kind", ["content_block_start", "content_block_delta"])
def test_a_block_index_that_is_not_an_integer_is_a_stream_error(kind: str, index: str) -> None:
    body = (
        '{"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}'
    )
    broken = f'{{"type": "{kind}", "index": {index}, ' + (
        '"content_block": {"type": "text", "text": ""}}'
        if kind == "content_block_start"
        else '"delta": {"type": "text_delta", "text": "hi"}}'
    )
    decoder = MessagesStreamDecoder()
    decoder.feed(f"event: content_block_start\ndata: {body}\n\n".encode())
    with pytest.raises(StreamError, match="not an integer"):
        decoder.feed(f"event: {kind}\ndata: {broken}\n\n".encode())
    assert decoder.close().text == ""  # what came before is kept, and close does not crash
