"""The workspace: the only door through which tools touch the file system.

A path is accepted only if, after every symlink on it is resolved (dangling ones included), it lies
inside the root. Writes are atomic: a temp file in the same directory, fsync, `os.replace`, with the
original file's permission bits kept, so a crash or an error never leaves half a file behind.

Symlinks inside the root are followed: writing to `link.txt` that points to `real.txt` (both inside
the root) replaces the contents of `real.txt` and leaves the link in place, like an editor would.
Moving or deleting `link.txt` moves or deletes the link itself, never its target.

Every write is policy-checked (`WritePolicy`: read-only mode, protected paths such as `.git/hooks`)
and checkpointed before it is made, grouped by turn, so `undo()` can put the last turn back.
Reads are not refused, but `secret()` tells the tools which paths hold secrets (`SecretRules`:
`.env`, keys, credentials), whose contents reach the model only after the user approves.

A path is a string naming a place inside the root: NUL bytes, a leading `~` (never expanded
here), a `..` written with backslashes and absurd lengths are refused before the file system is
asked. Globs have their own check (`globs.py`); the folder a walk starts in resolves through here.

Not defended: another process racing to swap a directory for a symlink between the check and the
open. The workspace guards against a model's mistakes, not against a hostile local user.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError, SandboxError
from .checkpoints import CellRestorer, Checkpoints
from .restore import RestoredPath
from .secret_paths import SecretRules
from .snapshots import Turn
from .write_policy import WritePolicy

PathIn = str | os.PathLike[str]
MAX_PATH_CHARS = 4096
"""Longer paths are refused with a sentence rather than the OS's 'File name too long'."""
_HOME = re.compile(r"^~(?:[\w.-]*[/\\]|$)")
"""`~`, `~/x`, `~user/x`: a home folder, which is never expanded here."""


@dataclass(frozen=True, kw_only=True)
class DirEntry:
    """One entry of a directory listing, described without leaking anything outside the root."""

    name: str
    path: str
    """Posix path relative to the workspace root."""
    is_dir: bool
    is_symlink: bool
    size: int | None
    """Size in bytes for files; None for directories and symlinks that leave the workspace."""
    outside: bool = False
    """True for a symlink whose target lies outside the workspace (it cannot be used)."""


class Workspace:
    """A directory tree that tools may read and, unless read-only, write."""

    def __init__(
        self,
        root: PathIn,
        *,
        read_only: bool = False,
        policy: WritePolicy | None = None,
        secrets: SecretRules | None = None,
    ) -> None:
        given = Path(root).expanduser()
        if not given.is_dir():
            raise ConfigError(f"workspace root {str(given)!r} is not an existing directory")
        self.root = Path(os.path.realpath(given))
        self.read_only = read_only
        self.policy = policy if policy is not None else WritePolicy()
        self.secrets = secrets if secrets is not None else SecretRules()
        self.checkpoints = Checkpoints(self.root)

    def __repr__(self) -> str:
        mode = ", read_only=True" if self.read_only else ""
        return f"Workspace({str(self.root)!r}{mode})"

    # --- path policy --------------------------------------------------------------------------

    def resolve(self, path: PathIn, *, write: bool = False) -> Path:
        """Turn a model-given path into a real path inside the root, or raise SandboxError."""
        text = self._text(path)
        joined = self.root / text  # an absolute `text` replaces the root, as in os.path.join
        real = Path(os.path.realpath(joined))
        if not _inside(real, self.root):
            raise SandboxError(self._outside_message(text, joined, real))
        self._check_loops(text, real)
        self._check_policy(real, write=write, lexical=Path(os.path.normpath(joined)))
        return real

    def resolve_entry(self, path: PathIn, *, action: str = "delete") -> Path:
        """The path of a directory entry itself (a symlink, not its target), checked for `action`."""
        text = self._text(path)
        lexical = Path(os.path.normpath(self.root / text))
        node = Path(os.path.realpath(lexical.parent)) / lexical.name
        if not _inside(node, self.root):
            raise SandboxError(self._outside_message(text, lexical, node))
        if node == self.root or lexical.name in ("", ".", ".."):
            raise SandboxError(f"refusing to {action} the workspace root itself")
        self._check_loops(text, node.parent)
        self._check_policy(node, write=True, lexical=lexical, action=action)
        return node

    def _text(self, path: PathIn) -> str:
        text = os.fspath(path) if isinstance(path, os.PathLike) else path
        if not isinstance(text, str):
            raise SandboxError(f"a path must be a string, not {type(path).__name__}")
        if text.strip() == "":
            raise SandboxError(
                "the path is empty; give a path inside the workspace, e.g. 'notes.txt'"
            )
        if "\x00" in text:
            raise SandboxError(f"path {text!r} contains a NUL byte; paths cannot contain NUL")
        if len(text) > MAX_PATH_CHARS:
            raise SandboxError(
                f"path {text[:80]!r}… is {len(text):,} characters long (at most "
                f"{MAX_PATH_CHARS:,}); use a path inside the workspace, e.g. 'notes.txt'"
            )
        if _HOME.match(text):
            raise SandboxError(
                f"path {text!r} starts with '~', which is not your home folder here: paths are "
                f"relative to the workspace {self.root}, and files outside it cannot be used"
            )
        if os.sep == "/" and "\\" in text and ".." in re.split(r"[/\\]", text):
            raise SandboxError(
                f"path {text!r} uses '\\' with '..'; write paths with '/' and keep them inside "
                "the workspace, e.g. 'src/notes.txt'"
            )
        return text

    def _check_policy(
        self, real: Path, *, write: bool, lexical: Path | None = None, action: str = "write"
    ) -> None:
        """The one place where policy decides on a contained path: read-only, protected paths."""
        if not write:
            return
        if self.read_only:
            raise SandboxError(
                f"the workspace {self.root} is read-only; {self.relative(real)!r} cannot be changed"
            )
        self.policy.check(self.root, real, lexical=lexical, action=action)

    def _outside_message(self, text: str, joined: Path, real: Path) -> str:
        """Say whether the path itself or a symlink on it leads out, and what to do instead."""
        advice = "use a path inside it, e.g. 'notes.txt'"
        if _inside(Path(os.path.normpath(joined)), self.root):
            return (
                f"path {text!r} leads through a symlink to {real}, which is outside the "
                f"workspace {self.root}; {advice}"
            )
        return f"path {text!r} is outside the workspace {self.root}; {advice}"

    def _check_loops(self, text: str, real: Path) -> None:
        """realpath() leaves a symlink loop unresolved; such a path must not be used."""
        for part in (real, *real.parents):
            if part == self.root:
                return
            if part.is_symlink():
                raise SandboxError(
                    f"path {text!r} goes through a symlink loop at {self.relative(part)!r}; "
                    "use a path that does not pass through it"
                )

    def secret(self, path: PathIn) -> str | None:
        """Why the contents at this path are a secret (for the approval prompt), or None.

        Checked as written and after resolving symlinks; a path the workspace refuses is None,
        since no tool can read it at all.
        """
        try:
            real = self.resolve(path)
        except SandboxError:
            return None
        lexical = Path(os.path.normpath(self.root / self._text(path)))
        return self.secrets.why(self.root, lexical, real)

    def relative(self, path: PathIn) -> str:
        """A root-relative posix path for messages ('.' for the root itself)."""
        candidate = Path(path)
        if not candidate.is_absolute():
            candidate = self.root / candidate
        for option in (candidate, Path(os.path.realpath(candidate))):
            if _inside(option, self.root):
                return option.relative_to(self.root).as_posix() or "."
        return candidate.as_posix()

    def exists(self, path: PathIn) -> bool:
        """Whether the path names something inside the workspace (refused paths raise)."""
        return self.resolve(path).exists()

    # --- reading ------------------------------------------------------------------------------

    def read_bytes(self, path: PathIn) -> bytes:
        """The file's bytes, after the path has passed the policy."""
        return self.resolve(path).read_bytes()

    def read_text(self, path: PathIn, *, encoding: str = "utf-8") -> str:
        """The file's text exactly as stored: no newline translation, so edits keep CRLF files."""
        with open(self.resolve(path), encoding=encoding, newline="") as f:
            return f.read()

    def list_dir(self, path: PathIn = ".") -> list[DirEntry]:
        """The directory's entries sorted by name; symlinks that leave the root are marked."""
        real = self.resolve(path)
        entries = []
        with os.scandir(real) as it:
            for entry in it:
                entries.append(self._describe(real, entry))
        return sorted(entries, key=lambda e: e.name)

    def _describe(self, directory: Path, entry: os.DirEntry[str]) -> DirEntry:
        rel = self.relative(directory / entry.name)
        is_link = entry.is_symlink()
        if is_link and not _inside(Path(os.path.realpath(entry.path)), self.root):
            return DirEntry(
                name=entry.name, path=rel, is_dir=False, is_symlink=True, size=None, outside=True
            )
        try:
            is_dir = entry.is_dir()
            size = None if is_dir else entry.stat().st_size
        except OSError:  # a dangling link inside the root, or a file that just vanished
            is_dir, size = False, None
        return DirEntry(name=entry.name, path=rel, is_dir=is_dir, is_symlink=is_link, size=size)

    # --- writing ------------------------------------------------------------------------------

    def write_text(self, path: PathIn, content: str, *, encoding: str = "utf-8") -> tuple[str, ...]:
        """Atomically replace (or create) a text file; content is encoded before anything moves."""
        return self.write_bytes(path, content.encode(encoding))

    def write_bytes(self, path: PathIn, data: bytes) -> tuple[str, ...]:
        """Atomically replace (or create) a file, keeping the original's permission bits.

        Returns notes for the user, e.g. that the file is too big for undo to restore.
        """
        target = self.resolve(path, write=True)
        if target.is_dir():
            raise IsADirectoryError(f"{self.relative(target)!r} is a directory, not a file")
        with self.checkpoints.record([*_missing_parents(target), target]) as change:
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                original = os.stat(target)
            except FileNotFoundError:
                original = None
            _atomic_write(target, data, original)
            change.written[target] = data
        return tuple(change.notes)

    def move(self, source: PathIn, destination: PathIn) -> tuple[str, ...]:
        """Rename a file, symlink or folder; the destination must not exist yet."""
        src = self.resolve_entry(source, action="move")
        dst = self.resolve_entry(destination, action="move onto")
        if not os.path.lexists(src):
            raise FileNotFoundError(errno.ENOENT, "no such file or directory", os.fspath(source))
        if os.path.lexists(dst):
            raise FileExistsError(errno.EEXIST, "destination exists", os.fspath(destination))
        if src in dst.parents:
            raise SandboxError(
                f"cannot move {self.relative(src)!r} into itself ({self.relative(dst)!r})"
            )
        pairs = {path: dst / path.relative_to(src) for path in _tree(src)}
        for old, new in pairs.items():
            self._check_policy(old, write=True, action="move")
            self._check_policy(new, write=True, action="move onto")
        paths = [*_missing_parents(dst), *pairs, *pairs.values()]
        with self.checkpoints.record(paths, moves=pairs) as change:
            dst.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.rename(src, dst)
            except OSError as exc:
                if exc.errno != errno.EXDEV:
                    raise
                shutil.move(os.fspath(src), os.fspath(dst))
        return tuple(change.notes)

    def delete(self, path: PathIn, *, recursive: bool = False) -> tuple[str, ...]:
        """Delete a file, a symlink (not its target) or a folder; a non-empty one needs recursive."""
        node = self.resolve_entry(path, action="delete")
        if not os.path.lexists(node):
            raise FileNotFoundError(errno.ENOENT, "no such file or directory", os.fspath(path))
        paths = _tree(node)
        if len(paths) > 1 and not recursive:
            raise OSError(errno.ENOTEMPTY, "directory not empty", os.fspath(path))
        for item in paths[1:]:
            self._check_policy(item, write=True, action="delete")
        with self.checkpoints.record(paths) as change:
            if os.path.isdir(node) and not os.path.islink(node):
                shutil.rmtree(node)
            else:
                os.unlink(node)
        return tuple(change.notes)

    # --- turns and undo -----------------------------------------------------------------------

    def begin_turn(self, label: str) -> Turn:
        """Group the writes that follow under one turn (the prompt), the unit of `undo()`."""
        return self.checkpoints.begin_turn(label)

    def undo(self, *, force: bool = False, cells: CellRestorer | None = None) -> list[RestoredPath]:
        """Restore the last turn that changed something; raise SandboxError on later edits.

        With `force`, files changed on disk after the agent's write, and kernel variables
        changed after its run, are restored anyway.
        `cells` takes back the turn's changes in open notebooks (see `Checkpoints.undo`).
        """
        return self.checkpoints.undo(force=force, cells=cells)

    def last_turn_diff(self) -> str:
        """Unified diffs of what the last turn that changed something did, against the disk now."""
        return self.checkpoints.last_diff()[1]


def _tree(node: Path) -> list[Path]:
    """The node and, for a real folder, everything under it (symlinks are not followed)."""
    found = [node]
    if os.path.isdir(node) and not os.path.islink(node):
        for folder, dirs, files in os.walk(node):
            base = Path(folder)
            found.extend(base / name for name in sorted(dirs + files))
    return found


def _missing_parents(path: Path) -> list[Path]:
    """The folders a write must create before it can make `path`, outermost first."""
    missing = []
    for parent in path.parents:
        if parent.exists():
            break
        missing.append(parent)
    return missing[::-1]


def _inside(path: Path, root: Path) -> bool:
    """Component-wise containment, so '/x/root_evil' is not inside '/x/root'."""
    return path == root or root in path.parents


def _atomic_write(target: Path, data: bytes, original: os.stat_result | None) -> None:
    """Write a sibling temp file, fsync it, then rename it over the target; clean up on failure."""
    fd, tmp = _create_temp(target)
    try:
        if original is not None:
            os.chmod(tmp, stat.S_IMODE(original.st_mode))  # before any byte is written
            if hasattr(os, "chown") and (original.st_uid, original.st_gid) != _owner(tmp):
                with contextlib.suppress(OSError):
                    os.chown(tmp, original.st_uid, original.st_gid)
        with os.fdopen(fd, "wb") as f:
            fd = -1
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        if fd != -1:
            os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    _fsync_dir(target.parent)


def _create_temp(target: Path) -> tuple[int, str]:
    """Create the temp file with mode 0o666 so the umask applies, exactly as for a plain open()."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        tmp = str(target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp"))
        try:
            return os.open(tmp, flags, 0o666), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"could not create a temporary file next to {target.name}")


def _owner(path: str) -> tuple[int, int]:
    st = os.stat(path)
    return st.st_uid, st.st_gid


def _fsync_dir(directory: Path) -> None:
    """Make the rename durable where the platform allows it (not on Windows)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
