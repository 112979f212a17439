"""A cloned repository's `.mcp.json` runs nothing and contacts nothing until the user approved
that server in a question showing what it runs; its secret-looking variables are filled in only
then; a changed entry asks again; where nobody can answer, it is refused, and `%copilot mcp`
says why."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from copilot_nb.events import ApprovalNeeded, Done, ToolFinished
from copilot_nb.jupyter.approval_prompt import CellApprover
from copilot_nb.jupyter.commands.mcp import render_servers
from copilot_nb.testing import call, reply
from tests.helpers import Answering, behaviours, events_of, offered, results, session_for

pytestmark = pytest.mark.external  # each test starts MCP server processes

SECRET = "ghp_" + "s3cr3t" * 6


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A workspace (as if cloned) and copilot_nb's settings in a folder of their own."""
    root = tmp_path / "ws"
    root.mkdir()
    monkeypatch.setenv("COPILOT_NB_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    return root


def clone_config(root: Path, marker: Path, *more_args: str, **servers: dict) -> None:
    """The repository's `.mcp.json`: server `b` would write `marker` as it starts, and asks
    for the user's GitHub token in its arguments and its environment."""
    entry = behaviours(env={"BEHAVIOURS_MARKER": str(marker), "B_TOKEN": "${GITHUB_TOKEN}"})
    entry["args"] = [*entry["args"], "--token=${GITHUB_TOKEN}", *more_args]  # type: ignore[misc]
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"b": entry, **servers}}))


def start_questions(approver: Answering) -> list[ApprovalNeeded]:
    return [e for e in approver.asked if e.category == "mcp-server"]


async def test_a_workspace_server_denied_never_runs_and_its_secret_is_never_filled_in(
    serve, workspace, monkeypatch, stop_servers
):
    marker = workspace.parent / "ran"
    clone_config(workspace, marker)
    server = serve([reply("no tools from b"), reply("still none")])
    session = session_for(server, workspace, monkeypatch, stop_servers)
    approver = Answering(approve=False)

    events = await events_of(session, "hi", approver=approver)
    assert isinstance(events[-1], Done), "the turn goes on without the server"
    (asked,) = start_questions(approver)
    assert not marker.exists(), "its command did not run"
    assert "b" not in session.mcp.connections
    assert not [n for n in offered(server.requests[0]) if n.startswith("b__")]

    shown = asked.arguments
    assert shown["command"] == sys.executable and shown["from"] == ".mcp.json"
    assert "--token=${GITHUB_TOKEN}" in shown["args"]
    assert shown["environment variables it gets"] == ["BEHAVIOURS_MARKER", "B_TOKEN"]
    assert shown["secrets filled in once approved"] == ["${GITHUB_TOKEN}"]
    assert shown["working folder"] == behaviours()["cwd"]
    assert ".mcp.json in this workspace names this server" in asked.note
    everything = repr([asked, session.mcp.launch.held, render_servers(session.mcp).text])
    assert SECRET not in everything, "the token is not filled in before approval"
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert [(e.name, e.ok) for e in finished] == [("MCP server b", False)]

    await events_of(session, "again", approver=approver)
    assert len(start_questions(approver)) == 1, "a no holds for the kernel's life"
    assert render_servers(session.mcp).text.split()[:4] == ["b", "refused:", "you", "denied"]
    assert not marker.exists()


async def test_an_approved_workspace_server_starts_with_its_secrets_and_is_not_asked_again(
    serve, workspace, monkeypatch, stop_servers
):
    marker = workspace.parent / "ran"
    clone_config(workspace, marker)
    server = serve([reply("", call("b__echo", text="hi")), reply("one"), reply("two")])
    session = session_for(server, workspace, monkeypatch, stop_servers)
    approver = Answering()

    await events_of(session, "echo", approver=approver)
    ran = json.loads(marker.read_text())
    assert f"--token={SECRET}" in ran["argv"] and ran["env"]["B_TOKEN"] == SECRET
    assert "b__echo" in offered(server.requests[0]), "offered in the turn that approved it"
    assert results(server.requests[1])[-1] == "echo: hi"
    assert [e.category for e in approver.asked] == ["mcp-server", "external"]

    marker.unlink()
    await events_of(session, "again", approver=approver)
    assert len(approver.asked) == 2 and not marker.exists(), "running, and not asked again"
    pins = json.loads((workspace.parent / "config" / "mcp-approved.json").read_text())
    assert f"{workspace}::b::start" in pins


async def test_a_changed_entry_asks_again_and_a_renewed_token_does_not(
    serve, workspace, monkeypatch, stop_servers
):
    marker = workspace.parent / "ran"
    clone_config(workspace, marker)
    server = serve([reply("one"), reply("two"), reply("three")])
    session = session_for(server, workspace, monkeypatch, stop_servers)
    approver = Answering()
    await events_of(session, "one", approver=approver)
    assert len(start_questions(approver)) == 1

    monkeypatch.setenv("GITHUB_TOKEN", SECRET.replace("s3", "n3w"))
    session.mcp.reload()
    await events_of(session, "two", approver=approver)
    assert len(start_questions(approver)) == 1, "the same entry with a renewed token"

    clone_config(workspace, marker, "--also=this")
    await events_of(session, "three", approver=approver)
    _, again = start_questions(approver)
    assert "--also=this" in again.arguments["args"]
    assert "changed since you approved it" in again.note
    assert "--also=this" in json.loads(marker.read_text())["argv"], "started as it is now"


async def test_nobody_to_ask_refuses_it_and_the_listing_says_why_and_how(
    serve, workspace, monkeypatch, stop_servers
):
    marker = workspace.parent / "ran"
    clone_config(workspace, marker)
    server = serve([reply("headless")])
    session = session_for(server, workspace, monkeypatch, stop_servers)
    headless = SimpleNamespace(kernel=SimpleNamespace(_allow_stdin=False))

    events = await events_of(session, "hi", approver=CellApprover(headless))
    assert isinstance(events[-1], Done) and not marker.exists()
    listing = render_servers(session.mcp)
    assert "refused: nobody could be asked to approve it" in listing.text
    assert "%copilot mcp trust b shows what it runs and asks" in listing.text
    assert "refused: nobody could be asked" in listing.html


async def test_deny_refuses_unasked_and_allow_or_yes_still_ask(
    serve, workspace, monkeypatch, stop_servers
):
    marker = workspace.parent / "ran"
    clone_config(workspace, marker)
    server = serve([reply("one"), reply("two"), reply("three")])
    session = session_for(server, workspace, monkeypatch, stop_servers)
    approver = Answering(approve=False)

    await events_of(session, "hi", approver=approver, approvals=session.approvals.read_only())
    assert approver.asked == [] and not marker.exists()
    assert "approve_external" in session.mcp.launch.held["b"].state
    everything = session.approvals.allow_all()
    await events_of(session, "hi", approver=approver, approvals=everything)
    assert len(start_questions(approver)) == 1, "allow approves calls, not a folder's program"
    session.mcp.launch.reopen("b")
    await events_of(session, "hi", approver=approver, approvals=everything.approve_changes())
    assert len(start_questions(approver)) == 2, "--yes does not start it either"
    assert not marker.exists()


async def test_a_replayed_cassette_cannot_approve_a_start(
    serve, workspace, monkeypatch, stop_servers
):
    """A cassette answers tool approvals it recorded; a server's start is asked of a person."""
    marker = workspace.parent / "ran"
    clone_config(workspace, marker)
    server = serve([reply("replayed")])
    session = session_for(server, workspace, monkeypatch, stop_servers)

    class YesToEverything:
        """Approves every call it is asked about; its tape holds no request (they reach the
        loopback server) and keeps none."""

        recording = False
        withheld: frozenset[str] = frozenset()

        def mark(self) -> None: ...

        def answer_for(self, wanted: object) -> None:
            return None

        def record(self, *recorded: object) -> None: ...

        def recorded_answer(self, name: str, summary: str) -> SimpleNamespace:
            return SimpleNamespace(approved=True, reason="")

    monkeypatch.setattr(session, "cassette", YesToEverything)
    approver = Answering(approve=False)
    await events_of(session, "hi", approver=approver)
    assert len(start_questions(approver)) == 1 and not marker.exists()


async def test_a_url_server_gets_no_request_before_approval_and_its_token_after(
    serve, workspace, monkeypatch, stop_servers
):
    heard: list[bytes] = []

    async def count(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        heard.append(await reader.readuntil(b"\r\n\r\n"))
        writer.write(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
        await writer.drain()
        writer.close()

    listener = await asyncio.start_server(count, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    entry = {
        "url": f"http://127.0.0.1:{port}/mcp?key=${{GITHUB_TOKEN}}",
        "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"},
    }
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"h": entry}}))
    server = serve([reply("one"), reply("two")])
    session = session_for(server, workspace, monkeypatch, stop_servers)
    try:
        approver = Answering(approve=False)
        await events_of(session, "hi", approver=approver)
        (asked,) = start_questions(approver)
        assert asked.arguments["url"].endswith("/mcp?key=${GITHUB_TOKEN}")
        assert asked.arguments["headers it sends"] == ["Authorization"]
        assert heard == [], "nothing reached the URL before approval"

        session.mcp.launch.reopen("h")  # what %copilot mcp trust h does, before it asks
        approver.approve = True
        await events_of(session, "hi", approver=approver)
        assert heard, "approved: it is contacted"
        assert f"key={SECRET}".encode() in heard[0]
        assert f"Bearer {SECRET}".encode() in heard[0]
    finally:
        listener.close()
        await listener.wait_closed()


async def test_the_users_own_config_starts_without_a_question(
    serve, workspace, monkeypatch, stop_servers
):
    marker = workspace.parent / "ran"
    user_dir = workspace.parent / "config"
    user_dir.mkdir()
    entry = behaviours(env={"BEHAVIOURS_MARKER": str(marker), "B_TOKEN": "${GITHUB_TOKEN}"})
    (user_dir / "mcp.json").write_text(json.dumps({"mcpServers": {"b": entry}}))
    server = serve([reply("one")])
    session = session_for(server, workspace, monkeypatch, stop_servers)
    approver = Answering(approve=False)
    await events_of(session, "hi", approver=approver)
    assert approver.asked == [] and json.loads(marker.read_text())["env"]["B_TOKEN"] == SECRET
