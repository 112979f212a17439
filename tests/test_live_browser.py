"""The live notebook in a real JupyterLab and Notebook 7: the agent edits what the user has open.

The story a user lives: they type a cell and do not save; a `%%copilot` cell asks the agent to add
a cell after theirs and to run theirs. The agent sees the unsaved cell, its new cell appears in
the open notebook at once, the user's cell gets its outputs, the notebook's own undo takes the
agent's cell back (and redo brings it again), and a save raises no "File Changed" dialog and
writes both cells. Screenshots of each step go to test-artifacts/.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest

from copilot_nb.testing import ScriptedRequest, ScriptedTurn, call, reply
from tests.browser_lab import LONG, TOKEN, open_notebook, run_next, shot

pytestmark = pytest.mark.browser

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


def tool_result(request: ScriptedRequest, call_id: str) -> str:
    return next(m["content"] for m in request.messages if m.get("tool_call_id") == call_id)


def cell_id_of(listing: str, source_start: str) -> str:
    """The id list_cells gives the cell whose first line starts so."""
    line = next(line for line in listing.splitlines() if f"| {source_start}" in line)
    return line.split("id=")[1].split()[0]


def agent_story() -> list[Any]:
    """list_cells, insert a cell after the user's unsaved one, run the user's cell, answer."""
    found: dict[str, str] = {}

    def insert_after_users_cell(request: ScriptedRequest) -> ScriptedTurn:
        listing = tool_result(request, "l")
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
        assert "inserted cell" in tool_result(request, "i")
        return reply("", call("run_cell", id="r", cell_id=found["user"]))

    def answer(request: ScriptedRequest) -> ScriptedTurn:
        ran = tool_result(request, "r")
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


def test_the_agent_edits_the_open_notebook_and_the_users_work_survives(page, lab, replies):
    name = "live.ipynb"
    path = lab["root"] / name
    replies.queue.extend(agent_story())
    open_notebook(page, lab, name, "%load_ext copilot_nb", "%%copilot --yes\nadd a cell after mine")
    type_unsaved_cell_below_first(page)
    assert on_disk(path) == ["%load_ext copilot_nb", "%%copilot --yes\nadd a cell after mine"]
    shot(page, "live-1-unsaved-user-cell.png")

    run_cell_at(page, 2)
    agent_cell = page.locator(".jp-Notebook .jp-Cell .jp-InputArea-editor").filter(
        has_text=AGENT_SOURCE
    )
    agent_cell.wait_for(timeout=LONG)
    page.get_by_text("Added a cell after yours").wait_for(timeout=LONG)
    now = live_model(page)
    assert [c["source"] for c in now["cells"]] == [
        "%load_ext copilot_nb",
        USER_SOURCE,
        AGENT_SOURCE,
        "%%copilot --yes\nadd a cell after mine",
    ]
    assert now["dirty"], "the agent's change marks the notebook modified"
    stamp = now["cells"][2]["metadata"]["copilot_nb"]
    assert stamp["change"] == "inserted" and stamp["model"] and stamp["at"].endswith("Z")
    user_cell = page.locator(".jp-Notebook .jp-Cell").nth(1)
    assert "41" in user_cell.locator(".jp-OutputArea").inner_text(), "run_cell's outputs"
    assert now["cells"][1]["outputs"][0]["output_type"] == "execute_result"
    assert (
        page.evaluate("window.jupyterapp.shell.currentWidget.content.model.cells.get(1).trusted")
        is False
    ), "outputs the agent put in render untrusted until the user runs the cell"
    assert on_disk(path) == ["%load_ext copilot_nb", "%%copilot --yes\nadd a cell after mine"], (
        "the agent never writes the file of an open notebook"
    )
    shot(page, "live-2-agent-cell-and-outputs.png")

    page.locator(".jp-Notebook .jp-Cell").first.locator(".jp-InputPrompt").click()
    page.keyboard.press("Escape")
    page.keyboard.press("z")  # Edit > Undo cell operation
    agent_cell.wait_for(state="detached", timeout=5_000)
    assert AGENT_SOURCE not in sources(page)
    assert USER_SOURCE in sources(page), "undo takes back the agent's cell, not the user's"
    shot(page, "live-3-undone.png")
    page.keyboard.press("Shift+Z")  # redo
    agent_cell.wait_for(timeout=5_000)

    page.keyboard.press("Control+s")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.content.model.dirty")
    no_dialog(page)
    assert on_disk(path) == [
        "%load_ext copilot_nb",
        USER_SOURCE,
        AGENT_SOURCE,
        "%%copilot --yes\nadd a cell after mine",
    ]
    saved = nbformat.read(path, as_version=4)
    assert saved.cells[2].metadata["copilot_nb"]["change"] == "inserted"
    shot(page, "live-4-saved-no-dialog.png")
    assert not replies.queue


def test_an_edit_to_a_cell_the_user_changed_since_is_refused(page, lab, replies):
    name = "conflict.ipynb"

    def edit_after_the_user_typed(request: ScriptedRequest) -> ScriptedTurn:
        cell_id = cell_id_of(tool_result(request, "l"), "total = 1")
        time.sleep(4)  # the model thinks; meanwhile the user types in that cell
        return reply("", call("replace_cell", id="e", cell_id=cell_id, source="total = 99"))

    replies.queue.extend(
        [
            reply("", call("list_cells", id="l")),
            edit_after_the_user_typed,
            lambda request: reply("Refused: " + tool_result(request, "e")),
        ]
    )
    open_notebook(
        page, lab, name, "%load_ext copilot_nb", "total = 1", "%%copilot --yes\nchange it"
    )
    run_cell_at(page, 2)
    page.get_by_text("list_cells").first.wait_for(timeout=LONG)
    editor = page.locator(".jp-Notebook .jp-Cell").nth(1).locator(".cm-content")
    editor.click()
    page.keyboard.press("End")
    page.keyboard.type(" + 1  # mine")
    page.keyboard.press("Escape")
    page.get_by_text("Refused:").wait_for(timeout=LONG)
    assert sources(page)[1] == "total = 1 + 1  # mine", "the user's typing is kept"
    assert (
        "changed in the open notebook since you read it"
        in page.locator(".jp-Notebook .jp-Cell").nth(2).inner_text()
    )
    shot(page, "live-6-conflict-refused.png")
    assert not replies.queue


NOTEBOOK_7_OWN = re.compile(
    r"^(Cannot read properties of undefined \(reading 'schema'\)"
    r"|Command 'filebrowser:open-path' not registered\.)\n.*/static/notebook/notebook_core\."
)
"""Notebook 7.6 throws these itself on page load (its shortcuts plugin, its tree router), with or
without copilot_nb: checked with the extension disabled."""


def test_notebook_7_sees_and_takes_the_agents_cell(page, lab, replies, known_page_errors):
    known_page_errors.append(NOTEBOOK_7_OWN)
    name = "nb7.ipynb"
    path = lab["root"] / name
    replies.queue.extend(agent_story())
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell("%load_ext copilot_nb"),
        nbformat.v4.new_code_cell(USER_SOURCE),
        nbformat.v4.new_code_cell("%%copilot --yes\nadd a cell after mine"),
    ]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nbformat.write(notebook, path)
    page.goto(f"{lab['base']}/notebooks/{name}?token={TOKEN}", timeout=LONG)
    page.wait_for_selector(".jp-Notebook .jp-Cell .cm-content", timeout=LONG)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=LONG)
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget")
    first = page.locator(".jp-Notebook .jp-Cell").first
    deadline = time.monotonic() + LONG / 1000
    while first.locator(".jp-InputPrompt").inner_text().strip() == "[ ]:":
        assert time.monotonic() < deadline, "the first cell never ran"
        first.locator(".cm-content").click()
        page.keyboard.press("Shift+Enter")  # dropped while the kernel connects: press again
        time.sleep(1)
    page.keyboard.press("Shift+Enter")
    page.keyboard.press("Control+Enter")
    page.get_by_text("Added a cell after yours").wait_for(timeout=LONG)
    assert sources(page)[2] == AGENT_SOURCE
    shot(page, "live-5-notebook7.png")
    page.keyboard.press("Control+s")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.content.model.dirty")
    no_dialog(page)
    assert on_disk(path)[2] == AGENT_SOURCE
    assert (
        json.loads(path.read_text())["cells"][2]["metadata"]["copilot_nb"]["change"] == "inserted"
    )
    assert not replies.queue


def test_copilot_undo_restores_the_open_cells(page, lab, replies):
    name = "undo.ipynb"
    path = lab["root"] / name

    def rewrite_the_cell(request: ScriptedRequest) -> ScriptedTurn:
        cell_id = cell_id_of(tool_result(request, "l"), "total = 1")
        return reply("", call("replace_cell", id="e", cell_id=cell_id, source="total = 2"))

    replies.queue.extend(
        [reply("", call("list_cells", id="l")), rewrite_the_cell, reply("Changed it.")]
    )
    open_notebook(
        page,
        lab,
        name,
        "%load_ext copilot_nb",
        "total = 1",
        "%%copilot --yes\nchange it",
        "%copilot undo",
    )
    run_cell_at(page, 2)
    page.get_by_text("Changed it.").wait_for(timeout=LONG)
    assert sources(page)[1] == "total = 2"
    run_cell_at(page, 3)
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.cells.get(1)"
        ".sharedModel.getSource() === 'total = 1'",
        timeout=10_000,
    )
    assert "copilot_nb" not in live_model(page)["cells"][1]["metadata"], "the stamp goes too"
    page.get_by_text("taken back in the notebook open in").wait_for(timeout=10_000)
    shot(page, "live-7-undone-by-copilot-undo.png")
    assert on_disk(path)[1] == "total = 1"
    assert not replies.queue


HANDLERS = r"""
() => {
  const bad = [];
  for (const node of document.querySelectorAll(".jp-Notebook, .jp-Notebook *")) {
    for (const attr of node.attributes) {
      const name = attr.name.toLowerCase();
      if (name.startsWith("on")) bad.push(`${node.tagName} ${name}`);
      if (/^\s*(javascript|vbscript|data:text\/html)/i.test(attr.value)) bad.push(`${node.tagName} ${name}`);
    }
  }
  return bad;
}
"""


def test_model_text_put_into_the_open_notebook_never_runs(page, lab, replies):
    from copilot_nb.tools.markdown_loads import remote_loads
    from tests.html_safety import payloads

    everything = "\n\n".join(p["payload"] for p in payloads())
    quiet = "\n\n".join(p["payload"] for p in payloads() if not remote_loads(p["payload"]))
    html_cell = f"from IPython.display import HTML\nHTML({quiet!r})"

    def run_the_html_cell(request: ScriptedRequest) -> ScriptedTurn:
        assert "may not load anything from elsewhere" in tool_result(request, "all")
        cell_id = tool_result(request, "c").split("inserted cell ")[1].split()[0]
        return reply("", call("run_cell", id="r", cell_id=cell_id))

    replies.queue.extend(
        [
            reply(
                "",
                call(
                    "insert_cell",
                    id="all",
                    after_cell_id="#0",
                    cell_type="markdown",
                    source=everything,
                ),
                call("insert_cell", id="m", after_cell_id="#0", cell_type="markdown", source=quiet),
                call("insert_cell", id="c", after_cell_id="#1", cell_type="code", source=html_cell),
            ),
            run_the_html_cell,
            reply("Done."),
        ]
    )
    open_notebook(page, lab, "xss.ipynb", "%load_ext copilot_nb", "%%copilot --yes\nadd them")
    run_cell_at(page, 1)
    page.get_by_text("Done.").wait_for(timeout=LONG)
    assert len(live_model(page)["cells"]) == 4, "the loading Markdown was refused, the rest added"
    markdown = page.locator(".jp-Notebook .jp-Cell").nth(1)
    markdown.locator(".jp-InputPrompt").click()
    page.keyboard.press("Escape")
    page.keyboard.press("Shift+Enter")  # render the agent's Markdown cell, as the user would
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.widgets[1].rendered", timeout=10_000
    )
    time.sleep(1)
    page.locator(".jp-Notebook .jp-Cell").nth(1).scroll_into_view_if_needed()
    shot(page, "live-8-xss-corpus.png")
    assert page.evaluate("window.__xss") is None
    assert page.evaluate(HANDLERS) == []
    assert not replies.queue


def test_the_chat_panel_edits_the_open_notebook_too(page, lab, replies):
    from tests.browser_lab import ask

    replies.queue.extend(
        [
            reply(
                "Adding it.",
                call(
                    "insert_cell",
                    after_cell_id="#0",
                    cell_type="markdown",
                    source="## From the panel",
                ),
            ),
            reply("Added a heading."),
        ]
    )
    open_notebook(page, lab, "panel.ipynb", "import copilot_nb\npanel = copilot_nb.chat()")
    panel = page.locator(".jupyterlab-sidecar .cnb-root")
    panel.wait_for(timeout=LONG)
    ask(panel, "Add a heading after the first cell")
    panel.locator(".cnb-approve-btn").click(timeout=LONG)
    panel.get_by_text("Added a heading.").wait_for(timeout=LONG)
    assert sources(page)[1] == "## From the panel"
    assert live_model(page)["cells"][1]["metadata"]["copilot_nb"]["change"] == "inserted"
    shot(page, "live-9-from-the-panel.png")
    assert not replies.queue


def test_a_kernel_without_copilot_nb_is_probed_once_per_cell_run_not_in_a_loop(page, lab, replies):
    probes: list[float] = []

    def watch(socket: Any) -> None:
        def frame(payload: Any) -> None:
            data = payload if isinstance(payload, bytes) else str(payload).encode()
            if b"comm_info_request" in data:
                probes.append(time.monotonic())

        socket.on("framesent", frame)

    page.on("websocket", watch)
    open_notebook(page, lab, "plain.ipynb", "x = 1", "y = 2")
    page.wait_for_timeout(2_000)  # the sync API sees events only while it is called
    after_first = len(probes)
    run_cell_at(page, 1)
    page.wait_for_timeout(3_000)
    assert 1 <= after_first <= 4, probes
    assert len(probes) - after_first == 1, "one probe per cell run, none after its own reply"


def test_two_views_of_one_notebook_are_one_live_notebook(page, lab, replies):
    replies.queue.extend(
        [
            reply(
                "", call("insert_cell", after_cell_id="#0", cell_type="code", source=AGENT_SOURCE)
            ),
            reply("Added once."),
        ]
    )
    open_notebook(page, lab, "views.ipynb", "%load_ext copilot_nb", "%%copilot --yes\nadd a cell")
    page.evaluate("window.jupyterapp.commands.execute('docmanager:clone')")
    page.wait_for_function("() => document.querySelectorAll('.jp-NotebookPanel').length === 2")
    run_cell_at(page, 1)  # the %%copilot cell, in the new view
    page.get_by_text("Added once.").first.wait_for(timeout=LONG)
    assert sources(page).count(AGENT_SOURCE) == 1
    editors = page.locator(".jp-NotebookPanel .jp-InputArea-editor").filter(has_text=AGENT_SOURCE)
    assert editors.count() == 2, "both views show the one change"
    shot(page, "live-10-two-views.png")
    assert not replies.queue


def test_run_all_on_opening_is_live_from_the_first_request(page, lab, replies):
    """Run All at once: the cell that loads copilot_nb and the request right after it, before
    the page has probed the kernel; the kernel's hello attaches the notebook in time."""
    replies.queue.extend(
        [
            reply(
                "",
                call(
                    "insert_cell", id="i", after_cell_id="#0", cell_type="code", source=AGENT_SOURCE
                ),
            ),
            lambda request: reply(tool_result(request, "i").split(":")[0].split("(")[-1]),
        ]
    )
    open_notebook(page, lab, "runall.ipynb", "%load_ext copilot_nb", "%%copilot --yes\nadd a cell")
    run_next(page)
    page.locator(".jp-Notebook .jp-Cell .jp-InputArea-editor").filter(
        has_text=AGENT_SOURCE
    ).wait_for(timeout=LONG)
    assert on_disk(lab["root"] / "runall.ipynb")[1] != AGENT_SOURCE, "not the file"
    assert not replies.queue
