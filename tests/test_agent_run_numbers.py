"""A cell the agent runs gets an execution count of its own, as a cell the user runs does.

The kernel numbers each request it runs; the agent's run of a cell is not a request, so it takes
the kernel's next number itself (its source goes into the history under it), and the `%%copilot`
cell it ran in ends with the number after: no two cells show the same `[n]:`, and the next cell
the user runs takes the number after both.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

from copilot_nb.testing import call, reply

pytestmark = pytest.mark.kernel

LET_IT_RUN = '%config CopilotMagics.approve_execute = "allow"'


def test_a_cell_the_agent_runs_takes_a_number_of_its_own_and_the_copilot_cell_the_next(
    serve, kernel_for, tmp_path: Path
) -> None:
    notebook = tmp_path / "numbers.ipynb"
    cells = [nbformat.v4.new_code_cell("six = 6"), nbformat.v4.new_code_cell("six")]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), notebook)
    server = serve(
        [
            reply(
                "", call("run_cell", id="r1", cell_id="#1"), call("run_cell", id="r2", cell_id="#2")
            ),
            reply("Ran both."),
        ]
    )
    kernel = kernel_for(server, JPY_SESSION_NAME=str(notebook))
    assert kernel.execute(LET_IT_RUN).status == "ok"
    turn = kernel.execute("%%copilot\nrun both cells")
    assert turn.status == "ok", turn.reply["content"]

    first, second = nbformat.read(notebook, as_version=4).cells
    copilot = turn.reply["content"]["execution_count"]
    assert second.outputs[0]["data"]["text/plain"] == "6"
    assert second.outputs[0]["execution_count"] == second.execution_count
    numbers = [first.execution_count, second.execution_count, copilot]
    assert numbers == sorted(set(numbers)) and None not in numbers, (
        f"each its own, in the order they finished: {numbers}"
    )
    after = kernel.execute("0")
    assert after.reply["content"]["execution_count"] == copilot + 1, "the user's next cell"
    history = kernel.execute(
        f"print(repr(In[{first.execution_count}]), repr(In[{second.execution_count}]))"
    )
    assert history.stdout.strip() == "'six = 6' 'six'", "In[n] is what ran as [n]"
    assert "run both cells" in kernel.execute(f"print(In[{copilot}])").stdout
    server.assert_complete()
