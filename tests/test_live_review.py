"""Review mode in a real kernel: the agent's changes apply at once to the open notebook and wait
there for the user's Keep or Undo; the next turn hears what the user chose.

The front end is `live_frontend.LiveFrontEnd`, the stand-in that speaks the extension's comm
protocol; its `review_cell` and `undo_deleted` do what the extension's Keep and Undo do (put back
`before`'s source, then tell the kernel). No cell here passes `--yes`: review is the default.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest

from copilot_nb.testing import ScriptedRequest, ScriptedTurn, call, reply
from tests.kernel_session import KernelSession
from tests.live_frontend import LiveFrontEnd, wait_until
from tests.live_story import outcomes_recorded, saved_notebook

pytestmark = pytest.mark.kernel

LET_IT_RUN = '%config CopilotMagics.approve_execute = "allow"'


def ask(kernel: KernelSession, prompt: str = "do it") -> Any:
    """A plain `%%copilot` cell (no --yes), which must end without anyone answering."""
    run = kernel.execute(f"%%copilot\n{prompt}")
    assert run.status == "ok", run.reply["content"]
    return run


def told(request: ScriptedRequest) -> str:
    """The text of the request's latest user message: the context block and the prompt."""
    users = [m for m in request.messages if m.get("role") == "user"]
    content = users[-1]["content"]
    return content if isinstance(content, str) else "".join(p.get("text", "") for p in content)


def test_review_applies_at_once_and_each_cell_keeps_what_it_was_before_the_agent_touched_it(
    serve, kernel_for, front_end, tmp_path: Path
) -> None:
    notebook = tmp_path / "review.ipynb"
    ran = nbformat.v4.new_output("stream", name="stdout", text="1\n")
    x = nbformat.v4.new_code_cell("x = 1", metadata={"tags": ["mine"]})
    x.outputs, x.execution_count = [ran], 4
    cells = saved_notebook(notebook, [x, nbformat.v4.new_code_cell("draft = 0")])
    x_id, draft_id = cells[0]["id"], cells[1]["id"]
    on_disk = notebook.read_bytes()
    ids: dict[str, str] = {}

    def run_new(request: ScriptedRequest) -> ScriptedTurn:
        ids["y"] = request.tool_results["i"].split()[2]
        return reply("", call("run_cell", id="r", cell_id=ids["y"]))

    server = serve(
        [
            reply(
                "",
                call("edit_cell", id="e1", cell_id=x_id, old_str="x = 1", new_str="x = 2"),
                call("edit_cell", id="e2", cell_id=x_id, old_str="x = 2", new_str="x = 3"),
                call(
                    "insert_cell", id="i", after_cell_id=x_id, cell_type="code", source="y = 5\ny"
                ),
            ),
            run_new,
            reply("", call("delete_cell", id="d", cell_id=draft_id)),
            reply("Changed x, added y, removed the draft."),
            reply("", call("edit_cell", id="e3", cell_id=x_id, old_str="x = 3", new_str="x = 4")),
            reply("Changed x again."),
        ]
    )
    kernel = kernel_for(server, JPY_SESSION_NAME=str(notebook))
    assert kernel.execute(LET_IT_RUN).status == "ok"
    front = front_end(kernel, "review.ipynb", cells)
    ask(kernel)

    assert front.sources() == ["x = 3", "y = 5\ny"]
    first = front.cell(0)["metadata"]["copilot_nb"]["review"]
    assert first["kind"] == "edit" and first["ran"] is False
    assert first["before"] == {
        "id": x_id,
        "cell_type": "code",
        "source": "x = 1",
        "metadata": {"tags": ["mine"]},
        "outputs": [dict(ran)],
        "execution_count": 4,
    }, "the cell exactly as the user had it, before the first of two edits"
    new = front.cell(1)["metadata"]["copilot_nb"]
    assert new["change"] == "ran" and new["review"]["kind"] == "insert"
    assert new["review"]["before"] is None and new["review"]["ran"] is True
    assert new["review"]["turn"] == first["turn"]
    assert front.cell(1)["outputs"], "run_cell put its outputs in the new cell"
    (gone,) = front.review_of("review_deleted")
    assert gone["turn"] == first["turn"] and gone["after_id"] == ids["y"]
    assert gone["before"]["id"] == draft_id and gone["before"]["source"] == "draft = 0"
    assert notebook.read_bytes() == on_disk, "the file is the user's to save"

    ask(kernel, "again")
    again = front.cell(0)["metadata"]["copilot_nb"]["review"]
    assert again["turn"] != first["turn"], "the latest turn that changed it"
    assert again["before"] == first["before"], "still the first before"
    assert front.sources() == ["x = 4", "y = 5\ny"]
    server.assert_complete()


def test_what_the_user_kept_and_undid_reaches_the_next_turn_and_undo_agrees(
    serve, kernel_for, front_end, tmp_path: Path
) -> None:
    notebook = tmp_path / "told.ipynb"
    cells = saved_notebook(notebook, [nbformat.v4.new_code_cell(f"{n} = 1") for n in "abd"])
    a, b, d = (cell["id"] for cell in cells)
    server = serve(
        [
            reply(
                "",
                call("edit_cell", id="ea", cell_id=a, old_str="a = 1", new_str="a = 2"),
                call("edit_cell", id="eb", cell_id=b, old_str="b = 1", new_str="b = 2"),
                call("insert_cell", id="i", after_cell_id=b, cell_type="code", source="c = 1"),
                call("edit_cell", id="ed", cell_id=d, old_str="d = 1", new_str="d = 2"),
            ),
            reply("Changed a, b and d and added c."),
            reply("Understood."),
        ]
    )
    kernel = kernel_for(server, JPY_SESSION_NAME=str(notebook))
    front = front_end(kernel, "told.ipynb", cells)
    assert "edits review: applied at once" in kernel.execute("%copilot").stdout
    ask(kernel)
    assert front.sources() == ["a = 2", "b = 2", "c = 1", "d = 2"]
    c = front.cell(2)["id"]
    turn = front.cell(3)["metadata"]["copilot_nb"]["review"]["turn"]

    front.review_cell(a, "undone")
    front.review_cell(b, "kept", by="typing")
    front.review_cell(c, "undone")
    why = "the cell changed since; <b>nothing</b> was undone"
    refused = {"turn": turn, "cell_id": d, "kind": "edit", "outcome": "refused", "why": why}
    front.send_event({"event": "review", "outcomes": [refused, {"cell_id": 7}, "junk"]})
    wait_until(lambda: outcomes_recorded(kernel) == 4, what="the four outcomes recorded")
    assert front.sources() == ["a = 1", "b = 2", "d = 2"]

    ask(kernel, "what now?")
    block = told(server.requests[-1])
    assert "The user reviewed your earlier changes" in block
    assert f"undone: cell {a} (edit)" in block
    assert f"kept: cell {b} (edit)" in block
    assert f"undone: cell {c} (insert)" in block
    assert f"undo refused: cell {d} (edit): {why}" in block
    assert "reviewed your earlier changes" not in told(server.requests[0])

    applied = len(front.requests("apply"))
    undo = kernel.execute("%copilot undo")
    assert undo.status == "ok", undo.reply["content"]
    wait_until(lambda: len(front.requests("apply")) == applied + 1, what="the undo request")
    (request,) = front.requests("apply")[applied:]
    assert sorted(change["cell_id"] for change in request["changes"]) == sorted([b, d])
    assert all("review_turn" not in change for change in request["changes"])
    wait_until(lambda: front.replies[-1]["id"] == request["id"], what="the undo's answer")
    assert front.replies[-1]["ok"], front.replies[-1]
    assert front.sources() == ["a = 1", "b = 1", "d = 1"], "the kept cell too, as asked"
    server.assert_complete()


def test_file_edits_are_listed_for_review_and_undone_from_the_checkpoint_unless_changed_since(
    serve, kernel_for, front_end, tmp_path: Path
) -> None:
    notebook = tmp_path / "files.ipynb"
    cells = saved_notebook(notebook, [nbformat.v4.new_code_cell("import hello")])
    (tmp_path / "hello.py").write_text('GREETING = "hi"\nNAME = "you"\n')
    server = serve(
        [
            reply(
                "",
                call("edit_file", id="e1", path="hello.py", old_str='"hi"', new_str='"hello"'),
                call("edit_file", id="e2", path="hello.py", old_str='"you"', new_str='"world"'),
                call("write_file", id="w", path="notes.txt", content="agent notes\n"),
            ),
            reply("Edited hello.py and wrote notes.txt."),
            reply("Noted."),
        ]
    )
    kernel = kernel_for(server, JPY_SESSION_NAME=str(notebook))
    front = front_end(kernel, "files.ipynb", cells)
    ask(kernel)
    assert (tmp_path / "hello.py").read_text() == 'GREETING = "hello"\nNAME = "world"\n'

    listed = {entry["path"]: entry for entry in front.review_of("review_files")}
    assert sorted(listed) == ["hello.py", "notes.txt"]
    assert listed["hello.py"]["kind"] == "edit" and listed["notes.txt"]["kind"] == "create"
    assert '+GREETING = "hello"' in listed["hello.py"]["diff"]
    assert '+NAME = "world"' in listed["hello.py"]["diff"], "both edits of one turn"
    turn = listed["hello.py"]["turn"]

    (tmp_path / "notes.txt").write_text("agent notes\nand mine\n")  # the user added a line
    front.send_event(
        {"event": "review_file", "id": 1, "turn": turn, "path": "notes.txt", "outcome": "undo"}
    )
    front.send_event(
        {"event": "review_file", "id": 2, "turn": turn, "path": "hello.py", "outcome": "undo"}
    )
    front.send_event(
        {"event": "review_file", "id": 3, "turn": turn, "path": "nope.py", "outcome": "undo"}
    )
    wait_until(lambda: len(front.events) == 3, what="three answers")
    answers = {event["id"]: event for event in front.events}
    assert all(event["event"] == "review_file_result" for event in front.events)
    assert answers[1]["ok"] is False and "notes.txt changed since" in answers[1]["why"]
    assert answers[2] == {"event": "review_file_result", "id": 2, "ok": True}
    assert answers[3]["ok"] is False and "not waiting for review" in answers[3]["why"]
    assert (tmp_path / "hello.py").read_text() == 'GREETING = "hi"\nNAME = "you"\n'
    assert (tmp_path / "notes.txt").read_text() == "agent notes\nand mine\n", "the user's line"

    ask(kernel, "and now?")
    block = told(server.requests[-1])
    assert "undone: file hello.py (edit)" in block
    assert "undo refused: file notes.txt (create): notes.txt changed since" in block
    server.assert_complete()


def test_without_a_live_notebook_review_asks_instead_and_says_so_once(
    serve, kernel_for, tmp_path: Path
) -> None:
    notebook = tmp_path / "closed.ipynb"
    saved_notebook(notebook, [nbformat.v4.new_code_cell("a = 1")])
    server = serve(
        [
            reply("", call("write_file", id="w1", path="a.txt", content="a\n")),
            reply("Could not write it."),
            reply("", call("write_file", id="w2", path="b.txt", content="b\n")),
            reply("Could not write that either."),
        ]
    )
    kernel = kernel_for(server, JPY_SESSION_NAME=str(notebook))  # declines, as JupyterLab does
    first = "".join(ask(kernel).final_displays().values())
    assert "Review mode needs copilot_nb's extension in the environment Jupyter runs" in first
    assert "edits ask first in this turn" in first
    assert "nobody could be asked" in server.requests[1].tool_results["w1"]
    assert not (tmp_path / "a.txt").exists()
    second = "".join(ask(kernel, "again").final_displays().values())
    assert "Review mode needs" not in second, "said once"
    assert not (tmp_path / "b.txt").exists()
    assert "copilot: edits review, which asks here" in kernel.execute("%copilot").stdout
    server.assert_complete()


def test_with_yes_a_change_is_approved_without_review(
    serve, kernel_for, front_end, tmp_path: Path
) -> None:
    """`--yes` approves without review: the cell carries its stamp only, as before."""
    notebook = tmp_path / "yes.ipynb"
    cells = saved_notebook(notebook, [nbformat.v4.new_code_cell("v = 1")])
    server = serve(
        [
            reply("", call("edit_cell", id="e", cell_id=cells[0]["id"], old_str="1", new_str="2")),
            reply("Done."),
        ]
    )
    kernel = kernel_for(server, JPY_SESSION_NAME=str(notebook))
    front: LiveFrontEnd = front_end(kernel, "yes.ipynb", cells)
    assert kernel.execute("%%copilot --yes\nbump it").status == "ok"
    assert front.sources() == ["v = 2"]
    assert "review" not in front.cell(0)["metadata"]["copilot_nb"]
    server.assert_complete()


def test_a_review_cell_reviews_where_the_setting_asks(
    serve, kernel_for, front_end, tmp_path: Path
) -> None:
    notebook = tmp_path / "cell.ipynb"
    cells = saved_notebook(notebook, [nbformat.v4.new_code_cell("w = 1")])
    server = serve(
        [
            reply("", call("edit_cell", id="e", cell_id=cells[0]["id"], old_str="1", new_str="2")),
            reply("Done."),
        ]
    )
    kernel = kernel_for(server, JPY_SESSION_NAME=str(notebook))
    front = front_end(kernel, "cell.ipynb", cells)
    assert kernel.execute('%config CopilotMagics.approve_edit = "ask"').status == "ok"
    both = kernel.execute("%%copilot --yes --review\nbump it")
    assert both.status == "error" and "contradict each other" in both.reply["content"]["evalue"]
    assert kernel.execute("%%copilot --review\nbump it").status == "ok"
    assert front.sources() == ["w = 2"]
    assert front.cell(0)["metadata"]["copilot_nb"]["review"]["before"]["source"] == "w = 1"
    assert "copilot: edits ask" in kernel.execute("%copilot").stdout, "the setting stays"
    server.assert_complete()


def test_a_notebook_changed_on_disk_in_a_review_turn_is_listed_as_a_file(
    serve, kernel_for, front_end, tmp_path: Path
) -> None:
    """The open notebook's cells review in place; another notebook, changed in its file, is a
    file to review like any other."""
    notebook = tmp_path / "open.ipynb"
    cells = saved_notebook(notebook, [nbformat.v4.new_code_cell("o = 1")])
    other = tmp_path / "other.ipynb"
    saved_notebook(other, [nbformat.v4.new_code_cell("p = 1")])
    other_bytes = other.read_bytes()
    insert = call(
        "insert_cell",
        id="i",
        notebook="other.ipynb",
        after_cell_id="#1",
        cell_type="code",
        source="q = 2",
    )
    edit = call("edit_cell", id="e", cell_id=cells[0]["id"], old_str="1", new_str="2")
    server = serve(
        [
            reply("", call("list_cells", id="l", notebook="other.ipynb"), insert, edit),
            reply("Done."),
        ]
    )
    kernel = kernel_for(server, JPY_SESSION_NAME=str(notebook))
    front = front_end(kernel, "open.ipynb", cells)
    ask(kernel)
    assert [c.source for c in nbformat.read(other, 4).cells] == ["p = 1", "q = 2"]
    (listed,) = front.review_of("review_files")
    assert (listed["path"], listed["kind"]) == ("other.ipynb", "edit")
    assert "+q = 2" in listed["diff"]
    event = {"event": "review_file", "id": 9, "turn": listed["turn"], "path": "other.ipynb"}
    front.send_event({**event, "outcome": "undo"})
    wait_until(lambda: front.events, what="the answer")
    assert front.events[-1]["ok"] is True
    assert other.read_bytes() == other_bytes
    assert front.sources() == ["o = 2"], "the open notebook's cell waits in place"
    server.assert_complete()


def test_where_no_front_end_answers_the_hello_review_waits_then_asks(
    serve, kernel_for, tmp_path: Path
) -> None:
    """A client that handles no comms neither attaches nor declines: the turn waits for a page
    (a busy one may be coming), then asks, and says a page with the extension could review."""
    notebook = tmp_path / "closed.ipynb"
    saved_notebook(notebook, [nbformat.v4.new_code_cell("a = 1")])
    server = serve(
        [
            reply("", call("write_file", id="w1", path="a.txt", content="a\n")),
            reply("Could not write it."),
        ]
    )
    kernel = kernel_for(server, answers_hello=False, JPY_SESSION_NAME=str(notebook))
    first = "".join(ask(kernel).final_displays().values())
    assert "Review mode needs the notebook open in JupyterLab or Notebook 7" in first
    assert not (tmp_path / "a.txt").exists()
    server.assert_complete()
