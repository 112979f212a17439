"""The completion context, byte for byte: a notebook with a DataFrame, secrets left out."""

from __future__ import annotations

import os

import pandas as pd
import pytest

from copilot_nb.tools.kernel.completion_context import build_context
from tests.secret_namespace import GITHUB_TOKEN as GITHUB
from tests.secret_namespace import named_by_tokens

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


def test_keys_columns_names_attributes_and_modules_that_are_tokens_are_left_out():
    context = build_context(
        prefix="print(cfg, frame, series, made)\nobj.",
        suffix="",
        cells_above=[],
        namespace=named_by_tokens(),
    )
    assert context.pieces == (
        (
            "kernel",
            "# Variables in the kernel:\n"
            "# obj: types.SimpleNamespace\n"
            "# series: pandas.Series (2,), dtype int64\n"
            "# frame: pandas.DataFrame (1, 2)\n"
            "#   columns: price (float64)\n"
            "# cfg: dict len 2, keys: 'host'\n"
            "# obj. offers: port",
        ),
    )


@pytest.mark.parametrize(
    ("prefix", "suffix"),
    [
        (f'key = "{GITHUB[:12]}" "{GITHUB[12:]}"\nprint(key', ")"),
        (f'key = ("{GITHUB[:12]}"  # split\n       "{GITHUB[12:]}")\n', ""),
        (f'key = "{GITHUB[:12]}" "{GITHUB[12:20]}', f'{GITHUB[20:]}"\nprint(key)'),
        (f'key = "{GITHUB[:20]}', f'{GITHUB[20:]}"\nprint(key)'),
        ('api_key = "hunter2" "-and-more"\n', ""),
    ],
    ids=["joined", "over-lines", "across-the-cursor", "one-literal-at-the-cursor", "named"],
)
def test_a_key_split_over_joined_literals_is_masked_whole(prefix: str, suffix: str) -> None:
    context = build_context(prefix=prefix, suffix=suffix, cells_above=[], namespace={})
    sent = context.prefix + context.suffix
    for part in (GITHUB[:12], GITHUB[12:], GITHUB[20:], "hunter2", "-and-more"):
        assert part not in sent
    assert '"<masked: ' in context.prefix
    assert context.suffix == (suffix[suffix.index('"') + 1 :] if '"' in suffix else suffix)


def test_a_cell_above_with_a_key_split_over_joined_literals_is_left_out():
    cells = [f'note = "{GITHUB[:10]}" \\\n    "{GITHUB[10:]}"', "n = 3"]
    context = build_context(prefix="", suffix="", cells_above=cells, namespace={})
    assert context.pieces == (("cells above", "n = 3"),)
    assert context.cells_left_out == 1
