"""Putting a checkpointed turn back on disk, and the report that tells the user what happened.

Everything that needs bytes written is staged first (temp files next to where they go), so a
failure while staging changes nothing; only then are files moved back, created paths removed,
folders recreated and the staged files renamed into place, each rename atomic.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ..jupyter.safe_html import Rendered, diff_html, escape

if TYPE_CHECKING:
    from .checkpoints import PathState, Turn

Action = Literal["restored", "recreated", "removed", "moved back", "kept", "not restored"]
MAX_RENDER_LINES = 400
"""Diff lines shown by `render_diff`; the rest is counted."""


@dataclass(frozen=True, kw_only=True)
class RestoredPath:
    """One path an undo dealt with, and how."""

    path: str
    action: Action
    detail: str = ""
    turn: str = ""
    """The label of the turn that was undone (its prompt)."""


def restore_turn(turn: Turn, rel: Callable[[Path], str]) -> list[RestoredPath]:
    """Put every path of `turn` back as it was before it; the caller has checked for conflicts."""
    items = sorted(turn.before.items())
    staged: dict[Path, str] = {}
    try:
        for path, state in items:
            if (state.kind == "file" and state.data is not None) or state.kind == "link":
                staged[path] = _stage(path, state)
    except BaseException:
        for tmp in staged.values():
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise
    done: dict[Path, RestoredPath] = {}

    def note(path: Path, action: Action, detail: str = "", *, folder: bool = False) -> None:
        shown = rel(path) + ("/" if folder else "")
        done[path] = RestoredPath(path=shown, action=action, detail=detail, turn=turn.label)

    for path, state in items:  # big files a move took elsewhere come back first
        if state.kind == "file" and state.data is None and state.moved_to is not None:
            if os.path.lexists(state.moved_to):
                path.parent.mkdir(parents=True, exist_ok=True)
                os.replace(state.moved_to, path)
                note(path, "moved back", f"from {rel(state.moved_to)}")
            else:
                note(path, "not restored", f"{rel(state.moved_to)} is gone")
    for path, state in items:  # what the turn created goes
        if state.kind == "missing" and os.path.lexists(path) and not os.path.isdir(path):
            os.unlink(path)
            note(path, "removed")
    for path, state in sorted(items, key=lambda item: -len(item[0].parts)):
        if state.kind == "missing" and os.path.isdir(path) and not os.path.islink(path):
            try:
                os.rmdir(path)
                note(path, "removed", folder=True)
            except OSError:
                note(path, "kept", "it is not empty", folder=True)
    for path, state in items:  # folders the turn deleted, shallow first (items are sorted)
        if state.kind == "dir":
            if not os.path.isdir(path):
                path.mkdir(parents=True, exist_ok=True)
                note(path, "recreated", folder=True)
            if state.mode is not None:
                os.chmod(path, state.mode)
    for path, state in items:
        if path in staged:
            existed = os.path.lexists(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staged[path], path)
            note(path, "restored" if existed else "recreated")
        elif state.kind == "file" and state.data is None and state.moved_to is None:
            note(path, "not restored", "too big to checkpoint; its earlier content was not kept")
    return [done[path] for path in sorted(done)]


def _stage(path: Path, state: PathState) -> str:
    """A temp file (or symlink) holding the old state, in the nearest folder that exists."""
    folder = path.parent
    while not folder.is_dir():
        folder = folder.parent
    for _ in range(100):
        tmp = str(folder / f".{path.name}.{secrets.token_hex(4)}.undo")
        if state.kind == "link":
            try:
                os.symlink(state.target or "", tmp)
            except FileExistsError:
                continue
            return tmp
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0))
        except FileExistsError:
            continue
        try:
            if state.mode is not None:
                os.chmod(tmp, state.mode)
            with os.fdopen(fd, "wb") as f:
                f.write(state.data or b"")
                f.flush()
                os.fsync(f.fileno())
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        return tmp
    raise FileExistsError(f"could not create a temporary file next to {path.name}")


# --- rendering -----------------------------------------------------------------------------------

_VERBS = {
    "restored": "restored",
    "recreated": "recreated (the turn had deleted it)",
    "removed": "removed (the turn had created it)",
    "moved back": "moved back",
    "kept": "kept",
    "not restored": "not restored",
}


def render_undo(restored: Sequence[RestoredPath]) -> Rendered:
    """`%copilot undo`: which turn was undone, and what happened to each path."""
    if not restored:
        return _paragraph(
            "Nothing to undo: no turn of this session changed a file (or all were undone)."
        )
    label = _one_line(restored[0].turn)
    items = [
        (item.path, _VERBS[item.action] + (f" — {item.detail}" if item.detail else ""))
        for item in restored[:100]
    ]
    loud = {item.path for item in restored[:100] if item.action == "not restored"}
    more = f"… and {len(restored) - 100} more" if len(restored) > 100 else ""
    lead = f"Undid the turn “{label}” ({len(restored)} path(s)):"
    markup = (
        f"<p>Undid the turn <strong>{escape(label)}</strong> ({len(restored)} path(s)):</p><ul>"
        + "".join(
            f"<li><code>{escape(path)}</code> "
            + (f"<strong>{escape(what)}</strong>" if path in loud else escape(what))
            + "</li>"
            for path, what in items
        )
        + (f"<li>{escape(more)}</li>" if more else "")
        + "</ul>"
    )
    plain = [
        lead,
        "",
        *(f"- {path} {what}" for path, what in items),
        *([f"- {more}"] if more else []),
    ]
    return Rendered(markup, "\n".join(plain))


def render_diff(diff: str, *, label: str = "", max_lines: int = MAX_RENDER_LINES) -> Rendered:
    """`%copilot diff`: a diffstat per file, then the unified diff (escaped, never fenced)."""
    if not diff.strip():
        return _paragraph(
            "No changes to show: the agent has not changed a file in this session's last turns."
        )
    stats = _diffstat(diff)
    lines = diff.rstrip("\n").split("\n")
    shown = lines[:max_lines]
    if len(lines) > max_lines:
        shown.append(f"… {len(lines) - max_lines:,} more diff lines not shown")
    counts = [(name, f"+{added} −{removed}") for name, (added, removed) in stats.items()]
    if label:
        lead = f"Changes of the turn “{_one_line(label)}”:"
        heading = f"Changes of the turn <strong>{escape(_one_line(label))}</strong>:"
    else:
        lead = heading = "Changes of the last turn:"
    markup = (
        f"<p>{heading}</p><ul>"
        + "".join(f"<li><code>{escape(name)}</code> {escape(n)}</li>" for name, n in counts)
        + "</ul>"
        + diff_html("\n".join(shown))
    )
    plain = [lead, "", *(f"- {name} {n}" for name, n in counts), "", *shown]
    return Rendered(markup, "\n".join(plain))


def _paragraph(text: str) -> Rendered:
    return Rendered(f"<p>{escape(text)}</p>", text)


_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def _diffstat(diff: str) -> dict[str, list[int]]:
    """{path: [added, removed]}, reading hunk lengths so a removed '-- x' line is not a header."""
    stats: dict[str, list[int]] = {}
    current, old_left, new_left = "", 0, 0
    for line in diff.splitlines():
        if old_left > 0 or new_left > 0:
            if line.startswith("+"):
                new_left -= 1
                stats[current][0] += 1
            elif line.startswith("-"):
                old_left -= 1
                stats[current][1] += 1
            elif not line.startswith("\\"):
                old_left, new_left = old_left - 1, new_left - 1
            continue
        hunk = _HUNK.match(line)
        if line.startswith(("--- ", "+++ ")):
            name = line[4:].removeprefix("a/").removeprefix("b/")
            current = "" if line.startswith("--- ") else current
            if name != "/dev/null":
                current = name
        elif hunk and current:
            old_left, new_left = (int(n) if n is not None else 1 for n in hunk.groups())
        elif line.startswith("Binary or large file "):
            current = line.removeprefix("Binary or large file ").rsplit(" changed", 1)[0]
        else:
            continue
        if current:
            stats.setdefault(current, [0, 0])
    return stats


def _one_line(text: str, limit: int = 80) -> str:
    line = text.strip().splitlines()[0] if text.strip() else "(no label)"
    return line if len(line) <= limit else line[: limit - 1] + "…"
