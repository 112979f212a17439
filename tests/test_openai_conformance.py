"""Every recorded Chat Completions stream in the corpus decodes to its expected result, however split.

The rules are tests/data/conformance/README.md's: compare text, tool calls (order, id, name,
arguments), finish_reason and usage, plus reasoning, refusal, error and choices where the expected
file has them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from copilot_nb.errors import StreamError
from copilot_nb.events import ModelEvent, ReasoningDelta, TextDelta, ToolCallDelta
from copilot_nb.messages import AssistantMessage
from copilot_nb.models.openai.chat_stream import ChatCompletionsDecoder
from tests.stream_splits import SPLITS, feed_all

CORPUS = Path(__file__).parent / "data" / "conformance"
CASES = [
    path
    for path in sorted(CORPUS.glob("*.sse"))
    if json.loads(path.with_suffix(".expected.json").read_text())["provider"] == "openai"
]


def decode(
    pieces: list[bytes],
) -> tuple[ChatCompletionsDecoder, AssistantMessage, list[ModelEvent], StreamError | None]:
    decoder = ChatCompletionsDecoder()
    events, error = feed_all(decoder, pieces)
    return decoder, decoder.close(), events, error  # after an error: what arrived before it


def summary(message: AssistantMessage) -> dict[str, Any]:
    return {
        "text": message.text,
        "tool_calls": [
            {"id": call.id, "name": call.name, "arguments": call.arguments}
            for call in message.tool_calls
        ],
        "finish_reason": message.finish_reason,
        "usage": dict(message.usage.raw) if message.usage is not None else None,
    }


def test_the_corpus_has_openai_streams() -> None:
    assert len(CASES) >= 30


@pytest.mark.parametrize("split", list(SPLITS))
@pytest.mark.parametrize("path", CASES, ids=[path.stem for path in CASES])
def test_stream_decodes_to_expected_result(path: Path, split: str) -> None:
    expected = json.loads(path.with_suffix(".expected.json").read_text())
    decoder, message, events, error = decode(SPLITS[split](path.read_bytes()))

    assert summary(message) == {
        key: expected[key] for key in ("text", "tool_calls", "finish_reason", "usage")
    }
    assert message.reasoning == expected.get("reasoning", "")
    assert message.refusal == expected.get("refusal", "")
    if "error" in expected:
        assert error is not None
        assert str(error) == expected["error"]["message"]
        assert error.body == expected["error"]["body"] == decoder.error
    else:
        assert error is None
        assert decoder.error is None
    if "choices" in expected:
        got = {
            index: {**summary(choice), "index": index}
            for index, choice in decoder.choices().items()
        }
        assert list(got) == [choice["index"] for choice in expected["choices"]]
        for choice in expected["choices"]:
            assert {key: got[choice["index"]][key] for key in choice} == choice
    if "function_call" in expected:
        call = decoder.function_call
        assert call is not None
        assert {"name": call.name, "arguments": call.arguments} == expected["function_call"]
    else:
        assert decoder.function_call is None

    # The deltas tell the same story as the final message.
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == expected["text"]
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    assert reasoning == expected.get("reasoning", "")
    tool_deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert [e.index for e in tool_deltas if e.id is not None] == list(
        range(len(expected["tool_calls"]))
    )
    for position, call in enumerate(message.tool_calls):
        mine = [e for e in tool_deltas if e.index == position]
        assert "".join(e.id or "" for e in mine) == call.id
        assert "".join(e.name or "" for e in mine) == call.name
        assert "".join(e.arguments for e in mine) == call.raw_arguments


@pytest.mark.parametrize(
    "same",
    [path for path in CASES if "same_result_as" in path.with_suffix(".expected.json").read_text()],
)
def test_transformed_streams_give_the_same_result_as_their_original(same: Path) -> None:
    original = json.loads(same.with_suffix(".expected.json").read_text())["same_result_as"]
    _, message, _, _ = decode([same.read_bytes()])
    _, reference, _, _ = decode([(CORPUS / f"{original}.sse").read_bytes()])
    assert summary(message) == summary(reference)


def test_an_error_event_after_deltas_in_the_same_read_raises_on_the_next_call() -> None:
    """Groq's `event: error` mid-stream: the reasoning before it is streamed, then the error."""
    decoder = ChatCompletionsDecoder()
    events = decoder.feed((CORPUS / "groq_gpt_oss_error_event_midstream.sse").read_bytes())
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)).startswith("We need")
    with pytest.raises(StreamError, match="Tool call validation failed") as caught:
        decoder.close()
    assert caught.value.body["code"] == "tool_use_failed"
    assert decoder.feed(b'data: {"choices":[{"index":0,"delta":{"content":"late"}}]}\n\n') == []
    message = decoder.close()
    assert message.text == ""
    assert message.reasoning.endswith("Let's do that.")
    assert not decoder.done


def test_an_error_chunk_alone_raises_at_once_and_keeps_the_state_before_it() -> None:
    decoder = ChatCompletionsDecoder()
    decoder.feed(
        b'data: {"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}\n\n'
    )
    with pytest.raises(StreamError, match=r"^Token limit reached$"):
        decoder.feed(
            b'data: {"error":{"code":400,"message":"Token limit reached"},"choices":[]}\n\n'
        )
    assert decoder.error == {"code": 400, "message": "Token limit reached"}
    assert decoder.close().text == "Hi"


def test_data_that_is_not_json_is_a_stream_error_quoting_it() -> None:
    decoder = ChatCompletionsDecoder()
    with pytest.raises(StreamError, match=r"not JSON: '<html>oops"):
        decoder.feed(b"data: <html>oops</html>\n\n")
    with pytest.raises(StreamError, match="not a JSON object"):
        ChatCompletionsDecoder().feed(b"data: [1, 2]\n\n")


def test_error_events_without_an_error_object() -> None:
    with pytest.raises(StreamError, match=r"^upstream timed out$") as caught:
        ChatCompletionsDecoder().feed(b'event: error\ndata: {"message": "upstream timed out"}\n\n')
    assert caught.value.body == {"message": "upstream timed out"}
    with pytest.raises(StreamError, match=r"^plain text failure$"):
        ChatCompletionsDecoder().feed(b"event: error\ndata: plain text failure\n\n")
    with pytest.raises(StreamError, match="overloaded"):
        ChatCompletionsDecoder().feed(b'data: {"error": "overloaded"}\n\n')


def test_input_after_done_is_ignored() -> None:
    decoder = ChatCompletionsDecoder()
    chunk = b'data: {"choices":[{"index":0,"delta":{"content":"a"}}]}\n\n'
    assert decoder.feed(chunk + b"data: [DONE]\n\n" + chunk) == [TextDelta(text="a")]
    assert decoder.done
    assert decoder.feed(chunk) == []
    assert decoder.close().text == "a"


def test_flush_streams_a_last_event_without_its_blank_line() -> None:
    decoder = ChatCompletionsDecoder()
    assert decoder.feed(b'data: {"choices":[{"index":0,"delta":{"content":"end"}}]}') == []
    assert decoder.flush() == [TextDelta(text="end")]
    assert decoder.close().text == "end"


def test_feed_chunk_takes_parsed_chunks() -> None:
    decoder = ChatCompletionsDecoder()
    head = {"index": 0, "id": "call_1", "function": {"name": "read", "arguments": ""}}
    assert decoder.feed_chunk({"choices": [{"index": 0, "delta": {"tool_calls": [head]}}]}) == [
        ToolCallDelta(index=0, id="call_1", name="read")
    ]
    piece = {"index": 0, "function": {"arguments": '{"path": "a.py"}'}}
    decoder.feed_chunk({"choices": [{"index": 0, "delta": {"tool_calls": [piece]}}]})
    decoder.feed_chunk({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    decoder.feed_chunk({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4}})
    message = decoder.close()
    assert message.tool_calls[0].arguments == {"path": "a.py"}
    assert message.finish_reason == "tool_calls"
    assert message.usage is not None and message.usage.total_tokens == 7


def test_content_given_as_parts_and_duplicate_reasoning_fields() -> None:
    decoder = ChatCompletionsDecoder()
    delta = {
        "content": [{"type": "text", "text": "Hi"}, {"type": "image_url"}],
        "reasoning_content": "think",
        "reasoning": "think",
    }
    events = decoder.feed_chunk({"choices": [{"index": 0, "delta": delta}]})
    assert events == [TextDelta(text="Hi"), ReasoningDelta(text="think")]
    message = decoder.close()
    assert (message.text, message.reasoning) == ("Hi", "think")
