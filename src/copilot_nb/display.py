"""Agent events rendered as one live Markdown output: streamed text, a line per tool call, diffs.

The transcript is updated in place through a display handle, at most a few times a second
(a browser re-renders the whole Markdown on each update), and always once more at the end, so the
final output is complete. It never prints: it only updates its own display.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .events import (
    AgentEvent,
    ApprovalNeeded,
    CellChanged,
    Done,
    Failed,
    FileChanged,
    Notice,
    ReasoningDelta,
    TextDelta,
    ToolFinished,
    ToolStarted,
    UsageReported,
)

UPDATE_INTERVAL = 0.25
"""Seconds between display updates while streaming: smooth to the eye, cheap for the front end."""


@dataclass
class _ToolLine:
    name: str
    target: str
    outcome: str = ""
    ok: bool | None = None
    diffs: list[str] = field(default_factory=list)

    def markdown(self) -> str:
        icon = {None: "⏳", True: "✓", False: "✗"}[self.ok]
        target = f" `{self.target}`" if self.target else ""
        outcome = f" — {_inline(self.outcome)}" if self.outcome else ""
        line = f"{icon} **{self.name}**{target}{outcome}"
        for diff in self.diffs:
            line += f"\n\n<details><summary>diff</summary>\n\n```diff\n{diff.rstrip()}\n```\n\n</details>"
        return line


@dataclass
class Transcript:
    """What a `%%copilot` cell shows; renders as Markdown, and as the same text where no HTML is."""

    blocks: list[Any] = field(default_factory=list)
    footer: list[str] = field(default_factory=list)

    def markdown(self) -> str:
        parts = [b if isinstance(b, str) else b.markdown() for b in self.blocks]
        body = "\n\n".join(p.strip("\n") for p in parts if p.strip())
        if self.footer:
            body += "\n\n" + "  \n".join(self.footer)
        return body or "…"

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        text = self.markdown()
        return {"text/markdown": text, "text/plain": text}


class CellRenderer:
    """Feeds agent events into a Transcript and keeps one display output in step with it."""

    def __init__(
        self,
        *,
        display: Callable[..., Any] | None = None,
        interval: float = UPDATE_INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if display is None:
            from IPython.display import display as ipython_display

            display = ipython_display
        self.transcript = Transcript()
        self._interval = interval
        self._clock = clock
        self._last = clock()
        self._dirty = False
        self._tools: dict[str, _ToolLine] = {}
        self._current: _ToolLine | None = None
        self.updates = 0
        self.tokens_in = self.tokens_out = 0
        self._handle = display(_Snapshot(self.transcript.markdown()), display_id=True)

    def notice(self, text: str) -> None:
        self.transcript.footer.append(text)
        self._dirty = True

    def handle(self, event: AgentEvent) -> None:
        """Apply one event; refresh the display if enough time has passed."""
        blocks = self.transcript.blocks
        if isinstance(event, TextDelta):
            if blocks and isinstance(blocks[-1], str):
                blocks[-1] += event.text
            else:
                blocks.append(event.text)
        elif isinstance(event, ReasoningDelta):
            if blocks and isinstance(blocks[-1], _Reasoning):
                blocks[-1].text += event.text
            else:
                blocks.append(_Reasoning(event.text))
        elif isinstance(event, ToolStarted):
            line = _ToolLine(name=event.name, target=event.summary)
            self._tools[event.call_id] = line
            self._current = line
            blocks.append(line)
        elif isinstance(event, ApprovalNeeded):
            waiting = self._tools.get(event.call_id)
            if waiting is not None:
                waiting.outcome = "waiting for your approval below"
        elif isinstance(event, (FileChanged, CellChanged)):
            if self._current is not None:
                self._current.diffs.append(event.diff)
        elif isinstance(event, ToolFinished):
            line = self._tools.get(event.call_id) or _ToolLine(name=event.name, target="")
            line.ok, line.outcome = event.ok, event.summary
        elif isinstance(event, UsageReported):
            self.tokens_in += event.usage.input_tokens
            self.tokens_out += event.usage.output_tokens
        elif isinstance(event, Notice):
            blocks.append(f"_⚠ {_inline(event.text)}_")
        elif isinstance(event, Done):
            if self.tokens_in or self.tokens_out:
                self.notice(f"<sub>tokens: {self.tokens_in:,} in · {self.tokens_out:,} out</sub>")
        elif isinstance(event, Failed):
            blocks.append(f"**Error:** {event.error}")
        self._dirty = True
        if self._clock() - self._last >= self._interval:
            self.flush()

    def flush(self) -> None:
        """Send the current transcript to the display, if it changed."""
        if self._dirty:
            self._handle.update(_Snapshot(self.transcript.markdown()))
            self.updates += 1
            self._dirty = False
        self._last = self._clock()


@dataclass
class _Reasoning:
    text: str

    def markdown(self) -> str:
        return f"<details><summary>Thinking</summary>\n\n{self.text.strip()}\n\n</details>"


@dataclass(frozen=True)
class _Snapshot:
    """An immutable copy of the transcript's Markdown, so a queued update never changes later."""

    text: str

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/markdown": self.text, "text/plain": self.text}


def _inline(text: str) -> str:
    return text.replace("\n", " ").replace("`", "'")
