"""Every recorded Responses API stream in the corpus decodes to its expected result, however split.

The rules are tests/data/conformance/responses/README.md's: compare text, tool calls, reasoning,
encrypted reasoning, status, incomplete reason, usage and error presence. The two GitHub Copilot
streams (ids rotated on every event) follow the README's override: items are matched by
`output_index`, and the final output is `response.completed`'s.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from copilot_nb.errors import StreamError
from copilot_nb.events import ModelEvent, ReasoningDelta, TextDelta, ToolCallDelta
from copilot_nb.messages import AssistantMessage
from copilot_nb.models.openai.responses_stream import ResponsesDecoder
from tests.stream_splits import SPLITS, feed_all

CORPUS = Path(__file__).parent / "data" / "conformance" / "responses"
CASES = sorted(CORPUS.glob("*.sse"))


def _recorded(path: Path) -> Callable[[bytes], list[bytes]] | None:
    lengths = json.loads(path.with_suffix(".expected.json").read_text()).get("chunk_lengths")
    if not lengths:
        return None

    def split(data: bytes) -> list[bytes]:
        assert sum(lengths) == len(data)
        starts = [sum(lengths[:i]) for i in range(len(lengths))]
        return [data[a : a + n] for a, n in zip(starts, lengths, strict=True)]

    return split


RECORDED = [path for path in CASES if _recorded(path) is not None]


def decode(
    pieces: list[bytes],
) -> tuple[ResponsesDecoder, AssistantMessage, list[ModelEvent], StreamError | None]:
    decoder = ResponsesDecoder()
    events, error = feed_all(decoder, pieces)
    return decoder, decoder.close(), events, error  # after an error: what arrived before it


def summary(decoder: ResponsesDecoder, message: AssistantMessage) -> dict[str, Any]:
    return {
        "text": message.text,
        "tool_calls": [
            {"call_id": call.id, "name": call.name, "arguments": call.arguments}
            for call in message.tool_calls
        ],
        "reasoning": message.reasoning,
        "reasoning_encrypted": bool(message.reasoning_items),
        "status": decoder.status,
        "incomplete_reason": decoder.incomplete_reason,
        "usage": dict(message.usage.raw) if message.usage is not None else None,
    }


def expected_summary(expected: dict[str, Any]) -> dict[str, Any]:
    return {
        "text": expected["text"],
        "tool_calls": [
            {key: call[key] for key in ("call_id", "name", "arguments")}
            for call in expected["tool_calls"]
        ],
        # Raw chain of thought (`reasoning_text`) is reasoning too: we show it like a summary.
        "reasoning": expected["reasoning"] + expected.get("reasoning_text", ""),
        "reasoning_encrypted": expected["reasoning_encrypted"],
        "status": expected["status"],
        "incomplete_reason": expected["incomplete_reason"],
        "usage": expected["usage"],
    }


def test_the_corpus_has_the_responses_streams() -> None:
    assert len(CASES) == 17
    assert len(RECORDED) >= 1


def check(path: Path, pieces: list[bytes]) -> None:
    expected = json.loads(path.with_suffix(".expected.json").read_text())
    decoder, message, events, error = decode(pieces)

    assert summary(decoder, message) == expected_summary(expected)
    assert message.refusal == (expected["refusal"] or "")
    if expected.get("error"):
        assert error is not None
        assert decoder.error == expected["error"]["body"]
        assert str(error) == expected["error"]["message"]
        assert message.finish_reason is None  # the reply was cut short: nothing to act on
    else:
        assert error is None and decoder.error is None
        assert decoder.done
        finish = "tool_calls" if expected["tool_calls"] else "stop"
        assert message.finish_reason == (expected["incomplete_reason"] or finish)

    # The deltas tell the same story as the final message.
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == message.text
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    assert reasoning == message.reasoning
    tool_deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert [e.index for e in tool_deltas if e.id is not None] == list(
        range(len(expected["tool_calls"]))
    )
    for position, call in enumerate(message.tool_calls):
        mine = [e for e in tool_deltas if e.index == position]
        assert "".join(e.id or "" for e in mine) == call.id
        assert "".join(e.name or "" for e in mine) == call.name
        assert "".join(e.arguments for e in mine) == call.raw_arguments


@pytest.mark.parametrize("split", list(SPLITS))
@pytest.mark.parametrize("path", CASES, ids=[path.stem for path in CASES])
def test_stream_decodes_to_expected_result(path: Path, split: str) -> None:
    check(path, SPLITS[split](path.read_bytes()))


@pytest.mark.parametrize("path", RECORDED, ids=[path.stem for path in RECORDED])
def test_stream_decodes_in_its_recorded_network_reads(path: Path) -> None:
    split = _recorded(path)
    assert split is not None
    check(path, split(path.read_bytes()))
