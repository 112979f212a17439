"""A plot added to the notebook and described. The checker wants the figure saved by a cell of
the notebook and the description's one checkable fact (which bar or month is highest) right."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from copilot_nb.testing import call, reply

from ..task import Outcome, Task, write_notebook
from .data import read_sales, write_sales
from .fix_cell import LOAD

PNG = b"\x89PNG\r\n\x1a\n"


def _plot(
    name: str,
    *,
    what: str,
    question: str,
    code: str,
    answer: Callable[[Any], str],
    wrong_answer: Callable[[Any], str],
    wrong_saves: bool = True,
) -> Task:
    def setup(folder: Path) -> None:
        write_sales(folder)
        write_notebook(folder / "analysis.ipynb", [("load", "code", LOAD)])

    def check(outcome: Outcome) -> tuple[bool, str]:
        image = outcome.workdir / "plot.png"
        if not image.exists() or not image.read_bytes().startswith(PNG):
            return False, "no plot.png was saved"
        if image.stat().st_size < 2000:
            return False, "plot.png is too small to hold a chart"
        cells = outcome.code_cells()
        if not any("savefig" in s and "plot.png" in s for s in cells[1:]):
            return False, "no new code cell of analysis.ipynb saves plot.png"
        expected = answer(read_sales(outcome.workdir))
        found = outcome.final_answer()
        if found is None or found.lower() != expected.lower():
            return False, f"the description says {found!r}, expected {expected!r}"
        return True, f"plot saved; highest is {expected}"

    def script(saves: bool, said: Callable[[Any], str]) -> list[object]:
        source = code if saves else code.replace("plt.savefig('plot.png')", "plt.show()")
        frame = read_sales(_sample())
        return [
            reply(
                "",
                call(
                    "insert_cell",
                    after_cell_id="load",
                    cell_type="code",
                    source=source,
                    notebook="analysis.ipynb",
                ),
            ),
            reply("", call("run_cell", cell_id="#2", notebook="analysis.ipynb")),
            reply(f"The chart shows {what}.\n\nANSWER: {said(frame)}"),
        ]

    return Task(
        name=f"plot_{name}",
        kind="plot",
        request=(
            f"Add a code cell at the end of analysis.ipynb that plots {what} with matplotlib "
            "(reading sales.csv itself) and saves the figure as plot.png; run it. Then describe "
            f"the plot in a sentence or two and end with one line `ANSWER: <{question}>`."
        ),
        setup=setup,
        check=check,
        solution=script(True, answer),
        wrong=script(wrong_saves, wrong_answer),
    )


_sample_folder: list[Path] = []


def _sample() -> Path:
    """A folder holding the data, for building the scripts' answers."""
    if not _sample_folder:
        import tempfile

        folder = Path(tempfile.mkdtemp(prefix="copilot_nb_eval_data_"))
        write_sales(folder)
        _sample_folder.append(folder)
    return _sample_folder[0]


HEAD = "import pandas as pd\nimport matplotlib.pyplot as plt\ndf = pd.read_csv('sales.csv', parse_dates=['date'])\n"


def _revenue(df: Any) -> Any:
    return df.units * df.price


TASKS = [
    _plot(
        "units_by_region",
        what="a bar chart of total units by region",
        question="the region with the highest bar",
        code=HEAD + "df.groupby('region').units.sum().plot.bar()\nplt.savefig('plot.png')",
        answer=lambda df: str(df.groupby("region").units.sum().idxmax()),
        wrong_answer=lambda df: str(df.groupby("region").units.sum().idxmin()),
    ),
    _plot(
        "revenue_by_product",
        what="a bar chart of total revenue (units times price) by product",
        question="the product with the highest bar",
        code=HEAD
        + "(df.units * df.price).groupby(df['product']).sum().plot.bar()\nplt.savefig('plot.png')",
        answer=lambda df: str(_revenue(df).groupby(df["product"]).sum().idxmax()),
        wrong_answer=lambda df: str(_revenue(df).groupby(df["product"]).sum().idxmax()),
        wrong_saves=False,
    ),
    _plot(
        "monthly_revenue",
        what="a line chart of revenue per month",
        question="the month with the peak, as YYYY-MM",
        code=HEAD
        + "(df.units * df.price).groupby(df.date.dt.to_period('M')).sum().plot()\n"
        + "plt.savefig('plot.png')",
        answer=lambda df: str(_revenue(df).groupby(df.date.dt.to_period("M")).sum().idxmax()),
        wrong_answer=lambda df: str(_revenue(df).groupby(df.date.dt.to_period("M")).sum().idxmin()),
    ),
    _plot(
        "returns_by_region",
        what="a bar chart of the number of returned orders by region",
        question="the region with the highest bar",
        code=HEAD + "df[df.returned].groupby('region').size().plot.bar()\nplt.savefig('plot.png')",
        answer=lambda df: str(df[df.returned].groupby("region").size().idxmax()),
        wrong_answer=lambda df: str(df.groupby("region").size().idxmin()),
    ),
]
