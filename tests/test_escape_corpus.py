"""Every tool that takes a path or a glob refuses every way out of the workspace, as a result.

The corpus is tried on each path-like argument of the default tool sets (file, search, notebook
and kernel tools, and tool_search when many tools are deferred). A tool with a path-like argument
that the table below does not name fails the test, so a new tool cannot skip the door.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest

from copilot_nb.agent.session import CopilotSession
from copilot_nb.tools import ToolOutput, tool
from copilot_nb.workspace.globs import check_glob, compile_glob
from copilot_nb.workspace.workspace import Workspace

MARKER = "OUTSIDE-MARKER-7f3a"
LEAKED_NAME = "LEAKED_NAME_b91c"
FORBIDDEN = (MARKER, LEAKED_NAME, "root:x:0:")

PATH_ARGUMENTS: dict[tuple[str, str], str] = {
    ("read_file", "path"): "path",
    ("write_file", "path"): "path",
    ("edit_file", "path"): "path",
    ("list_directory", "path"): "path",
    ("find_files", "glob"): "glob",
    ("search_text", "glob"): "glob",
    ("move_path", "source"): "path",
    ("move_path", "destination"): "path",
    ("delete_path", "path"): "path",
    ("list_cells", "notebook"): "notebook",
    ("read_cell", "notebook"): "notebook",
    ("edit_cell", "notebook"): "notebook",
    ("replace_cell", "notebook"): "notebook",
    ("insert_cell", "notebook"): "notebook",
    ("delete_cell", "notebook"): "notebook",
    ("run_cell", "notebook"): "notebook",
    ("rebuild_names", "notebook"): "notebook",
}
NOT_PATHS: dict[tuple[str, str], str] = {
    ("search_text", "regex"): "a regex over file contents",
    ("inspect_variable", "name"): "a variable's dotted attribute path, not a file",
    ("replace_cell", "source"): "the cell's new source text",
    ("insert_cell", "source"): "the new cell's source text",
    ("tool_search", "pattern"): "a regex over tool names",
}
_PATH_NAME = re.compile(
    r"path|glob|pattern|dir|folder|file|notebook|source|destination|target|root|src|dst|where"
)
_PATH_WORDS = re.compile(r"\b(path|glob|director(y|ies)|folder)\b|\.ipynb", re.IGNORECASE)


BASE = "<base>"
"""Stands for the folder of one case in absolute entries of the corpus."""


def _takes_text(schema: Any) -> bool:
    """Whether an argument's schema admits a string (alone, in a union, or untyped)."""
    if not isinstance(schema, dict):
        return True
    kinds = schema.get("type")
    if kinds is None:
        options = schema.get("anyOf") or schema.get("oneOf")
        return not options or any(_takes_text(option) for option in options)
    return kinds == "string" or (isinstance(kinds, list) and "string" in kinds)


def _corpus(kind: str, *, reads_only: bool) -> list[str]:
    """The escapes for one kind of argument; absolute ones point at files of this test."""
    x = f"{BASE}/x"
    if kind == "notebook":
        nb = f"{BASE}/x.ipynb"
        return [
            "../x.ipynb",
            "a/../../x.ipynb",
            nb,
            "/proc/self/root" + nb,
            "~/x.ipynb",
            "link.ipynb",
            "linkdir/x.ipynb",
            "x\x00.ipynb",
            "a" * 5000 + ".ipynb",
            "..\\x.ipynb",
            "../*.ipynb",
            "**/../../x.ipynb",
            "./../x.ipynb",
        ]
    paths = [
        "..",
        "../x",
        "a/../../x",
        x,
        "/proc/self/root" + x,
        "~/.netrc",
        "link",
        "linkdir",
        "linkdir/inner.txt",
        "x\x00y",
        "a" * 5000,
        "..\\x",
        "../*",
        "/**",
        "**/../../*",
        "./../*",
    ]
    if reads_only:
        paths.append("/etc/passwd")  # never handed to a tool that writes: the tests run as root
    if kind == "glob":
        # a bare name is matched at any depth by a walk that follows no symlink: no way out
        paths = [p for p in paths if p not in ("link", "linkdir")]
        # `{..,a}/*` names a folder called `{..,a}` when it is a path: an escape only as a glob
        paths += ["{..,a}/*", "{a,{b,..}}/*", "link/*", "linkdir/**", "/etc/*", "~/*", "C:/x"]
    return paths


ENTRY_ITSELF = {"link", "linkdir", "link.ipynb"}
"""Moving or deleting a symlink moves or deletes the link inside the workspace, never its target:
allowed, as long as nothing outside changes."""
ENTRY_TOOLS = {("move_path", "source"), ("delete_path", "path")}


def _build(base: Path) -> Path:
    """A workspace next to files that must never be read, listed or changed through it."""
    root = base / "ws"
    (root / "a").mkdir(parents=True)
    (root / "inside.txt").write_text(f"inside {MARKER[:3]}\n")
    outside = base / "outside"
    outside.mkdir()
    (outside / "inner.txt").write_text(MARKER + "\n")
    (base / "x").write_text(MARKER + "\n")
    (base / f"{LEAKED_NAME}.txt").write_text(MARKER + "\n")
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(f"'{MARKER}'")])
    for folder in (base, outside):
        nbformat.write(notebook, str(folder / "x.ipynb"))
    (root / "link").symlink_to(base / "x")
    (root / "link.ipynb").symlink_to(base / "x.ipynb")
    (root / "linkdir").symlink_to(outside, target_is_directory=True)
    return root


def _snapshot(base: Path) -> dict[str, Any]:
    """Every file and link outside the workspace folder: content, mode and times."""
    found: dict[str, Any] = {}
    for folder, dirs, files in os.walk(base):
        if Path(folder) == base:
            dirs[:] = [d for d in dirs if d != "ws"]
        for name in dirs + files:
            path = Path(folder) / name
            info = path.lstat()
            data = path.read_bytes() if path.is_file() and not path.is_symlink() else None
            found[str(path.relative_to(base))] = (data, info.st_mode, info.st_mtime_ns)
    return found


class FakeShell:
    """What the kernel tools need of an IPython shell to be built."""

    def __init__(self) -> None:
        self.user_ns: dict[str, Any] = {"__session__": "ws.ipynb"}


@functools.cache
def _many_user_tools() -> list[Any]:
    """Enough user tools that the rest are deferred behind tool_search (made once)."""
    made = []
    for number in range(45):

        def helper() -> str:
            """A user tool."""
            return "ok"

        made.append(tool(name=f"user_tool_{number}")(helper))
    return made


def _default_tools(root: Path) -> Any:
    session = CopilotSession(shell=FakeShell())
    for item in _many_user_tools():
        session.user_tools.add(item)
    return session.tools_for(Workspace(root))


def _arguments(name: str, key: str, value: str) -> dict[str, Any]:
    """A call that is valid apart from the path under test."""
    base: dict[str, dict[str, Any]] = {
        "read_file": {},
        "write_file": {"content": "pwned\n"},
        "edit_file": {"old_str": MARKER, "new_str": "pwned"},
        "list_directory": {},
        "find_files": {},
        "search_text": {"regex": "."},
        "move_path": {"source": "inside.txt", "destination": "moved.txt"},
        "delete_path": {"recursive": True},
        "list_cells": {},
        "read_cell": {"cell_id": "#1"},
        "run_cell": {"cell_id": "#1"},
        "rebuild_names": {"names": ["x"]},
        "edit_cell": {"cell_id": "#1", "old_str": MARKER, "new_str": "pwned"},
        "replace_cell": {"cell_id": "#1", "source": "pwned"},
        "insert_cell": {"after_cell_id": None, "cell_type": "code", "source": "pwned"},
        "delete_cell": {"cell_id": "#1"},
    }
    return {**base[name], key: value}


def test_every_path_like_argument_of_the_default_tools_is_in_the_corpus_table(
    tmp_path: Path,
) -> None:
    tools = _default_tools(_build(tmp_path))
    everything = [*tools, tools.get("tool_search")]
    seen: set[tuple[str, str]] = set()
    for item in everything:
        assert item is not None
        for key, schema in item.parameters.get("properties", {}).items():
            if not _takes_text(schema):
                continue  # a number or a flag cannot name a path
            described = str(schema.get("description", ""))
            if _PATH_NAME.search(key.lower()) or _PATH_WORDS.search(described):
                seen.add((item.name, key))
    uncovered = seen - PATH_ARGUMENTS.keys() - NOT_PATHS.keys()
    assert not uncovered, f"path-like arguments with no escape corpus: {sorted(uncovered)}"
    names = {item.name for item in everything if item is not None}
    assert {name for name, _ in PATH_ARGUMENTS} <= names  # the table names real tools


@pytest.mark.parametrize(("name", "key"), sorted(PATH_ARGUMENTS))
async def test_no_escape_reaches_outside_the_workspace(tmp_path: Path, name: str, key: str) -> None:
    kind = PATH_ARGUMENTS[name, key]
    probe = _default_tools(_build(tmp_path / "probe"))
    found = probe.get(name)
    assert found is not None
    corpus = _corpus(kind, reads_only=found.category == "read")
    for number, template in enumerate(corpus):
        base = tmp_path / f"case{number}"
        root = _build(base)
        entry = template.replace(BASE, str(base))
        before = _snapshot(base)
        tools = _default_tools(root)
        out: ToolOutput = await tools.call_tool(name, _arguments(name, key, entry))
        shown = f"{name}({key}={entry[:60]!r}) -> {out.content[:300]!r}"
        for text in FORBIDDEN:
            assert text not in out.content, shown
        moves_the_link = entry in ENTRY_ITSELF and (name, key) in ENTRY_TOOLS
        if not moves_the_link:
            assert out.is_error, shown
        assert _snapshot(base) == before, shown


async def test_a_glob_that_leaves_the_workspace_is_refused_with_a_way_forward(
    tmp_path: Path,
) -> None:
    tools = _default_tools(_build(tmp_path))
    out = await tools.call_tool("find_files", {"glob": "../x/*"})
    assert out.is_error
    assert out.content == (
        "find_files: glob '../x/*' leaves the workspace; globs are relative to the workspace "
        "root, e.g. 'src/**/*.py'"
    )
    out = await tools.call_tool("search_text", {"regex": ".", "glob": "/**"})
    assert out.content.startswith(
        "search_text: glob '/**' leaves the workspace: it starts with '/'"
    )
    out = await tools.call_tool("find_files", {"glob": "linkdir/*"})
    assert out.is_error and "leads through a symlink" in out.content


@pytest.mark.parametrize(
    "glob",
    ["..", "../*", "a/../../b", "**/../*", "{..,a}/*", "{a,{b,..}}/x", "a\\..\\b", "./../x",
     "/x", "~/x", "~user/x", "C:\\x", "x/..", "{a,b}/{c,..}/*"],
)  # fmt: skip
def test_check_glob_refuses_every_spelling_of_dotdot(glob: str) -> None:
    with pytest.raises(ValueError, match="leaves the workspace"):
        check_glob(glob)


@pytest.mark.parametrize("glob", ["**/*.py", "src/**", "*.{md,txt}", "...", "a..b/*", ".x/*"])
def test_check_glob_accepts_globs_inside(glob: str) -> None:
    check_glob(glob)
    assert ".." not in compile_glob(glob).start.split("/")


def test_a_glob_with_too_many_alternatives_is_refused() -> None:
    with pytest.raises(ValueError, match="alternatives"):
        check_glob("{a,b,c,d}" * 6)
