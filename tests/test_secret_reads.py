"""Reading a file that may hold secrets asks the user first; searching never prints one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest

from copilot_nb import Agent
from copilot_nb.agent.approvals.policy import ApprovalPolicy
from copilot_nb.errors import ConfigError
from copilot_nb.events import ApprovalNeeded, Done, ToolFinished
from copilot_nb.messages import ToolResult
from copilot_nb.testing import call, reply
from copilot_nb.tools import ToolSet
from copilot_nb.tools.notebook.cells import notebook_tools
from copilot_nb.workspace.secret_paths import DEFAULT_SECRETS, SecretRules
from copilot_nb.workspace.workspace import Workspace

TOKEN = "ghp_0123456789abcdefSECRET"

SECRET_PATHS = [
    ".env",
    ".ENV",
    "app/.env",
    ".env.local",
    ".env.production",
    ".envrc",
    ".git/config",
    "vendor/lib/.git/config",
    ".git-credentials",
    ".config/git/credentials",
    ".netrc",
    "_netrc",
    "certs/server.pem",
    "certs/SERVER.PEM",
    "tls.key",
    "store.p12",
    "store.pfx",
    "id_rsa",
    "keys/id_rsa.old",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "id_ed25519_work",
    ".ssh/config",
    ".ssh/id_rsa.pub",
    ".ssh/known_hosts",
    "home/me/.ssh/id_rsa",
    ".gnupg/private-keys-v1.d/key.key",
    ".gnupg/trustdb.gpg",
    ".aws/credentials",
    ".aws/config",
    ".azure/accessTokens.json",
    ".config/gcloud/credentials.db",
    ".kube/config",
    ".docker/config.json",
    ".npmrc",
    ".pypirc",
    ".pgpass",
    ".config/gh/hosts.yml",
    ".config/github-copilot/hosts.json",
    ".config/github-copilot/apps.json",
    ".terraform.d/credentials.tfrc.json",
    ".local/share/jupyter/runtime/jpserver-1234.json",
    "Library/Jupyter/runtime/kernel-5678.json",
    ".config/copilot_nb/github_token.json",
    "home/other/.config/copilot_nb/settings.json",
]
ORDINARY_PATHS = [
    "README.md",
    "src/app.py",
    "environment.yml",
    "env.py",
    ".envelope",
    "id_rsa.pub",
    "keys/id_ed25519.pub",
    "docs/keys.md",
    ".gitconfig.md",
    ".git/HEAD",
    ".github/workflows/ci.yml",
    "config/settings.json",
    "aws/credentials.md",
    "key.txt",
    "monkey.py",
]


@pytest.fixture
def root(root: Path) -> Path:
    """A home-like folder with every kind of secret and some ordinary files."""
    for name in SECRET_PATHS + ORDINARY_PATHS:
        path = root / name
        if path.exists():
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{name}: {TOKEN}\n")
    (root / "innocent.txt").symlink_to(root / ".env")
    (root / "keys_link").symlink_to(root / ".ssh", target_is_directory=True)
    return root


@pytest.fixture
def ws(root: Path) -> Workspace:
    """The workspace with only the built-in secret rules (none from a settings file)."""
    return Workspace(root, secrets=SecretRules(settings=()))


def category(tools: ToolSet, name: str, arguments: Any) -> str:
    found = tools.get(name)
    assert found is not None
    return found.category_for(arguments)


@pytest.mark.parametrize("path", [*SECRET_PATHS, "innocent.txt", "keys_link/config"])
def test_reading_a_secret_path_is_a_read_secret(tools: ToolSet, path: str) -> None:
    assert category(tools, "read_file", {"path": path}) == "read-secret"


@pytest.mark.parametrize("path", [*ORDINARY_PATHS, "missing.txt", "../outside.txt", "/etc/hosts"])
def test_reading_an_ordinary_path_is_a_read(tools: ToolSet, path: str) -> None:
    assert category(tools, "read_file", {"path": path}) == "read"


def test_the_table_covers_every_default_rule() -> None:
    """Each default rule makes at least one path of the table a secret."""
    rules = SecretRules(settings=())
    for glob in DEFAULT_SECRETS:
        if glob.startswith("!"):
            continue
        single = SecretRules(globs=(glob,), settings=())
        assert any(single.match(path) for path in SECRET_PATHS), glob
    assert not any(rules.match(path) for path in ORDINARY_PATHS)


@pytest.mark.parametrize(
    "arguments",
    [json.dumps({"path": ".env"}), {"path": ".env", "start_line": "x"}, {"path": "./a/../.env"}],
)
def test_the_classifier_reads_arguments_as_the_registry_will(
    tools: ToolSet, arguments: Any
) -> None:
    assert category(tools, "read_file", arguments) == "read-secret"


@pytest.mark.parametrize(
    "arguments", [None, "", "{not json", [".env"], {"path": 3}, {"path": ""}, {"path": "x\x00"}]
)
def test_arguments_the_registry_refuses_keep_the_plain_category(
    tools: ToolSet, arguments: Any
) -> None:
    assert category(tools, "read_file", arguments) == "read"


def test_tools_that_show_no_contents_stay_plain(tools: ToolSet) -> None:
    assert category(tools, "list_directory", {"path": ".ssh"}) == "read"
    assert category(tools, "find_files", {"glob": "**/.env"}) == "read"
    assert category(tools, "search_text", {"regex": "ghp_", "glob": ".env"}) == "read"
    assert category(tools, "write_file", {"path": ".netrc", "content": "x"}) == "edit"
    assert category(tools, "edit_file", {"path": ".netrc", "old_str": "a", "new_str": "b"}) == (
        "edit"  # an edit of a secret stays an edit: a read-only run must still refuse it
    )


def test_a_notebook_whose_path_holds_secrets_asks_to_be_read(root: Path) -> None:
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"'{TOKEN}'")])
    nbformat.write(notebook, str(root / ".ssh" / "keys.ipynb"))
    nbformat.write(notebook, str(root / "analysis.ipynb"))
    ws = Workspace(root, secrets=SecretRules(settings=()))
    current = {"path": ".ssh/keys.ipynb"}
    tools = notebook_tools(ws, current_notebook=lambda: current["path"])
    assert category(tools, "list_cells", {"notebook": ".ssh/keys.ipynb"}) == "read-secret"
    assert category(tools, "read_cell", {"cell_id": "#1"}) == "read-secret"  # the kernel's own
    assert category(tools, "read_cell", {"cell_id": "#1", "notebook": ""}) == "read-secret"
    assert category(tools, "list_cells", {"notebook": "analysis.ipynb"}) == "read"
    current["path"] = "analysis.ipynb"
    assert category(tools, "list_cells", {}) == "read"
    assert category(tools, "edit_cell", {"cell_id": "#1", "old_str": "a", "new_str": "b"}) == (
        "edit"
    )


def test_copilot_nb_settings_folders_are_secret_wherever_they_are(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "project"
    for name in ("cfg/github_token.json", "xdg/copilot_nb/token.json", "plain.txt"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(TOKEN)
    monkeypatch.setenv("COPILOT_NB_CONFIG_DIR", str(root / "cfg"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(root / "xdg"))
    ws = Workspace(root)
    assert ws.secret("cfg/github_token.json") is not None
    assert "settings folder" in (ws.secret("CFG/github_token.json") or "")
    assert ws.secret("xdg/copilot_nb/token.json") is not None
    assert ws.secret("plain.txt") is None
    inside = Workspace(root / "cfg")  # a kernel started in the settings folder itself
    assert inside.secret("github_token.json") is not None


def test_secret_rules_are_configurable_like_the_write_policy(root: Path) -> None:
    none = Workspace(root, secrets=SecretRules(globs=(), settings=()))
    assert none.secret(".env") is None
    more = Workspace(root, secrets=SecretRules.with_globs(["*.md", "config/"]))
    assert more.secret("README.md") is not None
    assert more.secret("config/settings.json") is not None
    assert more.secret(".env") is not None
    allowed = Workspace(root, secrets=SecretRules.with_globs(["!.env.local"]))
    assert allowed.secret(".env.local") is None and allowed.secret(".env") is not None
    with pytest.raises(ConfigError, match="not a valid glob"):
        SecretRules(globs=("[abc",))
    anchored = SecretRules(globs=("/top.txt", "sub/x.txt", "deep/", "!deep/ok.txt"), settings=())
    assert [anchored.match(p) for p in ("top.txt", "a/top.txt", "sub/x.txt", "a/sub/x.txt")] == [
        "/top.txt",
        None,
        "sub/x.txt",
        None,
    ]
    assert anchored.match("a/deep/y") == "deep/" and anchored.match("deep/ok.txt") is None


async def test_search_text_never_prints_a_secret_and_says_what_it_skipped(
    tools: ToolSet,
) -> None:
    out = await tools.call_tool("search_text", {"regex": "ghp_"})
    assert not out.is_error
    printed = {line.split(":")[0] for line in out.content.splitlines()[1:-1]}
    assert printed == {p for p in ORDINARY_PATHS if not p.startswith(".git/")}
    assert f"{len(SECRET_PATHS) - 2} files that may hold secrets not searched" in out.content
    assert "read_file shows one after the user approves" in out.content
    only = await tools.call_tool("search_text", {"regex": "ghp_", "glob": ".env.*"})
    assert only.content.startswith("no matches for 'ghp_' in files matching '.env.*' in 0 files")
    assert "2 files that may hold secrets not searched (e.g. .env.local;" in only.content
    names = await tools.call_tool("find_files", {"glob": ".env.*"})
    assert names.content.splitlines()[1:] == [".env.local", ".env.production"]


async def test_an_edit_of_a_secret_shows_the_model_no_diff(root: Path, tools: ToolSet) -> None:
    out = await tools.call_tool(
        "edit_file", {"path": "tls.key", "old_str": TOKEN, "new_str": "REDACTED"}
    )
    assert not out.is_error
    assert TOKEN not in out.content and "the diff is not shown" in out.content
    assert TOKEN in out.changes[0].diff  # the user sees it in the cell, the model does not
    assert (root / "tls.key").read_text() == "tls.key: REDACTED\n"


async def test_a_move_that_would_unmask_a_secret_is_refused(root: Path, tools: ToolSet) -> None:
    out = await tools.call_tool("move_path", {"source": "tls.key", "destination": "notes.txt"})
    assert out.is_error
    assert out.content.startswith("move_path: refusing to move tls.key to notes.txt: tls.key may")
    assert (root / "tls.key").exists() and not (root / "notes.txt").exists()
    out = await tools.call_tool("move_path", {"source": ".aws", "destination": "aws-backup"})
    assert out.is_error and "refusing to move .aws" in out.content
    out = await tools.call_tool("move_path", {"source": "id_rsa", "destination": "id_rsa.bak"})
    assert not out.is_error  # still a secret under its new name
    out = await tools.call_tool("move_path", {"source": "src", "destination": "lib"})
    assert not out.is_error


# --- through a real agent and the default approval policy --------------------------------------


async def _run(agent: Agent, answer: str) -> tuple[list[ApprovalNeeded], list[Any]]:
    asked: list[ApprovalNeeded] = []
    events: list[Any] = []
    async for event in agent.run("what is in .env?"):
        events.append(event)
        if isinstance(event, ApprovalNeeded):
            asked.append(event)
            if answer == "approve":
                event.approve()
            else:
                event.deny("not my tokens")
    return asked, events


def _results(agent: Agent) -> list[ToolResult]:
    return [m for m in agent.messages if isinstance(m, ToolResult)]


async def test_the_user_is_asked_and_a_denial_lets_the_turn_go_on(serve: Any, root: Path) -> None:
    server = serve([reply("", call("read_file", path=".env")), reply("I could not read it.")])
    agent = Agent(
        model=server.model(),
        workspace=Workspace(root, secrets=SecretRules(settings=())),
        approvals=ApprovalPolicy(),
    )
    asked, events = await _run(agent, "deny")
    assert [(a.name, a.category) for a in asked] == [("read_file", "read-secret")]
    result = _results(agent)[0]
    assert result.is_error and TOKEN not in result.content
    assert result.content.startswith("read_file: the user denied this call: not my tokens.")
    assert isinstance(events[-1], Done) and events[-1].text == "I could not read it."


async def test_an_approved_read_of_a_secret_returns_its_content(serve: Any, root: Path) -> None:
    server = serve(
        [
            reply("", call("read_file", path=".env"), call("read_file", path="README.md")),
            reply("Done."),
        ]
    )
    agent = Agent(
        model=server.model(),
        workspace=Workspace(root, secrets=SecretRules(settings=())),
        approvals=ApprovalPolicy(),
    )
    asked, events = await _run(agent, "approve")
    assert [a.category for a in asked] == ["read-secret"]  # README.md is read without asking
    secret, readme = _results(agent)
    assert not secret.is_error and TOKEN in secret.content
    assert not readme.is_error
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert [e.ok for e in finished] == [True, True]


async def test_agent_ask_denies_a_secret_read_nobody_approved(serve: Any, root: Path) -> None:
    server = serve([reply("", call("read_file", path="innocent.txt")), reply("ok")])
    agent = Agent(model=server.model(), workspace=Workspace(root))
    assert await agent.ask("read it") == "ok"
    result = _results(agent)[0]
    assert result.is_error and TOKEN not in result.content
