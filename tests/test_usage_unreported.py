"""A server that sends no usage (issue 35, case 8): its tokens are unknown, never 0, and the
saved turn counts them from the estimate and says so; a cell's footer, `%copilot usage` and the
saved turns give one number for the conversation, marked where it is our estimate."""

from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any

from copilot_nb.agent.conversations.usage import rows
from copilot_nb.events import Done, UsageReported
from copilot_nb.jupyter.cell_view import CellRenderer
from copilot_nb.messages import Usage
from copilot_nb.testing import call, reply
from evals.harness import Result, summary, table
from tests.helpers import Answering, events_of, notebook_session


async def _turn_record(serve, tmp_path, monkeypatch, *, sends_usage: bool) -> dict:
    (tmp_path / "a.txt").write_text("alpha\n")
    monkeypatch.chdir(tmp_path)
    server = serve(
        [reply("", call("read_file", path="a.txt")), reply("It says alpha.")],
        sends_usage=sends_usage,
    )
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    session = notebook_session(tmp_path, server)
    await events_of(session, "what does a.txt say?")
    turn = session.saved.recorder.last_turn
    assert turn is not None
    return turn


async def test_a_turn_without_usage_is_counted_from_the_estimate_and_says_so(
    serve, tmp_path, monkeypatch
):
    turn = await _turn_record(serve, tmp_path, monkeypatch, sends_usage=False)
    assert turn["estimated"] == 2, "both replies came without usage"
    assert turn["tokens"]["input"] > 0 and turn["tokens"]["output"] > 0
    [row] = rows([turn], by="conversation", prices={})
    assert row.estimated


async def test_a_turn_with_usage_keeps_the_servers_counts(serve, tmp_path, monkeypatch):
    turn = await _turn_record(serve, tmp_path, monkeypatch, sends_usage=True)
    assert "estimated" not in turn
    assert turn["tokens"]["input"] == 20, "the scripted server's 10 a request, as reported"
    [row] = rows([turn], by="conversation", prices={})
    assert not row.estimated


def test_a_cells_provenance_says_unknown_when_no_usage_came():
    handle = SimpleNamespace(update=lambda *args, **kwargs: None)
    silent = CellRenderer(display=lambda obj, display_id: handle, interval=0)
    silent.handle(Done(text="hi"))
    assert silent.provenance()["usage"] is None
    counted = CellRenderer(display=lambda obj, display_id: handle, interval=0)
    counted.handle(UsageReported(usage=Usage(input_tokens=7, output_tokens=3)))
    assert counted.provenance()["usage"] == {
        "input_tokens": 7,
        "output_tokens": 3,
        "cached_tokens": 0,
    }


def test_the_eval_table_shows_unknown_tokens_as_unknown():
    row = dict(kind="plot", ok=True, reason="", rounds=1, premium=0.0, seconds=1.0)
    results = [
        Result(task="silent", tokens_in=None, tokens_out=None, **row),
        Result(task="counted", tokens_in=1200, tokens_out=30, **row),
    ]
    assert "| silent | plot | ✓ | 1 | unknown | unknown |" in table(results)
    assert summary(results)["tokens_unknown"] == 1
    assert summary(results)["tokens_in"] == 1200


def test_copilot_usage_marks_estimated_counts_with_a_tilde():
    from copilot_nb.jupyter.commands.conversations import _row

    turn = {"conversation": "c", "tokens": {"input": 1500, "output": 20}, "estimated": 1}
    [row] = rows([turn], by="conversation", prices={})
    shown = _row(row)
    assert shown[2] == "~1,500" and shown[4] == "~20"
    [exact] = rows([{**turn, "estimated": 0}], by="conversation", prices={})
    assert _row(exact)[2] == "1,500"


class _Shown:
    """What a cell shows last, as a front end keeps it."""

    text = ""

    def __call__(self, rendered: Any, **_: Any) -> _Shown:
        self.text = rendered.text
        return self

    def update(self, rendered: Any, **_: Any) -> None:
        self.text = rendered.text


async def test_the_footer_adds_the_conversation_and_usage_shows_the_same_number(
    serve, tmp_path, monkeypatch
):
    """The second cell's footer says its own tokens, then the conversation's: the sum of every
    request's prompt, as `%copilot usage` sums the saved turns; the estimate marked `~`."""
    from copilot_nb.jupyter.commands.conversations import _row

    monkeypatch.chdir(tmp_path)
    server = serve([reply("One."), reply("Two.")])
    session = notebook_session(tmp_path, server)
    footers = []
    for prompt in ("first", "second"):
        shown = _Shown()
        renderer = CellRenderer(display=shown, interval=0, usage=session.saved.usage)
        async for event in session.turn(prompt, approver=Answering()):
            renderer.handle(event)
        renderer.flush()
        footers.append(shown.text.splitlines()[-1])
        server.sends_usage = False  # the second reply comes without usage
    assert footers[0] == "tokens: 10 in · 1 out", "one turn: its tokens are the conversation's"
    found = re.fullmatch(
        r"tokens: ~([\d,]+) in · ~(\d+) out · conversation: (~[\d,]+) in · (~\d+) out",
        footers[1],
    )
    assert found is not None, footers[1]
    turn_in, _, conversation_in, _ = (g.replace(",", "") for g in found.groups())
    assert conversation_in == f"~{10 + int(turn_in)}"
    file = session.saved.file()
    turns = [r for r in file.records(session.saved.recorder.conversation) if r["kind"] == "turn"]
    [row] = rows(turns, by="conversation", prices={})
    assert _row(row)[2] == found.group(3), "%copilot usage: the same number, marked the same"
