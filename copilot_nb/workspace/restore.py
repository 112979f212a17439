"""Putting a checkpointed turn back on disk.

Everything that needs bytes written is staged first (temp files next to where they go), so a
failure while staging changes nothing; only then are files moved back, created paths removed,
folders recreated and the staged files renamed into place, each rename atomic.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .snapshots import PathState, Turn

Action = Literal["restored", "recreated", "removed", "moved back", "kept", "not restored"]


@dataclass(frozen=True, kw_only=True)
class RestoredPath:
    """One path an undo dealt with, and how."""

    path: str
    action: Action
    detail: str = ""
    turn: str = ""
    """The label of the turn that was undone (its prompt)."""


def restore_turn(turn: Turn, rel: Callable[[Path], str]) -> list[RestoredPath]:  # noqa: C901, PLR0912 - the undo's phases in the one order that is safe, read top to bottom
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
