"""Files copilot_nb keeps for the user (a notebook's saved conversation): opened without
following a link, and only when the user made them.

A cloned repository can ship `analysis.copilot-chat.jsonl` as a symlink to a file elsewhere (or a
dangling one): opened as a plain path, every turn would be appended there, or the file created
where the link points. So the last component is never followed (`O_NOFOLLOW`), and the file that
is opened must be what `open_own` itself creates: a regular file of this user, with no access for
the group or others (0600) and one name. Anything else is `NotOwnFile`, and nothing is read or
written; the caller tells the user and keeps its records elsewhere.

Folders above the file are followed: a notebook folder that is a symlink is an ordinary setup.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ..errors import SandboxError

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)  # a FIFO planted under the name must not hang the open
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_LINK_ERRORS = frozenset({errno.ELOOP, errno.EMLINK, getattr(errno, "EFTYPE", errno.ELOOP)})


class NotOwnFile(SandboxError, PermissionError):
    """A file copilot_nb did not make for this user: a link, another user's, shared, or not a
    regular file. An OSError too, so every caller that survives a failed open survives this."""


def open_own(path: str | os.PathLike[str], *, append: bool = False) -> int:
    """A descriptor of the user's own file at `path` (created 0600 when `append` and missing);
    NotOwnFile when it is anything else, FileNotFoundError when it is missing and not `append`."""
    flags = (os.O_RDWR | os.O_APPEND | os.O_CREAT) if append else os.O_RDONLY
    try:
        fd = os.open(path, flags | _NOFOLLOW | _NONBLOCK | _CLOEXEC, 0o600)
    except OSError as exc:
        if exc.errno in _LINK_ERRORS and os.path.islink(path):
            raise NotOwnFile(_sentence(path, "is a symbolic link")) from None
        raise
    try:
        why = not_own(os.fstat(fd))
        if why is not None:
            raise NotOwnFile(_sentence(path, why))
    except BaseException:
        os.close(fd)
        raise
    return fd


def own_or_missing(path: str | os.PathLike[str]) -> str | None:
    """Why the file at `path` is not the user's own (as `open_own` would refuse it), or None
    when it is, or when nothing is there yet."""
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return None
    why = "is a symbolic link" if stat.S_ISLNK(found.st_mode) else not_own(found)
    return None if why is None else _sentence(path, why)


def not_own(found: os.stat_result) -> str | None:
    """Why a file with this status is not one `open_own` made for this user, else None."""
    if not stat.S_ISREG(found.st_mode):
        return "is not a regular file"
    if os.name == "nt":  # no owners or mode bits to compare; the link check above still holds
        return None
    if found.st_uid != os.geteuid():
        return f"belongs to another user (uid {found.st_uid})"
    if found.st_mode & 0o077:
        return f"can be read or written by other users (mode {stat.S_IMODE(found.st_mode):04o})"
    if found.st_nlink > 1:
        return f"has {found.st_nlink} names (hard links)"
    return None


def _sentence(path: str | os.PathLike[str], why: str) -> str:
    return (
        f"{Path(path).name} {why}: copilot_nb did not create it, so it is neither read nor written"
    )
