"""A sample notebook (markdown, code with a table, an image, an error) and the fixtures the
notebook tool tests share: its path, its cells, and the notebook tools of a kernel running it."""

from __future__ import annotations

import base64
import struct
import zlib
from pathlib import Path
from typing import Any

import nbformat
import pytest

from copilot_nb.tools import ToolSet
from copilot_nb.tools.notebook.cells import notebook_tools
from copilot_nb.workspace.workspace import Workspace


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


def plot_png(width: int, height: int) -> str:
    """A matplotlib line plot of `width` x `height` px, as a figure's PNG, in base64."""
    import base64
    import io

    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width / 100, height / 100), dpi=100)
    axes = figure.subplots()
    axes.plot(range(50), [x * x for x in range(50)], label="units")
    axes.set_title("units sold per week")
    axes.legend()
    out = io.BytesIO()
    figure.savefig(out, format="png")
    return base64.b64encode(out.getvalue()).decode()


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


def sample_tools(ws: Workspace) -> ToolSet:
    """The notebook tools, in a kernel whose notebook is analysis.ipynb."""
    return notebook_tools(ws, current_notebook=lambda: "analysis.ipynb")


def on_disk(path: Path) -> list[Any]:
    return list(nbformat.read(path, as_version=4).cells)


def raw(path: Path) -> bytes:
    """The file's exact bytes (to check it was not touched)."""
    return path.read_bytes()
