"""`python -m evals.run --model MODEL`: every task through `%%copilot`, then a table and JSON.

MODEL is a model string (`openai:gpt-4o`, `copilot:claude-sonnet-4`, `ollama:qwen3`), `offline`
(the built-in demo model, which fails most tasks), or `scripted` / `scripted:wrong`: each task's
own correct (or wrong) scripted solution, served over loopback, which tests the harness itself.

`--record DIR` keeps each task's cassette (its approvals signed with your key); `--replay DIR`
plays them back as `%copilot replay` does: only approvals you recorded stand in for you, and any
other call is denied. `--trust` uses a cassette's approvals although you did not record it (a
folder someone gave you): give it only after reading what the cassettes' calls do.

`--task-timeout` bounds each task (600 s unless set), `--time-limit` the whole run. A run stopped
by its limit, by SIGTERM (what `timeout` and CI send) or by Ctrl-C still prints its table and
writes its JSON: the tasks it did not finish are rows that say so.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

from copilot_nb.testing import Script, ScriptedServer
from copilot_nb.testing.demo_notebooks import PROVIDER_VARIABLES

from .harness import Harness, Result, dumps, not_run, table
from .task import Task
from .tasks import all_tasks


@contextmanager
def harness_for(
    model: str,
    *,
    record: Path | None = None,
    replay: Path | None = None,
    trust: bool = False,
    config: Path | None = None,
    script: Callable[[Task], Sequence[Any]] | None = None,
) -> Iterator[Harness]:
    """A harness whose kernel talks to `model`; the offline and scripted ones see none of the
    user's provider settings or config folder (a new one, or `config`: a test's own user, whose
    cassette key signs a recording and checks its replay). `script(task)`, for the scripted
    model, replaces the task's own solution (a test of the harness's measures)."""
    if model.startswith("scripted") or model == "offline":
        os.environ.pop("COPILOT_NB_CASSETTE", None)
        isolated = {v: "" for v in PROVIDER_VARIABLES if v != "COPILOT_NB_MODEL"}
        folder = config or Path(tempfile.mkdtemp(prefix="copilot_nb_eval_config_"))
        isolated["COPILOT_NB_CONFIG_DIR"] = str(folder)
    if model == "offline":
        harness = Harness(env={**isolated, "COPILOT_NB_MODEL": "offline"}, record=record)
    elif model.startswith("scripted"):
        wrong = model == "scripted:wrong"
        server = ScriptedServer().start()

        def load(task: Task) -> None:
            steps = script(task) if script else task.wrong if wrong else task.solution
            server.script = Script(steps)

        env = {
            **isolated,
            "COPILOT_NB_MODEL": "openai:scripted",
            "OPENAI_BASE_URL": server.url,
            "OPENAI_API_KEY": "scripted",
        }
        try:
            harness = Harness(env=env, record=record, replay=replay, before_task=load, trust=trust)
        except BaseException:
            server.stop()
            raise
        try:
            yield harness
        finally:
            harness.close()
            server.stop()
        return
    else:
        harness = Harness(
            env={"COPILOT_NB_MODEL": model}, record=record, replay=replay, trust=trust
        )
    try:
        yield harness
    finally:
        harness.close()


class Stopped(Exception):
    """The run was told to stop: SIGTERM, what `timeout` and CI send at their limit."""


@contextmanager
def stopped_by_sigterm() -> Iterator[None]:
    """SIGTERM raised as `Stopped` in the main thread, so the run still prints its table."""

    def stop(signum: int, frame: FrameType | None) -> None:
        raise Stopped(signal.Signals(signum).name)

    previous = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def run(
    model: str,
    *,
    names: list[str] | None = None,
    record: Path | None = None,
    replay: Path | None = None,
    trust: bool = False,
    config: Path | None = None,
    task_timeout: float = 600,
    time_limit: float | None = None,
    script: Callable[[Task], Sequence[Any]] | None = None,
) -> list[Result]:
    """Every task's result, in order; a task the run did not finish (time limit, SIGTERM,
    Ctrl-C) is a failed row that says why, so the table and the JSON always cover the run."""
    tasks = [t for t in all_tasks() if not names or t.name in names]
    unknown = set(names or ()) - {t.name for t in tasks}
    if unknown:
        raise SystemExit(f"no such task: {', '.join(sorted(unknown))}")
    started = time.monotonic()
    results: list[Result] = []
    why = ""
    with harness_for(
        model, record=record, replay=replay, trust=trust, config=config, script=script
    ) as harness:
        for task in tasks:
            left = None if time_limit is None else time_limit - (time.monotonic() - started)
            if left is not None and left <= 0:
                why = f"not run: the run's time limit ({time_limit:g} s) was reached"
                break
            harness.timeout = task_timeout if left is None else min(task_timeout, left)
            try:
                result = harness.run_task(task)
            except (Stopped, KeyboardInterrupt) as exc:
                why = f"not run: the run was stopped ({exc or 'interrupted'})"
                break
            mark = "ok  " if result.ok else "FAIL"
            print(f"{mark} {task.name:28} {result.seconds:6.1f}s  {result.reason}", flush=True)
            results.append(result)
    return results + [not_run(t, why, stopped=True) for t in tasks[len(results) :]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.run", description=__doc__)
    parser.add_argument("--model", default="offline", help="provider:model, offline or scripted")
    parser.add_argument("--task", action="append", dest="names", help="run only this task")
    parser.add_argument("--record", type=Path, help="keep each task's cassette in this folder")
    parser.add_argument("--replay", type=Path, help="replay each task's cassette from here")
    parser.add_argument(
        "--trust",
        action="store_true",
        help="with --replay: let cassettes you did not record approve their calls",
    )
    parser.add_argument("--json", type=Path, default=Path("build/eval.json"), help="JSON out")
    parser.add_argument(
        "--task-timeout", type=float, default=600, metavar="S", help="seconds for each task"
    )
    parser.add_argument(
        "--time-limit", type=float, metavar="S", help="seconds for the whole run, then stop"
    )
    args = parser.parse_args(argv)
    record = args.record.resolve() if args.record else None
    replay = args.replay.resolve() if args.replay else None
    if args.trust and replay is None:
        parser.error("--trust applies to --replay only")
    with stopped_by_sigterm():
        results = run(
            args.model,
            names=args.names,
            record=record,
            replay=replay,
            trust=args.trust,
            task_timeout=args.task_timeout,
            time_limit=args.time_limit,
        )
    print()
    print(table(results))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(dumps(results, model=args.model) + "\n", encoding="utf-8")
    print(f"\nJSON: {args.json}")
    return 1 if any(r.stopped for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
