"""A notebook from elsewhere carrying crafted review records, opened in a real JupyterLab: none
is offered as the agent's change, and no Undo runs a script, before or after save and reload.

The file on disk carries what someone could send: a cell record whose `before` is a trusted code
cell with a script in its HTML output, one signed with another user's key, an "insert" record
on the user's own cell (its Undo would delete it), fake deleted cells and a fake file change.
With the kernel attached (it could vouch), the page offers none of them. Then the kernel sends
two changes it did sign whose `before` is still such a trusted code cell: their Undo puts back
source text only, as an untrusted cell without outputs, and the script never runs.
"""

from __future__ import annotations

import secrets
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest

from copilot_nb.models.cassettes.signing import signature
from copilot_nb.tools.review import proof as review_proof
from tests.browser_lab import LONG, TOKEN, shot
from tests.lab_server import run_first_cell, show_notebook
from tests.live_page import live_model, no_dialog
from tests.review_page import send

pytestmark = pytest.mark.browser

SCRIPT = "window.__pwned = (window.__pwned || 0) + 1"
HTML = f'<b>hi</b><script>{SCRIPT}</script><img src="data:," onload="{SCRIPT}">'


def trusted_code(source: str, cell_id: str | None = None) -> dict[str, Any]:
    """A `before` no Undo may bring back as it says: trusted, with a script in its output."""
    cell = {
        "cell_type": "code",
        "source": source,
        "metadata": {"trusted": True},
        "execution_count": 1,
        "outputs": [
            {"output_type": "display_data", "data": {"text/html": HTML}, "metadata": {}},
        ],
    }
    return {**cell, "id": cell_id} if cell_id else cell


def other_users(parts: list[Any]) -> str:
    return signature(secrets.token_bytes(32), parts)


def crafted_notebook(path: Path) -> list[str]:
    """The notebook someone sent; the ids of its cells."""
    cells = [
        nbformat.v4.new_code_cell("%load_ext copilot_nb"),
        nbformat.v4.new_code_cell("a = 1"),
        nbformat.v4.new_markdown_cell("notes"),
        nbformat.v4.new_code_cell("mine = 3"),
        nbformat.v4.new_markdown_cell("# title"),
        nbformat.v4.new_code_cell("keep = 5"),
    ]
    ids = [cell.id for cell in cells]
    unsigned = {"turn": "t1", "kind": "edit", "before": trusted_code("pwned = 1"), "ran": False}
    foreign = {"turn": "t1", "kind": "edit", "before": trusted_code("pwned = 2"), "ran": True}
    foreign["sig"] = other_users(review_proof.cell_parts(ids[2], foreign))
    insert = {"turn": "t1", "kind": "insert", "before": None, "ran": False}
    insert["sig"] = other_users(review_proof.cell_parts(ids[3], insert))
    for index, record in ((1, unsigned), (2, foreign), (3, insert)):
        cells[index].metadata["copilot_nb"] = {"change": "edited", "review": record}
    deleted = {"turn": "t1", "before": trusted_code("fake = 1", "fake1"), "after_id": ids[1]}
    signed_elsewhere = {"turn": "t1", "before": trusted_code("fake = 2", "fake2"), "after_id": None}
    signed_elsewhere["sig"] = other_users(review_proof.deleted_parts(signed_elsewhere))
    files = [{"turn": "t1", "path": "x.py", "diff": "+++ b/x.py\n+evil\n", "kind": "edit"}]
    notebook = nbformat.v4.new_notebook(cells=cells)
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    notebook.metadata["copilot_nb"] = {
        "review_deleted": [deleted, signed_elsewhere],
        "review_files": files,
    }
    nbformat.write(notebook, path)
    return ids


def pwned(page: Any) -> Any:
    """How often the payload ran, once two frames have drawn what the model holds."""
    return page.evaluate(
        "() => new Promise(ok => requestAnimationFrame(() => requestAnimationFrame("
        "() => ok(window.__pwned ?? 0))))"
    )


def offered(page: Any) -> dict[str, Any]:
    return {
        "bars": page.locator(".jp-Notebook .jp-Cell > .cnb-review").count(),
        "deleted": page.locator(".cnb-review-deleted").count(),
        "files": page.locator(".cnb-review-file").count(),
    }


def watch_answers(page: Any) -> list[str]:
    """The kernel's `review_verified` answers the page receives from now on."""
    seen: list[str] = []

    def on_frame(payload: Any) -> None:
        text = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else str(payload)
        if "review_verified" in text:
            seen.append(text)

    page.on("websocket", lambda socket: socket.on("framereceived", on_frame))
    return seen


def answered(page: Any, answers: list[str], before: int) -> None:
    """Wait for the kernel's answer about the records the page found (after `before` ones)."""
    deadline = time.monotonic() + 20
    while len(answers) == before and time.monotonic() < deadline:
        page.wait_for_timeout(100)
    assert len(answers) > before, "the page asked the kernel about the records it found"


def model_cell(page: Any, index: int) -> dict[str, Any]:
    return dict(
        page.evaluate(
            "i => { const c = window.jupyterapp.shell.currentWidget.content.model.cells.get(i);"
            " return { ...c.toJSON(), trusted: c.trusted }; }",
            index,
        )
    )


def test_crafted_records_are_not_offered_and_no_undo_runs_a_script(page, lab) -> None:
    name = "sent_to_me.ipynb"
    path = lab["root"] / name
    ids = crafted_notebook(path)
    answers = watch_answers(page)
    show_notebook(page, lab, name)
    run_first_cell(page)
    page.wait_for_function(  # %load_ext ran: the session's kernel is the one it keeps
        "() => window.jupyterapp.shell.currentWidget.content.model.cells.get(0).executionCount",
        timeout=LONG,
    )
    send(page, path, "snapshot")  # attached: the kernel could vouch for what it signed
    answered(page, answers, 0)
    assert offered(page) == {"bars": 0, "deleted": 0, "files": 0}
    cells = live_model(page)["cells"]

    # changes this kernel signed, whose `before` is still a trusted code cell with a script
    title = trusted_code("# title", ids[4])
    edit = {
        "kind": "set_source",
        "cell_id": ids[4],
        "expected": "# title",
        "source": "# a new title",
        "metadata": {
            "copilot_nb": {
                "change": "edited",
                "review": {"turn": "t2", "kind": "edit", "before": title, "ran": False},
            }
        },
    }
    gone = {"turn": "t2", "before": trusted_code("keep = 5", ids[5]), "after_id": ids[4]}
    delete = {"kind": "delete", "cell_id": ids[5], "expected": "keep = 5", "review": gone}
    assert cells[5]["source"] == "keep = 5"
    send(page, path, "apply", changes=[edit, delete])

    page.locator(".jp-Notebook .jp-Cell > .cnb-review").first.wait_for(timeout=LONG)
    page.locator(".cnb-review-deleted").wait_for()
    assert page.locator(".cnb-review-summary").inner_text() == "copilot changed 2 cells:"
    assert offered(page) == {"bars": 1, "deleted": 1, "files": 0}, "only what the kernel signed"
    assert (
        page.locator(".jp-Notebook .jp-Cell")
        .nth(4)
        .locator(":scope > .cnb-review .cnb-review-undo")
        .count()
        == 1
    )
    assert "keep = 5" in page.locator(".cnb-review-deleted").inner_text()
    shot(page, "review-crafted-1-offered.png")

    page.locator(".jp-Notebook .jp-Cell").nth(4).locator(
        ":scope > .cnb-review .cnb-review-undo"
    ).click()
    page.locator(".cnb-review-deleted .cnb-review-undo").click()
    page.locator(".cnb-review-notebook").wait_for(state="hidden")
    restored, back = model_cell(page, 4), model_cell(page, 5)
    assert (restored["cell_type"], restored["source"]) == ("markdown", "# title"), "its own type"
    assert "trusted" not in restored["metadata"] and not restored["trusted"]
    assert (back["cell_type"], back["source"], back["id"]) == ("code", "keep = 5", ids[5])
    assert back["outputs"] == [] and back["execution_count"] is None
    assert back["metadata"] == {} and not back["trusted"]
    assert [c["source"] for c in live_model(page)["cells"]][1:4] == ["a = 1", "notes", "mine = 3"]
    assert pwned(page) == 0
    shot(page, "review-crafted-2-undone.png")

    page.keyboard.press("Control+s")
    page.wait_for_function("() => !window.jupyterapp.shell.currentWidget.content.model.dirty")
    no_dialog(page)
    saved = nbformat.read(path, 4)
    assert all(not c.get("outputs") for c in saved.cells[4:])
    assert len(saved.metadata["copilot_nb"]["review_deleted"]) == 2, "inert, left as they were"

    asked = len(answers)
    page.goto(f"{lab['base']}/lab/tree/{name}?token={TOKEN}", timeout=LONG)
    page.wait_for_selector(".jp-Notebook .jp-Cell .cm-content", timeout=LONG)
    answered(page, answers, asked)
    page.locator(".jp-Notebook .jp-Cell").nth(5).wait_for()
    assert offered(page) == {"bars": 0, "deleted": 0, "files": 0}
    assert page.locator(".cnb-review-notebook").is_hidden()
    assert pwned(page) == 0
    shot(page, "review-crafted-3-reloaded.png")
