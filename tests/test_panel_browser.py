"""The chat panel in a real JupyterLab, driven through headless Chromium by Playwright.

JupyterLab, the page and the helpers are in tests/browser_lab.py (its fixtures are a plugin of
tests/conftest.py).
"""

from __future__ import annotations

import pytest

from copilot_nb.testing import call, reply
from tests.browser_lab import LONG, ask, open_notebook, shot
from tests.lab_server import SLOWDOWN

pytestmark = pytest.mark.browser


def test_chat_in_the_sidebar_streams_approves_an_edit_and_stops(page, lab, replies):
    (lab["root"] / "hello.py").write_text('print("hello, world")\n')
    replies.queue.extend(
        [
            reply(
                "Hello from **the scripted model**. Here is what I can do:\n\n"
                "- read and edit your files\n- look at your notebook\n\n"
                "```python\nprint('hi')\n```\n",
                chunk_size=4,
                delay=0.01,
            ),
            reply(
                "Let me change the greeting.",
                call(
                    "edit_file", path="hello.py", old_str="hello, world", new_str="hello, notebook"
                ),
            ),
            reply("Done: `hello.py` now prints **hello, notebook**."),
            reply("Once upon a time, " * 600, chunk_size=6, delay=0.02),
            reply("Still here."),
        ]
    )
    open_notebook(
        page,
        lab,
        "chat.ipynb",
        "import copilot_nb\npanel = copilot_nb.chat(approvals=copilot_nb.ApprovalPolicy())",
    )
    panel = page.locator(".jupyterlab-sidecar .cnb-root")
    panel.wait_for(timeout=LONG)
    cells_before = page.locator(".jp-Notebook .jp-Cell").count()

    box = panel.locator(".cnb-input")
    box.click()
    box.press_sequentially("Say hello")
    box.press("Shift+Enter")  # a new line in the box, not "run cell"
    box.press_sequentially("and be brief")
    box.press("Enter")
    answer = panel.locator(".cnb-answer").first
    answer.locator("pre code").wait_for()
    panel.locator(".cnb-send").wait_for()
    assert panel.locator(".cnb-user").first.inner_text() == "Say hello\nand be brief"
    assert answer.locator("strong").inner_text() == "the scripted model"
    assert answer.locator("li").count() == 2
    assert answer.locator("pre code").inner_text() == "print('hi')"
    assert page.locator(".jp-Notebook .jp-Cell").count() == cells_before, (
        "keys leaked to the notebook"
    )
    shot(page, "panel-1-answer.png")

    ask(panel, "Change the greeting in hello.py")
    approve = panel.locator(".cnb-approve-btn")
    approve.wait_for()
    card = panel.locator(".cnb-tool").last
    assert card.locator(".cnb-tool-name").inner_text() == "edit_file"
    assert "+hello, notebook" in card.locator(".cnb-args").inner_text()
    assert (lab["root"] / "hello.py").read_text() == 'print("hello, world")\n'
    shot(panel, "panel-2-approval.png")
    approve.click()
    panel.get_by_text("now prints").wait_for()
    assert (lab["root"] / "hello.py").read_text() == 'print("hello, notebook")\n'
    assert card.get_attribute("data-state") == "ok"
    assert '+print("hello, notebook")' in card.locator(".cnb-args").inner_text()
    shot(panel, "panel-3-edited.png")

    ask(panel, "Tell me a long story")
    panel.get_by_text("Once upon a time").first.wait_for()
    shown = len(panel.locator(".cnb-answer").last.inner_text())
    panel.locator(".cnb-stop").click()
    panel.locator(".cnb-stopped").wait_for(timeout=int(5_000 * SLOWDOWN))
    panel.locator(".cnb-send").wait_for(timeout=int(5_000 * SLOWDOWN))
    story = panel.locator(".cnb-answer").last.inner_text()
    assert 0 < len(story) < len("Once upon a time, " * 600) / 2
    assert len(story) - shown < 600, (
        "Stop takes effect at once (a round trip to the kernel): fewer than 100 more chunks, "
        "2 s at the story's pace"
    )
    shot(panel, "panel-4-stopped.png")

    ask(panel, "Are you still there?")
    panel.get_by_text("Still here.").wait_for()
    assert not page.locator(".jp-OutputArea-output[data-mime-type*='stderr']").count()
    assert not page.locator(".jp-OutputArea-output[data-mime-type*='error']").count()
    shot(page, "panel-5-sidebar.png")
    assert not replies.queue


def test_model_text_never_becomes_live_html(page, lab, replies):
    replies.queue.append(
        reply(
            'Look: <img src=x onerror="window.__xss=1"> <script>window.__xss=2</script> '
            "[click me](javascript:window.__xss=3) and [docs](https://example.org/a?b=1&c=2)",
            chunk_size=7,
        )
    )
    open_notebook(page, lab, "inline.ipynb", "import copilot_nb\ncopilot_nb.chat(sidebar=False)")
    panel = page.locator(".jp-Notebook .jp-OutputArea .cnb-root")
    panel.wait_for(timeout=LONG)
    ask(panel, "Show me something odd")
    answer = panel.locator(".cnb-answer")
    answer.get_by_text("and").wait_for()
    panel.locator(".cnb-send").wait_for()
    assert answer.locator("img, script").count() == 0
    assert "<img src=x" in answer.inner_text()
    links = answer.locator("a")
    assert links.count() == 1
    assert links.first.get_attribute("href") == "https://example.org/a?b=1&c=2"
    assert page.evaluate("window.__xss") is None
    shot(panel, "panel-6-inline-escaped.png")
