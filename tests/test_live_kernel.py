"""The live notebook in a real kernel: the agent reads and edits the notebook a front end has open.

A `%%copilot` cell runs in a real ipykernel; the front end is `live_frontend.LiveFrontEnd`, a
second kernel connection that speaks copilot_nb's comm protocol exactly as the JupyterLab
extension does. Its notebook is the user's open document, unsaved cells included; the file on
disk is what was last saved. Each story checks what the model was told, the open notebook, and
the file.
"""

from __future__ import annotations

import base64
import re
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from copilot_nb.testing import ScriptedRequest, ScriptedTurn, call, reply
from tests.kernel_session import KernelSession
from tests.live_frontend import LiveFrontEnd, wait_until
from tests.notebook_samples import png

pytestmark = pytest.mark.kernel

STAMP_AT = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def tool_results(request: ScriptedRequest) -> dict[str, str]:
    """The tool results a request carried, by tool call id."""
    return {m["tool_call_id"]: m["content"] for m in request.messages if m.get("role") == "tool"}


def cell_id_of(listing: str, source_start: str) -> str:
    """The id list_cells gives the cell whose first line starts so."""
    line = next(line for line in listing.splitlines() if f"| {source_start}" in line)
    return line.split("id=")[1].split()[0]


def saved_notebook(path: Path, cells: list[Any]) -> list[dict[str, Any]]:
    """Write a notebook with these cells; return them as the plain dicts a front end holds."""
    nb = nbformat.v4.new_notebook()
    nb.cells = cells
    nbformat.write(nb, path)
    return [{**cell, "source": "".join(cell["source"])} for cell in nbformat.read(path, 4)["cells"]]


@pytest.fixture
def front_end(tmp_path: Path) -> Iterator[Callable[..., LiveFrontEnd]]:
    """Open a notebook in a stand-in front end attached to a kernel; by default it shares the
    kernel connection that runs the cells, as JupyterLab does."""
    fronts: list[LiveFrontEnd] = []

    def attach(
        kernel: KernelSession, path: str, cells: list[dict[str, Any]], client: str | None = None
    ) -> LiveFrontEnd:
        front = LiveFrontEnd(
            kernel.manager,
            path=path,
            server_root=tmp_path,
            client=client or kernel.client.session.session,
            cells=cells,
        )
        fronts.append(front)
        front.open()
        return front

    yield attach
    for front in fronts:
        front.stop()


def copilot(kernel: KernelSession, prompt: str = "do it") -> None:
    run = kernel.execute(f"%%copilot --yes\n{prompt}")
    assert run.status == "ok", run.reply["content"]


def test_the_agent_sees_the_unsaved_cell_and_edits_the_open_notebook_never_the_file(
    serve, kernel_for, front_end, tmp_path: Path
) -> None:
    notebook = tmp_path / "sales.ipynb"
    saved = saved_notebook(
        notebook,
        [nbformat.v4.new_markdown_cell("# Sales"), nbformat.v4.new_code_cell("x = 1")],
    )
    on_disk = notebook.read_bytes()
    ran = {"output_type": "stream", "name": "stdout", "text": "1\n"}
    unsaved = nbformat.v4.new_code_cell("draft = 'unsaved'")
    open_cells = [saved[0], {**saved[1], "outputs": [ran], "execution_count": 1}, dict(unsaved)]
    ids: dict[str, str] = {}

    def insert_and_edit(request: ScriptedRequest) -> ScriptedTurn:
        listing = tool_results(request)["l"]
        ids.update(
            title=cell_id_of(listing, "# Sales"),
            x=cell_id_of(listing, "x = 1"),
            draft=cell_id_of(listing, "draft = 'unsaved'"),
        )
        return reply(
            "",
            call("insert_cell", id="i", after_cell_id=ids["draft"], cell_type="code", source="y"),
            call("edit_cell", id="e", cell_id=ids["x"], old_str="x = 1", new_str="x = 2"),
        )

    def replace_and_delete(request: ScriptedRequest) -> ScriptedTurn:
        return reply(
            "",
            call("replace_cell", id="r", cell_id=ids["title"], source="# Sales report"),
            call("delete_cell", id="d", cell_id=ids["draft"]),
        )

    server = serve(
        [
            reply("", call("list_cells", id="l")),
            insert_and_edit,
            replace_and_delete,
            reply("Done."),
        ]
    )
    kernel = kernel_for(server, JPY_SESSION_NAME=str(notebook))
    front = front_end(kernel, "sales.ipynb", open_cells)
    copilot(kernel)

    results = tool_results(server.requests[-1])
    listing = results["l"]
    assert listing.startswith("sales.ipynb: 3 cells (code 2, markdown 1)")
    assert f"#2 code [ ] id={ids['draft']} | draft = 'unsaved'" in listing
    assert listing.endswith("(live: open in JupyterLab, unsaved changes included)")
    for key, change in [("i", "inserted"), ("e", "edited"), ("r", "replaced"), ("d", "deleted")]:
        assert results[key].startswith(change), results[key]
        assert "live: open in JupyterLab" in results[key], results[key]
    assert front.sources() == ["# Sales report", "x = 2", "y"]
    title, x, y = (front.cell(i) for i in range(3))
    assert x["id"] == ids["x"] and x["outputs"] == [] and x["execution_count"] is None
    for cell, change in [(title, "replaced"), (x, "edited"), (y, "inserted")]:
        stamp = cell["metadata"]["copilot_nb"]
        assert stamp["change"] == change and stamp["model"] == "scripted"
        assert STAMP_AT.match(stamp["at"]), stamp
    assert notebook.read_bytes() == on_disk, "the file is the user's to save"
    server.assert_complete()


def test_a_cell_the_user_changed_after_the_agent_read_it_is_not_overwritten(
    serve, kernel_for, front_end, tmp_path: Path
) -> None:
    """Changed before the edit reads the notebook again (the kernel refuses it), and between
    that read and the change arriving (the front end refuses it)."""
    notebook = tmp_path / "work.ipynb"
    cells = saved_notebook(
        notebook, [nbformat.v4.new_code_cell("total = 1"), nbformat.v4.new_code_cell("rate = 1")]
    )
    front: dict[str, LiveFrontEnd] = {}

    def user_types_then_edit(request: ScriptedRequest) -> ScriptedTurn:
        with front["nb"].lock:
            front["nb"].cells[0]["source"] = "total = 7  # mine"
        return reply("", call("edit_cell", id="e1", cell_id="#0", old_str="1", new_str="2"))

    def user_types_while_it_arrives(request: ScriptedRequest) -> ScriptedTurn:
        def typing(data: dict[str, Any]) -> None:
            if data.get("op") == "apply":
                front["nb"].cells[1]["source"] = "rate = 5  # mine"

        front["nb"].before_answer = typing
        return reply("", call("edit_cell", id="e2", cell_id="#1", old_str="1", new_str="2"))

    server = serve(
        [
            reply("", call("list_cells", id="l")),
            user_types_then_edit,
            user_types_while_it_arrives,
            reply("You changed those cells; I left them."),
        ]
    )
    kernel = kernel_for(server, JPY_SESSION_NAME=str(notebook))
    front["nb"] = front_end(kernel, "work.ipynb", cells)
    copilot(kernel)

    results = tool_results(server.requests[-1])
    assert "since you read it" in results["e1"] and "nothing was changed" in results["e1"]
    assert "since you read it" in results["e2"] and "nothing was changed" in results["e2"]
    assert front["nb"].sources() == ["total = 7  # mine", "rate = 5  # mine"]
    assert len(front["nb"].requests("apply")) == 1, "the kernel refused the first itself"
    server.assert_complete()


RUN_SOURCES = {
    "ok": "print('hello')\nimport sys; print('careful', file=sys.stderr)\nanswer = 6 * 7\nanswer",
    "fails": "1 / 0",
    "image": (
        "import base64\nfrom IPython.display import Image, display\n"
        "display(Image(base64.b64decode('{png}')))"
    ),
    "loop": "while True:\n    pass",
    "agent": "%%copilot\nsummarise",
}


def test_run_cell_runs_the_unsaved_source_and_puts_outputs_in_the_open_cell(
    serve, kernel_for, front_end, tmp_path: Path
) -> None:
    notebook = tmp_path / "run.ipynb"
    saved = saved_notebook(notebook, [nbformat.v4.new_code_cell("print('saved version')")])
    on_disk = notebook.read_bytes()
    image = RUN_SOURCES["image"].replace("{png}", base64.b64encode(png(3, 2)).decode())
    cells = [
        {**saved[0], "source": RUN_SOURCES["ok"]},  # the user typed and did not save
        dict(nbformat.v4.new_code_cell(RUN_SOURCES["fails"])),
        dict(nbformat.v4.new_code_cell(image)),
        dict(nbformat.v4.new_markdown_cell("# Notes")),
        dict(nbformat.v4.new_code_cell(RUN_SOURCES["agent"])),
        dict(nbformat.v4.new_code_cell(RUN_SOURCES["loop"])),
    ]
    server = serve(
        [
            reply("", call("run_cell", id="ok", cell_id="#0")),
            reply("", call("run_cell", id="fails", cell_id="#1")),
            reply("", call("run_cell", id="image", cell_id="#2")),
            reply("", call("run_cell", id="markdown", cell_id="#3")),
            reply("", call("run_cell", id="agent", cell_id="#4")),
            reply("", call("run_cell", id="loop", cell_id="#5", timeout=1)),
            reply("Ran them."),
        ]
    )
    kernel = kernel_for(server, JPY_SESSION_NAME=str(notebook))
    front = front_end(kernel, "run.ipynb", cells)
    copilot(kernel)
    assert kernel.execute("assert answer == 42").status == "ok", "what ran stays defined"

    results = tool_results(server.requests[-1])
    assert results["ok"].startswith(f"ran cell {saved[0]['id']} (#0) of run.ipynb in ")
    assert "(live: open in JupyterLab" in results["ok"]
    assert "[stdout]\nhello" in results["ok"] and "[stderr]\ncareful" in results["ok"]
    assert "[result]\n42" in results["ok"]
    assert "[error] ZeroDivisionError: division by zero" in results["fails"]
    assert "[display]\n[image/png 3x2]" in results["image"]
    assert "iVBOR" not in results["image"], "never base64"
    assert "is a markdown cell; only code runs" in results["markdown"]
    assert "is a %%copilot cell; run_cell does not run one" in results["agent"]
    assert "stopped after 1 s (run_cell's timeout)" in results["loop"]

    ok, fails, shown, _, agent, loop = (front.cell(i) for i in range(6))
    assert ok["outputs"][:2] == [
        {"output_type": "stream", "name": "stdout", "text": "hello\n"},
        {"output_type": "stream", "name": "stderr", "text": "careful\n"},
    ]
    assert ok["outputs"][2]["output_type"] == "execute_result"
    assert ok["outputs"][2]["data"]["text/plain"] == "42"
    assert ok["metadata"]["copilot_nb"]["change"] == "ran"
    assert [o["output_type"] for o in fails["outputs"]] == ["error"]
    assert fails["outputs"][0]["ename"] == "ZeroDivisionError"
    assert base64.b64decode(shown["outputs"][0]["data"]["image/png"]) == png(3, 2)
    assert agent["outputs"] == []
    assert loop["outputs"][-1]["text"] == "stopped after 1 s (run_cell's timeout)\n"
    assert len(front.requests("set_outputs")) == 4
    assert notebook.read_bytes() == on_disk
    server.assert_complete()


def test_run_cell_shows_a_matplotlib_figure_by_its_size(
    serve, kernel_for, front_end, tmp_path: Path
) -> None:
    notebook = tmp_path / "plot.ipynb"
    cells = saved_notebook(
        notebook,
        [
            nbformat.v4.new_code_cell(
                "%matplotlib inline\nimport matplotlib.pyplot as plt\n"
                "plt.figure(figsize=(2, 1), dpi=100)\nplt.plot([1, 2])\nplt.show()"
            )
        ],
    )
    server = serve([reply("", call("run_cell", id="p", cell_id="#0")), reply("A line.")])
    kernel = kernel_for(server, JPY_SESSION_NAME=str(notebook))
    front = front_end(kernel, "plot.ipynb", cells)
    copilot(kernel)

    result = tool_results(server.requests[-1])["p"]
    assert re.search(r"\[image/png \d+x\d+\]", result), result
    assert "iVBOR" not in result
    assert any("image/png" in o.get("data", {}) for o in front.cell(0)["outputs"])


def test_undo_after_a_live_turn_restores_the_open_notebook_exactly(
    serve, kernel_for, front_end, tmp_path: Path
) -> None:
    notebook = tmp_path / "undo.ipynb"
    title = nbformat.v4.new_markdown_cell("# Title", metadata={"tags": ["intro"]})
    ran = nbformat.v4.new_code_cell("b = 1\nb", metadata={"tags": ["keep"], "collapsed": False})
    ran.outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "1"}, execution_count=3)]
    ran.execution_count = 3
    before = saved_notebook(notebook, [title, ran, nbformat.v4.new_code_cell("c = 3")])
    on_disk = notebook.read_bytes()
    ids = [cell["id"] for cell in before]
    server = serve(
        [
            reply(
                "",
                call("insert_cell", id="i", after_cell_id=ids[0], cell_type="code", source="d"),
                call("edit_cell", id="e", cell_id=ids[1], old_str="b = 1", new_str="b = 2"),
                call("delete_cell", id="d", cell_id=ids[2]),
            ),
            reply("Changed three cells."),
        ]
    )
    kernel = kernel_for(server, JPY_SESSION_NAME=str(notebook))
    front = front_end(kernel, "undo.ipynb", before)
    copilot(kernel)
    assert front.sources() == ["# Title", "d", "b = 2\nb"]
    applied = len(front.requests("apply"))

    undo = kernel.execute("%copilot undo")
    assert undo.status == "ok", undo.reply["content"]
    (report,) = undo.final_displays("text/html").values()
    assert "3 cell change(s) taken back in the notebook open in JupyterLab" in report
    wait_until(lambda: len(front.requests("apply")) == applied + 1, what="the undo request")
    (request,) = front.requests("apply")[applied:]
    assert request["notify"] is True
    wait_until(lambda: front.sources() == ["# Title", "b = 1\nb", "c = 3"], what="the undo")
    with front.lock:
        assert front.cells == before
    assert notebook.read_bytes() == on_disk
    server.assert_complete()


UNDO_TROUBLE = {
    "one cell edited twice": (
        ["v = 1"],
        [
            call("edit_cell", id="a", cell_id="#0", old_str="1", new_str="2"),
            call("edit_cell", id="b", cell_id="#0", old_str="2", new_str="3"),
        ],
    ),
    "a new cell edited": (
        ["v = 1"],
        [
            call("insert_cell", id="a", after_cell_id="#0", cell_type="code", source="n = 1"),
            call("edit_cell", id="b", cell_id="#1", old_str="1", new_str="2"),
        ],
    ),
    "a cell edited, then deleted": (
        ["v = 1", "w = 1"],
        [
            call("edit_cell", id="a", cell_id="#0", old_str="1", new_str="2"),
            call("delete_cell", id="b", cell_id="#0"),
        ],
    ),
    "two adjacent cells deleted bottom-up": (
        ["a = 1", "b = 1", "c = 1"],
        [call("delete_cell", id="a", cell_id="#2"), call("delete_cell", id="b", cell_id="#1")],
    ),
}


@pytest.mark.parametrize("story", list(UNDO_TROUBLE))
def test_undo_of_changes_that_build_on_each_other_restores_the_open_notebook(
    serve, kernel_for, front_end, tmp_path: Path, story: str
) -> None:
    sources, calls = UNDO_TROUBLE[story]
    notebook = tmp_path / "steps.ipynb"
    before = saved_notebook(notebook, [nbformat.v4.new_code_cell(s) for s in sources])
    server = serve([*(reply("", one) for one in calls), reply("Done.")])
    kernel = kernel_for(server, JPY_SESSION_NAME=str(notebook))
    front = front_end(kernel, "steps.ipynb", before)
    copilot(kernel)
    answered = len(front.replies)
    assert kernel.execute("%copilot undo").status == "ok"
    wait_until(lambda: len(front.replies) > answered, what="the answer to the undo")
    assert front.replies[-1]["ok"], front.replies[-1]
    with front.lock:
        assert front.cells == before


def test_without_a_jupyter_server_the_tools_use_the_file_at_once(
    serve, kernel_for, tmp_path: Path
) -> None:
    notebook = tmp_path / "plain.ipynb"
    saved_notebook(notebook, [nbformat.v4.new_code_cell("a = 1")])
    server = serve(
        [
            reply(
                "",
                call("list_cells", id="l", notebook="plain.ipynb"),
                call(
                    "insert_cell",
                    id="i",
                    notebook="plain.ipynb",
                    after_cell_id="#0",
                    cell_type="code",
                    source="b = 2",
                ),
            ),
            reply("Added."),
        ]
    )
    kernel = kernel_for(server)
    copilot(kernel)

    results = tool_results(server.requests[-1])
    assert results["l"].endswith("(file on disk)")
    assert results["i"].startswith("inserted cell ") and "(file on disk)" in results["i"]
    assert [c.source for c in nbformat.read(notebook, 4).cells] == ["a = 1", "b = 2"]


def test_with_a_jupyter_server_but_no_front_end_the_first_edit_says_how_to_get_live_editing(
    serve, kernel_for, tmp_path: Path
) -> None:
    notebook = tmp_path / "served.ipynb"
    saved_notebook(notebook, [nbformat.v4.new_code_cell("a = 1")])
    server = serve(
        [
            reply(
                "",
                call("list_cells", id="l"),
                call("insert_cell", id="i1", after_cell_id="#0", cell_type="code", source="b"),
                call("insert_cell", id="i2", after_cell_id="#1", cell_type="code", source="c"),
            ),
            reply("Added two cells to the file."),
        ]
    )
    kernel = kernel_for(server, JPY_SESSION_NAME=str(notebook))
    copilot(kernel)

    results = tool_results(server.requests[-1])
    assert results["l"].endswith("(file on disk: no open notebook answered)")
    assert "Reload Notebook from Disk" in results["i1"]
    assert "Reload Notebook from Disk" not in results["i2"]
    assert "(file on disk: no open notebook answered)" in results["i2"]
    assert [c.source for c in nbformat.read(notebook, 4).cells] == ["a = 1", "b", "c"]


def test_two_notebooks_on_one_kernel_each_call_lands_in_the_notebook_it_names(
    serve, kernel_for, front_end, tmp_path: Path
) -> None:
    """The kernel was started for other.ipynb; the cell runs in mine.ipynb, on another
    connection: a call without `notebook=` means the notebook that sent the cell."""
    mine, other = tmp_path / "mine.ipynb", tmp_path / "other.ipynb"
    mine_cells = saved_notebook(mine, [nbformat.v4.new_code_cell("mine = 1")])
    other_cells = saved_notebook(other, [nbformat.v4.new_code_cell("other = 1")])
    files = mine.read_bytes(), other.read_bytes()
    server = serve(
        [
            reply(
                "",
                call("list_cells", id="l"),
                call("insert_cell", id="m", after_cell_id="#0", cell_type="code", source="m2"),
                call(
                    "insert_cell",
                    id="o",
                    notebook="other.ipynb",
                    after_cell_id="#0",
                    cell_type="code",
                    source="o2",
                ),
                call("list_cells", id="lo", notebook="other.ipynb"),
            ),
            reply("One cell in each."),
        ]
    )
    kernel = kernel_for(server, JPY_SESSION_NAME=str(other))
    theirs = front_end(kernel, "other.ipynb", other_cells, client=uuid.uuid4().hex)
    ours = front_end(kernel, "mine.ipynb", mine_cells)
    copilot(kernel)

    results = tool_results(server.requests[-1])
    assert results["l"].startswith("mine.ipynb: 1 cells")
    assert "in mine.ipynb" in results["m"] and "in other.ipynb" in results["o"]
    assert results["lo"].startswith("other.ipynb: 2 cells") and "| o2" in results["lo"]
    assert ours.sources() == ["mine = 1", "m2"]
    assert theirs.sources() == ["other = 1", "o2"]
    assert (mine.read_bytes(), other.read_bytes()) == files


def test_unloading_the_extension_closes_the_channel_and_the_tools_use_the_file(
    serve, kernel_for, front_end, tmp_path: Path
) -> None:
    notebook = tmp_path / "gone.ipynb"
    cells = saved_notebook(notebook, [nbformat.v4.new_code_cell("a = 1")])
    server = serve(
        [
            reply(
                "",
                call("list_cells", id="l"),
                call("insert_cell", id="i", after_cell_id="#0", cell_type="code", source="b"),
            ),
            reply("Added to the file."),
        ]
    )
    kernel = kernel_for(server, JPY_SESSION_NAME=str(notebook))
    front = front_end(kernel, "gone.ipynb", cells)
    assert kernel.execute("%unload_ext copilot_nb").status == "ok"
    assert front.wait_closed(), "the front end's comm was closed"
    copilot(kernel)

    results = tool_results(server.requests[-1])
    assert "file on disk" in results["l"] and "file on disk" in results["i"]
    assert front.received == [], "nothing was asked of the closed notebook"
    assert front.sources() == ["a = 1"]
    assert [c.source for c in nbformat.read(notebook, 4).cells] == ["a = 1", "b"]


def test_a_front_end_that_does_not_answer_is_reported_and_the_next_call_works(
    serve, kernel_for, front_end, tmp_path: Path
) -> None:
    notebook = tmp_path / "slow.ipynb"
    cells = saved_notebook(notebook, [nbformat.v4.new_code_cell("a = 1")])
    server = serve(
        [
            reply("", call("list_cells", id="silent")),
            reply("", call("list_cells", id="again")),
            reply("It answers again."),
        ]
    )
    kernel = kernel_for(server, JPY_SESSION_NAME=str(notebook))
    # The kernel's own setting, as a user could set it: a test waits 0.5 s, not 10.
    shorter = kernel.execute("import copilot_nb.jupyter.live_channel as c; c.REQUEST_TIMEOUT = 0.5")
    assert shorter.status == "ok"
    front = front_end(kernel, "slow.ipynb", cells)
    front.ignore_next = 1
    copilot(kernel)

    results = tool_results(server.requests[-1])
    assert "the open notebook slow.ipynb did not answer within 0.5 s" in results["silent"]
    assert "nothing was changed" in results["silent"]
    assert results["again"].startswith("slow.ipynb: 1 cells")
    assert "live: open in JupyterLab" in results["again"]
    assert len(front.requests("snapshot")) == 2
