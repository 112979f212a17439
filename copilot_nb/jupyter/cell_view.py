"""Agent events rendered as one live HTML output: streamed text, a line per tool call, diffs.

The transcript is updated in place through a display handle, at most a few times a second
(a browser re-renders the whole output on each update), and always once more at the end, so the
final output is complete. It never prints: it only updates its own display.

The output is HTML built by `safe_html` (with plain text alongside), never Markdown: a front end
renders a just-run cell's Markdown with its raw HTML, and the model's text must never run.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..events import (
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
from .safe_html import Rendered, details_html, diff_html, escape, inline_html, markdown_html

UPDATE_INTERVAL = 0.25
"""Seconds between display updates while streaming: smooth to the eye, cheap for the front end."""


@dataclass
class _ToolLine:
    name: str
    target: str
    outcome: str = ""
    ok: bool | None = None
    diffs: list[str] = field(default_factory=list)

    def html(self) -> str:
        icon = {None: "⏳", True: "✓", False: "✗"}[self.ok]
        line = f"{icon} <strong>{escape(self.name)}</strong>"
        if self.target:
            line += f" <code>{escape(_one_line(self.target))}</code>"
        if self.outcome:
            line += f" — {escape(_one_line(self.outcome))}"
        diffs = "".join(details_html("diff", diff_html(d)) for d in self.diffs)
        return f"<div>{line}</div>{diffs}"

    def plain(self) -> str:
        icon = {None: "⏳", True: "✓", False: "✗"}[self.ok]
        line = " ".join(p for p in (icon, self.name, _one_line(self.target)) if p)
        if self.outcome:
            line += f" — {_one_line(self.outcome)}"
        return "\n\n".join([line, *(d.rstrip("\n") for d in self.diffs)])


@dataclass
class _Reasoning:
    text: str

    def html(self) -> str:
        return details_html("Thinking", markdown_html(self.text))

    def plain(self) -> str:
        return f"Thinking: {self.text.strip()}"


@dataclass(frozen=True)
class _Prose:
    """Text we wrote (a notice, an error): escaped, in its own paragraph."""

    text: str
    prefix: str = ""

    def html(self) -> str:
        lead = f"<strong>{escape(self.prefix)}</strong> " if self.prefix else ""
        return f'<p style="white-space:pre-wrap">{lead}{escape(self.text)}</p>'

    def plain(self) -> str:
        return f"{self.prefix} {self.text}" if self.prefix else self.text


@dataclass
class Transcript:
    """What a `%%copilot` cell shows: safe HTML, and the same as plain text where no HTML is."""

    blocks: list[Any] = field(default_factory=list)
    footer: list[str] = field(default_factory=list)
    """Our own notes under the answer (offline model, tokens, interrupted), as one-line Markdown."""

    def html(self) -> str:
        parts = [markdown_html(b) if isinstance(b, str) else b.html() for b in self.blocks]
        body = "\n".join(p for p in parts if p)
        if self.footer:
            notes = "<br>".join(inline_html(note) for note in self.footer)
            body += f'\n<p style="font-size:0.85em;opacity:0.8">{notes}</p>'
        return body or "<p>…</p>"

    def text(self) -> str:
        parts = [b if isinstance(b, str) else b.plain() for b in self.blocks]
        body = "\n\n".join(p.strip("\n") for p in parts if p.strip())
        if self.footer:
            body += "\n\n" + "\n".join(self.footer)
        return body or "…"

    def rendered(self) -> Rendered:
        return Rendered(self.html(), self.text())

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return self.rendered()._repr_mimebundle_()


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
        self._handle = display(self.transcript.rendered(), display_id=True)

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
            blocks.append(_Prose(event.text, "⚠"))
        elif isinstance(event, Done):
            if self.tokens_in or self.tokens_out:
                self.notice(f"tokens: {self.tokens_in:,} in · {self.tokens_out:,} out")
        elif isinstance(event, Failed):
            blocks.append(_Prose(event.error, "Error:"))
        self._dirty = True
        if self._clock() - self._last >= self._interval:
            self.flush()

    def flush(self) -> None:
        """Send the current transcript to the display, if it changed."""
        if self._dirty:
            self._handle.update(self.transcript.rendered())
            self.updates += 1
            self._dirty = False
        self._last = self._clock()


def _one_line(text: str) -> str:
    return " ".join(text.split())
