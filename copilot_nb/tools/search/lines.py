"""search_text's lines: its pattern compiled for a line at a time (the text of many lines, or
files, is searched at once: \\A and \\Z mean a line's start and end) and again for ASCII bytes,
which the engine searches without decoding them; lines as an editor shows them, their numbers,
and a long one clipped around its match."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ...errors import ToolError
from ...text import shorten

MAX_MATCH_CHARS = 300
"""Characters shown of one matching line, around the match."""

_STRING_ANCHOR = re.compile(r"(?<!\\)((?:\\\\)*)\\([AZ])")


def compile_regex(regex: str) -> Any:
    """The pattern for line-by-line search, or a ToolError that says how to fix it."""
    import regex as regex_module  # 10 ms; only a search needs it

    try:
        return regex_module.compile(_per_line(regex), regex_module.MULTILINE)
    except regex_module.error as exc:
        where = f" at position {exc.pos}" if exc.pos is not None else ""
        raise ToolError(
            f"search_text: {regex!r} is not a valid Python regular expression "
            f"({exc.msg}{where}); escape characters such as ( [ . * + ? with \\ to match "
            "them literally"
        ) from exc
    except (RecursionError, OverflowError, MemoryError) as exc:
        raise ToolError(
            f"search_text: the regex {shorten(regex, 120)!r} is too deeply nested or too large to "
            "compile; search for a simpler pattern"
        ) from exc


def for_ascii_bytes(pattern: Any) -> Any:
    """The same pattern for ASCII bytes, or None when it has characters beyond ASCII."""
    import regex as regex_module

    try:
        return regex_module.compile(
            pattern.pattern.encode("ascii"), pattern.flags & ~regex_module.UNICODE
        )
    except (UnicodeEncodeError, regex_module.error):
        return None


def _per_line(regex: str) -> str:
    r"""Lines are searched one by one, so \A and \Z mean a line's start and end: ^ and $."""
    return _STRING_ANCHOR.sub(lambda m: m.group(1) + ("^" if m.group(2) == "A" else "$"), regex)


def as_lines(data: bytes, ascii_ok: bool) -> Any:
    """Lines as an editor shows them (CRLF as LF, so `$` works): ASCII bytes or decoded text."""
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").removesuffix(b"\r")
    if ascii_ok and data.isascii():
        return data
    return data.decode("utf-8", errors="replace")


def clip_line(line: str, column: int) -> str:
    """A long line shown around its match, with … where it was cut."""
    line = line.rstrip()
    if len(line) <= MAX_MATCH_CHARS:
        return line
    start = max(0, min(column - MAX_MATCH_CHARS // 3, len(line) - MAX_MATCH_CHARS))
    piece = line[start : start + MAX_MATCH_CHARS]
    return ("…" if start else "") + piece + ("…" if start + MAX_MATCH_CHARS < len(line) else "")


class LineCounter:
    """The line number at a position of a big file, counting from the last one asked."""

    def __init__(self, data: bytes) -> None:
        self.data, self.position, self.line = data, 0, 1

    def at(self, position: int) -> int:
        self.line += self.data.count(b"\n", self.position, position)
        self.position = position
        return self.line


FirstLine = int | Callable[[], int]
"""The number of a text's first line, or how to count it when a match needs it."""


__all__ = ["FirstLine", "LineCounter", "as_lines", "clip_line", "compile_regex", "for_ascii_bytes"]
