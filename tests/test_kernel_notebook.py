"""In a real kernel started for a notebook, `%%copilot` sees the live DataFrame and edits the .ipynb."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from copilot_nb.testing import ScriptedRequest, ScriptedTurn, call, reply
from tests.kernel_session import KernelSession, scripted_env

pytestmark = pytest.mark.kernel


def test_a_copilot_cell_reads_the_live_dataframe_and_adds_a_cell_to_the_notebook(
    serve, tmp_path: Path
) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("import pandas as pd"),
        nbformat.v4.new_code_cell("sales = pd.DataFrame(...)"),
    ]
    notebook = tmp_path / "analysis.ipynb"
    nbformat.write(nb, notebook)
    first_ids = [c.id for c in nb.cells]

    def insert_after_listing(request: ScriptedRequest) -> ScriptedTurn:
        """The model adds its cell after the last one list_cells showed."""
        listing = request.tool_results["l"]
        last_id = listing.splitlines()[-2].split("id=")[1].split()[0]
        return reply(
            "",
            call(
                "insert_cell",
                id="i",
                after_cell_id=last_id,
                cell_type="code",
                source="sales.groupby('region').units.sum()",
            ),
        )

    server = serve(
        [
            reply("", call("list_variables", id="v")),
            reply("", call("inspect_variable", id="d", name="sales")),
            reply("", call("list_cells", id="l")),
            insert_after_listing,
            reply("Added a cell that sums units by region."),
        ]
    )
    kernel = KernelSession(tmp_path, scripted_env(server, JPY_SESSION_NAME=str(notebook)))
    try:
        setup = kernel.execute(
            "import pandas as pd\n"
            "sales = pd.DataFrame({'region': ['north', 'south', None], 'units': [10, 25, 40]})\n"
            "%load_ext copilot_nb"
        )
        assert setup.status == "ok", setup.reply["content"]
        run = kernel.execute("%%copilot --yes\nAdd a cell that totals units by region.")
        assert run.status == "ok", run.reply["content"]
    finally:
        kernel.close()

    results = server.requests[-1].tool_results
    assert "sales" in results["v"] and "pandas.DataFrame" in results["v"]
    assert "(3, 2)" in results["v"]
    described = results["d"]
    assert described.startswith("sales: pandas.DataFrame, (3, 2), ")
    assert "region: " in described and "1 null" in described
    assert "units: int64, 0 null" in described
    assert "north" in described and "south" in described
    assert results["l"].startswith("analysis.ipynb: 2 cells (code 2)")
    assert results["i"].startswith("inserted cell ")
    assert "(#3) in analysis.ipynb" in results["i"]
    server.assert_complete()

    written = json.loads(notebook.read_text())
    cells = written["cells"]
    assert [c["id"] for c in cells[:2]] == first_ids
    new = cells[2]
    assert "".join(new["source"]) == "sales.groupby('region').units.sum()"
    assert new["outputs"] == [] and new["execution_count"] is None
    assert "trusted" not in new["metadata"]
    nbformat.validate(nbformat.reads(notebook.read_text(), as_version=4))
    (final,) = run.final_displays().values()
    assert "insert_cell" in final and "Added a cell" in final


def test_run_code_and_history_in_a_real_kernel(serve, tmp_path: Path) -> None:
    """A runaway loop is stopped and the kernel carries on; history shows the cell that failed."""
    server = serve(
        [
            reply("", call("get_history", id="h", n=5)),
            reply(
                "",
                call("run_code", id="loop", code="n = 0\nwhile True:\n    n += 1", timeout=0.5),
            ),
            reply("", call("run_code", id="after", code="print('still here'); n > 0")),
            reply("The loop was stopped."),
        ]
    )
    kernel = KernelSession(tmp_path, scripted_env(server))
    try:
        assert kernel.execute("%load_ext copilot_nb").status == "ok"
        assert kernel.execute("ratio = 10 / 4\nratio").status == "ok"
        assert kernel.execute("1 / 0").status == "error"
        run = kernel.execute("%%copilot --yes\nWhy did my cell fail? Then try a loop.")
        assert run.status == "ok", run.reply["content"]
        assert kernel.execute("assert n > 0").status == "ok", "the namespace kept what ran"
    finally:
        kernel.close()

    results = server.requests[-1].tool_results
    history = results["h"].splitlines()
    assert history[:4] == [
        "In [1]: %load_ext copilot_nb",
        "In [2]: ratio = 10 / 4",
        "    ratio",
        "Out[2]: 2.5",
    ]
    assert "In [3]: 1 / 0" in history
    assert not any("copilot" in line for line in history[4:]), "copilot cells are left out"
    assert "last error: ZeroDivisionError: division by zero" in history
    assert not any("\x1b" in line for line in history)
    assert results["loop"].startswith("timed out: stopped after 0.5 s")
    assert results["after"] == "stdout:\nstill here\nresult:\nTrue"
    server.assert_complete()


def test_denied_edits_are_reported_and_undo_restores_file_and_notebook_byte_for_byte(
    serve, tmp_path: Path
) -> None:
    notebook = tmp_path / "work.ipynb"
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Work"), nbformat.v4.new_code_cell("x = 1")]
    nbformat.write(nb, notebook)
    (tmp_path / "utils.py").write_text("def f():\n    return 1\n")
    notebook_before, utils_before = notebook.read_bytes(), (tmp_path / "utils.py").read_bytes()
    server = serve(
        [
            reply(
                "",
                call("edit_file", id="e", path="utils.py", old_str="return 1", new_str="return 2"),
                call("insert_cell", id="i", after_cell_id=None, cell_type="code", source="y = 2"),
            ),
            reply("Changed utils.py and added a cell."),
            reply("", call("delete_cell", id="d", cell_id="#2")),
            reply("I was not allowed to delete the cell, so I left it."),
        ]
    )
    kernel = KernelSession(tmp_path, scripted_env(server, JPY_SESSION_NAME=str(notebook)))
    try:
        assert kernel.execute("%load_ext copilot_nb").status == "ok"
        assert kernel.execute("%%copilot --yes\nbump f and add a cell").status == "ok"
        assert (tmp_path / "utils.py").read_text() == "def f():\n    return 2\n"
        assert len(nbformat.read(notebook, as_version=4).cells) == 3
        changed = notebook.read_bytes()

        denied = kernel.execute("%%copilot\ndelete the first cell")
        assert denied.status == "ok"
        (shown,) = denied.final_displays("text/html").values()
        assert "<div>✗ <strong>delete_cell</strong>" in shown and "not allowed" in shown
        assert notebook.read_bytes() == changed
        assert "denied" in server.requests[-1].tool_results["d"]

        diff = kernel.execute("%copilot diff")
        (report,) = diff.final_displays("text/html").values()
        assert (
            "<li><code>utils.py</code> +1 −1</li>" in report and ">+    return 2</span>" in report
        )
        undo = kernel.execute("%copilot undo")
        assert undo.status == "ok", undo.reply["content"]
        (report,) = undo.final_displays("text/html").values()
        assert "<li><code>utils.py</code> restored</li>" in report
    finally:
        kernel.close()
    assert (tmp_path / "utils.py").read_bytes() == utils_before
    assert notebook.read_bytes() == notebook_before
