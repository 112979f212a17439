"""Approval answers on a cassette: what the user answered is recorded, and a replay gives the
same answers without asking, so a replayed notebook needs no `--yes` and waits for no one.

A cassette is a file that can come from anywhere, so a recorded "yes" stands in for the user only
for exactly the call it was given to (the tool and its whole arguments), and only when the user
recorded it (signed with their key) or chose to trust the cassette (`%copilot replay --trust`).
Otherwise the call is asked live, as any call would be (where nobody can answer, it is denied). A
replayed "yes" approves the one call: it never makes an MCP server trusted for later. A recorded
"no" is always kept: refusing needs no trust.
"""

from __future__ import annotations

import asyncio

from ...events import ApprovalNeeded, Question
from ...models.cassettes.cassette import Cassette, CassetteMismatch
from ...models.cassettes.entries import Scrubber, call_arguments
from .approver import Approver

SECRET_CATEGORY = "read-secret"


class CassetteApprover:
    """Answers from the cassette when it holds this user's answer to this very call; otherwise
    asks `inner`, and records the answer when the cassette is recording."""

    def __init__(self, inner: Approver, cassette: Cassette) -> None:
        self.inner = inner
        self.cassette = cassette

    def answer(self, request: ApprovalNeeded) -> None:
        arguments = call_arguments(request.arguments, Scrubber.here())
        try:
            recorded = self.cassette.recorded_answer(request.name, request.summary)
        except CassetteMismatch as exc:
            request.deny(str(exc))
            return
        if recorded is None:
            request.decision.add_done_callback(lambda done: self._record(request, done))
            self.inner.answer(request)
        elif not recorded.approved:
            request.deny(recorded.reason)
        elif recorded.arguments == arguments and self.cassette.vouches_for(recorded):
            self._withhold_secret(request, True)
            if isinstance(request, Question):  # the recorded answer is the user's words
                request.reply(recorded.reason)
            else:
                request.approve_once()
        else:  # not this call, or not the user's answer: the user answers it now
            request.decision.add_done_callback(
                lambda done: self._withhold_secret(request, _approved(done))
            )
            self.inner.answer(request)

    def _withhold_secret(self, request: ApprovalNeeded, approved: bool) -> None:
        if approved and request.category == SECRET_CATEGORY:
            self.cassette.withhold(request.call_id)

    def _record(self, request: ApprovalNeeded, done: asyncio.Future[tuple[bool, str]]) -> None:
        if done.cancelled():
            return
        approved, reason = done.result()
        self._withhold_secret(request, approved)
        if not self.cassette.recording:
            return
        self.cassette.record_answer(
            request.name,
            request.summary,
            approved,
            reason,
            arguments=call_arguments(request.arguments, Scrubber.here()),
            category=request.category,
        )


def _approved(done: asyncio.Future[tuple[bool, str]]) -> bool:
    return not done.cancelled() and done.result()[0]
