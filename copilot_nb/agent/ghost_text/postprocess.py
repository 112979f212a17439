"""A model's completion made fit to show as ghost text: pure functions, applied in order.

What good editors do with a raw completion (Copilot's `trim_by_indentation`, Continue's and
Tabby's post-processing), because models, chat models above all, answer with more than belongs
at the cursor:

1. `strip_fences`: a Markdown fence around the code is taken off (the code inside is kept).
2. `drop_prefix_repeat`: text that repeats what is already before the cursor (the current line,
   or the whole cell) is taken off.
3. `keep_indentation`: a first line that repeats the cursor's indentation loses the repeat.
4. `stop_at_block_end`: the cursor mid-line gets one line; else the completion stops where the
   block it is in ends (a line indented less than the cursor's, or a blank line at top level).
5. `drop_suffix_repeat`: text that repeats what follows the cursor (a closing bracket, the next
   line) is taken off.
6. `cap`: at most `max_chars`, cut at a line end where there is one.
"""

from __future__ import annotations

import re

_FENCE = re.compile(r"^[ \t]*(```|~~~)[\w+.-]*[ \t]*$")


def postprocess(text: str, prefix: str, suffix: str, *, max_chars: int = 2000) -> str:
    """All the steps; '' when nothing worth showing is left."""
    text = strip_fences(text)
    text = drop_prefix_repeat(text, prefix)
    text = keep_indentation(text, prefix)
    text = stop_at_block_end(text, prefix, suffix)
    text = drop_suffix_repeat(text, suffix, prefix)
    text = cap(text, max_chars)
    return text if text.strip() else ""


def strip_fences(text: str) -> str:
    """The code inside the first fenced block; a fence left open keeps everything after it."""
    lines = text.split("\n")
    opening = next((i for i, line in enumerate(lines) if _FENCE.match(line)), None)
    if opening is None:
        return text
    inner = lines[opening + 1 :]
    closing = next((i for i, line in enumerate(inner) if _FENCE.match(line)), None)
    if closing is not None:
        inner = inner[:closing]
    return "\n".join(inner)


def drop_prefix_repeat(text: str, prefix: str, *, least: int = 2) -> str:
    """Take off the longest end of the prefix that the text starts by writing again: whole last
    lines, or the current line's last words (`df.` before `df.sum()`), at least `least`
    characters and starting where a word starts, so a genuine `sum` after `s` is kept."""
    if not text or not prefix:
        return text
    lines = prefix.split("\n")
    size = len(prefix)  # of the tail from this line on; only a tail the text can hold is built
    for line in lines:  # longest tail of the prefix first
        if size <= len(text):
            tail = prefix[len(prefix) - size :]
            if len(tail.strip()) >= least and text.startswith(tail):
                return text[size:]
        size -= len(line) + 1
    current = lines[-1]
    stripped = text.lstrip(" \t")
    for size in range(min(len(current), len(stripped)), least - 1, -1):
        piece = current[-size:]
        at_word_start = size == len(current) or not _is_word(current[-size - 1])
        if at_word_start and piece.strip() == piece and stripped.startswith(piece):
            return stripped[size:]
    return text


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"


def keep_indentation(text: str, prefix: str) -> str:
    """At an indented empty line, a first line that indents again loses that second indent."""
    current = prefix.rsplit("\n", 1)[-1]
    if not current or current.strip():
        return text
    if text.startswith(current):
        return text[len(current) :]
    return text


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" \t"))


def stop_at_block_end(text: str, prefix: str, suffix: str) -> str:
    """One line when the cursor is mid-line; else up to where the cursor's block ends."""
    rest_of_line = suffix.split("\n", 1)[0]
    if rest_of_line.strip():
        return text.split("\n", 1)[0]
    current = prefix.rsplit("\n", 1)[-1]
    base = _indent(current)
    first, *more = text.split("\n")
    opened = first.rstrip().endswith(":")  # then the block ends at the next line at column 0
    kept = [first]
    for line in more:
        if not line.strip():
            if base == 0 and not opened:
                break
            kept.append(line)
            continue
        if _indent(line) < base or (base == 0 and opened and _indent(line) == 0):
            break
        kept.append(line)
    while len(kept) > 1 and not kept[-1].strip():
        kept.pop()
    return "\n".join(kept)


def drop_suffix_repeat(text: str, suffix: str, prefix: str = "") -> str:
    """Take off a last line that the suffix begins with, and a tail of the text that the
    suffix's first line starts with (a closing bracket already there). A closing bracket is
    taken off only when the text closes what the line opened: `print(` + `foo(bar)` keeps its
    `)`, which closes `foo(`, while `print(df.` + `sum())` gives one up to the suffix's."""
    if not text or not suffix:
        return text
    upcoming = next((line.strip() for line in suffix.split("\n") if line.strip()), "")
    lines = text.split("\n")
    if upcoming and len(lines) > 1:
        for index in range(1, len(lines)):
            if lines[index].strip() == upcoming:
                text = "\n".join(lines[:index]).rstrip(" \t")
                break
    head = suffix.split("\n", 1)[0]
    current = prefix.rsplit("\n", 1)[-1]
    for size in range(min(len(head), len(text)), 0, -1):
        tail = head[:size]
        if not text.endswith(tail) or not tail.strip():
            continue
        if any(c in _CLOSING for c in tail) and _balance(current + text) > 0:
            continue
        return text[:-size]
    return text


_OPENING, _CLOSING = "([{", ")]}"


def _balance(code: str) -> int:
    """Brackets opened and not closed (negative: closed more than opened), strings ignored
    roughly (a bracket inside quotes on the line is rare at the cursor)."""
    return sum(code.count(c) for c in _OPENING) - sum(code.count(c) for c in _CLOSING)


def cap(text: str, max_chars: int) -> str:
    """At most `max_chars`, cut at the last line end before the limit where there is one."""
    if len(text) <= max_chars:
        return text
    cut = text.rfind("\n", 0, max_chars)
    return text[: cut if cut > 0 else max_chars]
