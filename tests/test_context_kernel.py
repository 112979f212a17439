"""`%copilot context` in a real kernel: the system prompt with the instruction files, and the
context block the next request carries (the kernel's variables and its last error)."""

from __future__ import annotations

import pytest

from copilot_nb.testing import reply

pytestmark = pytest.mark.kernel


def test_copilot_context_shows_the_instructions_and_the_block(serve, kernel_for, tmp_path):
    (tmp_path / "AGENTS.md").write_text("Always explain the plot.\n")
    kernel = kernel_for(serve([reply("ok")]), COPILOT_NB_CONFIG_DIR=str(tmp_path / "config"))
    assert kernel.execute("sales = {'jan': 3}").status == "ok"
    assert kernel.execute("1 / 0").status == "error"
    shown = kernel.execute("%copilot context")
    assert shown.status == "ok", shown.reply["content"]
    (text,) = shown.final_displays().values()
    assert "instruction files, in order: AGENTS.md" in text
    assert "## AGENTS.md\n\nAlways explain the plot." in text
    assert "Variables: sales: dict len 1" in text
    assert "Last error in the kernel: ZeroDivisionError: division by zero" in text
    (html,) = shown.final_displays("text/html").values()
    assert "<details open><summary>System prompt" in html and "<script" not in html
