"""The context budget: each model has a window; before every request the conversation is measured
and, when it is over budget, compacted (see `compaction.py` for how).

The measure is the provider's own count of the last request plus an estimate of what was added
since (`tokens.py`); a request that does not fit even after compaction is never sent.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any

from ...errors import ConfigError
from ...messages import AssistantMessage, Message, SystemMessage, ToolSpec, Usage
from ...models.capabilities import (
    by_model_name,
    carries_images,
    images_to_send,
    model_image_limits,
)
from ...models.server_props import reply_limit, token_count
from .compaction import Compaction, Compactor
from .tokens import Calibration, message_tokens, prompt_tokens, request_size, tools_tokens

DEFAULT_WINDOW = 32_768
"""The window assumed for a model nobody told us about: small enough for most local servers."""

KNOWN_WINDOWS: dict[str, int] = {
    "gpt-5": 400_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "chatgpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4-32k": 32_768,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "o1-mini": 128_000,
    "o1-preview": 128_000,
    "o1": 200_000,
    "o3": 200_000,
    "o4": 200_000,
    "claude": 200_000,
    "gemini": 1_048_576,
    "llama3.": 32_768,
    "llama3": 8_192,
    "qwen": 32_768,
    "mistral": 32_768,
    "mixtral": 32_768,
    "codestral": 32_768,
    "deepseek": 65_536,
    "gemma3": 32_768,
    "gemma": 8_192,
    "phi4": 16_384,
}
"""Context windows by model-name prefix (the longest match wins). Local servers (Ollama, vLLM)
are listed at what they commonly run with, not what the weights allow; configure the rest."""


@dataclass(frozen=True)
class ContextBudget:
    """How many tokens a request may use: the window less room for the reply and for estimation error."""

    window: int
    _: KW_ONLY
    reserve_output: int | None = None
    """Tokens kept free for the reply; by default an eighth of the window, at most 16,384."""
    max_prompt: int | None = None
    """A provider's own cap on the prompt (GitHub Copilot's `max_prompt_tokens`)."""
    margin: float = 0.05
    """The share of the budget held back for estimation error."""
    compact_to: float = 0.6
    """When compacting, aim this far below the limit, so the next requests fit without it."""

    def __post_init__(self) -> None:
        if self.window <= 0 or self.input_limit <= 0:
            raise ConfigError(
                f"a context window of {self.window} tokens (reserving {self.reserved} for the "
                "reply) leaves no room for the request; give the model's real window"
            )

    @property
    def reserved(self) -> int:
        if self.reserve_output is not None:
            return self.reserve_output
        return reply_limit(self.window)  # what a local server's requests send as max_tokens

    @property
    def input_limit(self) -> int:
        """The most tokens a request may take."""
        room = self.window - self.reserved
        if self.max_prompt is not None:
            room = min(room, self.max_prompt)
        return math.floor(room * (1 - self.margin))

    @property
    def target(self) -> int:
        return math.floor(self.input_limit * self.compact_to)


def known_window(name: str) -> int:
    """The window of a model by its name (`gpt-4o`, `openai/gpt-4o`, `qwen3:8b`), else the default."""
    return by_model_name(name, KNOWN_WINDOWS, DEFAULT_WINDOW)


def model_budget(model: Any) -> ContextBudget:
    """The budget a model object implies: its own `context_window` (and `max_prompt_tokens`,
    `max_output_tokens`, as GitHub Copilot's model list gives them), else the known defaults."""
    window = token_count(getattr(model, "context_window", None))
    window = window or known_window(str(getattr(model, "name", "")))
    output = token_count(getattr(model, "max_output_tokens", None))
    return ContextBudget(
        window,
        reserve_output=min(output, window // 4) if output else None,
        max_prompt=token_count(getattr(model, "max_prompt_tokens", None)),
    )


@dataclass(frozen=True, kw_only=True)
class ContextReport:
    """Where the conversation stands against the window: what `%copilot history` shows."""

    model: str
    window: int
    input_limit: int
    used: int
    system: int
    tools: int
    history: int
    messages: int
    compactions: int
    elided: int
    summarized: int
    ratio: float
    reports: int


class ContextWindow:
    """Keeps a conversation within a model's context window, request after request.

    With no `budget` it follows the model it is given (so a model switch, or a window learnt from
    the provider's model list, takes effect at the next request).
    """

    def __init__(
        self,
        budget: ContextBudget | int | None = None,
        *,
        keep_rounds: int = 2,
        max_result_share: float = 0.4,
        summarize: bool = True,
    ) -> None:
        self.budget = ContextBudget(budget) if isinstance(budget, int) else budget
        self.keep_rounds = keep_rounds
        self.max_result_share = max_result_share
        self.summarize = summarize
        self.calibration = Calibration()
        self.compactions: list[Compaction] = []
        self.last_compaction: Compaction | None = None
        """What the last `fit()` did; None when the conversation fitted as it was."""
        self._sent: list[Message] = []
        self._sent_estimate = 0
        self._sent_size = 0
        """The request's tokens as `measure` put them (the last report plus what was added)."""
        self._sent_tools = 0
        self._reported: int | None = None
        self._costs: dict[int, tuple[Message, int]] = {}

    def fresh(self) -> ContextWindow:
        """The same settings for a new conversation: no compactions, no measurements yet."""
        return ContextWindow(
            self.budget,
            keep_rounds=self.keep_rounds,
            max_result_share=self.max_result_share,
            summarize=self.summarize,
        )

    def budget_for(self, model: Any) -> ContextBudget:
        return self.budget if self.budget is not None else model_budget(model)

    def cost(self, message: Message) -> int:
        """A message's estimated tokens, remembered while it stays in the conversation."""
        known = self._costs.get(id(message))
        if known is not None and known[0] is message:
            return known[1]
        tokens = message_tokens(message)
        self._costs[id(message)] = (message, tokens)
        return tokens

    def measure(self, messages: Sequence[Message], tools: Sequence[ToolSpec] = ()) -> int:
        """The tokens a request will take: the provider's count of the last request plus an
        estimate of what was added since, or the calibrated estimate of the whole."""
        tools_cost = tools_tokens(tools)
        if self._reported is not None and _starts_with(messages, self._sent):
            added = sum(self.cost(m) for m in messages[len(self._sent) :])
            return max(
                0, self._reported + self.calibration.scale(added + tools_cost - self._sent_tools)
            )
        return self.calibration.scale(self.estimate(messages, tools_cost))

    def estimate(self, messages: Sequence[Message], tools_cost: int) -> int:
        return request_size((self.cost(m) for m in messages), tools_cost)

    def estimated_usage(self, reply: AssistantMessage) -> Usage:
        """What the request `fit()` last returned and its reply cost, by our calibrated
        estimate: for a server that sends no usage, so its tokens are counted, never 0."""
        return Usage(
            input_tokens=self._sent_size,
            output_tokens=self.calibration.scale(message_tokens(reply)),
        )

    def observe(self, usage: Usage) -> None:
        """Learn from the provider's usage report for the request `fit()` last returned."""
        actual = prompt_tokens(usage)
        trusted = self.calibration.observe(self._sent_estimate, actual)
        self._reported = actual if trusted else None

    async def fit(
        self, messages: list[Message], model: Any, tools: Sequence[ToolSpec] = ()
    ) -> list[Message]:
        """The conversation to send: `messages` itself when it fits, else a compacted copy.
        Images the model will not be sent (an earlier turn's, past its limit, all of them for a
        model without vision) are dropped first, so they are not counted."""
        if carries_images(messages):
            messages = images_to_send(messages, model_image_limits(model))
        if (learn := getattr(model, "learn_limits", None)) is not None:
            await learn()  # a local server's own window, asked once before the first request
        budget = self.budget_for(model)
        self.last_compaction = None
        live = {id(m) for m in messages}
        self._costs = {key: value for key, value in self._costs.items() if key in live}
        before = self.measure(messages, tools)
        if before > budget.input_limit:
            tools_cost = tools_tokens(tools)
            offset = max(0, before - self.calibration.scale(self.estimate(messages, tools_cost)))
            compactor = Compactor(
                cost=self.cost,
                calibration=self.calibration,
                limit=budget.input_limit,
                target=budget.target,
                window=budget.window,
                model=model,
                tools_cost=tools_cost,
                offset=offset,
                keep_rounds=self.keep_rounds,
                max_result_share=self.max_result_share,
                summarize=self.summarize,
            )
            messages, compaction = await compactor.run(messages, before)
            self.last_compaction = compaction
            self.compactions.append(compaction)
        self._sent_size = self.measure(messages, tools)
        self._sent = list(messages)
        self._sent_tools = tools_tokens(tools)
        self._sent_estimate = self.estimate(messages, self._sent_tools)
        self._reported = None
        return messages

    def report(
        self, messages: Sequence[Message], model: Any, tools: Sequence[ToolSpec] = ()
    ) -> ContextReport:
        budget = self.budget_for(model)
        system = sum(self.cost(m) for m in messages if isinstance(m, SystemMessage))
        tools_cost = self.calibration.scale(tools_tokens(tools))
        used = self.measure(messages, tools)
        return ContextReport(
            model=str(getattr(model, "name", model)),
            window=budget.window,
            input_limit=budget.input_limit,
            used=used,
            system=self.calibration.scale(system),
            tools=tools_cost,
            history=max(0, used - self.calibration.scale(system) - tools_cost),
            messages=len(messages),
            compactions=len(self.compactions),
            elided=sum(c.elided for c in self.compactions),
            summarized=sum(c.summarized for c in self.compactions),
            ratio=self.calibration.ratio,
            reports=self.calibration.reports,
        )


def _starts_with(messages: Sequence[Message], prefix: Sequence[Message]) -> bool:
    if not prefix or len(prefix) > len(messages):
        return False
    return all(a is b for a, b in zip(messages, prefix, strict=False))
