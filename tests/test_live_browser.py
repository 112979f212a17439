"""The live notebook in a real JupyterLab: the agent edits what the user has open.

The story a user lives: they type a cell and do not save; a `%%copilot` cell asks the agent to add
a cell after theirs and to run theirs. The agent sees the unsaved cell, its new cell appears in
the open notebook at once, the user's cell gets its outputs, the notebook's own undo takes the
agent's cell back (and redo brings it again), and a save raises no "File Changed" dialog and
writes both cells. Screenshots of each step go to test-artifacts/. Notebook 7, the chat panel,
several views and when the page attaches are in test_live_frontends_browser.

A long answer streamed into a `%%copilot` cell grows in place: the kernel sends the page only what
is new of the output (`cell_growth.py`, `outputGrowth.ts`), read off the page's websocket; the
words show as they come, and the cell ends with the whole output as a display update. All the
page receives during the turn stays a small multiple of the answer's own bytes (about 4.7x here:
the growths carry the answer's HTML once, the last update its HTML and its text).
"""

from __future__ import annotations

import time
from typing import Any

import nbformat
import pytest

from copilot_nb.testing import ScriptedRequest, ScriptedTurn, call, reply
from tests.browser_lab import LONG, open_notebook, run_next, shot
from tests.lab_server import SLOWDOWN
from tests.live_page import (
    AGENT_SOURCE,
    USER_SOURCE,
    agent_story,
    cell_id_of,
    live_model,
    no_dialog,
    on_disk,
    run_cell_at,
    sources,
    type_unsaved_cell_below_first,
)
from tests.text_samples import PROSE

pytestmark = pytest.mark.browser


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
    agent_cell.wait_for(state="detached", timeout=int(5_000 * SLOWDOWN))
    assert AGENT_SOURCE not in sources(page)
    assert USER_SOURCE in sources(page), "undo takes back the agent's cell, not the user's"
    shot(page, "live-3-undone.png")
    page.keyboard.press("Shift+Z")  # redo
    agent_cell.wait_for(timeout=int(5_000 * SLOWDOWN))

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
        cell_id = cell_id_of(request.tool_results["l"], "total = 1")
        time.sleep(4)  # the model thinks; meanwhile the user types in that cell
        return reply("", call("replace_cell", id="e", cell_id=cell_id, source="total = 99"))

    replies.queue.extend(
        [
            reply("", call("list_cells", id="l")),
            edit_after_the_user_typed,
            lambda request: reply("Refused: " + request.tool_results["e"]),
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


def test_copilot_undo_restores_the_open_cells(page, lab, replies):
    name = "undo.ipynb"
    path = lab["root"] / name

    def rewrite_the_cell(request: ScriptedRequest) -> ScriptedTurn:
        cell_id = cell_id_of(request.tool_results["l"], "total = 1")
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
        timeout=int(10_000 * SLOWDOWN),
    )
    assert "copilot_nb" not in live_model(page)["cells"][1]["metadata"], "the stamp goes too"
    page.get_by_text("taken back in the notebook open in").wait_for(timeout=int(10_000 * SLOWDOWN))
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
    from copilot_nb.tools.notebook.markdown_loads import remote_loads
    from tests.html_safety import payloads

    everything = "\n\n".join(p["payload"] for p in payloads())
    quiet = "\n\n".join(p["payload"] for p in payloads() if not remote_loads(p["payload"]))
    html_cell = f"from IPython.display import HTML\nHTML({quiet!r})"

    def run_the_html_cell(request: ScriptedRequest) -> ScriptedTurn:
        assert "may not load anything from elsewhere" in request.tool_results["all"]
        cell_id = request.tool_results["c"].split("inserted cell ")[1].split()[0]
        return reply("", call("run_cell", id="r", cell_id=cell_id))

    replies.queue.extend(
        [
            reply(
                "",
                call(
                    "insert_cell",
                    id="all",
                    after_cell_id="#1",
                    cell_type="markdown",
                    source=everything,
                ),
                call("insert_cell", id="m", after_cell_id="#1", cell_type="markdown", source=quiet),
                call("insert_cell", id="c", after_cell_id="#2", cell_type="code", source=html_cell),
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
        "() => window.jupyterapp.shell.currentWidget.content.widgets[1].rendered",
        timeout=int(10_000 * SLOWDOWN),
    )
    time.sleep(1)
    page.locator(".jp-Notebook .jp-Cell").nth(1).scroll_into_view_if_needed()
    shot(page, "live-8-xss-corpus.png")
    assert page.evaluate("window.__xss") is None
    assert page.evaluate(HANDLERS) == []
    assert not replies.queue


def test_ctrl_z_in_a_cell_takes_back_the_agents_edit_of_it(page, lab, replies):
    def rewrite(request: ScriptedRequest) -> ScriptedTurn:
        cell_id = cell_id_of(request.tool_results["l"], "total = 1")
        return reply("", call("replace_cell", id="e", cell_id=cell_id, source="total = 2"))

    replies.queue.extend([reply("", call("list_cells", id="l")), rewrite, reply("Changed.")])
    open_notebook(
        page, lab, "ctrlz.ipynb", "%load_ext copilot_nb", "total = 1", "%%copilot --yes\nchange it"
    )
    run_cell_at(page, 2)
    page.get_by_text("Changed.").wait_for(timeout=LONG)
    assert sources(page)[1] == "total = 2"
    page.locator(".jp-Notebook .jp-Cell").nth(1).locator(".cm-content").click()
    page.keyboard.press("Control+z")
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.cells.get(1)"
        ".sharedModel.getSource() === 'total = 1'",
        timeout=int(5_000 * SLOWDOWN),
    )
    assert not replies.queue


PART = f"## Part {{n}}\n\n{PROSE[:500]} 🐍 café\n\n- a **b** `c`\n\n```python\nx = {{n}}\n```\n\n"
ANSWER = "".join(PART.format(n=n) for n in range(1, 31))  # about 18,000 characters


def received(page: Any) -> list[bytes]:
    """Every frame the page receives on its websockets from now on."""
    frames: list[bytes] = []

    def on_socket(socket: Any) -> None:
        socket.on(
            "framereceived",
            lambda payload: frames.append(
                payload if isinstance(payload, bytes) else str(payload).encode()
            ),
        )

    page.on("websocket", on_socket)
    return frames


def test_a_long_answer_grows_in_place_and_ends_whole(lab, page, replies):
    replies.queue.append(reply(ANSWER, chunk_size=60, delay=0.01))  # ~300 chunks, ~3 s
    frames = received(page)
    open_notebook(page, lab, "grow.ipynb", "%load_ext copilot_nb", "%%copilot\nWrite it.")
    page.locator(".jp-Notebook .jp-Cell").first.locator(".jp-InputPrompt").filter(
        has_text="[1]:"
    ).wait_for(timeout=LONG)
    start = len(frames)
    run_next(page)
    output = page.locator(".jp-Notebook .jp-Cell").nth(1).locator(".jp-OutputArea-output")
    output.get_by_text("Part 3", exact=True).wait_for(timeout=LONG)
    assert output.get_by_text("Part 30", exact=True).count() == 0, "it shows as it comes"
    output.get_by_text("Part 30", exact=True).wait_for(timeout=LONG)
    page.locator(".jp-Notebook .jp-Cell").nth(1).locator(".jp-InputPrompt").filter(
        has_text="[2]:"
    ).wait_for(timeout=LONG)
    page.wait_for_timeout(500)  # the sync API sees websocket events only while it is called
    shot(page, "cell-growth.png")

    turn = frames[start:]
    grows = [f for f in turn if b'"op": "grow"' in f or b'"op":"grow"' in f]
    updates = [f for f in turn if b"update_display_data" in f]
    assert len(grows) >= 3, "the answer grew in place"
    assert len(updates) == 1, "one whole update: the last"
    answer_bytes = len(ANSWER.encode())
    # the growths carry the answer's HTML once (~1.7x its Markdown), the last update its HTML
    # and text (~2.5x); whole updates at the old pace sent over 20x. Counted: what carries the
    # answer (JupyterLab's own status, subshell and debug replies come and go with the load)
    ours = grows + [f for f in turn if b"display_data" in f]
    total = sum(len(f) for f in ours)
    assert total < 6 * answer_bytes, (total, answer_bytes)

    (shown,) = [o for o in live_model(page)["cells"][1]["outputs"] if "text/html" in o["data"]]
    assert ANSWER.strip().splitlines()[-1] in shown["data"]["text/plain"], "the whole answer"
    assert "stream" not in shown["metadata"]["copilot_nb"], "the last update is the record"
    html = output.inner_html()
    assert html.count("<h2>") == 30 and html.count("🐍") == 30
