"""What the live-notebook browser tests share: the agent's story, and reading the page's live model."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import nbformat

from copilot_nb.testing import ScriptedRequest, ScriptedTurn, call, reply
from tests.live_story import cell_id_of

USER_SOURCE = "user_value = 41\nuser_value"
AGENT_SOURCE = "print(user_value + 1)"
MODEL = """
(() => {
  const widget = window.jupyterapp.shell.currentWidget;
  const model = widget.content.model;
  const cells = [];
  for (let i = 0; i < model.cells.length; i++) { cells.push(model.cells.get(i).toJSON()); }
  return { dirty: model.dirty, cells };
})()
"""


def agent_story() -> list[Any]:
    """list_cells, insert a cell after the user's unsaved one, run the user's cell, answer."""
    found: dict[str, str] = {}

    def insert_after_users_cell(request: ScriptedRequest) -> ScriptedTurn:
        listing = request.tool_results["l"]
        assert "live: open in" in listing, listing
        found["user"] = cell_id_of(listing, "user_value = 41")
        return reply(
            "",
            call(
                "insert_cell",
                id="i",
                after_cell_id=found["user"],
                cell_type="code",
                source=AGENT_SOURCE,
            ),
        )

    def run_users_cell(request: ScriptedRequest) -> ScriptedTurn:
        assert "inserted cell" in request.tool_results["i"]
        return reply("", call("run_cell", id="r", cell_id=found["user"]))

    def answer(request: ScriptedRequest) -> ScriptedTurn:
        ran = request.tool_results["r"]
        assert "[result]" in ran and "41" in ran, ran
        return reply("Added a cell after yours and ran yours.")

    return [reply("", call("list_cells", id="l")), insert_after_users_cell, run_users_cell, answer]


def live_model(page: Any) -> dict[str, Any]:
    return page.evaluate(MODEL)


def sources(page: Any) -> list[str]:
    return [cell["source"] for cell in live_model(page)["cells"]]


def on_disk(path: Path) -> list[str]:
    return [cell.source for cell in nbformat.read(path, as_version=4).cells]


def type_unsaved_cell_below_first(page: Any) -> None:
    """As the user would: select the first cell, add a cell below it, type, leave it unsaved."""
    page.locator(".jp-Notebook .jp-Cell").first.locator(".jp-InputPrompt").click()
    page.keyboard.press("Escape")
    page.keyboard.press("b")
    editor = page.locator(".jp-Notebook .jp-Cell").nth(1).locator(".cm-content")
    editor.click()
    page.keyboard.type(USER_SOURCE)
    page.keyboard.press("Escape")


def run_cell_at(page: Any, index: int) -> None:
    """Run one cell and stay on it (Ctrl+Enter: Shift+Enter on the last cell adds a new one)."""
    page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".jp-InputPrompt").click()
    page.keyboard.press("Escape")
    page.keyboard.press("Control+Enter")


def no_dialog(page: Any) -> None:
    time.sleep(0.5)
    assert page.locator(".jp-Dialog").count() == 0, page.locator(".jp-Dialog").inner_text()
