"""A workspace's MCP servers come from the files users already have, and a broken entry is
reported, never raised, so the other servers still load."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from copilot_nb.errors import ConfigError
from copilot_nb.tools.mcp.config import (
    McpConfig,
    ServerConfig,
    add_server,
    config_files,
    load_config,
    remove_server,
    server_config,
)

OK = {"command": "uvx", "args": ["mcp-server-time"]}


@pytest.fixture
def user_dir(tmp_path: Path) -> Path:
    return tmp_path / "config"


def write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data, indent=2))
    return path


def load(root: Path, user_dir: Path, **environ: str) -> McpConfig:
    return load_config(root, user_dir, environ)


def entry(root: Path, value: dict[str, Any], **environ: str) -> ServerConfig:
    return server_config("s", value, source=".mcp.json", root=root, environ=environ)


CLAUDE_CODE = """{
  "mcpServers": {
    "git": {"command": "uvx", "args": ["mcp-server-git", "--repository", "."],
            "env": {"GIT_PAGER": "cat"}},
    "docs": {"url": "https://docs.example.com/mcp", "headers": {"X-Team": "data"}}
  }
}"""
VSCODE = """{
  "inputs": [],
  "servers": {
    "time": {"type": "stdio", "command": "uvx", "args": ["mcp-server-time"]},
    "search": {"type": "http", "url": "http://localhost:8931/mcp"},
    "wiki": {"type": "streamable-http", "url": "https://wiki.example.com/mcp"}
  }
}"""


def test_a_claude_code_mcp_json_gives_a_stdio_and_an_http_server(root: Path, user_dir: Path):
    write(root / ".mcp.json", CLAUDE_CODE)
    config = load(root, user_dir)
    assert config.problems == ()
    git, docs = config.servers["git"], config.servers["docs"]
    assert (git.transport, git.source, git.cwd, git.timeout) == ("stdio", ".mcp.json", None, None)
    assert git.target == "uvx mcp-server-git --repository ."
    assert git.args == ("mcp-server-git", "--repository", ".")
    assert dict(git.env) == {"GIT_PAGER": "cat"}
    assert (docs.transport, docs.target) == ("http", "https://docs.example.com/mcp")
    assert dict(docs.headers) == {"X-Team": "data"}


def test_a_vscode_mcp_json_with_servers_typed_stdio_and_http(root: Path, user_dir: Path):
    write(root / ".vscode/mcp.json", VSCODE)
    config = load(root, user_dir)
    assert config.problems == ()
    assert {name: (s.transport, s.source) for name, s in config.servers.items()} == {
        "time": ("stdio", ".vscode/mcp.json"),
        "search": ("http", ".vscode/mcp.json"),
        "wiki": ("http", ".vscode/mcp.json"),
    }


def test_the_user_file_is_read_and_shown_from_home(tmp_path, root, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    user_dir = tmp_path / ".config/copilot_nb"
    write(user_dir / "mcp.json", {"mcpServers": {"time": OK, "bad": {}}})
    config = load(root, user_dir)
    assert config.servers["time"].source == "~/.config/copilot_nb/mcp.json"
    assert [p.source for p in config.problems] == ["~/.config/copilot_nb/mcp.json"]


def test_no_files_or_empty_files_mean_no_servers_and_no_problems(root: Path, user_dir: Path):
    assert load(root, user_dir) == McpConfig()
    write(root / ".mcp.json", "  \n")
    write(root / ".vscode/mcp.json", {"inputs": []})
    assert load(root, user_dir) == McpConfig()


def test_the_workspace_file_wins_over_vscode_which_wins_over_the_user_file(root, user_dir):
    write(user_dir / "mcp.json", {"mcpServers": {"db": {"command": "user-db"}, "u": OK}})
    write(root / ".vscode/mcp.json", {"servers": {"db": {"command": "vscode-db"}, "v": OK}})
    write(root / ".mcp.json", {"mcpServers": {"db": {"command": "workspace-db"}, "w": OK}})
    config = load(root, user_dir)
    db = config.servers["db"]
    assert (db.command, db.source) == ("workspace-db", ".mcp.json")
    assert sorted(config.servers) == ["db", "u", "v", "w"]
    (root / ".mcp.json").unlink()
    assert load(root, user_dir).servers["db"].command == "vscode-db"
    (root / ".vscode/mcp.json").unlink()
    assert load(root, user_dir).servers["db"].command == "user-db"


def test_a_file_that_is_not_json_is_reported_with_its_line_and_others_still_load(root, user_dir):
    write(user_dir / "mcp.json", {"mcpServers": {"time": OK}})
    write(
        root / ".mcp.json",
        '{\n  "mcpServers": {\n    "git": {"command": "uvx" "args": []}\n  }\n}\n',
    )
    config = load(root, user_dir)
    assert list(config.servers) == ["time"]
    [problem] = config.problems
    assert (problem.source, problem.name) == (".mcp.json", "")
    assert "not valid JSON (line 3" in problem.message


@pytest.mark.parametrize("text", ['{"mcpServers": []}', "[]", '{"mcpServers": "git"}'])
def test_a_file_whose_servers_are_not_an_object_is_reported(root, user_dir, text):
    write(root / ".mcp.json", text)
    config = load(root, user_dir)
    assert config.servers == {}
    assert [(p.source, p.message) for p in config.problems] == [
        (".mcp.json", '"mcpServers" is not an object')
    ]


BAD_ENTRIES = [
    ("git", "uvx mcp-server-git", "the entry is not an object"),
    ("git", {"command": "uvx", "url": "https://x.example/mcp"}, 'give either "command"'),
    ("git", {"args": ["x"]}, 'give either "command"'),
    ("git", {"command": ""}, 'give either "command"'),
    ("git", {"url": "ftp://files.example/mcp"}, "url 'ftp://files.example/mcp' is not an http"),
    ("git", {"url": "localhost:8000/mcp"}, "is not an http(s) URL"),
    ("git", {"type": "sse", "url": "https://x.example/sse"}, 'transport "sse" is not supported'),
    ("git", {"type": "websocket", "url": "https://x.example"}, 'transport "websocket"'),
    ("my server", OK, "server name 'my server'"),
    ("git__hub", OK, "no '__'"),
    ("x" * 33, OK, "use 1-32 letters"),
    ("", OK, "server name ''"),
    ("git", {"command": "uvx", "env": {"KEY": "${input:api-key}"}}, "env.KEY uses ${input:...}"),
    ("git", {"command": "uvx", "args": ["${REGION}"]}, "args names ${REGION}, which is not set"),
    ("git", {"url": "https://x.example/mcp", "headers": {"A": "${env:REGION}"}}, "headers.A names"),
    ("git", {**OK, "timeout": "30s"}, "timeout must be a positive number of milliseconds"),
    ("git", {**OK, "timeout": 0}, "timeout must be a positive number"),
    ("git", {**OK, "timeout": -5}, "timeout must be a positive number"),
    ("git", {**OK, "timeout": True}, "timeout must be a positive number"),
    ("git", {"command": "uvx", "args": "mcp-server-git"}, "args must be a list of strings"),
    ("git", {"command": "uvx", "args": ["a", 1]}, "args must be a string"),
    ("git", {"command": ["uvx"]}, "command must be a string"),
    ("git", {**OK, "env": ["A=1"]}, "env must be an object of strings"),
    ("git", {**OK, "includeTools": "now"}, "includeTools must be a list"),
]


@pytest.mark.parametrize(("name", "bad", "message"), BAD_ENTRIES)
def test_each_bad_entry_is_reported_with_its_source_and_the_others_still_load(
    root, user_dir, name, bad, message
):
    write(root / ".mcp.json", {"mcpServers": {"time": OK, name: bad, "docs": {"url": "http://h/"}}})
    config = load(root, user_dir)
    assert sorted(config.servers) == ["docs", "time"]
    [problem] = config.problems
    assert (problem.source, problem.name) == (".mcp.json", name)
    assert message in problem.message


@pytest.mark.parametrize(
    ("value", "environ", "expected"),
    [
        ("${TOKEN}", {"TOKEN": "t0k"}, "t0k"),
        ("${env:TOKEN}", {"TOKEN": "t0k"}, "t0k"),
        ("Bearer ${TOKEN}", {"TOKEN": "t0k"}, "Bearer t0k"),
        ("${TOKEN:-anonymous}", {}, "anonymous"),
        ("${TOKEN:-anonymous}", {"TOKEN": "t0k"}, "t0k"),
        ("${env:TOKEN:-anonymous}", {}, "anonymous"),
        ("${TOKEN:-}", {}, ""),
        ("${USER}@${HOST}", {"USER": "ann", "HOST": "box"}, "ann@box"),
        ("${TOKEN}", {"TOKEN": "${OTHER}", "OTHER": "no"}, "${OTHER}"),
        ("$TOKEN and {TOKEN}", {}, "$TOKEN and {TOKEN}"),
        ("no variables", {}, "no variables"),
    ],
)
def test_environment_variables_are_expanded_in_every_string(root, value, environ, expected):
    strings = {"args": [value], "env": {"K": value}, "headers": {"H": value}}
    server = entry(root, {"command": "x", **strings}, **environ)
    assert (server.args, server.env["K"], server.headers["H"]) == ((expected,), expected, expected)


def test_workspace_folder_and_cwd_are_relative_to_the_workspace(root: Path):
    server = entry(root, {"command": "python", "args": ["${workspaceFolder}/server.py"]})
    assert (server.args, server.cwd) == ((f"{root}/server.py",), None)
    for cwd in ("tools", "${workspaceFolder}/tools"):
        assert entry(root, {**OK, "cwd": cwd}).cwd == str(root / "tools")
    assert entry(root, {**OK, "cwd": "/opt/server"}).cwd == "/opt/server"


def test_our_own_keys_timeout_in_milliseconds_disabled_override(root: Path):
    server = entry(root, {**OK, "timeout": 2500, "disabled": True, "override": ["read_file"]})
    assert (server.timeout, server.disabled, server.override) == (2.5, True, ("read_file",))
    assert entry(root, {**OK, "disabled": False}).disabled is False
    assert entry(root, OK).include_tools is None


@pytest.mark.parametrize(
    ("include", "exclude", "allowed"),
    [
        (None, [], {"get_time", "convert_time", "delete"}),
        (None, ["delete"], {"get_time", "convert_time"}),
        (["get_time"], [], {"get_time"}),
        (["get_time", "delete"], ["delete"], {"get_time"}),
        ([], [], set()),
    ],
)
def test_include_and_exclude_tools_decide_what_the_model_may_use(root, include, exclude, allowed):
    extra = {"excludeTools": exclude} | ({} if include is None else {"includeTools": include})
    server = entry(root, {**OK, **extra})
    assert {t for t in ("get_time", "convert_time", "delete") if server.allows(t)} == allowed


BASE = {"command": "uvx", "args": ["srv"], "env": {"TOKEN": "a"}, "headers": {"H": "1"}}


@pytest.mark.parametrize(
    ("change", "same"),
    [
        ({"command": "npx"}, False),
        ({"args": ["srv", "--write"]}, False),
        ({"cwd": "elsewhere"}, False),
        ({"env": {"TOKEN": "a", "PATH": "/evil"}}, False),
        ({"env": {}}, False),
        ({"headers": {"H": "1", "Cookie": "c"}}, False),
        ({"env": {"TOKEN": "b"}}, True),
        ({"headers": {"H": "2"}}, True),
        ({"timeout": 1000, "includeTools": ["a"], "disabled": True}, True),
    ],
)
def test_identity_changes_with_what_runs_but_not_with_secret_values(root, change, same):
    assert (entry(root, BASE).identity() == entry(root, {**BASE, **change}).identity()) is same


def test_identity_changes_with_the_url(root: Path):
    first = entry(root, {"url": "https://a.example/mcp"}).identity()
    assert first != entry(root, {"url": "https://b.example/mcp"}).identity()


def test_add_server_creates_the_file_and_the_server_then_loads(root: Path, user_dir: Path):
    add_server(user_dir / "mcp.json", "time", OK)
    assert json.loads((user_dir / "mcp.json").read_text()) == {"mcpServers": {"time": OK}}
    assert load(root, user_dir).servers["time"].command == "uvx"
    assert os.listdir(user_dir) == ["mcp.json"]  # no temporary file left behind


def test_add_and_remove_keep_unrelated_keys_and_other_servers(root: Path):
    other = {"$schema": "https://example/schema.json", "otherTool": {"enabled": True}}
    git = {"command": "uvx", "args": ["mcp-server-git"], "note": "café"}
    path = write(root / ".mcp.json", {**other, "mcpServers": {"git": git}})
    add_server(path, "time", OK)
    assert json.loads(path.read_text()) == {**other, "mcpServers": {"git": git, "time": OK}}
    add_server(path, "git", {"url": "https://git.example/mcp"})  # replaces the same name
    assert json.loads(path.read_text())["mcpServers"]["git"] == {"url": "https://git.example/mcp"}
    assert remove_server(path, "git") is True
    assert json.loads(path.read_text()) == {**other, "mcpServers": {"time": OK}}
    assert os.listdir(root) == [".mcp.json"]  # no temporary file left behind


def test_remove_of_a_server_or_file_that_is_not_there_changes_nothing(root: Path):
    assert remove_server(root / ".mcp.json", "git") is False
    assert not (root / ".mcp.json").exists()
    path = write(root / ".mcp.json", '{"mcpServers": {"time": {"command": "uvx"}}}')
    assert remove_server(path, "git") is False
    assert path.read_text() == '{"mcpServers": {"time": {"command": "uvx"}}}'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"mcpServers": {\n  "git": }', "is not valid JSON (line 2)"),
        ('["git"]', "does not hold a JSON object"),
        ('{"mcpServers": ["git"]}', '"mcpServers" is not an object'),
    ],
)
def test_a_file_that_cannot_be_updated_is_refused_and_left_untouched(root, text, message):
    path = write(root / ".mcp.json", text)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        add_server(path, "time", OK)
    assert path.read_text() == text
    if "mcpServers" not in text:  # remove reads the file the same way
        with pytest.raises(ConfigError):
            remove_server(path, "git")
        assert path.read_text() == text


@pytest.mark.parametrize(("home", "user_dir"), [("/", "/etc/copilot"), ("/home/ann", "/home/anna")])
def test_a_user_file_outside_home_is_shown_as_it_is(root, monkeypatch, home, user_dir):
    monkeypatch.setenv("HOME", home)
    assert config_files(root, Path(user_dir))[0][1] == f"{user_dir}/mcp.json"


def test_adding_a_server_keeps_a_private_user_file_private(user_dir: Path):
    api = {"url": "https://x/", "headers": {"Authorization": "Bearer sk-literal"}}
    path = write(user_dir / "mcp.json", {"mcpServers": {"api": api}})
    path.chmod(0o600)
    add_server(path, "time", OK)
    assert path.stat().st_mode & 0o777 == 0o600


def test_a_vscode_mcp_json_with_comments_and_a_trailing_comma_loads(root, user_dir):
    write(
        root / ".vscode/mcp.json",
        '{\n  // 💡 from the VS Code docs\n  "servers": {\n'
        '    "time": {"type": "stdio", "command": "uvx",},\n  },\n}\n',
    )
    assert load(root, user_dir).problems == ()


def test_a_default_stands_in_for_a_variable_that_is_set_but_empty(root):
    config = entry(root, {"command": "run", "args": ["${LEVEL:-info}"]}, LEVEL="")
    assert config.args == ("info",)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ({**OK, "disabled": "true"}, "disabled must be true or false"),
        ({**OK, "type": "http"}, '"type": "http" does not match a command'),
        ({"url": "https://x/mcp", "type": "stdio"}, '"type": "stdio" does not match a url'),
    ],
)
def test_settings_that_contradict_themselves_are_refused(root, value, message):
    with pytest.raises(ConfigError, match=message):
        entry(root, value)


def test_comments_leave_strings_that_look_like_comments_alone(root, user_dir):
    write(
        root / ".vscode/mcp.json",
        '{"servers": {\n  /* the wiki */ "wiki": {"url": "https://wiki/mcp", // ours\n'
        '  "headers": {"X-Path": "a/*b*/c"},},\n}}',
    )
    (wiki,) = load(root, user_dir).servers.values()
    assert (wiki.url, dict(wiki.headers)) == ("https://wiki/mcp", {"X-Path": "a/*b*/c"})


def test_a_rewritten_file_keeps_text_that_is_not_ascii(root):
    path = write(root / ".mcp.json", {"mcpServers": {}, "note": "café"})
    add_server(path, "time", OK)
    assert '"note": "café"' in path.read_text(encoding="utf-8")
