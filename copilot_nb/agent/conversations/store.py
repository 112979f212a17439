"""The conversation file: append-only, locked, and readable after any crash.

Every append is one `write` of whole lines to a file opened with `O_APPEND`, under an exclusive
`flock`, so two kernels on one notebook (or two tabs of it) never interleave inside a line and
never lose one. A kill mid-write can leave a torn last line: the next append starts on a fresh
line, and a reader skips the torn one and says so, so no earlier turn is ever lost. The first
line is the format's header; a file from a newer format is refused and never written.

The file is opened only through `workspace.own_files`: never through a symlink, and only when
it is the user's own (0600, theirs, one name). A notebook's file that is not (a cloned
repository's, a link) is neither read nor written: `place` chooses a private file in the config
folder instead, and says why. Each line is checked before a reader sees it (`records.py`); the
lines skipped are reported in one sentence.

Readers stream the file a line at a time and skip what they do not need by each line's first
bytes (`format.line_prefix`): a resume keeps only the newest turns that fit its byte budget, so
memory follows the context window, not the size of the file.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from ...config import config_dir, private_dir
from ...errors import PolicyError
from ...policy import conversations_allowed
from ...text import counted
from ...workspace.own_files import NotOwnFile, open_own, own_or_missing
from .format import SUFFIX, check_header, encode, header, line_prefix
from .records import parse_json, parse_record
from .usage import Tally

_RECORD_START = re.compile(rb'\{"kind":"(\w+)","conversation":"([0-9A-Za-z_-]+)"')
_TURN_OF_MESSAGE = re.compile(rb'^\{"kind":"message","conversation":"[^"]*","turn":"([^"]*)"')
_TAIL = 64 * 1024
_EXAMPLES = 3
"""Skipped lines named in the one-line report; the rest are counted."""


@dataclass(frozen=True, kw_only=True)
class Summary:
    """One conversation as `%copilot conversations` lists it."""

    conversation: str
    started: str
    last: str
    turns: int
    usage: Tally
    first_request: str


@dataclass(frozen=True, kw_only=True)
class Loaded:
    """A conversation read back: the newest turns' messages that fit the budget, every turn's
    record, and what could not be read."""

    conversation: str
    messages: list[dict[str, Any]]
    turns: list[dict[str, Any]]
    started: str = ""
    left_out_turns: int = 0
    """Earlier turns beyond the budget: counted, not loaded."""
    begun: int = 0
    """Turns with a message, finished or not (a killed kernel's last turn has no turn record)."""
    problems: list[str] = field(default_factory=list)


class ConversationFile:
    """One notebook's saved conversations (`name.copilot-chat.jsonl`)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._checked = False
        self._skipped: list[tuple[int, str]] = []

    @property
    def problems(self) -> list[str]:
        """The lines the last read skipped (a torn last line after a crash, a line that is not
        a record this version writes), said in one sentence; empty when none was."""
        if not self._skipped:
            return []
        named = [f"line {number} {why}" for number, why in self._skipped[:_EXAMPLES]]
        more = len(self._skipped) - _EXAMPLES
        return [
            f"{self.path.name}: {counted(len(self._skipped), 'line')} skipped ("
            + "; ".join(named)
            + (f"; {more:,} more" if more > 0 else "")
            + ")"
        ]

    # --- writing ------------------------------------------------------------------------------

    def append(self, items: Iterable[Mapping[str, Any]]) -> None:
        """Write these records as whole lines at the end, under the lock (the header first in a
        new file; a fresh line after a torn one). NewerFormat, and nothing written, for a file
        of a newer format."""
        data = b"".join(encode(item) for item in items)
        if not data:
            return
        refusal = conversations_allowed()  # the administrator's policy: nothing is written
        if refusal:
            raise PolicyError(refusal)
        private_dir(self.path.parent)  # a folder it makes is owner-only; a notebook's exists
        fd = open_own(self.path, append=True)  # 0600 when new; never through a link
        try:
            with _locked(fd):
                size = os.fstat(fd).st_size
                if size == 0:
                    data = encode(header()) + data
                else:
                    if not self._checked:
                        check_header(_first_record(fd), self.path)
                        self._checked = True
                    if os.pread(fd, 1, size - 1) != b"\n":
                        data = b"\n" + data  # after a torn line: ours starts a line of its own
                _write_all(fd, data)
        finally:
            os.close(fd)

    def sync(self) -> None:
        """Flush to the disk (at a turn's end: a power cut keeps every finished turn)."""
        try:
            fd = open_own(self.path)
        except (FileNotFoundError, NotOwnFile):
            return
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    # --- reading ------------------------------------------------------------------------------

    def exists(self) -> bool:
        """Something is there to read (a link or another user's file too: reading it says why
        it is refused)."""
        try:
            found = os.lstat(self.path)
        except FileNotFoundError:
            return False
        return found.st_size > 0 or not stat.S_ISREG(found.st_mode)

    def _open(self) -> BinaryIO:
        return os.fdopen(open_own(self.path), "rb")

    def current(self) -> str | None:
        """The conversation of the newest record (the one a restart resumes), or None."""
        if not self.exists():
            return None
        with self._open() as handle:
            check_header(parse_json(handle.readline())[0], self.path)
            size = handle.seek(0, os.SEEK_END)
            window = _TAIL
            while True:
                handle.seek(max(0, size - window))
                found = _RECORD_START.findall(handle.read(window))
                if found:
                    return found[-1][1].decode()
                if window >= size:
                    return None
                window *= 4

    def summaries(self) -> list[Summary]:
        """Every conversation with at least one finished turn, oldest first."""
        starts: dict[str, str] = {}
        turns: dict[str, list[dict[str, Any]]] = {}
        for record in self._records(skip=(b'{"kind":"message"',)):
            conversation = str(record.get("conversation", ""))
            if record.get("kind") == "start":
                starts.setdefault(conversation, str(record.get("at", "")))
            elif record.get("kind") == "turn":
                turns.setdefault(conversation, []).append(record)
        out = []
        for conversation, done in turns.items():
            out.append(
                Summary(
                    conversation=conversation,
                    started=starts.get(conversation, str(done[0].get("at", ""))),
                    last=str(done[-1].get("at", "")),
                    turns=len(done),
                    usage=Tally.of_turns(done),
                    first_request=str(done[0].get("request", "")),
                )
            )
        return out

    def load(self, conversation: str, *, budget: int) -> Loaded:
        """The conversation's turn records, and the messages of its newest turns whose lines
        add up to at most `budget` bytes (the newest turn always), each turn's messages
        together in the order its turn began."""
        messages_prefix = line_prefix("message", conversation)
        kept: deque[tuple[str, list[tuple[int, bytes]]]] = deque()
        by_turn: dict[str, list[tuple[int, bytes]]] = {}
        size = 0
        left_out: set[str] = set()
        turns: list[dict[str, Any]] = []
        started = ""
        for number, line in self._lines():
            if line.startswith(messages_prefix):
                match = _TURN_OF_MESSAGE.match(line)
                turn = match.group(1).decode() if match else ""
                if turn in left_out:
                    continue
                if turn not in by_turn:
                    by_turn[turn] = []
                    kept.append((turn, by_turn[turn]))
                by_turn[turn].append((number, line))
                size += len(line)
                while size > budget and len(kept) > 1:
                    old, lines = kept.popleft()
                    size -= sum(len(item) for _, item in lines)
                    del by_turn[old]
                    left_out.add(old)
                continue
            if b'"message"' in line[:20] or _RECORD_START.match(line) is None:
                continue
            if f'"conversation":"{conversation}"'.encode() not in line[:80]:
                continue
            record = self._decode(number, line)
            if record is None:
                continue
            if record.get("kind") == "turn":
                turns.append(record)
            elif record.get("kind") == "start" and not started:
                started = str(record.get("at", ""))
        messages: list[dict[str, Any]] = []
        for _, lines in kept:
            for number, line in lines:
                record = self._decode(number, line)
                if record is not None and isinstance(record.get("message"), dict):
                    messages.append(record["message"])
        return Loaded(
            conversation=conversation,
            messages=messages,
            turns=turns,
            started=started,
            left_out_turns=len(left_out),
            begun=len(left_out) + len(kept),
            problems=list(self.problems),
        )

    def records(self, conversation: str) -> Iterator[dict[str, Any]]:
        """Every record of one conversation, in file order (for an export)."""
        mark = f'"conversation":"{conversation}"'.encode()
        for number, line in self._lines():
            if mark in line[:80]:
                record = self._decode(number, line)
                if record is not None:
                    yield record

    def _records(self, skip: tuple[bytes, ...] = ()) -> Iterator[dict[str, Any]]:
        for number, line in self._lines():
            if not line.startswith(skip):
                record = self._decode(number, line)
                if record is not None:
                    yield record

    def _lines(self) -> Iterator[tuple[int, bytes]]:
        """The file's complete record lines after its header (which is checked), numbered; a
        torn last line is reported in `problems`, not yielded."""
        self._skipped = []
        if not self.exists():
            return
        with self._open() as handle:
            check_header(parse_json(handle.readline())[0], self.path)
            number = 1
            for line in handle:
                number += 1
                if not line.endswith(b"\n"):
                    self._skipped.append(
                        (
                            number,
                            f"is incomplete ({len(line):,} bytes, a write cut off, e.g. by a "
                            "killed kernel)",
                        )
                    )
                    return
                if line.strip():
                    yield number, line

    def _decode(self, number: int, line: bytes) -> dict[str, Any] | None:
        record, why = parse_record(line)
        if record is None:
            self._skipped.append((number, why))
        return record


def place(path: str | os.PathLike[str]) -> tuple[Path, str]:
    """Where a notebook's conversations are saved: beside it (`path`), unless a file there is
    not the user's own (a link, a cloned repository's); then a private file in the config folder,
    named after the notebook and its folder, so every restart finds it again. The second item
    says why the first place was refused ("" when it was not)."""
    beside = Path(path)
    refused = own_or_missing(beside)
    if refused is None:
        return beside, ""
    digest = hashlib.sha256(os.fsencode(os.path.abspath(beside))).hexdigest()[:12]
    stem = beside.name[: -len(SUFFIX)] if beside.name.endswith(SUFFIX) else beside.stem
    private = Path(config_dir()) / "conversations" / f"{stem}-{digest}{SUFFIX}"
    return private, f"{refused}; this notebook's conversation is saved to {private} instead"


def _first_record(fd: int) -> Any:
    head = os.pread(fd, 4096, 0)
    return parse_json(head.split(b"\n", 1)[0])[0]


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


@contextmanager
def _locked(fd: int) -> Iterator[None]:
    """An exclusive advisory lock on the open file (where the platform has `flock`)."""
    try:
        import fcntl
    except ImportError:  # Windows: O_APPEND and one write per append
        yield
        return
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
