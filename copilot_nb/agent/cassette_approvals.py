"""Approval answers on a cassette: what the user answered is recorded, and a replay gives the
same answers without asking, so a replayed notebook needs no `--yes` and waits for no one."""

from __future__ import annotations

import asyncio

from ..events import ApprovalNeeded
from ..models.cassette import Cassette, CassetteMismatch
from .approver import Approver


class CassetteApprover:
    """Answers from the cassette when it has the answer; otherwise asks `inner`, and records the
    answer when the cassette is recording."""

    def __init__(self, inner: Approver, cassette: Cassette) -> None:
        self.inner = inner
        self.cassette = cassette

    def answer(self, request: ApprovalNeeded) -> None:
        try:
            recorded = self.cassette.recorded_answer(request.name, request.summary)
        except CassetteMismatch as exc:
            request.deny(str(exc))
            return
        if recorded is not None:
            if recorded.approved:
                request.approve()
            else:
                request.deny(recorded.reason)
            return
        request.decision.add_done_callback(lambda done: self._record(request, done))
        self.inner.answer(request)

    def _record(self, request: ApprovalNeeded, done: asyncio.Future[tuple[bool, str]]) -> None:
        if done.cancelled() or not self.cassette.recording:
            return
        approved, reason = done.result()
        self.cassette.record_answer(request.name, request.summary, approved, reason)
