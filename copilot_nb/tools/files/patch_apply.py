"""Applying a patch's hunks to a file's text (`patch.py` reads the patch): each hunk found from
where the last one ended, with its context lines compared ever more loosely (exact, then without
trailing spaces, then stripped, then with typographic punctuation made plain), so a model's copy
of the file need not match byte for byte; a hunk not found says where it looked."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..text_edits import editor_lines, loose_match
from .patch import END_OF_FILE, Hunk, PatchError, UpdateFile

_PUNCTUATION = str.maketrans(
    {
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-"),
        **dict.fromkeys("\u2018\u2019\u201a\u201b", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f", '"'),
        **dict.fromkeys("\u00a0\u2002\u2003\u2009\u202f", " "),
    }
)
_LEVELS: tuple[Callable[[str], str], ...] = (
    lambda s: s,
    str.rstrip,
    str.strip,
    lambda s: s.strip().translate(_PUNCTUATION),
)
"""How strictly lines are compared: the first level with a match decides."""


def apply_hunks(text: str, op: UpdateFile, shown: str) -> str:
    """The file's text with every hunk of `op` applied (line ends and the final newline kept)."""
    newline = "\r\n" if "\r\n" in text else "\n"
    lines = editor_lines(text)
    final_newline = text.endswith("\n") or not text
    cursor = 0
    edits: list[tuple[int, int, list[str]]] = []
    for hunk in op.hunks:
        for header in hunk.headers:
            found = _find_header(lines, header, cursor)
            if found is None:
                raise PatchError(
                    f"line {hunk.line}: the @@ line {header!r} was not found in {shown}"
                    f"{_below(cursor)}; name a line that is in the file, as it is written"
                )
            cursor = found + 1
        if not hunk.old:  # only added lines: they go at the end of the file
            edits.append((len(lines), 0, list(hunk.new)))
            continue
        starts = _find_block(lines, hunk.old, cursor, at_end=hunk.at_end)
        if not starts:
            raise PatchError(_not_found(lines, hunk, cursor, shown))
        if len(starts) > 1 and not hunk.headers:
            listed = ", ".join(str(s + 1) for s in starts[:10]) + (", …" if starts[10:] else "")
            raise PatchError(
                f"line {hunk.line}: the hunk's context matches {len(starts)} places in {shown}"
                f"{_below(cursor)} (lines {listed}); add more context lines, or an '@@' line "
                "naming the function or class it is in, so it matches once"
            )
        end = starts[0] + len(hunk.old)
        edits.append((starts[0], len(hunk.old), hunk.replace(lines[starts[0] : end])))
        cursor = end
    for start, length, new in sorted(edits, key=lambda e: e[0], reverse=True):
        lines[start : start + length] = new
    return newline.join(lines) + (newline if final_newline and lines else "")


def _below(cursor: int) -> str:
    return f" below line {cursor}" if cursor else ""


def _find_header(lines: Sequence[str], header: str, cursor: int) -> int | None:
    """The first line from `cursor` that is the header (or, failing that, contains it)."""
    for level in _LEVELS:
        want = level(header)
        for i in range(cursor, len(lines)):
            if level(lines[i]) == want:
                return i
    want = header.strip()
    return next((i for i in range(cursor, len(lines)) if want in lines[i]), None)


def _find_block(
    lines: Sequence[str], old: Sequence[str], cursor: int, *, at_end: bool
) -> list[int]:
    """Where `old` starts from `cursor` on, at the strictest level that finds it."""
    n = len(old)
    candidates = [len(lines) - n] if at_end else range(cursor, len(lines) - n + 1)
    for level in _LEVELS:
        want = [level(line) for line in old]
        found = [
            i
            for i in candidates
            if i >= cursor and all(level(lines[i + k]) == want[k] for k in range(n))
        ]
        if found:
            return found
    return []


def _not_found(lines: Sequence[str], hunk: Hunk, cursor: int, shown: str) -> str:
    """Why a hunk's lines are not where it says, with the closest thing the file has."""
    span = f"line {hunk.line}"
    head = f"{span}: the hunk's context and removed lines were not found in {shown}"
    first = next((line for line in hunk.old if line.strip()), hunk.old[0])
    if cursor and _find_block(lines, hunk.old, 0, at_end=hunk.at_end):
        return (
            f"{head}{_below(cursor)}, only above it; put the hunks of a file in the order "
            "their lines appear in it"
        )
    if hunk.at_end and _find_block(lines, hunk.old, cursor, at_end=False):
        return f"{head} at the end of the file; drop '{END_OF_FILE}' or move the hunk"
    near = loose_match(list(lines), "\n".join(hunk.old))
    if near is not None:
        return (
            f"{head} as written; text that differs only in whitespace is at lines "
            f"{near[0]}-{near[1]}; read the file and copy the lines exactly"
        )
    return (
        f"{head}{_below(cursor)} (the first is {first!r}); read the file again and copy "
        "the context and removed lines exactly as they are"
    )
