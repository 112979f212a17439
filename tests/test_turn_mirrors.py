"""A `%%copilot` cell's turn shows in the views open on its session (the chat panel) through an
event hook the cell's turn adds as its first stage; the views are the session's own, held
weakly, and a view that fails never breaks the turn."""

from __future__ import annotations

import gc
from contextlib import aclosing
from typing import Any

from copilot_nb.events import TextDelta
from copilot_nb.jupyter.turn_mirrors import mirror_turns, mirrored, stop_mirroring
from copilot_nb.testing import reply
from tests.helpers import events_of, scripted_session


class Recording:
    """A view that writes down what it was shown of a cell's turn."""

    def __init__(self) -> None:
        self.shown: list[tuple[str, str]] = []

    def cell_turn(self, prompt: str) -> None:
        self.shown.append(("turn", prompt))

    def cell_event(self, event: Any) -> None:
        self.shown.append(("event", type(event).__name__))

    def cell_turn_end(self, status: str) -> None:
        self.shown.append(("end", status))


class Broken(Recording):
    def cell_event(self, event: Any) -> None:
        raise RuntimeError("a view's own bug")


async def test_a_cells_turn_shows_in_its_sessions_views_and_nowhere_else(
    serve, tmp_path, monkeypatch
):
    server = serve([reply("hello"), reply("again")])
    session = scripted_session(server, tmp_path, monkeypatch)
    other = scripted_session(server, tmp_path, monkeypatch)
    view, elsewhere = Recording(), Recording()
    mirror_turns(session, view)
    mirror_turns(other, elsewhere)

    await events_of(session, "hi", stages=[mirrored(session)])

    assert view.shown == [
        ("turn", "hi"),
        ("event", "TextDelta"),
        ("event", "UsageReported"),
        ("event", "Done"),
        ("end", "done"),
    ]
    assert elsewhere.shown == [], "another session's panel shows nothing of it"
    view.shown.clear()
    await events_of(session, "again")  # the panel's own turn: no mirror stage
    assert view.shown == []


async def test_a_stopped_cell_turn_ends_as_stopped_in_the_panel(serve, tmp_path, monkeypatch):
    server = serve([reply("word " * 50, chunk_size=5, delay=0.01)])
    session = scripted_session(server, tmp_path, monkeypatch)
    view = Recording()
    mirror_turns(session, view)
    turn = session.turn("long", approver=None, stages=[mirrored(session)])
    async with aclosing(turn) as events:
        async for event in events:
            if isinstance(event, TextDelta):
                break  # the user's interrupt closes the turn
    assert view.shown[0] == ("turn", "long") and view.shown[-1] == ("end", "stopped")


async def test_a_view_that_fails_or_is_gone_never_breaks_the_cells_turn(
    serve, tmp_path, monkeypatch
):
    server = serve([reply("one"), reply("two")])
    session = scripted_session(server, tmp_path, monkeypatch)
    broken, gone, later = Broken(), Recording(), Recording()
    mirror_turns(session, broken)
    mirror_turns(session, gone)
    mirror_turns(session, later)
    del gone
    gc.collect()

    events = await events_of(session, "hi", stages=[mirrored(session)])
    assert type(events[-1]).__name__ == "Done"
    assert broken.shown == [("turn", "hi"), ("end", "done")]

    stop_mirroring(session, later)
    await events_of(session, "again", stages=[mirrored(session)])
    assert ("turn", "again") not in later.shown
