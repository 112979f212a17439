"""What the chat panel sends its front end, without a widget: batched ops, previews, event ops."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from copilot_nb.events import Failed, Notice, ReasoningDelta, TextDelta
from copilot_nb.jupyter.panel.feed import Outbox, arguments_preview, event_ops, tool_op


def text(words: str) -> dict[str, Any]:
    return {"op": "text", "text": words}


def user(words: str) -> dict[str, Any]:
    return {"op": "user", "text": words}


def end(status: str) -> dict[str, Any]:
    return {"op": "end", "status": status}


def thought(words: str) -> dict[str, Any]:
    return {"op": "reasoning", "text": words}


def retry(words: str) -> dict[str, Any]:
    return {"op": "retry", "text": words}


def ask(call_id: str, category: str, warning: str = "") -> dict[str, Any]:
    return {"op": "ask", "id": call_id, "category": category, "warning": warning}


def batch(*ops: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "ops", "ops": list(ops)}


CARD = tool_op("c1", "read_file", "a.py", "", "")


def test_outbox_joins_text_and_sends_a_batch_when_it_is_due():
    sent: list[Any] = []
    now = [0.0]
    timers: list[float] = []
    box = Outbox(
        sent.append, interval=0.1, max_wait=0.3, clock=lambda: now[0], call_later=_record(timers)
    )
    box.put(text("a"))  # the first op after a quiet spell goes at once
    now[0] = 0.01
    box.put(text("b"))
    box.put(text("c"))
    assert sent == [batch(text("a"))]
    assert timers == [pytest.approx(0.29)], "a small batch is sent by a timer at the latest"
    now[0] = 0.2
    box.put(text("d"))  # the interval has passed, but a few characters wait for more
    assert len(sent) == 1
    now[0] = 0.31
    box.put(text("e"))  # ... up to max_wait
    assert sent[-1] == batch(text("bcde"))
    now[0] = 0.35
    box.put(text("x" * 60))
    assert len(sent) == 2 and timers[-1] == pytest.approx(0.06)
    now[0] = 0.45
    box.put(text("y"))  # a full batch goes as soon as the interval has passed
    assert sent[-1] == batch(text("x" * 60 + "y"))
    now[0] = 0.46
    box.put(text("z"))
    box.put(end("done"))  # urgent: goes at once, with what was pending
    assert sent[-1] == batch(text("z"), end("done"))
    assert box.history == [text("abcde" + "x" * 60 + "yz"), end("done")]


def test_the_first_text_of_a_run_goes_at_once():
    """After the prompt, a tool card or reasoning, the first words are not held for a batch."""
    sent: list[Any] = []
    now = [0.0]
    box = Outbox(sent.append, interval=0.1, max_wait=0.6, clock=lambda: now[0])
    box.put(user("hi"))  # urgent: sent at 0
    now[0] = 0.05
    box.put(thought("thinking"))  # a run of reasoning starts: at once, 0.05 s after the prompt
    now[0] = 0.07
    box.put(thought(" more"))  # the same run: waits
    box.put(text("The"))  # the answer starts: at once, with the reasoning before it
    now[0] = 0.08
    box.put(text(" answer"))  # waits
    box.put(CARD)  # not urgent: waits
    box.put(text("Then"))  # text after a card is a new run: at once
    assert sent == [
        batch(user("hi")),
        batch(thought("thinking")),
        batch(thought(" more"), text("The")),
        batch(text(" answer"), CARD, text("Then")),
    ]


def test_outbox_replay_and_clear():
    sent: list[Any] = []
    box = Outbox(sent.append, interval=10, clock=lambda: 0.0)
    box.put(user("hi"))
    box.put(text("x"))
    box.replay("v")
    replay = {"kind": "replay", "view": "v", "ops": [user("hi"), text("x")]}
    assert sent[-2:] == [batch(text("x")), replay]
    box.clear()
    assert sent[-1] == batch({"op": "clear"}) and box.history == []
    box.put(text("y"))  # a new chat's first words go at once
    assert sent[-1] == batch(text("y"))


def test_arguments_preview_shows_edits_as_diffs_and_everything_it_approves():
    assert arguments_preview({"path": "a", "old_str": "x\ny", "new_str": "z"}) == (
        "diff",
        "-x\n-y\n+z",
    )
    assert arguments_preview({"path": "a", "content": "print(1)"}) == ("code", "print(1)")
    assert arguments_preview({}) == ("", "")
    body = "".join(f"line {n}\n" for n in range(2000))
    assert arguments_preview({"code": body}) == ("code", body), "an approval hides nothing"
    kind, text = arguments_preview({"pattern": "x" * 10_000})
    assert kind == "json" and len(text) > 10_000


def test_an_approval_says_when_the_file_runs_code_later():
    from copilot_nb.events import ApprovalNeeded

    loop = asyncio.new_event_loop()
    try:
        asks = [
            event_ops(
                ApprovalNeeded(
                    call_id="w1",
                    name="write_file",
                    arguments={"path": path, "content": "x"},
                    summary=path,
                    category="edit",
                    decision=loop.create_future(),
                )
            )
            for path in ("conftest.py", "notes.md")
        ]
    finally:
        loop.close()
    assert asks == [
        [ask("w1", "edit", "conftest.py runs code later: pytest imports it when tests run")],
        [ask("w1", "edit")],
    ]


def test_event_ops_leave_usage_and_done_to_the_meter():
    from copilot_nb.events import Done, TextDelta, UsageReported
    from copilot_nb.messages import Usage

    assert event_ops(TextDelta(text="")) == []
    assert event_ops(Done(text="x")) == []
    assert event_ops(UsageReported(usage=Usage(input_tokens=1))) == []


def _record(timers: list[float]) -> Any:
    def call_later(delay: float, callback: Any) -> object:
        timers.append(delay)
        return object()  # a handle with no cancel(): the timer is never due in these tests

    return call_later


def test_a_cell_edit_shows_as_a_diff_in_the_panel():
    from copilot_nb.events import CellChanged
    from copilot_nb.jupyter.panel.feed import event_ops

    ops = event_ops(CellChanged(notebook="a.ipynb", cell_id="c1", change="edited", diff="-x\n+y\n"))
    assert ops == [{"op": "diff", "path": "a.ipynb cell c1", "diff": "-x\n+y\n"}]


def test_an_mcp_call_says_approving_trusts_the_server_and_a_tool_change_is_a_note():
    from copilot_nb.events import ApprovalNeeded, ToolsUpdated

    loop = asyncio.new_event_loop()
    try:
        ask = event_ops(
            ApprovalNeeded(
                call_id="m1",
                name="git__git_commit",
                arguments={"message": "x"},
                summary="",
                category="external",
                decision=loop.create_future(),
                note="approving trusts MCP server 'git' until its command or tools change",
            )
        )
    finally:
        loop.close()
    assert ask == [
        {
            "op": "ask",
            "id": "m1",
            "category": "external",
            "warning": "approving trusts MCP server 'git' until its command or tools change",
        }
    ]
    update = ToolsUpdated(source="MCP server git", added=("git__log",), removed=("git__diff",))
    assert event_ops(update) == [
        {"op": "note", "text": "tools of MCP server git updated: +git__log, −git__diff"}
    ]


def test_a_subagents_call_shows_under_its_parent_in_the_panel():
    from copilot_nb.events import ToolStarted

    ops = event_ops(
        ToolStarted(
            call_id="d1/r1",
            name="read_file",
            arguments={"path": "a.py"},
            summary="a.py",
            parent="d1",
        )
    )
    assert (ops[0]["id"], ops[0]["name"], ops[0]["target"]) == ("d1/r1", "↳ read_file", "a.py")


def test_a_retry_takes_back_the_failed_attempts_text_and_its_notice_lasts_the_wait():
    """As in the cell: the broken attempt's words go, the notice shows only while it waits."""
    sent: list[Any] = []
    box = Outbox(sent.append, interval=10, clock=lambda: 0.0)
    box.put(user("hi"))
    box.put(CARD)
    for event in (
        ReasoningDelta(text="hmm"),
        TextDelta(text="The answ"),
        Notice(text="the stream broke — asking again", retry=True),
    ):
        for op in event_ops(event):
            box.put(op)
    assert sent[-1]["ops"][-1] == retry("the stream broke — asking again"), "shown at once"
    assert box.history[-2:] == [
        CARD,
        retry("the stream broke — asking again"),
    ], "a view that opens during the wait sees the notice, not the broken words"
    for op in event_ops(Notice(text="HTTP 429 — retrying in 0.5 s (1/2)", retry=True)):
        box.put(op)
    assert box.history[-1] == retry("HTTP 429 — retrying in 0.5 s (1/2)")
    assert len(box.history) == 3, "one wait's notice replaces another"
    for event in (TextDelta(text="The answer."), Notice(text="compacted the conversation")):
        for op in event_ops(event):
            box.put(op)
    box.put(end("done"))
    assert box.history == [
        user("hi"),
        CARD,
        text("The answer."),
        {"op": "note", "text": "compacted the conversation"},  # not a retry: it stays
        end("done"),
    ]


def test_a_model_server_that_stays_down_leaves_only_its_error():
    box = Outbox(lambda batch: None, interval=10, clock=lambda: 0.0)
    box.put(user("hi"))
    for attempt in (1, 2):
        for op in event_ops(Notice(text=f"HTTP 503 — retrying ({attempt}/2)", retry=True)):
            box.put(op)
    for op in event_ops(Failed(error="HTTP 503: the server is down")):
        box.put(op)
    box.put(end("failed"))
    assert box.history == [
        user("hi"),
        {"op": "error", "message": "HTTP 503: the server is down", "detail": ""},
        end("failed"),
    ]
