"""The chat panel's mode picker: it starts at the session's mode and each turn sent from the
panel runs in the mode it shows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import comm
import pytest

from copilot_nb.agent.session import CopilotSession
from copilot_nb.jupyter.panel.widget import ChatPanel
from copilot_nb.testing import reply
from tests.panel_front import Front, RecordingComm


@pytest.fixture(autouse=True)
def recording_comms(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(comm, "create_comm", RecordingComm)


def offered(request: Any) -> set[str]:
    return {tool["function"]["name"] for tool in request.body.get("tools", [])}


async def test_the_picker_starts_at_the_sessions_mode_and_a_turn_runs_in_the_one_it_shows(
    serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.chdir(tmp_path)
    server = serve([reply("an answer"), reply("done")])
    session = CopilotSession(resolve=lambda spec: server.model())
    session.mode = "ask"
    panel = ChatPanel(session, model="openai:scripted")
    front = Front(panel)
    assert panel.widget.mode == "ask"

    front.say(kind="prompt", text="what is here?")
    await panel.wait()
    assert "write_file" not in offered(server.requests[0]), "ask mode: reading tools only"

    front.set(mode="agent")
    front.say(kind="prompt", text="now do it")
    await panel.wait()
    assert "write_file" in offered(server.requests[1])
    assert session.mode == "ask", "the picker chooses for the panel's turns, not the session"

    front.set(mode="<script>")
    assert panel.mode == "agent", "a view cannot send a mode that does not exist"
