"""A codex model edits files the way it was trained to: `apply_patch`, a patch that applies wholly
or not at all, through the workspace's rules, offered to that family only."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from copilot_nb.agent.approvals.policy import ApprovalPolicy
from copilot_nb.agent.context.tokens import estimate_tokens
from copilot_nb.agent.prompt.families import CODEX, GPT
from copilot_nb.agent.session import CopilotSession
from copilot_nb.errors import ToolError
from copilot_nb.events import ApprovalNeeded, Done, FileChanged
from copilot_nb.jupyter.approval_prompt import arguments_preview, preview, question, warning
from copilot_nb.testing import ScriptedServer, call, reply
from copilot_nb.tools.context import ToolContext
from copilot_nb.tools.files.patch import (
    AddFile,
    DeleteFile,
    Hunk,
    PatchError,
    UpdateFile,
    parse_patch,
    patch_paths,
)
from copilot_nb.tools.files.patch_apply import apply_hunks
from copilot_nb.tools.files.patch_tool import apply_patch, patch_tools
from copilot_nb.workspace.workspace import Workspace


def envelope(*lines: str) -> str:
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch"]) + "\n"


# --- the envelope, parsed ---------------------------------------------------------------------


def test_every_operation_of_the_envelope_is_read_with_its_lines() -> None:
    patch = envelope(
        "*** Add File: docs/new.md",
        "+# New",
        "+",
        "+text",
        "*** Update File: src/app.py",
        "*** Move to: src/main.py",
        "@@ class App:",
        "@@     def run(self):",
        "         x = 1",
        "-        return x",
        "+        return x + 1",
        "@@",
        " tail",
        "+more",
        "*** End of File",
        "*** Delete File: old.txt",
    )
    add, update, delete = parse_patch(patch)
    assert add == AddFile(path="docs/new.md", content="# New\n\ntext\n", line=2)
    assert delete == DeleteFile(path="old.txt", line=17)
    assert isinstance(update, UpdateFile)
    assert (update.path, update.move_to, update.line) == ("src/app.py", "src/main.py", 6)
    first, second = update.hunks
    assert (first.line, first.headers, first.at_end) == (8, ("class App:", "def run(self):"), False)
    assert first.old == ("        x = 1", "        return x")
    assert first.new == ("        x = 1", "        return x + 1")
    assert second == Hunk(line=13, headers=(), body=(" tail", "+more"), at_end=True)
    assert patch_paths(patch) == ["docs/new.md", "src/app.py", "src/main.py", "old.txt"]


def test_a_first_hunk_may_leave_out_its_at_at_and_blank_lines_between_files_are_ignored() -> None:
    patch = "\r\n".join(
        ["", "*** Begin Patch", "*** Update File: a.py", "-a", "+b", "", "", "*** End Patch", ""]
    )
    (update,) = parse_patch(patch)
    assert isinstance(update, UpdateFile)
    assert update.hunks == (Hunk(line=4, headers=(), body=("-a", "+b")),)


def test_an_empty_line_in_a_hunk_is_an_empty_context_line() -> None:
    (update,) = parse_patch(envelope("*** Update File: a.py", "@@", " a", "", "-b", "+c"))
    assert isinstance(update, UpdateFile)
    assert update.hunks[0].old == ("a", "", "b") and update.hunks[0].new == ("a", "", "c")


@pytest.mark.parametrize(
    ("patch", "expected"),
    [
        ("", "the patch is empty"),
        ("*** Update File: a.py\n-a\n+b\n*** End Patch", "line 1: the patch must start with"),
        ("*** Begin Patch\n*** Update File: a.py\n-a\n+b\n", "line 4: the patch must end with"),
        ("*** Begin Patch\n*** End Patch", "no file operations"),
        (envelope("*** Rename File: a.py"), "line 2: '*** Rename File: a.py' is not a patch"),
        (envelope("hello"), "line 2: expected a file header"),
        (envelope("*** Add File: "), "line 2: *** Add File: needs a path"),
        (envelope("*** Add File: a.py", "+a", "b"), "line 4: every line of an added file"),
        (envelope("*** Add File: a.py", "+a", "", "+b"), "line 4: every line of an added file"),
        (envelope("*** Delete File: a.py", "-a"), "line 3: '*** Delete File: a.py' takes no"),
        (envelope("*** Update File: a.py"), "line 2: '*** Update File: a.py' has no hunks"),
        (envelope("*** Update File: a.py", "@@ def f():"), "line 3: the hunk at line 3 has no"),
        (envelope("*** Update File: a.py", "@@", "x = 1"), "line 4: 'x = 1' in '*** Update"),
        (
            envelope("*** Update File: a.py", "@@", "-a", "*** End of File", "+b"),
            "line 6: a hunk ends at '*** End of File'",
        ),
        (envelope("*** Update File: a.py", "*** End of File"), "line 3: '*** End of File' must"),
        (
            envelope("*** Update File: a.py", "-a", "*** Delete File: ./a.py"),
            "line 4: ./a.py is named twice in this patch (also at line 2)",
        ),
        (
            envelope("*** Delete File: b.py", "*** Update File: a.py", "*** Move to: b.py"),
            "line 3: b.py is named twice",
        ),
    ],
)
def test_a_malformed_patch_says_which_line_is_wrong(patch: str, expected: str) -> None:
    with pytest.raises(PatchError) as caught:
        parse_patch(patch)
    assert expected in str(caught.value)


# --- hunks, applied to text -------------------------------------------------------------------


def update(*lines: str) -> UpdateFile:
    (op,) = parse_patch(envelope("*** Update File: f.py", *lines))
    assert isinstance(op, UpdateFile)
    return op


def test_hunks_apply_in_order_keeping_line_ends_and_the_missing_final_newline() -> None:
    text = "a\r\nb\r\nc\r\nd\r\ne"
    op = update("@@", " a", "-b", "+B", "@@", " d", "-e", "+E", "*** End of File")
    assert apply_hunks(text, op, "f.py") == "a\r\nB\r\nc\r\nd\r\nE"


def test_a_hunk_with_only_added_lines_goes_at_the_end() -> None:
    assert apply_hunks("a\n", update("@@", "+b"), "f.py") == "a\nb\n"
    assert apply_hunks("", update("@@", "+b"), "f.py") == "b\n"


def test_whitespace_and_typographic_punctuation_at_the_ends_of_lines_still_match() -> None:
    text = "def f():  \n    return 'a—b'\n"
    op = update("@@", " def f():", "-  return 'a-b'", "+    return 'ab'")
    assert apply_hunks(text, op, "f.py") == "def f():  \n    return 'ab'\n"


def test_ambiguous_context_names_the_lines_and_an_at_at_line_settles_it() -> None:
    text = "def f():\n    return 1\n\ndef g():\n    return 1\n"
    with pytest.raises(PatchError) as caught:
        apply_hunks(text, update("@@", "-    return 1", "+    return 2"), "f.py")
    assert "line 3: the hunk's context matches 2 places in f.py (lines 2, 5)" in str(caught.value)
    assert "'@@' line naming the function or class" in str(caught.value)

    fixed = apply_hunks(text, update("@@ def g():", "-    return 1", "+    return 2"), "f.py")
    assert fixed == "def f():\n    return 1\n\ndef g():\n    return 2\n"


def test_a_hunk_that_does_not_fit_says_which_hunk_and_what_the_file_has() -> None:
    text = "a\nb\nc\n"
    with pytest.raises(PatchError, match=r"line 7: the hunk's context and removed lines were not"):
        apply_hunks(text, update("@@", " a", "-b", "+B", "@@", " zzz", "-c"), "f.py")
    with pytest.raises(PatchError, match=r"line 7: .* only above it; put the hunks of a file in"):
        apply_hunks(text, update("@@", " b", "-c", "+C", "@@", " a", "-b"), "f.py")
    with pytest.raises(PatchError, match=r"differs only in whitespace is at lines 1-2"):
        apply_hunks("x  =  1\ny = 2\n", update("@@", " x = 1", "-y = 2"), "f.py")
    with pytest.raises(PatchError, match=r"line 3: the @@ line 'def h\(\):' was not found in f"):
        apply_hunks(text, update("@@ def h():", "-a"), "f.py")
    with pytest.raises(PatchError, match=r"at the end of the file; drop '\*\*\* End of File'"):
        apply_hunks(text, update("@@", "-a", "*** End of File"), "f.py")


# --- the tool, through the workspace ----------------------------------------------------------


@pytest.fixture
def ws(tmp_path) -> Workspace:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("def run():\n    return 1\n")
    (tmp_path / "src" / "util.py").write_text("X = 1\n")
    (tmp_path / "old.txt").write_text("gone soon\n")
    return Workspace(tmp_path)


MULTI = envelope(
    "*** Update File: src/app.py",
    "@@ def run():",
    "-    return 1",
    "+    return 2",
    "*** Add File: docs/notes.md",
    "+# Notes",
    "*** Update File: src/util.py",
    "*** Move to: src/consts.py",
    "@@",
    "-X = 1",
    "+X = 2",
    "*** Delete File: old.txt",
)


def test_a_multi_file_patch_updates_adds_moves_and_deletes(ws: Workspace) -> None:
    root = ws.root
    ws.begin_turn("patch it")
    output = apply_patch(ToolContext(workspace=ws), input=MULTI)
    assert output.content.splitlines() == [
        "Success. Updated the following files:",
        "M src/app.py",
        "A docs/notes.md",
        "M src/util.py -> src/consts.py",
        "D old.txt",
    ]
    assert (root / "src" / "app.py").read_text() == "def run():\n    return 2\n"
    assert (root / "docs" / "notes.md").read_text() == "# Notes\n"
    assert (root / "src" / "consts.py").read_text() == "X = 2\n"
    assert not (root / "src" / "util.py").exists() and not (root / "old.txt").exists()
    assert output.summary == "4 files +3 −3"
    assert [c.path for c in output.changes] == [
        "src/app.py",
        "docs/notes.md",
        "src/consts.py",
        "old.txt",
    ]
    assert all(isinstance(c, FileChanged) for c in output.changes)

    restored = ws.undo()  # what %copilot undo does: the whole patch goes back with its turn
    assert {item.path for item in restored} >= {"src/app.py", "docs/notes.md", "old.txt"}
    assert (root / "src" / "app.py").read_text() == "def run():\n    return 1\n"
    assert (root / "src" / "util.py").read_text() == "X = 1\n"
    assert (root / "old.txt").read_text() == "gone soon\n"
    assert not (root / "docs").exists() and not (root / "src" / "consts.py").exists()


def snapshot(ws: Workspace) -> dict[str, bytes]:
    return {
        p.relative_to(ws.root).as_posix(): p.read_bytes()
        for p in sorted(ws.root.rglob("*"))
        if p.is_file()
    }


def test_a_patch_whose_second_file_does_not_fit_changes_nothing(ws: Workspace) -> None:
    before = snapshot(ws)
    patch = envelope(
        "*** Update File: src/app.py",
        "@@",
        "-    return 1",
        "+    return 2",
        "*** Add File: new.txt",
        "+new",
        "*** Update File: src/util.py",
        "@@",
        "-Y = 1",
        "+Y = 2",
    )
    with pytest.raises(ToolError) as caught:
        apply_patch(ToolContext(workspace=ws), input=patch)
    message = str(caught.value)
    assert message.startswith("apply_patch: line 9: the hunk's context and removed lines were")
    assert "in src/util.py" in message and message.endswith("nothing was changed")
    assert snapshot(ws) == before


def test_a_write_that_fails_half_way_puts_back_what_was_written(ws: Workspace, monkeypatch) -> None:
    before = snapshot(ws)
    real_write = ws.write_bytes

    def failing(path, data):
        if str(path).endswith("notes.md"):
            raise OSError(28, "No space left on device")
        return real_write(path, data)

    monkeypatch.setattr(ws, "write_bytes", failing)
    with pytest.raises(ToolError, match=r"writing docs/notes.md failed \(No space left on dev"):
        apply_patch(ToolContext(workspace=ws), input=MULTI)
    assert snapshot(ws) == before


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("../outside.txt", "is outside the workspace"),
        (".git/info/exclude", "files under .git are git's own"),
        ("certs/server.key", "refusing to patch certs/server.key: it matches the secret rule"),
        ("analysis.ipynb", "refusing to patch analysis.ipynb: a notebook is JSON"),
    ],
)
def test_paths_the_workspace_guards_are_refused_before_anything_is_written(
    ws: Workspace, path: str, expected: str
) -> None:
    before = snapshot(ws)
    patch = envelope(
        "*** Update File: src/app.py",
        "@@",
        "-    return 1",
        "+    return 2",
        f"*** Add File: {path}",
        "+data",
    )
    with pytest.raises(ToolError) as caught:
        apply_patch(ToolContext(workspace=ws), input=patch)
    assert expected in str(caught.value) and str(caught.value).startswith("apply_patch: ")
    assert snapshot(ws) == before
    assert not (ws.root.parent / "outside.txt").exists()


def test_a_notebook_is_refused_with_the_cell_tools_named(ws: Workspace) -> None:
    (ws.root / "a.ipynb").write_text("{}")
    with pytest.raises(ToolError, match=r"use the notebook tools \(edit_cell, insert_cell"):
        apply_patch(ToolContext(workspace=ws), input=envelope("*** Delete File: a.ipynb"))
    assert (ws.root / "a.ipynb").exists()


def test_adding_a_file_that_exists_or_two_names_for_one_file_are_refused(ws: Workspace) -> None:
    with pytest.raises(ToolError, match=r"src/app\.py already exists \(line 2\); change it with"):
        apply_patch(ToolContext(workspace=ws), input=envelope("*** Add File: src/app.py", "+x"))
    (ws.root / "link.py").symlink_to(ws.root / "src" / "util.py")
    patch = envelope(
        "*** Update File: link.py", "-X = 1", "+X = 2", "*** Update File: src/util.py", "-X = 1"
    )
    with pytest.raises(ToolError, match=r"src/util\.py and link\.py are the same file"):
        apply_patch(ToolContext(workspace=ws), input=patch)
    assert (ws.root / "src" / "util.py").read_text() == "X = 1\n"


async def test_through_a_tool_set_a_malformed_patch_is_an_error_result(ws: Workspace) -> None:
    tools = patch_tools(ws)
    (spec,) = tools.list_tools()
    assert spec.name == "apply_patch" and list(spec.parameters["properties"]) == ["input"]
    assert estimate_tokens(spec.description) <= 120
    output = await tools.call_tool("apply_patch", {"input": "*** Update File: a.py"})
    assert output.is_error
    assert output.content.startswith("apply_patch: line 1: the patch must start with")


# --- the codex family, in a turn --------------------------------------------------------------


class Approving:
    def __init__(self) -> None:
        self.asked: list[ApprovalNeeded] = []

    def answer(self, request: ApprovalNeeded) -> None:
        self.asked.append(request)
        request.approve()


def tool_names(body) -> list[str]:
    return [t.get("name") or t["function"]["name"] for t in body.get("tools", [])]


async def turn(serve, tmp_path, monkeypatch, model_name: str, steps):
    monkeypatch.chdir(tmp_path)
    server: ScriptedServer = serve(steps, model_name=model_name)
    session = CopilotSession(SimpleNamespace(user_ns={}), resolve=lambda spec: server.model())
    session.toolset_factories = session.toolset_factories[:1]  # files only: no kernel here
    approver = Approving()
    events = [event async for event in session.turn("change it", approver=approver)]
    return server, session, approver, events


async def test_a_codex_model_is_offered_apply_patch_and_its_patch_asks_and_undoes(
    serve, tmp_path, monkeypatch
) -> None:
    (tmp_path / "app.py").write_text("def run():\n    return 1\n")
    patch = envelope(
        "*** Update File: app.py",
        "@@ def run():",
        "-    return 1",
        "+    return 2",
        "*** Add File: Makefile",
        "+all:",
    )
    steps = [reply("", call("apply_patch", id="p1", input=patch)), reply("done")]
    server, session, approver, events = await turn(
        serve, tmp_path, monkeypatch, "gpt-5-codex", steps
    )
    assert isinstance(events[-1], Done) and events[-1].text == "done"
    names = tool_names(server.requests[0].body)
    assert "apply_patch" in names and "edit_file" in names

    (request,) = approver.asked
    assert request.name == "apply_patch" and request.category == "edit"
    assert request.arguments == {"input": patch}, "the whole patch is asked about"
    assert preview(request) == patch and arguments_preview(request.arguments)[0] == "diff"
    assert question(request) == "apply_patch wants to change files: app.py, Makefile"
    assert warning(request).startswith("Makefile ")

    assert (tmp_path / "app.py").read_text() == "def run():\n    return 2\n"
    result = server.requests[1].messages[-1]["content"]
    assert result.startswith("Success. Updated the following files:\nM app.py\nA Makefile")
    changed = [e.path for e in events if isinstance(e, FileChanged)]
    assert changed == ["app.py", "Makefile"]

    session.workspace().undo()
    assert (tmp_path / "app.py").read_text() == "def run():\n    return 1\n"
    assert not (tmp_path / "Makefile").exists()


@pytest.mark.parametrize("model_name", ["gpt-4o", "claude-sonnet-4", "scripted"])
async def test_other_families_are_not_offered_apply_patch(
    serve, tmp_path, monkeypatch, model_name: str
) -> None:
    server, session, *_ = await turn(serve, tmp_path, monkeypatch, model_name, [reply("hi")])
    names = tool_names(server.requests[0].body)
    assert "apply_patch" not in names and "edit_file" in names
    assert session.tools_for(session.workspace()).get("apply_patch") is None


async def test_an_ask_turn_of_a_codex_model_is_not_offered_apply_patch(
    serve, tmp_path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    server: ScriptedServer = serve([reply("an answer")], model_name="gpt-5.1-codex-mini")
    session = CopilotSession(SimpleNamespace(user_ns={}), resolve=lambda spec: server.model())
    session.toolset_factories = session.toolset_factories[:1]
    session.approvals = ApprovalPolicy()
    _ = [event async for event in session.turn("why?", approver=Approving(), mode="ask")]
    assert "apply_patch" not in tool_names(server.requests[0].body)


def test_the_codex_family_names_its_tool_and_the_others_have_none(tmp_path) -> None:
    assert "apply_patch" in CODEX.instructions
    assert [t.name for t in CODEX.own_tools(Workspace(tmp_path))] == ["apply_patch"]
    assert GPT.own_tools(Workspace(tmp_path)) == []


async def test_copilot_context_lists_the_familys_tools(tmp_path, monkeypatch) -> None:
    from copilot_nb.jupyter.commands import context as command
    from copilot_nb.testing import ScriptedModel

    monkeypatch.chdir(tmp_path)
    shown: list[str] = []
    monkeypatch.setattr("IPython.display.display", lambda item: shown.append(item.text))
    for spec, expected in (("openai:gpt-5-codex", "apply_patch"), ("openai:gpt-4o", "none")):
        session = CopilotSession(resolve=lambda spec: ScriptedModel(name=spec.split(":")[-1]))
        session.model_spec = spec
        await command.context(session)
        assert f"family tools: {expected}\n" in shown[-1]


def test_a_move_or_delete_the_workspace_refuses_is_this_tools_error(ws: Workspace) -> None:
    patch = envelope("*** Update File: src/util.py", "*** Move to: .git/hooks/pre-commit")
    with pytest.raises(ToolError, match=r"^apply_patch: .*\.git.*; nothing was changed$"):
        apply_patch(ToolContext(workspace=ws), input=patch)
    with pytest.raises(ToolError, match=r"'gone\.py' does not exist .* '\*\*\* Add File: gone"):
        apply_patch(ToolContext(workspace=ws), input=envelope("*** Update File: gone.py", "-a"))
    with pytest.raises(ToolError, match=r"'gone\.py' does not exist in the workspace; call list"):
        apply_patch(ToolContext(workspace=ws), input=envelope("*** Delete File: gone.py"))
    assert (ws.root / "src" / "util.py").exists()
