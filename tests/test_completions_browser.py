"""Completions while you type, in a real JupyterLab in headless Chromium with the real kernel:
a notebook that defined `df`, typing `df.` shows ghost text naming one of its columns (the model
knows it only from the kernel's prompt), Tab takes it, Escape dismisses it, typing on cancels
the request in flight; a kernel busy in a cell still completes (its comm runs on a subshell);
without subshells the status bar says completions wait for the kernel.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import nbformat
import pytest

from copilot_nb.testing import ScriptedServer, fail, reply
from tests.browser_lab import ARTIFACTS, LONG, TOKEN, Replies, shot
from tests.completion_page import (
    ATTACHED,
    GHOSTS_SEEN,
    SETUP,
    CompletionModel,
    Router,
    cell,
    ghosts_seen,
    source_of,
    type_in,
)
from tests.helpers import NOTEBOOK_7_OWN
from tests.lab_server import SLOWDOWN, run_first_cell, running_lab, show_notebook, write_notebook

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def completions() -> CompletionModel:
    return CompletionModel()


@pytest.fixture(scope="module")
def lab(
    tmp_path_factory: pytest.TempPathFactory,
    shared_replies: Replies,
    completions: CompletionModel,
) -> Iterator[dict[str, Any]]:
    """JupyterLab whose kernels' model completes from the prompt and scripts the rest."""
    from tests.lab_server import CHROMIUM

    if not CHROMIUM.exists():
        pytest.skip(f"needs Debian's Chromium at {CHROMIUM}")
    server = ScriptedServer(responder=Router(completions, shared_replies)).start()
    env = {
        "COPILOT_NB_MODEL": "openai:scripted",
        "OPENAI_BASE_URL": server.url,
        "OPENAI_API_KEY": "k",
    }
    try:
        with running_lab(tmp_path_factory.mktemp("lab"), env=env, completions=True) as lab:
            yield lab
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def fresh_model(completions: CompletionModel) -> Iterator[None]:
    completions.delays.clear()
    completions.failure = None
    yield
    completions.delays.clear()
    completions.failure = None


def open_with_df(page: Any, lab: dict[str, Any], name: str, *more: str) -> None:
    """A notebook that defined `df`, attached to the front end (its second cell, collapsed,
    waits for that); cell 2 is empty for typing, the `more` cells follow."""
    waiting = nbformat.v4.new_code_cell(ATTACHED)
    waiting.metadata["jupyter"] = {"source_hidden": True, "outputs_hidden": True}
    cells = [waiting, *(nbformat.v4.new_code_cell(text) for text in ("", *more))]
    write_notebook(lab["root"] / name, SETUP, cells=cells)
    show_notebook(page, lab, name)
    dialogs = page.locator(".jp-Dialog")
    assert dialogs.count() == 0, f"a dialog on opening: {dialogs.all_inner_texts()}"
    run_first_cell(page)
    page.keyboard.press("Shift+Enter")  # the second cell
    page.wait_for_function(
        "() => JSON.stringify(window.jupyterapp.shell.currentWidget.content.model.cells.get(1)"
        ".sharedModel.outputs).includes('attached: ')",
        timeout=LONG,
    )
    said = page.evaluate(
        "() => JSON.stringify(window.jupyterapp.shell.currentWidget.content.model.cells.get(1)"
        ".sharedModel.outputs)"
    )
    assert "attached: True" in said, f"the notebook did not attach in time: {said[:300]}"
    page.evaluate(GHOSTS_SEEN)


def ghost(page: Any) -> Any:
    return cell(page, 2).locator(".jp-GhostText")


def ghost_shows(page: Any, text: str, timeout: float = 15_000) -> None:
    """Wait until the ghost text reads `text` (it streams in: its start shows first)."""
    from playwright.sync_api import expect

    expect(ghost(page)).to_have_text(text, timeout=timeout)


def test_ghost_text_names_a_column_of_df_and_tab_takes_it(page, lab, completions):
    open_with_df(page, lab, "tab.ipynb")
    type_in(page, 2, "df.")
    ghost_shows(page, "revenue_eur.mean()", timeout=int(15_000 * SLOWDOWN))
    assert completions.asked("df.") == 1
    shot(page, "completions-1-ghost.png")
    shot_docs(page)
    page.keyboard.press("Tab")
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.cells.get(2)"
        ".sharedModel.getSource() === 'df.revenue_eur.mean()'"
    )
    assert ghost(page).count() == 0
    # the answer is typed in: asked again right after it, the front end knows there is no more
    time.sleep(0.6)
    assert source_of(page, 2) == "df.revenue_eur.mean()"
    assert ghost(page).count() == 0


def test_escape_dismisses_and_the_same_place_again_comes_from_the_cache(page, lab, completions):
    open_with_df(page, lab, "escape.ipynb")
    type_in(page, 2, "df.")
    ghost(page).wait_for(timeout=int(15_000 * SLOWDOWN))
    page.keyboard.press("Escape")
    ghost(page).wait_for(state="detached", timeout=int(5_000 * SLOWDOWN))
    assert source_of(page, 2) == "df."
    asked = completions.asked("df.")
    # back in the cell, a letter and Backspace: the same place again, answered at once
    type_in(page, 2, "x")
    page.keyboard.press("Backspace")
    ghost_shows(page, "revenue_eur.mean()", timeout=int(5_000 * SLOWDOWN))
    assert source_of(page, 2) == "df."
    assert completions.asked("df.") == asked


def test_typing_on_cancels_the_request_in_flight(page, lab, completions):
    open_with_df(page, lab, "typing.ipynb")
    completions.delays["df.rev"] = 3.0  # the model is slow here; the user is not
    type_in(page, 2, "df.rev")
    deadline = time.monotonic() + 10
    while completions.asked("df.rev") == 0:
        assert time.monotonic() < deadline, "the kernel never asked the model"
        time.sleep(0.05)
    page.keyboard.type("en", delay=30)
    ghost_shows(page, "ue_eur.mean()", timeout=int(15_000 * SLOWDOWN))
    time.sleep(3.5)  # the slow answer would have come by now
    assert not [seen for seen in ghosts_seen(page) if seen.startswith("enue")], ghosts_seen(page)
    assert ghost(page).inner_text() == "ue_eur.mean()"
    assert source_of(page, 2) == "df.reven"


def test_typing_along_the_ghost_text_keeps_it_without_asking_again(page, lab, completions):
    open_with_df(page, lab, "along.ipynb")
    type_in(page, 2, "df.")
    ghost_shows(page, "revenue_eur.mean()")
    asked = len(completions.prompts)
    page.keyboard.type("reve", delay=60)
    ghost_shows(page, "nue_eur.mean()")
    assert len(completions.prompts) == asked


def test_a_kernel_busy_in_a_cell_still_completes(page, lab, completions):
    open_with_df(page, lab, "busy.ipynb", "import time\ntime.sleep(30)")
    cell(page, 3).locator(".jp-InputPrompt").click()
    page.keyboard.press("Control+Enter")
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='busy']")
    cell(page, 3).locator(".jp-InputPrompt").filter(has_text="[*]:").wait_for()
    type_in(page, 2, "df.")
    ghost_shows(page, "revenue_eur.mean()", timeout=int(15_000 * SLOWDOWN))
    assert cell(page, 3).locator(".jp-InputPrompt").inner_text().strip() == "[*]:"
    shot(page, "completions-2-busy-kernel.png")
    page.keyboard.press("Escape")
    page.keyboard.press("i")
    page.keyboard.press("i")  # interrupt the sleep
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=LONG)


def test_a_model_error_shows_in_the_status_bar_not_as_ghost_text(page, lab, completions):
    completions.failure = fail(401, "Incorrect API key provided")
    open_with_df(page, lab, "error.ipynb")
    type_in(page, 2, "df.")
    status = page.locator(".cnb-CompletionStatus[data-kind='error']")
    status.wait_for(timeout=int(15_000 * SLOWDOWN))
    assert status.inner_text().startswith("copilot: ")
    assert len(status.inner_text()) <= 40, "JupyterLab's own status bar items keep their room"
    title = status.get_attribute("title") or ""
    assert "401" in title or "API key" in title, "the whole message is the item's tooltip"
    assert ghost(page).count() == 0
    shot(page, "completions-3-error.png")
    completions.failure = None
    page.keyboard.type("r", delay=30)
    ghost_shows(page, "evenue_eur.mean()", timeout=int(15_000 * SLOWDOWN))
    page.locator(".cnb-CompletionStatus[data-kind='idle']").wait_for(state="attached")


def shot_docs(page: Any) -> None:
    """The README's picture (docs/images/completions.png is this one): the cells, the ghost text."""
    hide = "h => { document.querySelectorAll('.jp-Notebook .jp-Cell')[1].style.display = h; }"
    page.evaluate(hide, "none")  # the cell that waited for the attachment: not the story
    box = cell(page, 0).bounding_box()
    last = cell(page, 2).bounding_box()
    assert box and last
    page.screenshot(
        path=str(ARTIFACTS / "completions-docs.png"),
        clip={
            "x": box["x"],
            "y": box["y"],
            "width": min(box["width"], 760),
            "height": last["y"] + last["height"] - box["y"] + 8,
        },
    )
    page.evaluate(hide, "")


@pytest.fixture
def no_subshells(lab: dict[str, Any]) -> Iterator[None]:
    """JupyterLab sends comm messages on the kernel's main shell (as before 4.4, or with a
    kernel without subshells): read from the page's settings at its next load."""
    folder = lab["home"] / "settings" / "@jupyterlab" / "apputils-extension"
    folder.mkdir(parents=True, exist_ok=True)
    setting = folder / "kernels-settings.jupyterlab-settings"
    setting.write_text(json.dumps({"commsOverSubshells": "disabled"}))
    yield
    setting.unlink()


def test_without_subshells_a_blocking_cell_makes_completions_wait(
    page, lab, completions, no_subshells
):
    open_with_df(page, lab, "wait.ipynb", "import time\ntime.sleep(6)")
    cell(page, 3).locator(".jp-InputPrompt").click()
    page.keyboard.press("Control+Enter")
    cell(page, 3).locator(".jp-InputPrompt").filter(has_text="[*]:").wait_for()
    type_in(page, 2, "df.")
    waiting = page.locator(".cnb-CompletionStatus[data-kind='waiting']")
    waiting.wait_for(timeout=int(5_000 * SLOWDOWN))
    assert waiting.inner_text() == "copilot: completions wait for the kernel"
    shot(page, "completions-4-waiting.png")
    page.keyboard.type("r", delay=30)  # held in the page: one request waits in the kernel
    ghost_shows(page, "evenue_eur.mean()", timeout=int(20_000 * SLOWDOWN))
    assert cell(page, 3).locator(".jp-InputPrompt").inner_text().strip() == "[3]:"
    page.locator(".cnb-CompletionStatus[data-kind='idle']").wait_for(state="attached")
    stale = [seen for seen in ghosts_seen(page) if seen.startswith("revenue")]
    assert not stale  # the answer for `df.` never shows


def test_without_subshells_a_copilot_turn_and_completions_do_not_wait_for_each_other(
    page, lab, replies, completions, no_subshells
):
    def slow_turn(request: Any) -> Any:
        time.sleep(10)
        return reply("The turn is done.")

    replies.queue.append(slow_turn)
    open_with_df(page, lab, "turn.ipynb", "%%copilot\nsummarise df")
    cell(page, 3).locator(".jp-InputPrompt").click()
    page.keyboard.press("Control+Enter")
    cell(page, 3).locator(".jp-InputPrompt").filter(has_text="[*]:").wait_for()
    type_in(page, 2, "df.")
    ghost_shows(
        page, "revenue_eur.mean()", timeout=int(8_000 * SLOWDOWN)
    )  # before the turn's model answers
    assert cell(page, 3).locator(".jp-InputPrompt").inner_text().strip() == "[*]:"
    page.get_by_text("The turn is done.").wait_for(timeout=LONG)
    assert not replies.queue


def test_notebook_7_shows_the_ghost_text_too(page, lab, completions, known_page_errors):

    known_page_errors.append(NOTEBOOK_7_OWN)
    name = "nb7-completions.ipynb"
    write_notebook(lab["root"] / name, SETUP, ATTACHED, "")
    page.goto(f"{lab['base']}/notebooks/{name}?token={TOKEN}", timeout=LONG)
    page.wait_for_selector(".jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=LONG)
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.shell.currentWidget")
    run_first_cell(page)
    page.keyboard.press("Shift+Enter")
    page.get_by_text("attached: True").wait_for(timeout=LONG)
    page.evaluate(GHOSTS_SEEN)
    type_in(page, 2, "df.u")
    ghost_shows(page, "nits_sold.mean()", timeout=int(15_000 * SLOWDOWN))
    shot(page, "completions-5-notebook7.png")
    page.keyboard.press("Tab")
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.cells.get(2)"
        ".sharedModel.getSource() === 'df.units_sold.mean()'"
    )


def test_turned_off_in_the_settings_nothing_is_asked(page, lab, completions):
    url = f"{lab['base']}/lab/api/settings/copilot-nb:inline-completions?token={TOKEN}"
    raw = json.dumps({"enabled": False})
    assert httpx.put(url, json={"raw": raw}, timeout=10).status_code == 204
    try:
        open_with_df(page, lab, "off.ipynb")
        # a kernel of an earlier test may still be asking: only this notebook's prompts count
        type_in(page, 2, "completions_off = True\ndf.")
        page.wait_for_timeout(1500)
        assert ghost(page).count() == 0
        with completions.lock:
            assert not [p for p in completions.prompts if "completions_off" in p]
    finally:
        assert httpx.put(url, json={"raw": "{}"}, timeout=10).status_code == 204


def test_ctrl_right_takes_the_next_word_and_ctrl_shift_right_the_line(page, lab, completions):
    open_with_df(page, lab, "partial.ipynb")
    type_in(page, 2, "df.")
    ghost_shows(page, "revenue_eur.mean()")
    asked = len(completions.prompts)
    page.keyboard.press("Control+ArrowRight")
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.cells.get(2)"
        ".sharedModel.getSource() === 'df.revenue_eur'"
    )
    ghost_shows(page, ".mean()")  # the rest stays, asked for nothing new
    page.keyboard.press("Control+Shift+ArrowRight")
    page.wait_for_function(
        "() => window.jupyterapp.shell.currentWidget.content.model.cells.get(2)"
        ".sharedModel.getSource() === 'df.revenue_eur.mean()'"
    )
    assert len(completions.prompts) == asked
    # with no ghost text the keys are the editor's own again (a word to the left, here)
    page.keyboard.press("Control+ArrowLeft")
    page.keyboard.press("Control+ArrowRight")
    assert source_of(page, 2) == "df.revenue_eur.mean()"


def test_the_model_chosen_in_the_settings_completes(page, lab, completions):
    url = f"{lab['base']}/lab/api/settings/copilot-nb:inline-completions?token={TOKEN}"
    raw = json.dumps({"model": "openai:completer-small"})
    assert httpx.put(url, json={"raw": raw}, timeout=10).status_code == 204
    try:
        open_with_df(page, lab, "model.ipynb")
        type_in(page, 2, "df.u")
        ghost_shows(page, "nits_sold.mean()")
        assert completions.models[-1] == "completer-small"
    finally:
        assert httpx.put(url, json={"raw": "{}"}, timeout=10).status_code == 204


def test_after_a_cell_changes_df_the_ghost_text_names_its_new_columns(page, lab, completions):
    open_with_df(page, lab, "rerun.ipynb", 'df = pd.DataFrame({"weight_kg": [1.0]})')
    type_in(page, 2, "df.")
    ghost_shows(page, "revenue_eur.mean()")
    cell(page, 3).locator(".jp-InputPrompt").click()
    page.keyboard.press("Control+Enter")
    cell(page, 3).locator(".jp-InputPrompt").filter(has_text="[3]:").wait_for()
    type_in(page, 2, "x")
    page.keyboard.press("Backspace")  # the same place as before: not answered from the cache
    ghost_shows(page, "weight_kg.mean()")
