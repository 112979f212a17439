"""A run's outputs (nbformat outputs: printed text, displays, a result, an error) as safe HTML,
rendered as a notebook renders them: for the line of the call that ran them in a `%%copilot`
cell, its card in the chat panel, and a code block's Run.

A bundle shows as JupyterLab would pick it: its HTML (rebuilt from an allow-list,
`html_allowlist.py`), else its Markdown (`safe_html.markdown_html`), else its image, else its
text. An image is shown from its own bytes as a `data:` URL, and only a PNG, JPEG, GIF or WebP
whose bytes are what its type says (`tools.outputs.attached_image`), so nothing loads from
elsewhere; every text is escaped.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..tools.views.outputs import (
    attached_image,
    brief_output,
    clip_output,
    describe_image,
    describe_output,
    terminal_text,
)
from .html_allowlist import allowed_html
from .safe_html import escape, markdown_html

MAX_TEXT_CHARS = 20_000
"""Characters of one output's text shown (the start and the end kept)."""
MAX_HTML_CHARS = 200_000
"""Characters of a display's HTML rendered; a larger one shows as its text."""
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
PRE_STYLE = "margin:2px 0;padding:2px 4px;white-space:pre-wrap;word-break:break-word"
STDERR_STYLE = "background:rgba(248,81,73,0.08)"
"""Colours that read on light and dark themes alike, as a diff's (`safe_html.DIFF_STYLES`)."""


def outputs_html(outputs: Iterable[Mapping[str, Any]]) -> str:
    """The outputs, one after another, in safe HTML ('' when they show nothing)."""
    return "".join(output_html(output) for output in outputs)


def outputs_text(outputs: Iterable[Mapping[str, Any]]) -> str:
    """The same outputs as plain text (images by their size), where no HTML is shown."""
    return "\n".join(describe_output(output, limit=MAX_TEXT_CHARS) for output in outputs)


def outputs_summary(outputs: Iterable[Mapping[str, Any]]) -> str:
    """A few words on what the outputs hold, for the fold's summary: `stdout 2 lines, image/png
    100x50`."""
    return ", ".join(brief_output(output) for output in outputs)


def output_html(output: Mapping[str, Any]) -> str:
    """One output as a notebook renders it, in safe HTML."""
    kind = output.get("output_type")
    if kind == "stream":
        style = STDERR_STYLE if output.get("name") == "stderr" else ""
        return _pre(terminal_text(_text(output.get("text", ""))).rstrip("\n"), style)
    if kind == "error":
        traceback = output.get("traceback") or [f"{output.get('ename')}: {output.get('evalue')}"]
        return _pre(terminal_text("\n".join(map(str, traceback))), STDERR_STYLE)
    if kind in ("display_data", "execute_result"):
        data = output.get("data")
        return bundle_html(data) if isinstance(data, Mapping) else ""
    return ""


def bundle_html(data: Mapping[str, Any]) -> str:
    """A mime bundle's richest form that is safe to show."""
    html = _text(data.get("text/html", ""))
    if html and len(html) <= MAX_HTML_CHARS:
        rebuilt = allowed_html(html)
        if rebuilt.strip():
            return f'<div style="overflow-x:auto">{rebuilt}</div>'
    if "text/markdown" in data:
        return markdown_html(_text(data["text/markdown"]))
    for mime in IMAGE_TYPES:
        if mime in data:
            image = attached_image(mime, data[mime])
            label = describe_image(mime, data[mime]).strip("[]")
            if image is not None:
                return (
                    f'<img src="{escape(image.data_url)}" alt="{escape(label)}" '
                    'style="max-width:100%;height:auto">'
                )
            return _pre(f"[{label}: not shown]", "")
    if "text/plain" in data:
        return _pre(terminal_text(_text(data["text/plain"])), "")
    return ""


def _pre(text: str, style: str) -> str:
    shown = clip_output(text, MAX_TEXT_CHARS)
    return f'<pre style="{PRE_STYLE};{style}">{escape(shown)}</pre>' if shown else ""


def _text(payload: Any) -> str:
    if isinstance(payload, list):
        return "".join(map(str, payload))
    return payload if isinstance(payload, str) else str(payload)
