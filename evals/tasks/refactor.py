"""Cells that repeat themselves become one function. The checker wants the function defined once,
each cell calling it instead of repeating the code, and the notebook printing what it printed
before the refactor."""

from __future__ import annotations

from pathlib import Path

from copilot_nb.testing import call, reply

from ..task import Outcome, Task, run_cells, run_python, write_notebook
from .data import write_sales
from .fix_cell import LOAD


def _refactor(
    name: str,
    *,
    function: str,
    repeated: str,
    cells: list[tuple[str, str, str]],
    definition: str,
    calls: dict[str, str],
    wrong_definition: str,
) -> Task:
    users = list(calls)

    def setup(folder: Path) -> None:
        write_sales(folder)
        write_notebook(folder / "analysis.ipynb", cells)

    def check(outcome: Outcome) -> tuple[bool, str]:
        cells_by_id = {c.get("id"): c.source for c in outcome.notebook().cells}
        defined = [s for s in cells_by_id.values() if f"def {function}(" in s]
        if len(defined) != 1:
            return False, f"`def {function}(` appears in {len(defined)} cells, expected 1"
        for cell_id in users:
            source = cells_by_id.get(cell_id, "")
            if f"{function}(" not in source or repeated in source:
                return (
                    False,
                    f"the `{cell_id}` cell does not call `{function}` instead of repeating",
                )
        original = "\n\n".join(source for _, kind, source in cells if kind == "code")
        expected = run_python(outcome.workdir, original)[1].strip()
        code, out, err = run_cells(outcome)
        if code != 0:
            return False, f"the notebook fails: {err.strip().splitlines()[-1:]}"
        if out.strip() != expected:
            return False, f"it prints {out.strip()!r}, expected {expected!r}"
        return True, f"`{function}` used by {', '.join(users)}; same output"

    def script(body: str) -> list[object]:
        return [
            reply("", call("list_cells", notebook="analysis.ipynb")),
            reply(
                "",
                call(
                    "insert_cell",
                    after_cell_id="load",
                    cell_type="code",
                    source=body,
                    notebook="analysis.ipynb",
                ),
                *(
                    call("replace_cell", cell_id=i, source=s, notebook="analysis.ipynb")
                    for i, s in calls.items()
                ),
            ),
            reply(f"Refactored into `{function}`."),
        ]

    return Task(
        name=f"refactor_{name}",
        kind="refactor",
        request=(
            f"In analysis.ipynb the cells {', '.join(f'`{u}`' for u in users)} repeat the same "
            f"code. Define a function `{function}` once in a new cell after `load`, make those "
            "cells call it, and keep what the notebook prints unchanged."
        ),
        setup=setup,
        check=check,
        solution=script(definition),
        wrong=script(wrong_definition),
    )


TASKS = [
    _refactor(
        "region_revenue",
        function="region_revenue",
        repeated="df.region ==",
        cells=[
            ("load", "code", LOAD),
            (
                "north",
                "code",
                "part = df[df.region == 'north']\nprint(round((part.units * part.price).sum(), 2))",
            ),
            (
                "south",
                "code",
                "part = df[df.region == 'south']\nprint(round((part.units * part.price).sum(), 2))",
            ),
        ],
        definition="def region_revenue(df, region):\n    part = df[df.region == region]\n    return round((part.units * part.price).sum(), 2)",
        wrong_definition="def region_revenue(df, region):\n    part = df[df.region == region]\n    return round(part.price.sum(), 2)",
        calls={
            "north": "print(region_revenue(df, 'north'))",
            "south": "print(region_revenue(df, 'south'))",
        },
    ),
    _refactor(
        "clean_names",
        function="clean",
        repeated=".strip().lower()",
        cells=[
            ("load", "code", "a = ['  Alpha', 'BETA ', ' Gamma ']\nb = ['Delta  ', ' EPSILON']"),
            ("first", "code", "print([s.strip().lower().replace(' ', '_') for s in a])"),
            ("second", "code", "print([s.strip().lower().replace(' ', '_') for s in b])"),
        ],
        definition="def clean(names):\n    return [s.strip().lower().replace(' ', '_') for s in names]",
        wrong_definition="def clean(names):\n    return [s.lower() for s in names]",
        calls={"first": "print(clean(a))", "second": "print(clean(b))"},
    ),
    _refactor(
        "monthly_units",
        function="monthly_units",
        repeated="dt.month",
        cells=[
            ("load", "code", LOAD),
            (
                "alpha",
                "code",
                "part = df[df['product'] == 'alpha']\nprint(part.groupby(part.date.dt.month).units.sum().max())",
            ),
            (
                "beta",
                "code",
                "part = df[df['product'] == 'beta']\nprint(part.groupby(part.date.dt.month).units.sum().max())",
            ),
            (
                "gamma",
                "code",
                "part = df[df['product'] == 'gamma']\nprint(part.groupby(part.date.dt.month).units.sum().max())",
            ),
        ],
        definition="def monthly_units(df, product):\n    part = df[df['product'] == product]\n    return part.groupby(part.date.dt.month).units.sum().max()",
        wrong_definition="def monthly_units(df, product):\n    part = df[df['product'] == product]\n    return part.groupby(part.date.dt.month).units.sum().min()",
        calls={
            "alpha": "print(monthly_units(df, 'alpha'))",
            "beta": "print(monthly_units(df, 'beta'))",
            "gamma": "print(monthly_units(df, 'gamma'))",
        },
    ),
    _refactor(
        "zscore",
        function="zscore",
        repeated="pstdev(",
        cells=[
            (
                "load",
                "code",
                "xs = [2.0, 4.0, 4.0, 5.0]\nys = [10.0, 12.0, 23.0]\nimport statistics as st",
            ),
            ("xs", "code", "print([round((x - st.mean(xs)) / st.pstdev(xs), 3) for x in xs])"),
            ("ys", "code", "print([round((y - st.mean(ys)) / st.pstdev(ys), 3) for y in ys])"),
        ],
        definition="def zscore(values):\n    return [round((v - st.mean(values)) / st.pstdev(values), 3) for v in values]",
        wrong_definition="def zscore(values):\n    return [round((v - st.mean(values)) / st.stdev(values), 3) for v in values]",
        calls={"xs": "print(zscore(xs))", "ys": "print(zscore(ys))"},
    ),
]
