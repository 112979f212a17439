"""The kernel tools on real objects: a pandas DataFrame and a numpy array in a live namespace."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from copilot_nb.jupyter.cell_transform import transform_copilot_cell
from copilot_nb.tools import ToolOutput, ToolSet
from copilot_nb.tools.kernel import execute
from copilot_nb.tools.kernel.tools import kernel_tools
from tests.helpers import assert_schemas_match_snapshot, call, wait_until


@pytest.fixture
def namespace() -> dict[str, Any]:
    ns: dict[str, Any] = {"__name__": "__main__"}
    exec(
        "import os\n"
        "from os.path import join\n"
        "def area(r):\n"
        "    '''Area of a circle.'''\n"
        "    return 3.14159 * r * r\n",
        ns,
    )
    ns.update(
        sales=pd.DataFrame(
            {"region": ["north", "south", None], "units": [10, 25, 40], "price": [1.5, None, 2.0]}
        ),
        grid=np.arange(12, dtype=np.float64).reshape(3, 4),
        total=75,
        In=["", "total = 75"],
        Out={},
        _hidden=1,
        get_ipython=lambda: None,
    )
    return ns


@pytest.fixture
def tools(namespace: dict[str, Any]) -> ToolSet:
    return kernel_tools(lambda: namespace)


def test_the_tools_and_their_categories(tools: ToolSet) -> None:
    assert {t.name: t.category for t in tools} == {
        "list_variables": "read",
        "inspect_variable": "read",
        "get_history": "read",
        "run_code": "execute",
        "wait_run": "read",
        "run_status": "read",
        "stop_run": "read",
    }


def test_the_kernel_tool_schemas_match_the_snapshot(tools: ToolSet) -> None:
    """A change to what the model sees must show up as a diff of the snapshot file."""
    assert_schemas_match_snapshot(tools, "kernel_tools_schema.json")


# --- list_variables ---------------------------------------------------------------------------


async def test_list_variables_shows_user_variables_with_type_shape_and_memory(
    tools: ToolSet, namespace: dict[str, Any]
) -> None:
    out = await call(tools, "list_variables")
    lines = out.content.splitlines()
    assert lines[0] == "4 variables in the kernel:"
    assert lines[1].split() == ["name", "type", "shape/len", "memory", "value"]
    rows = {line.split()[0]: line for line in lines[2:]}
    assert list(rows) == ["area", "grid", "sales", "total"], "no modules, imports, _names or In/Out"
    deep = int(namespace["sales"].memory_usage(deep=True).sum())
    assert rows["sales"].split()[1:3] == ["pandas.DataFrame", "(3,"]
    assert rows["sales"].endswith(f"{deep} B")
    assert rows["grid"].split()[1:3] == ["numpy.ndarray", "(3,"]
    assert rows["grid"].endswith("96 B")
    assert rows["total"].split()[1] == "int"
    assert rows["total"].split()[-1] == "75", "numbers and short strings show their value"
    assert out.summary == "4 variables"


async def test_an_empty_namespace_says_so() -> None:
    out = await call(kernel_tools(lambda: {"In": [], "_": None}), "list_variables")
    assert out.content == "no user variables are defined in the kernel yet"


def test_listing_and_inspecting_plain_objects_never_imports_pandas_or_numpy(tmp_path: Path) -> None:
    script = (
        "import asyncio, sys\n"
        "from copilot_nb.tools.kernel.tools import kernel_tools\n"
        "ns = {'rows': [1, 2, 3], 'name': 'x', 'cfg': {'a': 1}}\n"
        "tools = kernel_tools(lambda: ns)\n"
        "async def main():\n"
        "    await tools.call_tool('list_variables', {})\n"
        "    await tools.call_tool('inspect_variable', {'name': 'cfg'})\n"
        "asyncio.run(main())\n"
        "print(sorted({'pandas', 'numpy'} & set(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert done.stdout.strip() == "[]"


# --- inspect_variable -------------------------------------------------------------------------


async def test_a_dataframe_is_described_by_schema_nulls_and_head(tools: ToolSet) -> None:
    out = await call(tools, "inspect_variable", name="sales")
    text = out.content
    assert text.startswith("sales: pandas.DataFrame, (3, 3), ")
    assert "3 rows x 3 columns; index: RangeIndex 0 … 2" in text
    assert "  region: " in text and "1 null" in text
    assert "  units: int64, 0 null" in text
    assert "  price: float64, 1 null" in text
    assert "head(5):" in text and "north" in text and "NaN" in text
    assert out.summary == "sales: pandas.DataFrame"


async def test_a_series_shows_dtype_nulls_head_and_statistics(
    tools: ToolSet, namespace: dict[str, Any]
) -> None:
    namespace["price"] = namespace["sales"]["price"]
    out = await call(tools, "inspect_variable", name="price")
    assert "name: 'price', dtype: float64, length 3, 1 null" in out.content
    assert "describe():" in out.content and "mean" in out.content


async def test_an_array_shows_dtype_shape_and_numeric_statistics(tools: ToolSet) -> None:
    out = await call(tools, "inspect_variable", name="grid")
    lines = out.content.splitlines()
    assert lines[0] == "grid: numpy.ndarray, (3, 4), 96 B"
    assert lines[1] == "dtype: float64, shape: (3, 4), 96 bytes"
    assert lines[2] == "min 0, max 11, mean 5.5, 0 NaN"
    assert "array([[ 0.,  1.,  2.,  3.]," in out.content


async def test_a_big_array_is_abbreviated(tools: ToolSet, namespace: dict[str, Any]) -> None:
    namespace["big"] = np.arange(1_000_000)
    out = await call(tools, "inspect_variable", name="big")
    assert "min 0, max 999999, mean 500000" in out.content
    assert "..." in out.content and len(out.content) < 1000


async def test_an_object_with_repr_llm_describes_itself(
    tools: ToolSet, namespace: dict[str, Any]
) -> None:
    class Model:
        def _repr_llm_(self) -> str:
            return "a fitted linear model: y = 2x + 1"

    namespace["model"] = Model()
    out = await call(tools, "inspect_variable", name="model")
    assert out.content.splitlines()[1] == "a fitted linear model: y = 2x + 1"


async def test_other_objects_show_a_truncated_repr(
    tools: ToolSet, namespace: dict[str, Any]
) -> None:
    namespace["rows"] = list(range(100_000))
    out = await call(tools, "inspect_variable", name="rows")
    assert out.content.startswith("rows: list, len 100000, ")
    assert "[0, 1, 2," in out.content and "..." in out.content and len(out.content) < 500


async def test_a_function_shows_its_signature_and_docstring(tools: ToolSet) -> None:
    out = await call(tools, "inspect_variable", name="area")
    assert "signature: area(r)" in out.content
    assert "doc: Area of a circle." in out.content


async def test_a_dotted_path_reads_an_attribute(tools: ToolSet) -> None:
    out = await call(tools, "inspect_variable", name="sales.columns")
    assert out.content.startswith("sales.columns: pandas.")
    assert "region" in out.content


async def test_an_unknown_name_suggests_the_close_ones(tools: ToolSet) -> None:
    out = await call(tools, "inspect_variable", name="sale")
    assert out.is_error
    assert out.content == (
        "inspect_variable: no variable named 'sale' (did you mean 'sales'?); "
        "user variables: sales, area, grid, total"
    )
    out = await call(tools, "inspect_variable", name="sales.nosuch")
    assert "sales.nosuch cannot be read (AttributeError" in out.content


# --- get_history ------------------------------------------------------------------------------


async def test_history_shows_inputs_outputs_and_the_last_error(
    monkeypatch: pytest.MonkeyPatch, namespace: dict[str, Any]
) -> None:
    namespace["In"] = [
        "",
        "import pandas as pd",
        "total = 75",
        "total * 2",
        "1/0",
        transform_copilot_cell(["%%copilot\n", "why?\n"])[0],  # as IPython keeps it
    ]
    namespace["Out"] = {3: 150}
    try:
        1 / 0  # noqa: B018
    except ZeroDivisionError as exc:
        monkeypatch.setattr(sys, "last_value", exc, raising=False)
    out = await call(kernel_tools(lambda: namespace), "get_history", n=3)
    lines = out.content.splitlines()
    assert lines[:4] == ["In [2]: total = 75", "In [3]: total * 2", "Out[3]: 150", "In [4]: 1/0"]
    assert lines[4] == "last error: ZeroDivisionError: division by zero"
    assert "Traceback (most recent call last):" in out.content


async def test_history_without_an_error_says_none(
    monkeypatch: pytest.MonkeyPatch, tools: ToolSet
) -> None:
    monkeypatch.delattr(sys, "last_value", raising=False)
    out = await call(tools, "get_history")
    assert out.content.splitlines() == ["In [1]: total = 75", "last error: none"]


# --- run_code ---------------------------------------------------------------------------------


async def test_run_code_captures_stdout_and_the_last_expression(
    tools: ToolSet, namespace: dict[str, Any]
) -> None:
    out = await call(
        tools, "run_code", code="print('units:', sales.units.sum())\nratio = total / 3\nratio"
    )
    assert not out.is_error
    assert out.content == "stdout:\nunits: 75\nresult:\n25.0"
    assert namespace["ratio"] == 25.0, "it runs in the user's namespace"


async def test_run_code_with_nothing_to_show(tools: ToolSet) -> None:
    out = await call(tools, "run_code", code="x = 1")
    assert out.content == "(no output)" and out.summary == "ok"  # a fast run: no timing
    slow = await call(tools, "run_code", code="import time; time.sleep(1.05)")
    assert slow.summary.startswith("ok in 1.") and slow.summary.endswith(" s")


async def test_run_code_reports_an_error_with_a_short_traceback(tools: ToolSet) -> None:
    out = await call(
        tools,
        "run_code",
        code="import sys\nprint('before')\nprint('warn', file=sys.stderr)\narea(None)",
    )
    assert out.is_error
    assert out.summary.startswith("TypeError: unsupported operand type(s)")
    text = out.content
    assert text.startswith("stdout:\nbefore\nstderr:\nwarn\nerror:\nTypeError: ")
    assert 'File "<copilot-run-' in text and "line 4, in <module>" in text
    assert "area(None)" in text, "the source line is shown"
    assert "line 5, in area" in text
    assert "execute.py" not in text, "our own frames are hidden"


async def test_run_code_reports_a_syntax_error(tools: ToolSet) -> None:
    out = await call(tools, "run_code", code="def f(:\n    pass")
    assert out.is_error
    assert out.summary == "SyntaxError: invalid syntax (line 1)"


async def test_run_code_supports_top_level_await(tools: ToolSet, namespace: dict[str, Any]) -> None:
    out = await call(
        tools,
        "run_code",
        code="import asyncio\nawait asyncio.sleep(0.01)\nfetched = 3\nawait asyncio.sleep(0, fetched)",
    )
    assert out.content == "result:\n3"
    assert namespace["fetched"] == 3


async def timed(action: Callable[[], Any]) -> tuple[ToolOutput, float]:
    started = time.monotonic()
    result = await action()
    return result, time.monotonic() - started


async def test_a_sync_infinite_loop_is_stopped_at_the_timeout(
    tools: ToolSet, namespace: dict[str, Any]
) -> None:
    code = "steps = 0\nprint('starting')\nwhile True:\n    steps += 1"
    out, took = await timed(lambda: call(tools, "run_code", code=code, timeout=0.3))
    assert out.is_error and out.summary == "timed out"
    assert out.content.startswith("stdout:\nstarting\ntimed out: stopped after 0.3 s")
    assert 0.25 < took < 5
    assert namespace["steps"] > 0, "what it did until then stays done"
    after = await call(tools, "run_code", code="steps > 0")
    assert after.content == "result:\nTrue", "the namespace works normally afterwards"


async def test_code_catching_exception_is_still_stopped(tools: ToolSet) -> None:
    code = "while True:\n    try:\n        pass\n    except Exception:\n        pass"
    out, took = await timed(lambda: call(tools, "run_code", code=code, timeout=0.2))
    assert out.summary == "timed out" and took < 5


async def test_async_code_is_cancelled_at_the_timeout(tools: ToolSet) -> None:
    code = "import asyncio\nprint('waiting')\nawait asyncio.sleep(30)"
    out, took = await timed(lambda: call(tools, "run_code", code=code, timeout=0.2))
    assert out.is_error and out.summary == "timed out"
    assert out.content.startswith("stdout:\nwaiting\ntimed out")
    assert took < 5


async def test_fast_code_is_never_hit_by_a_late_timeout(tools: ToolSet) -> None:
    for _ in range(200):
        out = await call(tools, "run_code", code="sum(range(1000))", timeout=0.001)
        assert out.content == "result:\n499500" or out.summary == "timed out"

    def watchdogs() -> list[threading.Thread]:
        return [
            t
            for t in threading.enumerate()
            if getattr(getattr(t, "function", None), "__module__", "") == execute.__name__
        ]

    # A watchdog that fired late would raise in here, while this thread runs Python; once every
    # watchdog thread has ended, none can.
    wait_until(lambda: not watchdogs(), what="the watchdogs to end")


async def test_long_output_is_cut_with_a_marker(tools: ToolSet) -> None:
    out = await call(tools, "run_code", code="for i in range(20000):\n    print('line', i)")
    assert "line 0\n" in out.content and "line 19999" in out.content
    assert "characters cut] …" in out.content
    assert len(out.content) < 7000


async def test_a_bad_timeout_is_explained(tools: ToolSet) -> None:
    out = await call(tools, "run_code", code="1", timeout=0)
    assert out.content == "run_code: timeout must be more than 0 and at most 600 seconds, not 0"


async def test_exit_in_code_is_reported_not_raised(tools: ToolSet) -> None:
    out = await call(tools, "run_code", code="import sys\nsys.exit(3)")
    assert out.is_error and out.summary == "SystemExit: 3"
