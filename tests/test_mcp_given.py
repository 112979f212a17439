"""MCP servers an editor passes with its session are trusted as little as a workspace's."""

from __future__ import annotations

from pathlib import Path

from copilot_nb.tools.mcp.config import EDITOR, load_config
from copilot_nb.tools.mcp.servers import McpServers


def test_a_given_server_is_held_like_a_workspace_server_with_its_secrets_unfilled(
    tmp_path: Path,
) -> None:
    given = {"tool": {"command": "tool-server", "env": {"KEY": "${OPENAI_API_KEY}"}}}
    config = load_config(tmp_path, tmp_path / "user", {"OPENAI_API_KEY": "sk-x"}, given=given)
    server = config.servers["tool"]
    assert server.source == EDITOR
    assert server.from_workspace
    assert "sk-x" not in str(dict(server.env))


def test_a_given_server_waits_for_approval_before_any_connection(tmp_path: Path) -> None:
    servers = McpServers(user_dir=lambda: tmp_path / "user")
    servers.given = {"tool": {"command": "tool-server"}}
    servers.configure(tmp_path)
    assert "tool" in servers.launch.held
    assert "tool" not in servers.connections
