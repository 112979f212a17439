"""The notebook tools on real .ipynb files: cells by id, outputs summarised, never a clobbered save."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import nbformat
import pytest

from copilot_nb.tools import ToolSet
from copilot_nb.tools.notebook.cells import notebook_tools
from copilot_nb.tools.views.outputs import image_size
from copilot_nb.workspace.notebook_file import current_notebook_path, read_notebook
from copilot_nb.workspace.workspace import Workspace
from tests.helpers import assert_schemas_match_snapshot, call
from tests.notebook_samples import (
    JPEG_B64,
    PNG_B64,
    jpeg_header,
    make_notebook,
    png,
    raw,
    sample_tools,
)


@pytest.fixture
def tools(ws: Workspace) -> ToolSet:
    """The notebook tools, in a kernel whose notebook is analysis.ipynb."""
    return sample_tools(ws)


# --- the tool set -----------------------------------------------------------------------------


def test_the_tools_have_the_documented_names_arguments_and_categories(tools: ToolSet) -> None:
    specs = {spec.name: spec for spec in tools.list_tools()}
    arguments = {name: list(spec.parameters["properties"]) for name, spec in specs.items()}
    assert arguments == {
        "list_cells": ["notebook"],
        "read_cell": ["cell_id", "notebook"],
        "edit_cell": ["cell_id", "old_str", "new_str", "notebook"],
        "replace_cell": ["cell_id", "source", "notebook"],
        "insert_cell": ["after_cell_id", "cell_type", "source", "notebook"],
        "delete_cell": ["cell_id", "notebook"],
    }
    categories = {t.name: t.category for t in tools}
    assert categories["list_cells"] == categories["read_cell"] == "read"
    assert {categories[n] for n in ("edit_cell", "replace_cell", "insert_cell", "delete_cell")} == {
        "edit"
    }
    assert specs["insert_cell"].parameters["properties"]["cell_type"]["enum"] == [
        "code",
        "markdown",
    ]
    assert '"#N"' in specs["read_cell"].parameters["properties"]["cell_id"]["description"]


def test_the_notebook_tool_schemas_match_the_snapshot(tools: ToolSet) -> None:
    """A change to what the model sees must show up as a diff of the snapshot file."""
    assert_schemas_match_snapshot(tools, "notebook_tools_schema.json")


# --- reading ----------------------------------------------------------------------------------


async def test_list_cells_shows_index_id_type_count_first_line_and_outputs(
    tools: ToolSet, cells: list[Any]
) -> None:
    out = await call(tools, "list_cells")
    assert not out.is_error
    lines = out.content.splitlines()
    assert lines[0] == "analysis.ipynb: 4 cells (code 3, markdown 1)"
    assert lines[1] == f"#1 markdown id={cells[0].id} | # Sales  (+1 lines)"
    assert lines[2] == (
        f"#2 code [1] id={cells[1].id} | import pandas as pd  (+2 lines)"
        "  → stdout 2 lines; text/html"
    )
    assert lines[3].endswith("→ image/png 640x480; image/jpeg 1024x768")
    assert lines[4].endswith("→ error ValueError")
    assert PNG_B64[:40] not in out.content


async def test_read_cell_numbers_the_source_and_summarises_outputs(
    tools: ToolSet, cells: list[Any]
) -> None:
    out = await call(tools, "read_cell", cell_id=cells[1].id)
    assert out.content.splitlines() == [
        f"analysis.ipynb #2 id={cells[1].id} (cell 2 of 4; code, execution count 1, 3 lines)",
        "     1\timport pandas as pd",
        "     2\tdf = pd.read_csv('sales.csv')",
        "     3\tdf.head()",
        "outputs (2):",
        "[stdout]",
        "loaded 3 rows",
        "ok",
        "[result]",
        "[text/html 34 chars]",
        "   a",
        "0  1",
        "(file on disk)",
    ]


async def test_images_are_named_with_their_pixel_size_never_as_base64(
    tools: ToolSet, cells: list[Any]
) -> None:
    out = await call(tools, "read_cell", cell_id="#3")
    assert "[image/png 640x480]" in out.content
    assert "[image/jpeg 1024x768]" in out.content
    assert "<Figure size 640x480>" in out.content
    assert PNG_B64[:40] not in out.content and JPEG_B64[:40] not in out.content
    assert max(map(len, out.content.split())) < 60, "no long base64-like run"


def test_image_sizes_come_from_the_bytes_header() -> None:
    assert image_size(png(3, 2)) == (3, 2)
    assert image_size(jpeg_header(1920, 1080)) == (1920, 1080)
    assert image_size(b"GIF89a" + struct.pack("<HH", 7, 9)) == (7, 9)
    assert image_size(b"not an image") is None


async def test_errors_show_name_value_and_a_short_traceback_without_ansi(
    tools: ToolSet, nb_path: Path
) -> None:
    out = await call(tools, "read_cell", cell_id="#4")
    assert "[error] ValueError: x must be positive" in out.content
    assert "----> 3 fail(x)" in out.content
    assert "\x1b" not in out.content


async def test_long_stream_output_is_cut_with_a_marker(tools: ToolSet, nb_path: Path) -> None:
    nb = nbformat.read(nb_path, as_version=4)
    text = "".join(f"epoch {i}: loss 0.{i:04d}\n" for i in range(5000))
    nb.cells[3].outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
    nbformat.write(nb, nb_path)
    out = await call(tools, "read_cell", cell_id="#4")
    assert "epoch 0: loss" in out.content and "epoch 4999: loss" in out.content
    assert "characters cut] …" in out.content
    assert len(out.content) < 3000


async def test_progress_bars_show_only_their_last_state(tools: ToolSet, nb_path: Path) -> None:
    nb = nbformat.read(nb_path, as_version=4)
    bar = "".join(f"\r{i}%|{'#' * (i // 10)}" for i in range(101)) + "\n"
    nb.cells[3].outputs = [nbformat.v4.new_output("stream", name="stderr", text=bar)]
    nbformat.write(nb, nb_path)
    out = await call(tools, "read_cell", cell_id="#4")
    assert out.content.endswith("[stderr]\n100%|##########\n(file on disk)")


async def test_an_unknown_cell_id_lists_the_ids_there_are(
    tools: ToolSet, cells: list[Any], nb_path: Path
) -> None:
    before = raw(nb_path)
    for name, extra in (
        ("read_cell", {}),
        ("edit_cell", {"old_str": "a", "new_str": "b"}),
        ("replace_cell", {"source": "x"}),
        ("delete_cell", {}),
    ):
        out = await call(tools, name, cell_id="nosuch", **extra)
        assert out.is_error
        assert out.content == (
            f"{name}: no cell with id 'nosuch' in analysis.ipynb; its cells are: "
            f"#1 {cells[0].id}, #2 {cells[1].id}, #3 {cells[2].id}, #4 {cells[3].id}; "
            "call list_cells to see them"
        )
    out = await call(tools, "insert_cell", after_cell_id="nosuch", cell_type="code", source="1")
    assert out.is_error and "no cell with id 'nosuch'" in out.content
    out = await call(tools, "read_cell", cell_id="#8")
    assert out.content == (
        "read_cell: there is no cell #8 in analysis.ipynb: it has 4 cells, numbered from #1 to #4; "
        "call list_cells to see them"
    )
    assert raw(nb_path) == before


async def test_a_notebook_before_v4_5_gets_the_same_ids_on_every_read(
    tools: ToolSet, root: Path
) -> None:
    old = {
        "nbformat": 4,
        "nbformat_minor": 2,
        "metadata": {},
        "cells": [
            {
                "cell_type": "code",
                "metadata": {},
                "source": "a = 1",
                "outputs": [],
                "execution_count": None,
            },
            {
                "cell_type": "code",
                "metadata": {},
                "source": "a = 1",
                "outputs": [],
                "execution_count": None,
            },
        ],
    }
    (root / "old.ipynb").write_text(json.dumps(old))
    first = await call(tools, "list_cells", notebook="old.ipynb")
    second = await call(tools, "list_cells", notebook="old.ipynb")
    assert first.content == second.content
    ids = [line.split("id=")[1].split()[0] for line in first.content.splitlines()[1:-1]]
    assert len(set(ids)) == 2
    out = await call(
        tools, "edit_cell", cell_id=ids[1], old_str="a = 1", new_str="b = 2", notebook="old.ipynb"
    )
    assert not out.is_error, out.content
    written = json.loads((root / "old.ipynb").read_text())
    assert written["nbformat_minor"] == 5
    assert [c["id"] for c in written["cells"]] == ids
    assert [c["source"] for c in written["cells"]] == [["a = 1"], ["b = 2"]]


def test_duplicate_ids_are_made_unique(nb_path: Path) -> None:
    data = json.loads(nb_path.read_text())
    data["cells"][1]["id"] = data["cells"][0]["id"]
    nb_path.write_text(json.dumps(data))
    loaded = read_notebook(Workspace(nb_path.parent), "analysis.ipynb")
    ids = [c.id for c in loaded.node.cells]
    assert len(set(ids)) == 4 and ids[0] == data["cells"][0]["id"]


# --- which notebook ---------------------------------------------------------------------------


async def test_without_a_known_notebook_the_error_says_to_pass_one(root: Path) -> None:
    tools = notebook_tools(Workspace(root), current_notebook=lambda: None)
    out = await call(tools, "list_cells")
    assert out.is_error and "pass notebook='path.ipynb'" in out.content
    out = await call(tools, "list_cells", notebook="notes.txt")
    assert out.is_error and "is not a notebook" in out.content


async def test_an_explicit_notebook_outside_the_workspace_is_refused(
    tools: ToolSet, tmp_path: Path
) -> None:
    make_notebook(tmp_path / "outside.ipynb")
    out = await call(tools, "list_cells", notebook="../outside.ipynb")
    assert out.is_error and "outside the workspace" in out.content


def test_the_current_notebook_comes_from_the_session_the_env_or_vscode(root: Path) -> None:
    assert current_notebook_path({"__session__": "/srv/a.ipynb"}, {}) == "/srv/a.ipynb"
    assert current_notebook_path({}, {"JPY_SESSION_NAME": "b.ipynb"}) == "b.ipynb"
    assert current_notebook_path({"__vsc_ipynb_file__": "/c.ipynb"}, {}) == "/c.ipynb"
    assert current_notebook_path({"__session__": "console-1"}, {}) is None
    assert current_notebook_path({}, {}) is None


async def test_a_session_name_relative_to_the_server_root_is_found(
    root: Path, nb_path: Path, cells: list[Any]
) -> None:
    tools = notebook_tools(Workspace(root), current_notebook=lambda: "projects/ws/analysis.ipynb")
    out = await call(tools, "list_cells")
    assert out.content.startswith("analysis.ipynb: 4 cells")
    absolute = notebook_tools(Workspace(root), current_notebook=lambda: str(nb_path))
    out = await call(absolute, "read_cell", cell_id=cells[0].id)
    assert out.content.startswith(f"analysis.ipynb #1 id={cells[0].id} (cell 1 of 4; markdown")
