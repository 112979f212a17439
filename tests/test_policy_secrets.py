"""Per-user secrets stay per user: on a shared server (JupyterHub), the sign-in token, the MCP
approvals, the cassette key, the user's MCP config and the saved conversations are written into
the user's own config folder only, files 0600 and the folders copilot_nb makes 0700, whatever the
umask; nothing lands in a shared or system folder."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from copilot_nb.agent.conversations.recorder import file_for
from copilot_nb.agent.conversations.store import ConversationFile
from copilot_nb.config import config_dir, private_dir
from copilot_nb.models.cassettes.signing import signing_key
from copilot_nb.models.copilot.github_tokens import save_github_token
from copilot_nb.tools.mcp.config import add_server
from copilot_nb.tools.mcp.trust import PINS_FILE, ServerPins


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh home with no config folder yet, and the permissive umask many images ship."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in ("COPILOT_NB_CONFIG_DIR", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name, raising=False)
    old = os.umask(0o022)
    try:
        yield home
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_every_secret_is_owner_only_in_the_users_config_folder(home: Path):
    folder = config_dir()
    assert folder == home / ".config" / "copilot_nb" and not folder.exists()

    token = save_github_token("gho_" + "a" * 36)
    ServerPins(folder / PINS_FILE).set("git", "digest")
    assert signing_key(create=True)
    add_server(folder / "mcp.json", "corp", {"url": "https://mcp.test/mcp", "headers": {}})
    console = file_for({})
    console.append([{"type": "message", "role": "user", "content": "hi"}])

    written = sorted(p for p in home.rglob("*"))
    assert written == [
        home / ".config",
        folder,
        folder / "cassette-key",
        folder / "conversations",
        folder / "conversations" / "console.copilot-chat.jsonl",
        folder / "github_token.json",
        folder / "mcp-approved.json",
        folder / "mcp.json",
    ]  # no temp file left, nothing elsewhere
    assert token == folder / "github_token.json"
    assert {p.name: mode(p) for p in written if p.is_file()} == dict.fromkeys(
        [
            "cassette-key",
            "console.copilot-chat.jsonl",
            "github_token.json",
            "mcp-approved.json",
            "mcp.json",
        ],
        0o600,
    )
    assert mode(folder) == mode(folder / "conversations") == mode(home / ".config") == 0o700


def test_an_approval_saved_again_stays_owner_only(home: Path):
    pins = ServerPins(config_dir() / PINS_FILE)
    pins.set("a", "1")
    os.chmod(config_dir() / PINS_FILE, 0o644)  # loosened by hand
    pins.set("b", "2")
    assert mode(config_dir() / PINS_FILE) == 0o600


def test_a_notebooks_conversation_is_owner_only_and_its_folder_untouched(home: Path):
    project = home / "project"
    project.mkdir(mode=0o755)
    notebook = project / "analysis.ipynb"
    saved = file_for({"__session__": str(notebook)})
    saved.append([{"type": "message", "role": "user", "content": "hi"}])
    assert saved.path == project / "analysis.copilot-chat.jsonl"
    assert mode(saved.path) == 0o600 and mode(project) == 0o755


def test_private_dir_makes_each_missing_folder_0700_and_leaves_existing_ones(tmp_path: Path):
    os.chmod(tmp_path, 0o755)
    old = os.umask(0o000)
    try:
        made = private_dir(tmp_path / "a" / "b")
    finally:
        os.umask(old)
    assert mode(tmp_path / "a") == mode(made) == 0o700 and mode(tmp_path) == 0o755


def test_a_console_conversation_file_reads_back(home: Path):
    console = ConversationFile(config_dir() / "conversations" / "x.copilot-chat.jsonl")
    console.append([{"type": "message", "role": "user", "content": "hi"}])
    assert console.exists()
