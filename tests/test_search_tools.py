"""find_files, search_text, move_path and delete_path as the model meets them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from copilot_nb.tools import ToolSet
from copilot_nb.tools.search import engine
from copilot_nb.tools.search import tools as search_tools_module
from copilot_nb.tools.search.tools import search_tools
from copilot_nb.tools.search.walk import compile_glob
from copilot_nb.workspace.workspace import Workspace
from tests.helpers import assert_schemas_match_snapshot, call


@pytest.fixture
def root(root: Path) -> Path:
    """A project with git's store, ignored build output, nested ignores and a binary file."""
    files = {
        "README.md": "# Demo\nTODO: write docs\n",
        "setup.py": "from setuptools import setup\nsetup()\n",
        "src/app.py": "def main():\n    total = 0  # TODO: count\n    return total\n",
        "src/util/helpers.py": "def helper_total(x):\n    return x\n",
        "src/util/notes.txt": "helper notes\n",
        "tests/test_app.py": "from src.app import main\n\ndef test_main():\n    assert main() == 0\n",
        ".git/config": "[core]\nTODO = not searched\n",
        ".git/info/exclude": "local_only.py\n",
        "local_only.py": "TODO excluded by .git/info/exclude\n",
        ".gitignore": "build/\n*.log\n!keep.log\n",
        "build/gen.py": "TODO generated\n",
        "debug.log": "TODO in a log\n",
        "keep.log": "TODO kept log\n",
        "data/.gitignore": "*.csv\n",
        "data/raw.csv": "TODO,csv\n",
        "data/info.md": "TODO data info\n",
        ".ipynb_checkpoints/nb-checkpoint.ipynb": "TODO checkpoint copy\n",
    }
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    (root / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00TODO")
    return root


# --- find_files --------------------------------------------------------------------------------


async def test_find_files_lists_sorted_paths_as_git_sees_them(tools: ToolSet) -> None:
    out = await call(tools, "find_files", glob="**/*.py")
    assert not out.is_error
    assert out.content.splitlines() == [
        "4 files match '**/*.py'",
        "setup.py",
        "src/app.py",
        "src/util/helpers.py",
        "tests/test_app.py",
    ]
    assert out.summary == "**/*.py (4 files)"


@pytest.mark.parametrize(
    ("glob", "expected"),
    [
        ("*.py", ["setup.py", "src/app.py", "src/util/helpers.py", "tests/test_app.py"]),
        ("./*.py", ["setup.py"]),
        ("src/*.py", ["src/app.py"]),
        ("src/**", ["src/app.py", "src/util/helpers.py", "src/util/notes.txt"]),
        ("src/**/*.py", ["src/app.py", "src/util/helpers.py"]),
        ("**/util/*", ["src/util/helpers.py", "src/util/notes.txt"]),
        ("*.{md,log}", ["README.md", "data/info.md", "keep.log"]),  # sorted, capitals first
        ("test_?pp.py", ["tests/test_app.py"]),
        ("[st]*/*.py", ["src/app.py", "tests/test_app.py"]),
        ("*.log", ["keep.log"]),
    ],
)
async def test_find_files_glob_forms(tools: ToolSet, glob: str, expected: list[str]) -> None:
    out = await call(tools, "find_files", glob=glob)
    assert out.content.splitlines()[1:] == expected


async def test_find_files_explains_an_empty_result_and_a_bad_glob(tools: ToolSet) -> None:
    out = await call(tools, "find_files", glob="**/*.rs")
    assert not out.is_error
    assert out.content.startswith("no files match '**/*.rs' (gitignored files, .git and")
    bad = await call(tools, "find_files", glob="src/[abc.py")
    assert bad.is_error and bad.content.startswith("find_files: glob 'src/[abc.py' has a '['")
    bad = await call(tools, "find_files", glob="*.{py,md")
    assert bad.is_error and "'{' without a closing '}'" in bad.content


async def test_find_files_caps_its_list_with_a_way_to_narrow(
    root: Path, tools: ToolSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_tools_module, "MAX_FOUND", 3)
    out = await call(tools, "find_files", glob="**")
    lines = out.content.splitlines()
    assert lines[0] == "11 files match '**'"
    assert len(lines) == 5
    assert lines[-1] == "… 8 more files; narrow the glob (e.g. 'src/**') to see them"


def test_nested_gitignores_negation_and_symlinks(root: Path) -> None:
    from copilot_nb.tools.search.walk import walk_files

    (root / "src" / "util" / ".gitignore").write_text("*.txt\n")
    (root / "link.py").symlink_to("setup.py")
    found = [rel for rel, _ in walk_files(root, "")]
    assert "src/util/notes.txt" not in found and "src/util/.gitignore" in found
    assert "keep.log" in found and "debug.log" not in found
    assert "data/raw.csv" not in found and "link.py" not in found
    assert [rel for rel, _ in walk_files(root, "src/util")] == [
        "src/util/.gitignore",
        "src/util/helpers.py",
    ]
    assert list(walk_files(root, "build")) == []


def test_compile_glob_starts_the_walk_at_its_literal_folder() -> None:
    assert compile_glob("src/util/**/*.py").start == "src/util"
    assert compile_glob("src/*/x.py").start == "src"
    assert compile_glob("*.py").start == ""
    assert compile_glob("**/x.py").start == ""


# --- search_text -------------------------------------------------------------------------------


async def test_search_text_prints_path_line_text_like_grep(tools: ToolSet) -> None:
    out = await call(tools, "search_text", regex="TODO")
    assert not out.is_error
    assert out.content.splitlines() == [
        "4 matches in 4 files for 'TODO'",
        "README.md:2: TODO: write docs",
        "data/info.md:1: TODO data info",
        "keep.log:1: TODO kept log",
        "src/app.py:2:     total = 0  # TODO: count",
        "(1 binary files skipped)",
    ]
    assert out.summary == "TODO (4 matches in 4 files)"


async def test_search_text_filters_by_glob_and_takes_python_regexes(tools: ToolSet) -> None:
    out = await call(tools, "search_text", regex=r"def \w+_total\(", glob="**/*.py")
    assert out.content.splitlines() == [
        "1 matches in 1 files for 'def \\\\w+_total\\\\(' in files matching '**/*.py'",
        "src/util/helpers.py:1: def helper_total(x):",
    ]
    out = await call(tools, "search_text", regex="(?i)todo: WRITE", glob="*.md")
    assert out.content.splitlines()[1:] == ["README.md:2: TODO: write docs"]
    out = await call(tools, "search_text", regex="^def", glob="src/**")
    assert [line.split(":")[0] for line in out.content.splitlines()[1:]] == [
        "src/app.py",
        "src/util/helpers.py",
    ]


async def test_search_text_reports_no_matches_and_invalid_regexes(tools: ToolSet) -> None:
    out = await call(tools, "search_text", regex="nowhere to be found")
    assert not out.is_error
    assert out.content.startswith("no matches for 'nowhere to be found' in 10 files (gitignored")
    bad = await call(tools, "search_text", regex="total(")
    assert bad.is_error
    assert bad.content == (
        "search_text: 'total(' is not a valid Python regular expression (missing ) at "
        "position 6); escape characters such as ( [ . * + ? with \\ to match them literally"
    )


async def test_search_text_caps_matches_with_a_marker_saying_how_to_narrow(
    root: Path, tools: ToolSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "MAX_MATCHES", 5)
    (root / "many").mkdir()
    for number in range(4):
        (root / "many" / f"f{number}.txt").write_text("hit\n" * 3)
    out = await call(tools, "search_text", regex="hit")
    lines = out.content.splitlines()
    assert lines[0] == "12 matches in 4 files for 'hit'"
    assert lines[1:6] == ["many/f0.txt:1: hit", "many/f0.txt:2: hit", "many/f0.txt:3: hit",
                          "many/f1.txt:1: hit", "many/f1.txt:2: hit"]  # fmt: skip
    assert lines[6] == "… 7 more matches; narrow with glob='many/f0.txt' or a more specific regex"


async def test_search_text_reads_utf8_crlf_and_long_lines(root: Path, tools: ToolSet) -> None:
    (root / "fr.txt").write_text("un café\r\nnaïve résumé\r\n", newline="")
    (root / "min.js").write_text("x" * 5000 + "needle" + "y" * 5000 + "\n")
    out = await call(tools, "search_text", regex="caf.|r.sum", glob="*.txt")
    assert out.content.splitlines()[1:] == ["fr.txt:1: un café", "fr.txt:2: naïve résumé"]
    out = await call(tools, "search_text", regex="needle", glob="*.js")
    line = out.content.splitlines()[1]
    assert line.startswith("min.js:1: …x") and "needle" in line and line.endswith("y…")
    assert len(line) < 330


async def test_a_regex_that_spans_lines_only_matches_within_a_line(
    root: Path, tools: ToolSet
) -> None:
    (root / "two.txt").write_text("end a\nb start\nsame a b\n")
    out = await call(tools, "search_text", regex=r"a\s+b", glob="two.txt")
    assert out.content.splitlines()[1:] == ["two.txt:3: same a b"]


async def test_line_numbers_hold_across_block_boundaries(
    root: Path, tools: ToolSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "BLOCK", 64)
    lines = [f"line {n}" + (" needle" if n % 37 == 0 else "") for n in range(1, 400)]
    (root / "big.txt").write_text("\n".join(lines) + "\n")
    out = await call(tools, "search_text", regex="needle$", glob="big.txt")
    assert [int(line.split(":")[1]) for line in out.content.splitlines()[1:]] == list(
        range(37, 400, 37)
    )


async def test_files_over_the_size_limit_are_named_not_searched(
    root: Path, tools: ToolSet, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "MAX_SEARCH_BYTES", 100_000)
    monkeypatch.setattr(engine, "READ_SIZE", 1024)
    (root / "huge.txt").write_text("TODO\n" * 50_000)
    out = await call(tools, "search_text", regex="TODO", glob="*.txt")
    assert "1 files over 0 MB not searched (e.g. huge.txt; read_file reads them" in out.content


LINES = st.lists(st.sampled_from(["", "a", "b", "ab", "a b", " a", "aa\r", "é", "ba a", "\t"]))
PATTERNS = [
    "a",
    "^a",
    "a$",
    r"a\s*b",
    r"\s",
    "b|é",
    "^$",
    r"a\b",
    ".",
    "(?i)A",
    r"\Aa",
    "a+",
    r"\s$",
    r"b\Z",
]


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=LINES, pattern=st.sampled_from(PATTERNS))
def test_search_matches_a_naive_per_line_grep(
    tmp_path: Path, lines: list[str], pattern: str
) -> None:
    """Searching whole blocks first must find exactly the lines a line-by-line grep finds."""
    text = "\n".join(lines)
    search = engine.TextSearch(pattern)
    (tmp_path / "f.txt").write_text(text, newline="")
    search.run([("f.txt", str(tmp_path / "f.txt"))])
    expected = [
        n
        for n, line in enumerate(text.split("\n"), 1)
        if re.search(pattern, line.removesuffix("\r"))
    ]
    assert [m.line for m in search.shown] == expected


# --- move_path and delete_path ----------------------------------------------------------------


async def test_move_path_renames_files_and_folders(root: Path, tools: ToolSet) -> None:
    out = await call(tools, "move_path", source="src/util", destination="lib/util")
    assert out.content == "moved folder src/util/ (2 files) to lib/util"
    assert out.summary == "src/util → lib/util"
    assert (root / "lib" / "util" / "helpers.py").exists() and not (root / "src" / "util").exists()
    assert out.changes[0].diff == "rename from src/util\nrename to lib/util\n"
    out = await call(tools, "move_path", source="setup.py", destination="README.md")
    assert out.is_error and "'README.md' already exists" in out.content
    out = await call(tools, "move_path", source="nope.py", destination="x.py")
    assert out.is_error and "'nope.py' does not exist" in out.content
    out = await call(tools, "move_path", source="lib", destination="lib/inner/lib")
    assert out.is_error and "into itself" in out.content
    out = await call(tools, "move_path", source="setup.py", destination="../setup.py")
    assert out.is_error and "outside the workspace" in out.content


async def test_delete_path_needs_recursive_for_a_folder_with_content(
    root: Path, tools: ToolSet
) -> None:
    out = await call(tools, "delete_path", path="src")
    assert out.is_error
    assert out.content == (
        "delete_path: src/ is a folder that is not empty (3 files under it); to delete it and "
        "everything in it, call delete_path again with recursive=true"
    )
    assert (root / "src" / "app.py").exists()
    out = await call(tools, "delete_path", path="src", recursive=True)
    assert out.content == "deleted folder src/ (3 files)" and not (root / "src").exists()
    (root / "empty").mkdir()
    assert not (await call(tools, "delete_path", path="empty")).is_error
    out = await call(tools, "delete_path", path="setup.py")
    assert out.content == "deleted setup.py"
    assert out.changes[0].diff == "--- a/setup.py\n+++ /dev/null\n"


async def test_delete_path_removes_a_symlink_not_its_target(root: Path, tools: ToolSet) -> None:
    (root / "link.md").symlink_to("README.md")
    out = await call(tools, "delete_path", path="link.md")
    assert not out.is_error
    assert not (root / "link.md").is_symlink() and (root / "README.md").exists()


def test_the_search_tools_and_their_categories(ws: Workspace) -> None:
    tools = search_tools(ws)
    assert {t.name: t.category for t in tools} == {
        "find_files": "read",
        "search_text": "read",
        "move_path": "edit",
        "delete_path": "edit",
    }
    delete = tools.get("delete_path")
    assert delete is not None
    assert delete.parameters["properties"]["recursive"] == {
        "type": "boolean",
        "description": "Must be true to delete a folder that is not empty, with everything in it.",
        "default": False,
    }


def test_the_search_tool_schemas_match_the_snapshot(ws: Workspace) -> None:
    """A change to what the model sees must show up as a diff of the snapshot file."""
    assert_schemas_match_snapshot(search_tools(ws), "search_tools_schema.json")
