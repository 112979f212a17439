"""What one evaluation task is: files to start from, a request, a checker, and two scripts.

Each task generates its own data (seeded, no downloads), so a run needs nothing but the repository.
The two scripted solutions exist to test the harness and the checker: the correct one must pass
and the wrong one must fail, so no checker can pass by accident.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

Check = Callable[["Outcome"], "tuple[bool, str]"]


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """What a checker may look at after the turn: the folder, the reply and the calls made."""

    workdir: Path
    answer: str
    """The turn's output as text: the model's reply with its tool lines."""
    tool_calls: Sequence[str] = ()
    """The names of the tools the agent called, in order."""

    def notebook(self, name: str = "analysis.ipynb") -> Any:
        return nbformat.read(self.workdir / name, as_version=4)

    def code_cells(self, name: str = "analysis.ipynb") -> list[str]:
        return [c.source for c in self.notebook(name).cells if c.cell_type == "code"]

    def final_answer(self) -> str | None:
        """The value after the last `ANSWER:` in the reply, the closed-form questions' format."""
        found = re.findall(r"ANSWER:\s*`?([^\n`]+?)`?\s*$", self.answer, re.MULTILINE)
        return found[-1].strip() if found else None


@dataclass(frozen=True, kw_only=True)
class Task:
    """One task: `setup(workdir)` writes its files, `request` is the `%%copilot` cell's body."""

    name: str
    kind: str
    request: str
    setup: Callable[[Path], None]
    check: Check
    solution: Sequence[Any]
    """Scripted model turns (`copilot_nb.testing.reply`) that do the task right."""
    wrong: Sequence[Any]
    """Scripted model turns that look plausible and do it wrong: the checker must refuse them."""
    user_answers: Sequence[str] = field(default_factory=tuple)
    """What the user would answer if the agent asks (`ask_user`)."""


def write_notebook(path: Path, cells: Sequence[tuple[str, str, str]]) -> None:
    """A notebook of `(id, type, source)` cells, with stable ids so requests can name them."""
    notebook = nbformat.v4.new_notebook()
    for cell_id, cell_type, source in cells:
        make = nbformat.v4.new_code_cell if cell_type == "code" else nbformat.v4.new_markdown_cell
        cell = make(source)
        cell["id"] = cell_id
        notebook.cells.append(cell)
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nbformat.write(notebook, path)


def close(found: str | None, expected: float, tolerance: float = 0.01) -> tuple[bool, str]:
    """A numeric answer within `tolerance` (absolute) of the expected value."""
    if found is None:
        return False, "no `ANSWER:` line in the reply"
    try:
        value = float(found.replace(",", "").rstrip("%"))
    except ValueError:
        return False, f"answer {found!r} is not a number"
    if abs(value - expected) <= tolerance:
        return True, f"answer {found} is right"
    return False, f"answer {found}, expected {expected}"


def run_python(workdir: Path, code: str, timeout: float = 60) -> tuple[int, str, str]:
    """Run code in a fresh interpreter in the task's folder: the checker's clean room, so the
    kernel's leftovers cannot make a broken notebook look fixed."""
    import os
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1"},
    )
    return done.returncode, done.stdout, done.stderr


def run_cells(outcome: Outcome, name: str = "analysis.ipynb") -> tuple[int, str, str]:
    """Every code cell of the notebook, top to bottom, in a fresh interpreter."""
    sources = [s for s in outcome.code_cells(name) if not s.lstrip().startswith(("%", "!"))]
    return run_python(outcome.workdir, "\n\n".join(sources))
