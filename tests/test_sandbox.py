"""The workspace lets tools touch only files inside its root, and never leaves half a file."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from copilot_nb.errors import ConfigError, SandboxError
from copilot_nb.workspace.workspace import Workspace


@pytest.fixture
def root(root: Path) -> Path:
    """A workspace root with a file in it, next to a sibling directory holding a secret."""
    (root / "notes.txt").write_text("hello\n")
    (root.parent / "outside").mkdir()
    (root.parent / "outside" / "secret.txt").write_text("secret\n")
    return root


# --- what is accepted -------------------------------------------------------------------------


def test_relative_and_absolute_paths_inside_the_root_are_accepted(
    ws: Workspace, root: Path
) -> None:
    assert ws.resolve("notes.txt") == root.resolve() / "notes.txt"
    assert ws.resolve(str(root / "notes.txt")) == root.resolve() / "notes.txt"
    assert ws.resolve("./sub/../notes.txt") == root.resolve() / "notes.txt"
    assert ws.resolve(".") == root.resolve()
    assert ws.resolve("new/deeper/file.txt") == root.resolve() / "new" / "deeper" / "file.txt"


def test_a_symlink_that_stays_inside_the_root_is_followed(ws: Workspace, root: Path) -> None:
    (root / "link.txt").symlink_to("notes.txt")
    (root / "docs").mkdir()
    (root / "docs_link").symlink_to("docs", target_is_directory=True)
    assert ws.resolve("link.txt") == root.resolve() / "notes.txt"
    assert ws.resolve("docs_link/new.md") == root.resolve() / "docs" / "new.md"
    assert ws.read_text("link.txt") == "hello\n"


def test_relative_gives_root_relative_posix_paths(ws: Workspace, root: Path) -> None:
    assert ws.relative(ws.resolve("a/b.txt")) == "a/b.txt"
    assert ws.relative(root) == "."
    assert ws.relative("a/b.txt") == "a/b.txt"


def test_the_root_must_be_an_existing_directory(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="not an existing directory"):
        Workspace(tmp_path / "missing")


# --- what is refused --------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["../outside/secret.txt", "..", "a/../../outside", "../root_x"])
def test_dotdot_escapes_are_refused(ws: Workspace, path: str) -> None:
    with pytest.raises(SandboxError) as info:
        ws.resolve(path)
    message = str(info.value)
    assert f"path {path!r} is outside the workspace {ws.root}" in message
    assert "use a path inside it, e.g. 'notes.txt'" in message


def test_absolute_paths_elsewhere_are_refused(ws: Workspace, root: Path) -> None:
    for path in ["/etc/passwd", str(root.parent / "outside" / "secret.txt"), "/"]:
        with pytest.raises(SandboxError, match="is outside the workspace"):
            ws.resolve(path)


def test_a_sibling_directory_sharing_the_prefix_is_outside(root: Path) -> None:
    evil = root.parent / (root.name + "_evil")
    evil.mkdir()
    (evil / "x.txt").write_text("x")
    ws = Workspace(root)
    with pytest.raises(SandboxError, match="outside the workspace"):
        ws.resolve(str(evil / "x.txt"))
    with pytest.raises(SandboxError, match="outside the workspace"):
        ws.resolve(f"../{root.name}_evil/x.txt")


def test_a_file_symlink_pointing_out_is_refused(ws: Workspace, root: Path) -> None:
    (root / "leak.txt").symlink_to(root.parent / "outside" / "secret.txt")
    with pytest.raises(SandboxError) as info:
        ws.read_text("leak.txt")
    assert "leads through a symlink to" in str(info.value)
    assert "outside the workspace" in str(info.value)


def test_a_directory_symlink_pointing_out_is_refused_for_reads_and_new_files(
    ws: Workspace, root: Path
) -> None:
    (root / "out").symlink_to(root.parent / "outside", target_is_directory=True)
    for path in ["out", "out/secret.txt", "out/new.txt", "out/new/deeper.txt"]:
        with pytest.raises(SandboxError, match="leads through a symlink"):
            ws.resolve(path)
    with pytest.raises(SandboxError):
        ws.write_text("out/new.txt", "pwned")
    assert not (root.parent / "outside" / "new.txt").exists()


def test_a_dangling_symlink_pointing_out_is_refused(ws: Workspace, root: Path) -> None:
    target = root.parent / "outside" / "created-by-write.txt"
    (root / "dangling.txt").symlink_to(target)
    with pytest.raises(SandboxError, match="leads through a symlink"):
        ws.write_text("dangling.txt", "pwned")
    assert not target.exists()


def test_a_symlink_loop_is_refused(ws: Workspace, root: Path) -> None:
    (root / "a").symlink_to("b")
    (root / "b").symlink_to("a")
    with pytest.raises(SandboxError, match="symlink loop"):
        ws.resolve("a/file.txt")


@pytest.mark.parametrize(
    ("path", "words"),
    [("", "empty"), ("   ", "empty"), ("notes.txt\x00.png", "NUL")],
)
def test_empty_paths_and_nul_bytes_are_refused(ws: Workspace, path: str, words: str) -> None:
    with pytest.raises(SandboxError, match=words):
        ws.resolve(path)


def test_a_path_that_is_not_a_string_is_refused(ws: Workspace) -> None:
    with pytest.raises(SandboxError, match="must be a string"):
        ws.resolve(cast(Any, 42))


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    parts=st.lists(
        st.sampled_from(["..", ".", "", "sub", "in_link", "out_link", "loop", "x.txt", "/"]),
        min_size=1,
        max_size=6,
    )
)
def test_any_path_is_either_refused_or_inside_the_root(root: Path, parts: list[str]) -> None:
    """However '..', symlinks in and out, loops and slashes combine, nothing resolves outside."""
    if not (root / "sub").exists():
        (root / "sub").mkdir()
        (root / "in_link").symlink_to("sub", target_is_directory=True)
        (root / "out_link").symlink_to(root.parent / "outside", target_is_directory=True)
        (root / "loop").symlink_to("loop")
    ws = Workspace(root)
    try:
        real = ws.resolve("/".join(parts))
    except SandboxError:
        return
    real_root = root.resolve()
    assert real == real_root or real_root in real.parents
    assert os.path.realpath(real) == str(real)


# --- atomic writes ----------------------------------------------------------------------------


def test_write_creates_parents_and_files_with_the_default_permissions(
    ws: Workspace, root: Path, tmp_path: Path
) -> None:
    ws.write_text("a/b/new.txt", "one\ntwo\n")
    assert (root / "a" / "b" / "new.txt").read_text() == "one\ntwo\n"
    plain = tmp_path / "plain.txt"
    plain.write_text("made by open()")
    assert stat.S_IMODE(os.stat(root / "a/b/new.txt").st_mode) == stat.S_IMODE(
        os.stat(plain).st_mode
    )


def test_overwriting_keeps_the_permission_bits(ws: Workspace, root: Path) -> None:
    script = root / "run.sh"
    script.write_text("echo old\n")
    script.chmod(0o751)
    ws.write_text("run.sh", "echo new\n")
    assert script.read_text() == "echo new\n"
    assert stat.S_IMODE(script.stat().st_mode) == 0o751


def test_text_is_written_and_read_exactly_without_newline_translation(
    ws: Workspace, root: Path
) -> None:
    ws.write_text("crlf.txt", "a\r\nb\r\n")
    assert (root / "crlf.txt").read_bytes() == b"a\r\nb\r\n"
    assert ws.read_text("crlf.txt") == "a\r\nb\r\n"
    assert ws.read_bytes("crlf.txt") == b"a\r\nb\r\n"


def test_writing_through_an_inside_symlink_replaces_the_target_and_keeps_the_link(
    ws: Workspace, root: Path
) -> None:
    (root / "link.txt").symlink_to("notes.txt")
    ws.write_text("link.txt", "changed\n")
    assert (root / "link.txt").is_symlink()
    assert (root / "notes.txt").read_text() == "changed\n"


def test_an_unencodable_write_leaves_the_original_untouched(ws: Workspace, root: Path) -> None:
    with pytest.raises(UnicodeEncodeError):
        ws.write_text("notes.txt", "half \ud800 a surrogate")
    assert (root / "notes.txt").read_text() == "hello\n"
    assert sorted(p.name for p in root.iterdir()) == ["notes.txt"]


def test_a_failure_during_the_rename_removes_the_temp_file(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_replace(src: str, dst: str) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="No space left"):
        ws.write_text("notes.txt", "new content\n")
    assert (root / "notes.txt").read_text() == "hello\n"
    assert sorted(p.name for p in root.iterdir()) == ["notes.txt"]


def test_a_failure_during_fsync_removes_the_temp_file(
    ws: Workspace, root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_fsync(fd: int) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(os, "fsync", broken_fsync)
    with pytest.raises(OSError, match="Input/output"):
        ws.write_text("brand-new.txt", "x")
    assert sorted(p.name for p in root.iterdir()) == ["notes.txt"]


def test_writing_onto_a_directory_is_refused(ws: Workspace, root: Path) -> None:
    (root / "dir").mkdir()
    with pytest.raises(IsADirectoryError):
        ws.write_text("dir", "x")


# --- read-only mode and listings --------------------------------------------------------------


def test_a_read_only_workspace_reads_but_refuses_every_write(root: Path) -> None:
    ws = Workspace(root, read_only=True)
    assert ws.read_text("notes.txt") == "hello\n"
    for path in ["notes.txt", "new.txt"]:
        with pytest.raises(SandboxError, match="read-only"):
            ws.write_text(path, "x")
    assert (root / "notes.txt").read_text() == "hello\n"
    assert not (root / "new.txt").exists()


def test_list_dir_describes_entries_sorted_and_marks_links_out(ws: Workspace, root: Path) -> None:
    (root / "sub").mkdir()
    (root / "b.bin").write_bytes(b"12345")
    (root / "link_in").symlink_to("sub", target_is_directory=True)
    (root / "link_out").symlink_to(root.parent / "outside" / "secret.txt")
    (root / "dangling").symlink_to("nowhere.txt")
    entries = {e.name: e for e in ws.list_dir(".")}
    assert list(entries) == sorted(entries)
    assert entries["b.bin"].size == 5 and not entries["b.bin"].is_dir
    assert entries["sub"].is_dir and entries["sub"].size is None
    assert entries["link_in"].is_dir and entries["link_in"].is_symlink
    assert entries["link_out"].outside and entries["link_out"].size is None
    assert entries["dangling"].is_symlink and entries["dangling"].size is None
    assert entries["notes.txt"].path == "notes.txt"
    assert [e.path for e in ws.list_dir("sub")] == []
