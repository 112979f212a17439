"""`@` completion in the chat panel, in a real JupyterLab driven through headless Chromium.

JupyterLab, the page and the helpers are in tests/browser_lab.py (its fixtures are a plugin of
tests/conftest.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from copilot_nb.testing import reply
from tests.browser_lab import LONG, open_notebook, shot

pytestmark = pytest.mark.browser

PANEL = "import copilot_nb\npanel = copilot_nb.chat({})\ndata_frame = [1, 2, 3]"


def items(panel: Any) -> list[str]:
    """The references the open list shows, top to bottom."""
    return panel.locator(".cnb-complete-text").all_inner_texts()


def selected(panel: Any) -> str:
    return panel.locator(".cnb-complete-item[aria-selected='true'] .cnb-complete-text").inner_text()


def test_typing_at_offers_workspace_files_cells_and_variables(page, lab, replies):
    root = lab["root"]
    (root / "data.csv").write_text("a,b\n1,2\n")
    (root / "database").mkdir()
    (root / "database" / "schema.sql").write_text("create table t (a int);\n")
    (root / ".env").write_text("TOKEN=data-secret\n")
    (root / "data notes.txt").write_text("a space: no way to write it as a reference\n")
    asked: list[Any] = []

    def answer(request: Any) -> Any:
        asked.append(request)
        return reply("Got both files.")

    replies.queue.append(answer)
    open_notebook(page, lab, "complete.ipynb", PANEL.format(""), "# plot the data\n1 + 1")
    panel = page.locator(".jupyterlab-sidecar .cnb-root")
    panel.wait_for(timeout=LONG)
    box = panel.locator(".cnb-input")
    popup = panel.locator(".cnb-complete")

    box.click()
    box.press_sequentially("Compare @da")
    panel.locator(".cnb-complete-text", has_text="@var:data_frame").wait_for()
    shown = items(panel)
    assert shown[:3] == ["@data.csv", "@var:data_frame", "@database/schema.sql"], "by depth"
    details = panel.locator(".cnb-complete-detail").all_inner_texts()
    assert shown[3].startswith("@cell:") and len(shown) == 4, (shown, details)
    assert panel.locator(".cnb-complete-detail").all_inner_texts() == [
        "list len 3",
        "#2 code · # plot the data",
    ]
    assert selected(panel) == "@data.csv"
    shot(panel, "complete-1-popup.png")
    box.press("Tab")
    popup.wait_for(state="hidden")
    assert box.input_value() == "Compare @data.csv "

    box.press_sequentially("with @da")
    panel.locator(".cnb-complete-text", has_text="@var:data_frame").wait_for()
    box.press("ArrowUp")
    assert selected(panel).startswith("@cell:"), "up from the first wraps to the last"
    box.press("ArrowDown")
    box.press("ArrowDown")
    box.press("ArrowDown")
    assert selected(panel) == "@database/schema.sql"
    box.press("ArrowUp")
    assert selected(panel) == "@var:data_frame"
    box.press("ArrowDown")
    box.press("Enter")  # accepts: the list is open
    popup.wait_for(state="hidden")
    assert box.input_value() == "Compare @data.csv with @database/schema.sql "
    assert panel.locator(".cnb-user").count() == 0, "Enter took the candidate, sent nothing"

    box.press_sequentially("and @da")
    popup.wait_for()
    box.press("Escape")
    popup.wait_for(state="hidden")
    assert box.input_value() == "Compare @data.csv with @database/schema.sql and @da"
    box.press_sequentially("t")  # the list Escape closed stays closed for this `@`
    box.press("Enter")  # no list open: Enter sends
    panel.get_by_text("Got both files.").wait_for()
    sent = "Compare @data.csv with @database/schema.sql and @dat"
    assert panel.locator(".cnb-user").inner_text() == sent
    assert box.input_value() == ""
    request = asked[0].messages[-1]["content"]
    assert '<attachment ref="@data.csv">' in request
    assert '<attachment ref="@database/schema.sql">' in request
    assert "data-secret" not in request
    assert '@dat"' not in request, "no file is named so: prose, not a reference"
    assert not replies.queue


def test_candidate_text_is_shown_as_text_and_never_runs(page, lab, replies):
    root = lab["root"]
    (root / "<img src=x onerror=window.__xss=1>.csv").write_text("x\n")
    odd_type = "odd = type('<img src=x onerror=window.__xss=2>', (), {})()"
    crafted = (
        "from copilot_nb.jupyter.panel.mentions import Candidate\n"
        "async def crafted(query):\n"
        "    return [Candidate(text='<img src=x onerror=window.__xss=4>.csv', kind='file',\n"
        "                      detail='<script>window.__xss=5</script>')]\n"
        "panel.completer.candidates = crafted\n"
        "print('crafted')"
    )
    open_notebook(
        page,
        lab,
        "escaped.ipynb",
        PANEL.format("sidebar=False") + "\n" + odd_type,
        "# <img src=x onerror=window.__xss=3> odd cell",
        crafted,
    )
    panel = page.locator(".jp-Notebook .jp-OutputArea .cnb-root")
    panel.wait_for(timeout=LONG)
    box = panel.locator(".cnb-input")
    box.click()
    box.press_sequentially("@od")
    panel.locator(".cnb-complete-item").nth(1).wait_for()
    assert items(panel)[0] == "@var:odd" and items(panel)[1].startswith("@cell:")
    assert len(items(panel)) == 2
    details = panel.locator(".cnb-complete-detail").all_inner_texts()
    assert details == [
        "<img src=x onerror=window.__xss=2>",
        "#2 code · # <img src=x onerror=window.__xss=3> odd cell",
    ]
    assert panel.locator(".cnb-complete img, .cnb-complete script").count() == 0
    box.press("Escape")
    box.fill("")

    # the third cell makes the kernel answer with a crafted file name
    page.locator(".jp-Notebook .jp-Cell").nth(2).locator(".cm-content").click()
    page.keyboard.press("Shift+Enter")
    page.locator(".jp-OutputArea-output", has_text="crafted").wait_for()
    box.click()
    box.press_sequentially("@x")
    panel.locator(".cnb-complete-item").wait_for()
    assert items(panel) == ["@<img src=x onerror=window.__xss=4>.csv"]
    assert panel.locator(".cnb-complete-detail").inner_text() == "<script>window.__xss=5</script>"
    assert panel.locator(".cnb-complete img, .cnb-complete script").count() == 0
    shot(panel, "complete-2-escaped.png")
    box.press("Tab")
    assert box.input_value() == "@<img src=x onerror=window.__xss=4>.csv "
    assert page.evaluate("window.__xss") is None
    assert not replies.queue
