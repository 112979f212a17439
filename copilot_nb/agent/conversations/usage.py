"""What a turn used, summed per conversation and per day, and priced where the user set a price.

Pure: token counts are read from each provider's usage object (Chat Completions, Responses,
Messages), and money comes only from the user's own price table; with no price for a model the
sum says so, never a guess. A conversation's input is what a bill counts: every request's whole
prompt, summed (the last request's prompt alone is the context window's fill, another figure).
A request whose server sent no usage is counted from our estimate, and every figure it is part
of is shown marked, `~1,234`. The cell's footer, the panel's meter, `%copilot usage` and
`%copilot conversations` all read `Tally` and write it with `amount`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ...events import UsageReported
from ...messages import Usage
from ..context.tokens import prompt_tokens

TOKEN_KINDS = ("input", "output", "cached", "cache_write", "reasoning")
"""`input` is the whole prompt, `cached` the part of it read from the provider's cache and
`cache_write` the part written to it (Anthropic bills writes apart); the rest was fresh."""


def tokens_of(usage: Usage) -> dict[str, int]:
    """Input, output, cached input and reasoning tokens of one model reply, as reported.

    Each wire counts the prompt its own way: Chat Completions (and Copilot) and Responses
    count cached tokens inside the input; Messages counts them beside it
    (`cache_read_input_tokens`, `cache_creation_input_tokens`), so they are added back
    (`prompt_tokens`, the context window's rule too) and `input` always means the whole
    prompt."""
    raw = usage.raw or {}
    cached = _first(
        raw,
        ("prompt_tokens_details", "cached_tokens"),  # Chat Completions, Copilot
        ("input_tokens_details", "cached_tokens"),  # Responses
        ("cache_read_input_tokens",),  # Messages
    )
    written = _first(raw, ("cache_creation_input_tokens",))
    reasoning = _first(
        raw,
        ("completion_tokens_details", "reasoning_tokens"),
        ("output_tokens_details", "reasoning_tokens"),
    )
    return {
        "input": prompt_tokens(usage),
        "output": usage.output_tokens,
        "cached": cached,
        "cache_write": written,
        "reasoning": reasoning,
    }


def add(total: Mapping[str, int], more: Mapping[str, int]) -> dict[str, int]:
    return {kind: int(total.get(kind, 0)) + int(more.get(kind, 0)) for kind in TOKEN_KINDS}


def amount(count: int, estimated: bool) -> str:
    """`1,234`, or `~1,234` where our estimate is part of it: every surface writes it so."""
    return f"~{count:,}" if estimated else f"{count:,}"


@dataclass(frozen=True, kw_only=True)
class Tally:
    """Tokens of some model requests, summed as a bill sums them (`TOKEN_KINDS`)."""

    tokens: Mapping[str, int] = field(default_factory=dict)
    requests: int = 0
    estimated: int = 0
    """Of the requests, those whose server sent no usage: counted from our estimate."""

    @classmethod
    def of_event(cls, event: UsageReported) -> Tally:
        """One request, as its `UsageReported` says."""
        return cls(tokens=tokens_of(event.usage), requests=1, estimated=int(event.estimated))

    @classmethod
    def of_turns(cls, turns: Iterable[Mapping[str, Any]]) -> Tally:
        """Saved turn records, summed (`recorder.py` writes each turn's own tally); a count
        that is not a whole number (a record no store checked) counts as 0."""
        total = cls()
        for turn in turns:
            tokens = turn.get("tokens")
            counts = tokens if isinstance(tokens, Mapping) else {}
            total += cls(
                tokens={kind: _whole(counts.get(kind)) for kind in TOKEN_KINDS},
                requests=_whole(turn.get("requests")),
                estimated=_whole(turn.get("estimated")),
            )
        return total

    def __add__(self, other: Tally) -> Tally:
        return Tally(
            tokens=add(self.tokens, other.tokens),
            requests=self.requests + other.requests,
            estimated=self.estimated + other.estimated,
        )

    @property
    def input(self) -> int:
        return int(self.tokens.get("input", 0))

    @property
    def output(self) -> int:
        return int(self.tokens.get("output", 0))

    @property
    def cached(self) -> int:
        return int(self.tokens.get("cached", 0))

    def text(self) -> str:
        """`12,345 in (10,240 cached) · 300 out`; the counts our estimate is part of as `~`."""
        about = self.estimated > 0
        cached = f" ({self.cached:,} cached)" if self.cached else ""
        return f"{amount(self.input, about)} in{cached} · {amount(self.output, about)} out"


def tokens_line(
    turn: Tally, conversation: Tally | None = None, dollars: float | None = None
) -> str:
    """A turn's footer: `tokens: 1,234 in (1,024 cached) · 30 out · $0.0123`, then, once the
    conversation had earlier requests, its own sum: `· conversation: 3,200 in · 50 out`."""
    shown = f"tokens: {turn.text()}" + (f" · ${dollars:,.4f}" if dollars is not None else "")
    if conversation is not None and conversation.requests > turn.requests:
        shown += f" · conversation: {conversation.text()}"
    return shown


@dataclass(frozen=True, kw_only=True)
class UsageRow:
    """One line of `%copilot usage`: a conversation or a day."""

    key: str
    turns: int
    usage: Tally
    premium: float | None
    """Premium requests, where Copilot gave the model a multiplier; None where no turn had one
    (no other provider counts them)."""
    cost: float | None
    """Dollars, when every model used has a price; None when one has none."""
    unpriced: tuple[str, ...] = ()

    @property
    def tokens(self) -> Mapping[str, int]:
        return self.usage.tokens

    @property
    def estimated(self) -> bool:
        """Some turn's server sent no usage: its tokens are our estimate, not the provider's."""
        return self.usage.estimated > 0


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
        cost: float | None = 0.0
        unpriced: list[str] = []
        for turn in group:
            counted = turn.get("tokens") or {}
            model = str(turn.get("model", ""))
            dollars = price_of(model, counted, prices)
            if dollars is None:
                if model not in unpriced:
                    unpriced.append(model)
            elif cost is not None:
                cost += dollars
        premiums = [float(t["premium"]) for t in group if t.get("premium") is not None]
        out.append(
            UsageRow(
                key=key,
                turns=len(group),
                usage=Tally.of_turns(group),
                premium=sum(premiums) if premiums else None,
                cost=None if unpriced else cost,
                unpriced=tuple(unpriced),
            )
        )
    return out


def _whole(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _first(raw: Mapping[str, Any], *paths: tuple[str, ...]) -> int:
    for path in paths:
        value: Any = raw
        for key in path:
            value = value.get(key) if isinstance(value, Mapping) else None
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return 0
