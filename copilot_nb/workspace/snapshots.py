"""What a path was and what the agent left there: the records a checkpoint keeps and undo reads."""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

Kind = Literal["missing", "file", "dir", "link"]


@dataclass(frozen=True, kw_only=True)
class PathState:
    """A path as it was: its kind, and for a file its bytes (None when too big to keep)."""

    kind: Kind
    data: bytes | None = None
    mode: int | None = None
    target: str | None = None
    key: tuple[int, int, int] | None = None
    """(size, mtime_ns, inode) when captured: an unchanged file keeps all three."""
    moved_to: Path | None = None
    """For a file too big to keep that a move took elsewhere: undo moves it back."""


@dataclass(frozen=True, kw_only=True)
class Seen:
    """What the agent left at a path: kind, stat key, and the sha256 of a file's bytes if known."""

    kind: Kind
    key: tuple[int, int, int] | None = None
    digest: str | None = None
    target: str | None = None


@dataclass(kw_only=True, eq=False)
class Turn:
    """The paths one turn changed: their state before the turn, and what the agent left."""

    label: str
    before: dict[Path, PathState] = field(default_factory=dict)
    after: dict[Path, Seen] = field(default_factory=dict)
    kept_bytes: int = 0
    cells: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)
    """Changes made in open notebooks: (notebook, the changes that take one back), in order."""
    others: list[OtherChange] = field(default_factory=list)
    """Changes outside files and notebooks that can be taken back (the kernel's variables)."""
    awaited: int = 0
    """Changes still to come: runs of this turn that go on after it (`Checkpoints.hold`)."""

    @property
    def changed(self) -> bool:
        return bool(self.before or self.cells or self.others or self.awaited)


class OtherChange(Protocol):
    """A change a turn made outside the workspace's files that undo can take back."""

    def changed_since(self) -> list[str]:
        """What changed after the turn's change, that taking it back would overwrite."""
        ...

    def take_back(self) -> tuple[str, bool, str]:
        """Take it back: (what it was, whether it was put back, detail)."""
        ...


def capture(path: Path, *, keep_data: bool = True) -> PathState:
    """The state of one path, not following a final symlink."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return PathState(kind="missing")
    mode = stat.S_IMODE(st.st_mode)
    if stat.S_ISLNK(st.st_mode):
        return PathState(kind="link", target=os.readlink(path))
    if stat.S_ISDIR(st.st_mode):
        return PathState(kind="dir", mode=mode)
    key = (st.st_size, st.st_mtime_ns, st.st_ino)
    data = path.read_bytes() if keep_data else None
    return PathState(kind="file", data=data, mode=mode, key=key)


def seen(path: Path, data: bytes | None = None) -> Seen:
    """A fingerprint of what is at a path now; `data` is what the agent wrote there, if known."""
    state = capture(path, keep_data=False)
    digest = hashlib.sha256(data).hexdigest() if data is not None and state.kind == "file" else None
    return Seen(kind=state.kind, key=state.key, digest=digest, target=state.target)
