"""`%copilot fix [CELL]`: ask the agent to fix a failing cell, where the front-end extension's
Fix with Copilot is not (the classic notebook, VS Code, a console).

It runs as a `%%copilot --fix CELL` cell does, with the default request: the cell and its error
read on the kernel's side (`failed_cell.py`) go with the request as data (`fix_request.py`), and
the turn asks for approvals as any cell's does. No CELL: the last cell that failed. The chat
panel's Fix with Copilot builds its request here too (`fix_prompt`).
"""

from __future__ import annotations

import argparse
from typing import Any

from .failed_cell import failed_cell
from .fix_request import fix_request, shown_request

LAST = "last"
"""`--fix` with no cell: the last cell that failed."""


def arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "cell",
        nargs="?",
        default=None,
        help="the failing cell: its id or #N as JupyterLab numbers it (default: the last cell "
        "that failed); %%copilot --fix CELL takes a request of your own and every option",
    )


async def fix(session: Any, args: argparse.Namespace, settings: Any) -> None:
    """Run the fix as a `%%copilot --fix` cell: the turn shows, and asks, in this cell."""
    await settings.run_cell(f"--fix {args.cell or LAST}", "")


async def fix_prompt(session: Any, reference: str | None, words: str = "") -> tuple[str, str]:
    """(the request the model reads, what a view shows as the user's request) for the cell
    `reference` names (`last` or None: the last that failed); a UsageError when there is none."""
    cell = await failed_cell(session, None if reference in (None, "", LAST) else reference)
    return fix_request(cell, words), shown_request(cell, words)
