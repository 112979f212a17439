"""What a `%%copilot` cell shows, as blocks: the model's Markdown, a line per tool call with
its diffs, its thinking, and our own notices; rendered as safe HTML and as the same plain text.

`cell_view.CellRenderer` feeds a turn's events into a `Transcript` and sends it to the cell.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..text import first_line
from .output_html import outputs_html, outputs_summary, outputs_text
from .safe_html import Rendered, details_html, diff_html, escape, inline_html, markdown_html

LINE = 200
"""Characters of a tool's target or outcome on its line; the model still gets all of it."""
ICONS = {None: "…", True: "✓", False: "✗"}
"""A tool line's state: running, done, failed. Characters every font has (Debian's Chromium
draws an emoji such as an hourglass as an empty box)."""


@dataclass
class ToolLine:
    """One tool call: its name, target, outcome, the diffs it made and what it showed (a run's
    printed text, figures and result), each folded under the line."""

    name: str
    target: str
    outcome: str = ""
    ok: bool | None = None
    diffs: list[str] = field(default_factory=list)
    outputs: tuple[Mapping[str, Any], ...] = ()

    def html(self) -> str:
        icon = ICONS[self.ok]
        line = f"{icon} <strong>{escape(self.name)}</strong>"
        if self.target:
            line += f" <code>{escape(first_line(self.target, LINE))}</code>"
        if self.outcome:
            line += f" — {escape(first_line(self.outcome, LINE))}"
        diffs = "".join(details_html("diff", diff_html(d)) for d in self.diffs)
        shown = outputs_html(self.outputs)
        if shown:
            diffs += details_html(f"output: {outputs_summary(self.outputs)}", shown)
        return f"<div>{line}</div>{diffs}"

    def plain(self) -> str:
        icon = ICONS[self.ok]
        line = " ".join(p for p in (icon, self.name, first_line(self.target, LINE)) if p)
        if self.outcome:
            line += f" — {first_line(self.outcome, LINE)}"
        shown = [outputs_text(self.outputs)] if self.outputs else []
        return "\n\n".join([line, *(d.rstrip("\n") for d in self.diffs), *shown])


@dataclass
class Reasoning:
    """The model's thinking, folded away."""

    text: str

    def html(self) -> str:
        return details_html("Thinking", markdown_html(self.text))

    def plain(self) -> str:
        return f"Thinking: {self.text.strip()}"


@dataclass(frozen=True)
class Prose:
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
