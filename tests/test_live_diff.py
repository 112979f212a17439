"""`%copilot diff` shows the last turn's cell changes in an open notebook, not only its files."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from copilot_nb.jupyter.reports import render_diff
from copilot_nb.testing import call, reply
from copilot_nb.workspace.checkpoints import cell_diffs
from tests.live_story import copilot, saved_notebook


def test_cell_diffs_run_from_a_cells_first_source_to_its_last() -> None:
    undo = [
        ("n.ipynb", [{"kind": "delete", "cell_id": "new", "expected": "d = 4", "number": 2}]),
        (
            "n.ipynb",
            [
                {
                    "kind": "set_source",
                    "cell_id": "b",
                    "source": "b = 1\nb",
                    "expected": "b = 2\nb",
                    "number": 2,
                }
            ],
        ),
        (
            "n.ipynb",
            [
                {
                    "kind": "set_source",
                    "cell_id": "b",
                    "source": "b = 2\nb",
                    "expected": "b = 3\nb",
                    "number": 3,
                }
            ],
        ),
        (
            "n.ipynb",
            [{"kind": "insert", "after_id": "b", "cell": {"id": "c", "source": ["c", "=3"]}}],
        ),
        (
            "n.ipynb",
            [{"kind": "set_source", "cell_id": "x", "source": "same", "expected": "other"}],
        ),
        (
            "n.ipynb",
            [{"kind": "set_source", "cell_id": "x", "source": "other", "expected": "same"}],
        ),
    ]
    assert cell_diffs(undo) == [
        "--- /dev/null\n+++ b/n.ipynb, cell 2\n@@ -0,0 +1 @@\n+d = 4\n",
        "--- a/n.ipynb, cell 3\n+++ b/n.ipynb, cell 3\n@@ -1,2 +1,2 @@\n-b = 1\n+b = 3\n b\n",
        "--- a/n.ipynb, cell id c\n+++ /dev/null\n@@ -1 +0,0 @@\n-c=3\n",
    ]
    assert "has not changed a file or a cell" in render_diff("").text


@pytest.mark.kernel
def test_copilot_diff_after_a_live_turn_shows_each_changed_cell(
    serve, kernel_for, front_end, tmp_path: Path
) -> None:
    notebook = tmp_path / "diff.ipynb"
    cells = [
        nbformat.v4.new_markdown_cell("# Title"),
        nbformat.v4.new_code_cell("b = 1\nb"),
        nbformat.v4.new_code_cell("c = 3"),
    ]
    before = saved_notebook(notebook, cells)
    ids = [cell["id"] for cell in before]
    server = serve(
        [
            reply(
                "",
                call("insert_cell", after_cell_id=ids[0], cell_type="code", source="d = 4"),
                call("edit_cell", cell_id=ids[1], old_str="b = 1", new_str="b = 2"),
                call("delete_cell", cell_id=ids[2]),
            ),
            reply("Changed three cells."),
        ]
    )
    kernel = kernel_for(server, JPY_SESSION_NAME=str(notebook))
    front = front_end(kernel, "diff.ipynb", before)
    copilot(kernel, "change the cells")
    inserted = next(c["id"] for c in front.cells if c["source"] == "d = 4")

    run = kernel.execute("%copilot diff")
    assert run.status == "ok", run.reply["content"]
    (text,) = run.final_displays().values()
    assert text.startswith("Changes of the turn “change the cells”:")
    assert "- diff.ipynb, cell 2 +1 −0" in text  # numbered as the notebook showed each then
    assert "- diff.ipynb, cell 3 +1 −1" in text
    assert "- diff.ipynb, cell 4 +0 −1" in text
    assert "--- a/diff.ipynb, cell 3\n+++ b/diff.ipynb, cell 3\n" in text
    assert "-b = 1\n+b = 2\n b" in text
    assert "--- a/diff.ipynb, cell 4\n+++ /dev/null\n@@ -1 +0,0 @@\n-c = 3" in text
    assert inserted not in text and ids[1] not in text, "a cell is named by its number, not id"
