"""How a `%%copilot` cell reaches the kernel's loop: IPython's cleanup input transformer rewrites
the cell (or a cell of just an awaited `%copilot` command) as `await` of the magic's coroutine,
so it runs natively on the kernel's event loop (DESIGN.md facts 3-4), and the `%copilot <TAB>`
completer hook. Pure text in, text out; the commands' table says which commands are awaited.
"""

from __future__ import annotations

from typing import Any

from ..config import COPILOT_CELL_CALL

CELL_PREFIX = "%%copilot"
LINE_PREFIX = "%copilot"
COPILOT_LINE_CALL = "__import__('copilot_nb.jupyter.extension').jupyter.extension._run_line"


def transform_copilot_cell(lines: list[str]) -> list[str]:
    """Rewrite a `%%copilot` cell, or a cell of just a `%copilot` command that waits on the
    kernel's loop (`%copilot mcp ...`), as `await` of its coroutine, so it runs on that loop."""
    if lines and _awaited_line(lines[0]) and not "".join(lines[1:]).strip():
        line = lines[0].strip()[len(LINE_PREFIX) :].strip()
        return [f"await {COPILOT_LINE_CALL}({line!r})\n"]
    if not lines or not lines[0].startswith(CELL_PREFIX):
        return lines
    first = lines[0][len(CELL_PREFIX) :]
    if first[:1] not in ("", " ", "\t", "\n") or first.strip().endswith("?"):
        return lines  # `%%copilotx`, or `%%copilot?` help: leave it to IPython
    body = "".join(lines[1:])
    return [f"await {COPILOT_CELL_CALL}({first.strip()!r}, {body!r})\n"]


def _awaited_line(line: str) -> bool:
    words = line.split()
    if words[:1] != [LINE_PREFIX] or len(words) < 2:
        return False
    from .commands.table import awaited

    return awaited(words[1])


def complete_line(shell: Any, event: Any) -> list[str]:
    """IPython's completer hook for `%copilot <TAB>`: the table's commands, then a command's
    sub-actions and options."""
    from .commands.table import completions

    return completions(event.text_until_cursor)
