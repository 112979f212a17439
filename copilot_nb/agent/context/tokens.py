"""Token counts without a tokenizer: a fast estimate that errs high, corrected by what providers report.

Real tokenizers need vocabularies (`tiktoken` downloads its own at first use, which fails offline)
and every provider's differs. So the estimate works on the shapes BPE tokenizers share: a word
piece per token, digits in threes, a token per punctuation mark or CJK character. Checked against
o200k, cl100k and Anthropic's legacy (published) Claude tokenizer on ~600 KB of code, prose, JSON, CSS,
CSV, URLs and UUIDs, it lies between 2% below and 46% above the largest of the three counts; for
Russian, German, emoji and base64 it is up to 18% below Claude's (and above o200k's). Random
letter soup (no words at all) is the one case it under-counts badly, by about half. After each
reply the provider's own count calibrates it (`Calibration`).
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...messages import AssistantMessage, Message, ToolResult, ToolSpec, Usage, UserMessage

MESSAGE_OVERHEAD = 4
"""Role and separator tokens every message costs (OpenAI documents 3-4)."""
TOOL_CALL_OVERHEAD = 8
REQUEST_OVERHEAD = 3
TOOLS_OVERHEAD = 400
"""What a provider adds when tools are offered (Anthropic documents ~350 system-prompt tokens)."""
IMAGE_TOKENS = 1_000
"""What one image costs, whatever its base64 length: providers count pixels, not bytes
(Anthropic about width × height / 750, ~1,600 at most; OpenAI 85-1,100 for a plot-sized image)."""

_PIECE = re.compile(
    r" ?(?:[A-Z]?[a-z]+|[A-Z]+(?![a-z]))"  # a word piece (camelCase split) with its leading space
    r"|[0-9]{1,3}"  # digits, in threes as o200k/cl100k split them
    r"|\s+"
    r"|([^\sA-Za-z0-9\x80-\U0010ffff])\1*"  # a run of one punctuation mark
    r"|[\x80-\U0010ffff]"
)


def estimate_tokens(text: str) -> int:
    """Tokens `text` costs, estimated from its shape; errs high for everything but letter soup."""
    total = 0.0
    for match in _PIECE.finditer(text):
        piece = match.group()
        first = piece[0]
        if first == " " and len(piece) > 1 and piece[1].isascii() and piece[1].isalpha():
            piece, first = piece[1:], piece[1]
        size = len(piece)
        if first.isascii() and first.isalpha():
            # short words are one token; long runs are rarely words and split every few letters
            total += 1 if size <= 6 else 2 if size <= 12 else 2 + (size - 12) / 2.5
        elif first.isascii() and first.isdigit():
            total += 1.3
        elif first.isspace():
            total += 0 if piece == " " else 1 + (size - 1) // 16
        elif first.isascii():
            total += 1 + (size - 1) // 8
        else:
            code = ord(first)
            total += 0.5 if code < 0x800 else 1.0 if code < 0x10000 else 2.5
    return math.ceil(total)


def message_tokens(message: Message) -> int:
    """What one message costs in a request: its text, tool calls and framing."""
    if isinstance(message, AssistantMessage):
        total = MESSAGE_OVERHEAD + estimate_tokens(message.text)
        if message.reasoning_signature:  # signed reasoning (Anthropic) is sent back
            total += estimate_tokens(message.reasoning)
        for item in message.reasoning_items:  # encrypted reasoning (Responses) is sent back
            total += reasoning_item_tokens(item)
        for call in message.tool_calls:
            arguments = call.raw_arguments or json.dumps(call.arguments)
            total += TOOL_CALL_OVERHEAD + estimate_tokens(f"{call.id} {call.name} {arguments}")
        return total
    if isinstance(message, ToolResult):
        text = estimate_tokens(f"{message.tool_call_id} {message.content}")
        return MESSAGE_OVERHEAD + text + IMAGE_TOKENS * len(message.images)
    images = len(message.images) if isinstance(message, UserMessage) else 0  # a proxy client's
    return MESSAGE_OVERHEAD + estimate_tokens(message.content) + IMAGE_TOKENS * images


def reasoning_item_tokens(item: Mapping[str, Any]) -> int:
    """An encrypted reasoning item sent back: the server decrypts it and counts the reasoning as
    input. Base64 holds 3 bytes in 4 characters and text runs about 4 bytes a token, so the
    ciphertext's length × 3/16 estimates it; reported usage calibrates the rest."""
    encrypted = item.get("encrypted_content") or ""
    summary = " ".join(
        str(part.get("text", "")) for part in item.get("summary") or () if isinstance(part, Mapping)
    )
    return len(str(encrypted)) * 3 // 16 + estimate_tokens(summary)


def tools_tokens(tools: Sequence[ToolSpec]) -> int:
    """What offering these tools costs, estimated on their JSON (providers' own forms are terser)."""
    if not tools:
        return 0
    specs = [
        {"name": t.name, "description": t.description, "parameters": dict(t.parameters)}
        for t in tools
    ]
    return TOOLS_OVERHEAD + _json_tokens(json.dumps(specs, separators=(",", ":")))


@functools.lru_cache(maxsize=16)
def _json_tokens(text: str) -> int:
    """`estimate_tokens` of a tool list's JSON, remembered: every round of a turn offers the same
    tools, and estimating some 20 KB of schemas took milliseconds of the loop twice a round."""
    return estimate_tokens(text)


def request_tokens(messages: Sequence[Message], tools: Sequence[ToolSpec] = ()) -> int:
    """The estimated size of a whole request, before calibration."""
    return request_size((message_tokens(m) for m in messages), tools_tokens(tools))


def request_size(message_costs: Iterable[int], tools_cost: int) -> int:
    """A request's size from its parts: the fixed overhead, the tool list and every message."""
    return REQUEST_OVERHEAD + tools_cost + sum(message_costs)


def prompt_tokens(usage: Usage) -> int:
    """The request's true size from a usage report; Anthropic counts cached input apart."""
    raw: Mapping[str, Any] = usage.raw or {}
    cached = 0
    for key in ("cache_read_input_tokens", "cache_creation_input_tokens"):
        value = raw.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            cached += value
    return usage.input_tokens + cached


class Calibration:
    """The ratio of the provider's token counts to our estimates, learnt from usage reports.

    A report far from the estimate (a server that does not count, a fake one) says nothing about
    the tokenizer and is ignored. The ratio is bounded below, so text unlike what was measured
    (a hex dump after prose) is still not under-counted much.
    """

    TRUSTED = (0.25, 4.0)
    """Reports whose ratio to the estimate lies outside this range are ignored."""
    BOUNDS = (0.7, 2.5)
    """The range the ratio is held in."""

    def __init__(self) -> None:
        self.ratio = 1.0
        self.reports = 0
        """How many usage reports were trusted."""
        self.ignored = 0

    def observe(self, estimated: int, actual: int) -> bool:
        """Learn from one request: `estimated` by us, `actual` by the provider; False if ignored."""
        if estimated <= 0 or actual <= 0:
            self.ignored += 1
            return False
        raw = actual / estimated
        if not self.TRUSTED[0] <= raw <= self.TRUSTED[1]:
            self.ignored += 1
            return False
        self.ratio = min(max(raw, self.BOUNDS[0]), self.BOUNDS[1])
        self.reports += 1
        return True

    def scale(self, estimated: int) -> int:
        return math.ceil(estimated * self.ratio)
