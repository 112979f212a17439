"""Reviewing the agent's changes in a real JupyterLab (and Notebook 7): Keep or Undo, cell by cell.

The kernel sends the changes as the agent's tools make them in review mode (tests/review_page.py):
a changed cell and an inserted one carry their review record in metadata, a deleted cell's
record comes with its `delete`. The page shows each change where it happened and the user keeps
one, undoes another, undoes a deleted cell, undoes everything, reloads, types in a changed cell;
each time the notebook ends exactly as the user chose, and the kernel hears what they chose.
Screenshots of each step go to test-artifacts/.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.browser_lab import LONG, TOKEN, open_notebook, shot
from tests.html_safety import payloads
from tests.lab_server import run_first_cell
from tests.live_page import no_dialog, on_disk
from tests.review_page import (
    CELLS,
    bars,
    cell,
    cells_of,
    delete,
    edit,
    insert,
    outcomes,
    send,
    watch_events,
)

pytestmark = pytest.mark.browser


def run_cell_1(page: Any) -> None:
    """Give cell 1 outputs and a count, so an Undo has them to restore."""
    page.locator(".jp-Notebook .jp-Cell").nth(1).locator(".jp-InputPrompt").click()
    page.keyboard.press("Escape")
    page.keyboard.press("Control+Enter")
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.cells.get(1).executionCount"
    )


def agent_changes(page: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Edit cell 1 (it ran) and 2, insert after 2, delete 4: the cells as they were before."""
    before = cells_of(page)
    changes = [
        edit(before[1], "a = 10\na * 2", ran=True),
        edit(before[2], "b = 2\nb += 1"),
        insert(before[2]["id"], "inserted = True"),
        delete(before[4], before[3]["id"]),
    ]
    return before, changes


def without_volatile(cell_json: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in cell_json.items() if k not in ("trusted",)}


def as_undo_restores(cell_json: dict[str, Any]) -> dict[str, Any]:
    """The cell as an Undo puts it back: its source, id and type, never its outputs or trust
    (a record can come from anyone's file; the outputs were of code the user no longer has)."""
    restored = without_volatile(cell_json)
    restored["metadata"] = {
        k: v for k, v in restored["metadata"].items() if k not in ("trusted", "copilot_nb")
    }
    if restored["cell_type"] == "code":
        restored["outputs"], restored["execution_count"] = [], None
    return restored


def test_a_cell_the_agent_ran_says_what_its_undo_puts_back_in_the_kernel(page, lab):
    """The kernel kept the variables the run changed: its signed record says what Undo puts
    back, and the bar shows those words instead of the warning that it puts nothing back."""
    name = "kept.ipynb"
    open_notebook(page, lab, name, *CELLS)
    change = edit(cells_of(page)[1], "a = 10\na * 2", ran=True)
    note = "Undo puts back a as it was before the run. Undo cannot put back big (over 256 MB)"
    change["metadata"]["copilot_nb"]["review"]["kernel"] = note
    send(page, lab["root"] / name, "apply", changes=[change])
    bar = cell(page, 1).locator(".cnb-review")
    bar.wait_for(timeout=LONG)
    assert note in bar.inner_text()
    assert "does not roll back" not in bar.inner_text()
    shot(page, "review-kernel-note.png")


def test_keep_one_undo_another_undo_a_deleted_cell_and_the_history_still_works(page, lab):
    name = "review.ipynb"
    events = watch_events(page)
    open_notebook(page, lab, name, *CELLS)
    run_cell_1(page)
    before, changes = agent_changes(page)
    send(page, lab["root"] / name, "apply", changes=changes)

    bars(page).nth(2).wait_for(timeout=LONG)
    summary = page.locator(".cnb-review-notebook .cnb-review-summary")
    assert summary.inner_text() == "copilot changed 4 cells:"
    one = cell(page, 1).locator(".cnb-review")
    assert "copilot changed this cell" in one.inner_text()
    assert "Undo does not roll back the kernel\u2019s state" in one.inner_text(), "it ran"
    assert one.locator(".cnb-diff-removed").all_inner_texts() == ["- a = 1", "- a"]
    assert one.locator(".cnb-diff-added").all_inner_texts() == ["+ a = 10", "+ a * 2"]
    assert cell(page, 3).locator(".cnb-review-insert").inner_text() == "new"
    placeholder = page.locator(".cnb-review-deleted")
    assert "copilot deleted a cell here" in placeholder.inner_text()
    assert "# the agent deletes me" in placeholder.inner_text()
    assert cell(page, 4).locator(".cnb-review-deleted").count() == 1, "under the cell above it"
    shot(page, "review-1-changes.png")

    # keep cell 2: its text stays, its record goes, the stamp stays
    cell(page, 2).locator(".cnb-review-keep").click()
    page.wait_for_function(
        "() => !window.jupyterapp.shell.currentWidget.content.model.cells.get(2)"
        ".getMetadata('copilot_nb').review"
    )
    assert cell(page, 2).locator(".cnb-review").count() == 0
    kept = cells_of(page)[2]
    assert kept["source"] == "b = 2\nb += 1" and kept["metadata"]["copilot_nb"]["change"]
    shot(page, "review-2-kept-one.png")

    # undo cell 1: its source exactly as before, untrusted, without the agent's outputs
    cell(page, 1).locator(".cnb-review-undo").click()
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.cells.get(1)"
        ".sharedModel.getSource() === 'a = 1\\na'"
    )
    assert without_volatile(cells_of(page)[1]) == as_undo_restores(before[1])
    assert not page.evaluate(
        "window.jupyterapp.shell.currentWidget.content.model.cells.get(1).trusted"
    )

    # undo the deleted cell: back after cell 3, exactly as it was
    placeholder.locator(".cnb-review-undo").click()
    placeholder.wait_for(state="detached")
    now = cells_of(page)
    assert [c["source"] for c in now][4:] == ["c = 3", "# the agent deletes me"]
    assert without_volatile(now[5]) == as_undo_restores(before[4])
    shot(page, "review-3-undone-two.png")

    # undo the inserted cell; Z (the notebook's own undo) brings it back, still under review
    assert cell(page, 3).locator(".cnb-review-insert").count() == 1
    cell(page, 3).locator(".cnb-review-undo").click()
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.cells.length === 5"
    )
    assert "inserted = True" not in [c["source"] for c in cells_of(page)]
    cell(page, 0).locator(".jp-InputPrompt").click()
    page.keyboard.press("Escape")
    page.keyboard.press("z")
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.cells.length === 6"
    )
    assert cells_of(page)[3]["source"] == "inserted = True"
    cell(page, 3).locator(".cnb-review-insert").wait_for()

    # Ctrl+Z in cell 1 takes back its Undo: the agent's text again
    cell(page, 1).locator(".cm-content").click()
    page.keyboard.press("Control+z")
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.cells.get(1)"
        ".sharedModel.getSource() === 'a = 10\\na * 2'"
    )
    ids = {c["id"] for c in before}
    deadline = time.monotonic() + 10
    wanted = [
        (before[2]["id"], "kept", "button"),
        (before[1]["id"], "undone", "button"),
        (before[4]["id"], "undone", "button"),
    ]
    while outcomes(events)[:3] != wanted and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    assert outcomes(events)[:3] == wanted
    assert outcomes(events)[3][1:] == ("undone", "button"), "the inserted cell"
    assert outcomes(events)[3][0] not in ids
    review_events = [e for e in events if e["event"] == "review"]
    assert {o["turn"] for e in review_events for o in e["outcomes"]} == {"t1"}
    assert {o["kind"] for e in review_events for o in e["outcomes"]} == {
        "edit",
        "delete",
        "insert",
    }


def test_undo_all_restores_every_cell_and_asks_the_kernel_for_the_files(page, lab):
    name = "undo_all.ipynb"
    events = watch_events(page)
    open_notebook(page, lab, name, *CELLS)
    run_cell_1(page)
    before, changes = agent_changes(page)
    send(page, lab["root"] / name, "apply", changes=changes)
    diff = (
        "--- a/utils.py\n+++ b/utils.py\n@@ -1,2 +1,2 @@\n def f():\n-    return 1\n+    return 2\n"
    )
    files = [{"turn": "t1", "path": "utils.py", "diff": diff, "kind": "edit"}]
    assert send(page, lab["root"] / name, "review_files", files=files) == {"files": 1}

    from playwright.sync_api import expect

    summary = page.locator(".cnb-review-notebook .cnb-review-summary")
    # the bar draws the cells at once and the file once the kernel has vouched for its record
    expect(summary).to_have_text("copilot changed 4 cells and 1 file:", timeout=LONG)
    page.locator(".cnb-review-file summary .cnb-review-path").click()
    file_diff = page.locator(".cnb-review-file .cnb-review-diff")
    assert file_diff.locator(".cnb-diff-added").inner_text() == "+    return 2"
    shot(page, "review-4-notebook-bar.png")

    # next / previous walk the cells under review
    page.evaluate("window.jupyterapp.shell.currentWidget.content.activeCellIndex = 0")
    page.locator(".cnb-review-next").click()
    first = page.evaluate("window.jupyterapp.shell.currentWidget.content.activeCellIndex")
    page.locator(".cnb-review-next").click()
    second = page.evaluate("window.jupyterapp.shell.currentWidget.content.activeCellIndex")
    assert (first, second) == (1, 2)

    page.locator(".cnb-review-prev").click()
    assert page.evaluate("window.jupyterapp.shell.currentWidget.content.activeCellIndex") == 1
    page.locator(".cnb-review-undo-all").click()
    page.wait_for_function(
        "() => !document.querySelector('.jp-Notebook .cnb-review, .jp-Notebook .cnb-review-deleted')"
    )
    now = cells_of(page)
    changed = {before[1]["id"], before[2]["id"], before[4]["id"]}
    assert [without_volatile(c) for c in now] == [
        as_undo_restores(c) if c["id"] in changed else without_volatile(c) for c in before
    ]
    deadline = time.monotonic() + 10
    while not any(e["event"] == "review_file" for e in events) and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    asked = [e for e in events if e["event"] == "review_file"]
    assert [(e["path"], e["outcome"], e["turn"]) for e in asked] == [("utils.py", "undo", "t1")]
    assert sorted(o[1:] for o in outcomes(events)) == [("undone", "all")] * 4
    shot(page, "review-5-undone-all.png")


def test_the_review_survives_a_reload_and_the_saved_file_keeps_the_users_content(page, lab):
    name = "reload.ipynb"
    path = lab["root"] / name
    events = watch_events(page)
    open_notebook(page, lab, name, *CELLS)
    _before, changes = agent_changes(page)
    send(page, path, "apply", changes=changes)
    bars(page).nth(2).wait_for(timeout=LONG)
    page.keyboard.press("Control+s")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.content.model.dirty")
    no_dialog(page)
    assert on_disk(path)[1:4] == ["a = 10\na * 2", "b = 2\nb += 1", "inserted = True"]

    page.goto(f"{lab['base']}/lab/tree/{name}?token={TOKEN}", timeout=LONG)
    bars(page).nth(2).wait_for(timeout=LONG)
    page.locator(".cnb-review-deleted").wait_for()
    assert page.locator(".cnb-review-summary").inner_text() == "copilot changed 4 cells:"
    shot(page, "review-6-after-reload.png")

    page.locator(".cnb-review-keep-all").click()
    page.locator(".cnb-review-notebook").wait_for(state="hidden")
    assert bars(page).count() == 0 and page.locator(".cnb-review-deleted").count() == 0
    assert [c["source"] for c in cells_of(page)][1:4] == [
        "a = 10\na * 2",
        "b = 2\nb += 1",
        "inserted = True",
    ]
    deadline = time.monotonic() + 20  # the page attaches to the kernel again after the reload
    while len(outcomes(events)) < 4 and time.monotonic() < deadline:
        page.wait_for_timeout(200)
    assert sorted(o[1:] for o in outcomes(events)) == [("kept", "all")] * 4
    page.keyboard.press("Control+s")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.content.model.dirty")
    assert "review" not in path.read_text(), "kept: no record left in the file"


def test_typing_in_a_cell_under_review_keeps_it_and_the_typing(page, lab):
    name = "typing.ipynb"
    events = watch_events(page)
    open_notebook(page, lab, name, *CELLS)
    before = cells_of(page)
    send(page, lab["root"] / name, "apply", changes=[edit(before[2], "b = 20")])
    bar = cell(page, 2).locator(".cnb-review")
    bar.wait_for(timeout=LONG)
    cell(page, 2).locator(".cm-line").last.click()
    page.keyboard.press("End")
    page.keyboard.type("  # mine, typed fast")
    note = cell(page, 2).locator(".cnb-review-note")
    note.wait_for()
    assert note.inner_text() == "Kept: you edited this cell."
    assert cell(page, 2).locator(".cnb-review-undo").count() == 0
    shot(page, "review-7-typing-keeps.png")
    page.keyboard.type(" more")
    page.wait_for_timeout(300)
    assert cells_of(page)[2]["source"] == "b = 20  # mine, typed fast more", "typing intact"
    assert "review" not in cells_of(page)[2]["metadata"]["copilot_nb"]
    deadline = time.monotonic() + 10
    while not outcomes(events) and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    assert outcomes(events) == [(before[2]["id"], "kept", "typing")]


def test_the_xss_corpus_is_inert_in_diffs_placeholders_and_files(page, lab):
    name = "xss_review.ipynb"
    corpus = [p["payload"] for p in payloads()]
    text = "\n".join(line for p in corpus for line in p.splitlines())
    open_notebook(page, lab, name, *CELLS)
    before = cells_of(page)
    changes = [
        edit(before[1], text),
        insert(before[2]["id"], text),
        delete({**before[4], "source": before[4]["source"]}, before[3]["id"]),
    ]
    changes[2]["review"]["before"]["source"] = text
    send(page, lab["root"] / name, "apply", changes=changes)
    path = "<img src=x onerror=\"window.__xss='file'\">.py"
    diff = "\n".join(f"+{line}" for line in text.splitlines())
    send(
        page,
        lab["root"] / name,
        "review_files",
        files=[{"turn": "t1", "path": path, "diff": diff, "kind": "<b>edit</b>"}],
    )
    page.locator(".cnb-review-file summary .cnb-review-path").wait_for(timeout=LONG)
    page.locator(".cnb-review-file summary .cnb-review-path").click()
    page.wait_for_timeout(500)
    found = page.evaluate(
        """() => {
      const ours = document.querySelectorAll(
        '.cnb-review, .cnb-review-deleted, .cnb-review-notebook');
      const allowed = new Set(['DIV', 'SPAN', 'BUTTON', 'DETAILS', 'SUMMARY']);
      const bad = [];
      for (const root of ours) {
        for (const node of [root, ...root.querySelectorAll('*')]) {
          if (!allowed.has(node.tagName)) bad.push(node.tagName);
          for (const attr of node.attributes) {
            // the header lays the bar out with inline sizes (ours and Lumino's, never text's)
            const layout = node === root && attr.name === 'style' && !/url|expression/i.test(attr.value);
            if (!['class', 'type', 'open'].includes(attr.name) && !layout) bad.push(attr.name);
          }
        }
      }
      return { bad, xss: window.__xss === undefined ? null : String(window.__xss) };
    }"""
    )
    assert found == {"bad": [], "xss": None}
    shown = page.locator(".cnb-review-notebook .cnb-review-path").inner_text()
    assert shown == path, "the path shows as text"
    added = cell(page, 1).locator(".cnb-diff-added").all_inner_texts()
    assert [line[2:] for line in added] == text.splitlines()
    removed = page.locator(".cnb-review-deleted .cnb-diff-removed").all_inner_texts()
    assert [line[2:] for line in removed][:6] == text.splitlines()[:6]
    shot(page, "review-8-xss-inert.png")


NOTEBOOK_7_OWN = __import__(
    "tests.test_live_frontends_browser", fromlist=["NOTEBOOK_7_OWN"]
).NOTEBOOK_7_OWN


def test_notebook_7_shows_the_review_and_undoes(page, lab, known_page_errors):
    from tests.lab_server import write_notebook

    known_page_errors.append(NOTEBOOK_7_OWN)
    name = "review7.ipynb"
    write_notebook(lab["root"] / name, *CELLS)
    page.goto(f"{lab['base']}/notebooks/{name}?token={TOKEN}", timeout=LONG)
    page.wait_for_selector(".jp-Notebook .jp-Cell .cm-content", timeout=LONG)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=LONG)
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget")
    run_first_cell(page)  # the kernel chooser answered, pressed again if dropped
    before, changes = agent_changes(page)
    send(page, lab["root"] / name, "apply", changes=changes)
    bars(page).nth(2).wait_for(timeout=LONG)
    assert page.locator(".cnb-review-summary").inner_text() == "copilot changed 4 cells:"
    shot(page, "review-9-notebook7.png")
    page.locator(".cnb-review-deleted .cnb-review-undo").click()
    cell(page, 2).locator(".cnb-review-undo").click()
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.cells.length === 6"
    )
    now = cells_of(page)
    assert without_volatile(now[2]) == as_undo_restores(before[2])
    assert without_volatile(now[5]) == as_undo_restores(before[4])


def test_two_cells_deleted_in_a_row_come_back_in_their_order_whichever_is_undone_first(page, lab):
    name = "two_deleted.ipynb"
    open_notebook(page, lab, name, *CELLS)
    before = cells_of(page)
    changes = [delete(before[3], before[2]["id"]), delete(before[4], before[3]["id"])]
    send(page, lab["root"] / name, "apply", changes=changes)
    placeholders = page.locator(".cnb-review-deleted")
    placeholders.nth(1).wait_for(timeout=LONG)
    assert cell(page, 2).locator(".cnb-review-deleted").count() == 2, "both under cell 2"
    assert page.locator(".cnb-review-summary").inner_text() == "copilot changed 2 cells:"
    placeholders.filter(has_text="# the agent deletes me").locator(".cnb-review-undo").click()
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.cells.length === 4"
    )
    placeholders.filter(has_text="c = 3").locator(".cnb-review-undo").click()
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.cells.length === 5"
    )
    now = cells_of(page)
    assert [without_volatile(c) for c in now[1:3]] == [without_volatile(c) for c in before[1:3]]
    assert [without_volatile(c) for c in now[3:]] == [as_undo_restores(c) for c in before[3:]]
    assert placeholders.count() == 0


def test_a_files_diff_toggle_is_marked_and_keep_drops_the_count(page, lab):
    name = "files.ipynb"
    open_notebook(page, lab, name, *CELLS)
    diff = "--- a/{0}\n+++ b/{0}\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"
    files = [
        {"turn": "t1", "path": path, "diff": diff.format(path), "kind": "edit"}
        for path in ("a.py", "b.py")
    ]
    assert send(page, lab["root"] / name, "review_files", files=files) == {"files": 2}

    from playwright.sync_api import expect

    summary = page.locator(".cnb-review-notebook .cnb-review-summary")
    expect(summary).to_have_text("copilot changed 2 files:", timeout=LONG)
    first = page.locator(".cnb-review-file").first
    toggle = first.locator(".cnb-review-toggle")
    assert toggle.inner_text() == "▸ diff", "the click that shows the diff is marked"
    toggle.click()
    expect(toggle).to_have_text("▾ diff")
    assert first.locator(".cnb-diff-added").inner_text() == "+x = 2"
    shot(page, "screenshots/review-file-toggle.png")

    first.locator(".cnb-review-keep").click()
    expect(summary).to_have_text("copilot changed 1 file:", timeout=LONG)
    assert page.locator(".cnb-review-file").count() == 1
