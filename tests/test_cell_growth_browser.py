"""A long answer streamed into a `%%copilot` cell in JupyterLab grows in place: the kernel sends
the page only what is new of the output (`cell_growth.py`, `outputGrowth.ts`), the words show as
they come, and the cell ends with the whole output, as a display update, like every other.

The kernel's traffic is read off the page's websocket: while the answer streams, the page gets
growth messages instead of whole display updates, and all it receives during the turn stays a
small multiple of the answer's own bytes (about 4.7x here: the growths carry the answer's HTML
once, the last update its HTML and its text)."""

from __future__ import annotations

from typing import Any

from copilot_nb.testing import reply
from tests.browser_lab import LONG, open_notebook, run_next, shot
from tests.live_page import live_model
from tests.text_samples import PROSE

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
    # and text (~2.5x); whole updates at the old pace sent over 20x
    total = sum(len(f) for f in turn)
    assert total < 6 * answer_bytes, (total, answer_bytes)

    (shown,) = [o for o in live_model(page)["cells"][1]["outputs"] if "text/html" in o["data"]]
    assert ANSWER.strip().splitlines()[-1] in shown["data"]["text/plain"], "the whole answer"
    assert "stream" not in shown["metadata"]["copilot_nb"], "the last update is the record"
    html = output.inner_html()
    assert html.count("<h2>") == 30 and html.count("🐍") == 30
