"""The administrator's MCP allow-list holds for what will actually run: an entry cannot swap the
program through its `env` (`PATH`, or a variable that changes what it loads or fetches), and a
pattern naming a path is matched against the program found on the server's PATH."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from copilot_nb.policy.rules import loading_variables
from copilot_nb.tools.mcp.config import load_config
from copilot_nb.tools.mcp.executable import resolved_executable, resolved_line
from tests import policy_files

policy_file = policy_files.policy_file

ALLOWED = "npx -y @modelcontextprotocol/server-*"


def program(folder: Path, name: str) -> Path:
    """An executable script `name` in `folder` (made if need be)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text('#!/bin/sh\necho ran > "$0.ran"\n')
    path.chmod(0o755)
    return path


def servers_of(tmp_path: Path, entry: dict) -> tuple[list[str], dict[str, str]]:
    """The servers the user's own mcp.json with this one entry starts, and the refusals."""
    user = tmp_path / "config"
    user.mkdir(exist_ok=True)
    (user / "mcp.json").write_text(json.dumps({"mcpServers": {"fs": entry}}))
    config = load_config(tmp_path, user, {})
    return sorted(config.servers), {p.name: p.message for p in config.problems}


def test_an_allowed_command_line_cannot_run_the_users_own_npx_through_env_path(
    policy_file, tmp_path
):
    path = policy_file({"mcp_commands": [ALLOWED]})
    own = program(tmp_path / "mine" / "bin", "npx")
    entry = {
        "command": "npx",
        "args": ["-y", "@modelcontextprotocol/server-filesystem", "."],
        "env": {"PATH": str(own.parent)},
    }
    assert resolved_executable("npx", entry["env"], None) == str(own)  # what would have run
    started, refused = servers_of(tmp_path, entry)
    assert started == []
    assert refused["fs"] == (
        "the MCP server command 'npx -y @modelcontextprotocol/server-filesystem .' with PATH set "
        "in its env (which changes what program runs or what it loads) is not allowed by the "
        f'administrator\'s policy ({path}: mcp_commands = ["{ALLOWED}"])'
    )
    del entry["env"]
    assert servers_of(tmp_path, entry) == (["fs"], {})  # the same line, the kernel's npx


@pytest.mark.parametrize(
    "variable",
    ["LD_PRELOAD", "NODE_OPTIONS", "PYTHONPATH", "npm_config_registry", "UV_INDEX_URL", "HOME"],
)
def test_an_env_that_changes_what_runs_or_loads_is_refused(policy_file, tmp_path, variable):
    policy_file({"mcp_commands": [ALLOWED]})
    entry = {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-git"]}
    entry["env"] = {variable: str(tmp_path / "mine"), "NODE_ENV": "production"}
    started, refused = servers_of(tmp_path, entry)
    assert started == []
    assert f"with {variable} set in its env" in refused["fs"]


def test_an_env_of_keys_and_settings_still_starts(policy_file, tmp_path):
    policy_file({"mcp_commands": [ALLOWED]})
    env = {"GITHUB_PERSONAL_ACCESS_TOKEN": "t", "NODE_ENV": "production", "DEBUG": "1"}
    entry = {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-git"], "env": env}
    assert servers_of(tmp_path, entry) == (["fs"], {})
    assert loading_variables(tuple(env)) == ()


def test_without_an_allow_list_an_entry_may_set_its_path(policy_file, tmp_path):
    policy_file({"providers": ["openai"]})
    entry = {"command": "npx", "args": ["x"], "env": {"PATH": str(tmp_path)}}
    assert servers_of(tmp_path, entry) == (["fs"], {})


def test_a_pattern_naming_a_path_matches_the_program_that_will_run(
    policy_file, tmp_path, monkeypatch
):
    admin = program(tmp_path / "opt" / "bin", "tool")
    mine = program(tmp_path / "mine" / "bin", "tool")
    policy_file({"mcp_commands": [f"{admin} --stdio"]})
    entry = {"command": "tool", "args": ["--stdio"]}
    monkeypatch.setenv("PATH", f"{admin.parent}{os.pathsep}{os.defpath}")
    assert servers_of(tmp_path, entry)[0] == ["fs"]
    monkeypatch.setenv("PATH", f"{mine.parent}{os.pathsep}{admin.parent}")
    started, refused = servers_of(tmp_path, entry)
    assert started == [] and "mcp_commands" in refused["fs"]
    entry["command"] = str(admin)  # written as the path itself
    assert servers_of(tmp_path, entry)[0] == ["fs"]
    entry["command"] = "../opt/bin/tool"  # a relative path runs from the entry's cwd
    entry["cwd"] = "sub"
    (tmp_path / "sub").mkdir()
    assert resolved_line("../opt/bin/tool", ["--stdio"], {}, str(tmp_path / "sub")) == (
        f"{admin} --stdio"
    )
    assert servers_of(tmp_path, entry)[0] == ["fs"]


def test_a_relative_path_entry_is_looked_up_from_the_servers_folder(tmp_path):
    mine = program(tmp_path / "repo" / "bin", "npx")
    assert resolved_executable("npx", {"PATH": "bin"}, str(tmp_path / "repo")) == str(mine)
    assert resolved_executable("npx", {"PATH": str(tmp_path)}, None) is None
