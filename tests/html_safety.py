"""The XSS corpus, and the checks every surface's HTML must pass (parsed with html.parser)."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

CORPUS = Path(__file__).parent / "data" / "xss" / "payloads.json"
FORBIDDEN_TAGS = frozenset(
    {
        "script", "iframe", "frame", "frameset", "object", "embed", "applet", "base", "meta",
        "form", "style", "svg", "math", "link", "noscript", "template", "video", "audio",
        "source", "input", "textarea", "select", "body", "html", "head",
    }
)  # fmt: skip
URL_ATTRIBUTES = frozenset(
    {"href", "src", "srcset", "action", "formaction", "data", "xlink:href", "poster", "background"}
)
ALLOWED_SCHEMES = frozenset({"http", "https", "mailto"})
_INVISIBLE = re.compile(r"[\x00-\x20\x7f-\x9f\u00ad\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*):")


def payloads() -> list[dict[str, str]]:
    """Every payload of the corpus: id, kind, payload (and a note on some)."""
    return list(json.loads(CORPUS.read_text(encoding="utf-8"))["payloads"])


def scheme_of(url: str) -> str | None:
    """The scheme a browser would see: entities are decoded by the parser already; whitespace
    and control characters are dropped (a browser strips tabs and newlines anywhere)."""
    found = _SCHEME.match(_INVISIBLE.sub("", url))
    return found.group(1).lower() if found else None


def is_remote(url: str) -> bool:
    plain = _INVISIBLE.sub("", url).lower()
    return plain.startswith(("http:", "https:", "//", "\\\\", "/\\", "\\/"))


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


def violations(markup: str) -> list[str]:
    """What in this HTML could run or load by itself; empty when it is safe."""
    parser = _Collector()
    parser.feed(markup)
    parser.close()
    found = []
    for tag, attrs in parser.tags:
        if tag in FORBIDDEN_TAGS:
            found.append(f"<{tag}>")
        for name, value in attrs:
            value = value or ""
            if name.startswith("on"):
                found.append(f"<{tag} {name}>")
            elif name == "srcdoc":
                found.append(f"<{tag} srcdoc>")
            elif name == "style" and re.search(r"url\(|expression|@import|\\", value, re.I):
                found.append(f"<{tag} style={value!r}>")
            elif name in URL_ATTRIBUTES:
                scheme = scheme_of(value)
                if scheme is not None and scheme not in ALLOWED_SCHEMES:
                    found.append(f"<{tag} {name}={value!r}>")
                loads = tag == "img" or name in ("srcset", "poster", "background")
                if loads and (name != "src" or is_remote(value)):
                    found.append(f"<{tag} {name}={value!r}> loads by itself")
        if tag == "img" and not dict(attrs).get("src"):
            found.append("<img> without a src")
    return found


def table_rows(markup: str) -> list[list[str]]:
    """The text of each row of the HTML tables in `markup` (header rows included)."""
    rows: list[list[str]] = []

    class Rows(HTMLParser):
        cell: list[str] | None = None

        def handle_starttag(self, tag: str, attrs: Any) -> None:
            if tag == "tr":
                rows.append([])
            elif tag in ("td", "th"):
                self.cell = []

        def handle_endtag(self, tag: str) -> None:
            if tag in ("td", "th") and self.cell is not None:
                rows[-1].append("".join(self.cell).strip())
                self.cell = None

        def handle_data(self, data: str) -> None:
            if self.cell is not None:
                self.cell.append(data)

    Rows(convert_charrefs=True).feed(markup)
    return rows
