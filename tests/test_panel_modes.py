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


async def test_once_a_plan_is_approved_the_picker_shows_agent_where_the_work_goes_on(
    serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    monkeypatch.chdir(tmp_path)
    server = serve([reply("1. look"), reply("1. look again"), reply("2. do it"), reply("Done.")])
    panel = ChatPanel(CopilotSession(resolve=lambda spec: server.model()), model="openai:scripted")
    front = Front(panel)
    front.set(mode="plan")
    front.say(kind="prompt", text="plan it")
    await front.until(lambda: "ask" in front.kinds())
    front.say(kind="deny", id="plan-1")
    await panel.wait()
    assert panel.widget.mode == "plan", "a plan not carried out leaves the user planning"

    front.say(kind="prompt", text="plan it again")
    await front.until(lambda: front.kinds().count("ask") == 2)
    front.say(kind="revise", id="plan-1", text="shorter")
    await front.until(lambda: front.kinds().count("ask") == 3)
    assert panel.widget.mode == "plan", "a revised plan is planned again"
    front.say(kind="approve", id="plan-2")
    await panel.wait()
    assert "write_file" in offered(server.requests[-1]), "the approved plan ran in agent mode"
    assert panel.widget.mode == "agent", "and the next request goes on in it"
