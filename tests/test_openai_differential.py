"""Random Chat Completions streams decode exactly as the official openai SDK accumulates them.

Hypothesis builds a stream (unicode text, optional reasoning, 0-3 parallel tool calls whose
arguments are cut at random points and may interleave, optional usage-only last chunk), writes it
as SSE bytes and cuts those at random points. Our decoder reads the bytes; openai-python's
`ChatCompletionStreamState` reads the same chunks as `ChatCompletionChunk`s; the results must agree.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from openai.lib.streaming.chat import ChatCompletionStreamState
from openai.types.chat import ChatCompletionChunk

from copilot_nb.events import ModelEvent, ReasoningDelta, TextDelta, ToolCallDelta
from copilot_nb.messages import parse_arguments
from copilot_nb.models.openai.chat_stream import ChatCompletionsDecoder
from tests.wire_samples import _emoji_text, _json_value, _name, _pieces


@st.composite
def streams(draw: st.DrawFn) -> list[dict[str, Any]]:
    """A list of Chat Completions chunks for one choice."""
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    if draw(st.booleans()):
        deltas += [{"reasoning_content": p} for p in _pieces(draw, draw(_emoji_text))]
    deltas += [{"content": p} for p in _pieces(draw, draw(_emoji_text)) if p]

    # Tool calls: each starts (id, name, arguments "") in order; argument pieces then interleave.
    n_calls = draw(st.integers(0, 3))
    queues: list[list[dict[str, Any]]] = []
    for index in range(n_calls):
        arguments = json.dumps(
            draw(st.dictionaries(_name, _json_value, max_size=3)),
            ensure_ascii=draw(st.booleans()),
        )
        head = {
            "index": index,
            "id": f"call_{index}_{draw(_name)}",
            "type": "function",
            "function": {"name": draw(_name), "arguments": ""},
        }
        pieces = [{"index": index, "function": {"arguments": p}} for p in _pieces(draw, arguments)]
        queues.append([head, *pieces])
    started = 0
    fragments: list[dict[str, Any]] = []
    while any(queues):
        ready = [i for i in range(started) if queues[i]]
        if started < n_calls:
            ready.append(started)
        pick = draw(st.sampled_from(ready))
        if pick == started:
            started += 1
        fragments.append(queues[pick].pop(0))
    while fragments:  # one or two fragments per chunk, as servers do
        take = draw(st.integers(1, 2))
        deltas.append({"tool_calls": fragments[:take]})
        fragments = fragments[take:]

    choices = [{"index": 0, "delta": delta, "finish_reason": None} for delta in deltas]
    finish = "tool_calls" if n_calls else draw(st.sampled_from(["stop", "length"]))
    choices.append({"index": 0, "delta": {}, "finish_reason": finish})
    chunks: list[dict[str, Any]] = [
        {
            "id": "chatcmpl-1",
            "object": "chat.completion.chunk",
            "created": 1,
            "model": "gpt-test",
            "choices": [choice],
        }
        for choice in choices
    ]
    usage = {"prompt_tokens": draw(st.integers(0, 10**6)), "completion_tokens": len(chunks)}
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    where = draw(st.sampled_from(["none", "own_chunk", "finish_chunk"]))
    if where == "own_chunk":  # stream_options.include_usage
        chunks.append({**chunks[0], "choices": [], "usage": usage})
    elif where == "finish_chunk":
        chunks[-1]["usage"] = usage
    return chunks


@st.composite
def wire(draw: st.DrawFn, chunks: list[dict[str, Any]]) -> list[bytes]:
    """The chunks as SSE bytes, cut into network reads at random byte offsets."""
    end = draw(st.sampled_from(["\n", "\r\n"]))
    body = (
        "".join(f"data: {json.dumps(chunk, ensure_ascii=False)}{end}{end}" for chunk in chunks)
        + f"data: [DONE]{end}{end}"
    )
    data = body.encode()
    cuts = sorted(draw(st.lists(st.integers(0, len(data)), max_size=30)))
    return [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True)]


def sdk_result(chunks: list[dict[str, Any]]) -> dict[str, Any]:
    state: ChatCompletionStreamState[Any] = ChatCompletionStreamState()
    for chunk in chunks:
        state.handle_chunk(ChatCompletionChunk.model_validate(chunk))
    completion = state.current_completion_snapshot  # get_final_completion() refuses "length"
    message = completion.choices[0].message
    usage = completion.usage
    return {
        "text": message.content or "",
        "reasoning": message.to_dict().get("reasoning_content") or "",
        "tool_calls": [
            (call.id, call.function.name, parse_arguments(call.function.arguments))
            for call in message.tool_calls or []
        ],
        "finish_reason": completion.choices[0].finish_reason,
        "usage": usage.to_dict() if usage is not None else None,
    }


def our_result(pieces: list[bytes]) -> tuple[dict[str, Any], list[ModelEvent]]:
    decoder = ChatCompletionsDecoder()
    events = [event for piece in pieces for event in decoder.feed(piece)]
    assert decoder.done
    message = decoder.close()
    result = {
        "text": message.text,
        "reasoning": message.reasoning,
        "tool_calls": [(call.id, call.name, call.arguments) for call in message.tool_calls],
        "finish_reason": message.finish_reason,
        "usage": dict(message.usage.raw) if message.usage is not None else None,
    }
    return result, events


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_random_streams_match_the_openai_sdk(data: st.DataObject) -> None:
    chunks = data.draw(streams())
    pieces = data.draw(wire(chunks))
    ours, events = our_result(pieces)
    assert ours == sdk_result(chunks)

    # ...and the streamed deltas add up to the same reply.
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == ours["text"]
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == ours["reasoning"]
    for position, (call_id, name, arguments) in enumerate(ours["tool_calls"]):
        mine = [e for e in events if isinstance(e, ToolCallDelta) and e.index == position]
        assert (mine[0].id, mine[0].name) == (call_id, name)
        assert parse_arguments("".join(e.arguments for e in mine)) == arguments


@settings(max_examples=50, deadline=None)
@given(st.data())
def test_parsed_chunks_give_the_same_result_as_bytes(data: st.DataObject) -> None:
    chunks = data.draw(streams())
    decoder = ChatCompletionsDecoder()
    for chunk in chunks:
        decoder.feed_chunk(chunk)
    from_chunks = decoder.close()
    from_bytes = ChatCompletionsDecoder()
    for piece in data.draw(wire(chunks)):
        from_bytes.feed(piece)
    assert from_bytes.close() == from_chunks
