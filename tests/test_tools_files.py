"""The file tools and the ToolSet as the model meets them: every failure is a result to read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from copilot_nb.events import FileChanged
from copilot_nb.tools import ToolSet, file_tools
from copilot_nb.tools.files import tools as files_module
from copilot_nb.workspace.workspace import Workspace
from tests.helpers import assert_schemas_match_snapshot, call

# --- read_file --------------------------------------------------------------------------------


async def test_read_file_shows_numbered_lines_like_cat_n(tools: ToolSet, root: Path) -> None:
    (root / "hello.py").write_text("print('hi')\n\nx = 1\n")
    out = await call(tools, "read_file", path="hello.py")
    assert not out.is_error
    assert out.content == "hello.py (3 lines)\n     1\tprint('hi')\n     2\t\n     3\tx = 1"
    assert out.summary == "hello.py (3 lines)"


async def test_read_file_shows_a_range_and_says_which(tools: ToolSet, root: Path) -> None:
    (root / "f.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    out = await call(tools, "read_file", path="f.txt", start_line=3, end_line=4)
    assert out.content.splitlines() == [
        "f.txt (lines 3-4 of 10)",
        "     3\tline 3",
        "     4\tline 4",
    ]
    out = await call(tools, "read_file", path="f.txt", start_line=9, end_line=500)
    assert out.content.splitlines()[0] == "f.txt (lines 9-10 of 10)"


async def test_a_long_file_is_cut_with_a_marker_saying_how_to_read_on(
    tools: ToolSet, root: Path
) -> None:
    (root / "big.txt").write_text("".join(f"{i}\n" for i in range(1, 3235)))
    out = await call(tools, "read_file", path="big.txt")
    lines = out.content.splitlines()
    assert lines[0] == "big.txt (lines 1-2,000 of 3,234)"
    assert lines[-2] == "  2000\t2000"
    assert lines[-1] == "… 1,234 more lines; call read_file with start_line=2001 to read more"
    rest = await call(tools, "read_file", path="big.txt", start_line=2001)
    assert rest.content.splitlines()[-1] == "  3234\t3234"


async def test_very_long_lines_are_cut(tools: ToolSet, root: Path) -> None:
    (root / "min.js").write_text("x" * 5000 + "\n")
    out = await call(tools, "read_file", path="min.js")
    assert out.content.splitlines()[1] == "     1\t" + "x" * 2000 + "… [3,000 more characters]"
    assert len(out.content) < 2100


async def test_read_file_refuses_binary_files(tools: ToolSet, root: Path) -> None:
    (root / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    out = await call(tools, "read_file", path="img.png")
    assert out.is_error
    assert (
        out.content
        == "read_file: img.png is a binary file (16 bytes), not text; it cannot be shown"
    )


async def test_read_file_shows_crlf_and_latin1_files_readably(tools: ToolSet, root: Path) -> None:
    (root / "win.txt").write_bytes(b"a\r\nb\r\n")
    assert (await call(tools, "read_file", path="win.txt")).content.endswith("1\ta\n     2\tb")
    (root / "old.txt").write_bytes("café\n".encode("latin-1"))
    out = await call(tools, "read_file", path="old.txt")
    assert not out.is_error
    assert "not valid UTF-8" in out.content and "caf�" in out.content


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"path": "nope.txt"}, "read_file: 'nope.txt' does not exist in the workspace; call list"),
        ({"path": "sub"}, "read_file: 'sub' is a directory; call list_directory with path='sub'"),
        ({"path": "f.txt", "start_line": 9}, "read_file: f.txt has only 2 lines; start_line=9 is"),
        (
            {"path": "f.txt", "start_line": 0},
            "read_file: start_line=0, end_line=None is not a valid",
        ),
        ({"path": "f.txt", "start_line": 2, "end_line": 1}, "read_file: start_line=2, end_line=1"),
        ({"path": "../f.txt"}, "read_file: path '../f.txt' is outside the workspace"),
    ],
)
async def test_read_file_errors_are_results(
    tools: ToolSet, root: Path, arguments: dict[str, Any], expected: str
) -> None:
    (root / "sub").mkdir()
    (root / "f.txt").write_text("a\nb\n")
    out = await tools.call_tool("read_file", arguments)
    assert out.is_error
    assert out.content.startswith(expected)


async def test_an_empty_file_reads_as_empty(tools: ToolSet, root: Path) -> None:
    (root / "empty.txt").write_text("")
    out = await call(tools, "read_file", path="empty.txt")
    assert out.content == "empty.txt is empty (0 lines)" and not out.is_error


# --- write_file -------------------------------------------------------------------------------


async def test_write_file_creates_a_file_and_reports_a_diff(tools: ToolSet, root: Path) -> None:
    out = await call(tools, "write_file", path="pkg/hello.py", content="a = 1\nb = 2\n")
    assert (root / "pkg" / "hello.py").read_text() == "a = 1\nb = 2\n"
    assert out.content == "created pkg/hello.py (2 lines)"
    assert out.summary == "pkg/hello.py (2 lines)"
    assert out.changes == (
        FileChanged(
            path="pkg/hello.py",
            diff="--- /dev/null\n+++ b/pkg/hello.py\n@@ -0,0 +1,2 @@\n+a = 1\n+b = 2\n",
        ),
    )


async def test_write_file_overwrites_and_says_so(tools: ToolSet, root: Path) -> None:
    (root / "hello.py").write_text("a = 1\nb = 2\n")
    out = await call(tools, "write_file", path="hello.py", content="a = 1\nb = 3\n")
    assert out.content == "overwrote hello.py (2 lines, was 2)"
    assert out.summary == "hello.py +1 −1"
    assert "-b = 2\n+b = 3\n" in out.changes[0].diff


async def test_write_file_with_the_same_content_changes_nothing(tools: ToolSet, root: Path) -> None:
    (root / "same.txt").write_text("x\n")
    out = await call(tools, "write_file", path="same.txt", content="x\n")
    assert "nothing changed" in out.content and out.changes == ()


async def test_write_file_errors_are_results(root: Path) -> None:
    (root / "dir").mkdir()
    tools = file_tools(Workspace(root))
    out = await call(tools, "write_file", path="dir", content="x")
    assert out.is_error and "'dir' is a directory" in out.content
    out = await call(tools, "write_file", path="/etc/evil", content="x")
    assert out.is_error and "is outside the workspace" in out.content
    out = await call(tools, "write_file", path="bad.txt", content="\ud800")
    assert out.is_error and "cannot be encoded as UTF-8" in out.content
    assert not (root / "bad.txt").exists()
    readonly = file_tools(Workspace(root, read_only=True))
    out = await call(readonly, "write_file", path="new.txt", content="x")
    assert out.is_error and "read-only" in out.content
    assert not (root / "new.txt").exists()


# --- edit_file --------------------------------------------------------------------------------


async def test_edit_file_replaces_a_unique_match_and_shows_the_diff(
    tools: ToolSet, root: Path
) -> None:
    (root / "app.py").write_text("def f():\n    return 1\n\nprint(f())\n")
    out = await call(tools, "edit_file", path="app.py", old_str="return 1", new_str="return 2")
    assert (root / "app.py").read_text() == "def f():\n    return 2\n\nprint(f())\n"
    assert not out.is_error
    assert out.summary == "app.py +1 −1"
    assert out.content.startswith("edited app.py:\n--- a/app.py\n+++ b/app.py\n")
    assert "-    return 1\n+    return 2" in out.content
    [change] = out.changes
    assert change.path == "app.py" and "+    return 2\n" in change.diff


async def test_edit_file_with_several_matches_names_their_lines(tools: ToolSet, root: Path) -> None:
    src = root / "src"
    src.mkdir()
    lines = ["x = 0"] * 100
    for number in (12, 40, 88):
        lines[number - 1] = "total += 1"
    (src / "app.py").write_text("\n".join(lines) + "\n")
    out = await call(tools, "edit_file", path="src/app.py", old_str="total += 1", new_str="t += 2")
    assert out.is_error
    assert out.content == (
        "edit_file: old_str appears 3 times in src/app.py (lines 12, 40, 88); "
        "include more surrounding lines so it matches once"
    )


async def test_edit_file_with_no_match_says_so_and_hints_at_whitespace(
    tools: ToolSet, root: Path
) -> None:
    (root / "app.py").write_text("def f():\n    if x:\n        return 1\n")
    out = await call(tools, "edit_file", path="app.py", old_str="return 3", new_str="return 2")
    assert out.is_error
    assert out.content.startswith("edit_file: old_str was not found in app.py; call read_file")
    out = await call(
        tools, "edit_file", path="app.py", old_str="if x:\n  return 1", new_str="if y:\n  return 1"
    )
    assert out.is_error
    assert "differs only in whitespace is at lines 2-3" in out.content
    assert (root / "app.py").read_text() == "def f():\n    if x:\n        return 1\n"


async def test_edit_file_keeps_crlf_line_endings_and_a_bom(tools: ToolSet, root: Path) -> None:
    (root / "win.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\nthree\r\n")
    out = await call(tools, "edit_file", path="win.txt", old_str="one\ntwo", new_str="1\n2")
    assert not out.is_error, out.content
    assert (root / "win.txt").read_bytes() == b"\xef\xbb\xbf1\r\n2\r\nthree\r\n"


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        ({"path": "a.txt", "old_str": "", "new_str": "x"}, "edit_file: old_str is empty"),
        ({"path": "a.txt", "old_str": "a", "new_str": "a"}, "edit_file: old_str and new_str are"),
        ({"path": "b.txt", "old_str": "a", "new_str": "b"}, "edit_file: 'b.txt' does not exist"),
        ({"path": "img.bin", "old_str": "a", "new_str": "b"}, "edit_file: img.bin is a binary"),
        ({"path": "aa.txt", "old_str": "aa", "new_str": "b"}, "edit_file: old_str appears 2 times"),
    ],
)
async def test_edit_file_errors_are_results(
    tools: ToolSet, root: Path, arguments: dict[str, Any], expected: str
) -> None:
    (root / "a.txt").write_text("a\n")
    (root / "aa.txt").write_text("aaa\n")  # overlapping matches are ambiguous too
    (root / "img.bin").write_bytes(b"a\x00b")
    out = await tools.call_tool("edit_file", arguments)
    assert out.is_error
    assert out.content.startswith(expected), out.content


async def test_edit_file_in_a_read_only_workspace_is_refused(root: Path) -> None:
    (root / "a.txt").write_text("a\n")
    tools = file_tools(Workspace(root, read_only=True))
    out = await call(tools, "edit_file", path="a.txt", old_str="a", new_str="b")
    assert out.is_error and "read-only" in out.content
    assert (root / "a.txt").read_text() == "a\n"


# --- list_directory ---------------------------------------------------------------------------


async def test_list_directory_shows_dirs_first_with_slashes_and_sizes(
    tools: ToolSet, root: Path
) -> None:
    (root / "src").mkdir()
    (root / ".git").mkdir()
    (root / "b.txt").write_text("12345")
    (root / "A.md").write_bytes(b"x" * 2048)
    (root / ".env").write_text("K=V\n")
    out = await call(tools, "list_directory")
    assert out.content.splitlines() == [
        "./ (5 entries)",
        ".git/",
        "src/",
        ".env  (4 B)",
        "A.md  (2.0 KB)",
        "b.txt  (5 B)",
    ]
    assert out.summary == "./ (5 entries)"
    sub = await call(tools, "list_directory", path="src")
    assert sub.content == "src/ (0 entries)\n(empty directory)"


async def test_a_huge_listing_is_capped_with_a_marker(tools: ToolSet, root: Path) -> None:
    for i in range(files_module.MAX_LIST_ENTRIES + 5):
        (root / f"f{i:05d}.txt").write_text("")
    out = await call(tools, "list_directory", path=".")
    lines = out.content.splitlines()
    assert len(lines) == files_module.MAX_LIST_ENTRIES + 2
    assert lines[-1] == (
        "… 5 more entries not shown (1,005 in all); list a subdirectory to see less at once"
    )


async def test_list_directory_errors_are_results(tools: ToolSet, root: Path) -> None:
    (root / "f.txt").write_text("x")
    out = await call(tools, "list_directory", path="f.txt")
    assert out.is_error and "'f.txt' is not a directory" in out.content
    out = await call(tools, "list_directory", path="missing")
    assert out.is_error and "'missing' does not exist" in out.content
    out = await call(tools, "list_directory", path="..")
    assert out.is_error and "outside the workspace" in out.content


# --- the schema the model sees ----------------------------------------------------------------


def test_file_tools_are_exactly_four_with_edit_categories(ws: Workspace) -> None:
    tools = file_tools(ws)
    assert [t.name for t in tools] == ["read_file", "write_file", "edit_file", "list_directory"]
    assert {t.name: t.category for t in tools} == {
        "read_file": "read",
        "write_file": "edit",
        "edit_file": "edit",
        "list_directory": "read",
    }


def test_the_file_tool_schemas_match_the_snapshot(ws: Workspace) -> None:
    """A change to what the model sees must show up as a diff of the snapshot file."""
    assert_schemas_match_snapshot(file_tools(ws), "file_tools_schema.json")


async def test_schema_violations_list_each_problem(tools: ToolSet) -> None:
    out = await tools.call_tool("edit_file", {"path": "a.txt", "new_str": 3, "mode": "x"})
    assert out.is_error
    assert out.content.splitlines() == [
        "edit_file: missing required argument 'old_str'",
        "edit_file: unexpected argument 'mode' (known arguments: path, old_str, new_str)",
        "edit_file: argument 'new_str' must be string, not an integer 3",
        "edit_file expects: path (string, required), old_str (string, required), "
        "new_str (string, required)",
    ]
    assert out.summary == "edit_file: missing required argument 'old_str'"
    out = await tools.call_tool("read_file", {"path": "a.txt", "start_line": "12"})
    assert "argument 'start_line' must be integer or null, not a string \"12\"" in out.content
