"""Walking the workspace as git sees it: `.git` and gitignored paths skipped, globs matched.

`.gitignore` files apply at every depth (a deeper one wins, `!` re-includes), as does
`.git/info/exclude`; an ignored folder is not entered. Symlinks are not followed (as `grep -r`
and ripgrep do), so a walk never leaves the root and never loops. `walk_glob` is the door the
tools use: the glob is checked (`globs.py`) and the folder it starts in is resolved through the
`Workspace`, so a walk cannot begin outside the root either; a stop event ends it between files.
`FolderOpener` opens the files a walk yields, in order, relative to their folder.
"""

from __future__ import annotations

import asyncio
import os
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from ...workspace.globs import Glob, GlobError, compile_glob
from ...workspace.workspace import Workspace

if TYPE_CHECKING:
    import pathspec

T = TypeVar("T")
_FOLDER_FLAGS = getattr(os, "O_PATH", os.O_RDONLY) | getattr(os, "O_DIRECTORY", 0)
_AT_FOLDER = os.open in os.supports_dir_fd
ALWAYS_SKIPPED = frozenset({".git", ".ipynb_checkpoints"})
"""Folders never walked: git's store, and Jupyter's copies of every notebook."""


class Stopped(Exception):
    """The run was stopped: a walk, and the work on the files it yields, end here."""


async def stoppable(work: Callable[[threading.Event], T]) -> T:
    """Run blocking work in a thread; cancelling the awaiting task (Stop) sets the event the
    work checks, so it ends soon rather than running on unseen in the background."""
    stop = threading.Event()
    try:
        return await asyncio.to_thread(work, stop)
    except asyncio.CancelledError:
        stop.set()
        raise


def walk_glob(
    workspace: Workspace, glob: Glob | None, stop: threading.Event | None = None
) -> Iterator[tuple[str, str]]:
    """The files a glob matches (all files for None), walked from the glob's literal folder.

    That folder goes through `Workspace.resolve` first: SandboxError if it leads out. Raises
    Stopped before the next folder once `stop` is set.
    """
    start = glob.start if glob is not None else ""
    if start:
        workspace.resolve(start)
    keep = glob.matches if glob is not None else None
    yield from walk_files(workspace.root, start, keep=keep, stop=stop)


def walk_files(
    root: Path,
    start: str = "",
    *,
    keep: Callable[[str], bool] | None = None,
    stop: threading.Event | None = None,
) -> Iterator[tuple[str, str]]:
    """(root-relative posix path, absolute path) of every file git would see, in sorted order;
    only those `keep` accepts, and Stopped before the next folder once `stop` is set."""
    specs: list[tuple[str, _Rules]] = []
    exclude = root / ".git" / "info" / "exclude"
    if exclude.is_file():
        specs.append(("", _spec(exclude)))
    base = root
    prefix = ""
    parts = [p for p in start.split("/") if p not in ("", ".")]
    if ".." in re.split(r"[/\\]", start) or os.path.isabs(start):
        raise GlobError(f"walk start {start!r} leaves the workspace")
    for part in parts:  # the gitignores above the start folder apply
        specs.extend(_folder_spec(base, prefix))
        if part in ALWAYS_SKIPPED or _ignored(specs, prefix + part + "/"):
            return
        base, prefix = base / part, prefix + part + "/"
        if base.is_symlink() or not base.is_dir():
            return
    yield from _walk(base, prefix, specs, keep, stop)


def _walk(
    top: Path,
    top_prefix: str,
    top_specs: list[tuple[str, _Rules]],
    keep: Callable[[str], bool] | None,
    stop: threading.Event | None,
) -> Iterator[tuple[str, str]]:
    """Depth-first in sorted order, with an explicit stack rather than a generator per folder."""
    stack: list[tuple[str, str, list[tuple[str, _Rules]] | None]] = [
        (str(top), top_prefix, top_specs)
    ]
    while stack:
        path, relative, specs = stack.pop()
        if specs is None:  # a file
            yield relative, path
            continue
        if stop is not None and stop.is_set():
            raise Stopped
        try:
            with os.scandir(path) as it:
                entries = sorted(it, key=lambda e: e.name, reverse=True)
        except OSError:
            continue
        if any(e.name == ".gitignore" for e in entries):
            specs = [*specs, *_folder_spec(Path(path), relative)]
        for entry in entries:
            inner = relative + entry.name
            if entry.is_symlink():
                continue
            try:
                is_dir = entry.is_dir()
            except OSError:
                continue
            if is_dir:
                if entry.name in ALWAYS_SKIPPED:
                    continue
                if not (specs and _ignored(specs, inner + "/")):
                    stack.append((entry.path, inner + "/", specs))
            elif not (specs and _ignored(specs, inner)) and (keep is None or keep(inner)):
                stack.append((entry.path, inner, None))


class FolderOpener:
    """Files opened relative to their folder, kept open while its files come: the kernel then
    looks up one name per file, not each folder of its path again (as grep does; opening is
    most of the time a search of many small files takes)."""

    def __init__(self) -> None:
        self.path, self.fd = "", -1

    def open(self, path: str, flags: int) -> int:
        folder, _, name = path.rpartition(os.sep)
        if not (folder and _AT_FOLDER):
            return os.open(path, flags)
        if folder != self.path:
            self.close()
            try:
                self.fd = os.open(folder, _FOLDER_FLAGS)
            except OSError:  # e.g. no O_PATH and a folder we may not list: open the file itself
                return os.open(path, flags)
            self.path = folder
        return os.open(name, flags, dir_fd=self.fd)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
        self.path, self.fd = "", -1


def _folder_spec(folder: Path, prefix: str) -> list[tuple[str, _Rules]]:
    path = folder / ".gitignore"
    return [(prefix, _spec(path))] if path.is_file() else []


_NAMED_GROUP = re.compile(r"\(\?P<\w+>")


class _Rules:
    """One ignore file's patterns, with a combined regex that rules most paths out at once."""

    def __init__(self, lines: list[str]) -> None:
        import pathspec  # at the first ignore file: kept off the agent's import

        self.spec: pathspec.GitIgnoreSpec = pathspec.GitIgnoreSpec.from_lines(lines)
        parts = [
            "(?:" + _NAMED_GROUP.sub("(?:", p.regex.pattern) + ")"
            for p in self.spec.patterns
            if p.include is not None and isinstance(p.regex, re.Pattern)
        ]
        try:
            self.any: re.Pattern[str] | None = re.compile("|".join(parts)) if parts else None
        except re.error:
            self.any = None

    def decide(self, relative: str) -> bool | None:
        if self.any is not None and self.any.search(relative) is None:
            return None
        return self.spec.check_file(relative).include


def _spec(path: Path) -> _Rules:
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    return _Rules(lines)


def _ignored(specs: list[tuple[str, _Rules]], relative: str) -> bool:
    """The last .gitignore with an opinion decides, as git's deeper files override higher ones."""
    decision = False
    for base, rules in specs:
        if not relative.startswith(base):
            continue
        result = rules.decide(relative[len(base) :])
        if result is not None:
            decision = result
    return decision


__all__ = [
    "ALWAYS_SKIPPED",
    "FolderOpener",
    "Glob",
    "GlobError",
    "Stopped",
    "compile_glob",
    "stoppable",
    "walk_files",
    "walk_glob",
]
