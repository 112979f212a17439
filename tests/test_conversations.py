"""Saved conversations: written as each turn goes, beside the notebook; a torn last line after a
crash is skipped and reported; two writers never interleave; secrets never reach the file; a
session resumes where the last one stopped, and its next request carries the history."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from copilot_nb.agent.conversations.format import (
    SUFFIX,
    NewerFormat,
    conversation_path,
    message_from,
    message_record,
    record,
)
from copilot_nb.agent.conversations.resume import closed
from copilot_nb.agent.conversations.store import ConversationFile
from copilot_nb.agent.conversations.usage import price_of, rows, tokens_of
from copilot_nb.agent.loop.rounds import INTERRUPTED
from copilot_nb.messages import AssistantMessage, ToolCall, ToolResult, Usage, UserMessage
from copilot_nb.models.recording_scrub import WITHHELD
from copilot_nb.testing import call, reply
from tests.helpers import Answering, events_of, notebook_session
from tests.saved_scan import scan_saved


def lines_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


# --- the record format ------------------------------------------------------------------------


def test_the_file_is_named_after_the_notebook_beside_it(tmp_path):
    assert conversation_path(tmp_path / "a.ipynb") == tmp_path / ("a" + SUFFIX)


def test_every_message_kind_round_trips():
    call_ = ToolCall.from_raw(id="c1", name="read_file", raw_arguments='{"path": "a.py"}')
    usage = Usage(
        input_tokens=3, output_tokens=4, raw={"prompt_tokens_details": {"cached_tokens": 2}}
    )
    messages = [
        UserMessage(content="hi"),
        AssistantMessage(
            text="t",
            tool_calls=(call_,),
            reasoning="r",
            reasoning_signature="sig",
            reasoning_items=({"type": "reasoning", "encrypted_content": "x"},),
            usage=usage,
            finish_reason="tool_calls",
        ),
        ToolResult(tool_call_id="c1", name="read_file", content="x = 1", is_error=True),
    ]
    for message in messages:
        data = message_record(message)
        assert data is not None
        assert message_from(json.loads(json.dumps(data))) == message


def test_an_interrupted_call_gets_a_result_and_a_stray_result_goes():
    reply_ = AssistantMessage(tool_calls=(ToolCall(id="a", name="x", arguments={}),))
    stray = ToolResult(tool_call_id="zzz", name="x", content="?")
    out = closed([UserMessage(content="go"), reply_, stray, UserMessage(content="again")])
    assert [m.role for m in out] == ["user", "assistant", "tool", "user"]
    assert out[2].content == INTERRUPTED


# --- the file ---------------------------------------------------------------------------------


def test_a_torn_last_line_is_reported_and_the_turns_before_it_load(tmp_path):
    file = ConversationFile(tmp_path / ("n" + SUFFIX))
    file.append([record("start", "c1", at="2025-01-01T00:00:00+00:00")])
    file.append([record("message", "c1", turn="t1", message={"role": "user", "content": "one"})])
    file.append([record("turn", "c1", turn="t1", at="2025-01-01T00:00:00+00:00")])
    with open(file.path, "ab") as handle:
        handle.write(b'{"kind":"message","conversation":"c1","turn":"t2","message":{"role":"us')
    loaded = file.load("c1", budget=10**6)
    assert [m["content"] for m in loaded.messages] == ["one"]
    assert loaded.problems and "incomplete" in loaded.problems[0]
    # the next writer starts on a line of its own; the torn line stays skipped
    file.append([record("message", "c1", turn="t3", message={"role": "user", "content": "three"})])
    loaded = file.load("c1", budget=10**6)
    assert [m["content"] for m in loaded.messages] == ["one", "three"]
    assert "not a record" in loaded.problems[0]


def test_a_newer_format_is_refused_and_left_untouched(tmp_path):
    path = tmp_path / ("n" + SUFFIX)
    path.write_text('{"format": "copilot_nb conversation", "version": 99}\n{"kind":"future"}\n')
    path.chmod(0o600)  # as copilot_nb makes it: only the user's own file is read
    before = path.read_bytes()
    file = ConversationFile(path)
    with pytest.raises(NewerFormat, match="newer than the 1"):
        file.append([record("start", "c1")])
    with pytest.raises(NewerFormat):
        file.current()
    assert path.read_bytes() == before


def test_a_resume_loads_only_the_newest_turns_that_fit(tmp_path):
    file = ConversationFile(tmp_path / ("n" + SUFFIX))
    for number in range(50):
        turn = f"t{number}"
        text = f"request {number} " + "x" * 1000
        file.append([record("message", "c1", turn=turn, message={"role": "user", "content": text})])
        file.append([record("turn", "c1", turn=turn, at="2025-01-01T00:00:00+00:00")])
    loaded = file.load("c1", budget=10_000)
    assert len(loaded.turns) == 50
    assert 0 < len(loaded.messages) < 10
    assert loaded.messages[-1]["content"].startswith("request 49 ")
    assert loaded.left_out_turns == 50 - len(loaded.messages)


def _write_many(path: str, conversation: str, count: int) -> None:
    file = ConversationFile(path)
    for number in range(count):
        text = f"{conversation}-{number} " + "y" * 5000
        file.append(
            [
                record(
                    "message",
                    conversation,
                    turn=f"{conversation}{number}",
                    message={"role": "user", "content": text},
                )
            ]
        )


def test_two_writers_never_interleave_or_lose_a_line(tmp_path):
    path = str(tmp_path / ("n" + SUFFIX))
    context = multiprocessing.get_context("spawn")
    writers = [context.Process(target=_write_many, args=(path, name, 200)) for name in ("aa", "bb")]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(60)
    lines = Path(path).read_text().splitlines()
    assert json.loads(lines[0])["version"] == 1
    records = [json.loads(line) for line in lines[1:]]
    for name in ("aa", "bb"):
        mine = [r["message"]["content"].split()[0] for r in records if r["conversation"] == name]
        assert mine == [f"{name}-{n}" for n in range(200)]


# --- usage ------------------------------------------------------------------------------------


def test_tokens_are_read_from_each_providers_usage():
    chat = Usage(
        input_tokens=10,
        output_tokens=5,
        raw={
            "prompt_tokens_details": {"cached_tokens": 4},
            "completion_tokens_details": {"reasoning_tokens": 2},
        },
    )
    messages = Usage(input_tokens=10, output_tokens=5, raw={"cache_read_input_tokens": 3})
    assert tokens_of(chat) == {
        "input": 10,
        "output": 5,
        "cached": 4,
        "cache_write": 0,
        "reasoning": 2,
    }
    assert tokens_of(messages)["cached"] == 3


def test_money_only_from_the_users_prices():
    tokens = {"input": 1_000_000, "output": 1_000_000, "cached": 500_000}
    prices = {"gpt-4o": {"input": 2.5, "output": 10.0, "cached": 1.25}}
    assert price_of("gpt-4o", tokens, prices) == pytest.approx(1.25 + 0.625 + 10.0)
    assert price_of("other", tokens, prices) is None
    turns = [
        {
            "conversation": "c",
            "at": "2025-01-02T10:00:00",
            "model": "gpt-4o",
            "tokens": tokens,
            "premium": 1.0,
        },
        {"conversation": "c", "at": "2025-01-02T11:00:00", "model": "mystery", "tokens": tokens},
    ]
    (row,) = rows(turns, by="day", prices=prices)
    assert row.key == "2025-01-02" and row.turns == 2 and row.premium == 1.0
    assert row.cost is None and row.unpriced == ("mystery",)


def test_premium_requests_only_where_copilot_gave_a_multiplier():
    tokens = {"input": 100, "output": 10}
    elsewhere = {"conversation": "c", "at": "2025-01-02T10:00:00", "model": "gpt-4o"}
    turns = [{**elsewhere, "provider": "openai", "tokens": tokens, "premium": None}]
    (row,) = rows(turns, by="conversation", prices={})
    assert row.premium is None, "no figure at all for a model outside Copilot, not 0"
    copilot = {**elsewhere, "provider": "copilot", "tokens": tokens, "premium": 0.0}
    (mixed,) = rows([*turns, copilot], by="conversation", prices={})
    assert mixed.premium == 0.0, "an included Copilot model: 0 premium requests, said"


async def test_copilot_usage_has_no_premium_column_for_other_providers(
    serve, tmp_path, monkeypatch, capsys
):
    from argparse import Namespace
    from types import SimpleNamespace

    from copilot_nb.jupyter.commands.conversations import usage

    monkeypatch.chdir(tmp_path)
    server = serve([reply("one")])
    session = notebook_session(tmp_path, server)
    await events_of(session, "first")
    usage(session, Namespace(), SimpleNamespace(prices={}))
    shown = capsys.readouterr().out
    assert "tokens in" in shown and "premium" not in shown


# --- through the session ----------------------------------------------------------------------


async def test_turns_are_saved_as_they_go_and_a_new_session_resumes_them(
    serve, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text(f"print({str(tmp_path)!r})\n")
    server = serve(
        [
            reply("", call("read_file", path="a.py")),
            reply("It prints the folder."),
            reply("Second answer."),
            reply("Third answer."),
        ]
    )
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    first = notebook_session(tmp_path, server)
    await events_of(first, "What does a.py print?")
    await events_of(first, "And then?")
    path = tmp_path / ("analysis" + SUFFIX)
    records = lines_of(path)
    kinds = [r.get("kind") for r in records[1:]]
    assert kinds == [
        "start",
        "message",
        "message",
        "message",
        "shown",
        "message",
        "turn",
        "message",
        "message",
        "turn",
    ]
    assert str(tmp_path) not in path.read_text()  # the workspace is `<workspace>`
    turn = next(r for r in records if r.get("kind") == "turn")
    assert turn["request"] == "What does a.py print?" and turn["model"] == "scripted"
    assert turn["outcome"] == "done" and turn["tools"] == ["read_file"]

    second = notebook_session(tmp_path, server)
    resumed = second.saved.resume(second.current_model_spec())
    assert resumed is not None and resumed.turns == 2
    await events_of(second, "Third question")
    sent = server.requests[-1].messages
    users = [m["content"] for m in sent if m["role"] == "user"]
    assert users[0].endswith("What does a.py print?") and users[-1].endswith("Third question")
    tool = next(m for m in sent if m["role"] == "tool")
    assert str(tmp_path) in tool["content"]  # the placeholder is this machine's path again
    assert [r.get("kind") for r in lines_of(path)].count("turn") == 3


async def test_an_approved_secret_read_is_withheld_and_keys_are_redacted(
    serve, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    key = "sk-proj-" + "Zq9" * 16
    (tmp_path / ".env").write_text(f"PASSWORD=hunter2-very-private\nOPENAI_API_KEY={key}\n")
    server = serve([reply("", call("read_file", path=".env")), reply(f"Your key is {key}.")])
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    session = notebook_session(tmp_path, server)
    await events_of(session, "read .env")
    text = (tmp_path / ("analysis" + SUFFIX)).read_text()
    assert "hunter2" not in text and key not in text
    assert WITHHELD in text and "[redacted]" in text
    assert scan_saved([tmp_path])  # what every test's saved files pass
    # the resumed model is told what was left out
    again = notebook_session(tmp_path, server)
    again.saved.resume(again.current_model_spec())
    agent = again.agent_for(again.model())
    assert any(getattr(m, "content", "") == WITHHELD for m in agent.messages)


async def test_reset_starts_a_new_conversation_and_keeps_the_old(serve, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    server = serve([reply("one"), reply("two")])
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    session = notebook_session(tmp_path, server)
    await events_of(session, "first")
    old = session.saved.recorder.conversation
    session.reset()
    file = session.saved.file()
    assert file.current() != old  # a restart now resumes the new, empty one: nothing
    await events_of(session, "second")
    assert [s.first_request for s in file.summaries()] == ["first", "second"]


async def test_the_panel_shows_a_saved_conversation_as_it_showed_it_live(
    serve, tmp_path, monkeypatch
):
    from copilot_nb.agent.conversations.usage import Tally
    from copilot_nb.jupyter.panel.feed import Outbox, event_ops
    from copilot_nb.jupyter.panel.saved import conversation_ops, usage_note

    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.py").write_text("x = 1\n")
    server = serve(
        [
            reply(
                "Let me look.",
                call("read_file", path="a.py"),
                call("edit_file", path="a.py", old_str="x = 1", new_str="x = 2"),
            ),
            reply("Changed **x** to 2."),
            reply("", call("read_file", path="missing.py")),
            reply("No such file."),
        ]
    )
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    session = notebook_session(tmp_path, server)
    live = Outbox(lambda message: None)
    for prompt in ("set x to 2", "read missing.py"):
        live.put({"op": "user", "text": prompt})
        async for event in session.turn(
            prompt, approver=Answering(), approvals=session.approvals.approve_changes()
        ):
            for op in event_ops(event):
                live.put(op)
        live.put({"op": "end", "status": "done"})
    assert any(op["op"] == "diff" for op in live.history)

    resumed = notebook_session(tmp_path, server)
    resumed.saved.resume(resumed.current_model_spec())
    ops, turns = conversation_ops(resumed.saved)
    tokens = Tally.of_turns(turns)
    saved = Outbox(lambda message: None)
    saved.seed(ops)
    assert saved.history == live.history
    assert tokens.input > 0 and tokens.output > 0
    assert resumed.saved.usage.total == tokens, "the meter starts from the saved turns"
    assert usage_note(turns, {}) == (
        "cost unknown: no price set for scripted (CopilotMagics.prices)"
    )
    priced = usage_note(turns, {"scripted": {"input": 1.0, "output": 2.0}})
    assert priced.startswith("$0.0")
