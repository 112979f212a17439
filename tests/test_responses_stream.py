"""The Responses decoder's rules on the cases no recorded stream covers (see the corpus README):
refusals, `response.incomplete`, `response.failed` alone, the flat `error` shape, parallel calls."""

from __future__ import annotations

import json
from typing import Any

import pytest

from copilot_nb.errors import StreamError
from copilot_nb.events import TextDelta, ToolCallDelta
from copilot_nb.models.openai.responses_stream import ResponsesDecoder


def sse(*events: dict[str, Any], named: bool = True) -> bytes:
    return b"".join(
        (f"event: {e['type']}\n" if named else "").encode() + f"data: {json.dumps(e)}\n\n".encode()
        for e in events
    )


def response(status: str, **extra: Any) -> dict[str, Any]:
    return {"id": "resp_1", "object": "response", "status": status, **extra}


def message_events(index: int, text: str, *, kind: str = "output_text") -> list[dict[str, Any]]:
    delta = "response.refusal.delta" if kind == "refusal" else "response.output_text.delta"
    return [
        {"type": "response.output_item.added", "output_index": index, "item": {"type": "message"}},
        {"type": delta, "output_index": index, "content_index": 0, "delta": text[:3]},
        {"type": delta, "output_index": index, "content_index": 0, "delta": text[3:]},
    ]


def test_a_refusal_is_kept_apart_from_the_text() -> None:
    decoder = ResponsesDecoder()
    events = decoder.feed(
        sse(
            *message_events(0, "I can't help with that.", kind="refusal"),
            {"type": "response.completed", "response": response("completed")},
        )
    )
    assert not [e for e in events if isinstance(e, TextDelta)]
    message = decoder.close()
    assert (message.text, message.refusal) == ("", "I can't help with that.")
    assert message.finish_reason == "stop"


def test_an_incomplete_response_finishes_with_its_reason() -> None:
    decoder = ResponsesDecoder()
    decoder.feed(
        sse(
            {"type": "response.queued", "response": response("queued")},
            *message_events(0, "Partial ans"),
            {
                "type": "response.incomplete",
                "response": response(
                    "incomplete",
                    incomplete_details={"reason": "max_output_tokens"},
                    usage={"input_tokens": 5, "output_tokens": 16},
                ),
            },
        )
    )
    assert decoder.done
    message = decoder.close()
    assert (message.text, message.finish_reason) == ("Partial ans", "max_output_tokens")
    assert (decoder.status, decoder.incomplete_reason) == ("incomplete", "max_output_tokens")
    assert message.usage is not None and message.usage.output_tokens == 16


def test_a_failed_response_without_an_error_event_is_a_stream_error() -> None:
    decoder = ResponsesDecoder()
    failed = response(
        "failed", error={"code": "server_error", "message": "The server had an error"}
    )
    events = decoder.feed(
        sse(*message_events(0, "Hello"), {"type": "response.failed", "response": failed})
    )
    assert [e.text for e in events if isinstance(e, TextDelta)] == ["Hello"], "one read, one piece"
    with pytest.raises(StreamError, match=r"^The server had an error$") as caught:
        decoder.close()
    assert caught.value.body == failed["error"]
    assert decoder.status == "failed"
    assert decoder.close().text == "Hello"


@pytest.mark.parametrize(
    "event",
    [
        {"type": "error", "code": "rate_limit_exceeded", "message": "Slow down", "param": None},
        {"type": "error", "error": {"code": "rate_limit_exceeded", "message": "Slow down"}},
    ],
    ids=["flat", "nested"],
)
def test_error_events_in_both_shapes(event: dict[str, Any]) -> None:
    decoder = ResponsesDecoder()
    with pytest.raises(StreamError, match=r"^Slow down$") as caught:
        decoder.feed(sse(event))
    assert caught.value.body["code"] == "rate_limit_exceeded"
    assert caught.value.retryable, "a rate limit passes: the agent asks again once"
    assert decoder.feed(sse(*message_events(0, "late text"))) == []  # input after it is ignored


def test_an_exhausted_quota_is_not_asked_again() -> None:
    event = {"type": "error", "error": {"code": "insufficient_quota", "message": "No credit"}}
    with pytest.raises(StreamError) as caught:
        ResponsesDecoder().feed(sse(event))
    assert not caught.value.retryable


def test_items_are_matched_by_output_index_whatever_their_ids() -> None:
    """Two parallel calls whose item ids change on every event (GitHub Copilot rotates them)."""
    events: list[dict[str, Any]] = []
    for index, (call_id, name) in enumerate([("call_a", "read"), ("call_b", "write")]):
        item = {"type": "function_call", "id": f"x{index}", "call_id": call_id, "name": name}
        events.append({"type": "response.output_item.added", "output_index": index, "item": item})
    for n, piece in enumerate(['{"p":', '{"q":', "1}", "2}"]):
        events.append(
            {
                "type": "response.function_call_arguments.delta",
                "output_index": n % 2,
                "item_id": f"rotated-{n}",
                "delta": piece,
            }
        )
    events.append({"type": "response.completed", "response": response("completed")})
    decoder = ResponsesDecoder()
    deltas = [e for e in decoder.feed(sse(*events, named=False)) if isinstance(e, ToolCallDelta)]
    assert [(d.index, d.id, d.arguments) for d in deltas] == [
        (0, "call_a", ""),
        (1, "call_b", ""),
        (0, None, '{"p":'),
        (1, None, '{"q":'),
        (0, None, "1}"),
        (1, None, "2}"),
    ]
    message = decoder.close()
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls] == [
        ("call_a", "read", {"p": 1}),
        ("call_b", "write", {"q": 2}),
    ]
    assert message.finish_reason == "tool_calls"


def test_done_ends_the_stream_and_input_after_it_is_ignored() -> None:
    decoder = ResponsesDecoder()
    body = sse(*message_events(0, "Hi there"), named=False) + b"data: [DONE]\n\n"
    decoder.feed(body)
    assert decoder.done
    assert decoder.feed(sse(*message_events(1, "more"))) == []
    assert decoder.close().text == "Hi there"


def test_arguments_sent_only_whole_in_the_done_event_still_stream() -> None:
    item = {"type": "function_call", "call_id": "c", "name": "f", "arguments": ""}
    decoder = ResponsesDecoder()
    events = decoder.feed(
        sse(
            {"type": "response.output_item.added", "output_index": 0, "item": item},
            {
                "type": "response.function_call_arguments.done",
                "output_index": 0,
                "arguments": '{"a": 1}',
            },
        )
    )
    assert [e.arguments for e in events if isinstance(e, ToolCallDelta)] == ["", '{"a": 1}']
    assert decoder.close().tool_calls[0].arguments == {"a": 1}


def test_data_that_is_not_json_is_a_stream_error_quoting_it() -> None:
    with pytest.raises(StreamError, match=r"not JSON: '<html>oops"):
        ResponsesDecoder().feed(b"data: <html>oops</html>\n\n")
    with pytest.raises(StreamError, match="not a JSON object"):
        ResponsesDecoder().feed(b"data: [1, 2]\n\n")


def test_a_stream_that_stops_before_its_terminal_event_has_no_finish_reason() -> None:
    decoder = ResponsesDecoder()
    decoder.feed(sse(*message_events(0, "Half")))
    message = decoder.close()
    assert not decoder.done and message.finish_reason is None and message.text == "Half"
