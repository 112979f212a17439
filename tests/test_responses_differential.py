"""Random Responses API streams decode exactly as the official openai SDK accumulates them.

Hypothesis builds a stream (an optional reasoning item with 1-3 summary parts and maybe encrypted
content, an optional message with unicode text, 0-3 function calls with arguments cut at random
points; a `response.completed` or `response.incomplete` whose `output` is given in full or left
out; usage with cached and reasoning tokens), writes it as SSE bytes in OpenAI's framing
(`event:` + `data:`) or OpenRouter's (`data:` only, then `[DONE]`) and cuts those at random points.
Our decoder reads the bytes; openai-python's `ResponseStreamState` (the accumulator behind
`client.responses.stream(...)`) reads the same events as typed models; the results must agree.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from openai import omit
from openai._models import construct_type
from openai.lib.streaming.responses import ResponseStreamState
from openai.types.responses import ResponseStreamEvent

from copilot_nb.events import ModelEvent, ReasoningDelta, TextDelta, ToolCallDelta
from copilot_nb.messages import parse_arguments
from copilot_nb.models.openai.responses_stream import ResponsesDecoder
from tests.wire_samples import _emoji_text, _json_value, _name, _pieces


@st.composite
def streams(draw: st.DrawFn) -> list[dict[str, Any]]:  # noqa: C901 - one branch per kind of event a random stream may hold
    """The events of one Responses stream, from `response.created` to the terminal event."""
    events: list[dict[str, Any]] = []
    output: list[dict[str, Any]] = []
    seqno = draw(st.booleans())

    def emit(kind: str, **fields: Any) -> None:
        event = {"type": kind, **fields}
        if seqno:
            event["sequence_number"] = len(events)
        events.append(event)

    def response(status: str, **extra: Any) -> dict[str, Any]:
        return {
            "id": "resp_1",
            "object": "response",
            "created_at": 1,
            "status": status,
            "model": "gpt-test",
            "output": [],
            "parallel_tool_calls": True,
            "tool_choice": "auto",
            "tools": [],
            **extra,
        }

    emit("response.created", response=response("in_progress"))
    emit("response.in_progress", response=response("in_progress"))
    if draw(st.booleans()):  # reasoning with a summary
        index, item_id = len(output), "rs_1"
        item: dict[str, Any] = {"id": item_id, "type": "reasoning", "summary": []}
        emit("response.output_item.added", output_index=index, item=item)
        parts = []
        for summary_index in range(draw(st.integers(1, 3))):
            text = draw(_emoji_text)
            head = {"item_id": item_id, "output_index": index, "summary_index": summary_index}
            emit(
                "response.reasoning_summary_part.added",
                **head,
                part={"type": "summary_text", "text": ""},
            )
            for piece in _pieces(draw, text):
                if piece:
                    emit("response.reasoning_summary_text.delta", **head, delta=piece)
            emit("response.reasoning_summary_text.done", **head, text=text)
            part = {"type": "summary_text", "text": text}
            emit("response.reasoning_summary_part.done", **head, part=part)
            parts.append(part)
        item = {**item, "summary": parts}
        if draw(st.booleans()):
            item["encrypted_content"] = "gAAAA" + draw(_name)
        output.append(item)
        emit("response.output_item.done", output_index=index, item=item)
    if draw(st.booleans()):  # a message
        index, item_id = len(output), "msg_1"
        text = draw(_emoji_text)
        item = {
            "id": item_id,
            "type": "message",
            "role": "assistant",
            "status": "in_progress",
            "content": [],
        }
        emit("response.output_item.added", output_index=index, item=item)
        head = {"item_id": item_id, "output_index": index, "content_index": 0}
        empty = {"type": "output_text", "text": "", "annotations": []}
        emit("response.content_part.added", **head, part=empty)
        for piece in _pieces(draw, text):
            if piece:
                emit("response.output_text.delta", **head, delta=piece, logprobs=[])
        emit("response.output_text.done", **head, text=text, logprobs=[])
        part = {**empty, "text": text}
        emit("response.content_part.done", **head, part=part)
        item = {**item, "status": "completed", "content": [part]}
        output.append(item)
        emit("response.output_item.done", output_index=index, item=item)
    for n in range(draw(st.integers(0, 3))):  # function calls
        index, item_id = len(output), f"fc_{n}"
        arguments = json.dumps(
            draw(st.dictionaries(_name, _json_value, max_size=3)),
            ensure_ascii=draw(st.booleans()),
        )
        item = {
            "id": item_id,
            "type": "function_call",
            "status": "in_progress",
            "arguments": "",
            "call_id": f"call_{n}_{draw(_name)}",
            "name": draw(_name),
        }
        emit("response.output_item.added", output_index=index, item=item)
        for piece in _pieces(draw, arguments):
            if piece:
                emit(
                    "response.function_call_arguments.delta",
                    item_id=item_id,
                    output_index=index,
                    delta=piece,
                )
        emit(
            "response.function_call_arguments.done",
            item_id=item_id,
            output_index=index,
            arguments=arguments,
        )
        item = {**item, "status": "completed", "arguments": arguments}
        output.append(item)
        emit("response.output_item.done", output_index=index, item=item)

    input_tokens = draw(st.integers(0, 10**6))
    usage = {
        "input_tokens": input_tokens,
        "input_tokens_details": {"cached_tokens": draw(st.integers(0, input_tokens))},
        "output_tokens": len(events),
        "output_tokens_details": {"reasoning_tokens": draw(st.integers(0, 10**4))},
        "total_tokens": input_tokens + len(events),
    }
    terminal = draw(st.sampled_from(["response.completed", "response.incomplete"]))
    final = response(
        terminal.rpartition(".")[2],
        usage=usage,
        incomplete_details=(
            {"reason": draw(st.sampled_from(["max_output_tokens", "content_filter"]))}
            if terminal == "response.incomplete"
            else None
        ),
    )
    if draw(st.booleans()):
        final["output"] = output
    else:
        del final["output"]  # the SDK then builds the output from the streamed items
    emit(terminal, response=final)
    return events


@st.composite
def wire(draw: st.DrawFn, events: list[dict[str, Any]]) -> list[bytes]:
    """The events as SSE bytes in OpenAI's or OpenRouter's framing, cut at random byte offsets."""
    end = draw(st.sampled_from(["\n", "\r\n"]))
    named = draw(st.booleans())
    body = "".join(
        (f"event: {event['type']}{end}" if named else "")
        + f"data: {json.dumps(event, ensure_ascii=False)}{end}{end}"
        for event in events
    )
    if not named:
        body = f": OPENROUTER PROCESSING{end}{end}{body}data: [DONE]{end}{end}"
    data = body.encode()
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=30)))
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]


def sdk_result(events: list[dict[str, Any]]) -> dict[str, Any]:
    state: ResponseStreamState[Any] = ResponseStreamState(input_tools=omit, text_format=omit)
    final: Any = None
    for raw in events:
        typed = construct_type(type_=ResponseStreamEvent, value=raw)
        for out in state.handle_event(typed):  # type: ignore[arg-type]
            if out.type in ("response.completed", "response.incomplete"):
                final = out.response
    assert final is not None
    text = "".join(
        part.text
        for item in final.output
        if item.type == "message"
        for part in item.content
        if part.type == "output_text"
    )
    reasoning_items = [item for item in final.output if item.type == "reasoning"]
    usage = final.usage
    return {
        "text": text,
        "reasoning": "".join(part.text for item in reasoning_items for part in item.summary),
        "reasoning_encrypted": any(item.encrypted_content for item in reasoning_items),
        "tool_calls": [
            (item.call_id, item.name, parse_arguments(item.arguments))
            for item in final.output
            if item.type == "function_call"
        ],
        "status": final.status,
        "incomplete_reason": (
            final.incomplete_details.reason if final.incomplete_details is not None else None
        ),
        "usage": usage.to_dict() if usage is not None else None,
    }


def our_result(pieces: list[bytes]) -> tuple[dict[str, Any], list[ModelEvent]]:
    decoder = ResponsesDecoder()
    events = [event for piece in pieces for event in decoder.feed(piece)]
    events += decoder.flush()
    assert decoder.done
    message = decoder.close()
    return {
        "text": message.text,
        "reasoning": message.reasoning,
        "reasoning_encrypted": bool(message.reasoning_items),
        "tool_calls": [(call.id, call.name, call.arguments) for call in message.tool_calls],
        "status": decoder.status,
        "incomplete_reason": decoder.incomplete_reason,
        "usage": dict(message.usage.raw) if message.usage is not None else None,
    }, events


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_random_streams_match_the_openai_sdk(data: st.DataObject) -> None:
    events = data.draw(streams())
    ours, deltas = our_result(data.draw(wire(events)))
    assert ours == sdk_result(events)

    # ...and the streamed deltas add up to the same reply.
    assert "".join(e.text for e in deltas if isinstance(e, TextDelta)) == ours["text"]
    assert "".join(e.text for e in deltas if isinstance(e, ReasoningDelta)) == ours["reasoning"]
    for position, (call_id, name, arguments) in enumerate(ours["tool_calls"]):
        mine = [e for e in deltas if isinstance(e, ToolCallDelta) and e.index == position]
        assert (mine[0].id, mine[0].name) == (call_id, name)
        assert parse_arguments("".join(e.arguments for e in mine)) == arguments


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_parsed_events_give_the_same_result_as_bytes(data: st.DataObject) -> None:
    events = data.draw(streams())
    decoder = ResponsesDecoder()
    for event in events:
        decoder.feed_event(event)
    from_events = decoder.close()
    from_bytes = ResponsesDecoder()
    for piece in data.draw(wire(events)):
        from_bytes.feed(piece)
    assert from_bytes.close() == from_events
