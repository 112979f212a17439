"""What run_code's code printed and drew, in a real kernel: the user sees it under the tool's
line in the `%%copilot` cell, once, and a vision model gets the same output, the figure as an
image block of its request."""

from __future__ import annotations

import base64
import re

import pytest

from copilot_nb.testing import call, reply

pytestmark = pytest.mark.kernel

PLOT = (
    "import matplotlib.pyplot as plt\n"
    "from IPython.display import display\n"
    "fig, ax = plt.subplots(figsize=(2, 1), dpi=50)\n"
    "ax.plot([1, 3, 2])\n"
    "display(fig)\n"
    "print('group | mean')\n"
    "print('a     | 2.0')"
)


def images_in(execution) -> list[str]:
    """Every PNG the cell's output carries, in whatever message: separate displays and the
    transcript's own HTML alike (a figure shown twice counts twice)."""
    found: list[str] = []
    for message in execution.of_type("display_data", "update_display_data", "execute_result"):
        data = message["content"]["data"]
        if "image/png" in data:
            found.append(data["image/png"])
    return found


def test_a_plot_and_what_the_code_printed_show_once_under_the_line_and_reach_the_model(
    serve, kernel_for
) -> None:
    server = serve([reply("", call("run_code", id="plot", code=PLOT)), reply("Drawn.")])
    kernel = kernel_for(server, COPILOT_NB_MODEL="openai:gpt-4o")
    assert kernel.execute("%matplotlib inline").status == "ok"

    run = kernel.execute("%%copilot --yes\nplot it")

    assert run.status == "ok", run.reply["content"]
    assert images_in(run) == [], "no figure of the run goes to the cell by itself"
    html = list(run.final_displays("text/html").values())[-1]
    assert html.count('<img src="data:image/png;base64,') == 1, "the figure shows once"
    assert "group | mean" in html and "a     | 2.0" in html, "what it printed shows too"
    line = html.index("run_code")
    assert line < html.index("<img") and line < html.index("group | mean"), "under its line"

    result = server.requests[-1].tool_results["plot"]
    assert "stdout:\ngroup | mean\na     | 2.0" in result
    assert re.search(r"\[image/png \d+x\d+\]", result), result
    parts = [
        part
        for message in server.requests[-1].messages
        if message["role"] == "user" and isinstance(message["content"], list)
        for part in message["content"]
        if part.get("type") == "image_url"
    ]
    assert len(parts) == 1, "the figure reaches the model once, as an image block"
    url = parts[0]["image_url"]["url"]
    assert url.startswith("data:image/png;base64,")
    assert base64.b64decode(url.split(",", 1)[1]).startswith(b"\x89PNG")
    server.assert_complete()
