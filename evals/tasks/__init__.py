"""The tasks, one module per kind; `all_tasks()` lists them in a stable order."""

from __future__ import annotations

from ..task import Task


def all_tasks() -> list[Task]:
    from . import ask_user, dataframe_questions, fix_cell, module_test, plots, refactor

    kinds = (fix_cell, dataframe_questions, refactor, plots, module_test, ask_user)
    return [task for kind in kinds for task in kind.TASKS]
