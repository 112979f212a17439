"""The live notebook in a real kernel: the agent reads and edits the notebook a front end has open.

A `%%copilot` cell runs in a real ipykernel; the front end is `live_frontend.LiveFrontEnd`, a
second kernel connection that speaks copilot_nb's comm protocol exactly as the JupyterLab
extension does. Its notebook is the user's open document, unsaved cells included; the file on
disk is what was last saved. Each story checks what the model was told, the open notebook, and
the file. run_cell and undo have their own files (test_live_run_cell, test_live_undo).
"""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import nbformat
import pytest

from copilot_nb.testing import ScriptedRequest, ScriptedTurn, call, reply
from tests.live_frontend import LiveFrontEnd
from tests.live_story import STAMP_AT, cell_id_of, copilot, saved_notebook

pytestmark = pytest.mark.kernel


def test_the_agent_sees_the_unsaved_cell_and_edits_the_open_notebook_never_the_file(
    serve, kernel_for, front_end, tmp_path: Path
) -> None:
    notebook = tmp_path / "sales.ipynb"
    saved = saved_notebook(
        notebook,
        [nbformat.v4.new_markdown_cell("# Sales"), nbformat.v4.new_code_cell("x = 1")],
    )
    on_disk = notebook.read_bytes()
    ran = {"output_type": "stream", "name": "stdout", "text": "1\n"}
    unsaved = nbformat.v4.new_code_cell("draft = 'unsaved'")
    open_cells = [saved[0], {**saved[1], "outputs": [ran], "execution_count": 1}, dict(unsaved)]
    ids: dict[str, str] = {}

    def insert_and_edit(request: ScriptedRequest) -> ScriptedTurn:
        listing = request.tool_results["l"]
        ids.update(
            title=cell_id_of(listing, "# Sales"),
            x=cell_id_of(listing, "x = 1"),
            draft=cell_id_of(listing, "draft = 'unsaved'"),
        )
        return reply(
            "",
            call("insert_cell", id="i", after_cell_id=ids["draft"], cell_type="code", source="y"),
            call("edit_cell", id="e", cell_id=ids["x"], old_str="x = 1", new_str="x = 2"),
        )

    def replace_and_delete(request: ScriptedRequest) -> ScriptedTurn:
        return reply(
            "",
            call("replace_cell", id="r", cell_id=ids["title"], source="# Sales report"),
            call("delete_cell", id="d", cell_id=ids["draft"]),
        )

    server = serve(
        [
            reply("", call("list_cells", id="l")),
            insert_and_edit,
            replace_and_delete,
            reply("Done."),
        ]
    )
    kernel = kernel_for(server, JPY_SESSION_NAME=str(notebook))
    front = front_end(kernel, "sales.ipynb", open_cells)
    copilot(kernel)

    results = server.requests[-1].tool_results
    listing = results["l"]
    assert listing.startswith("sales.ipynb: 3 cells (code 2, markdown 1)")
    assert f"#3 code [ ] id={ids['draft']} | draft = 'unsaved'" in listing
    assert listing.endswith("(live: open in JupyterLab, unsaved changes included)")
    for key, change in [("i", "inserted"), ("e", "edited"), ("r", "replaced"), ("d", "deleted")]:
        assert results[key].startswith(change), results[key]
        assert "live: open in JupyterLab" in results[key], results[key]
    assert front.sources() == ["# Sales report", "x = 2", "y"]
    title, x, y = (front.cell(i) for i in range(3))
    assert x["id"] == ids["x"] and x["outputs"] == [] and x["execution_count"] is None
    for cell, change in [(title, "replaced"), (x, "edited"), (y, "inserted")]:
        stamp = cell["metadata"]["copilot_nb"]
        assert stamp["change"] == change and stamp["model"] == "scripted"
        assert STAMP_AT.match(stamp["at"]), stamp
    assert notebook.read_bytes() == on_disk, "the file is the user's to save"
    server.assert_complete()


def test_a_cell_the_user_changed_after_the_agent_read_it_is_not_overwritten(
    serve, kernel_for, front_end, tmp_path: Path
) -> None:
    """Changed before the edit reads the notebook again (the kernel refuses it), and between
    that read and the change arriving (the front end refuses it)."""
    notebook = tmp_path / "work.ipynb"
    cells = saved_notebook(
        notebook, [nbformat.v4.new_code_cell("total = 1"), nbformat.v4.new_code_cell("rate = 1")]
    )
    front: dict[str, LiveFrontEnd] = {}

    def user_types_then_edit(request: ScriptedRequest) -> ScriptedTurn:
        with front["nb"].lock:
            front["nb"].cells[0]["source"] = "total = 7  # mine"
        return reply("", call("edit_cell", id="e1", cell_id="#1", old_str="1", new_str="2"))

    def user_types_while_it_arrives(request: ScriptedRequest) -> ScriptedTurn:
        def typing(data: dict[str, Any]) -> None:
            if data.get("op") == "apply":
                front["nb"].cells[1]["source"] = "rate = 5  # mine"

        front["nb"].before_answer = typing
        return reply("", call("edit_cell", id="e2", cell_id="#2", old_str="1", new_str="2"))

    server = serve(
        [
            reply("", call("list_cells", id="l")),
            user_types_then_edit,
            user_types_while_it_arrives,
            reply("You changed those cells; I left them."),
        ]
    )
    kernel = kernel_for(server, JPY_SESSION_NAME=str(notebook))
    front["nb"] = front_end(kernel, "work.ipynb", cells)
    copilot(kernel)

    results = server.requests[-1].tool_results
    assert "since you read it" in results["e1"] and "nothing was changed" in results["e1"]
    assert "since you read it" in results["e2"] and "nothing was changed" in results["e2"]
    assert front["nb"].sources() == ["total = 7  # mine", "rate = 5  # mine"]
    assert len(front["nb"].requests("apply")) == 1, "the kernel refused the first itself"
    server.assert_complete()


def test_without_a_jupyter_server_the_tools_use_the_file_at_once(
    serve, kernel_for, tmp_path: Path
) -> None:
    notebook = tmp_path / "plain.ipynb"
    saved_notebook(notebook, [nbformat.v4.new_code_cell("a = 1")])
    server = serve(
        [
            reply(
                "",
                call("list_cells", id="l", notebook="plain.ipynb"),
                call(
                    "insert_cell",
                    id="i",
                    notebook="plain.ipynb",
                    after_cell_id="#1",
                    cell_type="code",
                    source="b = 2",
                ),
            ),
            reply("Added."),
        ]
    )
    kernel = kernel_for(server)
    copilot(kernel)

    results = server.requests[-1].tool_results
    assert results["l"].endswith("(file on disk)")
    assert results["i"].startswith("inserted cell ") and "(file on disk)" in results["i"]
    assert [c.source for c in nbformat.read(notebook, 4).cells] == ["a = 1", "b = 2"]


def test_with_a_jupyter_server_but_no_front_end_the_first_edit_says_how_to_get_live_editing(
    serve, kernel_for, tmp_path: Path
) -> None:
    notebook = tmp_path / "served.ipynb"
    saved_notebook(notebook, [nbformat.v4.new_code_cell("a = 1")])
    server = serve(
        [
            reply(
                "",
                call("list_cells", id="l"),
                call("insert_cell", id="i1", after_cell_id="#1", cell_type="code", source="b"),
                call("insert_cell", id="i2", after_cell_id="#2", cell_type="code", source="c"),
            ),
            reply("Added two cells to the file."),
        ]
    )
    kernel = kernel_for(server, JPY_SESSION_NAME=str(notebook))
    copilot(kernel)

    results = server.requests[-1].tool_results
    assert results["l"].endswith("(file on disk: no open notebook answered)")
    assert "Reload Notebook from Disk" in results["i1"]
    assert "Reload Notebook from Disk" not in results["i2"]
    assert "(file on disk: no open notebook answered)" in results["i2"]
    assert [c.source for c in nbformat.read(notebook, 4).cells] == ["a = 1", "b", "c"]


def test_two_notebooks_on_one_kernel_each_call_lands_in_the_notebook_it_names(
    serve, kernel_for, front_end, tmp_path: Path
) -> None:
    """The kernel was started for other.ipynb; the cell runs in mine.ipynb, on another
    connection: a call without `notebook=` means the notebook that sent the cell."""
    mine, other = tmp_path / "mine.ipynb", tmp_path / "other.ipynb"
    mine_cells = saved_notebook(mine, [nbformat.v4.new_code_cell("mine = 1")])
    other_cells = saved_notebook(other, [nbformat.v4.new_code_cell("other = 1")])
    files = mine.read_bytes(), other.read_bytes()
    server = serve(
        [
            reply(
                "",
                call("list_cells", id="l"),
                call("insert_cell", id="m", after_cell_id="#1", cell_type="code", source="m2"),
                call(
                    "insert_cell",
                    id="o",
                    notebook="other.ipynb",
                    after_cell_id="#1",
                    cell_type="code",
                    source="o2",
                ),
                call("list_cells", id="lo", notebook="other.ipynb"),
            ),
            reply("One cell in each."),
        ]
    )
    kernel = kernel_for(server, JPY_SESSION_NAME=str(other))
    theirs = front_end(kernel, "other.ipynb", other_cells, client=uuid.uuid4().hex)
    ours = front_end(kernel, "mine.ipynb", mine_cells)
    copilot(kernel)

    results = server.requests[-1].tool_results
    assert results["l"].startswith("mine.ipynb: 1 cells")
    assert "in mine.ipynb" in results["m"] and "in other.ipynb" in results["o"]
    assert results["lo"].startswith("other.ipynb: 2 cells") and "| o2" in results["lo"]
    assert ours.sources() == ["mine = 1", "m2"]
    assert theirs.sources() == ["other = 1", "o2"]
    assert (mine.read_bytes(), other.read_bytes()) == files


def test_unloading_the_extension_closes_the_channel_and_the_tools_use_the_file(
    serve, kernel_for, front_end, tmp_path: Path
) -> None:
    notebook = tmp_path / "gone.ipynb"
    cells = saved_notebook(notebook, [nbformat.v4.new_code_cell("a = 1")])
    server = serve(
        [
            reply(
                "",
                call("list_cells", id="l"),
                call("insert_cell", id="i", after_cell_id="#1", cell_type="code", source="b"),
            ),
            reply("Added to the file."),
        ]
    )
    kernel = kernel_for(server, JPY_SESSION_NAME=str(notebook))
    front = front_end(kernel, "gone.ipynb", cells)
    assert kernel.execute("%unload_ext copilot_nb").status == "ok"
    assert front.wait_closed(), "the front end's comm was closed"
    copilot(kernel)

    results = server.requests[-1].tool_results
    assert "file on disk" in results["l"] and "file on disk" in results["i"]
    assert front.received == [], "nothing was asked of the closed notebook"
    assert front.sources() == ["a = 1"]
    assert [c.source for c in nbformat.read(notebook, 4).cells] == ["a = 1", "b"]


def test_a_front_end_that_does_not_answer_is_reported_and_the_next_call_works(
    serve, kernel_for, front_end, tmp_path: Path
) -> None:
    notebook = tmp_path / "slow.ipynb"
    cells = saved_notebook(notebook, [nbformat.v4.new_code_cell("a = 1")])
    server = serve(
        [
            reply("", call("list_cells", id="silent")),
            reply("", call("list_cells", id="again")),
            reply("It answers again."),
        ]
    )
    kernel = kernel_for(server, JPY_SESSION_NAME=str(notebook))
    # The kernel's own setting, as a user could set it: a test waits 0.5 s, not 10.
    shorter = kernel.execute("import copilot_nb.jupyter.live_view as v; v.REQUEST_TIMEOUT = 0.5")
    assert shorter.status == "ok"
    front = front_end(kernel, "slow.ipynb", cells)
    front.ignore_next = 2  # the turn's context block asks first, then the model's list_cells
    copilot(kernel)

    results = server.requests[-1].tool_results
    assert "the open notebook slow.ipynb did not answer within 0.5 s" in results["silent"]
    assert "nothing was changed" in results["silent"]
    assert results["again"].startswith("slow.ipynb: 1 cells")
    assert "live: open in JupyterLab" in results["again"]
    assert len(front.requests("snapshot")) == 3
    first = server.requests[0].messages[-1]["content"]
    assert "Notebook slow.ipynb" not in first, "the block left out what the page did not answer"
