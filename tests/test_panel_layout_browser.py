"""The chat panel in JupyterLab's right sidebar, which it opens at a readable width (~400 px) and
which reads at the sidebar's narrowest (250 px), as a main-area tab, and
as one view: one panel however often `copilot_nb.chat()` runs, `%%copilot` turns shown in it as
they happen, and after a kernel restart the panel back by itself in its place with its
conversation (a plain word where it cannot come back). JupyterLab in headless Chromium
(tests/browser_lab.py).
"""

from __future__ import annotations

from typing import Any

import pytest

from copilot_nb.testing import call, reply
from tests.browser_lab import LONG, ask, open_notebook, run_next, shot

pytestmark = pytest.mark.browser

LONG_LINE = "result = compute_everything(first_argument_value, second_argument_value, third)"
CHAT = "import copilot_nb\npanel = copilot_nb.chat(approvals=copilot_nb.ApprovalPolicy())"


def fits(locator, selector: str) -> dict:
    """How an element sits in the panel: scrolls sideways, lines, inside its card."""
    return locator.locator(selector).last.evaluate(
        """el => {
          const s = getComputedStyle(el), box = el.getBoundingClientRect();
          const card = el.closest('.cnb-tool, .cnb-codeblock').getBoundingClientRect();
          return {
            scrolls: el.scrollWidth > el.clientWidth && ['auto', 'scroll'].includes(s.overflowX),
            lines: Math.round(el.scrollHeight / parseFloat(s.lineHeight)),
            inside: box.right <= card.right + 0.5 && box.left >= card.left - 0.5,
          };
        }"""
    )


def test_at_sidebar_width_code_scrolls_approvals_show_whole_and_the_model_reads(page, lab, replies):
    replies.queue.extend(
        [
            reply(f"Like this:\n\n```python\n{LONG_LINE}\n```\n"),
            reply("Checking.", call("run_code", code=LONG_LINE)),
            reply("Done."),
        ]
    )
    open_notebook(page, lab, "narrow.ipynb", CHAT)
    panel = page.locator(".jupyterlab-sidecar .cnb-root")
    panel.wait_for(timeout=LONG)
    page.wait_for_function(
        "el => el.getBoundingClientRect().width >= 380", arg=panel.element_handle()
    )
    width = panel.evaluate("el => el.getBoundingClientRect().width")
    assert 380 <= width <= 420, f"the sidebar opens readable, not at its 250 px minimum: {width}"
    shot(page, "screenshots/panel-opens-readable.png")
    panel.evaluate("el => { el.style.width = '250px'; }")  # as narrow as the sidebar goes

    ask(panel, "show me")
    panel.locator(".cnb-codeblock pre").wait_for()
    block = fits(panel, ".cnb-codeblock pre")
    assert block["scrolls"] and block["inside"], block
    assert block["lines"] <= 2, f"code wraps mid-token: {block}"  # one line and a scrollbar

    panel.locator(".cnb-send").wait_for()
    ask(panel, "run it")
    card = panel.locator(".cnb-tool").last
    card.locator(".cnb-approve-btn").wait_for()
    args = fits(card, ".cnb-args")
    assert args["scrolls"] and args["inside"], f"approval code clipped: {args}"
    shot(panel, "screenshots/panel-narrow-approval.png")
    card.locator(".cnb-deny-btn").click()
    panel.get_by_text("Done.").wait_for()

    picker = panel.locator(".cnb-model")
    size = picker.evaluate("el => parseFloat(getComputedStyle(el).fontSize)")
    assert size >= 13, size
    assert "openai:scripted" in (picker.get_attribute("title") or "")
    room = picker.evaluate(
        """el => {
          const ctx = document.createElement('canvas').getContext('2d');
          ctx.font = getComputedStyle(el).font;
          return el.clientWidth - ctx.measureText(el.value).width;
        }"""
    )
    assert room >= 16, f"the model name is cut ({room:.0f} px to spare)"
    assert (
        panel.locator(".cnb-mode").evaluate("el => parseFloat(getComputedStyle(el).fontSize)") >= 13
    )
    overflow = panel.locator(".cnb-header").evaluate(
        "el => [...el.children].map(c => c.getBoundingClientRect().right - el.getBoundingClientRect().right)"
    )
    assert max(overflow) <= 0, f"the header's controls run past the panel: {overflow}"
    shot(panel, "screenshots/panel-default-width.png")

    panel.locator(".cnb-tab").click()
    tab = page.locator("#jp-main-dock-panel .jupyterlab-sidecar .cnb-root")
    tab.wait_for()
    assert not page.locator("#jp-right-stack .cnb-root").count()
    assert tab.locator(".cnb-tab").is_hidden()
    assert tab.locator(".cnb-answer").first.inner_text().startswith("Like this")
    shot(page, "screenshots/panel-in-a-tab.png")
    assert not replies.queue


def test_a_cell_turn_appears_in_the_open_panel_as_it_happens(page, lab, replies):
    replies.queue.append(reply("Answered in the cell.", chunk_size=4, delay=0.02))
    open_notebook(page, lab, "cell-turns.ipynb", CHAT, "%%copilot\nwhat is 2 + 2?")
    panel = page.locator(".jupyterlab-sidecar .cnb-root")
    panel.wait_for(timeout=LONG)
    run_next(page)
    panel.locator(".cnb-user").get_by_text("what is 2 + 2?").wait_for(timeout=LONG)
    panel.get_by_text("Answered in the cell.").wait_for(timeout=LONG)
    cell = page.locator(".jp-Notebook .jp-Cell").nth(1).locator(".jp-OutputArea")
    assert "Answered in the cell." in cell.inner_text(), "the cell shows its turn as before"
    panel.locator(".cnb-send").wait_for()
    assert not replies.queue


def restart_kernel(page) -> None:
    """Restart the notebook's kernel as a user does: the command, then its dialog's Restart."""
    # the command waits for its dialog: started, not awaited
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:restart-kernel'); }")
    page.locator(".jp-Dialog .jp-mod-accept").click()


def back_after_restart(page, restarted) -> Any:
    """The panel that came back by itself once the old one (`restarted`) closed: the only one."""
    fresh = page.locator(".jupyterlab-sidecar .cnb-root:not(.cnb-lost)")
    fresh.wait_for(timeout=LONG)
    restarted.wait_for(state="detached", timeout=LONG)
    assert page.locator(".jupyterlab-sidecar .cnb-root").count() == 1
    return fresh


def run_and_see(page, index: int, text: str) -> None:
    """Run cell `index` (once the kernel is idle) and wait for `text` in its output: every
    request sent to the kernel before it has been handled."""
    page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").wait_for(timeout=LONG)
    cell = page.locator(".jp-Notebook .jp-Cell").nth(index)
    cell.locator(".jp-InputPrompt").click()
    run_next(page)
    cell.locator(".jp-OutputArea").get_by_text(text).wait_for(timeout=LONG)


def test_after_a_restart_the_panel_comes_back_by_itself_in_its_place(page, lab, replies):
    seen: list[Any] = []

    def answer(text: str) -> Any:
        return lambda request: seen.append(request.messages) or reply(text)

    replies.queue.extend([reply("First answer."), answer("Second answer."), answer("Third.")])
    open_notebook(page, lab, "restarts.ipynb", CHAT, CHAT)
    panel = page.locator(".jupyterlab-sidecar .cnb-root")
    panel.wait_for(timeout=LONG)
    run_next(page)  # chat() again: the same one panel
    page.locator(".jp-Notebook .jp-Cell").nth(1).locator(".jp-InputPrompt").get_by_text(
        "[2]"
    ).wait_for(timeout=LONG)
    assert panel.count() == 1
    ask(panel, "first question")
    panel.get_by_text("First answer.").wait_for(timeout=LONG)
    panel.locator(".cnb-send").wait_for()

    restart_kernel(page)
    fresh = back_after_restart(page, page.locator(".cnb-lost"))
    assert page.locator("#jp-right-stack .cnb-root").count() == 1, "in the sidebar, as before"
    fresh.locator(".cnb-user").get_by_text("first question").wait_for()
    fresh.get_by_text("First answer.").wait_for()
    ask(fresh, "second question")
    fresh.get_by_text("Second answer.").wait_for(timeout=LONG)
    assert seen[-1][-1]["content"].endswith("second question")
    assert any("First answer." in str(m.get("content")) for m in seen[-1]), "the turn before"
    shot(fresh, "screenshots/panel-after-restart.png")

    fresh.locator(".cnb-send").wait_for()
    fresh.locator(".cnb-tab").click()  # as a tab, it comes back as a tab
    page.locator("#jp-main-dock-panel .cnb-root").wait_for()
    restart_kernel(page)
    again = back_after_restart(page, page.locator(".cnb-lost"))
    page.locator("#jp-main-dock-panel .cnb-root:not(.cnb-lost)").wait_for(timeout=LONG)
    assert not page.locator("#jp-right-stack .cnb-root").count()
    again.get_by_text("Second answer.").wait_for()
    ask(again, "third")
    again.get_by_text("Third.").wait_for(timeout=LONG)
    assert not replies.queue


def test_a_panel_closed_before_the_restart_stays_closed(page, lab, replies):
    open_notebook(page, lab, "closed.ipynb", CHAT, "print('kernel ' + 'answers')")
    panel = page.locator(".jupyterlab-sidecar .cnb-root")
    panel.wait_for(timeout=LONG)
    panel.locator(".cnb-tab").click()
    tab = page.locator("#jp-main-dock-panel .lm-TabBar-tab", has_text="Copilot")
    tab.locator(".lm-TabBar-tabCloseIcon").click()
    panel.wait_for(state="detached")

    restart_kernel(page)
    run_and_see(page, 1, "kernel answers")  # after any reopening the extension would send
    assert not page.locator(".cnb-root").count()
