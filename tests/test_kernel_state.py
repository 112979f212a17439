"""The kernel's state as the agent knows it, in one process: what a run keeps for Undo (and what
it does not: secrets, values past the limit), `%copilot undo` and a cell's review Undo putting
variables back, and what a restart lost."""

from __future__ import annotations

import argparse
import datetime
import inspect
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest

from copilot_nb.agent.approvals.policy import ApprovalPolicy
from copilot_nb.agent.session import CopilotSession
from copilot_nb.errors import SandboxError
from copilot_nb.events import Done
from copilot_nb.testing import call as call_tool
from copilot_nb.testing import reply
from copilot_nb.tools.context import ToolContext
from copilot_nb.tools.kernel.snapshots import keep
from copilot_nb.tools.kernel.state import HELD_RUNS, NAMED_AT_ONCE, KernelState, kernel_state
from copilot_nb.tools.kernel.tools import kernel_toolset
from copilot_nb.tools.review.ledger import ReviewBook
from copilot_nb.workspace.workspace import Workspace
from tests.helpers import call, events_of

TOKEN = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 3


def context(tmp_path: Path, namespace: dict[str, Any]) -> tuple[ToolContext, Workspace]:
    workspace = Workspace(tmp_path)
    shell = SimpleNamespace(user_ns=namespace, user_ns_hidden={})
    ctx = ToolContext(workspace=workspace, namespace=lambda: namespace, shell=shell)
    return ctx, workspace


@pytest.mark.filterwarnings("ignore:The inplace keyword")
async def test_run_code_that_drops_rows_is_taken_back_by_undo(tmp_path: Path) -> None:
    namespace: dict[str, Any] = {"df": pd.DataFrame({"a": range(10), "b": list("abcdefghij")})}
    original = namespace["df"].copy()
    ctx, workspace = context(tmp_path, namespace)
    workspace.begin_turn("drop the first rows")
    code = "df.drop(index=[0, 1, 2], inplace=True)\ndf['a'] = df.a * 10\nnew = len(df)"
    result = await call(kernel_toolset(ctx), "run_code", code=code)
    assert not result.is_error, result.content
    assert "kernel: Undo puts back df as it was before the run" in result.content
    assert "Undo removes new (the run made it)" in result.content
    assert len(namespace["df"]) == 7
    restored = workspace.undo()
    assert [(r.action, r.path) for r in restored] == [
        ("restored", "kernel variables of run_code: df, new")
    ]
    pd.testing.assert_frame_equal(namespace["df"], original)
    assert "new" not in namespace


async def test_a_run_that_changes_no_name_keeps_nothing(tmp_path: Path) -> None:
    namespace: dict[str, Any] = {"df": pd.DataFrame({"a": [1]})}
    ctx, workspace = context(tmp_path, namespace)
    workspace.begin_turn("look")
    result = await call(kernel_toolset(ctx), "run_code", code="df.head()\nprint(len(df))")
    assert "kernel:" not in result.content
    assert workspace.undo() == []


async def test_secrets_are_never_kept_and_the_result_says_so(tmp_path: Path) -> None:
    namespace: dict[str, Any] = {"api_key": "old", "token_text": TOKEN, "cfg": {"password": "p"}}
    ctx, workspace = context(tmp_path, namespace)
    workspace.begin_turn("rotate")
    code = "api_key = 'new'\ntoken_text = token_text.upper()\ncfg['password'] = 'q'"
    result = await call(kernel_toolset(ctx), "run_code", code=code)
    assert "Undo cannot put back" in result.content
    for name in ("api_key", "token_text"):
        assert f"{name} (a secret: never kept)" in result.content
    assert "cfg (holds a secret (at cfg['password']): never kept)" in result.content
    turn = workspace.checkpoints.turns[-1]
    assert not turn.others  # nothing kept at all: no copy of a secret is held
    assert TOKEN not in result.content


def test_a_value_past_the_limit_is_not_kept_and_the_note_says_why() -> None:
    big = np.zeros(100_000)
    kept = keep({"big": big, "small": [1, 2]}, ["big", "small"], limit=64 * 1024)
    assert kept.names == ["small"]
    assert "big (781.2 KB, over the 64.0 KB limit)" in kept.note()
    off = keep({"small": [1]}, ["small"], limit=0)
    assert off.left == {"small": "keeping variables is off"}


@pytest.mark.filterwarnings("ignore:The inplace keyword")
def test_a_kept_dataframe_shares_memory_until_written_and_no_later_change_reaches_it() -> None:
    frame = pd.DataFrame({"a": np.arange(1_000_000), "b": np.zeros(1_000_000)})
    namespace = {"frame": frame}
    kept = keep(namespace, ["frame"], limit=1024)  # a 16 MB frame within a 1 KB limit: shared
    assert kept.names == ["frame"] and kept.size == 0
    frame.loc[0, "a"] = 99
    frame["b"] = frame.a * 2
    frame.drop(index=[1, 2], inplace=True)
    kept.put_back(namespace)
    assert namespace["frame"]["a"].iloc[:3].tolist() == [0, 1, 2]
    assert namespace["frame"]["b"].sum() == 0 and len(namespace["frame"]) == 1_000_000


def test_a_cells_review_undo_puts_its_variables_back_and_a_keep_forgets_them() -> None:
    book, namespace = ReviewBook(), {"x": [1, 2]}
    kept = keep(namespace, ["x"], label="cell #2")
    namespace["x"].append(3)
    book.on_undo("t1", "cell-a", lambda: kept.put_back(namespace))
    book.on_undo("t1", "cell-b", lambda: namespace.update(y=1))
    book.record({"outcomes": [{"turn": "t1", "cell_id": "cell-b", "outcome": "kept"}]})
    book.record({"outcomes": [{"turn": "t1", "cell_id": "cell-a", "outcome": "undone"}]})
    assert namespace == {"x": [1, 2]}
    book.record({"outcomes": [{"turn": "t1", "cell_id": "cell-a", "outcome": "undone"}]})
    assert namespace == {"x": [1, 2]}  # once


async def test_undo_after_a_review_undo_says_the_variables_are_back_already(
    tmp_path: Path,
) -> None:
    namespace: dict[str, Any] = {"x": 1}
    ctx, workspace = context(tmp_path, namespace)
    workspace.begin_turn("bump")
    await call(kernel_toolset(ctx), "run_code", code="x = 2")
    turn = workspace.checkpoints.turns[-1]
    turn.others[0].kept.put_back(namespace)  # what the cell's Undo does
    namespace["x"] = 5  # the user's own later change is not overwritten
    restored = workspace.undo()
    assert restored[0].action == "not restored" and "already put back" in restored[0].detail
    assert namespace["x"] == 5


async def test_the_kernel_holds_a_bounded_amount_and_undo_says_what_it_let_go(
    tmp_path: Path,
) -> None:
    namespace: dict[str, Any] = {"rows": list(range(500))}
    ctx, workspace = context(tmp_path, namespace)
    state = kernel_state(ctx.shell)
    state.keep_limit = 25_000  # each run keeps `rows`, about 18 KB; twice the limit is held
    for turn in range(6):
        workspace.begin_turn(f"append {turn}")
        await call(kernel_toolset(ctx), "run_code", code="rows.append(-1)")
    assert sum(kept.size for kept in state.held) <= 2 * state.keep_limit
    assert len(state.held) < 6 <= HELD_RUNS
    undone = [workspace.undo()[0] for _ in range(6)]
    assert [r.action for r in undone][: len(state.held)] == ["restored"] * len(state.held)
    assert undone[-1].action == "not restored"
    assert "let go to keep the kernel's memory bounded" in undone[-1].detail
    assert namespace["rows"][-1] == -1, "the oldest run's variables were let go"


def test_a_restart_is_another_kernel_instance_and_its_lost_names_are_those_missing() -> None:
    before = KernelState(instance="kernel-1")
    before.ran("import pandas as pd\ndf = pd.DataFrame()\ntypo_never_made", {"pd": 1, "df": 2})
    saved = before.record()
    assert saved == {"kernel": "kernel-1", "names": ["df", "pd"]}
    same = KernelState(instance="kernel-1")
    same.resumed(saved["kernel"], saved["names"])
    assert not same.restarted and same.lost({}) == []
    fresh = KernelState(instance="kernel-2")
    fresh.resumed(saved["kernel"], saved["names"])
    assert fresh.restarted
    assert fresh.lost({"pd": 1}) == ["df"]
    fresh.forget()
    assert not fresh.restarted


def test_each_shell_has_its_own_state() -> None:
    one, two = SimpleNamespace(), SimpleNamespace()
    assert kernel_state(one) is kernel_state(one)
    assert kernel_state(one) is not kernel_state(two)


@pytest.mark.parametrize(("text", "size"), [("512MB", 512 * 2**20), ("1.5G", 3 * 2**29), ("0", 0)])
def test_the_keep_limit_reads_sizes(text: str, size: int) -> None:
    from copilot_nb.jupyter.commands.state import parse_size

    assert parse_size(text) == size


class Model:
    def __init__(self, kind: str) -> None:
        self.kind = kind


@pytest.mark.parametrize(
    "later",
    [
        "namespace['model'] = Model('mine')",  # set again
        "namespace['model'].kind = 'tuned'",  # changed in place
        "namespace['rows'].append(5)",  # a list changed in place
        "namespace['gone'] = 'back'",  # a name the run deleted, made again
    ],
    ids=["assigned", "attribute", "appended", "made-again"],
)
async def test_undo_leaves_variables_the_user_changed_after_the_run_and_force_restores(
    tmp_path: Path, later: str
) -> None:
    namespace: dict[str, Any] = {"model": Model("old"), "rows": [1], "gone": 0}
    ctx, workspace = context(tmp_path, namespace)
    workspace.begin_turn("train")
    code = "model = Model('agent')\nrows.append(4)\ndel gone\nnote = 1"
    namespace["Model"] = Model
    await call(kernel_toolset(ctx), "run_code", code=code)
    exec(later, {"namespace": namespace, "Model": Model})
    changed = later.split("'")[1]
    mine = {name: namespace.get(name) for name in ("model", "rows", "gone", "note")}
    with pytest.raises(SandboxError) as refused:
        workspace.undo()
    message = str(refused.value)
    assert f"cannot undo 'train': {changed} changed in the kernel after the agent's run" in message
    assert "%copilot undo --force" in message
    assert {name: namespace.get(name) for name in mine} == mine, "nothing was undone"

    restored = workspace.undo(force=True)
    assert [r.action for r in restored] == ["restored"]
    assert namespace["model"].kind == "old" and namespace["rows"] == [1]
    assert namespace["gone"] == 0 and "note" not in namespace


async def test_undo_puts_back_variables_nobody_changed_since_the_run(tmp_path: Path) -> None:
    frame = pd.DataFrame({"a": range(5), "s": list("abcde")})
    namespace: dict[str, Any] = {"frame": frame, "rows": [1]}
    ctx, workspace = context(tmp_path, namespace)
    workspace.begin_turn("filter")
    await call(kernel_toolset(ctx), "run_code", code="frame = frame[frame.a > 1]\nrows.append(2)")
    namespace["unrelated"] = 1  # a change to another name is no conflict
    assert workspace.undo()[0].action == "restored"
    pd.testing.assert_frame_equal(namespace["frame"], frame)
    assert namespace["rows"] == [1]


async def test_undoing_turns_one_by_one_follows_the_copies_each_undo_puts_back(
    tmp_path: Path,
) -> None:
    """A value the fingerprint cannot read whole (a date: a C type) is told by identity; the
    copy an Undo puts back stands for what the earlier run left, so that run's Undo goes on."""
    namespace: dict[str, Any] = {"day": datetime.date(2020, 1, 1)}
    ctx, workspace = context(tmp_path, namespace)
    for year in (2021, 2022):
        workspace.begin_turn(f"move to {year}")
        await call(kernel_toolset(ctx), "run_code", code=f"day = day.replace(year={year})")
    assert workspace.undo()[0].action == "restored"
    assert namespace["day"].year == 2021
    assert workspace.undo()[0].action == "restored"
    assert namespace["day"].year == 2020


async def test_a_cells_review_undo_leaves_what_the_user_changed_since(tmp_path: Path) -> None:
    namespace: dict[str, Any] = {"x": 1, "y": 1}
    ctx, workspace = context(tmp_path, namespace)
    workspace.begin_turn("bump")
    await call(kernel_toolset(ctx), "run_code", code="x = 2\ny = 2")
    kept = workspace.checkpoints.turns[-1].others[0].kept
    namespace["y"] = 7  # the user's own
    assert kept.put_back(namespace) == ["x"]  # what the cell's Undo in review does
    assert (namespace["x"], namespace["y"]) == (1, 7)
    restored = workspace.undo()
    assert restored[0].action == "not restored"
    assert "already put back by the cell's Undo, except y (changed since the run)" in (
        restored[0].detail
    )


async def test_names_the_agent_inspected_or_listed_count_as_the_conversations(
    tmp_path: Path,
) -> None:
    import json as a_module

    namespace: dict[str, Any] = {"df": pd.DataFrame({"a": [1]}), "q1": 0.5, "js": a_module}
    ctx, _ = context(tmp_path, namespace)
    state = kernel_state(ctx.shell)
    await call(kernel_toolset(ctx), "inspect_variable", name="df['a']")
    assert list(state.used) == ["df"]
    await call(kernel_toolset(ctx), "inspect_variable", name="nowhere")
    await call(kernel_toolset(ctx), "list_variables")
    assert set(state.used) == {"df", "q1"}, "a module is an import, not the conversation's state"
    fresh = KernelState(instance="after-a-restart")
    fresh.resumed(state.instance + "-before", list(state.used))
    assert fresh.lost({}) == ["df", "q1"]


def test_names_an_answer_names_count_only_when_they_were_kernel_variables() -> None:
    import json as a_module

    state = KernelState()
    namespace = {"df": 1, "total": 2, "a": 3, "js": a_module, "_x": 4}
    text = "`df` has 3 rows; the total is `a` times 2. A short a, js, _x and df.total are not."
    state.named(text, namespace, {})
    assert list(state.used) == ["df", "a", "total"]
    many = {f"v{i}": i for i in range(200)}
    state.named(" ".join(many), many, {})
    assert len(state.used) == 3 + NAMED_AT_ONCE


async def test_a_turns_answer_and_its_var_references_count_as_the_conversations(
    serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = serve([reply("`df` has 2 rows, and total is 3.")])
    namespace: dict[str, Any] = {"df": pd.DataFrame({"a": [1, 2]}), "cfg": {"k": 1}, "total": 3}
    monkeypatch.chdir(tmp_path)
    shell = SimpleNamespace(user_ns=namespace, user_ns_hidden={})
    session = CopilotSession(shell, resolve=lambda spec: server.model())
    events = await events_of(session, "what is in @var:cfg?")
    assert isinstance(events[-1], Done), events[-1]
    assert set(kernel_state(shell).used) == {"cfg", "df", "total"}


OUTLIER_CELLS = [
    "import pandas as pd",
    "df = pd.read_csv('data.csv')",
    "q1 = df.x.quantile(0.25)\nq3 = df.x.quantile(0.75)",
    "fence = q3 + 1.5 * (q3 - q1)",
    "df_clean['outlier'] = df_clean.x > fence",  # the agent wrote it after run_code made df_clean
]


async def test_copilot_state_after_a_restart_suggests_only_what_a_plan_can_make(
    serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The agent made df_clean and profile with run_code and only looked at q1, q3 and fence;
    after a restart each lost name is told by what brings it back, and pd is an import."""
    import nbformat

    from copilot_nb.jupyter.commands.state import rebuild, state

    monkeypatch.chdir(tmp_path)
    path = tmp_path / "work.ipynb"
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in OUTLIER_CELLS]
    path.write_text(nbformat.writes(notebook))
    (tmp_path / "data.csv").write_text("x\n1\n2\n3\n40\n")
    before: dict[str, Any] = {"__session__": str(path)}
    for source in OUTLIER_CELLS[:2]:  # the user runs the first cells
        exec(source, before)
    runs = ["df_clean = df.dropna()", "profile = df_clean.describe()\nprint(pd.__version__)"]
    server = serve(
        [
            reply("", call_tool("run_code", id="clean", code=runs[0])),
            reply("", call_tool("run_code", id="profile", code=runs[1])),
            reply("Cleaned."),
            reply(
                "", *(call_tool("inspect_variable", id=n, name=n) for n in ("q1", "q3", "fence"))
            ),
            reply("Looked."),
        ]
    )
    shell = SimpleNamespace(user_ns=before, user_ns_hidden={})
    kernel_state(shell).instance = "the-kernel-before"
    session = CopilotSession(shell, resolve=lambda spec: server.model())
    assert isinstance((await events_of(session, "clean df"))[-1], Done)
    for source in OUTLIER_CELLS[2:]:  # the user runs the rest, the agent's cell among them
        exec(source, before)
    assert isinstance((await events_of(session, "the quartiles?"))[-1], Done)
    server.assert_complete()

    after: dict[str, Any] = {"__session__": str(path)}  # the restarted kernel, resumed
    restarted = SimpleNamespace(user_ns=after, user_ns_hidden={})
    resumed = CopilotSession(restarted, resolve=lambda spec: server.model())
    assert resumed.saved.resume("openai:scripted") is not None
    capsys.readouterr()
    shown = state(resumed, argparse.Namespace(keep=None))
    if inspect.isawaitable(shown):
        await shown
    said = capsys.readouterr().out
    assert (
        "restarted since the conversation's last turn; lost: df, df_clean, fence, profile, q1, q3"
        in said
    )
    assert "copilot: %copilot rebuild df fence q1 q3 runs the cells that make them" in said
    assert (
        "copilot: df_clean, profile were made by the agent's run_code, not by a cell: "
        "%copilot rebuild df_clean profile shows its code and asks before running it"
    ) in said
    assert " pd" not in said.split("lost:")[1], "a module is an import, not lost state"

    after.update({k: before[k] for k in ("pd", "df", "df_clean")})  # made again by hand
    resumed.approvals = ApprovalPolicy(execute="deny")
    await rebuild(resumed, argparse.Namespace(names=["profile"], plan=False, notebook=None))
    said = capsys.readouterr().out
    assert "from work.ipynb: runs run_code 2 (makes profile)\n" in said
    assert "run_code 2, the agent's code:\n    profile = df_clean.describe()\n" in said
    assert "run_code: denied by the approval policy" in said and "profile" not in after
    resumed.approvals = ApprovalPolicy(execute="allow")
    await rebuild(resumed, argparse.Namespace(names=["profile"], plan=False, notebook=None))
    assert "back: profile" in capsys.readouterr().out
    assert after["profile"].loc["count", "x"] == 4


def test_the_agents_kept_runs_are_saved_scrubbed_and_come_back_on_resume(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from copilot_nb.agent.conversations.format import conversation_path
    from copilot_nb.agent.conversations.keeper import Keeper
    from copilot_nb.agent.conversations.recorder import Recorder
    from copilot_nb.agent.conversations.store import ConversationFile

    monkeypatch.chdir(tmp_path)
    before = KernelState(instance="kernel-1")
    namespace = {"key": TOKEN, "n": 1}
    before.ran(f"key = {TOKEN!r}\nn = 1", namespace, agent=True)
    before.ran("print(n)", namespace, agent=True)  # made and changed nothing: not kept
    before.ran("n = 2", namespace)  # a cell's run: the notebook keeps it
    path = tmp_path / "work.ipynb"
    recorder = Recorder(ConversationFile(conversation_path(path)))
    recorder.begin("set the key")
    recorder.end(model="m", provider="p", premium=None, kernel=before.record())
    assert "runs" not in before.record(), "each turn records the runs since the last"
    saved = conversation_path(path).read_text()
    assert TOKEN not in saved
    assert '"runs":["key = \'[redacted]\'\\nn = 1"]' in saved

    fresh = KernelState(instance="kernel-2")
    keeper = Keeper({"__session__": str(path)}, enabled=True, kernel=fresh)
    assert keeper.resume("openai:scripted") is not None
    assert fresh.restarted and fresh.lost({}) == ["key", "n"]
    assert (
        len(fresh.runs) == 1 and fresh.runs[0].startswith("key = ") and TOKEN not in fresh.runs[0]
    )
