"""The folders whose skills are the project's: from the notebook's folder up to the repository's
root, nearest first, as the other agents look.

A notebook in `notebooks/` of a clone finds the skills its README put in the clone's
`.agents/skills`: the walk goes up from the notebook's folder (when it lies inside the
workspace) through the workspace root (the kernel's working folder) to the nearest folder
holding `.git` (a clone, a worktree, a submodule) and stops there. Outside a repository it does
not go up: the folders above are anyone's. It never reaches the user's home folder: the skills
folders there are the user's, listed as such, and a home folder kept under git is not a project.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

MARKER = ".git"
"""What makes a folder a repository's root: a folder for a clone, a file for a worktree."""


@dataclass(frozen=True, kw_only=True)
class ProjectFolders:
    """Where the project's skills folders are looked for, and how to say so."""

    folders: tuple[Path, ...]
    """Real paths, nearest first; the workspace root always among them."""
    repository: Path | None = None
    """The repository's root the walk stopped at (None: not in one, so nothing above the
    workspace root was looked in)."""

    @property
    def top(self) -> Path:
        """The outermost folder looked in: what counts as the project's."""
        return self.folders[-1]


def project_folders(
    root: Path, *, notebook_folder: Path | None = None, home: Path | None = None
) -> ProjectFolders:
    """The folders from `notebook_folder` (when inside `root`) through `root` up to the nearest
    repository's root, never at or above `home` (default: the user's)."""
    root = Path(os.path.realpath(root))
    home = Path(os.path.realpath(home if home is not None else os.path.expanduser("~")))
    below = _between(Path(os.path.realpath(notebook_folder)), root) if notebook_folder else []
    above: list[Path] = []
    folder = root
    while not (folder / MARKER).exists():
        parent = folder.parent
        if parent == folder or _inside(home, parent):  # the top, or home or above it
            return ProjectFolders(folders=(*below, root))
        above.append(parent)
        folder = parent
    return ProjectFolders(folders=(*below, root, *above), repository=folder)


def _between(start: Path, root: Path) -> list[Path]:
    """`start` and its parents below `root`, nearest first ([] unless `start` is inside it)."""
    if start == root or not _inside(start, root):
        return []
    return [start, *(p for p in start.parents if p != root and _inside(p, root))]


def _inside(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents
