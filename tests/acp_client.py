"""An ACP editor for tests: the SDK's own client side, which records every update and answers
each permission request from a queue of chosen options."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from acp import spawn_agent_process
from acp.schema import (
    AcceptElicitationResponse,
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    RequestPermissionResponse,
)

from tests.kernel_session import scripted_env

ASKS_IN_FORMS = ClientCapabilities(
    elicitation=ElicitationCapabilities(form=ElicitationFormCapabilities())
)
"""An editor that answers the agent's questions in a form (elicitation)."""


class Editor:
    """What an editor does with the agent's requests: shows updates, answers permissions."""

    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.asked: list[Any] = []
        self.answers: list[str] = []
        """Option ids to choose, in order; none left: the request is cancelled."""
        self.changed = asyncio.Event()
        self.held: asyncio.Event | None = None
        """Set: each permission dialog stays open until this is set, then answers cancelled."""
        self.questions: list[Any] = []
        self.replies: list[str] = []
        """What the user types into each question's form, in order."""

    def on_connect(self, conn: Any) -> None:
        pass

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)
        self.changed.set()

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> RequestPermissionResponse:
        self.asked.append(tool_call)
        self.changed.set()
        if self.held is not None:  # the dialog stays open until the turn is cancelled
            await self.held.wait()
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        if not self.answers:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        choice = self.answers.pop(0)
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=choice)
        )

    async def create_elicitation(self, message: str, mode: Any, **kwargs: Any) -> Any:
        self.questions.append((message, mode))
        return AcceptElicitationResponse(action="accept", content={"answer": self.replies.pop(0)})

    def of(self, kind: str) -> list[Any]:
        """The updates of one `sessionUpdate` kind, in order."""
        return [u for u in self.updates if u.session_update == kind]

    def text(self) -> str:
        return "".join(u.content.text for u in self.of("agent_message_chunk"))


@asynccontextmanager
async def agent_for(server: Any, cwd: Path, editor: Editor, **env: str) -> AsyncIterator[Any]:
    """`copilot-nb acp` as an editor starts it (`python -m copilot_nb acp`), its model the
    loopback server; yields the client-side connection."""
    full = {**os.environ, **scripted_env(server, **env)}
    async with spawn_agent_process(
        editor,
        sys.executable,
        "-m",
        "copilot_nb",
        "acp",
        env=full,
        cwd=str(cwd),
        use_unstable_protocol=True,  # elicitation and session/resume
    ) as (conn, _process):
        yield conn
