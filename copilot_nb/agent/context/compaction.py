"""Compaction: make an over-long conversation fit, losing the least that matters.

The stages, cheapest loss first, each stopping once the conversation is under the target (well
below the limit, so the next requests need no compaction at once):

1. tool results older than the newest `keep_rounds` rounds shrink to their first lines and a
   marker (the model can call the tool again); a shortened result loses its images;
2. a tool result larger than `max_result_share` of the limit is cut to that share;
3. the kept rounds' tool results, but the newest round's, shrink too;
4. the older rounds are summarised by the model itself into one `SummaryMessage` (a request
   billed as any other: its usage goes out with the compaction, `Compaction.used`);
5. whatever tool results are left are cut, largest first, until the request fits the limit.

The system prompt and the latest user request are never touched; an assistant's tool calls and
their results are summarised together or not at all, so providers accept every sequence.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ...errors import ContextBudgetError, ModelError
from ...events import UsageReported
from ...messages import AssistantMessage, Message, SystemMessage, ToolResult, Usage, UserMessage
from ...text import clip
from .tokens import (
    MESSAGE_OVERHEAD,
    Calibration,
    estimate_tokens,
    message_tokens,
    request_size,
    request_tokens,
)

HEAD_LINES = 6
HEAD_CHARS = 600
"""What an elided tool result keeps of its beginning."""

SUMMARY_INSTRUCTIONS = """\
You are summarising the older part of a conversation between a user and copilot_nb, a coding
agent in a Jupyter kernel, because the conversation no longer fits the model's context window.
Write a concise summary (at most about 300 words, Markdown) of what the agent needs to carry on:
the user's requests and preferences, what was done (files and cells read or changed, by path),
facts found, decisions, errors met, and what is still left to do. Do not call tools."""

SUMMARY_HEADER = "[Summary of {count} earlier messages, written to fit the context window]"
SUMMARY_TOKENS = 1_500
"""The most a summary may take; a longer one is cut."""

_MARKER = re.compile(r"\n?\[… ([0-9,]+) characters elided; call \S+ again if needed\]\Z")


@dataclass(frozen=True, kw_only=True)
class SummaryMessage(UserMessage):
    """Earlier messages as the model summarised them; providers see a user message."""

    replaced: int = 0
    """How many messages it stands for."""


@dataclass(frozen=True, kw_only=True)
class Compaction:
    """What one compaction did, in numbers a user can read."""

    before: int
    after: int
    elided: int = 0
    """Tool results shortened."""
    summarized: int = 0
    """Messages replaced by a summary."""
    note: str = ""
    used: tuple[UsageReported, ...] = ()
    """What asking the model for the summary cost: billed as any request is."""

    def describe(self) -> str:
        parts = []
        if self.elided:
            parts.append(f"{self.elided} tool result{'s' * (self.elided != 1)} shortened")
        if self.summarized:
            parts.append(f"{self.summarized} messages summarised")
        if self.note:
            parts.append(self.note)
        detail = f" ({'; '.join(parts)})" if parts else ""
        return f"compacted the conversation: {self.before:,} → {self.after:,} tokens{detail}"


class Compactor:
    """One compaction of one conversation; `ContextWindow.fit()` makes one when it must."""

    def __init__(
        self,
        *,
        cost: Callable[[Message], int],
        calibration: Calibration,
        limit: int,
        target: int,
        window: int,
        model: Any,
        tools_cost: int,
        offset: int = 0,
        keep_rounds: int = 2,
        max_result_share: float = 0.4,
        summarize: bool = True,
    ) -> None:
        self.cost = cost
        self.calibration = calibration
        self.limit, self.target, self.window = limit, target, window
        self.model = model
        self.offset, self.tools_cost = offset, tools_cost
        self.keep_rounds = keep_rounds
        self.max_result_share = max_result_share
        self.summarize = summarize
        self.messages: list[Message] = []
        self.costs: list[int] = []
        self.shortened: set[str] = set()
        self.summarized = 0
        self.used: list[UsageReported] = []

    def total(self) -> int:
        return self.offset + self.calibration.scale(request_size(self.costs, self.tools_cost))

    async def run(
        self, messages: Sequence[Message], before: int
    ) -> tuple[list[Message], Compaction]:
        """The compacted conversation and what was done; raises ContextBudgetError if it cannot fit."""
        self._load(messages)
        self._check_what_cannot_shrink()
        tail, newest = self._tail(), self._newest_round()
        results = [i for i, m in enumerate(self.messages) if isinstance(m, ToolResult)]
        self._shrink((i for i in results if i < tail), self.target)
        share = math.floor(self.limit * self.max_result_share / self.calibration.ratio)
        for i in results:
            if self.total() <= self.target:
                break
            if self.costs[i] > share:
                self._cut(i, share)
        self._shrink((i for i in results if tail <= i < newest), self.target)
        note = ""
        if self.total() > self.target and self.summarize:
            note = await self._summarise()
        self._cut_to_limit()
        after = self.total()
        if after > self.limit:
            raise ContextBudgetError(
                f"the conversation still takes about {after:,} tokens after compaction, more than "
                f"the {self._budget_words()}{'; ' + note if note else ''}; start a new "
                "conversation (`%%copilot --new` or `%copilot reset`) or choose a model with a "
                "larger window"
            )
        return self.messages, Compaction(
            before=before,
            after=after,
            elided=len(self.shortened),
            summarized=self.summarized,
            note=note,
            used=tuple(self.used),
        )

    # --- the structure of the conversation ------------------------------------------------

    def _load(self, messages: Iterable[Message]) -> None:
        self.messages = list(messages)
        self.costs = [self.cost(m) for m in self.messages]

    def _head(self) -> int:
        """How many system messages open the conversation (never compacted)."""
        count = 0
        while count < len(self.messages) and isinstance(self.messages[count], SystemMessage):
            count += 1
        return count

    def _request(self) -> int:
        """The position of the latest user request (never compacted), or -1."""
        for i in range(len(self.messages) - 1, -1, -1):
            message = self.messages[i]
            if isinstance(message, UserMessage) and not isinstance(message, SummaryMessage):
                return i
        return -1

    def _units(self) -> list[range]:
        """The conversation after the system prompt, cut where a provider allows a cut: each
        assistant message together with the tool results that follow it."""
        units, i, n = [], self._head(), len(self.messages)
        while i < n:
            j = i + 1
            if isinstance(self.messages[i], (AssistantMessage, ToolResult)):
                while j < n and isinstance(self.messages[j], ToolResult):
                    j += 1
            units.append(range(i, j))
            i = j
        return units

    def _rounds(self) -> list[range]:
        return [u for u in self._units() if isinstance(self.messages[u.start], AssistantMessage)]

    def _tail(self) -> int:
        """Where the newest `keep_rounds` rounds begin."""
        rounds = self._rounds()
        if self.keep_rounds <= 0 or not rounds:
            return len(self.messages)
        return rounds[-min(self.keep_rounds, len(rounds))].start

    def _newest_round(self) -> int:
        rounds = self._rounds()
        return rounds[-1].start if rounds else len(self.messages)

    # --- the stages -------------------------------------------------------------------------

    def _set(self, index: int, message: Message) -> None:
        self.messages[index] = message
        self.costs[index] = self.cost(message)

    def _shrink(self, indices: Iterable[int], goal: int) -> None:
        for i in indices:
            if self.total() <= goal:
                return
            result = self.messages[i]
            assert isinstance(result, ToolResult)
            self._replace(i, result, elide(result.content, result.name))

    def _cut(self, index: int, tokens: int) -> None:
        result = self.messages[index]
        assert isinstance(result, ToolResult)
        room = max(0, tokens - MESSAGE_OVERHEAD - estimate_tokens(result.tool_call_id))
        self._replace(index, result, cut_to_tokens(result.content, result.name, room))

    def _replace(self, index: int, result: ToolResult, content: str) -> None:
        """A shortened result; its images go too (its text still describes them)."""
        if content != result.content or result.images:
            self._set(index, replace(result, content=content, images=()))
            self.shortened.add(result.tool_call_id or str(index))

    def _cut_to_limit(self) -> None:
        """Last resort before giving up: cut tool results, the largest first, to what still fits."""
        results = [i for i, m in enumerate(self.messages) if isinstance(m, ToolResult)]
        for i in sorted(results, key=lambda i: -self.costs[i]):
            over = self.total() - self.limit
            if over <= 0:
                return
            needed = math.ceil(over / self.calibration.ratio) + 1
            self._cut(i, max(0, self.costs[i] - needed))

    async def _summarise(self) -> str:
        """Replace the rounds before the kept tail (not the latest request) by the model's summary."""
        tail, request = self._tail(), self._request()
        span = [i for u in self._units() if u.stop <= tail for i in u if request not in u]
        if sum(self.costs[i] for i in span) <= 2 * SUMMARY_TOKENS:
            return ""  # too little to gain
        replaced = [self.messages[i] for i in span]
        room = math.floor((self.limit - self.offset) / self.calibration.ratio)
        room -= estimate_tokens(SUMMARY_INSTRUCTIONS) + 2 * SUMMARY_TOKENS
        text = keep_ends(transcript(replaced), max(room, 200))
        asked: list[Message] = [
            SystemMessage(content=SUMMARY_INSTRUCTIONS),
            UserMessage(content=text),
        ]
        try:
            reply = await self.model.complete(asked)
        except ModelError as exc:
            return f"summarising failed: {exc}"
        self.used.append(_usage_of(reply, asked, self.calibration))
        summary = reply.text.strip()
        if not summary:
            return "summarising failed: the model answered with no text"
        count = sum(m.replaced if isinstance(m, SummaryMessage) else 1 for m in replaced)
        header = SUMMARY_HEADER.format(count=count)
        message = SummaryMessage(
            content=f"{header}\n\n{keep_ends(summary, SUMMARY_TOKENS)}", replaced=count
        )
        gone, last = set(span), span[-1]
        kept: list[Message] = []
        for i, m in enumerate(self.messages):
            if i == last:
                kept.append(message)
            elif i not in gone:
                kept.append(m)
        self._load(kept)
        self.summarized += len(replaced)
        return ""

    def _check_what_cannot_shrink(self) -> None:
        """Fail before any work when the system prompt, tools and request alone do not fit."""
        head = self.costs[: self._head()]
        fixed = self.offset + self.calibration.scale(request_size(head, self.tools_cost))
        if fixed > self.limit:
            raise ContextBudgetError(
                f"the system prompt and tool definitions alone take about {fixed:,} tokens, more "
                f"than the {self._budget_words()}; shorten the system prompt, offer fewer tools, "
                "or choose a model with a larger window"
            )
        request = self._request()
        if request >= 0:
            asked = self.calibration.scale(self.costs[request])
            if fixed + asked > self.limit:
                raise ContextBudgetError(
                    f"the request is about {asked:,} tokens; with the system prompt and tools "
                    f"(about {fixed:,}) it does not fit the {self._budget_words()}; shorten the "
                    "request or choose a model with a larger window"
                )

    def _budget_words(self) -> str:
        name = getattr(self.model, "name", "the model")
        return (
            f"{self.limit:,}-token input budget of {name} "
            f"(a {self.window:,}-token window, less room for the reply)"
        )


def elide(content: str, name: str, *, lines: int = HEAD_LINES, chars: int = HEAD_CHARS) -> str:
    """A long tool result's first lines and a marker that says how much is gone and how to get it."""
    body, gone = _unmark(content)
    head = "\n".join(body.splitlines()[:lines])[:chars]
    if len(head) + 100 >= len(body):
        return content
    return _mark(head, gone + len(body) - len(head), name)


def cut_to_tokens(content: str, name: str, tokens: int) -> str:
    """The longest beginning of `content`, cut at a line end where it can be, that fits `tokens`."""
    if estimate_tokens(content) <= tokens:
        return content
    body, gone = _unmark(content)
    size = len(body)
    while size > 0:
        estimate = estimate_tokens(body[:size]) + 30
        size = max(0, min(size - 1, math.floor(size * tokens / estimate)))
        newline = body.rfind("\n", 0, size)
        head = body[:newline] if newline > size // 2 else body[:size]
        result = _mark(head, gone + len(body) - len(head), name)
        if estimate_tokens(result) <= tokens:
            return result
    return _mark("", gone + len(body), name)


def keep_ends(text: str, tokens: int) -> str:
    """`text` cut to `tokens` by dropping its middle: its start and its end matter most."""
    if estimate_tokens(text) <= tokens:
        return text
    scale = tokens / estimate_tokens(text)
    while True:
        keep = math.floor(len(text) * scale)
        head, end = text[: keep // 3], text[len(text) - (keep - keep // 3) :]
        result = f"{head}\n[… {len(text) - keep:,} characters left out …]\n{end}"
        if estimate_tokens(result) <= tokens or keep == 0:
            return result
        scale *= 0.9


def transcript(messages: Sequence[Message]) -> str:
    """The messages as plain text for the summariser, long parts clipped."""
    parts = []
    for m in messages:
        if isinstance(m, SummaryMessage):
            parts.append(f"Earlier summary:\n{m.content}")
        elif isinstance(m, (UserMessage, SystemMessage)):
            parts.append(
                f"{'User' if isinstance(m, UserMessage) else 'System'}: {clip(m.content, 4000)}"
            )
        elif isinstance(m, AssistantMessage):
            lines = [f"Assistant: {clip(m.text, 2000)}"] if m.text else []
            for call in m.tool_calls:
                arguments = call.raw_arguments or str(call.arguments)
                lines.append(f"Assistant called {call.name}({clip(arguments, 300)})")
            parts.append("\n".join(lines))
        else:
            state = " (error)" if m.is_error else ""
            parts.append(f"Result of {m.name or 'a tool'}{state}: {clip(m.content, 600)}")
    return "\n\n".join(p for p in parts if p)


def is_elided(content: str) -> bool:
    return _MARKER.search(content) is not None


def _mark(head: str, gone: int, name: str) -> str:
    marker = f"[… {gone:,} characters elided; call {name or 'the_tool'} again if needed]"
    return f"{head}\n{marker}" if head else marker


def _unmark(content: str) -> tuple[str, int]:
    """Split off a marker an earlier elision left, so the counts add up instead of nesting."""
    match = _MARKER.search(content)
    if match is None:
        return content, 0
    return content[: match.start()], int(match.group(1).replace(",", ""))


def _usage_of(
    reply: AssistantMessage, asked: Sequence[Message], calibration: Calibration
) -> UsageReported:
    """The summary request's usage as its server said, else our estimate, marked so."""
    if reply.usage is not None:
        return UsageReported(usage=reply.usage)
    estimate = Usage(
        input_tokens=calibration.scale(request_tokens(asked)),
        output_tokens=calibration.scale(message_tokens(reply)),
    )
    return UsageReported(usage=estimate, estimated=True)
