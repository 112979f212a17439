"""The completion context, byte for byte: a notebook with a DataFrame, secrets left out."""

from __future__ import annotations

import os

import pandas as pd

from copilot_nb.tools.kernel.completion_context import build_context

TOKEN = "sk-proj-" + "a1B2c3D4" * 6


def sales() -> pd.DataFrame:
    return pd.DataFrame(
        {"city": ["Oslo", "Lima"], "price": [1.5, 2.0], "units": [3, 4], "api_token": ["x", "y"]}
    )


def test_a_dataframe_notebook_gives_its_columns_dtypes_attributes_and_imports():
    namespace = {
        "pd": pd,
        "os": os,
        "df": sales(),
        "rate": 0.25,
        "cities": {"Oslo": 1, "Lima": 2, "session_key": 3},
        "unused": [1, 2, 3],
    }
    context = build_context(
        prefix="total = df.pr",
        suffix="\nprint(total * rate, cities)",
        cells_above=["df = pd.read_csv('sales.csv')", "import pandas as pd\nimport os"],
        namespace=namespace,
    )
    assert context.prefix == "total = df.pr"
    assert context.pieces == (
        ("cells above", "import pandas as pd\nimport os\n\ndf = pd.read_csv('sales.csv')"),
        (
            "kernel",
            "# Imported: import os; import pandas as pd\n"
            "# Variables in the kernel:\n"
            f"# df: pandas.DataFrame (2, 4)\n"
            f"#   columns: city ({sales().dtypes['city']}), price (float64), units (int64)\n"
            "# rate: float = 0.25\n"
            "# cities: dict len 3, keys: 'Oslo', 'Lima'\n"
            "# df. offers: price, prod, product",
        ),
    )


def test_secret_cells_and_variables_are_left_out_and_the_cell_is_masked():
    namespace = {
        "OPENAI_API_KEY": TOKEN,
        "creds": {"user": "me"},
        "env": os.environ,
        "copy_of_env": dict(os.environ),
        "note": TOKEN,
        "n": 3,
    }
    context = build_context(
        prefix=f'key = "{TOKEN}"\nprint(OPENAI_API_KEY, creds, env, copy_of_env, note, n',
        suffix=")",
        cells_above=[f"token = '{TOKEN}'", "n = 3", f"%env OPENAI_API_KEY={TOKEN}"],
        namespace=namespace,
    )
    text = "\n".join(t for _, t in context.pieces) + context.prefix + context.suffix
    assert TOKEN not in text
    assert context.cells_left_out == 2
    assert context.pieces == (
        ("cells above", "n = 3"),
        ("kernel", "# Variables in the kernel:\n# n: int = 3"),
    )
    assert context.prefix.startswith('key = "<masked: ')


def test_the_cells_above_stop_at_the_budget_nearest_first():
    cells = [f"x{i} = {i}" for i in range(100)]
    context = build_context(prefix="", suffix="", cells_above=cells, namespace={}, cells_budget=40)
    assert context.pieces == (("cells above", "x4 = 4\n\nx3 = 3\n\nx2 = 2\n\nx1 = 1\n\nx0 = 0"),)


def test_attributes_are_read_without_running_properties():
    ran = []

    class Thing:
        @property
        def costly(self) -> int:
            ran.append(1)
            return 1

        def method(self) -> None: ...

    namespace = {"thing": Thing()}
    context = build_context(prefix="thing.", suffix="", cells_above=[], namespace=namespace)
    assert "# thing. offers: costly, method" in context.pieces[0][1]
    deeper = build_context(prefix="thing.costly.", suffix="", cells_above=[], namespace=namespace)
    assert "offers" not in "".join(t for _, t in deeper.pieces)
    assert ran == []
