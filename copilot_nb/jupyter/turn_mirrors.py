"""Views that show every turn of a conversation as it happens, wherever the turn runs.

The chat panel and the `%%copilot` cells share one conversation; a cell's turn is shown in its
cell and, while a panel on the same session is open, in the panel too (its prompt, answer, tool
cards and end), so the panel is the conversation's one view. A cell registers nothing: its
renderer hands each event to the session's mirrors (`CellRenderer(mirrors=...)`). Mirrors are
held weakly: a panel nobody holds any more stops mirroring. A mirror that fails never breaks
the cell.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..agent.session import TurnEvent

_log = logging.getLogger(__name__)
_MIRRORS: weakref.WeakKeyDictionary[Any, weakref.WeakSet[Any]] = weakref.WeakKeyDictionary()
"""Per session (the kernel's one conversation), the views mirroring its cell turns."""


class TurnMirror(Protocol):
    """A view that shows a cell's turn: its prompt, each event, and how it ended."""

    def cell_turn(self, prompt: str) -> None: ...

    def cell_event(self, event: TurnEvent) -> None: ...

    def cell_turn_end(self, status: str) -> None: ...


def mirror_turns(session: Any, view: TurnMirror) -> None:
    """Show `session`'s cell turns in `view` from now on."""
    _MIRRORS.setdefault(session, weakref.WeakSet()).add(view)


def stop_mirroring(session: Any, view: TurnMirror) -> None:
    _MIRRORS.get(session, weakref.WeakSet()).discard(view)


def mirrors_of(session: Any) -> list[TurnMirror]:
    return list(_MIRRORS.get(session, ()))


class Mirrors:
    """A cell turn's mirrors, each call guarded: the cell goes on whatever a view does."""

    def __init__(self, views: list[TurnMirror], prompt: str) -> None:
        self.views = views
        self.ended = False
        self._each(lambda view: view.cell_turn(prompt))

    def event(self, event: TurnEvent) -> None:
        self._each(lambda view: view.cell_event(event))

    def end(self, status: str) -> None:
        if not self.ended:
            self.ended = True
            self._each(lambda view: view.cell_turn_end(status))

    def _each(self, call: Callable[[TurnMirror], None]) -> None:
        for view in self.views:
            try:
                call(view)
            except Exception:
                _log.exception("a view could not show a cell's turn")
