"""The review ledger on its own: a file the user undoes in review comes back from the turn's
checkpoint (both ends of a move), or is refused with why and nothing changes; the front end's
outcomes are read as data; each outcome is told to the model once. The kernel stories are in
test_live_review.py."""

from __future__ import annotations

import collections
import gc
from pathlib import Path

from copilot_nb.agent.approvals.policy import ApprovalPolicy, decide_call
from copilot_nb.agent.modes.review import edit_setting, resolved
from copilot_nb.jupyter.live_channel import LiveChannel
from copilot_nb.tools import file_tools
from copilot_nb.tools.context import ToolContext
from copilot_nb.tools.context_block import context_block
from copilot_nb.tools.review.ledger import REVIEW_TURN_KEY, ReviewBook
from copilot_nb.workspace.workspace import Workspace
from tests import policy_files


def reviewing(ws: Workspace) -> ReviewBook:
    book = ReviewBook()
    ws.begin_turn("tidy up")
    book.begin(True)
    return book


def listed(book: ReviewBook, ws: Workspace, path: str, diff: str) -> None:
    entry = book.list_file(path=path, diff=diff, checkpoints=ws.checkpoints, root=ws.root)
    assert entry is not None


def test_a_move_undone_in_review_puts_both_ends_back_and_leaves_the_rest_for_undo(
    tmp_path: Path,
) -> None:
    (tmp_path / "a.txt").write_text("a\n")
    (tmp_path / "b.txt").write_text("b\n")
    ws = Workspace(tmp_path)
    book = reviewing(ws)
    ws.move("a.txt", "archive/a.txt")
    listed(book, ws, "archive/a.txt", "rename from a.txt\nrename to archive/a.txt\n")
    ws.write_bytes("b.txt", b"B\n")
    listed(book, ws, "b.txt", "--- a/b.txt\n+++ b/b.txt\n")
    assert book.files[(book.turn, "archive/a.txt")].kind == "move"

    assert book.file_outcome(book.turn, "archive/a.txt", "undo") == (True, "")
    assert (tmp_path / "a.txt").read_text() == "a\n"
    assert not (tmp_path / "archive").exists(), "the folder the move made went with it"
    assert (tmp_path / "b.txt").read_text() == "B\n", "only what was undone"

    restored = ws.undo()  # %copilot undo of the turn: the rest of it
    assert [item.path for item in restored] == ["b.txt"]
    assert (tmp_path / "b.txt").read_text() == "b\n"


def test_an_undo_is_refused_with_why_when_the_file_changed_or_the_turn_was_undone(
    tmp_path: Path,
) -> None:
    (tmp_path / "notes.txt").write_text("old\n")
    ws = Workspace(tmp_path)
    book = reviewing(ws)
    ws.write_bytes("notes.txt", b"agent\n")
    ws.write_bytes("new.txt", b"new\n")
    listed(book, ws, "notes.txt", "--- a/notes.txt\n+++ b/notes.txt\n")
    listed(book, ws, "new.txt", "--- /dev/null\n+++ b/new.txt\n")
    assert book.files[(book.turn, "new.txt")].kind == "create"
    turn = book.turn

    (tmp_path / "notes.txt").write_text("agent\nmine\n")
    done, why = book.file_outcome(turn, "notes.txt", "undo")
    assert not done and "notes.txt changed since the agent wrote it" in why
    assert (tmp_path / "notes.txt").read_text() == "agent\nmine\n", "the user's line stays"

    ws.undo(force=True)
    done, why = book.file_outcome(turn, "new.txt", "undo")
    assert not done and "the turn was undone with %copilot undo" in why
    assert not (tmp_path / "new.txt").exists()
    refused = [o for o in book.unreported() if o.outcome == "refused"]
    assert [o.target for o in refused] == ["notes.txt", "new.txt"]


def test_a_file_too_big_to_keep_cannot_be_undone_in_review(tmp_path: Path) -> None:
    (tmp_path / "big.bin").write_bytes(b"x" * 64)
    ws = Workspace(tmp_path)
    ws.checkpoints.max_file_bytes = 16
    book = reviewing(ws)
    ws.write_bytes("big.bin", b"y" * 64)
    listed(book, ws, "big.bin", "Binary files differ\n")
    done, why = book.file_outcome(book.turn, "big.bin", "undo")
    assert not done and "too big to checkpoint" in why
    assert (tmp_path / "big.bin").read_bytes() == b"y" * 64


def test_keep_settles_a_file_and_a_second_answer_says_it_is_not_waiting(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    book = reviewing(ws)
    ws.write_bytes("kept.txt", b"k\n")
    listed(book, ws, "kept.txt", "--- /dev/null\n+++ b/kept.txt\n")
    assert book.file_outcome(book.turn, "kept.txt", "keep") == (True, "")
    done, why = book.file_outcome(book.turn, "kept.txt", "undo")
    assert not done and "not waiting for review" in why
    assert (tmp_path / "kept.txt").exists()
    assert book.file_outcome(book.turn, "kept.txt", "later")[0] is False


def test_outcomes_are_data_and_each_is_told_to_the_model_once() -> None:
    book = ReviewBook()
    good = {"turn": "t1", "cell_id": "c1", "kind": "edit", "outcome": "undone", "by": "button"}
    junk = [
        "text",
        {"turn": "t1", "cell_id": "c2", "outcome": "deleted"},
        {"turn": 3, "cell_id": "c3", "outcome": "kept"},
        {"turn": "t1", "cell_id": "", "outcome": "kept"},
        {"turn": "t1", "cell_id": "c4", "outcome": "refused", "why": 7},
    ]
    assert book.record({"event": "review", "outcomes": [good, *junk]}) == 2
    assert book.record({"event": "review", "outcomes": "not a list"}) == 0

    book.begin(False)
    told = book.unreported()
    assert [(o.target, o.outcome, o.why) for o in told] == [
        ("c1", "undone", ""),
        ("c4", "refused", ""),
    ]
    book.end()
    book.begin(False)
    assert book.unreported() == [], "told once"
    book.end()


def test_undo_changes_leave_out_cells_undone_in_review_and_never_send_the_turn_key() -> None:
    book = ReviewBook()
    book.record({"outcomes": [{"turn": "t1", "cell_id": "a", "outcome": "undone"}]})
    book.record({"outcomes": [{"turn": "t1", "cell_id": "b", "outcome": "kept"}]})
    changes = [
        {"kind": "set_source", "cell_id": "a", REVIEW_TURN_KEY: "t1"},
        {"kind": "set_source", "cell_id": "b", REVIEW_TURN_KEY: "t1"},
        {"kind": "insert", "cell": {"id": "a"}, REVIEW_TURN_KEY: "t2"},
        {"kind": "delete", "cell_id": "c"},
    ]
    assert book.skip_undone(changes) == [
        {"kind": "set_source", "cell_id": "b"},
        {"kind": "insert", "cell": {"id": "a"}},
        {"kind": "delete", "cell_id": "c"},
    ]


policy_file = policy_files.policy_file


class _EditTool:
    trust = None

    def category_for(self, arguments: object) -> str:
        return "edit"


def test_an_administrators_review_floor_is_met_by_a_reviewing_turn_and_asks_elsewhere(
    policy_file,
) -> None:
    policy_file({"approval_floors": {"edit": "review"}})
    allowed = ApprovalPolicy(edit="allow")
    assert edit_setting(allowed) == "review", "allow reviews under the floor"
    assert edit_setting(ApprovalPolicy(edit="ask")) == "ask", "stricter stays"
    assert resolved(allowed, None) == (ApprovalPolicy(edit="ask"), False), "no live notebook"
    reviewing = ApprovalPolicy(edit="allow", reviewing=True)
    assert decide_call(reviewing, "edit_cell", _EditTool(), {}) == ("edit", "allow")  # type: ignore[arg-type]
    assert decide_call(allowed, "edit_cell", _EditTool(), {}) == ("edit", "ask")  # type: ignore[arg-type]


def test_in_review_a_file_that_acts_later_still_asks_first(tmp_path: Path) -> None:
    """Applied before review, a Makefile or a CI workflow could run before the user looks."""
    tools = file_tools(Workspace(tmp_path))
    write, edit = tools.get("write_file"), tools.get("edit_file")
    reviewing = ApprovalPolicy(edit="allow", reviewing=True)
    for path in ("Makefile", ".github/workflows/ci.yml", "docs/AGENTS.md"):
        assert decide_call(reviewing, "write_file", write, {"path": path, "content": "x"}) == (
            "edit",
            "ask",
        ), path
    plain = {"path": "notes.txt", "old_str": "a", "new_str": "b"}
    assert decide_call(reviewing, "edit_file", edit, plain) == ("edit", "allow")
    ordinary = ApprovalPolicy(edit="allow")
    assert decide_call(ordinary, "write_file", write, {"path": "Makefile", "content": "x"}) == (
        "edit",
        "allow",
    ), "allow is the user's own choice, as before"


def test_a_listed_file_does_not_keep_a_forgotten_turns_bytes(tmp_path: Path) -> None:
    ws = Workspace(tmp_path)
    ws.checkpoints.turns = collections.deque(maxlen=1)
    book = reviewing(ws)
    ws.write_bytes("one.txt", b"1\n")
    listed(book, ws, "one.txt", "--- /dev/null\n+++ b/one.txt\n")
    first = book.turn
    ws.begin_turn("next")
    ws.write_bytes("two.txt", b"2\n")  # the first turn leaves the checkpoints
    gc.collect()
    assert book.files[(first, "one.txt")].checkpoint() is None, "its bytes are freed"
    done, why = book.file_outcome(first, "one.txt", "undo")
    assert not done and "older than the last 1 turns that are kept" in why
    assert (tmp_path / "one.txt").exists()


async def test_the_context_block_tells_undone_changes_first_within_its_share(
    tmp_path: Path,
) -> None:
    channel = LiveChannel(None)
    kept = [{"turn": "t1", "cell_id": f"kept{n:02}", "outcome": "kept"} for n in range(30)]
    undone = {"turn": "t1", "cell_id": "gone", "kind": "insert", "outcome": "undone"}
    channel.review.record({"outcomes": [*kept, undone]})
    channel.review.begin(False)
    block = await context_block(ToolContext(workspace=Workspace(tmp_path), live=channel))
    lines = block.splitlines()
    told = lines.index(
        "The user reviewed your earlier changes (do not redo an undone change unless asked):"
    )
    assert lines[told + 1] == "undone: cell gone (insert)"
    assert lines[told + 2] == "kept: cell kept00 (change)"
    assert any(line.startswith("(+") and line.endswith("more outcomes)") for line in lines)
    channel.review.end()
    assert "reviewed your earlier changes" not in await context_block(
        ToolContext(workspace=Workspace(tmp_path), live=channel)
    )


def test_a_deleted_folder_undone_in_review_comes_back_whole(tmp_path: Path) -> None:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "a.csv").write_text("x\n1\n")
    (tmp_path / "data" / "b.csv").write_text("x\n2\n")
    ws = Workspace(tmp_path)
    book = reviewing(ws)
    ws.delete("data", recursive=True)
    listed(book, ws, "data", "--- a/data\n+++ /dev/null\n")
    assert book.files[(book.turn, "data")].kind == "delete"
    assert book.file_outcome(book.turn, "data", "undo") == (True, "")
    assert (tmp_path / "data" / "a.csv").read_text() == "x\n1\n"
    assert (tmp_path / "data" / "b.csv").read_text() == "x\n2\n"
