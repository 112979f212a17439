"""Real MCP servers from the package index over stdio (`mcp-server-time`, `mcp-server-git`), and a
server written with the SDK's own server API over Streamable HTTP on loopback, behind a token."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from copilot_nb.testing import call, reply
from tests.helpers import events_of, offered, results, session_for, write_config

pytestmark = pytest.mark.external  # each test starts MCP server processes


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    monkeypatch.setenv("COPILOT_NB_CONFIG_DIR", str(tmp_path / "config"))
    return root


async def test_the_time_server_answers_through_a_turn(serve, workspace, monkeypatch, stop_servers):
    write_config(workspace, time={"command": sys.executable, "args": ["-m", "mcp_server_time"]})
    server = serve(
        [
            reply(
                "",
                call(
                    "time__convert_time",
                    source_timezone="UTC",
                    time="12:00",
                    target_timezone="Asia/Tokyo",
                ),
            ),
            reply("It is 21:00 in Tokyo."),
        ]
    )
    session = session_for(server, workspace, monkeypatch, stop_servers)
    await events_of(session, "noon UTC in Tokyo?", approvals=session.approvals.approve_changes())

    assert {"time__get_current_time", "time__convert_time"} <= set(offered(server.requests[0]))
    converted = json.loads(results(server.requests[1])[-1])
    assert converted["target"]["timezone"] == "Asia/Tokyo"
    assert converted["target"]["datetime"].startswith(converted["source"]["datetime"][:10])
    assert "T21:00:00" in converted["target"]["datetime"]


@pytest.fixture
def repository(workspace: Path) -> Path:
    """A git repository with one commit and one file changed since."""
    repo = workspace / "repo"
    repo.mkdir()
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
        "HOME": str(workspace),
    }

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    (repo / "app.py").write_text("print('v1')\n")
    git("add", "app.py")
    git("commit", "-q", "-m", "first version")
    (repo / "app.py").write_text("print('v2')\n")
    return repo


async def test_the_git_server_shows_status_and_diff(
    serve, workspace, repository, monkeypatch, stop_servers
):
    write_config(
        workspace,
        git={
            "command": sys.executable,
            "args": ["-m", "mcp_server_git", "--repository", str(repository)],
        },
    )
    server = serve(
        [
            reply(
                "",
                call("git__git_status", id="s", repo_path=str(repository)),
                call("git__git_diff_unstaged", id="d", repo_path=str(repository)),
            ),
            reply("app.py changed from v1 to v2."),
        ]
    )
    session = session_for(server, workspace, monkeypatch, stop_servers)
    await events_of(session, "what changed?", approvals=session.approvals.approve_changes())

    status, diff = results(server.requests[1])
    assert "modified:   app.py" in status
    assert "-print('v1')" in diff and "+print('v2')" in diff


class RequiresToken:
    """ASGI middleware: the MCP endpoint answers only requests that carry the bearer token."""

    def __init__(self, app, token: str) -> None:
        self.app, self.token = app, token
        self.refused = 0

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            headers = dict(scope["headers"])
            if headers.get(b"authorization") != f"Bearer {self.token}".encode():
                self.refused += 1
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [(b"content-type", b"text/plain")],
                    }
                )
                await send({"type": "http.response.body", "body": b"missing token"})
                return
        await self.app(scope, receive, send)


@pytest.fixture
def http_server() -> Iterator[tuple[str, RequiresToken]]:
    """Our test server (tests/mcp_servers/behaviours.py) over Streamable HTTP, with uvicorn."""
    import uvicorn

    from tests.mcp_servers.behaviours import build

    guarded = RequiresToken(build().streamable_http_app(), "tok-123")
    config = uvicorn.Config(guarded, host="127.0.0.1", port=0, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        thread.join(0.02)
    port = server.servers[0].sockets[0].getsockname()[1]
    yield f"http://127.0.0.1:{port}/mcp", guarded
    server.should_exit = True
    thread.join(10)


async def test_a_streamable_http_server_with_a_token_from_the_environment(
    http_server, serve, workspace, monkeypatch, stop_servers
):
    url, guarded = http_server
    monkeypatch.setenv("BEHAVIOURS_TOKEN", "tok-123")
    write_config(
        workspace, h={"url": url, "headers": {"Authorization": "Bearer ${BEHAVIOURS_TOKEN}"}}
    )
    server = serve(
        [
            reply("", call("h__echo", text="over http")),
            reply("", call("h__grow")),
            reply("", call("h__added", n=5)),
            reply("done"),
        ]
    )
    session = session_for(server, workspace, monkeypatch, stop_servers)
    await events_of(session, "echo", approvals=session.approvals.approve_changes())

    assert results(server.requests[1])[-1] == "echo: over http"
    assert results(server.requests[3])[-1] == "added 5", "list changes arrive over HTTP too"
    assert guarded.refused == 0


async def test_an_http_server_that_refuses_says_so(
    http_server, serve, workspace, monkeypatch, stop_servers
):
    url, guarded = http_server
    write_config(workspace, h={"url": url})
    server = serve([reply("hello")])
    session = session_for(server, workspace, monkeypatch, stop_servers)
    await events_of(session, "hi")
    connection = session.mcp.connections["h"]
    assert connection.state == "failed" and guarded.refused >= 1
    assert "MCP server 'h' did not start" in connection.error and "401" in connection.error
    assert not [n for n in offered(server.requests[0]) if n.startswith("h__")]
