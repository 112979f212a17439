"""The session's saved conversation: which file, which conversation, the turn being written,
and the history a restart resumes (`CopilotSession.saved`).

Saving is on in a kernel and off in a script's session unless asked for; while a cassette
records or replays, the cassette is the notebook's record and nothing is saved here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...events import AgentEvent, Notice
from ...messages import Message
from ...text import counted
from ...tools.kernel.state import KernelState
from ..context.window import known_window
from ..loop.rounds import Agent
from .format import now, record
from .ledger import Ledger
from .recorder import Recorder, file_for
from .resume import history
from .store import ConversationFile, Loaded, place

MIN_RESUME_BYTES = 64 * 1024
BYTES_PER_TOKEN = 3
"""How many bytes of saved lines a resume loads per token of the model's window: JSON and its
escapes make a saved line longer than the text the model reads (about 4 characters a token), so
what is loaded fits the window before compaction has to summarise anything."""


@dataclass(frozen=True, kw_only=True)
class Resumed:
    """What a resume found: said in one line at `%load_ext` and by `%copilot resume`."""

    conversation: str
    file: str
    turns: int
    started: str
    last: str
    left_out: int
    cut_short: int = 0
    problems: tuple[str, ...] = ()

    def describe(self) -> str:
        when = f"from {_short(self.started)}" if self.started else ""
        if self.last and self.last != self.started:
            when += f" to {_short(self.last)}"
        lines = [
            f"copilot: resumed conversation {self.conversation} from {self.file}: "
            f"{counted(self.turns, 'turn')} {when}".rstrip()
            + (f", {self.cut_short} of them cut short" if self.cut_short else "")
            + (
                f" ({self.left_out} earliest not loaded: beyond the context window)"
                if self.left_out
                else ""
            )
            + "; %copilot reset starts a new one"
        ]
        return "\n".join([*lines, *(f"copilot: {p}" for p in self.problems)])


class Keeper:
    """Owns the conversation's file and writer for a session; pure bookkeeping otherwise."""

    def __init__(
        self, user_ns: Mapping[str, Any] | None, *, enabled: bool, kernel: KernelState | None = None
    ) -> None:
        self.user_ns = user_ns
        self.enabled = enabled
        self.kernel = kernel
        """The kernel's state: each turn records its id and names, a resume reads them back."""
        self.recorder: Recorder | None = None
        self.pending: list[Message] | None = None
        """A resumed history, given to the next agent the session builds."""
        self.resumed: Resumed | None = None
        self.usage = Ledger()
        """The conversation's tokens, counted whether or not it is saved (`ledger.py`)."""
        self._said = False
        self._refused = ""
        """Why the file beside the notebook is not used (not the user's own), until said."""

    def file(self) -> ConversationFile:
        """The recorder's file, else the one `place` chooses for the notebook (beside it, or a
        private one when the file beside it is not the user's own)."""
        if self.recorder is not None:
            return self.recorder.file
        beside = file_for(self.user_ns)
        path, refused = place(beside.path)
        if refused:
            self._refused = refused
            return ConversationFile(path)
        return beside

    def refusal(self) -> str:
        """Once: why the file beside the notebook is neither read nor written ("" if it is)."""
        said, self._refused = self._refused, ""
        return f"copilot: {said}" if said else ""

    # --- a turn -------------------------------------------------------------------------------

    def begin(self, prompt: str, *, cassette: bool) -> Recorder | None:
        """The writer of this turn (None: not saving); its `message` hears the run's messages."""
        self.usage.begin()
        if not self.enabled or cassette:
            return None
        if self.recorder is None:
            self.recorder = Recorder(self.file())
        self.recorder.begin(prompt)
        return self.recorder

    def notice(self) -> Notice | None:
        """Once, when saving stopped: why; and once, when the file beside the notebook was
        refused: where the conversation is saved instead."""
        if refused := self.refusal():
            return Notice(text=refused)
        if self.recorder is not None and self.recorder.problem and not self._said:
            self._said = True
            return Notice(text=self.recorder.problem)
        return None

    def observe(self, agent: Agent, event: AgentEvent) -> None:
        self.usage.observe(event)
        if self.recorder is not None and self.recorder.turn:
            self.recorder.event(event, lambda name, arguments: _category(agent, name, arguments))

    def end(self, agent: Agent) -> None:
        used = self.usage.end()
        if self.recorder is None or not self.recorder.turn:
            return
        model = agent.active.model
        provider = model.provider
        info = getattr(model, "info", None)
        premium = getattr(info, "premium_multiplier", None) if provider == "copilot" else None
        kernel = self.kernel.record() if self.kernel is not None else None
        self.recorder.end(
            model=model.name, provider=provider, premium=premium, kernel=kernel, usage=used
        )

    # --- the conversation ---------------------------------------------------------------------

    def seed(self) -> list[Message]:
        """The resumed history (once), for the next agent the session builds."""
        pending, self.pending = self.pending or [], None
        return pending

    def reset(self) -> None:
        """A new conversation, written down at once so a restart resumes it, not the old one."""
        self.pending = None
        self.resumed = None
        self.usage.restart()
        if self.kernel is not None:
            self.kernel.forget()
        if self.recorder is not None:
            self.recorder = Recorder(self.recorder.file)
            self.recorder.start()

    def resume(self, model_spec: str, conversation: str | None = None) -> Resumed | None:
        """Load a conversation (the newest, else `conversation`) for the next agent; None when
        there is none. ConfigError for a file this version cannot read."""
        file = self.file()
        chosen = conversation or file.current()
        if chosen is None:
            return None
        loaded = file.load(chosen, budget=resume_budget(model_spec))
        if not loaded.turns and not loaded.messages:
            return None
        self.pending = history(loaded.messages, root=os.getcwd(), left_out=loaded.left_out_turns)
        self.recorder = Recorder(file, chosen)
        if conversation is not None:  # the next restart resumes this one
            self.recorder._write(record("resume", chosen, at=now()))
        self.resumed = _resumed(file, loaded)
        self.usage.restart(loaded.turns)
        ran = [t for t in loaded.turns if isinstance(t.get("kernel"), str)]
        if self.kernel is not None and ran:
            runs = [code for turn in ran for code in turn.get("runs") or []]
            self.kernel.resumed(ran[-1]["kernel"], ran[-1].get("names") or [], runs)
        return self.resumed


def resume_budget(model_spec: str) -> int:
    """Bytes of saved lines a resume loads: what the model's window holds, at least 64 KB."""
    name = model_spec.split(":", 1)[-1]
    return max(MIN_RESUME_BYTES, BYTES_PER_TOKEN * known_window(name))


def _resumed(file: ConversationFile, loaded: Loaded) -> Resumed:
    turns = loaded.turns
    return Resumed(
        conversation=loaded.conversation,
        file=file.path.name,
        turns=max(len(turns), loaded.begun),
        cut_short=max(0, loaded.begun - len({t.get("turn") for t in turns})),
        started=loaded.started or (str(turns[0].get("at", "")) if turns else ""),
        last=str(turns[-1].get("at", "")) if turns else "",
        left_out=loaded.left_out_turns,
        problems=tuple(loaded.problems),
    )


def _category(agent: Agent, name: str, arguments: Any) -> str:
    tool = agent.active.tools.get(name)
    if tool is None or not isinstance(arguments, Mapping):
        return ""
    return tool.category_for(arguments)


def _short(at: str) -> str:
    """`2025-03-01T09:12:00+00:00` → `2025-03-01 09:12 UTC`."""
    return at[:16].replace("T", " ") + " UTC" if len(at) >= 16 else at
