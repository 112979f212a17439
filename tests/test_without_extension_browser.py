"""copilot_nb loaded in a kernel whose JupyterLab page has no copilot_nb extension (disabled in
the page config, as where copilot_nb is installed in the kernel's environment only).

The page closes the kernel's hello, as JupyterLab does with a comm whose target it does not
know, so a reviewing turn does not wait for a page that is not coming: it falls back to asking,
tells the user why and what to install, and the agent's change goes to the file, as the model is
told."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from copilot_nb.agent.modes.review import NO_EXTENSION_NOTE
from copilot_nb.jupyter.live_channel import NO_EXTENSION_HINT
from copilot_nb.testing import call, reply
from tests.browser_lab import LONG, Replies, open_notebook, run_next, scripted_lab, shot
from tests.live_page import on_disk

pytestmark = pytest.mark.browser

AGENT_SOURCE = "print('from the agent')"


@pytest.fixture(scope="module")
def lab(
    tmp_path_factory: pytest.TempPathFactory, shared_replies: Replies
) -> Iterator[dict[str, Any]]:
    """JupyterLab with copilot_nb's page extension disabled."""
    page_config = {"disabledExtensions": {"copilot-nb": True}}
    yield from scripted_lab(tmp_path_factory.mktemp("lab"), shared_replies, page_config)


def test_a_page_without_the_extension_declines_and_review_asks_saying_why(page, lab, replies):
    results: list[str] = []

    def after_the_edit(request: Any) -> Any:
        results.extend(request.tool_results.values())
        return reply("Added to the file.")

    replies.queue.extend(
        [
            reply(
                "", call("insert_cell", after_cell_id="#1", cell_type="code", source=AGENT_SOURCE)
            ),
            after_the_edit,
        ]
    )
    open_notebook(page, lab, "plain.ipynb", "%load_ext copilot_nb", "%%copilot\nadd a cell")
    run_next(page)
    page.get_by_text(NO_EXTENSION_NOTE.replace("`", "")).wait_for(timeout=LONG)  # as Markdown
    approve = page.get_by_role("button", name="Approve")
    approve.wait_for(timeout=LONG)
    shot(page, "no-extension-1-asks.png")
    approve.click()
    page.get_by_text("Added to the file.").wait_for(timeout=LONG)
    assert len(results) == 1 and NO_EXTENSION_HINT in results[0], results
    assert on_disk(lab["root"] / "plain.ipynb")[:3] == [
        "%load_ext copilot_nb",
        AGENT_SOURCE,
        "%%copilot\nadd a cell",
    ]
    assert not replies.queue
