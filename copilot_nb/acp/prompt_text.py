"""An ACP prompt's content blocks as the request text a `%%copilot` cell would have: text as it
is, a linked or embedded file as an `@path` reference the turn attaches through its read tools."""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlparse


def prompt_text(blocks: list[Any]) -> str:
    """The request: text blocks joined, resources named by `@path` (what the editor attached)."""
    parts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource_link":
            parts.append(_reference(block.uri))
        elif kind == "resource":
            parts.append(_reference(getattr(block.resource, "uri", "")))
    return " ".join(part for part in parts if part)


def _reference(uri: str) -> str:
    parsed = urlparse(uri)
    if parsed.scheme not in ("", "file"):
        return ""  # only files of this machine are attached; a web address is the user's text
    path = unquote(parsed.path)
    return f"@{path}" if path else ""
