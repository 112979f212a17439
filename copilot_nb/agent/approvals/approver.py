"""Who answers the agent's approval requests during a turn: the one seam every surface implements.

`CopilotSession.turn()` hands each `ApprovalNeeded` to the turn's approver once the surface has
shown it. An approver may answer at once (a cell run headless denies, `input()` asks and answers)
or later, from a button (the cell's widgets, the chat panel's front end): the agent waits on the
request either way. Whatever is still unanswered when the turn ends, however it ends, the turn
denies; an approver never needs to clean up.
"""

from __future__ import annotations

from typing import Protocol

from ...events import ApprovalNeeded

UNANSWERED = "the run ended before the user answered"
"""Why a request left unanswered at the end of a turn was denied."""


class Approver(Protocol):
    """Shows an approval request to the user, who answers with `approve()` or `deny(reason)`."""

    def answer(self, request: ApprovalNeeded) -> None:
        """Ask about `request`; answer it now, or arrange for it to be answered later."""


class Unattended:
    """The approver of a turn nobody watches (a script passing `approver=None`): every request is
    denied at once, saying why, so the agent carries on instead of waiting."""

    def answer(self, request: ApprovalNeeded) -> None:
        request.deny("nobody can answer approval requests in this run; the call was not made")


UNATTENDED = Unattended()
