"""Retries in the chat panel: what a `%%copilot` cell takes back when a request is retried (the
broken attempt's words, the notice once the wait is over), the panel takes back too, in its own
turns and in the cell turns it shows. A loopback server breaks the stream or refuses; the panel's
transcript is read as a view that opens after the turn gets it (its replay)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import comm
import pytest

from copilot_nb.agent.session import CopilotSession
from copilot_nb.jupyter.cell_view import CellRenderer, render_turn
from copilot_nb.jupyter.panel.widget import ChatPanel
from copilot_nb.jupyter.turn_mirrors import mirrored
from copilot_nb.models.transport import RetryPolicy
from copilot_nb.testing import fail, reply
from tests.panel_front import Front, RecordingComm

FAST = RetryPolicy(max_retries=2, initial_delay=0.01, max_delay=0.05)


@pytest.fixture(autouse=True)
def recording_comms(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(comm, "create_comm", RecordingComm)
    monkeypatch.chdir(tmp_path)


def panel_on(server: Any) -> tuple[ChatPanel, Front]:
    """A panel on a session of its own whose model is the server's, retrying at once."""

    def model(spec: str) -> Any:
        made = server.model()
        made.retry = FAST
        return made

    session = CopilotSession(resolve=model)
    panel = ChatPanel(session, model="openai:scripted")
    return panel, Front(panel)


def replayed(panel: ChatPanel, front: Front) -> list[dict[str, Any]]:
    """The transcript a view that opens now is sent."""
    panel.outbox.replay("late")
    (replay,) = [m for m in front.custom() if m["kind"] == "replay" and m["view"] == "late"]
    return list(replay["ops"])


class CellDisplay:
    """Stands in for the cell's display: the text of its last update."""

    def __init__(self) -> None:
        self.text = ""

    def __call__(self, obj: Any, display_id: bool = True, **_: Any) -> CellDisplay:
        self.update(obj)
        return self

    def update(self, obj: Any, **_: Any) -> None:
        self.text = obj._repr_mimebundle_()["text/plain"]


async def run_in_a_cell(panel: ChatPanel, prompt: str) -> str:
    """A `%%copilot` cell's turn on the panel's session, shown in the panel as it happens."""
    shown = CellDisplay()
    renderer = CellRenderer(display=shown)
    turn = panel.session.turn(prompt, approver=None, stages=[mirrored(panel.session)])
    await render_turn(turn, renderer)
    panel.outbox.flush()
    return shown.text


async def test_a_broken_stream_shows_its_answer_once_in_the_panel_as_in_the_cell(serve):
    server = serve(
        [
            reply("half an ans" * 5, chunk_size=3, break_after=4),
            reply("Whole answer."),
            reply("Part of a seco" * 5, chunk_size=3, break_after=4),
            reply("Second answer."),
        ]
    )
    panel, front = panel_on(server)
    cell = await run_in_a_cell(panel, "in the cell")
    assert cell.startswith("Whole answer.") and "half an ans" not in cell
    front.say(kind="prompt", text="in the panel")
    await panel.wait()
    ops = replayed(panel, front)
    assert ops == [
        {"op": "user", "text": "in the cell"},
        {"op": "text", "text": "Whole answer."},
        {"op": "end", "status": "done"},
        {"op": "user", "text": "in the panel"},
        {"op": "text", "text": "Second answer."},
        {"op": "end", "status": "done"},
    ]
    live = front.kinds()
    assert live.count("retry") == 2, "each wait was shown while it lasted"


async def test_a_model_server_that_stays_down_leaves_only_its_error_in_the_panel(serve):
    server = serve([fail(503, f"overloaded {n}") for n in range(3)])
    panel, front = panel_on(server)
    cell = await run_in_a_cell(panel, "hello?")
    assert "retrying" not in cell and cell.startswith("Error:")
    ops = replayed(panel, front)
    assert [op["op"] for op in ops] == ["user", "error", "end"], ops
    assert "overloaded 2" in ops[1]["message"]
