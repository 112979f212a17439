"""The notebook tools that change cells: edit, replace, insert, delete; and never clobbering a
notebook that changed on disk since it was read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest

from copilot_nb.events import CellChanged
from copilot_nb.tools import ToolSet
from copilot_nb.tools.notebook.cells import notebook_tools
from copilot_nb.workspace.workspace import Workspace
from tests.helpers import call
from tests.notebook_samples import on_disk, raw, sample_tools


@pytest.fixture
def tools(ws: Workspace) -> ToolSet:
    """The notebook tools, in a kernel whose notebook is analysis.ipynb."""
    return sample_tools(ws)


# --- editing ----------------------------------------------------------------------------------


async def test_edit_cell_replaces_text_once_and_returns_id_index_and_diff(
    tools: ToolSet, cells: list[Any], nb_path: Path
) -> None:
    out = await call(
        tools, "edit_cell", cell_id=cells[1].id, old_str="df.head()", new_str="df.describe()"
    )
    assert not out.is_error, out.content
    assert out.content == (
        f"edited cell {cells[1].id} (#2) in analysis.ipynb (file on disk):\n"
        f"--- a/analysis.ipynb#{cells[1].id}\n"
        f"+++ b/analysis.ipynb#{cells[1].id}\n"
        "@@ -1,3 +1,3 @@\n"
        " import pandas as pd\n"
        " df = pd.read_csv('sales.csv')\n"
        "-df.head()\n"
        "+df.describe()"
    )
    assert out.summary == "analysis.ipynb #2 edited +1 −1"
    (change,) = out.changes
    assert isinstance(change, CellChanged)
    assert (change.notebook, change.cell_id, change.change) == (
        "analysis.ipynb",
        cells[1].id,
        "edited",
    )
    assert "+df.describe()" in change.diff
    now = on_disk(nb_path)
    assert now[1].source.endswith("df.describe()")
    assert now[1].outputs == [] and now[1].execution_count is None
    assert "trusted" not in now[1].metadata
    assert now[2].outputs == cells[2].outputs, "other cells keep their outputs"


async def test_edit_cell_refuses_ambiguous_and_missing_text_and_leaves_the_file(
    tools: ToolSet, cells: list[Any], nb_path: Path
) -> None:
    before = raw(nb_path)
    out = await call(tools, "edit_cell", cell_id="#4", old_str="= 1", new_str="= 2")
    assert out.is_error
    assert out.content == (
        f"edit_cell: old_str appears 2 times in cell {cells[3].id} (#4) of analysis.ipynb "
        "(lines 1, 2); include more surrounding lines so it matches once"
    )
    out = await call(tools, "edit_cell", cell_id="#4", old_str="fail(y)", new_str="ok(y)")
    assert out.content == (
        f"edit_cell: old_str was not found in cell {cells[3].id} (#4) of analysis.ipynb; "
        "call read_cell to see its current source and copy old_str exactly, including "
        "whitespace and indentation"
    )
    out = await call(tools, "edit_cell", cell_id="#4", old_str="y  =  1", new_str="y = 2")
    assert "differs only in whitespace is at line 2" in out.content
    out = await call(tools, "edit_cell", cell_id="#4", old_str="", new_str="z")
    assert "old_str is empty" in out.content
    assert raw(nb_path) == before


async def test_replace_cell_rewrites_the_source_and_keeps_the_type(
    tools: ToolSet, cells: list[Any], nb_path: Path
) -> None:
    out = await call(tools, "replace_cell", cell_id="#1", source="# Sales 2024")
    assert not out.is_error
    assert f"replaced cell {cells[0].id} (#1)" in out.content
    assert "-# Sales\n-Quarterly numbers.\n+# Sales 2024" in out.content
    now = on_disk(nb_path)
    assert (now[0].cell_type, now[0].source, now[0].id) == ("markdown", "# Sales 2024", cells[0].id)
    same = await call(tools, "replace_cell", cell_id="#1", source="# Sales 2024")
    assert "nothing changed" in same.content and not same.changes


async def test_insert_cell_at_the_top_and_after_a_cell(
    tools: ToolSet, cells: list[Any], nb_path: Path
) -> None:
    top = await call(tools, "insert_cell", after_cell_id=None, cell_type="markdown", source="Intro")
    assert not top.is_error, top.content
    (change,) = top.changes
    assert isinstance(change, CellChanged) and change.change == "inserted"
    assert top.content.startswith(
        f"inserted cell {change.cell_id} (#1) in analysis.ipynb (file on disk):"
    )
    assert "--- /dev/null" in top.content and "+Intro" in top.content
    after = await call(
        tools, "insert_cell", after_cell_id=cells[1].id, cell_type="code", source="df.info()"
    )
    assert "(#4)" in after.content
    now = on_disk(nb_path)
    assert [c.source for c in now][:4] == ["Intro", cells[0].source, cells[1].source, "df.info()"]
    new = now[3]
    assert new.cell_type == "code" and new.outputs == [] and new.execution_count is None
    assert "trusted" not in new.metadata
    assert len({c.id for c in now}) == 6


async def test_insert_cell_creates_a_notebook_that_does_not_exist(
    tools: ToolSet, root: Path
) -> None:
    out = await call(
        tools,
        "insert_cell",
        after_cell_id=None,
        cell_type="code",
        source="1 + 1",
        notebook="new.ipynb",
    )
    assert not out.is_error, out.content
    assert "(created new.ipynb)" in out.content
    nb = nbformat.read(root / "new.ipynb", as_version=4)
    nbformat.validate(nb)
    assert [c.source for c in nb.cells] == ["1 + 1"]


async def test_delete_cell_removes_it_and_shows_what_went(
    tools: ToolSet, cells: list[Any], nb_path: Path
) -> None:
    out = await call(tools, "delete_cell", cell_id=cells[3].id)
    assert out.content.startswith(
        f"deleted cell {cells[3].id} (was #4) from analysis.ipynb; 3 cells left (file on disk):"
    )
    assert "-fail(x)" in out.content
    assert [c.id for c in on_disk(nb_path)] == [c.id for c in cells[:3]]


async def test_written_notebooks_are_valid_nbformat(tools: ToolSet, nb_path: Path) -> None:
    await call(tools, "insert_cell", after_cell_id="#2", cell_type="markdown", source="## Plot")
    await call(tools, "edit_cell", cell_id="#1", old_str="Sales", new_str="Revenue")
    nbformat.validate(nbformat.read(nb_path, as_version=4))
    assert raw(nb_path).endswith(b"}\n")


# --- never clobber ----------------------------------------------------------------------------


def jupyterlab_saves(path: Path, new_source: str) -> bytes:
    """What saving from JupyterLab does: the whole file rewritten with the user's change."""
    nb = nbformat.read(path, as_version=4)
    nb.cells[0].source = new_source
    nbformat.write(nb, path)
    return path.read_bytes()


async def test_an_edit_after_the_file_changed_since_it_was_read_is_refused(
    tools: ToolSet, nb_path: Path
) -> None:
    await call(tools, "list_cells")
    saved = jupyterlab_saves(nb_path, "# Sales (edited by the user)")
    message = (
        "analysis.ipynb changed on disk since it was read (saved from JupyterLab?); "
        "read it again with list_cells and redo the edit"
    )
    for name, args in (
        ("replace_cell", {"cell_id": "#1", "source": "# Mine"}),
        ("edit_cell", {"cell_id": "#2", "old_str": "head", "new_str": "tail"}),
        ("insert_cell", {"after_cell_id": None, "cell_type": "code", "source": "1"}),
        ("delete_cell", {"cell_id": "#4"}),
    ):
        out = await call(tools, name, **args)
        assert out.is_error
        assert out.content == f"{name}: {message}"
        assert raw(nb_path) == saved, "the user's save is untouched, byte for byte"
    await call(tools, "list_cells")  # read it again, as told
    out = await call(tools, "edit_cell", cell_id="#2", old_str="head", new_str="tail")
    assert not out.is_error
    assert on_disk(nb_path)[0].source == "# Sales (edited by the user)"


class SavedMidEdit(Workspace):
    """A workspace where JupyterLab saves the notebook after the tool read it, before it writes."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.reads = 0
        self.saved = b""

    def read_bytes(self, path: Any) -> bytes:
        data = super().read_bytes(path)
        self.reads += 1
        if self.reads == 1:
            self.saved = jupyterlab_saves(self.root / "analysis.ipynb", "# saved meanwhile")
        return data


async def test_a_save_between_the_read_and_the_write_of_one_edit_is_not_clobbered(
    root: Path, nb_path: Path
) -> None:
    workspace = SavedMidEdit(root)
    tools = notebook_tools(workspace, current_notebook=lambda: "analysis.ipynb")
    out = await call(tools, "replace_cell", cell_id="#2", source="print('mine')")
    assert out.is_error and "changed on disk since it was read" in out.content
    assert raw(nb_path) == workspace.saved
