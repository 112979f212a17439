"""The panel's list of runs going on, in process: a run that outlasts its wait is listed with its
state and last printed line and updated while it goes on; a view's Stop stops that run alone;
ended runs leave the list at the next prompt; a closed panel stops listening."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from copilot_nb.jupyter.panel.run_list import RunList
from copilot_nb.jupyter.panel.wire import RunsMessage
from copilot_nb.tools.context import ToolContext
from copilot_nb.tools.kernel.runs import runs_of
from copilot_nb.tools.kernel.tools import run_code
from copilot_nb.workspace.workspace import Workspace

TRAIN = (
    "import time\nfor epoch in range(400):\n    print('epoch', epoch, flush=True)\n"
    "    time.sleep(0.05)"
)


@pytest.fixture
def ctx(tmp_path: Path) -> Iterator[ToolContext]:
    namespace: dict[str, Any] = {}
    runs = runs_of(None)
    runs.wait_seconds = 0.3
    yield ToolContext(workspace=Workspace(tmp_path), namespace=lambda: namespace)
    going = runs.running()
    if going is not None:
        going.stop("the test's end")
    runs.wait_seconds = 10.0


async def test_a_run_is_listed_live_and_a_views_stop_stops_it_alone(ctx: ToolContext) -> None:
    sent: list[RunsMessage] = []
    listed = RunList(None, sent.append, live=lambda: True)
    try:
        started = await run_code(ctx, TRAIN, timeout=60)
        handle = started.content.split(" ", 1)[0]
        (row,) = sent[0]["runs"]
        assert row["handle"] == handle and row["running"]
        assert row["state"].startswith(f"▶ {handle} (run_code) running")

        await asyncio.sleep(1.3)  # the list is sent again each second while the run goes on
        assert len(sent) >= 2 and sent[-1]["runs"][0]["tail"].startswith("epoch ")
        assert "\n" not in sent[-1]["runs"][0]["tail"], "one line: the last it printed"

        listed.stop("run-0")  # a handle it does not list: nothing happens
        listed.stop(handle)
        run = runs_of(None).get(handle)
        assert run is not None
        await run.wait(10)
        await asyncio.sleep(0)
        (ended,) = sent[-1]["runs"]
        assert not ended["running"] and f"{handle} (run_code) stopped by you" in ended["state"]

        listed.replay()
        assert sent[-1]["runs"] == [ended], "a view that opens now sees how it ended"
        listed.forget_ended()
        assert sent[-1] == {"kind": "runs", "runs": []}, "the next prompt clears ended runs"
        count = len(sent)
        listed.replay()
        assert len(sent) == count, "an empty list is not sent to a view that opens"
    finally:
        listed.close()


async def test_a_closed_panel_stops_listening_and_its_runs_go_on(ctx: ToolContext) -> None:
    sent: list[RunsMessage] = []
    open_ = [True]
    listed = RunList(None, sent.append, live=lambda: open_[0])
    open_[0] = False

    started = await run_code(ctx, "import time\ntime.sleep(0.8)\nfinished = 1", timeout=60)

    assert "still running" in started.content and sent == []
    assert listed.went_on not in runs_of(None).watchers
    run = runs_of(None).running()
    assert run is not None
    await run.wait(10)
    assert ctx.namespace()["finished"] == 1, "the run went on without the panel"
