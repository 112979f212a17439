"""The kernel's state in real kernels: two turns, a restart and a resume, and the next request
says what the restart lost; the scripted model's rebuild_names brings `df` back running just the
cells that make it; run_code that drops rows is taken back by `%copilot undo`, and a secret it
changed is never kept."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import nbformat
import pytest

from copilot_nb.testing import call, reply
from tests.helpers import Planted, offered
from tests.live_frontend import wait_until
from tests.live_story import outcomes_recorded, saved_notebook

pytestmark = pytest.mark.kernel

NOTEBOOK = "work.ipynb"
LET_IT_RUN = '%config CopilotMagics.approve_execute = "allow"'

CELLS = [
    "import pandas as pd",
    "df = pd.read_csv('data.csv')",
    "slow = sum(range(10))",
    "df['b'] = df.a * 2",
    "print(df)",
]


def write_notebook(folder: Path) -> Path:
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(source) for source in CELLS]
    path = folder / NOTEBOOK
    path.write_text(nbformat.writes(notebook))
    (folder / "data.csv").write_text("a\n1\n2\n3\n")
    return path


def asked(request) -> str:
    """The last user message of a request: the context block and the prompt."""
    users = [m for m in request.messages if m["role"] == "user"]
    content = users[-1]["content"]
    return content if isinstance(content, str) else json.dumps(content)


def test_after_a_restart_the_request_names_what_was_lost_and_a_rebuild_brings_df_back(
    serve, kernel_for, tmp_path: Path
) -> None:
    path = write_notebook(tmp_path)
    server = serve(
        [
            reply("", call("run_code", id="look", code="print(df.shape)")),
            reply("Three rows."),
            reply("", call("run_code", id="sum", code="total = int(df.b.sum())")),
            reply("Twelve."),
            reply("", call("rebuild_names", id="rebuild", names=["df"])),
            reply("df is back."),
        ]
    )
    kernel = kernel_for(server, JPY_SESSION_NAME=str(path))
    for source in CELLS:  # the user runs the notebook
        assert kernel.execute(source).status == "ok"
    assert kernel.execute("%%copilot --yes\nhow big is df?").status == "ok"
    assert kernel.execute("%%copilot --yes\nsum column b").status == "ok"
    assert "The kernel is fresh" not in asked(server.requests[2])
    assert "rebuild_names" not in offered(server.requests[2]), "nothing lost: it waits"

    said = kernel.restart()
    assert "resumed conversation" in said
    state = kernel.execute("%copilot state")
    assert "restarted since the conversation's last turn; lost: df, total" in state.stdout
    assert "%copilot rebuild df runs the cells that make them" in state.stdout
    assert (
        "total was made by the agent's run_code, not by a cell: %copilot rebuild total shows "
        "its code and asks before running it"
    ) in state.stdout
    run = kernel.execute("%%copilot --yes\ncarry on with df")
    assert run.status == "ok", run.reply

    block = asked(server.requests[4])
    assert "The kernel is fresh: it restarted" in block
    assert "\ndf (#2, #4)\ntotal (your run_code of an earlier turn made it, not a cell; " in block
    assert "rebuild_names" in offered(server.requests[4]), "what the block names is listed"
    result = server.requests[5].tool_results["rebuild"]
    assert "runs #1 (makes pd), #2 (makes df; reads files or the network: read_csv), #4" in result
    assert "back: df" in result
    back = kernel.execute("print(df.b.tolist(), 'slow' in dir())")
    assert "[2, 4, 6] False" in back.stdout, "just the cells that make df ran"

    # the user's own command: the plan, then the same cells
    assert kernel.execute("del df, pd").status == "ok"
    shown = kernel.execute("%copilot rebuild df --plan").stdout
    assert "runs #1 (makes pd), #2 (makes df; reads files or the network: read_csv), #4" in shown
    assert "NameError" in kernel.execute("df").reply["content"]["ename"]
    assert "back: df" in kernel.execute("%copilot rebuild df").stdout
    assert "[2, 4, 6] False" in kernel.execute("print(df.b.tolist(), 'slow' in dir())").stdout
    saved = nbformat.reads(path.read_text(), as_version=4)
    assert "copilot_nb" in saved.cells[3].metadata and "copilot_nb" not in saved.cells[2].metadata
    server.assert_complete()


def test_after_a_restart_a_variable_the_agent_only_inspected_is_lost_and_rebuild_is_offered(
    serve, kernel_for, tmp_path: Path
) -> None:
    path = write_notebook(tmp_path)
    server = serve(
        [
            reply("", call("inspect_variable", id="look", name="df")),
            reply("It has one column, a, with three rows."),
            reply("df is gone since the restart; rebuild_names brings it back."),
        ]
    )
    kernel = kernel_for(server, JPY_SESSION_NAME=str(path))
    for source in CELLS:  # the user runs the notebook
        assert kernel.execute(source).status == "ok"
    assert kernel.execute("%%copilot\nwhat is in df?").status == "ok"
    assert "The kernel is fresh" not in asked(server.requests[0])

    assert "resumed conversation" in kernel.restart()
    run = kernel.execute("%%copilot\ncarry on with df")
    assert run.status == "ok", run.reply
    block = asked(server.requests[2])
    assert "The kernel is fresh: it restarted" in block, block
    assert "\ndf (#2, #4)\n" in block, block
    assert "rebuild_names" in offered(server.requests[2]), "what the block names is listed"
    state = kernel.execute("%copilot state").stdout
    assert "lost: df\n" in state and "%copilot rebuild df runs the cells that make them" in state
    server.assert_complete()


def test_undo_gives_back_the_dataframe_run_code_dropped_rows_of_and_keeps_no_secret(
    serve, kernel_for, tmp_path: Path
) -> None:
    """Then a snapshot beside the notebook: the user's own comes back, one from elsewhere is
    refused and nothing in it runs."""
    secret = "sk-proj-" + "Zq7Xw2Lp9Rt4Yv6Nb3Mc" * 3
    code = "df.drop(index=[0, 1], inplace=True)\napi_key = 'rotated'"
    server = serve([reply("", call("run_code", id="drop", code=code)), reply("Dropped.")])
    kernel = kernel_for(server, JPY_SESSION_NAME=str(tmp_path / NOTEBOOK))
    setup = f"import pandas as pd\ndf = pd.DataFrame({{'a': range(5)}})\napi_key = {secret!r}"
    assert kernel.execute(setup).status == "ok"
    assert kernel.execute("%%copilot --yes\ndrop the first two rows").status == "ok"
    result = server.requests[-1].tool_results["drop"]
    assert "Undo puts back df as it was before the run" in result
    assert "api_key (a secret: never kept)" in result
    assert kernel.execute("print(len(df))").stdout.strip() == "3"

    undone = kernel.execute("%copilot undo")
    assert undone.status == "ok", undone.reply
    after = kernel.execute("print(df.a.tolist(), api_key)")
    assert "[0, 1, 2, 3, 4] rotated" in after.stdout, "df came back; the secret was never kept"
    assert secret not in json.dumps([r.body for r in server.requests])

    saved = kernel.execute("%copilot snapshot df api_key").stdout
    assert "saved df to work.copilot-vars.pkl" in saved and "api_key: a secret" in saved
    assert secret.encode() not in (tmp_path / "work.copilot-vars.pkl").read_bytes()
    assert kernel.execute("del df\n%copilot snapshot --load").status == "ok"
    assert "[0, 1, 2, 3, 4]" in kernel.execute("print(df.a.tolist())").stdout

    mark = tmp_path / "ran"
    header = {"format": 1, "names": ["df"], "at": "2026-01-01T00:00:00Z", "sig": "0" * 64}
    planted = json.dumps(header).encode() + b"\n" + pickle.dumps({"df": Planted(mark)})
    (tmp_path / "work.copilot-vars.pkl").write_bytes(planted)
    (tmp_path / "work.copilot-vars.pkl").chmod(0o600)  # the user's own file, but not signed
    refused = kernel.execute("%copilot snapshot --load")
    assert refused.status == "error"
    assert "was not saved by you" in refused.reply["content"]["evalue"]
    assert not mark.exists(), "nothing in the file from elsewhere ran"


def test_a_cell_run_in_review_says_what_its_undo_restores_and_its_undo_puts_df_back(
    serve, kernel_for, front_end, tmp_path: Path
) -> None:
    notebook = tmp_path / "review.ipynb"
    cells = saved_notebook(
        notebook, [nbformat.v4.new_code_cell("df = df[df.a > 2]\nsize = len(df)")]
    )
    server = serve([reply("", call("run_cell", id="r", cell_id="#1")), reply("Filtered.")])
    kernel = kernel_for(server, JPY_SESSION_NAME=str(notebook))
    setup = "import pandas as pd\ndf = pd.DataFrame({'a': range(5)})\n" + LET_IT_RUN
    assert kernel.execute(setup).status == "ok"
    front = front_end(kernel, "review.ipynb", cells)
    assert kernel.execute("%%copilot\nkeep the big rows").status == "ok"

    review = front.cell(0)["metadata"]["copilot_nb"]["review"]
    assert review["kind"] == "run" and review["ran"] is True
    assert review["kernel"] == (
        "Undo puts back df as it was before the run. Undo removes size (the run made it)"
    )
    assert "kernel: Undo puts back df" in server.requests[-1].tool_results["r"]
    assert kernel.execute("print(len(df))").stdout.strip() == "2"

    front.review_cell(front.cell(0)["id"], "undone")
    wait_until(lambda: outcomes_recorded(kernel) == 1)
    back = kernel.execute("print(df.a.tolist(), 'size' in dir())")
    assert "[0, 1, 2, 3, 4] False" in back.stdout


def test_undo_leaves_a_variable_the_user_set_after_the_agents_run_until_forced(
    serve, kernel_for, tmp_path: Path
) -> None:
    code = "model = {'kind': 'agent'}\nscore = 0.9"
    server = serve([reply("", call("run_code", id="fit", code=code)), reply("Fitted.")])
    kernel = kernel_for(server, JPY_SESSION_NAME=str(tmp_path / NOTEBOOK))
    assert kernel.execute("model = {'kind': 'baseline'}").status == "ok"
    assert kernel.execute("%%copilot --yes\nfit a model").status == "ok"
    result = server.requests[-1].tool_results["fit"]
    assert "Undo puts back model as it was before the run" in result
    assert kernel.execute("model = {'kind': 'mine'}").status == "ok"  # the user's own, later

    undone = kernel.execute("%copilot undo")
    assert undone.status == "error"
    said = undone.reply["content"]["evalue"]
    assert "model changed in the kernel after the agent's run" in said
    assert "nothing was undone" in said and "%copilot undo --force" in said
    assert "{'kind': 'mine'} 0.9" in kernel.execute("print(model, score)").stdout

    forced = kernel.execute("%copilot undo --force")
    assert forced.status == "ok", forced.reply
    shown = "\n".join(forced.final_displays().values())
    assert "kernel variables of run_code: model, score restored" in shown
    back = kernel.execute("print(model, 'score' in dir())").stdout
    assert "{'kind': 'baseline'} False" in back
    server.assert_complete()
