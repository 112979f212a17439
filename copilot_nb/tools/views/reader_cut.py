"""Long output cut where a reader would cut it, saying how much was left out and how to see it.

A DataFrame's text keeps its header, first and last rows and its `[N rows x M columns]` line; a
traceback keeps its first line, its last frames and the error; any other text keeps its start
and its end, cut at line ends. A base64 block (a data URL, an encoded image printed to stdout)
is never cut through: it becomes `[base64, 51.2 KB left out]` first, since a model can read
nothing from it. No cut falls inside a character that is drawn from several code points (a
combining accent, an emoji joined by ZWJ, a flag's pair).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from ...text import human_bytes

MIN_BASE64_CHARS = 120
"""Shorter runs of base64 letters are left alone: a hash, an identifier, a path."""

_BASE64 = re.compile(
    r"(?:data:[\w.+-]+/[\w.+-]+;base64,)?"
    r"[A-Za-z0-9+/]{60,}={0,2}(?:\r?\n[A-Za-z0-9+/]{60,}={0,2})*"
    r"(?:\r?\n(?=[A-Za-z0-9+/]*[0-9+/=])[A-Za-z0-9+/]{1,59}={0,2}(?![A-Za-z0-9+/]))?"
)
"""A base64 block, wrapped or not: its short last line must hold a digit, `+`, `/` or `=`, so
a word on the next line is not taken for one."""
_SHAPE = re.compile(r"^\[(\d[\d,]*) rows x (\d[\d,]*) columns\]$")
_FRAME = re.compile(r"^\s*(?:File [\"~/\\\w.<]|Cell In\[|<ipython-input-|Input In \[)")
_ERROR = re.compile(r"^[A-Za-z_][\w.]*(?:Error|Exception|Warning|Interrupt|Exit|Iteration)\b")
_JOINERS = {"\u200d", "\u20e3", "\ufe0e", "\ufe0f"}


def cut_for_reader(text: str, limit: int, *, tail: int | None = None) -> str:
    """`text` in about `limit` characters, cut as its kind asks (see the module docstring);
    `tail`: characters of a plain text's end kept (a third of `limit` unless given)."""
    if len(text) <= limit:
        return text
    text = collapse_base64(text)
    if len(text) <= limit:
        return text
    shaped: tuple[Callable[[str, int], str | None], ...] = (_frame_cut, _traceback_cut)
    for cut in shaped:
        found = cut(text, limit)
        if found is not None:
            return found
    return ends(text, limit, limit // 3 if tail is None else tail)


def collapse_base64(text: str) -> str:
    """Each long base64 block replaced by a line that names its size."""

    def named(match: re.Match[str]) -> str:
        block = match.group()
        letters = re.sub(
            r"\s+", "", block.split(",", 1)[-1] if block.startswith("data:") else block
        )
        if len(letters) < MIN_BASE64_CHARS or not _mixed(letters):
            return block
        kind = block[5 : block.index(";")] + " " if block.startswith("data:") else ""
        return f"[{kind}base64, {human_bytes(len(letters) * 3 // 4)} left out]"

    return _BASE64.sub(named, text)


def _mixed(letters: str) -> bool:
    """Upper and lower case letters and digits all present: how encoded bytes look."""
    return (
        any(c.isupper() for c in letters)
        and any(c.islower() for c in letters)
        and any(c.isdigit() for c in letters)
    )


def ends(text: str, limit: int, tail: int, *, more: str = "print a slice of it") -> str:
    """The start and the last `tail` characters of `text`, cut at line ends where one is near."""
    keep_tail = min(tail, limit)
    head_end = head_cut(text, limit - keep_tail)
    tail_start = max(tail_cut(text, len(text) - keep_tail), head_end)
    return join_cut(text[:head_end], text[head_end:tail_start], text[tail_start:], more=more)


def head_cut(text: str, at: int) -> int:
    """Where to end a kept start of about `at` characters: after a line end if one is in the
    second half, and never inside a drawn character."""
    at = max(0, min(at, len(text)))
    newline = text.rfind("\n", 0, at)
    if newline >= at // 2 and newline >= 0:
        return newline + 1
    return _safe(text, at)


def tail_cut(text: str, at: int) -> int:
    """Where to start a kept end beginning about at `at`: at a line start if one is near."""
    at = max(0, min(at, len(text)))
    newline = text.find("\n", at)
    if newline >= 0 and newline - at <= (len(text) - at) // 2:
        return newline + 1
    return _safe(text, at)


def join_cut(head: str, gone: str, end: str, *, more: str = "print a slice of it") -> str:
    """`head`, a line saying how much of `gone` was left out (and how to see it), `end`."""
    if not gone:
        return head + end
    lines = gone.count("\n")
    size = f"{lines:,} lines, {len(gone):,}" if lines > 1 else f"{len(gone):,}"
    hint = f" ({more} to see it)" if more else ""
    return f"{head.rstrip(chr(10))}\n… [{size} characters cut] …{hint}\n{end}"


def _safe(text: str, at: int) -> int:
    """`at`, moved back to the start of the character drawn there (accents, ZWJ, flags)."""
    while 0 < at < len(text):
        here, before = text[at], text[at - 1]
        if unicodedata.combining(here) or here in _JOINERS or before == "\u200d":
            at -= 1
        else:
            break
    flags = 0  # regional indicators pair up into flags from the start of their run
    while flags < at and _regional(text[at - 1 - flags]):
        flags += 1
    return at - 1 if flags % 2 and at < len(text) and _regional(text[at]) else at


def _regional(char: str) -> bool:
    return "\U0001f1e6" <= char <= "\U0001f1ff"


def _frame_cut(text: str, limit: int) -> str | None:
    """A pandas DataFrame's text: header, first and last rows, and its shape line."""
    lines = text.rstrip("\n").split("\n")
    if len(lines) < 4 or not _SHAPE.match(lines[-1].strip()) or "" in lines[1:-2]:
        return None  # not a frame, or a wide one pandas wrapped in blocks: cut as text
    shape = lines[-1]
    header, rows = lines[:1], lines[1:-1]
    while rows and rows[-1].strip() == "":
        rows.pop()
    if rows and not rows[0][:1].strip() and rows[0].strip() and len(header) == 1:
        header, rows = lines[:2], rows[1:]  # the index's name on a line of its own
    room = limit - sum(len(line) + 1 for line in header) - len(shape) - 80
    keep = len(rows)
    while (
        keep > 2 and sum(len(r) + 1 for r in rows[: keep - keep // 2] + rows[-(keep // 2) :]) > room
    ):
        keep -= 1
    if keep >= len(rows):
        return None
    first, last = rows[: keep - keep // 2], rows[len(rows) - keep // 2 :]
    cut = len(rows) - len(first) - len(last)
    marker = f"… [{cut:,} rows cut] … (print df.iloc[i:j] to see them)"
    shown = "\n".join([*header, *first, marker, *last, shape])
    return shown if len(shown) <= limit * 1.2 else None


def _traceback_cut(text: str, limit: int) -> str | None:
    """A traceback: its first line, the last frames that fit, and the error at its end."""
    lines = text.rstrip("\n").split("\n")
    frames = [i for i, line in enumerate(lines) if _FRAME.match(line)]
    error = next((i for i in range(len(lines) - 1, -1, -1) if _ERROR.match(lines[i])), None)
    if len(frames) < 2 or error is None or error < frames[-1]:
        return None
    tail = "\n".join(lines[error:])
    if len(tail) > limit // 2:
        tail = ends(tail, limit // 2, limit // 4)
    first = "\n".join(lines[: frames[0]])[:300]  # `Traceback (most recent call last):`
    room = limit - len(first) - len(tail) - 80
    start = frames[-1]
    for i in reversed(frames[:-1]):
        if i <= 0 or sum(len(line) + 1 for line in lines[i:error]) > room:
            break
        start = i
    kept = "\n".join(lines[start:error])
    if len(kept) > room:
        kept = ends(kept, max(room, 200), max(room, 200) // 2)
    gone = frames.index(start)
    marker = f"… [{gone:,} earlier frames cut] … (traceback.print_exc() shows all)" if gone else ""
    return "\n".join(part for part in (first, marker, kept, tail) if part)
