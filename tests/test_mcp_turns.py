"""MCP servers' tools in a turn of the session: offered, approved once per server, updated in the
middle of a turn, asked again when a server changes, and failing readably when a server does."""

from __future__ import annotations

import asyncio
import json
import sys

import pytest

from copilot_nb import tool
from copilot_nb.events import ApprovalNeeded, Done, ToolFinished, ToolsUpdated
from copilot_nb.testing import call, reply
from tests.helpers import (
    Answering,
    behaviours,
    events_of,
    offered,
    results,
    scripted_session,
    session_for,
    write_config,
)

pytestmark = pytest.mark.external  # each test starts MCP server processes


async def test_a_server_tool_is_offered_asked_once_and_then_trusted(
    serve, workspace, monkeypatch, stop_servers
):
    server = serve(
        [
            reply("", call("b__echo", text="hi")),
            reply("echoed"),
            reply("", call("b__echo", text="again")),
            reply("echoed again"),
        ]
    )
    session = session_for(server, workspace, monkeypatch, stop_servers)
    approver = Answering()

    first = await events_of(session, "echo hi", approver=approver)
    assert isinstance(first[-1], Done)
    (asked,) = approver.asked
    assert asked.category == "external" and "trusts MCP server 'b'" in asked.note
    assert results(server.requests[1])[-1] == "echo: hi"
    spec = next(t for t in server.requests[0].body["tools"] if t["function"]["name"] == "b__echo")
    assert spec["function"]["description"].startswith("Repeat the text.")
    assert "(from MCP server b)" in spec["function"]["description"]

    await events_of(session, "echo again", approver=approver)
    assert len(approver.asked) == 1, "an approved server, unchanged, is not asked about again"
    assert results(server.requests[3])[-1] == "echo: again"


async def test_a_tool_list_that_changes_mid_turn_is_offered_from_the_next_round(
    serve, workspace, monkeypatch, stop_servers
):
    server = serve(
        [
            reply("", call("b__grow")),
            reply("", call("b__added", n=2)),
            reply("done"),
        ]
    )
    session = session_for(server, workspace, monkeypatch, stop_servers)
    events = await events_of(session, "grow", approvals=session.approvals.approve_changes())

    updates = [e for e in events if isinstance(e, ToolsUpdated)]
    assert [(u.source, u.added) for u in updates] == [("MCP server b", ("b__added",))]
    assert "b__added" not in offered(server.requests[0])
    assert "b__added" in offered(server.requests[1]), "offered from the next model request"
    assert results(server.requests[2])[-1] == "added 2"
    grown = events.index(updates[0])
    finished = [i for i, e in enumerate(events) if isinstance(e, ToolFinished)]
    assert finished[0] < grown < finished[1], "shown between the two rounds"


async def test_a_description_changed_after_approval_asks_again(
    serve, workspace, monkeypatch, stop_servers
):
    server = serve(
        [
            reply("", call("b__echo", text="one")),
            reply("", call("b__reword")),
            reply("", call("b__echo", text="two")),
            reply("done"),
        ]
    )
    session = session_for(server, workspace, monkeypatch, stop_servers)
    approver = Answering(approve=False)
    approver.approve = True
    events = await events_of(session, "echo twice", approver=approver)

    assert [e.name for e in approver.asked] == ["b__echo", "b__echo"], (
        "reword ran as trusted; the echo after it asks again"
    )
    assert "changed since you approved it" in approver.asked[1].note
    (update,) = [e for e in events if isinstance(e, ToolsUpdated)]
    assert update.changed == ("b__echo",)


async def test_a_denied_server_call_is_a_result_the_model_reads(
    serve, workspace, monkeypatch, stop_servers
):
    server = serve([reply("", call("b__echo", text="x")), reply("ok")])
    session = session_for(server, workspace, monkeypatch, stop_servers)
    await events_of(session, "echo", approver=Answering(approve=False))
    assert "the user denied this call" in results(server.requests[1])[-1]
    read_only = await events_of(
        session, "echo", approvals=session.approvals.read_only(), approver=Answering()
    )
    assert not any(isinstance(e, ApprovalNeeded) for e in read_only)


async def test_a_crash_mid_call_is_an_error_and_the_next_call_starts_the_server_again(
    serve, workspace, monkeypatch, stop_servers
):
    server = serve(
        [
            reply("", call("b__die")),
            reply("", call("b__echo", text="back")),
            reply("done"),
        ]
    )
    session = session_for(server, workspace, monkeypatch, stop_servers)
    await events_of(session, "die", approvals=session.approvals.approve_changes())

    crashed, back = results(server.requests[1])[-1], results(server.requests[2])[-1]
    assert "MCP server 'b' stopped during die (connection closed)" in crashed
    assert "behaviours: exiting on purpose" in crashed, "its stderr says why"
    assert "started again on the next call" in crashed
    assert back == "echo: back"
    assert session.mcp.connections["b"].state == "running"


async def test_a_server_that_hangs_is_cut_off_at_its_timeout(
    serve, workspace, monkeypatch, stop_servers
):
    write_config(workspace, b=behaviours(timeout=300))
    server = serve(
        [reply("", call("b__hang")), reply("", call("b__echo", text="ok")), reply("done")]
    )
    session = session_for(server, workspace, monkeypatch, stop_servers)
    await events_of(session, "hang", approvals=session.approvals.approve_changes())
    hung, after = results(server.requests[1])[-1], results(server.requests[2])[-1]
    assert "did not answer hang within 0.3 s; the call was cancelled" in hung
    assert after == "echo: ok", "the server still answers other calls"


async def test_images_errors_and_resources_reach_the_model_as_text(
    serve, workspace, monkeypatch, stop_servers
):
    server = serve(
        [
            reply(
                "",
                call("b__picture", id="p"),
                call("b__refuse", id="r"),
                call("b__read_resource", id="n", uri="notes://readme"),
            ),
            reply("done"),
        ]
    )
    session = session_for(server, workspace, monkeypatch, stop_servers)
    events = await events_of(session, "look", approvals=session.approvals.approve_changes())
    picture, refused, notes = results(server.requests[1])
    assert picture == "[image/png 3x2]\na tiny picture"
    assert refused == "b__refuse failed: no such branch: main2"
    assert notes == "Notes: deploy on Fridays is forbidden."
    assert [e.ok for e in events if isinstance(e, ToolFinished)] == [True, False, True]


async def test_images_too_large_to_decode_are_their_lines_and_the_turn_goes_on(
    serve, workspace, monkeypatch, stop_servers
):
    """A model that sees images is sent the server's small picture; the PNG and the GIF whose
    headers declare 13000x13000 and 65535x65535 pixels are only their lines."""
    server = serve(
        [
            reply("", call("b__picture", id="p"), call("b__huge_pictures", id="h")),
            reply("done"),
        ]
    )
    session = session_for(server, workspace, monkeypatch, stop_servers)
    monkeypatch.setattr(session, "_resolve", lambda spec: server.model(vision=True))
    events = await events_of(session, "look", approvals=session.approvals.approve_changes())
    assert isinstance(events[-1], Done), events[-1]
    picture, huge = results(server.requests[1])
    assert picture == "[image/png 3x2]\na tiny picture"
    assert huge == (
        "[image/png 13000x13000: too large to show]\n"
        "[image/gif 65535x65535: too large to show]\nhuge pictures"
    )
    sent = json.dumps(server.requests[1].body)
    assert sent.count('"type": "image_url"') == 1, "the small picture only"


async def test_a_server_gets_only_the_environment_its_config_names(
    serve, workspace, monkeypatch, stop_servers
):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-secret")
    monkeypatch.setenv("BEHAVIOURS_KEY", "named")
    write_config(workspace, b=behaviours(env={"BEHAVIOURS_KEY": "${BEHAVIOURS_KEY}"}))
    server = serve([reply("", call("b__show_env")), reply("done")])
    session = session_for(server, workspace, monkeypatch, stop_servers)
    await events_of(session, "env", approvals=session.approvals.approve_changes())
    assert results(server.requests[1])[-1] == "BEHAVIOURS_KEY"


async def test_filters_apply_per_server_and_for_the_whole_tool_set(
    serve, workspace, monkeypatch, stop_servers
):
    write_config(
        workspace, b=behaviours(includeTools=["echo", "picture"], excludeTools=["picture"])
    )
    server = serve([reply("a"), reply("b")])
    session = session_for(server, workspace, monkeypatch, stop_servers)
    await events_of(session, "hi")
    assert [n for n in offered(server.requests[0]) if n.startswith("b__")] == [
        "b__echo",
        "b__read_resource",
    ]
    session.excluded = ["b__echo"]
    await events_of(session, "hi")
    assert [n for n in offered(server.requests[1]) if n.startswith("b__")] == ["b__read_resource"]


@tool
async def wait_a_moment(seconds: float) -> str:
    """Wait.

    Args:
        seconds: how long.
    """
    await asyncio.sleep(seconds)
    return "waited"


async def test_a_server_slower_than_the_first_wait_joins_the_turn_when_it_is_up(
    serve, workspace, monkeypatch, stop_servers
):
    write_config(workspace, b=behaviours(env={"BEHAVIOURS_START_DELAY": "1.5"}))
    server = serve(
        [
            reply("", call("wait_a_moment", seconds=4)),
            reply("", call("b__echo", text="late")),
            reply("done"),
        ]
    )
    session = scripted_session(server, workspace, monkeypatch, wait_a_moment=wait_a_moment)
    stop_servers(session)
    session.mcp.first_wait = 0.1
    events = await events_of(session, "wait", approvals=session.approvals.approve_changes())

    assert "b__echo" not in offered(server.requests[0])
    (joined,) = [e for e in events if isinstance(e, ToolsUpdated)]
    assert "+b__echo" in joined.text and joined.source == "MCP server b"
    assert results(server.requests[2])[-1] == "echo: late"


async def test_a_server_that_cannot_start_is_told_once(serve, workspace, monkeypatch, stop_servers):
    write_config(workspace, b=behaviours(), gone={"command": "no-such-mcp-server-here"})
    server = serve([reply("one"), reply("two")])
    session = session_for(server, workspace, monkeypatch, stop_servers)
    first = [e for e in await events_of(session, "hi") if isinstance(e, ToolsUpdated)]
    second = [e for e in await events_of(session, "hi") if isinstance(e, ToolsUpdated)]
    (told,) = first
    assert "MCP server 'gone': command 'no-such-mcp-server-here' not found" in told.text
    assert second == [], "not again at every turn"
    assert "b__echo" in offered(server.requests[1]), "the other server is not held up"


async def test_without_the_sdk_a_server_says_how_to_install_it(
    serve, workspace, monkeypatch, stop_servers
):
    monkeypatch.setitem(sys.modules, "mcp", None)  # as if the mcp extra were not installed
    server = serve([reply("hello")])
    session = session_for(server, workspace, monkeypatch, stop_servers)
    (told,) = [e for e in await events_of(session, "hi") if isinstance(e, ToolsUpdated)]
    assert told.text.startswith("MCP server 'b': MCP servers need the mcp extra")
    assert "pip install 'copilot_nb[mcp]'" in told.text


async def test_many_server_tools_wait_for_tool_search(serve, workspace, monkeypatch, stop_servers):
    write_config(workspace, b=behaviours(env={"BEHAVIOURS_MANY": "50"}))
    server = serve(
        [
            reply("", call("tool_search", pattern="extra_07")),
            reply("", call("b__extra_07")),
            reply("done"),
        ]
    )
    session = session_for(server, workspace, monkeypatch, stop_servers)
    await events_of(session, "find extra 7", approvals=session.approvals.approve_changes())
    first = offered(server.requests[0])
    assert "tool_search" in first and "b__extra_07" not in first
    assert "b__extra_07" in offered(server.requests[1]), "found: offered from the next request"
    assert results(server.requests[2])[-1] == "extra 7"


async def test_crashes_in_a_row_wait_longer_before_the_next_start(
    serve, workspace, monkeypatch, stop_servers
):
    server = serve(
        [
            reply("", call("b__die", id="1")),
            reply("", call("b__die", id="2")),
            reply("", call("b__echo", text="back")),
            reply("done"),
        ]
    )
    session = session_for(server, workspace, monkeypatch, stop_servers)
    await events_of(session, "die twice", approvals=session.approvals.approve_changes())
    first, second, back = results(server.requests[3])
    assert first.endswith("after 0.5 s.") and second.endswith("after 1 s.")
    assert back == "echo: back"


async def test_a_changed_command_asks_again(serve, workspace, monkeypatch, stop_servers):
    server = serve(
        [
            reply("", call("b__echo", text="1")),
            reply("one"),
            reply("", call("b__echo", text="2")),
            reply("two"),
        ]
    )
    session = session_for(server, workspace, monkeypatch, stop_servers)
    approver = Answering()
    await events_of(session, "echo 1", approver=approver)
    write_config(workspace, b=behaviours(args=["-m", "tests.mcp_servers.behaviours", "--x"]))
    await events_of(session, "echo 2", approver=approver)
    assert len(approver.asked) == 2 and "changed since you approved it" in approver.asked[1].note
    assert results(server.requests[3])[-1] == "echo: 2", "the server was started again"


async def test_a_server_tool_named_like_one_of_yours_needs_an_override(
    serve, workspace, monkeypatch, stop_servers
):
    @tool(name="b__echo")
    def my_echo(text: str) -> str:
        """My own echo.

        Args:
            text: what to echo.
        """
        return f"mine: {text}"

    server = serve([reply("", call("b__echo", text="x")), reply("done")] * 2)
    session = scripted_session(server, workspace, monkeypatch, my_echo=my_echo)
    stop_servers(session)
    await events_of(session, "echo", approvals=session.approvals.approve_changes())
    assert results(server.requests[1])[-1] == "mine: x", "yours wins"
    (problem,) = session.mcp.problems
    assert (problem.server, problem.tool) == ("b", "echo") and '"override"' in problem.message

    write_config(workspace, b=behaviours(override=["echo"]))
    await events_of(session, "echo", approvals=session.approvals.approve_changes())
    assert results(server.requests[3])[-1] == "echo: x", "the server's, as its config says"


async def test_a_server_that_never_starts_is_given_up_until_restarted(
    serve, workspace, monkeypatch, stop_servers
):
    write_config(workspace, b=behaviours(env={"BEHAVIOURS_START_DELAY": "60"}))
    server = serve([reply("one"), reply("two")])
    session = session_for(server, workspace, monkeypatch, stop_servers)
    session.mcp.first_wait, session.mcp.start_timeout = 2.0, 0.5
    (told,) = [e for e in await events_of(session, "hi") if isinstance(e, ToolsUpdated)]
    assert "did not start within 0.5 s; %copilot mcp restart b tries again" in told.text
    connection = session.mcp.connections["b"]
    assert connection.state == "failed"
    started = asyncio.get_running_loop().time()
    await events_of(session, "hi")
    assert asyncio.get_running_loop().time() - started < 0.5, "the next turn does not wait again"
