"""Token estimates with no tokenizer download: never far below real tokenizers, calibrated by
the usage providers report."""

from __future__ import annotations

import base64
import json

import pytest

from copilot_nb.agent.context.tokens import (
    TOOLS_OVERHEAD,
    Calibration,
    estimate_tokens,
    message_tokens,
    prompt_tokens,
    request_tokens,
    tools_tokens,
)
from copilot_nb.messages import AssistantMessage, ToolResult, ToolSpec, Usage, UserMessage
from copilot_nb.testing import call
from tests.text_samples import PROSE, PYTHON, digests, numbered

# --- the estimate against real tokenizers ------------------------------------------------------

SAMPLES = {
    "python": PYTHON,
    "prose": PROSE,
    "numbered": numbered(PYTHON),
    "json": json.dumps(
        {
            "cells": [
                {"id": f"c{i}", "source": f"x = {i} * 2", "outputs": [], "n": i} for i in range(30)
            ]
        }
    ),
    "csv": "\n".join(",".join(str(b) for b in d[:8]) for d in digests(40)),
    "hex": "\n".join(d.hex() for d in digests(40)),
    "base64": base64.b64encode(b"".join(digests(40))).decode(),
    "chinese": "我们正在估算令牌的数量，以确保上下文不会超过模型的窗口。" * 12,
    "russian": "Мы оцениваем количество токенов, чтобы контекст не превышал окно модели. " * 8,
}
REFERENCE = {
    # (o200k_base, cl100k_base, Anthropic's legacy published Claude tokenizer), counted once
    "python": (163, 163, 180),
    "prose": (270, 270, 282),
    "numbered": (215, 215, 227),
    "json": (874, 874, 784),
    "csv": (639, 639, 639),
    "hex": (1507, 1502, 1538),
    "base64": (1156, 1220, 1196),
    "chinese": (216, 348, 288),
    "russian": (145, 225, 281),
}


@pytest.mark.parametrize("name", SAMPLES)
def test_the_estimate_is_never_far_below_what_real_tokenizers_count(name):
    real = max(REFERENCE[name])
    estimate = estimate_tokens(SAMPLES[name])
    assert estimate >= 0.8 * real, (estimate, real)
    if name in ("python", "prose", "numbered", "json", "csv", "hex"):
        assert estimate >= real, (estimate, real)  # what a coding agent mostly reads: never under
    assert estimate <= 1.5 * real, (estimate, real)


def test_the_estimate_of_nothing_is_nothing_and_more_text_costs_more():
    assert estimate_tokens("") == 0
    assert estimate_tokens("hello") == 1
    assert estimate_tokens(PYTHON * 2) >= 2 * estimate_tokens(PYTHON) - 1


def test_messages_cost_their_framing_their_tool_calls_and_signed_reasoning():
    text = AssistantMessage(text="Reading it.")
    calling = AssistantMessage(text="Reading it.", tool_calls=(call("read_file", path="a.py"),))
    assert message_tokens(calling) > message_tokens(text) + 8
    unsigned = AssistantMessage(text="x", reasoning="long thought " * 50)
    signed = AssistantMessage(text="x", reasoning="long thought " * 50, reasoning_signature="s")
    assert message_tokens(unsigned) == message_tokens(AssistantMessage(text="x"))
    assert message_tokens(signed) > message_tokens(unsigned) + 50
    result = ToolResult(tool_call_id="call_1", name="read_file", content="print(1)")
    assert message_tokens(result) > estimate_tokens("print(1)")


def test_tools_cost_their_schema_plus_what_providers_add():
    spec = ToolSpec(name="read_file", description="Read a file.", parameters={"type": "object"})
    assert tools_tokens([]) == 0
    assert tools_tokens([spec]) > TOOLS_OVERHEAD
    assert request_tokens([UserMessage(content="hi")], [spec]) > tools_tokens([spec])


# --- calibration ---------------------------------------------------------------------------------


def test_calibration_learns_the_ratio_and_ignores_reports_that_cannot_be_true():
    calibration = Calibration()
    assert calibration.scale(1000) == 1000
    assert calibration.observe(1000, 1300)
    assert calibration.ratio == pytest.approx(1.3) and calibration.scale(1000) == 1300
    assert not calibration.observe(1000, 10)  # a server that does not count (or a fake one)
    assert not calibration.observe(0, 500) and not calibration.observe(1000, 0)
    assert calibration.ratio == pytest.approx(1.3)
    assert calibration.observe(1000, 500)  # held at the floor: new text may be denser
    assert calibration.ratio == Calibration.BOUNDS[0]
    assert (calibration.reports, calibration.ignored) == (2, 3)


def test_anthropic_cached_input_counts_towards_the_request_size():
    raw = {"input_tokens": 20, "cache_read_input_tokens": 3000, "cache_creation_input_tokens": 5}
    assert prompt_tokens(Usage(input_tokens=20, raw=raw)) == 3025
    assert prompt_tokens(Usage(input_tokens=900, raw={"prompt_tokens": 900})) == 900


def test_encrypted_reasoning_sent_back_is_counted():
    item = {"type": "reasoning", "encrypted_content": "A" * 16_000, "summary": []}
    plain = AssistantMessage(text="done")
    carried = AssistantMessage(text="done", reasoning_items=(item,))
    assert message_tokens(carried) - message_tokens(plain) == 3_000
