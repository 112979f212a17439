"""Subagents through the session and the scripted server: a child with its own context window,
read-only tools and instructions; its calls shown under the parent's; only its answer returned;
custom agents from files; a denied child approval; a parent stopped mid-child; the child's
requests counted in the conversation's tokens."""

from __future__ import annotations

from contextlib import aclosing

from copilot_nb.agent.subagents import EXPLORE
from copilot_nb.events import ApprovalNeeded, Done, ToolFinished, ToolStarted, UsageReported
from copilot_nb.messages import Usage
from copilot_nb.testing import call, reply
from tests.helpers import Answering, events_of, offered, session_in


async def test_a_subagent_works_apart_and_only_its_answer_comes_back(serve, root, monkeypatch):
    (root / "todo.py").write_text("x = 1\n# TODO: handle empty input\n")
    server = serve(
        [
            reply("", call("delegate", id="d1", task="Find the TODO in this project.")),
            reply("", call("read_file", id="r1", path="todo.py")),
            reply("The TODO is in todo.py line 2: handle empty input."),
            reply("It is in todo.py, line 2."),
        ]
    )
    session = session_in(root, server, monkeypatch)
    events = await events_of(session, "where is the TODO?")

    parent, child, _child_again, parent_again = server.requests
    assert child.messages[0] == {"role": "system", "content": EXPLORE}
    assert child.messages[1] == {"role": "user", "content": "Find the TODO in this project."}
    assert "write_file" not in offered(child) and "read_file" in offered(child)
    # delegate waits behind tool_search, which names it; called by name, it is listed from then
    assert "delegate" not in offered(parent) and "delegate" in search_description(parent)
    assert "delegate" in offered(parent_again) and "delegate" in offered(child), "one level deeper"
    assert list(parent_again.tool_results.values()) == [
        "The TODO is in todo.py line 2: handle empty input."
    ], "the child's answer, not its transcript"
    nested = [e for e in events if isinstance(e, ToolStarted) and e.parent]
    assert [(e.call_id, e.name, e.parent) for e in nested] == [("d1/r1", "read_file", "d1")]
    finished = [e.call_id for e in events if isinstance(e, ToolFinished)]
    assert finished == ["d1/r1", "d1"] and isinstance(events[-1], Done)
    assert len(session.agent.messages) == 5, "the parent's history holds no child messages"


async def test_a_subagents_requests_count_in_the_conversations_tokens(serve, root, monkeypatch):
    """A bill counts the child's requests too; the window's fill is the parent's own prompt."""
    server = serve(
        [
            reply("", call("delegate", id="d1", task="Look around.")),
            reply("Seen it."),
            reply("Done.", usage=Usage(input_tokens=77, output_tokens=2)),
        ]
    )
    session = session_in(root, server, monkeypatch)
    events = await events_of(session, "look around")
    assert [e.parent for e in events if isinstance(e, UsageReported)] == ["", "d1", ""]
    counted = session.saved.usage
    assert counted.total.requests == 3 and counted.total.input == 10 + 10 + 77
    assert counted.context == 77, "the parent's last request, not the child's"


async def test_a_custom_agent_from_a_file_with_its_tools_and_a_denied_question(
    serve, root, monkeypatch
):
    (root / ".copilot_nb" / "agents").mkdir(parents=True)
    (root / ".copilot_nb" / "agents" / "scribe.md").write_text(
        "---\ndescription: writes notes\ntools: [write_file, read_file]\n---\nYou write notes.\n"
    )
    server = serve(
        [
            reply("", call("delegate", id="d1", task="Write notes.md", agent="scribe")),
            reply("", call("write_file", id="w1", path="notes.md", content="notes\n")),
            reply("I was not allowed to write it."),
            reply("The scribe could not write."),
        ]
    )
    session = session_in(root, server, monkeypatch)
    approver = Answering(approve=False)
    await events_of(session, "take notes", approver=approver)

    child = server.requests[1]
    assert child.messages[0] == {"role": "system", "content": "You write notes."}
    assert sorted(offered(child)) == ["delegate", "read_file", "write_file"]
    (asked,) = approver.asked
    assert (asked.name, asked.parent, asked.call_id) == ("write_file", "d1", "d1/w1")
    assert not (root / "notes.md").exists()
    assert "the user denied this call" in list(server.requests[2].tool_results.values())[-1]


async def test_stopping_the_parent_stops_the_child(serve, root, monkeypatch):
    (root / ".copilot_nb" / "agents").mkdir(parents=True)
    (root / ".copilot_nb" / "agents" / "scribe.md").write_text("---\ntools: [write_file]\n---\n")
    server = serve(
        [
            reply("", call("delegate", id="d1", task="Write b.", agent="scribe")),
            reply("", call("write_file", id="w1", path="b.txt", content="b")),
            reply("never asked"),
        ]
    )
    session = session_in(root, server, monkeypatch)
    async with aclosing(session.turn("look", approver=Answering(approve=None))) as turn:
        async for event in turn:
            if isinstance(event, ApprovalNeeded):
                break  # the user interrupts while the child waits for an answer
    assert not session.busy and len(server.requests) == 2
    assert not (root / "b.txt").exists()
    results = [m for m in session.agent.messages if m.role == "tool"]
    assert results and "cancelled" in results[-1].content, "the parent's history stays valid"


def search_description(request) -> str:
    (found,) = [t for t in request.body["tools"] if t["function"]["name"] == "tool_search"]
    return found["function"]["description"]
