"""Cell numbers as the user reads them: 1-based, as JupyterLab counts ("Cell 6/7" in its status
bar). The model, the tool lines, the approvals and `@cell:#N` all use this one numbering, so "#6"
means the same cell to the user and to the agent; ids stay what tools hold on to across edits.
"""

from __future__ import annotations


def cell_label(index: int) -> str:
    """`#6` for the cell at 0-based `index` 5: the number JupyterLab shows for it."""
    return f"#{index + 1}"


def cell_position(index: int, total: int) -> str:
    """`cell 6 of 7`, as JupyterLab's status bar says "Cell 6/7"."""
    return f"cell {index + 1} of {total}"


def numbered_index(reference: str) -> int | None:
    """The 0-based index a `#N` reference names (N counted from 1), -1 for a `#N` that names no
    cell (`#0`, `#x`), or None when `reference` is not a number at all (then it is an id)."""
    wanted = reference.strip()
    if not wanted.startswith("#"):
        return None
    number = wanted[1:].strip()
    return int(number) - 1 if number.isdigit() and int(number) > 0 else -1
