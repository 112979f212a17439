"""A notebook cell fails; the agent fixes it in place. The checker runs every code cell in a fresh
interpreter and reads the last line printed, so a fix that hides the error (a bare `except`, a
made-up number) fails like the error itself."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from copilot_nb.testing import call, reply

from ..task import Outcome, Task, run_cells, write_notebook
from .data import read_sales, write_sales

LOAD = "import pandas as pd\ndf = pd.read_csv('sales.csv', parse_dates=['date'])"


def _fix(
    name: str,
    *,
    cells: list[tuple[str, str, str]],
    target: str,
    old: str,
    new: str,
    wrong_new: str,
    expected: Callable[[Path], str],
    files: Callable[[Path], None] = write_sales,
) -> Task:
    def setup(folder: Path) -> None:
        files(folder)
        write_notebook(folder / "analysis.ipynb", cells)

    def check(outcome: Outcome) -> tuple[bool, str]:
        ids = [c.get("id") for c in outcome.notebook().cells]
        if target not in ids:
            return False, f"the `{target}` cell is gone: fix it in place"
        code, out, err = run_cells(outcome)
        if code != 0:
            return False, f"the notebook still fails: {err.strip().splitlines()[-1:]}"
        last = out.strip().splitlines()[-1:] or [""]
        want = expected(outcome.workdir)
        if last[0].strip() != want:
            return False, f"it runs but prints {last[0]!r}, expected {want!r}"
        return True, f"runs and prints {want}"

    def edit(new_text: str) -> list[object]:
        return [
            reply("", call("read_cell", cell_id=target, notebook="analysis.ipynb")),
            reply(
                "",
                call(
                    "edit_cell",
                    cell_id=target,
                    old_str=old,
                    new_str=new_text,
                    notebook="analysis.ipynb",
                ),
            ),
            reply(f"Fixed the `{target}` cell."),
        ]

    return Task(
        name=f"fix_{name}",
        kind="fix-cell",
        request=(
            f"The `{target}` cell of analysis.ipynb fails. Fix that cell in place so the notebook "
            "runs top to bottom and prints the right result."
        ),
        setup=setup,
        check=check,
        solution=edit(new),
        wrong=edit(wrong_new),
    )


def _orders(folder: Path) -> None:
    (folder / "orders.csv").write_text("item,qty,price\npen,3,1.50\nbook,2,6.00\ncup,1,6.00\n")


def _sales(expression: Callable[..., object]) -> Callable[[Path], str]:
    return lambda folder: str(expression(read_sales(folder)))


TASKS = [
    _fix(
        "strings_multiplied",
        files=_orders,
        cells=[
            ("load", "code", "import csv\norders = list(csv.DictReader(open('orders.csv')))"),
            (
                "total",
                "code",
                "total = sum(o['qty'] * o['price'] for o in orders)\nprint(f'revenue: {total:.2f}')",
            ),
        ],
        target="total",
        old="o['qty'] * o['price']",
        new="int(o['qty']) * float(o['price'])",
        wrong_new="float(o['price'])",
        expected=lambda _: "revenue: 22.50",
    ),
    _fix(
        "wrong_column",
        cells=[("load", "code", LOAD), ("top", "code", "print(round(df['Price'].max(), 2))")],
        target="top",
        old="df['Price']",
        new="df['price']",
        wrong_new="df['units']",
        expected=_sales(lambda df: round(df["price"].max(), 2)),
    ),
    _fix(
        "name_typo",
        cells=[
            ("load", "code", LOAD),
            ("total", "code", "total = int(df.units.sum())\nprint(totl)"),
        ],
        target="total",
        old="print(totl)",
        new="print(total)",
        wrong_new="print(len(df))",
        expected=_sales(lambda df: int(df.units.sum())),
    ),
    _fix(
        "groupby_strings",
        cells=[
            ("load", "code", LOAD),
            (
                "means",
                "code",
                "means = df.groupby('region').mean()\nprint(round(means.loc['east', 'units'], 2))",
            ),
        ],
        target="means",
        old=".mean()",
        new="[['units', 'price']].mean()",
        wrong_new="[['units', 'price']].median()",
        expected=_sales(lambda df: round(df[df.region == "east"].units.mean(), 2)),
    ),
    _fix(
        "off_by_one",
        cells=[
            ("data", "code", "xs = [4, 8, 15, 16, 23, 42]"),
            (
                "sum",
                "code",
                "total = 0\nfor i in range(len(xs) + 1):\n    total += xs[i]\nprint(total)",
            ),
        ],
        target="sum",
        old="range(len(xs) + 1)",
        new="range(len(xs))",
        wrong_new="range(len(xs) - 1)",
        files=lambda folder: None,
        expected=lambda _: "108",
    ),
    _fix(
        "case_filter",
        cells=[
            ("load", "code", LOAD),
            ("north", "code", "north = df[df.region == 'North']\nprint(int(north.units.sum()))"),
        ],
        target="north",
        old="'North'",
        new="'north'",
        wrong_new="'south'",
        expected=_sales(lambda df: int(df[df.region == "north"].units.sum())),
    ),
]
