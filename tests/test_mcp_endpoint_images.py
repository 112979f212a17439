"""An MCP client reads a cell's plot as an image (issue 39, case 1, the MCP endpoint's part).

The official `mcp` SDK client calls `read_cell` at the proxy's `/mcp` on a notebook whose cell
shows a figure drawn larger than any model uses: the result holds the text, whose line names
the image, and an MCP `ImageContent` with the figure scaled to 1568 px on its long side; the
text never holds base64.
"""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path
from typing import Any

import nbformat
from PIL import Image as Pillow

from copilot_nb.workspace.workspace import Workspace
from tests.notebook_samples import PNG_B64, plot_png, sample_tools
from tests.proxy_fixtures import proxy_for

__all__ = ["proxy_for"]

_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{200,}")


def plotted(root: Path, *images: str) -> None:
    """analysis.ipynb with one cell that showed these PNGs (base64)."""
    nb = nbformat.v4.new_notebook()
    outputs = [
        nbformat.v4.new_output("display_data", data={"image/png": data, "text/plain": "<Figure>"})
        for data in images
    ]
    nb.cells = [nbformat.v4.new_code_cell("df.plot()", execution_count=1, outputs=outputs)]
    nbformat.write(nb, root / "analysis.ipynb")


async def call(proxy: Any, name: str, arguments: dict[str, Any]) -> Any:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    headers = {"Authorization": f"Bearer {proxy.token}"}
    async with (
        create_mcp_http_client(headers=headers) as http,
        Client(streamable_http_client(f"{proxy.url}/mcp", http_client=http)) as client,
    ):
        return await client.call_tool(name, arguments)


def pixels(data: str) -> tuple[int, int]:
    return Pillow.open(io.BytesIO(base64.b64decode(data))).size


async def test_read_cell_sends_the_plot_as_an_image_scaled_for_any_model(proxy_for, root):
    big = plot_png(3000, 1800)
    plotted(root, big, PNG_B64)
    proxy = proxy_for([], allow_execution=True, tools=sample_tools(Workspace(root)))
    result = await call(proxy, "read_cell", {"cell_id": "#1"})
    assert not result.is_error
    text, *images = result.content
    assert text.type == "text"
    assert "[image/png 3000x1800]" in text.text and "[image/png 640x480]" in text.text
    assert _BASE64_RUN.search(text.text) is None, "no base64 in the text"
    assert [(i.type, i.mime_type) for i in images] == [("image", "image/png")] * 2
    assert [pixels(i.data) for i in images] == [(1568, 941), (640, 480)]
    assert images[1].data == PNG_B64, "an image that fits is sent as it is"


async def test_a_refused_call_has_only_its_text(proxy_for, root):
    plotted(root, PNG_B64)
    proxy = proxy_for([], tools=sample_tools(Workspace(root)))  # without --allow-execution
    result = await call(proxy, "read_cell", {"cell_id": "#1"})
    assert result.is_error and "--allow-execution" in result.content[0].text
    assert [block.type for block in result.content] == ["text"]
