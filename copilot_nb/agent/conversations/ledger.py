"""The conversation's usage as the session counts it, turn by turn: the one figure that the
cell's footer and the chat panel's meter read, kept equal by construction to what the saved
turns sum to in `%copilot usage` and `%copilot conversations` (each turn's record is written
from the tally the ledger closed for it). It counts while nothing is saved too (a cassette, a
script's session), and a resumed conversation starts from its saved turns.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ...events import AgentEvent, UsageReported
from .usage import Tally


class Ledger:
    """Tokens of the conversation: the finished turns', the running turn's, and the context
    window's fill (the last request's whole prompt: another figure, never added to a bill)."""

    def __init__(self) -> None:
        self.before = Tally()
        """The turns that ended."""
        self.turn = Tally()
        """The turn under way (empty between turns)."""
        self.context = 0
        """The whole prompt of the conversation's last request (not a subagent's); 0 until one."""

    def restart(self, turns: Iterable[Mapping[str, Any]] = ()) -> None:
        """A new conversation (none of these turns), or a resumed one (its saved turns)."""
        self.before, self.turn, self.context = Tally.of_turns(turns), Tally(), 0

    def begin(self) -> None:
        self.turn = Tally()

    def observe(self, event: AgentEvent) -> None:
        if isinstance(event, UsageReported):
            counted = Tally.of_event(event)
            self.turn += counted
            if not event.parent:
                self.context = counted.input

    def end(self) -> Tally:
        """The turn's tally, now part of the conversation's (the saved turn's record)."""
        turn, self.turn = self.turn, Tally()
        self.before += turn
        return turn

    @property
    def total(self) -> Tally:
        """The conversation's tokens so far, the running turn's included."""
        return self.before + self.turn
