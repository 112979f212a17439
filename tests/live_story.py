"""What the live-notebook kernel tests share: the stand-in front end as a fixture, and helpers
that read what the model was told (`tests/live_frontend.py` is the stand-in itself)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.kernel_session import KernelSession
from tests.live_frontend import LiveFrontEnd

STAMP_AT = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


def cell_id_of(listing: str, source_start: str) -> str:
    """The id list_cells gives the cell whose first line starts so."""
    line = next(line for line in listing.splitlines() if f"| {source_start}" in line)
    return line.split("id=")[1].split()[0]


def outcomes_recorded(kernel: KernelSession) -> int:
    """How many review outcomes the kernel's ledger holds (what the front end told it)."""
    shown = kernel.execute("print(len(get_ipython()._copilot_nb_live.review.outcomes))")
    return int(shown.stdout.strip() or 0)


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
