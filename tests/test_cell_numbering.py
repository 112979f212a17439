"""One cell numbering wherever the user reads it: `#6` is what JupyterLab calls "Cell 6/7"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from copilot_nb.agent.loop.tool_calls import summarize_call
from copilot_nb.messages import ToolCall
from copilot_nb.tools import ToolSet
from copilot_nb.tools.notebook.numbering import cell_label, cell_position, numbered_index
from copilot_nb.workspace.workspace import Workspace
from tests.helpers import call
from tests.notebook_samples import make_notebook, sample_tools


@pytest.fixture
def tools(ws: Workspace, root: Path) -> ToolSet:
    make_notebook(root / "analysis.ipynb")
    return sample_tools(ws)


def test_numbers_count_from_one_as_jupyterlab_does() -> None:
    assert (cell_label(0), cell_label(5)) == ("#1", "#6")
    assert cell_position(5, 7) == "cell 6 of 7"
    assert [numbered_index(r) for r in ("#1", " #6 ", "#0", "#x", "#", "ab12")] == [
        0,
        5,
        -1,
        -1,
        -1,
        None,
    ]


async def test_the_listing_and_a_reference_name_the_same_cell(tools: ToolSet) -> None:
    listing = (await call(tools, "list_cells")).content.splitlines()
    second = listing[2]
    assert second.startswith("#2 code ")
    cell_id = second.split("id=")[1].split()[0]
    read = await call(tools, "read_cell", cell_id="#2")
    assert read.content.startswith(f"analysis.ipynb #2 id={cell_id} (cell 2 of 4; code")
    by_id = await call(tools, "read_cell", cell_id=cell_id)  # ids keep working
    assert by_id.content == read.content


async def test_hash_zero_is_no_cell_and_says_where_numbers_start(tools: ToolSet) -> None:
    out = await call(tools, "read_cell", cell_id="#0")
    assert out.is_error
    assert "numbered from #1 to #4" in out.content


async def test_an_insert_line_names_the_new_cell_not_its_anchor(tools: ToolSet) -> None:
    arguments: dict[str, Any] = {
        "after_cell_id": "#2",
        "cell_type": "code",
        "source": "df.plot()",
    }
    started = summarize_call(ToolCall(id="c", name="insert_cell", arguments=arguments))
    assert "#2" not in started
    out = await call(tools, "insert_cell", **arguments)
    assert out.summary.startswith("analysis.ipynb #3 inserted")
    assert "(#3) in analysis.ipynb" in out.content
