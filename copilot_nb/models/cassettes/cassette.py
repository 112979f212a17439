"""Cassettes: a kernel's traffic with its model provider recorded to a file, and played back.

`record` writes every model request and the provider's response (and each approval answer the
user gives) to a JSON Lines file; `replay` answers the same requests from it with no network, in
order, through the same decoders a live run uses; `auto` replays what is recorded and records
what comes after. A request that differs from the recording is never answered silently: it
raises `CassetteMismatch`, which says what differed. The file format is `entries.py`;
the HTTP side is `transport.py`.

One kernel plays or records one cassette at a time (`activate`), whichever surface sends the
request: a cell, the chat panel, the proxy.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal, NoReturn, cast

from ...errors import ModelError
from ...policy import check_cassette_writing
from .diff import mismatch_message
from .entries import (
    FORMAT,
    Answer,
    Entry,
    Exchange,
    RecordedRequest,
    RecordedResponse,
    entry_from_json,
)
from .signing import new_cassette_id, signature, signed_by, signing_key

Mode = Literal["record", "replay", "auto"]
MODES: tuple[Mode, ...] = ("record", "replay", "auto")
SUFFIX = ".copilot.jsonl"


class CassetteMismatch(ModelError):
    """A request (or an approval) the recording does not have: what differed, in words."""


@dataclass(frozen=True, kw_only=True)
class Header:
    """The cassette's first line: what it was recorded with, in the recorder's own words."""

    model: str = ""
    note: str = ""
    id: str = ""
    """A random id for this recording, which every signature names."""
    sig: str = ""
    """The recorder's signature of the header ('' unsigned)."""

    def signed_parts(self) -> list[Any]:
        return ["cassette", FORMAT, self.id, self.model, self.note]

    def as_json(self) -> dict[str, Any]:
        out = {"type": "cassette", "format": FORMAT, "model": self.model, "note": self.note}
        if self.id:
            out |= {"id": self.id, "sig": self.sig}
        return out


def mode_from_environment(environ: Mapping[str, str] | None = None) -> Mode | None:
    """`COPILOT_NB_CASSETTE` (record, replay or auto): how a whole kernel runs its cassettes."""
    env = os.environ if environ is None else environ
    mode = env.get("COPILOT_NB_CASSETTE", "").strip().lower()
    return cast(Mode, mode) if mode in MODES else None


def default_path(notebook: str | os.PathLike[str]) -> Path:
    """`analysis.ipynb` → `analysis.copilot.jsonl`, beside it."""
    path = Path(notebook)
    return path.with_name(path.stem + SUFFIX)


class Cassette:
    """One cassette file, open for recording or replaying; thread-safe, append-only."""

    def __init__(self, path: str | os.PathLike[str], mode: Mode, *, header: Header | None = None):
        if mode not in MODES:
            raise ValueError(f"cassette mode must be one of {', '.join(MODES)}, not {mode!r}")
        if mode != "replay":
            check_cassette_writing()  # the administrator's policy: may cassettes be written
        self.path = Path(path).absolute()
        self.mode: Mode = mode
        self._lock = threading.Lock()
        self.header = header or Header()
        self.entries: list[Entry] = []
        self._next = 0
        """The next recorded entry a replay expects (HTTP exchanges in order, and answers)."""
        self.used: list[int] = []
        """The model exchanges and approval answers replayed or written since the last `mark()`:
        a turn's provenance (lookups such as a token exchange are not counted)."""
        self.mismatch: str = ""
        self.trusted = False
        """The user chose to trust this cassette's recorded answers (`replay --trust`) after
        seeing the calls it makes; otherwise only answers signed with their own key apply."""
        self.withheld: set[str] = set()
        """Tool calls whose results are secret contents the user approved reading: never written,
        and compared as a placeholder (`recording_scrub.withhold_results`)."""
        self._key = signing_key(create=mode != "replay")
        if mode == "record" or (mode == "auto" and not self.path.exists()):
            self._start_file()
        else:
            self._load()

    # --- the file -------------------------------------------------------------------------

    def _start_file(self) -> None:
        header = Header(model=self.header.model, note=self.header.note, id=new_cassette_id())
        sig = signature(self._key, header.signed_parts()) if self._key else ""
        self.header = Header(model=header.model, note=header.note, id=header.id, sig=sig)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(json.dumps(self.header.as_json(), sort_keys=True) + "\n", "utf-8")

    def _load(self) -> None:
        try:
            lines = self.path.read_text("utf-8").splitlines()
        except FileNotFoundError:
            raise CassetteMismatch(f"no cassette at {self.path}: record one first") from None
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
                if item.get("type") == "cassette":
                    self._read_header(item)
                else:
                    self.entries.append(entry_from_json(item))
            except (ValueError, KeyError, TypeError) as exc:
                if number == len(lines):  # a last line cut short by a crash: drop it
                    self._truncate(lines[: number - 1])
                    break
                raise CassetteMismatch(
                    f"{self.path}, line {number}: not a cassette entry ({exc})"
                ) from None

    def _read_header(self, item: dict[str, Any]) -> None:
        if item.get("format") != FORMAT:
            raise CassetteMismatch(
                f"{self.path} is in format {item.get('format')!r}; this copilot_nb reads {FORMAT}"
            )
        self.header = Header(
            model=str(item.get("model", "")),
            note=str(item.get("note", "")),
            id=str(item.get("id", "")),
            sig=str(item.get("sig", "")),
        )

    def _truncate(self, lines: list[str]) -> None:
        if self.mode != "replay":
            self.path.write_text("".join(line + "\n" for line in lines), "utf-8")

    def _append(self, entry: Entry) -> None:
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(entry.as_json(), sort_keys=True, ensure_ascii=False) + "\n")
        self.entries.append(entry)
        self._next = len(self.entries)
        if not isinstance(entry, Exchange) or entry.request.in_order:
            self.used.append(entry.n)

    @property
    def recording(self) -> bool:
        """True when what comes next is written (record, or auto past the recording's end)."""
        return self.mode == "record" or (self.mode == "auto" and self._next >= len(self.entries))

    # --- HTTP -----------------------------------------------------------------------------

    def answer_for(self, request: RecordedRequest) -> RecordedResponse | None:
        """The recorded response to `request`, or None when it is to be sent and recorded.

        Raises CassetteMismatch when replaying and the recording has no such request."""
        with self._lock:
            if not request.in_order:
                found = self._lookup(request)
                if found is not None or self.mode == "replay":
                    return self._found_or_fail(request, found)
                return None
            if self.mode == "record" or (self.mode == "auto" and self._next_in_order() is None):
                return None
            return self._next_exchange(request)

    def _lookup(self, request: RecordedRequest) -> Exchange | None:
        for entry in reversed(self.entries):
            if isinstance(entry, Exchange) and entry.request.same_as(request):
                return entry
        return None

    def _found_or_fail(self, request: RecordedRequest, found: Exchange | None) -> RecordedResponse:
        if found is None:
            self._fail(f"the recording has no {request.method} {request.path}")
        return found.response

    def _next_in_order(self) -> Entry | None:
        """The next model exchange or answer the recording expects (lookups recorded in passing
        are answered by `_lookup` and stepped over), None at its end."""
        while self._next < len(self.entries):
            entry = self.entries[self._next]
            if not isinstance(entry, Exchange) or entry.request.in_order:
                return entry
            self._next += 1
        return None

    def _take(self, entry: Entry) -> None:
        self._next += 1
        self.used.append(entry.n)

    def _next_exchange(self, request: RecordedRequest) -> RecordedResponse:
        entry = self._next_in_order()
        if entry is None:
            self._fail(
                f"the recording ends after entry {len(self.entries)}, and the agent sent one "
                f"more request ({request.method} {request.path})"
            )
        if isinstance(entry, Answer):
            self._fail(
                f"the recording expects an answer to the approval of {entry.tool} "
                f"({entry.summary}) here, and the agent sent a model request instead"
            )
        if not entry.request.same_as(request):
            self._fail(mismatch_message(entry.n, entry.request, request))
        self._take(entry)
        return entry.response

    def record(self, request: RecordedRequest, response: RecordedResponse) -> None:
        """Write one exchange (a lookup already recorded the same is not written twice)."""
        with self._lock:
            if not request.in_order:
                found = self._lookup(request)
                if found is not None and found.response == response:
                    return
            self._append(Exchange(n=len(self.entries) + 1, request=request, response=response))

    # --- approvals ------------------------------------------------------------------------

    def recorded_answer(self, tool: str, summary: str) -> Answer | None:
        """The user's recorded answer to this approval request, None when it is to be asked."""
        with self._lock:
            entry = self._next_in_order()
            if entry is None:
                if self.mode == "replay":
                    self._fail(f"the recording ends before the approval of {tool} ({summary})")
                return None
            if not isinstance(entry, Answer) or entry.tool != tool:
                recorded = (
                    f"the approval of {entry.tool}"
                    if isinstance(entry, Answer)
                    else "a model request"
                )
                self._fail(
                    f"entry {entry.n}: the recording has {recorded} here, and the agent asks "
                    f"to approve {tool} ({summary})"
                )
            self._take(entry)
            return entry

    def record_answer(
        self,
        tool: str,
        summary: str,
        approved: bool,
        reason: str,
        *,
        arguments: Any = None,
        category: str = "",
    ) -> None:
        """Write the user's answer to exactly this call, signed with their key."""
        with self._lock:
            answer = Answer(
                n=len(self.entries) + 1,
                tool=tool,
                summary=summary,
                approved=approved,
                reason=reason,
                arguments=arguments,
                category=category,
            )
            if self._key:
                parts = answer.signed_parts(self.header.id)
                answer = replace(answer, sig=signature(self._key, parts))
            self._append(answer)

    # --- whose recording ------------------------------------------------------------------

    def signed_by_user(self, answer: Answer) -> bool:
        """True when this user's key signed `answer` for this cassette."""
        return signed_by(self._key, answer.signed_parts(self.header.id), answer.sig)

    @property
    def signed(self) -> bool:
        """True when this user recorded the whole cassette: the header and every answer carry
        their signature."""
        header = signed_by(self._key, self.header.signed_parts(), self.header.sig)
        answers = (e for e in self.entries if isinstance(e, Answer))
        return header and all(self.signed_by_user(a) for a in answers)

    def vouches_for(self, answer: Answer) -> bool:
        """May a recorded approval stand in for asking: signed by this user, or trusted."""
        return self.trusted or self.signed_by_user(answer)

    def withhold(self, call_id: str) -> None:
        """The result of this call is secret content the user approved: keep it out."""
        with self._lock:
            self.withheld.add(call_id)

    # --- what happened --------------------------------------------------------------------

    def _fail(self, what: str) -> NoReturn:
        self.mismatch = (
            f"The request differs from the recording in {self.path.name}: {what}\n"
            f"Record it again with `%copilot record {self.path.name}` (or run in auto mode to "
            "keep what matches and record what is new)."
        )
        raise CassetteMismatch(self.mismatch)

    def mark(self) -> None:
        """Start a new turn's provenance."""
        self.used = []
        self.mismatch = ""

    def describe(self) -> str:
        verb = {"record": "recording to", "replay": "replaying", "auto": "replaying/recording"}
        return f"{verb[self.mode]} {self.path.name} ({len(self.entries)} entries)"


_active: Cassette | None = None


def active_cassette() -> Cassette | None:
    """The cassette this process records to or replays from, if any."""
    return _active


def recording_cassette() -> Cassette | None:
    """The active cassette while it records (None otherwise): the tape of a completion model,
    whose requests a recording keeps as lookups but a replay never answers (what the user types
    now is no part of the recording)."""
    cassette = _active
    return cassette if cassette is not None and cassette.recording else None


def activate(cassette: Cassette | None) -> Cassette | None:
    """Make `cassette` the active one (None: none); returns the one it replaces."""
    global _active
    previous, _active = _active, cassette
    return previous


@contextmanager
def using(cassette: Cassette) -> Iterator[Cassette]:
    """The cassette active for a block (scripts and tests)."""
    previous = activate(cassette)
    try:
        yield cassette
    finally:
        activate(previous)
