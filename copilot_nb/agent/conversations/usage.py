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

TOKEN_KINDS = ("input", "output", "cached", "reasoning")


def tokens_of(usage: Usage) -> dict[str, int]:
    """Input, output, cached input and reasoning tokens of one model reply, as reported."""
    raw = usage.raw or {}
    cached = _first(
        raw,
        ("prompt_tokens_details", "cached_tokens"),  # Chat Completions
        ("input_tokens_details", "cached_tokens"),  # Responses
        ("cache_read_input_tokens",),  # Messages
    )
    reasoning = _first(
        raw,
        ("completion_tokens_details", "reasoning_tokens"),
        ("output_tokens_details", "reasoning_tokens"),
    )
    return {
        "input": usage.input_tokens,
        "output": usage.output_tokens,
        "cached": cached,
        "reasoning": reasoning,
    }


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

    Cached input tokens are charged at the `cached` price when one is given, else as input."""
    entry = prices.get(model)
    if entry is None and "/" in model:
        entry = prices.get(model.split("/", 1)[1])
    if not isinstance(entry, Mapping):
        return None
    per_input = float(entry.get("input", 0.0))
    cached = int(tokens.get("cached", 0))
    per_cached = float(entry.get("cached", per_input))
    fresh = int(tokens.get("input", 0)) - cached
    dollars = (
        fresh * per_input
        + cached * per_cached
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
