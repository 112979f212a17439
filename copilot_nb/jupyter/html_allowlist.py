"""HTML a run displayed (a DataFrame's table, a styled repr), rebuilt from an allow-list so that
it cannot run or load anything: the surfaces show it inside HTML of their own, rendered trusted.

Nothing of the input is copied through. It is parsed (`html.parser`, character references
decoded) and written again: only the tags of text and tables, each with at most a few
attributes whose values are checked (a span's number, an alignment word, a safe link); every
piece of text escaped; what a script, style, frame, SVG or template element holds left out
whole; every tag it opens closed by it, so the input cannot close the output's own elements.
What a browser would parse differently from `html.parser` can only lose content, never add a
tag, since the browser reads the HTML written here, not the input.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from .safe_html import escape, safe_url

TAGS = frozenset(
    {
        "table", "thead", "tbody", "tfoot", "tr", "th", "td", "caption", "colgroup", "col",
        "div", "span", "p", "br", "hr", "b", "i", "u", "s", "strong", "em", "small", "sub",
        "sup", "code", "pre", "kbd", "samp", "var", "blockquote", "ul", "ol", "li", "dl", "dt",
        "dd", "h1", "h2", "h3", "h4", "h5", "h6", "a", "abbr",
    }
)  # fmt: skip
"""Tags kept: text and tables."""
VOID = frozenset({"br", "hr", "col"})
SKIPPED = frozenset(
    {
        "script", "style", "template", "svg", "math", "iframe", "object", "noscript",
        "noembed", "noframes", "title", "textarea", "select", "head", "xmp", "frameset",
    }
)  # fmt: skip
"""Elements left out with all they hold (a style's CSS is no text to show)."""
MAX_DEPTH = 64
"""Tags nested deeper than this are dropped (their text is kept)."""
_NUMBER = re.compile(r"[0-9]{1,4}")
_ATTRIBUTES = {
    "colspan": _NUMBER,
    "rowspan": _NUMBER,
    "span": _NUMBER,
    "border": _NUMBER,
    "align": re.compile(r"left|right|center|justify", re.IGNORECASE),
    "valign": re.compile(r"top|middle|bottom|baseline", re.IGNORECASE),
    "scope": re.compile(r"row|col|rowgroup|colgroup", re.IGNORECASE),
}
"""Attributes kept, each only with a value of its pattern."""
_LINK = 'target="_blank" rel="noopener noreferrer nofollow"'


def allowed_html(markup: str) -> str:
    """`markup` rebuilt from the allow-list (see the module docstring)."""
    builder = _Builder()
    builder.feed(markup)
    builder.close()
    return builder.result()


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.open: list[str] = []
        self.skipping: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.skipping or tag in SKIPPED:
            if tag in SKIPPED:
                self.skipping.append(tag)
            return
        if tag not in TAGS or len(self.open) >= MAX_DEPTH:
            return
        self.parts.append(f"<{tag}{_attributes(tag, attrs)}>")
        if tag not in VOID:
            self.open.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.skipping or tag in SKIPPED:
            return  # `<svg/>` holds nothing
        self.handle_starttag(tag, attrs)
        if tag in TAGS and tag not in VOID and self.open and self.open[-1] == tag:
            self.handle_endtag(tag)

    def handle_endtag(self, tag: str) -> None:
        if self.skipping:
            if tag == self.skipping[-1]:
                self.skipping.pop()
            return
        if tag not in self.open:
            return  # not one this builder opened: never closes the surface's own elements
        while self.open:
            last = self.open.pop()
            self.parts.append(f"</{last}>")
            if last == tag:
                break

    def handle_data(self, data: str) -> None:
        if not self.skipping:
            self.parts.append(escape(data))

    def result(self) -> str:
        return "".join(self.parts) + "".join(f"</{tag}>" for tag in reversed(self.open))


def _attributes(tag: str, attrs: list[tuple[str, str | None]]) -> str:
    """The attributes kept, each value checked and escaped; a link only to a safe target."""
    kept = []
    for name, value in attrs:
        pattern = _ATTRIBUTES.get(name)
        if pattern is not None and value is not None and pattern.fullmatch(value.strip()):
            kept.append(f' {name}="{escape(value.strip())}"')
        elif tag == "a" and name == "href" and value and safe_url(value):
            kept.append(f' href="{escape(value)}" {_LINK}')
    return "".join(kept)
