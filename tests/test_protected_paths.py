"""An agent cannot write the files that run later, git's and Jupyter's stores, or its own settings."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import nbformat
import pytest

from copilot_nb.config import settings_dirs
from copilot_nb.errors import SandboxError
from copilot_nb.tools import ToolSet
from copilot_nb.workspace.workspace import Workspace
from copilot_nb.workspace.write_policy import DEFAULT_DENY, DenyRule, WritePolicy


@pytest.fixture
def root(root: Path) -> Path:
    """A workspace with git's store (and a hook folder) and one ordinary file."""
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    (root / "notes.txt").write_text("hello\n")
    return root


PROTECTED = [
    ".git/hooks/pre-commit",
    ".git/hooks/post-checkout.sample",
    ".git/config",
    ".git/HEAD",
    ".git/objects/ab/cdef",
    "vendor/lib/.git/config",
    "vendor/lib/.git/hooks/pre-push",
    ".ipynb_checkpoints/analysis-checkpoint.ipynb",
    "notebooks/.ipynb_checkpoints/a-checkpoint.ipynb",
    "sitecustomize.py",
    "lib/python3.11/site-packages/sitecustomize.py",
    "usercustomize.py",
    "evil.pth",
    "lib/python3.11/site-packages/distutils-precedence.pth",
    "profile_default/startup/00-setup.py",
    "ipython/profile_work/startup/run.ipy",
    ".vscode/tasks.json",
    ".vscode/settings.json",
    "app/.vscode/launch.json",
    ".env",
    ".env.local",
    "services/api/.env.production",
    ".envrc",
    "sub/.envrc",
]


@pytest.mark.parametrize("path", PROTECTED)
def test_every_protected_path_is_refused_whether_or_not_it_exists(
    ws: Workspace, root: Path, path: str
) -> None:
    with pytest.raises(SandboxError, match=f"^refusing to write {path}: .*; edit it yourself"):
        ws.write_text(path, "pwned\n")
    target = root / path
    if path != ".git/config":
        assert not target.exists()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("original\n")
    with pytest.raises(SandboxError, match="refusing to write"):
        ws.write_text(path, "pwned\n")
    assert target.read_text() == "original\n"


@pytest.mark.parametrize(
    "path",
    [
        ".GIT/hooks/pre-commit",
        ".Git/Config",
        "SiteCustomize.py",
        "USERCUSTOMIZE.PY",
        "Evil.PTH",
        "Profile_Default/StartUp/x.py",
        ".VSCode/settings.json",
        ".ENV",
        ".Env.Local",
        ".EnvRC",
        ".IPYNB_Checkpoints/x.ipynb",
    ],
)
def test_case_variants_are_refused_too(ws: Workspace, path: str) -> None:
    """macOS and Windows file systems ignore case: .GIT/hooks is .git/hooks there."""
    with pytest.raises(SandboxError, match="refusing to write"):
        ws.write_text(path, "x")


@pytest.mark.parametrize(
    "path",
    [
        ".gitignore",
        ".gitattributes",
        ".git_backup/config",
        "git/hooks/pre-commit",
        "docs/.github/workflows/ci.yml",
        "env.py",
        ".environment",
        "my.pth.txt",
        "startup/x.py",
        "profile/startup.py",
        "vscode/settings.json",
        "notes.txt",
    ],
)
def test_neighbours_of_protected_paths_stay_writable(ws: Workspace, root: Path, path: str) -> None:
    ws.write_text(path, "fine\n")
    assert (root / path).read_text() == "fine\n"


def test_the_message_says_why_and_what_to_do(ws: Workspace) -> None:
    with pytest.raises(SandboxError) as info:
        ws.write_text(".git/hooks/pre-commit", "#!/bin/sh\n")
    assert str(info.value) == (
        "refusing to write .git/hooks/pre-commit: files under .git/hooks run later as programs; "
        "edit it yourself if you mean to"
    )


def test_a_symlink_to_a_protected_file_is_refused(ws: Workspace, root: Path) -> None:
    (root / "ok.txt").symlink_to(".git/config")
    with pytest.raises(SandboxError) as info:
        ws.write_text("ok.txt", "[core]\n\tfsmonitor = evil\n")
    assert str(info.value).startswith(
        "refusing to write ok.txt (it leads to .git/config): git runs"
    )
    assert (root / ".git" / "config").read_text() == "[core]\n"
    (root / "hooks_link").symlink_to(".git/hooks", target_is_directory=True)
    with pytest.raises(SandboxError, match=r"hooks_link/pre-commit \(it leads to \.git/hooks/pre"):
        ws.write_text("hooks_link/pre-commit", "x")
    (root / "dangling.env").symlink_to(".env")
    with pytest.raises(SandboxError, match=re.escape("leads to .env")):
        ws.write_text("dangling.env", "SECRET=1\n")
    assert not (root / ".env").exists()


def test_a_protected_name_that_is_a_symlink_elsewhere_is_still_refused(
    ws: Workspace, root: Path
) -> None:
    """`.git` may be a link to the real store; the path as written is checked too."""
    (root / "store" / "hooks").mkdir(parents=True)
    (root / "sub").mkdir()
    (root / "sub" / ".git").symlink_to(root / "store", target_is_directory=True)
    with pytest.raises(
        SandboxError, match=re.escape("refusing to write sub/.git/hooks/pre-commit")
    ):
        ws.write_text("sub/.git/hooks/pre-commit", "x")
    assert not (root / "store" / "hooks" / "pre-commit").exists()


def test_reading_protected_files_is_allowed(ws: Workspace, root: Path) -> None:
    (root / ".env").write_text("K=V\n")
    assert ws.read_text(".env") == "K=V\n"
    assert ws.read_text(".git/config") == "[core]\n"


# --- moves and deletes ------------------------------------------------------------------------


def test_deleting_or_moving_protected_paths_is_refused(ws: Workspace, root: Path) -> None:
    (root / ".env").write_text("K=V\n")
    (root / "hook.sh").write_text("#!/bin/sh\n")
    with pytest.raises(SandboxError, match="^" + re.escape("refusing to delete .env: ")):
        ws.delete(".env")
    with pytest.raises(SandboxError, match="^" + re.escape("refusing to delete .git: ")):
        ws.delete(".git", recursive=True)
    with pytest.raises(
        SandboxError, match="^" + re.escape("refusing to move onto .git/hooks/post-checkout: ")
    ):
        ws.move("hook.sh", ".git/hooks/post-checkout")
    with pytest.raises(SandboxError, match="^" + re.escape("refusing to move .git/config: ")):
        ws.move(".git/config", "config.bak")
    assert (root / ".env").exists() and (root / ".git" / "config").exists()
    assert (root / "hook.sh").exists()


def test_a_folder_holding_a_protected_path_cannot_be_deleted_or_moved(
    ws: Workspace, root: Path
) -> None:
    (root / "vendor" / "lib" / ".git").mkdir(parents=True)
    (root / "vendor" / "lib" / ".git" / "HEAD").write_text("ref: main\n")
    (root / "vendor" / "lib" / "code.py").write_text("x = 1\n")
    with pytest.raises(SandboxError, match=re.escape("refusing to delete vendor/lib/.git")):
        ws.delete("vendor", recursive=True)
    with pytest.raises(SandboxError, match=re.escape("refusing to move vendor/lib/.git")):
        ws.move("vendor", "third_party")
    (root / "plugins").mkdir()
    (root / "plugins" / "sitecustomize.py").write_text("")
    with pytest.raises(SandboxError, match=re.escape("refusing to move plugins/sitecustomize.py")):
        ws.move("plugins", "elsewhere")
    assert (root / "vendor" / "lib" / "code.py").exists()
    assert (root / "plugins" / "sitecustomize.py").exists()


def test_the_root_itself_cannot_be_deleted_or_moved(ws: Workspace) -> None:
    for path in (".", "", "sub/.."):
        with pytest.raises(SandboxError):
            ws.delete(path, recursive=True)
    with pytest.raises(SandboxError, match="the workspace root itself"):
        ws.move(".", "elsewhere")


async def test_the_tools_return_the_refusal_as_a_result(tools: ToolSet, root: Path) -> None:
    out = await tools.call_tool("write_file", {"path": ".git/hooks/pre-commit", "content": "x"})
    assert out.is_error
    assert out.content == (
        "write_file: refusing to write .git/hooks/pre-commit: files under .git/hooks run later "
        "as programs; edit it yourself if you mean to"
    )
    out = await tools.call_tool(
        "edit_file", {"path": ".git/config", "old_str": "[", "new_str": "("}
    )
    assert out.is_error and out.content.startswith("edit_file: refusing to write .git/config")
    out = await tools.call_tool("delete_path", {"path": ".git", "recursive": True})
    assert out.is_error and out.content.startswith("delete_path: refusing to delete .git:")
    out = await tools.call_tool("move_path", {"source": "notes.txt", "destination": ".envrc"})
    assert out.is_error and "direnv runs it" in out.content
    assert (root / "notes.txt").exists() and not (root / ".envrc").exists()


# --- copilot_nb's own settings ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("variable", "inside"),
    [
        ("COPILOT_NB_CONFIG_DIR", "settings"),
        ("XDG_CONFIG_HOME", "xdg/copilot_nb"),
        ("HOME", ".config/copilot_nb"),
    ],
)
def test_copilot_nb_settings_are_refused_wherever_they_live(
    root: Path, monkeypatch: pytest.MonkeyPatch, variable: str, inside: str
) -> None:
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    value = root / inside.removesuffix("/copilot_nb") if variable != "HOME" else root
    monkeypatch.setenv(variable, str(value))
    assert (root / inside).resolve() in settings_dirs()
    ws = Workspace(root)
    with pytest.raises(SandboxError, match=f"refusing to write {inside}/approvals.json: it holds"):
        ws.write_text(f"{inside}/approvals.json", "{}")
    with pytest.raises(SandboxError, match="copilot_nb's own settings"):
        ws.write_text(f"{inside.upper()}/token.json", "{}")
    ws.write_text("config/other.json", "{}")  # a folder that merely looks similar is fine


# --- the policy is an object --------------------------------------------------------------------


def test_the_policy_is_configurable(root: Path) -> None:
    open_policy = Workspace(root, policy=WritePolicy(deny=(), protected_dirs=()))
    open_policy.write_text(".env", "K=V\n")
    assert (root / ".env").read_text() == "K=V\n"
    stricter = Workspace(root, policy=WritePolicy.with_globs(["*.lock", "data/raw"]))
    for path in ("poetry.lock", "data/raw/2024.csv", ".env"):
        with pytest.raises(SandboxError, match="refusing to write"):
            stricter.write_text(path, "x")
    custom = WritePolicy(deny=(DenyRule(pattern="secrets/", reason="the vault lives there"),))
    with pytest.raises(SandboxError, match=re.escape("secrets/a.txt: the vault lives there")):
        Workspace(root, policy=custom).write_text("secrets/a.txt", "x")
    assert len(DEFAULT_DENY) >= 12


def test_read_only_comes_before_the_protected_paths(root: Path) -> None:
    with pytest.raises(SandboxError, match="read-only"):
        Workspace(root, read_only=True).write_text(".env", "x")


# --- notebooks are not text files -----------------------------------------------------------------


def notebook_json() -> str:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("print(1)")])
    return nbformat.writes(nb)


async def test_file_tools_refuse_to_overwrite_or_edit_a_notebook(
    tools: ToolSet, root: Path
) -> None:
    (root / "analysis.ipynb").write_text(notebook_json())
    before = (root / "analysis.ipynb").read_bytes()
    out = await tools.call_tool("write_file", {"path": "analysis.ipynb", "content": "{}"})
    assert out.is_error
    assert out.content.startswith("write_file: refusing to overwrite analysis.ipynb as raw text")
    assert "use the notebook tools (edit_cell, insert_cell, …)" in out.content
    out = await tools.call_tool(
        "edit_file", {"path": "Analysis.IPYNB", "old_str": "print(1)", "new_str": "print(2)"}
    )
    assert out.is_error and "refusing to edit" in out.content and "edit_cell" in out.content
    (root / "link.txt").symlink_to("analysis.ipynb")
    out = await tools.call_tool("write_file", {"path": "link.txt", "content": "{}"})
    assert out.is_error and "as raw text" in out.content
    assert (root / "analysis.ipynb").read_bytes() == before


async def test_a_new_notebook_may_be_written_only_if_it_is_valid(
    tools: ToolSet, root: Path
) -> None:
    out = await tools.call_tool("write_file", {"path": "new.ipynb", "content": notebook_json()})
    assert not out.is_error, out.content
    assert json.loads((root / "new.ipynb").read_text())["nbformat"] == 4
    out = await tools.call_tool("write_file", {"path": "bad.ipynb", "content": '{"cells": 1}'})
    assert out.is_error and "would not be a valid notebook" in out.content
    assert not (root / "bad.ipynb").exists()


async def test_reading_a_notebook_raw_works_but_points_to_the_notebook_tools(
    tools: ToolSet, root: Path
) -> None:
    (root / "analysis.ipynb").write_text(notebook_json())
    out = await tools.call_tool("read_file", {"path": "analysis.ipynb"})
    assert not out.is_error
    header = out.content.splitlines()[0]
    assert "raw notebook JSON; to change cells use the notebook tools" in header
    assert '"print(1)"' in out.content


def test_settings_dirs_follow_the_environment(tmp_path: Path) -> None:
    environ = {"COPILOT_NB_CONFIG_DIR": str(tmp_path / "a"), "XDG_CONFIG_HOME": str(tmp_path)}
    dirs = settings_dirs(environ)
    assert dirs[0] == Path(os.path.realpath(tmp_path / "a"))
    assert dirs[1] == Path(os.path.realpath(tmp_path / "copilot_nb"))
    assert dirs[2].parts[-2:] == (".config", "copilot_nb")
