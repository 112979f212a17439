"""Text edits shared by `edit_file` and `edit_cell`: exactly-once matching, its errors, diffs."""

from __future__ import annotations

from ..text import editor_lines

MAX_DIFF_LINES = 80
"""Lines of diff put into an edit's result for the model (the change event has it all)."""


def occurrences(text: str, old: str) -> list[int]:
    """Start offsets of old in text, overlapping ones too (they make an edit ambiguous)."""
    starts: list[int] = []
    at = text.find(old)
    while at != -1:
        starts.append(at)
        at = text.find(old, at + 1)
    return starts


def match_problem(
    tool: str,
    reader: str,
    shown: str,
    text: str,
    old: str,
    starts: list[int],
    *,
    current: str = "the current text",
) -> str:
    """Why old_str did not match exactly once, and what to send instead (for edit_file, edit_cell)."""
    if starts:
        numbers = [text.count("\n", 0, at) + 1 for at in starts]
        listed = ", ".join(map(str, numbers[:10])) + (", …" if len(numbers) > 10 else "")
        return (
            f"{tool}: old_str appears {len(starts)} times in {shown} (lines {listed}); "
            "include more surrounding lines so it matches once"
        )
    near = loose_match(editor_lines(text), old)
    if near is not None:
        where = f"line {near[0]}" if near[0] == near[1] else f"lines {near[0]}-{near[1]}"
        return (
            f"{tool}: old_str was not found in {shown}, but text that differs only in "
            f"whitespace is at {where}; copy it exactly (including indentation) from {reader}"
        )
    return (
        f"{tool}: old_str was not found in {shown}; call {reader} to see {current} "
        "and copy old_str exactly, including whitespace and indentation"
    )


def loose_match(lines: list[str], old: str) -> tuple[int, int] | None:
    """First (start, end) line span matching old when all runs of whitespace are ignored."""
    want = [" ".join(part.split()) for part in editor_lines(old)]
    if not any(want):
        return None
    have = [" ".join(line.split()) for line in lines]
    n = len(want)
    for i in range(len(have) - n + 1):
        window = have[i : i + n]
        if n == 1:
            hit = want[0] in window[0]
        else:
            hit = (
                window[0].endswith(want[0])
                and window[-1].startswith(want[-1])
                and window[1:-1] == want[1:-1]
            )
        if hit:
            return i + 1, i + n
    return None


def clip_diff(diff: str) -> str:
    lines = diff.splitlines()
    if len(lines) <= MAX_DIFF_LINES:
        return diff.rstrip("\n")
    rest = len(lines) - MAX_DIFF_LINES
    return "\n".join([*lines[:MAX_DIFF_LINES], f"… {rest:,} more diff lines not shown"])
