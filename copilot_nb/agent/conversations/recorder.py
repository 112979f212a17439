"""Writes one conversation down as its turns go: each message as the loop adds it, then the
turn's provenance and usage.

What is written passes the recordings' one set of rules (`models/recording_scrub.py`): the
machine's paths and every secret become placeholders, and a secret read's result never reaches
the file (`withhold_results`; the resumed model reads the placeholder). A failure to write (a
full disk, a file of a newer format) never fails the turn: it is said once, and saving stops.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from ...errors import ConfigError
from ...events import (
    AgentEvent,
    ApprovalNeeded,
    CellChanged,
    Done,
    Failed,
    FileChanged,
    ToolFinished,
    ToolStarted,
)
from ...messages import Message
from ...models.recording_scrub import Scrubber, withhold_results
from ...text import first_line
from .format import OPAQUE, message_record, new_id, now, record
from .place import saved_path
from .store import ConversationFile
from .usage import Tally, add

SECRET_CATEGORY = "read-secret"
NOTHING_USED = Tally()
"""The usage of a turn that asked no model (its end without the session's ledger)."""


def file_for(user_ns: Mapping[str, Any] | None) -> ConversationFile:
    """Beside the notebook this kernel serves, else in the config dir (`place.py`)."""
    return ConversationFile(saved_path(user_ns))


class Recorder:
    """The writer of one conversation in one file; the session drives it turn by turn."""

    def __init__(self, file: ConversationFile, conversation: str | None = None) -> None:
        self.file = file
        self.conversation = conversation or new_id()
        self._started = conversation is not None
        self.problem = ""
        """Why saving stopped (said once by the session), else ""."""
        self.turn = ""
        self.last_turn: dict[str, Any] | None = None
        """The record of the turn that ended last (the panel's cost and premium note)."""
        self._secret: set[str] = set()
        self._tools: list[str] = []
        self._outcome = ("stopped", "")
        self._began = 0.0
        self._at = ""
        self._request = ""
        self._scrubber = Scrubber.here()

    def start(self) -> None:
        """Write the conversation's `start` record now (a reset: the next restart resumes it)."""
        if not self._started:
            self._started = True
            self._write(record("start", self.conversation, at=now(), notebook=self.file.path.name))

    def begin(self, prompt: str) -> None:
        """A turn starts: its id, the clock, and the scrubber for where the kernel is now."""
        self.start()
        self.turn = new_id()
        self._secret = set()
        self._tools = []
        self._outcome = ("stopped", "")
        self._began = time.monotonic()
        self._at = now()
        self._request = first_line(prompt)[:200]
        self._scrubber = Scrubber.here()

    def message(self, message: Message) -> None:
        """One message the loop just added: scrubbed, a secret read's result withheld."""
        data = message_record(message)
        if data is None or not self.turn:
            return
        data = scrub(data, self._scrubber)
        if data.get("role") == "tool":
            data = withhold_results(data, self._secret)
        self._write(record("message", self.conversation, turn=self.turn, message=data))

    def event(self, event: AgentEvent, category_of: Callable[[str, Any], str]) -> None:
        """What the turn's events say: which calls read secrets, the outcome."""
        if isinstance(event, ToolStarted) and not event.parent:
            self._tools.append(event.name)
            if category_of(event.name, event.arguments) == SECRET_CATEGORY:
                self._secret.add(event.call_id)
        elif isinstance(event, ApprovalNeeded) and event.category == SECRET_CATEGORY:
            self._secret.add(event.call_id)
        elif isinstance(event, FileChanged):
            self._shown(event="file", path=event.path, diff=event.diff)
        elif isinstance(event, CellChanged):
            self._shown(
                event="cell",
                notebook=event.notebook,
                cell_id=event.cell_id,
                change=event.change,
                diff=event.diff,
            )
        elif isinstance(event, ToolFinished) and not event.parent:
            self._shown(event="done", call_id=event.call_id, summary=event.summary)
        elif isinstance(event, Done):
            self._outcome = ("done", "")
        elif isinstance(event, Failed):
            self._outcome = ("failed", self._scrubber.text(first_line(event.error))[:300])

    def _shown(self, **fields: Any) -> None:
        """What a card showed that the model never sees (a diff, a result's summary): for the
        panel's transcript."""
        shown = {k: self._scrubber.text(v) if isinstance(v, str) else v for k, v in fields.items()}
        self._write(record("shown", self.conversation, turn=self.turn, **shown))

    def end(
        self,
        *,
        model: str,
        provider: str,
        premium: float | None,
        kernel: Mapping[str, Any] | None = None,
        usage: Tally = NOTHING_USED,
    ) -> None:
        """The turn's record (its provenance, its usage as the session's ledger closed it, and
        the kernel it ran in with the names the conversation used and the agent's new runs:
        `tools/kernel/state.py`), flushed to the disk. Requests whose server sent no usage are
        counted from our estimate and the turn says how many (`estimated`), never 0 tokens."""
        if not self.turn:
            return
        outcome, error = self._outcome
        turn = record(
            "turn",
            self.conversation,
            turn=self.turn,
            at=self._at,
            seconds=round(time.monotonic() - self._began, 3),
            request=self._scrubber.text(self._request),
            model=model,
            provider=provider,
            requests=usage.requests,
            tokens=add(usage.tokens, {}),
            premium=premium,
            tools=self._tools,
            outcome=outcome,
        )
        if error:
            turn["error"] = error
        if kernel:
            turn.update(kernel)
            if "runs" in kernel:  # the agent's code, scrubbed as its tool call's arguments are
                turn["runs"] = [self._scrubber.text(code) for code in kernel["runs"]]
        if usage.estimated:  # not 0 tokens: the server did not say, and this is our estimate
            turn["estimated"] = usage.estimated
        self.last_turn = turn
        self.turn = ""
        self._write(turn)
        if not self.problem:
            self.file.sync()

    def _write(self, item: Mapping[str, Any]) -> None:
        if self.problem:
            return
        try:
            self.file.append([item])
        except (OSError, ConfigError) as exc:
            self.problem = (
                f"copilot: the conversation is no longer saved to {self.file.path.name}: {exc}"
            )


ENCRYPTED = "encrypted_content"
"""The one field of a Responses reasoning item the provider encrypted: kept as it came."""


def scrub(data: dict[str, Any], scrubber: Scrubber) -> dict[str, Any]:
    """A message record with every string scrubbed, except what a provider signed or encrypted.
    A reasoning item is not opaque as a whole: its summary is the model's words in plain text
    (a key it repeats there is redacted), and only its encrypted content is kept byte for byte."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key == "reasoning_items" and isinstance(value, list):
            out[key] = [_reasoning_item(item, scrubber) for item in value]
        else:
            out[key] = value if key in OPAQUE else scrubber.json(value)
    return out


def _reasoning_item(item: Any, scrubber: Scrubber) -> Any:
    if not isinstance(item, dict):
        return item
    return {k: (v if k == ENCRYPTED else scrubber.json(v)) for k, v in item.items()}
