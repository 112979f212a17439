"""An ACP prompt's content blocks as the request text a `%%copilot` cell would have: text as it
is, a linked or embedded file of the session's folder as an `@path` reference the turn attaches
through its read tools, any other file named in backticks for the model to read if it may."""

from __future__ import annotations

import os
import re
from typing import Any
from urllib.parse import unquote, urlparse

_REFERABLE = re.compile(r"[\w./-]+")
"""What an `@` reference may hold (`agent/prompt/references.py`): no spaces, no quotes."""


def prompt_text(blocks: list[Any], cwd: str) -> str:
    """The request: text blocks joined, attached files named (what the editor attached)."""
    parts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", "")
        if kind == "text":
            parts.append(block.text)
        elif kind == "resource_link":
            parts.append(_reference(block.uri, cwd))
        elif kind == "resource":
            parts.append(_reference(getattr(block.resource, "uri", ""), cwd))
    return " ".join(part for part in parts if part)


def _reference(uri: str, cwd: str) -> str:
    parsed = urlparse(uri)
    if parsed.scheme not in ("", "file"):
        return ""  # only files of this machine are attached; a web address is the user's text
    path = unquote(parsed.path)
    if not path:
        return ""
    relative = os.path.relpath(path, cwd) if os.path.isabs(path) else path
    if not relative.startswith("..") and _REFERABLE.fullmatch(relative):
        return f"@{relative}"
    return f"(attached: `{path}`)"  # outside the folder, or a name `@` cannot hold
