"""Saved conversations in a real JupyterLab through headless Chromium: the chat panel opened
after a browser reload, and again after a kernel restart, shows the conversation as it was (the
request, the tool card, the answer) and continues it."""

from __future__ import annotations

import pytest

from copilot_nb.testing import call, reply
from tests.browser_lab import LONG, ask, open_notebook, shot
from tests.helpers import RESTART_CANCELS_SUBSHELL
from tests.lab_server import run_first_cell, show_notebook

pytestmark = pytest.mark.browser

PANEL = ".jupyterlab-sidecar .cnb-root"


def test_the_panel_keeps_its_transcript_across_a_reload_and_a_restart(
    page, lab, replies, known_page_errors
):
    known_page_errors.append(RESTART_CANCELS_SUBSHELL)
    (lab["root"] / "notes.txt").write_text("remember the milk\n")
    seen: list[list[str]] = []

    def answer(text: str):
        def step(request):
            seen.append([m["content"] for m in request.messages if m["role"] == "user"])
            return reply(text)

        return step

    replies.queue.extend(
        [
            reply("", call("read_file", path="notes.txt")),
            reply("Your notes say **remember the milk**."),
            answer("After the reload: still here."),
            answer("After the restart: still here."),
        ]
    )
    open_notebook(page, lab, "kept.ipynb", "import copilot_nb\npanel = copilot_nb.chat()")
    panel = page.locator(PANEL).last
    panel.wait_for(timeout=LONG)
    ask(panel, "What do my notes say?")
    panel.locator(".cnb-answer strong").get_by_text("remember the milk").wait_for(timeout=LONG)
    panel.locator(".cnb-send").wait_for()

    # a browser reload: the page opens afresh on the same kernel, and a panel shows it all
    show_notebook(page, lab, "kept.ipynb")
    run_first_cell(page)
    panel = page.locator(PANEL).last
    panel.locator(".cnb-answer strong").get_by_text("remember the milk").wait_for(timeout=LONG)
    assert panel.locator(".cnb-user").first.inner_text() == "What do my notes say?"
    assert panel.locator(".cnb-tool .cnb-tool-name").first.inner_text() == "read_file"
    ask(panel, "Are you still there?")
    panel.get_by_text("After the reload: still here.").wait_for(timeout=LONG)
    panel.locator(".cnb-send").wait_for()
    shot(panel, "conversation-1-after-reload.png")

    # a kernel restart: the extension reopens the panel on the new kernel (chatReopen.ts), which
    # resumes the saved conversation and shows it. (Reloading and running chat() again raced
    # that reopen: a second panel could appear after the one the test typed into.)
    before = page.locator(PANEL).last.element_handle()
    page.evaluate("window.jupyterapp.shell.currentWidget.sessionContext.session.kernel.restart()")
    page.wait_for_function("(old) => !old.isConnected", arg=before, timeout=LONG)  # replaced
    panel = page.locator(f"{PANEL}:not(.cnb-lost)").last
    panel.get_by_text("After the reload: still here.").wait_for(timeout=LONG)
    assert panel.locator(".cnb-user").count() == 2
    assert panel.locator(".cnb-tool").count() == 1
    meter = panel.locator(".cnb-meter")
    assert " in · " in meter.inner_text()  # the saved turns' tokens
    assert "cost unknown: no price set for scripted" in (meter.get_attribute("title") or "")
    ask(panel, "And now?")
    panel.get_by_text("After the restart: still here.").wait_for(timeout=LONG)
    shot(panel, "conversation-2-after-restart.png")
    asked = [text.split("\n")[-1] for text in seen[-1]]  # the last one carries the context
    assert asked[-3:] == ["What do my notes say?", "Are you still there?", "And now?"]
    assert not replies.queue
