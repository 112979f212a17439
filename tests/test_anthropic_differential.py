"""Our Anthropic decoder agrees with the official SDK on generated streams, however chunked.

Each example builds a Messages stream (thinking with a signature, text with multi-byte characters,
up to three tool_use blocks whose input JSON is split at random), cuts its bytes into random
network reads, and feeds them both to `MessagesStreamDecoder` and to the `anthropic` SDK's own
client (over a mock transport of `httpx2`, the SDK's HTTP library) with `accumulate_event`
building the SDK's snapshot.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import anthropic
import httpx2
from anthropic.lib.streaming._messages import accumulate_event
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from copilot_nb.events import ReasoningDelta, TextDelta, ToolCallDelta
from copilot_nb.models.anthropic.stream import MessagesStreamDecoder
from copilot_nb.testing.anthropic_wire import anthropic_sse_event, content_block_events

TEXT = st.text(alphabet=st.characters(exclude_categories=("Cs",)), min_size=1, max_size=12)
JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**12), 10**12)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
STOP_REASONS = st.sampled_from(
    ["end_turn", "tool_use", "max_tokens", "stop_sequence", "pause_turn"]
)


def _split(text: str, cuts: list[int]) -> list[str]:
    points = sorted({c % (len(text) + 1) for c in cuts} | {0, len(text)})
    return [text[a:b] for a, b in itertools.pairwise(points)]


@st.composite
def tool_block(draw: st.DrawFn, n: int) -> dict[str, Any]:
    arguments = draw(st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=4))
    if not arguments and draw(st.booleans()):
        pieces = [""]  # a tool without arguments: only an empty partial_json
    else:
        raw = json.dumps(arguments, ensure_ascii=draw(st.booleans()))
        pieces = ["", *_split(raw, draw(st.lists(st.integers(0, 10_000), max_size=8)))]
    return {"kind": "tool_use", "id": f"toolu_{n:02d}", "name": f"tool_{n}", "pieces": pieces}


def _start_and_deltas(block: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A drawn block as the wire's `content_block_start` block and its deltas."""
    if block["kind"] == "thinking":
        start: dict[str, Any] = {"type": "thinking", "thinking": "", "signature": ""}
        deltas = [{"type": "thinking_delta", "thinking": p} for p in block["pieces"]]
        deltas.append({"type": "signature_delta", "signature": block["sig"]})
    elif block["kind"] == "text":
        start = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": p} for p in block["pieces"]]
    else:
        start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        deltas = [{"type": "input_json_delta", "partial_json": p} for p in block["pieces"]]
    return start, deltas


@st.composite
def usages(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    """The usage of `message_start` (maybe with cache counts) and of `message_delta`."""
    start = {"input_tokens": draw(st.integers(0, 10**6)), "output_tokens": 1}
    if draw(st.booleans()):
        start |= {
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": draw(st.integers(0, 99)),
        }
    delta: dict[str, Any] = {"output_tokens": draw(st.integers(1, 10**5))}
    if draw(st.booleans()):
        delta["input_tokens"] = draw(st.integers(0, 10**6))
    return start, delta


@st.composite
def anthropic_stream(draw: st.DrawFn) -> tuple[list[bytes], dict[str, Any]]:
    """The events of one stream as SSE bytes, and the message facts they describe."""
    blocks: list[dict[str, Any]] = []
    if draw(st.booleans()):
        signature = draw(st.text("ABCDEFabcdef0123456789+/=", min_size=8, max_size=80))
        blocks.append(
            {"kind": "thinking", "pieces": draw(st.lists(TEXT, max_size=4)), "sig": signature}
        )
    body = [
        {"kind": "text", "pieces": draw(st.lists(TEXT, max_size=5))}
        for _ in range(draw(st.integers(0, 2)))
    ]
    body += [draw(tool_block(n)) for n in range(draw(st.integers(0, 3)))]
    blocks += draw(st.permutations(body))
    usage_start, usage_delta = draw(usages())

    events = [
        anthropic_sse_event(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-test",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": usage_start,
                },
            },
        )
    ]
    for index, block in enumerate(blocks):
        block_events = content_block_events(index, *_start_and_deltas(block))
        if draw(st.booleans()):
            block_events.insert(1, anthropic_sse_event("ping", {"type": "ping"}))
        events += block_events
    stop_reason = draw(STOP_REASONS)
    events.append(
        anthropic_sse_event(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": usage_delta,
            },
        )
    )
    events.append(anthropic_sse_event("message_stop", {"type": "message_stop"}))

    data = b"".join(events)
    cuts = sorted(set(draw(st.lists(st.integers(1, max(1, len(data) - 1)), max_size=40))))
    chunks = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)], strict=True) if data[a:b]]
    return chunks, {"blocks": blocks}


def sdk_snapshot(chunks: list[bytes]) -> Any:
    """What the official SDK accumulates from these network reads."""

    def handler(request: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            200, headers={"content-type": "text/event-stream"}, content=iter(chunks)
        )

    client = anthropic.Anthropic(
        api_key="test",
        base_url="http://sdk.test",
        http_client=httpx2.Client(transport=httpx2.MockTransport(handler)),
    )
    snapshot = None
    json_bufs: dict[int, bytes] = {}
    with client.messages.create(
        model="claude-test",
        max_tokens=10,
        messages=[{"role": "user", "content": "hi"}],
        stream=True,
    ) as stream:
        for event in stream:
            snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=json_bufs)
    return snapshot


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(anthropic_stream())
def test_decoder_matches_the_official_sdk(stream: tuple[list[bytes], dict[str, Any]]) -> None:
    chunks, _ = stream
    decoder = MessagesStreamDecoder()
    events = [event for chunk in chunks for event in decoder.feed(chunk)]
    ours = decoder.close()
    sdk = sdk_snapshot(chunks)

    assert ours.text == "".join(b.text for b in sdk.content if b.type == "text")
    assert [(c.id, c.name, c.arguments) for c in ours.tool_calls] == [
        (b.id, b.name, b.input) for b in sdk.content if b.type == "tool_use"
    ]
    thinking = [b for b in sdk.content if b.type == "thinking"]
    assert ours.reasoning == "".join(b.thinking for b in thinking)
    assert ours.reasoning_signature == (thinking[-1].signature if thinking else None)
    assert ours.finish_reason == sdk.stop_reason
    assert ours.usage is not None
    assert ours.usage.input_tokens == sdk.usage.input_tokens
    assert ours.usage.output_tokens == sdk.usage.output_tokens
    for key in ("cache_creation_input_tokens", "cache_read_input_tokens"):
        assert ours.usage.raw.get(key) == getattr(sdk.usage, key)
    assert decoder.done

    # The streamed deltas add up to the final message.
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == ours.text
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == ours.reasoning
    for position, call in enumerate(ours.tool_calls):
        pieces = [e for e in events if isinstance(e, ToolCallDelta) and e.index == position]
        assert (pieces[0].id, pieces[0].name) == (call.id, call.name)
        streamed = "".join(e.arguments for e in pieces)
        assert (json.loads(streamed) if streamed else {}) == call.arguments
