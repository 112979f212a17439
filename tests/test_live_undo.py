"""`%copilot undo` after a live turn: the open notebook comes back exactly, also when the turn's
changes build on each other."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from copilot_nb.testing import call, reply
from tests.live_frontend import wait_until
from tests.live_story import copilot, saved_notebook

pytestmark = pytest.mark.kernel


def test_undo_after_a_live_turn_restores_the_open_notebook_exactly(
    serve, kernel_for, front_end, tmp_path: Path
) -> None:
    notebook = tmp_path / "undo.ipynb"
    title = nbformat.v4.new_markdown_cell("# Title", metadata={"tags": ["intro"]})
    ran = nbformat.v4.new_code_cell("b = 1\nb", metadata={"tags": ["keep"], "collapsed": False})
    ran.outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "1"}, execution_count=3)]
    ran.execution_count = 3
    before = saved_notebook(notebook, [title, ran, nbformat.v4.new_code_cell("c = 3")])
    on_disk = notebook.read_bytes()
    ids = [cell["id"] for cell in before]
    server = serve(
        [
            reply(
                "",
                call("insert_cell", id="i", after_cell_id=ids[0], cell_type="code", source="d"),
                call("edit_cell", id="e", cell_id=ids[1], old_str="b = 1", new_str="b = 2"),
                call("delete_cell", id="d", cell_id=ids[2]),
            ),
            reply("Changed three cells."),
        ]
    )
    kernel = kernel_for(server, JPY_SESSION_NAME=str(notebook))
    front = front_end(kernel, "undo.ipynb", before)
    copilot(kernel)
    assert front.sources() == ["# Title", "d", "b = 2\nb"]
    applied = len(front.requests("apply"))

    undo = kernel.execute("%copilot undo")
    assert undo.status == "ok", undo.reply["content"]
    (report,) = undo.final_displays("text/html").values()
    assert "3 cell changes taken back in the notebook open in JupyterLab" in report
    wait_until(lambda: len(front.requests("apply")) == applied + 1, what="the undo request")
    (request,) = front.requests("apply")[applied:]
    assert request["notify"] is True
    wait_until(lambda: front.sources() == ["# Title", "b = 1\nb", "c = 3"], what="the undo")
    with front.lock:
        assert front.cells == before
    assert notebook.read_bytes() == on_disk
    server.assert_complete()


UNDO_TROUBLE = {
    "one cell edited twice": (
        ["v = 1"],
        [
            call("edit_cell", id="a", cell_id="#1", old_str="1", new_str="2"),
            call("edit_cell", id="b", cell_id="#1", old_str="2", new_str="3"),
        ],
    ),
    "a new cell edited": (
        ["v = 1"],
        [
            call("insert_cell", id="a", after_cell_id="#1", cell_type="code", source="n = 1"),
            call("edit_cell", id="b", cell_id="#2", old_str="1", new_str="2"),
        ],
    ),
    "a cell edited, then deleted": (
        ["v = 1", "w = 1"],
        [
            call("edit_cell", id="a", cell_id="#1", old_str="1", new_str="2"),
            call("delete_cell", id="b", cell_id="#1"),
        ],
    ),
    "two adjacent cells deleted bottom-up": (
        ["a = 1", "b = 1", "c = 1"],
        [call("delete_cell", id="a", cell_id="#3"), call("delete_cell", id="b", cell_id="#2")],
    ),
}


@pytest.mark.parametrize("story", list(UNDO_TROUBLE))
def test_undo_of_changes_that_build_on_each_other_restores_the_open_notebook(
    serve, kernel_for, front_end, tmp_path: Path, story: str
) -> None:
    sources, calls = UNDO_TROUBLE[story]
    notebook = tmp_path / "steps.ipynb"
    before = saved_notebook(notebook, [nbformat.v4.new_code_cell(s) for s in sources])
    server = serve([*(reply("", one) for one in calls), reply("Done.")])
    kernel = kernel_for(server, JPY_SESSION_NAME=str(notebook))
    front = front_end(kernel, "steps.ipynb", before)
    copilot(kernel)
    answered = len(front.replies)
    assert kernel.execute("%copilot undo").status == "ok"
    wait_until(lambda: len(front.replies) > answered, what="the answer to the undo")
    assert front.replies[-1]["ok"], front.replies[-1]
    with front.lock:
        assert front.cells == before
