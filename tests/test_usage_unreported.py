"""A server that sends no usage (issue 35, case 8): its tokens are unknown, never 0, and the
saved turn counts them from the estimate and says so."""

from __future__ import annotations

from types import SimpleNamespace

from copilot_nb.agent.conversations.usage import rows
from copilot_nb.events import Done, UsageReported
from copilot_nb.jupyter.cell_view import CellRenderer
from copilot_nb.messages import Usage
from copilot_nb.testing import call, reply
from evals.harness import Result, summary, table
from tests.helpers import events_of, notebook_session


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
