"""The evaluation harness, tested against scripted replies: every task's correct script passes
its checker and every wrong one fails it, through `%%copilot` in a real kernel, so no checker
can pass by accident and the harness measures what ran."""

from __future__ import annotations

import json
import os
import signal
import threading
from pathlib import Path

import pytest

from copilot_nb.testing import call, fail, reply
from copilot_nb.testing.openai_wire import openai_sse_events
from evals.harness import summary, table
from evals.run import harness_for, main, run, stopped_by_sigterm
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


def _swap_code(tape: Path, code: str) -> None:
    """What someone who changes a cassette does: the recorded reply that runs code now runs
    `code` (the rest of the file, its signed header and answers, stays as it was)."""
    lines = [json.loads(line) for line in tape.read_text().splitlines()]
    for entry in lines:
        response = entry.get("response") or {}
        if "run_code" in response.get("text", ""):
            turn = reply("", call("run_code", code=code))
            events = openai_sse_events(turn, model="scripted", completion_id="swapped")
            response["text"] = b"".join(events).decode()
    tape.write_text("".join(json.dumps(line) + "\n" for line in lines))


@pytest.mark.kernel
def test_a_replay_approves_only_what_the_user_recorded(tmp_path: Path) -> None:
    """Recording, the harness approves through the kernel's prompt (no --yes), so the cassette
    keeps the user's signed answer and the user's own replay needs no one. A stranger's replay
    (another key) asks, nobody answers, and the run is denied, unless they chose --trust. A
    cassette whose code was swapped runs none of it: the swapped call asks and is denied."""
    name = "df_total_revenue"
    tapes, me, stranger = tmp_path / "tapes", tmp_path / "me", tmp_path / "stranger"
    [recorded] = run("scripted", names=[name], record=tapes, config=me)
    assert recorded.ok, recorded.reason
    tape = tapes / f"{name}.copilot.jsonl"
    answers = [e for e in map(json.loads, tape.read_text().splitlines()) if e["type"] == "approval"]
    assert [(a["tool"], a["approved"], bool(a["sig"])) for a in answers] == [
        ("run_code", True, True)
    ]
    [mine] = run("scripted", names=[name], replay=tapes, config=me)
    assert mine.ok, mine.reason

    [theirs] = run("scripted", names=[name], replay=tapes, config=stranger)
    assert not theirs.ok and "Not signed by you" in theirs.reason
    [trusted] = run("scripted", names=[name], replay=tapes, config=stranger, trust=True)
    assert trusted.ok, trusted.reason

    outside = tmp_path / "outside.txt"
    _swap_code(tape, f"open({str(outside)!r}, 'w').write('ran')")
    [swapped] = run("scripted", names=[name], replay=tapes, config=me)
    assert not outside.exists()
    assert not swapped.ok


NAME = "df_total_revenue"
"""A task whose solution takes a few rounds, for the tests of what the harness measures."""


@pytest.mark.kernel
def test_an_upstream_error_fails_the_task_as_an_error_and_a_retry_is_no_round() -> None:
    """The cell of a turn that ended in the provider's error still runs to its end: the row
    says the turn failed, not that the answer was wrong. A request the transport sent again
    after a 429 is the same round."""
    names = [NAME, "df_top_region_units"]

    def script(task):
        if task.name == NAME:
            return [fail(429, "slow down", headers={"retry-after-ms": "1"}), *task.solution]
        return [fail(400, "the upstream model is not loaded")]

    retried, failed = run("scripted", names=names, script=script)
    solution = next(t for t in all_tasks() if t.name == NAME).solution
    assert retried.ok, retried.reason
    assert retried.rounds == len(solution)
    assert not failed.ok
    assert failed.reason.startswith("the turn ended in an error:"), failed.reason
    assert "the upstream model is not loaded" in failed.reason


@pytest.mark.kernel
def test_a_run_stopped_by_sigterm_still_covers_every_task() -> None:
    """SIGTERM (what `timeout` sends) mid-task: the run ends with a row for each task."""

    def terminate(request):
        os.kill(os.getpid(), signal.SIGTERM)  # the turn is now under way
        return reply("the run is stopped before this is read")

    with stopped_by_sigterm():
        results = run("scripted", names=[NAME, "df_top_region_units"], script=lambda t: [terminate])
    assert [(r.task, r.stopped) for r in results] == [(NAME, True), ("df_top_region_units", True)]
    assert all(r.reason == "not run: the run was stopped (SIGTERM)" for r in results)


@pytest.mark.kernel
def test_a_task_timeout_is_set_on_the_command_line(tmp_path: Path, capsys) -> None:
    """`--task-timeout` bounds each task, `--time-limit` the run: past it the table and the JSON
    still come, each task that did not run saying so."""
    out = tmp_path / "eval.json"
    argv = ["--model", "scripted", "--task", NAME, "--time-limit", "0", "--json", str(out)]
    assert main(argv) == 1
    report = json.loads(out.read_text())
    assert report["summary"]["not_run"] == 1
    assert report["tasks"][0]["reason"] == "not run: the run's time limit (0 s) was reached"
    assert f"| {NAME} |" in capsys.readouterr().out

    release = threading.Event()

    def hold(request):
        release.wait(30)
        return reply("too late")

    try:
        [held] = run("scripted", names=[NAME], task_timeout=1, script=lambda t: [hold])
    finally:
        release.set()
    assert not held.ok and not held.stopped
    assert held.reason == "the kernel did not finish within 1 s"


@pytest.mark.kernel
def test_each_task_starts_from_a_collected_heap_and_a_frozen_rest() -> None:
    """What a task leaves is gone before the next one starts, cycles included (the reset
    collects them), while the long-lived rest of the kernel is frozen, so a reset does not walk
    all of IPython and pandas again for every task."""
    first, second = (t for t in all_tasks() if t.name in (NAME, "df_top_region_units"))
    with harness_for("scripted") as harness:
        assert harness.run_task(first).ok
        left = harness.kernel.execute(
            "import sys, weakref\nclass Left: pass\nleft = Left()\nleft.itself = left\n"
            "sys.copilot_nb_left = weakref.ref(left)"
        )
        assert left.status == "ok", left.error
        assert harness.run_task(second).ok
        heap = harness.kernel.execute(
            "import gc, sys\nprint(sys.copilot_nb_left() is None, 'left' in dir(),"
            " gc.get_freeze_count() > 2 * len(gc.get_objects()))"
        )
    assert heap.stdout.split() == ["True", "False", "True"], heap.stdout
