"""search_text through ripgrep: the Python engine's files, rules and results, found faster.

Our walk (`walk.walk_glob`) lists the files, as for the Python engine, and that engine searches
them in order until it meets a text file of `BIG_FILE` bytes or more. There it looks ahead
(`LOOKAHEAD` files, one lstat each): when the big text files among them hold `WORTH` bytes,
ripgrep searches those files, given as arguments, and prints their matching lines; the Python
engine searches the rest, in order, and judges each line ripgrep found that it will show or
that could read differently (`ripgrep_args.is_odd`). So small trees never start ripgrep (the
Python engine is about as fast per small file, and needs no second process), while big files,
where ripgrep is ten times faster, are read by ripgrep alone. What is searched, the order, the
counts, the clipping and the messages are the Python engine's own (`TextSearch`).

The binary: `COPILOT_NB_RIPGREP` (a path or a name; `0` turns ripgrep off), else `rg` on PATH,
else the one the `ripgrep` wheel installs beside this Python. Stop and the tool's time limit set
the run's stop event; ripgrep is killed within `POLL` seconds and reaped, so no process
outlives the run. A ripgrep that cannot start, refuses the pattern or prints what we cannot
read raises `RipgrepFailed`, and the search runs again on the Python engine.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import subprocess
import sysconfig
import tempfile
import threading
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import IO

from ...errors import ToolError
from ...workspace.globs import Glob
from ...workspace.workspace import Workspace
from . import engine
from .engine import TextSearch
from .ripgrep_args import chunked, is_odd, line_args, same_in_rust
from .walk import Stopped, walk_glob

_log = logging.getLogger(__name__)
ENV = "COPILOT_NB_RIPGREP"
POLL = 0.02
"""Seconds between looks at the stop event while ripgrep runs."""
BIG_FILE = 256 * 1024
"""A text file this big makes the search look ahead for ripgrep's work. The Python engine
reads ~540 MB/s (the `regex` package) after ~5 µs per file, ripgrep ~5 GB/s on two cores after
~5 ms to start: below this size a file costs Python under 0.5 ms. The engine already knows the
size of any file over 64 KB (it stats it), so small trees pay nothing for the choice."""
LOOKAHEAD = 1024
"""Files looked at (one lstat each, ~2 µs) from a big file on, to find ripgrep's share."""
WORTH = 4 * 1024 * 1024
"""Bytes of files of at least `BIG_FILE` among the looked-at files that pay for starting
ripgrep (Python would take ~8 ms on them, ripgrep ~1 ms plus ~5 ms to start)."""


class RipgrepFailed(Exception):
    """ripgrep could not start or ended badly: the search runs again on the Python engine."""


def find_ripgrep() -> str | None:
    """The rg to use, or None: `COPILOT_NB_RIPGREP`, else rg on PATH, else the wheel's."""
    return _find(os.environ.get(ENV, "").strip(), os.environ.get("PATH", os.defpath))


@functools.lru_cache(maxsize=16)
def _find(setting: str, path: str) -> str | None:
    if setting in ("0", "off", "false", "no"):
        return None
    if setting:
        found = shutil.which(setting)
        if found is None:
            _log.warning("%s=%s names no program; search_text uses its Python engine", ENV, setting)
        return found
    scripts = sysconfig.get_path("scripts")
    return shutil.which("rg", path=os.pathsep.join(p for p in (path, scripts) if p))


def ripgrep_for(search: TextSearch) -> str | None:
    """The rg that gives this search the Python engine's results, or None (use that engine)."""
    binary = find_ripgrep()
    if binary is None or not same_in_rust(search.pattern.pattern):
        return None
    return None if _matches_empty_line(search) else binary


def _matches_empty_line(search: TextSearch) -> bool:
    """Whether the pattern matches an empty line (the Python engine then also reports the
    empty "line" after a file's final newline, and an empty file, which ripgrep does not)."""
    try:
        return search.line_match(b"") is not None
    except ToolError:  # it timed out: the Python engine reports that
        return True


@dataclass(frozen=True)
class _Run:
    """One ripgrep process, its output going to temporary files (a pipe would wake this
    process once per file ripgrep writes about, which costs more than the search)."""

    proc: subprocess.Popen[bytes]
    out: IO[bytes]
    err: IO[bytes]

    def output(self, stop: threading.Event) -> bytes:
        """Everything it printed; Stopped as soon as the stop event is set (it is killed)."""
        while True:
            try:
                code = self.proc.wait(POLL)
                break
            except subprocess.TimeoutExpired:
                if stop.is_set():
                    raise Stopped from None
        self.out.seek(0)
        out = self.out.read()
        if code not in (0, 1, 2) or (code == 2 and not out):
            self.err.seek(0)
            message = self.err.read(2000).decode("utf-8", "replace").strip() or "no message"
            raise RipgrepFailed(f"it ended with exit code {code}: {message}")
        return out  # 2 with output: some files could not be read, as the Python engine finds


@contextmanager
def _running(binary: str, args: list[str], cwd: str) -> Iterator[_Run]:
    """ripgrep started; when the block ends it is killed if it still runs, and reaped."""
    with (
        tempfile.TemporaryFile(prefix="copilot_nb-rg-") as out,
        tempfile.TemporaryFile(prefix="copilot_nb-rg-") as err,
    ):
        try:
            proc = subprocess.Popen(
                [binary, *args], cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=err
            )
        except (OSError, ValueError) as exc:
            raise RipgrepFailed(f"it did not start: {exc}") from exc
        try:
            yield _Run(proc, out, err)
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.wait()


Lines = dict[str, list[tuple[int, bytes]]]
"""Per file, the lines ripgrep found: (line number, the line without its LF)."""


def search_with_ripgrep(
    binary: str, search: TextSearch, workspace: Workspace, glob: Glob | None
) -> None:
    """Fill `search` as `search.run(walk_glob(workspace, glob))` would, ripgrep reading the
    big files. Stopped when the stop event is set, RipgrepFailed when ripgrep breaks
    (`search` is then half filled: start a new one)."""
    try:
        files = _walked(search, workspace, glob)
        done = 0
        while done < len(files):
            done += search.search_files(files[done:], big=BIG_FILE)
            if done == len(files):
                break
            ahead = files[done : done + LOOKAHEAD]
            chosen = _big_text_files(ahead)
            if sum(chosen.values()) < WORTH:  # not worth a process: Python reads them
                search.search_files(ahead)
            else:
                found = _lines(binary, search, chosen, str(workspace.root))
                _search_ahead(search, ahead, found)
            done += len(ahead)
    finally:
        search.finished.set()


def _walked(search: TextSearch, workspace: Workspace, glob: Glob | None) -> list[tuple[str, str]]:
    """The files the Python engine would search, in order; the secret ones noted, not kept."""
    kept = []
    is_secret, secrets = search.is_secret, search.secrets
    for relative, path in walk_glob(workspace, glob, search.stop):
        if is_secret(relative):
            secrets.append(relative)
        else:
            kept.append((relative, path))
    return kept


def _big_text_files(files: list[tuple[str, str]]) -> dict[str, int]:
    """{relative path: size} of the files of at least `BIG_FILE` bytes, within the size limit,
    that the Python engine would read as text (no NUL in the first `NUL_WINDOW` bytes)."""
    chosen = {}
    for relative, path in files:
        try:
            size = os.lstat(path).st_size
            if not BIG_FILE <= size <= engine.MAX_SEARCH_BYTES:
                continue
            with open(path, "rb") as f:
                if b"\0" not in f.read(engine.NUL_WINDOW):
                    chosen[relative] = size
        except OSError:
            continue  # the Python engine meets the same error, and skips it too
    return chosen


def _lines(binary: str, search: TextSearch, files: dict[str, int], root: str) -> Lines:
    """The lines ripgrep finds in these files (run from the root, paths as arguments)."""
    found: Lines = defaultdict(list)
    args = line_args(search.pattern.pattern)
    for paths in chunked(list(files)):
        with _running(binary, [*args, *paths], root) as run:
            _parse(run.output(search.stop), found)
    for relative in files:
        found.setdefault(relative, [])
    return found


def _parse(out: bytes, found: Lines) -> None:
    """`path NUL number : line` records, each ending with an LF, into `found`."""
    records = out.split(b"\n")
    if records.pop() != b"":
        raise RipgrepFailed(f"its output ends without a line end: {out[-200:]!r}")
    for record in records:
        path, nul, rest = record.partition(b"\0")
        number, colon, line = rest.partition(b":")
        if not (nul and colon and number.isdigit()):
            raise RipgrepFailed(f"it printed a line we cannot read: {record[:200]!r}")
        relative = os.fsdecode(path)
        found[relative.replace(os.sep, "/") if os.sep != "/" else relative].append(
            (int(number), line)
        )


def _search_ahead(search: TextSearch, files: list[tuple[str, str]], found: Lines) -> None:
    """The looked-at files in order: ripgrep's lines recorded, the others searched in Python."""
    pending: list[tuple[str, str]] = []
    for relative, path in files:
        lines = found.get(relative)
        if lines is None:
            pending.append((relative, path))
            continue
        search.search_files(pending)
        pending = []
        search.searched += 1
        _record(search, relative, lines)
    search.search_files(pending)


def _record(search: TextSearch, relative: str, lines: list[tuple[int, bytes]]) -> None:
    """One file's lines from ripgrep, as the Python engine would record them: a line it shows,
    or an odd one, is judged by that engine; the others are counted as ripgrep found them."""
    counted, search.current = 0, relative  # the file a timeout names
    for number, line in lines:
        if len(search.shown) >= engine.MAX_MATCHES and not is_odd(line):
            counted += 1
            continue
        if search.stop.is_set():
            raise Stopped
        match = search.line_match(line)
        if match is not None:
            search.record(relative, number, *match)
    if counted:
        search.record_count(relative, counted)


__all__ = ["ENV", "RipgrepFailed", "find_ripgrep", "ripgrep_for", "search_with_ripgrep"]
