"""What a turn used, summed per conversation and per day, and priced where the user set a price.

Pure: token counts are read from each provider's usage object (Chat Completions, Responses,
Messages), and money comes only from the user's own price table; with no price for a model the
sum says so, never a guess.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ...messages import Usage

TOKEN_KINDS = ("input", "output", "cached", "cache_write", "reasoning")
"""`input` is the whole prompt, `cached` the part of it read from the provider's cache and
`cache_write` the part written to it (Anthropic bills writes apart); the rest was fresh."""


def tokens_of(usage: Usage) -> dict[str, int]:
    """Input, output, cached input and reasoning tokens of one model reply, as reported.

    Each wire counts the prompt its own way: Chat Completions (and Copilot) and Responses
    count cached tokens inside the input; Messages counts them beside it
    (`cache_read_input_tokens`, `cache_creation_input_tokens`), so they are added back here
    and `input` always means the whole prompt."""
    raw = usage.raw or {}
    cached = _first(
        raw,
        ("prompt_tokens_details", "cached_tokens"),  # Chat Completions, Copilot
        ("input_tokens_details", "cached_tokens"),  # Responses
        ("cache_read_input_tokens",),  # Messages
    )
    written = _first(raw, ("cache_creation_input_tokens",))
    prompt = usage.input_tokens
    if "cache_read_input_tokens" in raw or "cache_creation_input_tokens" in raw:
        prompt += _first(raw, ("cache_read_input_tokens",)) + written
    reasoning = _first(
        raw,
        ("completion_tokens_details", "reasoning_tokens"),
        ("output_tokens_details", "reasoning_tokens"),
    )
    return {
        "input": prompt,
        "output": usage.output_tokens,
        "cached": cached,
        "cache_write": written,
        "reasoning": reasoning,
    }


def tokens_line(tokens: Mapping[str, int], dollars: float | None = None) -> str:
    """`tokens: 12,345 in (10,240 cached) · 300 out · $0.0123`: a turn's footer."""
    cached = int(tokens.get("cached", 0))
    shown = f"tokens: {int(tokens.get('input', 0)):,} in"
    shown += f" ({cached:,} cached)" if cached else ""
    shown += f" · {int(tokens.get('output', 0)):,} out"
    return shown + (f" · ${dollars:,.4f}" if dollars is not None else "")


def add(total: Mapping[str, int], more: Mapping[str, int]) -> dict[str, int]:
    return {kind: int(total.get(kind, 0)) + int(more.get(kind, 0)) for kind in TOKEN_KINDS}


@dataclass(frozen=True, kw_only=True)
class UsageRow:
    """One line of `%copilot usage`: a conversation or a day."""

    key: str
    turns: int
    tokens: Mapping[str, int]
    premium: float
    cost: float | None
    """Dollars, when every model used has a price; None when one has none."""
    unpriced: tuple[str, ...] = ()
    estimated: bool = False
    """Some turn's server sent no usage: its tokens are our estimate, not the provider's."""


def price_of(model: str, tokens: Mapping[str, int], prices: Mapping[str, Any]) -> float | None:
    """Dollars for these tokens at the user's price for `model` (per million tokens), or None.

    Cached input tokens are charged at the `cached` price when one is given, else as input;
    tokens written to a cache at the `cache_write` price, else as input."""
    entry = prices.get(model)
    if entry is None and "/" in model:
        entry = prices.get(model.split("/", 1)[1])
    if not isinstance(entry, Mapping):
        return None
    per_input = float(entry.get("input", 0.0))
    cached = int(tokens.get("cached", 0))
    per_cached = float(entry.get("cached", per_input))
    written = int(tokens.get("cache_write", 0))
    per_written = float(entry.get("cache_write", per_input))
    fresh = int(tokens.get("input", 0)) - cached - written
    dollars = (
        fresh * per_input
        + cached * per_cached
        + written * per_written
        + int(tokens.get("output", 0)) * float(entry.get("output", 0.0))
    )
    return dollars / 1_000_000


def rows(
    turns: Iterable[Mapping[str, Any]], *, by: str, prices: Mapping[str, Any]
) -> list[UsageRow]:
    """Turn records summed by conversation (`by="conversation"`) or by day (`by="day"`)."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for turn in turns:
        key = (
            str(turn.get("conversation", ""))
            if by == "conversation"
            else str(turn.get("at", ""))[:10]
        )
        groups.setdefault(key, []).append(turn)
    out = []
    for key, group in groups.items():
        tokens: dict[str, int] = {}
        cost: float | None = 0.0
        unpriced: list[str] = []
        for turn in group:
            counted = turn.get("tokens") or {}
            tokens = add(tokens, counted)
            model = str(turn.get("model", ""))
            dollars = price_of(model, counted, prices)
            if dollars is None:
                if model not in unpriced:
                    unpriced.append(model)
            elif cost is not None:
                cost += dollars
        out.append(
            UsageRow(
                key=key,
                turns=len(group),
                tokens=tokens,
                premium=sum(float(t.get("premium") or 0.0) for t in group),
                cost=None if unpriced else cost,
                unpriced=tuple(unpriced),
                estimated=any(turn.get("estimated") for turn in group),
            )
        )
    return out


def _first(raw: Mapping[str, Any], *paths: tuple[str, ...]) -> int:
    for path in paths:
        value: Any = raw
        for key in path:
            value = value.get(key) if isinstance(value, Mapping) else None
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return 0
