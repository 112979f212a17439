"""run_cell in a real kernel: a cell's current (unsaved) source runs in the kernel, and its outputs
go into the open cell and, summarised, to the model."""

from __future__ import annotations

import base64
import re
from pathlib import Path

import nbformat
import pytest

from copilot_nb.testing import call, reply
from tests.live_story import copilot, saved_notebook
from tests.notebook_samples import png

pytestmark = pytest.mark.kernel


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
            reply("", call("run_cell", id="ok", cell_id="#1")),
            reply("", call("run_cell", id="fails", cell_id="#2")),
            reply("", call("run_cell", id="image", cell_id="#3")),
            reply("", call("run_cell", id="markdown", cell_id="#4")),
            reply("", call("run_cell", id="agent", cell_id="#5")),
            reply("", call("run_cell", id="loop", cell_id="#6", timeout=1)),
            reply("Ran them."),
        ]
    )
    kernel = kernel_for(server, JPY_SESSION_NAME=str(notebook))
    front = front_end(kernel, "run.ipynb", cells)
    copilot(kernel)
    assert kernel.execute("assert answer == 42").status == "ok", "what ran stays defined"

    results = server.requests[-1].tool_results
    assert results["ok"].startswith(f"ran cell {saved[0]['id']} (#1) of run.ipynb in ")
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
    server = serve([reply("", call("run_cell", id="p", cell_id="#1")), reply("A line.")])
    kernel = kernel_for(server, JPY_SESSION_NAME=str(notebook))
    front = front_end(kernel, "plot.ipynb", cells)
    copilot(kernel)

    result = server.requests[-1].tool_results["p"]
    assert re.search(r"\[image/png \d+x\d+\]", result), result
    assert "iVBOR" not in result
    assert any("image/png" in o.get("data", {}) for o in front.cell(0)["outputs"])
