"""A `%%copilot` cell's turn shown in the open chat panel as it happens (`turn_mirrors.py`):
its prompt, answer, tool cards and end, as the panel shows its own turns. Approvals are the
cell's to answer: the panel's card says so instead of offering buttons that would answer a
question shown in two places."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ...events import ApprovalNeeded
from .feed import Outbox, end_op, event_ops

if TYPE_CHECKING:
    from ...agent.session import TurnEvent

ASKED_IN_CELL = "waiting for your answer in the cell"


class Panel(Protocol):
    """What a cell's turn needs of the chat panel (`ChatPanel`)."""

    outbox: Outbox

    def show(self, event: TurnEvent) -> None: ...


class CellTurns:
    """The panel's side of a cell's turn (held by the panel; the session's mirrors hold it
    weakly, so a panel that is gone stops mirroring)."""

    def __init__(self, panel: Panel) -> None:
        self._panel = panel

    def cell_turn(self, prompt: str) -> None:
        self._panel.outbox.put({"op": "user", "text": prompt})

    def cell_event(self, event: TurnEvent) -> None:
        if not isinstance(event, ApprovalNeeded):
            self._panel.show(event)
            return
        for op in event_ops(event):
            if op["op"] == "ask" or op["op"] == "question":
                op = {
                    "op": "asked",
                    "id": op["id"],
                    "approved": True,
                    "outcome": ASKED_IN_CELL,
                    "state": "asking",
                }
            self._panel.outbox.put(op)

    def cell_turn_end(self, status: str) -> None:
        self._panel.outbox.put(end_op(status))
