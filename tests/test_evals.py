"""The evaluation harness, tested against scripted replies: every task's correct script passes
its checker and every wrong one fails it, through `%%copilot` in a real kernel, so no checker
can pass by accident and the harness measures what ran."""

from __future__ import annotations

import pytest

from evals.harness import summary, table
from evals.run import run
from evals.tasks import all_tasks

KINDS = {"fix-cell", "dataframe-question", "refactor", "plot", "module-and-test", "ask-user"}


def test_there_are_thirty_tasks_of_every_kind_with_unique_names() -> None:
    tasks = all_tasks()
    assert len(tasks) >= 30
    assert {t.kind for t in tasks} == KINDS
    assert len({t.name for t in tasks}) == len(tasks)


@pytest.mark.kernel
def test_the_correct_scripts_pass_every_task_and_are_measured() -> None:
    results = run("scripted")
    assert [r.task for r in results if not r.ok] == [], table(results)
    assert all(r.rounds >= 1 and r.tokens_in > 0 and r.tool_calls for r in results)
    asked = {r.task: r.tool_calls for r in results if r.kind == "ask-user"}
    assert all("ask_user" in calls for calls in asked.values())
    assert summary(results)["success_rate"] == 1.0


@pytest.mark.kernel
def test_the_wrong_scripts_fail_every_task() -> None:
    results = run("scripted:wrong")
    assert [r.task for r in results if r.ok] == [], table(results)
