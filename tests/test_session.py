"""The kernel's shared session: which tools the agent gets, and one conversation for all surfaces."""

from __future__ import annotations

from contextlib import aclosing
from types import SimpleNamespace

import pytest

from copilot_nb import ConfigError, tool
from copilot_nb.agent.session import CopilotSession, TurnNote
from copilot_nb.events import ApprovalNeeded, Done, Failed
from copilot_nb.testing import ScriptedTurn, call, reply
from tests.helpers import Answering, events_of, scripted_session


@tool
def shout(text: str) -> str:
    """Upper-case a text.

    Args:
        text: what to shout.
    """
    return text.upper()


@tool(name="read_file", override=True)
def my_read_file(path: str) -> str:
    """Read a file my way.

    Args:
        path: the file.
    """
    return f"custom read of {path}"


def session_with(namespace: dict) -> CopilotSession:
    return CopilotSession(SimpleNamespace(user_ns=namespace))


def names(session: CopilotSession, tmp_path) -> list[str]:
    from copilot_nb.workspace.workspace import Workspace

    return [spec.name for spec in session.tools_for(Workspace(tmp_path)).list_tools()]


def test_tools_defined_in_the_kernel_are_offered(tmp_path):
    session = session_with({"shout": shout, "_hidden": shout, "x": 1})
    offered = names(session, tmp_path)
    assert "shout" in offered and "read_file" in offered
    assert offered.count("shout") == 1


def test_a_clash_with_a_built_in_is_an_error_unless_it_overrides(tmp_path):
    clash = tool(name="write_file")(shout.function)
    with pytest.raises(ConfigError, match="name of a built-in"):
        names(session_with({"clash": clash}), tmp_path)
    assert "read_file" in names(session_with({"mine": my_read_file}), tmp_path)


def test_filters_apply_to_everything(tmp_path):
    session = session_with({"shout": shout})
    session.excluded = ["write_file", "shout"]
    assert "write_file" not in names(session, tmp_path) and "shout" not in names(session, tmp_path)
    session.available = ["read_file"]
    assert names(session, tmp_path) == ["read_file"]


async def test_an_overriding_tool_is_the_one_called(serve, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    server = serve([reply("", call("read_file", path="a.py")), reply("done")])
    session = session_with({"mine": my_read_file})
    session.model_spec = "openai:scripted"
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    agent = session.agent_for(session.model())
    assert await agent.ask("read a.py") == "done"
    result = server.requests[1].messages[-1]
    assert result["content"] == "custom read of a.py"


def test_one_agent_is_shared_until_new(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    session = session_with({})
    session.model_spec = "offline"
    first = session.agent_for(session.model())
    assert session.agent_for(session.model()) is first
    assert session.agent_for(session.model(), new=True) is not first


# --- one turn path ------------------------------------------------------------------------


def write(path: str, id: str) -> ScriptedTurn:
    return reply("", call("write_file", id=id, path=path, content=f"{path}\n"))


async def test_a_turns_own_approvals_leave_the_sessions_policy_as_it_was(
    serve, tmp_path, monkeypatch
):
    server = serve([write("a.txt", "w1"), reply("wrote a"), write("b.txt", "w2"), reply("asked")])
    session = scripted_session(server, tmp_path, monkeypatch)
    standing = session.approvals
    approver = Answering(approve=False)

    await events_of(session, "write a", approver=approver, approvals=standing.approve_changes())
    assert (tmp_path / "a.txt").exists() and approver.asked == [], "--yes: nothing asked"
    assert session.approvals is standing and session.agent.approvals is standing

    events = await events_of(session, "write b", approver=approver)
    assert [e.name for e in approver.asked] == ["write_file"], "the next turn asks again"
    assert not (tmp_path / "b.txt").exists() and isinstance(events[-1], Done)


async def test_a_question_left_unanswered_is_denied_when_the_turn_ends(
    serve, tmp_path, monkeypatch
):
    server = serve([write("a.txt", "w1"), reply("never")])
    session = scripted_session(server, tmp_path, monkeypatch)
    async with aclosing(session.turn("write a", approver=Answering(approve=None))) as events:
        async for event in events:
            if isinstance(event, ApprovalNeeded):
                request = event
                break  # the surface went away before the question reached its approver
    assert await request.decision == (False, "the run ended before the user answered")
    assert not session.busy


async def test_one_turn_at_a_time_and_the_second_leaves_the_conversation_alone(
    serve, tmp_path, monkeypatch
):
    server = serve([write("a.txt", "w1"), reply("done")])
    session = scripted_session(server, tmp_path, monkeypatch)
    approver = Answering(approve=None)
    first = session.turn("write a", approver=approver)
    async for event in first:
        if isinstance(event, ApprovalNeeded):
            request = event
            break
    assert session.busy
    second = await events_of(session, "and this?", model="openai:other", new=True)
    assert [type(e) for e in second] == [Failed] and "already working" in second[0].error
    assert session.agent is not None and session.agent.messages[1].content == "write a"
    request.approve()
    rest = [event async for event in first]
    assert isinstance(rest[-1], Done) and not session.busy


async def test_the_offline_model_is_noted_before_the_answer(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    session = CopilotSession()
    session.model_spec = "offline"
    events = await events_of(session, "hello")
    assert isinstance(events[0], TurnNote) and "Offline demo model" in events[0].text
    assert isinstance(events[-1], Done)


def many_tools(count: int) -> dict:
    def make(index: int):
        def helper(x: str) -> str:
            return x

        helper.__doc__ = f"Helper number {index}.\n\nArgs:\n    x: anything."
        return tool(name=f"helper_{index}")(helper)

    return {f"helper_{i}": make(i) for i in range(count)}


async def test_tools_found_with_tool_search_stay_listed_until_the_conversation_ends(
    serve, tmp_path, monkeypatch
):
    server = serve(
        [
            reply("", call("tool_search", pattern="^shout$")),
            reply("found it"),
            reply("still here"),
            reply("fresh start"),
        ]
    )
    session = scripted_session(server, tmp_path, monkeypatch, shout=shout, **many_tools(40))
    await events_of(session, "find a tool that shouts")
    await events_of(session, "and now?")
    session.reset()  # %copilot reset, --new and New chat all end up here
    await events_of(session, "hello again")

    offered = [[t["function"]["name"] for t in r.body["tools"]] for r in server.requests]
    assert "tool_search" in offered[0] and "shout" not in offered[0]
    assert "shout" in offered[1], "listed from the request after the search"
    assert "shout" in offered[2], "and in the next turn's request"
    assert "shout" not in offered[3] and "tool_search" in offered[3], "a new conversation"


async def test_copilot_tools_says_which_tools_wait_for_tool_search(tmp_path, monkeypatch):
    from copilot_nb.jupyter.commands.dispatch import FOUND, WAITING, render_tools
    from copilot_nb.workspace.workspace import Workspace

    session = scripted_session(None, tmp_path, monkeypatch, shout=shout, **many_tools(40))
    session.found_tools.add("shout")
    listing = session.tool_listing(Workspace(tmp_path))
    assert listing.found == {"shout"} and "helper_0" in listing.waiting
    assert "read_file" not in listing.waiting | listing.found
    table = render_tools(listing.tools, found=listing.found, waiting=listing.waiting)
    rows = {line.split()[0]: line for line in table.text.splitlines()}
    assert rows["shout"].endswith(FOUND) and rows["helper_0"].endswith(WAITING)
    assert rows["read_file"].endswith("always")


# --- the magics' settings -------------------------------------------------------------------


def test_copilot_model_writes_the_setting_once(capsys):
    from IPython.testing.globalipapp import get_ipython

    from copilot_nb.jupyter.magics import CopilotMagics

    magics = CopilotMagics(shell=get_ipython())
    writes: list[tuple[str, object]] = []

    class Recording(CopilotSession):
        def __setattr__(self, name: str, value: object) -> None:
            writes.append((name, value))
            super().__setattr__(name, value)

    magics.session.__class__ = Recording
    magics.copilot("model offline")
    assert writes == [("model_spec", "offline")]
    assert magics.model == "offline" and magics.session.model_spec == "offline"
    assert capsys.readouterr().out == "copilot: model offline\n"
    writes.clear()
    magics.max_rounds = 7  # as `%config CopilotMagics.max_rounds = 7` does
    assert writes == [("max_rounds", 7)]


async def test_a_yes_cell_leaves_the_sessions_policy_for_the_next_cell(
    serve, tmp_path, monkeypatch
):
    from IPython.testing.globalipapp import get_ipython

    from copilot_nb.jupyter.magics import CopilotMagics

    monkeypatch.chdir(tmp_path)
    server = serve([write("a.txt", "w1"), reply("wrote it")])
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    magics = CopilotMagics(shell=get_ipython(), model="openai:scripted")
    standing = magics.session.approvals
    await magics.run_cell("--yes", "write a.txt")
    assert (tmp_path / "a.txt").read_text() == "a.txt\n"
    assert magics.session.approvals is standing and standing.edit == "review"  # the default
    assert magics.session.agent is not None and magics.session.agent.approvals is standing


async def test_undo_still_reaches_a_change_made_before_a_new_conversation(
    serve, tmp_path, monkeypatch
):
    server = serve([write("a.txt", "w1"), reply("wrote a"), reply("hello")])
    session = scripted_session(server, tmp_path, monkeypatch)
    session.approvals = session.approvals.approve_changes()
    await events_of(session, "write a.txt")
    session.reset()  # %copilot reset, --new and New chat all end up here
    await events_of(session, "something else")
    assert (tmp_path / "a.txt").exists()

    restored = session.workspace().undo()
    assert [item.path for item in restored] == ["a.txt"]
    assert not (tmp_path / "a.txt").exists()
