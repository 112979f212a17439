"""Every text that came from a skills folder, by line: how a skill's script is recognised when
it is about to run under another name (pasted into `run_code`, into a cell, into a plan).

Discovery hands over each skills folder it looks in (`watch`): the project's (up to the
repository's root, above the workspace too), the user's, the administrator's and the imported
packages'. Every file in them is kept as its distinctive lines,
read through a `Workspace` rooted at the folder (no link out, never a secret file) and read
again when it changes. What a read tool returned from any other skills folder, and what
`load_skill` handed out, is kept too (`remember`), for the kernel's life.

Lines are compared with all their whitespace taken out and looked for anywhere in the code, so
re-indenting a script, joining its lines with `;` or wrapping it in `exec("...")` does not hide
it, and one line of it is enough; a line of the code found within a skill's line counts too (a
command quoted in a sentence of a `SKILL.md`). A line too common to tell a skill's text from anyone's (shorter
than `MIN_LINE_CHARS` without whitespace, an import, `if __name__ == "__main__":`) is not kept.
"""

from __future__ import annotations

import bisect
import itertools
import os
import re
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import ConfigError, SandboxError

if TYPE_CHECKING:
    from ...workspace.workspace import Workspace

MIN_LINE_CHARS = 20
"""Characters a line keeps without its whitespace to count: `print(df.head())` is anyone's."""
MAX_FILE_BYTES = 256 * 1024
"""A larger file in a skills folder is data, not a script a model pastes."""
MAX_FILES = 500
"""Files read from one skills folder."""
MAX_DEPTH = 8
_SPACE = re.compile(r"\s+")
_NUMBERED = re.compile(r"^\s*\d+\t")
"""read_file's `cat -n` prefix."""
_COMMON = re.compile(
    r"^(?:(?:from\s+\S+\s+)?import\s.*"
    r"""|if\s+__name__\s*==\s*['"]__main__['"]\s*:"""
    r"|#!.*|#.*coding[:=].*)$"
)
"""An import, the main guard, a shebang or an encoding line: in every script."""


@dataclass(frozen=True)
class _Read:
    """One file's distinctive lines, as of its size and change time."""

    stamp: tuple[int, int]
    lines: frozenset[str]


class _Index:
    """Every kept line, by its first `MIN_LINE_CHARS` characters (to find one in a code), and
    all of them as one text (to find a line of a code within one)."""

    def __init__(self, lines: dict[str, str]) -> None:
        self.by_start: dict[str, dict[str, str]] = {}
        for line, source in lines.items():
            self.by_start.setdefault(line[:MIN_LINE_CHARS], {})[line] = source
        self.sources = list(lines.values())
        self.starts = list(itertools.accumulate((len(line) + 1 for line in lines), initial=0))
        self.text = "\n".join(lines)

    def holding(self, flat: str) -> str:
        """The source of a kept line that the code (without whitespace) holds, or ''."""
        for at in range(len(flat) - MIN_LINE_CHARS + 1):
            for line, source in self.by_start.get(flat[at : at + MIN_LINE_CHARS], {}).items():
                if flat.startswith(line, at):
                    return source
        return ""

    def within(self, line: str) -> str:
        """The source of the kept line that holds this line of a code, or ''."""
        at = self.text.find(line)
        return self.sources[bisect.bisect_right(self.starts, at) - 1] if at >= 0 else ""


class SkillTexts:
    """The lines of every text from a skills folder this kernel has seen, and where each is from."""

    def __init__(self) -> None:
        self._folders: dict[Path, str] = {}
        self._remembered: dict[str, str] = {}
        self._files: dict[Path, _Read] = {}
        self._lock = threading.RLock()
        self._built: tuple[object, _Index] | None = None

    def watch(self, folder: Path, shown: str) -> None:
        """Keep every file in `folder` (a skills folder, missing or not yet made), shown as
        `shown` in a question."""
        with self._lock:
            self._folders.setdefault(folder, shown)

    def remember(self, text: str, source: str) -> None:
        """Keep the lines of a text that came from a skills file (`source` says which)."""
        lines = [_NUMBERED.sub("", line) for line in text.splitlines()]
        with self._lock:
            for line in distinctive(lines):
                self._remembered.setdefault(line, source)

    def found_in(self, code: str) -> str:
        """Where the skill's text that `code` holds comes from, or '' when it holds none: a
        skill's line within the code, or a line of the code within a skill's line (a command
        quoted in a sentence of a `SKILL.md`)."""
        with self._lock:
            index = self._index()
        if not index.sources:
            return ""
        found = index.holding(_SPACE.sub("", code))
        for line in distinctive(code.splitlines()):
            if found:
                break
            found = index.within(line)
        return found

    def _index(self) -> _Index:
        """The index of every kept line, built again when a file or the remembered lines
        changed."""
        lines: dict[str, str] = {}
        stamps: list[object] = [len(self._remembered)]
        for folder, shown in self._folders.items():
            for path, relative, read in self._read_folder(folder):
                stamps.append((path, read.stamp))
                for line in read.lines:
                    lines.setdefault(line, f"{shown}/{relative}")
        key = tuple(stamps)
        if self._built is not None and self._built[0] == key:
            return self._built[1]
        for line, source in self._remembered.items():
            lines.setdefault(line, source)
        self._built = (key, _Index(lines))
        return self._built[1]

    def _read_folder(self, folder: Path) -> Iterator[tuple[Path, str, _Read]]:
        """Each file of a skills folder with its lines, read again only when it changed."""
        if not folder.is_dir():
            return
        from ...workspace.workspace import Workspace  # not at the top: `%load_ext` stays light

        try:
            door = Workspace(folder, read_only=True)
        except ConfigError:  # a folder the Workspace refuses as a root: no file is read there
            return
        for relative in _files(door):
            path = door.root / relative  # inside the folder: the listing marks links out of it
            try:
                status = path.stat()
                stamp = (status.st_size, status.st_mtime_ns)
                read = self._files.get(path)
                if read is None or read.stamp != stamp:
                    read = _Read(stamp=stamp, lines=frozenset(_lines_of(door, relative, status)))
                    self._files[path] = read
            except (OSError, SandboxError):
                continue
            yield path, relative, read


def _lines_of(door: Workspace, relative: str, status: os.stat_result) -> Iterator[str]:
    """The distinctive lines of a text file; none of a secret, a large or a binary file."""
    if status.st_size > MAX_FILE_BYTES or door.secret(relative):
        return
    data = door.read_bytes(relative)
    if b"\0" not in data:
        yield from distinctive(data.decode("utf-8", errors="replace").splitlines())


def _files(door: Workspace) -> Iterator[str]:
    """The files in a skills folder, hidden ones too, links out of it not followed."""
    folders = [(".", 0)]
    count = 0
    while folders:
        folder, depth = folders.pop()
        try:
            entries = door.list_dir(folder)
        except (OSError, SandboxError):
            continue
        for entry in entries:
            if entry.outside:
                continue
            if entry.is_dir:
                if depth < MAX_DEPTH:
                    folders.append((entry.path, depth + 1))
                continue
            count += 1
            if count > MAX_FILES:
                return
            yield entry.path


def distinctive(lines: Iterable[str]) -> Iterator[str]:
    """The lines that tell a skill's text from anyone's, without their whitespace."""
    for line in lines:
        flat = _SPACE.sub("", line)
        if len(flat) >= MIN_LINE_CHARS and not _COMMON.match(line.strip()):
            yield flat


TEXTS = SkillTexts()
"""This kernel's: discovery, `load_skill` and the read tools add to it; the approval reads it."""
