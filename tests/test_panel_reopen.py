"""The entry point the extension runs to bring the chat panel back after a kernel restart: the
front end sends exactly our fixed text, and a panel knows its kernel only inside a kernel. The
story in JupyterLab is in test_panel_layout_browser.py."""

from __future__ import annotations

import ast
from pathlib import Path

from copilot_nb.jupyter.panel import opening

FRONTEND = Path(opening.__file__).parent.parent / "frontend" / "src" / "chatReopen.ts"


def test_the_extension_runs_the_same_fixed_call_that_binds_no_name():
    assert f"'{opening.REOPEN_CODE}'" in FRONTEND.read_text(encoding="utf-8")
    tree = ast.parse(opening.REOPEN_CODE)
    assert not [n for n in ast.walk(tree) if isinstance(n, ast.Import | ast.ImportFrom)]
    assert not [
        n for n in ast.walk(tree) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)
    ]
    call = tree.body[0].value  # type: ignore[attr-defined]
    assert call.func.attr == "reopen" and callable(opening.reopen)


def test_outside_a_kernel_a_panel_has_no_kernel_to_be_reopened_on():
    assert opening.kernel_id() == ""
    assert opening._new_panel(opening.CopilotSession()).widget.kernel == ""
