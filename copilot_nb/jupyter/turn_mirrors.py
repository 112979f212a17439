"""Views that show every turn of a conversation as it happens, wherever the turn runs.

The chat panel and the `%%copilot` cells share one conversation; a cell's turn is shown in its
cell and, while a panel on the same session is open, in the panel too (its prompt, answer, tool
cards and end), so the panel is the conversation's one view. A panel registers on its session
(`mirror_turns`); a cell's turn enters `mirrored(session)` as its first stage, whose event hook
hands each event, once the cell has shown it, to the session's views. The views are the
session's own, held weakly: a panel nobody holds any more stops mirroring. A view that fails
never breaks the cell.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ..agent.turn import NOTHING, Adds, Stage, Turn
from ..events import Done, Failed

if TYPE_CHECKING:
    from ..agent.session import TurnEvent

_log = logging.getLogger(__name__)


class TurnMirror(Protocol):
    """A view that shows a cell's turn: its prompt, each event, and how it ended."""

    def cell_turn(self, prompt: str) -> None: ...

    def cell_event(self, event: TurnEvent) -> None: ...

    def cell_turn_end(self, status: str) -> None: ...


def mirror_turns(session: Any, view: TurnMirror) -> None:
    """Show `session`'s cell turns in `view` from now on."""
    session.mirrors.add(view)


def stop_mirroring(session: Any, view: TurnMirror) -> None:
    session.mirrors.discard(view)


def mirrored(session: Any, shown: str | None = None) -> Stage:
    """The stage that shows a turn in the views open on `session` as it happens: its request
    now (`shown`: the user's words, else the turn's), each event once the surface has shown
    it, and how it ended (`done`, `failed`, or `stopped` when it ended with neither)."""

    def stage(turn: Turn) -> Adds:
        views = list(session.mirrors)
        if not views:
            return NOTHING
        mirror = Mirror(views, turn.text() if shown is None else shown)
        return Adds(after=mirror.event, exit=mirror.stopped)

    return stage


class Mirror:
    """One turn's views, each call guarded: the turn goes on whatever a view does."""

    def __init__(self, views: list[TurnMirror], prompt: str) -> None:
        self.views = views
        self.ended = False
        self._each(lambda view: view.cell_turn(prompt))

    async def event(self, event: TurnEvent) -> None:
        self._each(lambda view: view.cell_event(event))
        if isinstance(event, (Done, Failed)):
            self._end("done" if isinstance(event, Done) else "failed")

    def stopped(self) -> None:
        self._end("stopped")

    def _end(self, status: str) -> None:
        if not self.ended:
            self.ended = True
            self._each(lambda view: view.cell_turn_end(status))

    def _each(self, call: Callable[[TurnMirror], None]) -> None:
        for view in self.views:
            try:
                call(view)
            except Exception:
                _log.exception("a view could not show a cell's turn")
