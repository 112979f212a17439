"""The notebook tools on real .ipynb files: cells by id, outputs summarised, never a clobbered save."""

from __future__ import annotations

import base64
import json
import os
import struct
import zlib
from pathlib import Path
from typing import Any

import nbformat
import pytest

from copilot_nb.events import CellChanged
from copilot_nb.tools import ToolSet
from copilot_nb.tools.notebook import notebook_tools
from copilot_nb.tools.outputs import image_size
from copilot_nb.workspace.notebook_file import current_notebook_path, read_notebook
from copilot_nb.workspace.workspace import Workspace
from tests.helpers import call


def png(width: int, height: int) -> bytes:
    """A real, decodable PNG of the given size."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        crc = struct.pack(">I", zlib.crc32(kind + data))
        return struct.pack(">I", len(data)) + kind + data + crc

    rows = b"".join(b"\x00" + b"\x80" * width * 3 for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


def jpeg_header(width: int, height: int) -> bytes:
    """The segments of a baseline JPEG up to its frame header, after an EXIF-sized APP1 block."""
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    app1 = b"\xff\xe1" + struct.pack(">H", 2 + 5000) + b"Exif\x00" + b"\x00" * 4995
    sof0 = b"\xff\xc0" + struct.pack(">HBHHB", 17, 8, height, width, 3) + b"\x01\x22\x00" * 3
    return b"\xff\xd8" + app0 + app1 + sof0 + b"\xff\xd9"


PNG_B64 = base64.b64encode(png(640, 480)).decode()
JPEG_B64 = base64.b64encode(jpeg_header(1024, 768)).decode()


def make_notebook(path: Path) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    title = nbformat.v4.new_markdown_cell("# Sales\nQuarterly numbers.")
    load = nbformat.v4.new_code_cell(
        "import pandas as pd\ndf = pd.read_csv('sales.csv')\ndf.head()",
        execution_count=1,
        outputs=[
            nbformat.v4.new_output(
                "stream", name="stdout", text="\x1b[32mloaded\x1b[0m 3 rows\nok\n"
            ),
            nbformat.v4.new_output(
                "execute_result",
                execution_count=1,
                data={
                    "text/html": "<table><tr><td>1</td></tr></table>",
                    "text/plain": "   a\n0  1",
                },
            ),
        ],
    )
    load.metadata["trusted"] = True
    plot = nbformat.v4.new_code_cell(
        "df.plot()\nshow(photo)",
        execution_count=2,
        outputs=[
            nbformat.v4.new_output(
                "display_data", data={"image/png": PNG_B64, "text/plain": "<Figure size 640x480>"}
            ),
            nbformat.v4.new_output("display_data", data={"image/jpeg": JPEG_B64}),
        ],
    )
    broken = nbformat.v4.new_code_cell(
        "x = 1\ny = 1\nfail(x)",
        execution_count=3,
        outputs=[
            nbformat.v4.new_output(
                "error",
                ename="ValueError",
                evalue="x must be positive",
                traceback=[
                    "\x1b[0;31m-------------------------------------\x1b[0m",
                    "\x1b[0;31mValueError\x1b[0m Traceback (most recent call last)",
                    "Cell \x1b[0;32mIn[3], line 3\x1b[0m\n\x1b[0;32m----> 3\x1b[0m fail(x)",
                    "\x1b[0;31mValueError\x1b[0m: x must be positive",
                ],
            )
        ],
    )
    nb.cells = [title, load, plot, broken]
    nbformat.write(nb, path)
    return nb


@pytest.fixture
def nb_path(root: Path) -> Path:
    make_notebook(root / "analysis.ipynb")
    return root / "analysis.ipynb"


@pytest.fixture
def cells(nb_path: Path) -> list[Any]:
    return list(nbformat.read(nb_path, as_version=4).cells)


@pytest.fixture
def tools(ws: Workspace) -> ToolSet:
    """The notebook tools, in a kernel whose notebook is analysis.ipynb."""
    return notebook_tools(ws, current_notebook=lambda: "analysis.ipynb")


def on_disk(path: Path) -> list[Any]:
    return list(nbformat.read(path, as_version=4).cells)


def raw(path: Path) -> bytes:
    """The file's exact bytes (to check it was not touched)."""
    return path.read_bytes()


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


SNAPSHOT = Path(__file__).parent / "data" / "snapshots" / "notebook_tools_schema.json"


def test_the_notebook_tool_schemas_match_the_snapshot(tools: ToolSet) -> None:
    """A change to what the model sees must show up as a diff of the snapshot file."""
    actual = [
        {"name": s.name, "description": s.description, "parameters": s.parameters}
        for s in tools.list_tools()
    ]
    if os.environ.get("COPILOT_NB_UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(json.dumps(actual, indent=2, ensure_ascii=False) + "\n")
    assert json.loads(SNAPSHOT.read_text()) == actual, (
        "tool schemas changed; rerun with COPILOT_NB_UPDATE_SNAPSHOTS=1 and review the diff"
    )


# --- reading ----------------------------------------------------------------------------------


async def test_list_cells_shows_index_id_type_count_first_line_and_outputs(
    tools: ToolSet, cells: list[Any]
) -> None:
    out = await call(tools, "list_cells")
    assert not out.is_error
    lines = out.content.splitlines()
    assert lines[0] == "analysis.ipynb: 4 cells (code 3, markdown 1)"
    assert lines[1] == f"#0 markdown id={cells[0].id} | # Sales  (+1 lines)"
    assert lines[2] == (
        f"#1 code [1] id={cells[1].id} | import pandas as pd  (+2 lines)"
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
        f"analysis.ipynb #1 id={cells[1].id} (code, execution count 1, 3 lines)",
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
    ]


async def test_images_are_named_with_their_pixel_size_never_as_base64(
    tools: ToolSet, cells: list[Any]
) -> None:
    out = await call(tools, "read_cell", cell_id="#2")
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
    out = await call(tools, "read_cell", cell_id="#3")
    assert "[error] ValueError: x must be positive" in out.content
    assert "----> 3 fail(x)" in out.content
    assert "\x1b" not in out.content


async def test_long_stream_output_is_cut_with_a_marker(tools: ToolSet, nb_path: Path) -> None:
    nb = nbformat.read(nb_path, as_version=4)
    text = "".join(f"epoch {i}: loss 0.{i:04d}\n" for i in range(5000))
    nb.cells[3].outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
    nbformat.write(nb, nb_path)
    out = await call(tools, "read_cell", cell_id="#3")
    assert "epoch 0: loss" in out.content and "epoch 4999: loss" in out.content
    assert "characters cut] …" in out.content
    assert len(out.content) < 3000


async def test_progress_bars_show_only_their_last_state(tools: ToolSet, nb_path: Path) -> None:
    nb = nbformat.read(nb_path, as_version=4)
    bar = "".join(f"\r{i}%|{'#' * (i // 10)}" for i in range(101)) + "\n"
    nb.cells[3].outputs = [nbformat.v4.new_output("stream", name="stderr", text=bar)]
    nbformat.write(nb, nb_path)
    out = await call(tools, "read_cell", cell_id="#3")
    assert out.content.endswith("[stderr]\n100%|##########")


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
            f"#0 {cells[0].id}, #1 {cells[1].id}, #2 {cells[2].id}, #3 {cells[3].id}; "
            "call list_cells to see them"
        )
    out = await call(tools, "insert_cell", after_cell_id="nosuch", cell_type="code", source="1")
    assert out.is_error and "no cell with id 'nosuch'" in out.content
    out = await call(tools, "read_cell", cell_id="#7")
    assert out.content == (
        "read_cell: there is no cell #7 in analysis.ipynb: it has 4 cells, #0 to #3; "
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
    ids = [line.split("id=")[1].split()[0] for line in first.content.splitlines()[1:]]
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


# --- editing ----------------------------------------------------------------------------------


async def test_edit_cell_replaces_text_once_and_returns_id_index_and_diff(
    tools: ToolSet, cells: list[Any], nb_path: Path
) -> None:
    out = await call(
        tools, "edit_cell", cell_id=cells[1].id, old_str="df.head()", new_str="df.describe()"
    )
    assert not out.is_error, out.content
    assert out.content == (
        f"edited cell {cells[1].id} (#1) in analysis.ipynb:\n"
        f"--- a/analysis.ipynb#{cells[1].id}\n"
        f"+++ b/analysis.ipynb#{cells[1].id}\n"
        "@@ -1,3 +1,3 @@\n"
        " import pandas as pd\n"
        " df = pd.read_csv('sales.csv')\n"
        "-df.head()\n"
        "+df.describe()"
    )
    assert out.summary == "analysis.ipynb #1 edited +1 −1"
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
    out = await call(tools, "edit_cell", cell_id="#3", old_str="= 1", new_str="= 2")
    assert out.is_error
    assert out.content == (
        f"edit_cell: old_str appears 2 times in cell {cells[3].id} (#3) of analysis.ipynb "
        "(lines 1, 2); include more surrounding lines so it matches once"
    )
    out = await call(tools, "edit_cell", cell_id="#3", old_str="fail(y)", new_str="ok(y)")
    assert out.content == (
        f"edit_cell: old_str was not found in cell {cells[3].id} (#3) of analysis.ipynb; "
        "call read_cell to see its current source and copy old_str exactly, including "
        "whitespace and indentation"
    )
    out = await call(tools, "edit_cell", cell_id="#3", old_str="y  =  1", new_str="y = 2")
    assert "differs only in whitespace is at line 2" in out.content
    out = await call(tools, "edit_cell", cell_id="#3", old_str="", new_str="z")
    assert "old_str is empty" in out.content
    assert raw(nb_path) == before


async def test_replace_cell_rewrites_the_source_and_keeps_the_type(
    tools: ToolSet, cells: list[Any], nb_path: Path
) -> None:
    out = await call(tools, "replace_cell", cell_id="#0", source="# Sales 2024")
    assert not out.is_error
    assert f"replaced cell {cells[0].id} (#0)" in out.content
    assert "-# Sales\n-Quarterly numbers.\n+# Sales 2024" in out.content
    now = on_disk(nb_path)
    assert (now[0].cell_type, now[0].source, now[0].id) == ("markdown", "# Sales 2024", cells[0].id)
    same = await call(tools, "replace_cell", cell_id="#0", source="# Sales 2024")
    assert "nothing changed" in same.content and not same.changes


async def test_insert_cell_at_the_top_and_after_a_cell(
    tools: ToolSet, cells: list[Any], nb_path: Path
) -> None:
    top = await call(tools, "insert_cell", after_cell_id=None, cell_type="markdown", source="Intro")
    assert not top.is_error, top.content
    (change,) = top.changes
    assert isinstance(change, CellChanged) and change.change == "inserted"
    assert top.content.startswith(f"inserted cell {change.cell_id} (#0) in analysis.ipynb:")
    assert "--- /dev/null" in top.content and "+Intro" in top.content
    after = await call(
        tools, "insert_cell", after_cell_id=cells[1].id, cell_type="code", source="df.info()"
    )
    assert "(#3)" in after.content
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
        f"deleted cell {cells[3].id} (was #3) from analysis.ipynb; 3 cells left:"
    )
    assert "-fail(x)" in out.content
    assert [c.id for c in on_disk(nb_path)] == [c.id for c in cells[:3]]


async def test_written_notebooks_are_valid_nbformat(tools: ToolSet, nb_path: Path) -> None:
    await call(tools, "insert_cell", after_cell_id="#1", cell_type="markdown", source="## Plot")
    await call(tools, "edit_cell", cell_id="#0", old_str="Sales", new_str="Revenue")
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
        ("replace_cell", {"cell_id": "#0", "source": "# Mine"}),
        ("edit_cell", {"cell_id": "#1", "old_str": "head", "new_str": "tail"}),
        ("insert_cell", {"after_cell_id": None, "cell_type": "code", "source": "1"}),
        ("delete_cell", {"cell_id": "#3"}),
    ):
        out = await call(tools, name, **args)
        assert out.is_error
        assert out.content == f"{name}: {message}"
        assert raw(nb_path) == saved, "the user's save is untouched, byte for byte"
    await call(tools, "list_cells")  # read it again, as told
    out = await call(tools, "edit_cell", cell_id="#1", old_str="head", new_str="tail")
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
    out = await call(tools, "replace_cell", cell_id="#1", source="print('mine')")
    assert out.is_error and "changed on disk since it was read" in out.content
    assert raw(nb_path) == workspace.saved


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
    assert out.content.startswith(f"analysis.ipynb #0 id={cells[0].id} (markdown")
