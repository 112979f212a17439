"""Every change the agent makes can be undone, turn by turn, byte for byte, without losing yours."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest

from copilot_nb import Agent
from copilot_nb.errors import SandboxError
from copilot_nb.events import FileChanged
from copilot_nb.jupyter.reports import render_diff, render_undo
from copilot_nb.testing import call, reply
from copilot_nb.tools import ToolSet, file_tools
from copilot_nb.tools.search.tools import search_tools
from copilot_nb.workspace.checkpoints import Checkpoints
from copilot_nb.workspace.restore import RestoredPath
from copilot_nb.workspace.workspace import Workspace


def snapshot(root: Path) -> dict[str, tuple[str, object, int]]:
    """Every path under root: kind, content (bytes or link target) and permission bits."""
    found: dict[str, tuple[str, object, int]] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = Path(folder) / name
            st = os.lstat(path)
            rel = path.relative_to(root).as_posix()
            if stat.S_ISLNK(st.st_mode):
                found[rel] = ("link", os.readlink(path), 0)
            elif stat.S_ISDIR(st.st_mode):
                found[rel] = ("dir", None, stat.S_IMODE(st.st_mode))
            else:
                found[rel] = ("file", path.read_bytes(), stat.S_IMODE(st.st_mode))
    return found


@pytest.fixture
def root(root: Path) -> Path:
    """A small project: a script with odd permissions, CRLF text, bytes, a folder tree, a link."""
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "run.sh").write_bytes(b"#!/bin/sh\necho old\n")
    (root / "run.sh").chmod(0o751)
    (root / "win.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\n")
    (root / "blob.bin").write_bytes(bytes(range(256)))
    (root / "pkg" / "a.py").write_text("a = 1\n")
    (root / "pkg" / "sub" / "b.py").write_text("b = 2\n")
    (root / "pkg" / "sub" / "secret.key").write_text("k\n")
    (root / "pkg" / "sub" / "secret.key").chmod(0o600)
    (root / "pkg" / "empty").mkdir()
    (root / "pkg" / "link.py").symlink_to("a.py")
    return root


def test_writes_are_undone_byte_for_byte_with_their_permissions(ws: Workspace, root: Path) -> None:
    before = snapshot(root)
    ws.begin_turn("change things")
    ws.write_text("run.sh", "#!/bin/sh\necho new\n")
    ws.write_bytes("win.txt", b"changed")
    ws.write_bytes("blob.bin", b"\x00" * 10)
    ws.write_text("new/deeper/file.txt", "created\n")
    ws.write_text("pkg/link.py", "a = 2\n")  # through the link: the target changes
    assert snapshot(root) != before
    restored = ws.undo()
    assert snapshot(root) == before
    actions = {r.path: r.action for r in restored}
    assert actions == {
        "run.sh": "restored",
        "win.txt": "restored",
        "blob.bin": "restored",
        "pkg/a.py": "restored",
        "new/": "removed",
        "new/deeper/": "removed",
        "new/deeper/file.txt": "removed",
    }
    assert {r.turn for r in restored} == {"change things"}
    assert ws.undo() == []


def test_moves_and_deletes_are_undone_including_folders_links_and_modes(
    ws: Workspace, root: Path
) -> None:
    before = snapshot(root)
    ws.begin_turn("reorganise")
    ws.move("pkg", "lib/pkg")
    ws.delete("run.sh")
    ws.delete("lib/pkg/link.py")  # the link goes, its target stays
    assert (root / "lib" / "pkg" / "a.py").exists()
    ws.delete("lib/pkg/sub", recursive=True)
    ws.move("win.txt", "docs/win.txt")
    restored = ws.undo()
    assert snapshot(root) == before
    assert stat.S_IMODE(os.stat(root / "run.sh").st_mode) == 0o751
    assert stat.S_IMODE(os.stat(root / "pkg" / "sub" / "secret.key").st_mode) == 0o600
    assert os.readlink(root / "pkg" / "link.py") == "a.py"
    assert not (root / "lib").exists() and not (root / "docs").exists()
    assert {r.path: r.action for r in restored}["run.sh"] == "recreated"


def test_undo_goes_back_turn_by_turn(ws: Workspace, root: Path) -> None:
    original = snapshot(root)
    ws.begin_turn("one")
    ws.write_text("pkg/a.py", "a = 10\n")
    after_one = snapshot(root)
    ws.begin_turn("two")
    ws.write_text("pkg/a.py", "a = 20\n")
    ws.write_text("pkg/a.py", "a = 30\n")  # the turn keeps the first original
    ws.write_text("c.py", "c = 1\n")
    ws.begin_turn("three: only reads")  # a turn that changed nothing is skipped
    assert [r.turn for r in ws.undo()][:1] == ["two"]
    assert snapshot(root) == after_one
    assert [r.turn for r in ws.undo()][:1] == ["one"]
    assert snapshot(root) == original
    assert ws.undo() == []


def test_a_file_changed_after_the_agent_wrote_it_is_not_clobbered(
    ws: Workspace, root: Path
) -> None:
    ws.begin_turn("agent edit")
    ws.write_text("pkg/a.py", "a = 2  # agent\n")
    ws.write_text("made.py", "x = 1\n")
    (root / "pkg" / "a.py").write_text("a = 3  # the user's own fix\n")
    with pytest.raises(SandboxError) as info:
        ws.undo()
    message = str(info.value)
    assert message.startswith("cannot undo 'agent edit': pkg/a.py changed on disk after the agent")
    assert "--force" in message
    assert (root / "pkg" / "a.py").read_text() == "a = 3  # the user's own fix\n"
    assert (root / "made.py").exists()
    ws.undo(force=True)
    assert (root / "pkg" / "a.py").read_text() == "a = 1\n"
    assert not (root / "made.py").exists()


def test_a_deleted_path_recreated_by_the_user_counts_as_changed(ws: Workspace, root: Path) -> None:
    ws.begin_turn("delete")
    ws.delete("run.sh")
    (root / "run.sh").write_text("mine\n")
    with pytest.raises(SandboxError, match=re.escape("run.sh changed on disk")):
        ws.undo()


def test_rewriting_the_same_bytes_is_not_a_change_of_the_users(ws: Workspace, root: Path) -> None:
    """An editor that saves unchanged content touches the file; the content decides."""
    ws.begin_turn("agent edit")
    ws.write_text("pkg/a.py", "a = 2\n")
    (root / "pkg" / "a.py").write_text("a = 2\n")
    os.utime(root / "pkg" / "a.py", (1, 1))
    ws.undo()
    assert (root / "pkg" / "a.py").read_text() == "a = 1\n"


def test_a_write_that_failed_leaves_only_its_new_folder_to_undo(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    ws.begin_turn("failing")
    with monkeypatch.context() as patch:
        patch.setattr(os, "replace", broken_replace)
        with pytest.raises(OSError):
            ws.write_text("pkg/a.py", "a = 2\n")
        with pytest.raises(OSError):
            ws.write_text("brand/new.py", "x\n")
    assert (root / "pkg" / "a.py").read_text() == "a = 1\n"
    assert [(r.path, r.action) for r in ws.undo()] == [("brand/", "removed")]
    assert not (root / "brand").exists()


def test_a_refused_write_is_not_checkpointed(ws: Workspace) -> None:
    ws.begin_turn("refused")
    with pytest.raises(SandboxError):
        ws.write_text(".git/hooks/pre-commit", "x")
    with pytest.raises(SandboxError):
        ws.write_text("../outside.txt", "x")
    assert ws.undo() == []


def test_a_notebook_edited_through_the_workspace_is_undone_byte_for_byte(
    ws: Workspace, root: Path
) -> None:
    """Notebook tools write .ipynb files through the workspace: their edits undo like any file."""
    original = b'{\n "cells": [],\n "metadata": {},\n "nbformat": 4,\n "nbformat_minor": 5\n}\n'
    (root / "analysis.ipynb").write_bytes(original)
    ws.begin_turn("add a cell")
    ws.write_text("analysis.ipynb", '{"cells": [{"cell_type": "code"}]}')
    ws.undo()
    assert (root / "analysis.ipynb").read_bytes() == original


# --- limits ---------------------------------------------------------------------------------


def test_files_over_the_size_limit_are_noted_and_not_restored(ws: Workspace, root: Path) -> None:
    ws.checkpoints = Checkpoints(ws.root, max_file_bytes=100)
    (root / "big.csv").write_bytes(b"x" * 500)
    ws.begin_turn("big change")
    notes = ws.write_bytes("big.csv", b"y" * 10)
    assert notes == (
        "big.csv (500 B) is over the 100 B checkpoint limit; undo cannot restore this change",
    )
    ws.write_text("small.txt", "s\n")
    restored = {r.path: r for r in ws.undo()}
    assert restored["big.csv"].action == "not restored"
    assert "too big" in restored["big.csv"].detail
    assert restored["small.txt"].action == "removed"
    report = render_undo(list(restored.values()))
    assert "<code>big.csv</code> <strong>not restored — too big" in report.html
    assert "- big.csv not restored — too big" in report.text


def test_a_big_file_that_was_moved_is_moved_back(ws: Workspace, root: Path) -> None:
    ws.checkpoints = Checkpoints(ws.root, max_file_bytes=100)
    (root / "big.csv").write_bytes(b"x" * 500)
    ws.begin_turn("move")
    assert ws.move("big.csv", "data/big.csv") == ()
    restored = {r.path: r.action for r in ws.undo()}
    assert restored["big.csv"] == "moved back"
    assert (root / "big.csv").read_bytes() == b"x" * 500
    assert not (root / "data").exists()


def test_only_the_last_turns_are_kept(ws: Workspace) -> None:
    ws.checkpoints = Checkpoints(ws.root, max_turns=2)
    for number in range(4):
        ws.begin_turn(f"turn {number}")
        ws.write_text("counter.txt", f"{number}\n")
    assert ws.undo()[0].turn == "turn 3"
    assert ws.undo()[0].turn == "turn 2"
    assert ws.undo() == []
    assert (ws.root / "counter.txt").read_text() == "1\n"


def test_old_turns_are_dropped_when_checkpoints_hold_too_many_bytes(ws: Workspace) -> None:
    ws.checkpoints = Checkpoints(ws.root, max_total_bytes=250)
    for number in range(4):
        (ws.root / f"f{number}.txt").write_bytes(b"x" * 100)
        ws.begin_turn(f"turn {number}")
        ws.write_text(f"f{number}.txt", "y")
    ws.begin_turn("next")
    kept = [turn.label for turn in ws.checkpoints.turns if turn.before]
    assert kept == ["turn 2", "turn 3"]


# --- diff and rendering ------------------------------------------------------------------------


def test_last_turn_diff_shows_each_change_against_the_disk(ws: Workspace) -> None:
    ws.begin_turn("first")
    ws.write_text("pkg/a.py", "a = 100\n")
    ws.begin_turn("second")
    ws.write_text("pkg/a.py", "a = 2\n")
    ws.write_text("notes.md", "# Notes\n")
    ws.delete("pkg/sub/b.py")
    ws.write_bytes("blob.bin", b"\x00\x01")
    diff = ws.last_turn_diff()
    assert "--- a/pkg/a.py\n+++ b/pkg/a.py\n@@ -1 +1 @@\n-a = 100\n+a = 2\n" in diff
    assert "--- /dev/null\n+++ b/notes.md\n@@ -0,0 +1 @@\n+# Notes\n" in diff
    assert "--- a/pkg/sub/b.py\n+++ /dev/null\n" in diff
    assert "Binary or large file blob.bin changed (no text diff)" in diff
    report = render_diff(diff, label="second")
    assert report.html.startswith("<p>Changes of the turn <strong>second</strong>:</p><ul>")
    assert "<li><code>pkg/a.py</code> +1 −1</li>" in report.html
    assert "<li><code>notes.md</code> +1 −0</li>" in report.html
    assert "<li><code>pkg/sub/b.py</code> +0 −1</li>" in report.html
    assert "<li><code>blob.bin</code> +0 −0</li>" in report.html
    assert "</ul><pre><code>Binary or large file blob.bin changed (no text diff)\n" in report.html
    assert report.html.endswith("</code></pre>")
    assert report.text.startswith("Changes of the turn “second”:\n\n- blob.bin +0 −0\n")
    assert report.text.endswith(diff.rstrip("\n"))


def test_render_diff_counts_removed_lines_that_look_like_headers() -> None:
    diff = "--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +1,2 @@\n--- old comment\n+++ new comment\n x\n"
    assert "- q.sql +1 −1" in render_diff(diff).text
    assert render_diff("").text.startswith("No changes to show")
    long = "--- a/x\n+++ b/x\n@@ -1,500 +0,0 @@\n" + "-line\n" * 500
    assert "… 103 more diff lines not shown" in render_diff(long).html


def test_render_undo_lists_what_happened() -> None:
    restored = [
        RestoredPath(path="a.py", action="restored", turn="fix the bug"),
        RestoredPath(path="new.py", action="removed", turn="fix the bug"),
        RestoredPath(path="old/", action="recreated", turn="fix the bug"),
    ]
    report = render_undo(restored)
    assert report.text == (
        "Undid the turn “fix the bug” (3 paths):\n\n"
        "- a.py restored\n"
        "- new.py removed (the turn had created it)\n"
        "- old/ recreated (the turn had deleted it)"
    )
    assert report.html == (
        "<p>Undid the turn <strong>fix the bug</strong> (3 paths):</p><ul>"
        "<li><code>a.py</code> restored</li>"
        "<li><code>new.py</code> removed (the turn had created it)</li>"
        "<li><code>old/</code> recreated (the turn had deleted it)</li></ul>"
    )
    assert render_undo([]).text.startswith("Nothing to undo")


# --- through a real agent ---------------------------------------------------------------------


async def test_an_agents_turns_are_undone_one_by_one(serve, root: Path) -> None:
    original = snapshot(root)
    server = serve(
        [
            reply(
                "",
                call("write_file", id="w", path="notes.md", content="# Notes\n"),
                call("edit_file", id="e", path="pkg/a.py", old_str="a = 1", new_str="a = 2"),
            ),
            reply("Wrote notes and changed a."),
            reply(
                "",
                call("move_path", id="m", source="pkg/sub", destination="lib/sub"),
                call("delete_path", id="d", path="run.sh"),
            ),
            reply("Moved and deleted."),
        ]
    )
    workspace = Workspace(root)
    agent = Agent(
        model=server.model(),
        workspace=workspace,
        tools=ToolSet([*file_tools(workspace), *search_tools(workspace)]),
    )
    first = [e async for e in agent.run("write notes and fix a")]
    after_first = snapshot(root)
    second = [e async for e in agent.run("tidy up")]
    assert {e.path for e in first if isinstance(e, FileChanged)} == {"notes.md", "pkg/a.py"}
    assert {e.path for e in second if isinstance(e, FileChanged)} == {"lib/sub", "run.sh"}
    assert not (root / "run.sh").exists() and (root / "lib" / "sub" / "b.py").exists()

    assert "rename" not in workspace.last_turn_diff()
    assert "--- a/run.sh\n+++ /dev/null" in workspace.last_turn_diff()
    undone = workspace.undo()
    assert {r.turn for r in undone} == {"tidy up"}
    assert snapshot(root) == after_first
    assert workspace.undo()[0].turn == "write notes and fix a"
    assert snapshot(root) == original
    assert workspace.undo() == []
    server.assert_complete()
