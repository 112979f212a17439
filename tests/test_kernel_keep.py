"""What a run keeps for Undo, counted and searched by what a value holds, not by its type's name:
arrays inside lists, dicts and objects count at their size against `%copilot state --keep`, the
kernel holds a bounded total across runs, and a token inside any container (a deque, an object,
an array of objects) is neither kept nor written to a snapshot."""

from __future__ import annotations

import array
import collections
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pandas as pd
import pytest

from copilot_nb.tools.context import ToolContext
from copilot_nb.tools.kernel.saved_vars import path_for, save
from copilot_nb.tools.kernel.snapshots import keep
from copilot_nb.tools.kernel.state import kernel_state
from copilot_nb.tools.kernel.tools import kernel_toolset
from copilot_nb.workspace.workspace import Workspace
from tests.helpers import call

TOKEN = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0" * 3
MB = 1024 * 1024


class Holder:
    """A user's own object: what it holds is in its `__dict__`."""

    def __init__(self, value: Any) -> None:
        self.value = value


class Slotted:
    __slots__ = ("inner",)

    def __init__(self, inner: Any) -> None:
        self.inner = inner


class Hiding(dict):  # type: ignore[type-arg]
    """A mapping whose own iteration shows nothing: the walk reads what it stores."""

    def __iter__(self) -> Any:
        return iter(())

    def items(self) -> Any:
        return []


def four_mb() -> np.ndarray:
    return np.ones(4 * MB // 8)


@pytest.mark.parametrize(
    "make",
    [
        lambda: [four_mb(), four_mb()],
        lambda: {"a": four_mb(), "b": four_mb()},
        lambda: collections.deque([four_mb(), four_mb()]),
        lambda: (Holder(four_mb()), Slotted(four_mb())),
        lambda: {"frame": pd.DataFrame({"a": np.ones(MB // 8), "b": ["x" * 40] * (MB // 8)})},
    ],
    ids=["list", "dict", "deque", "objects", "frame-in-dict"],
)
def test_a_container_counts_what_it_holds_against_the_keep_limit(make: Any) -> None:
    kept = keep({"parts": make()}, ["parts"], limit=1 * MB)
    assert kept.names == [], "a copy would be several MB: over a 1 MB limit it is not made"
    why = kept.left["parts"]
    assert why.endswith("over the 1.0 MB limit") and " MB" in why.split(",")[0], why
    assert float(why.split(" ")[0]) >= 4


def test_a_container_within_the_limit_is_kept_and_counted_at_its_size() -> None:
    kept = keep({"parts": [four_mb(), four_mb()], "n": 3}, ["parts", "n"], limit=64 * MB)
    assert kept.names == ["n", "parts"]
    assert 8 * MB <= kept.size < 9 * MB


def test_the_same_array_held_twice_counts_once() -> None:
    shared = four_mb()
    kept = keep({"pair": [shared, shared, {"again": shared}]}, ["pair"], limit=64 * MB)
    assert 4 * MB <= kept.size < 5 * MB


def test_a_huge_list_is_counted_past_the_walks_bound_by_what_it_saw() -> None:
    rows = [float(i) for i in range(1_000_000)]
    kept = keep({"rows": rows}, ["rows"], limit=1 * MB)
    assert kept.names == []
    size = float(kept.left["rows"].split(" ")[0])
    assert 25 <= size <= 40, kept.left  # 8 MB of pointers and 24 MB of floats


def context(tmp_path: Path, namespace: dict[str, Any]) -> tuple[ToolContext, Workspace]:
    workspace = Workspace(tmp_path)
    shell = SimpleNamespace(user_ns=namespace, user_ns_hidden={})
    ctx = ToolContext(workspace=workspace, namespace=lambda: namespace, shell=shell)
    return ctx, workspace


async def test_runs_hold_a_bounded_total_and_the_run_that_lets_older_ones_go_says_so(
    tmp_path: Path,
) -> None:
    namespace: dict[str, Any] = {"parts": [four_mb()]}
    ctx, workspace = context(tmp_path, namespace)
    state = kernel_state(ctx.shell)
    state.keep_limit = 6 * MB  # each run keeps `parts` (4 MB and more); 12 MB are held at most
    notes = []
    for turn in range(4):
        workspace.begin_turn(f"grow {turn}")
        result = await call(kernel_toolset(ctx), "run_code", code="parts.append(1)")
        notes.append(result.content)
    assert sum(kept.size for kept in state.held) <= 12 * MB
    assert len(state.held) == 2
    assert "no longer put back" not in notes[1]
    assert (
        "Undo can no longer put back the variables of 1 earlier run (the kernel holds at most "
        "12.0 MB of them): run_code" in notes[2]
    )
    undone = [workspace.undo()[0] for _ in range(4)]
    assert [r.action for r in undone] == ["restored", "restored", "not restored", "not restored"]


def test_lowering_the_keep_limit_lets_the_oldest_held_variables_go_at_once() -> None:
    state = kernel_state(SimpleNamespace())
    first = keep({"a": four_mb()}, ["a"], label="cell #1")
    second = keep({"b": four_mb()}, ["b"], label="run_code")
    assert state.hold(first) == [] and state.hold(second) == []
    assert state.set_keep_limit(3 * MB) == ["cell #1"]
    assert first.released and not second.released
    assert [k.label for k in state.held] == ["run_code"]


@pytest.mark.parametrize(
    ("value", "where"),
    [
        (collections.deque(["ok", TOKEN]), "[1]"),
        ([collections.OrderedDict(x=(1, {TOKEN}))], "[0]['x'][1][…]"),
        (Holder({"inner": Holder(TOKEN)}), ".value['inner'].value"),
        (Slotted([TOKEN]), ".inner[0]"),
        (Hiding(k=TOKEN), "['k']"),
        (np.array(["a", TOKEN], dtype=object), "[1]"),
        (pd.DataFrame({"note": ["a", TOKEN]}), "['note'][1]"),
        (array.array("b", TOKEN.encode()), ""),
        ({"service": {"password": "hunter2"}}, "['service']['password']"),
        ({TOKEN: 1}, "[…]"),
    ],
    ids=[
        "deque",
        "nested-set",
        "object",
        "slots",
        "hiding-mapping",
        "object-array",
        "frame",
        "c-array",
        "secret-key",
        "token-as-key",
    ],
)
def test_a_token_inside_any_container_is_not_kept_and_says_where(value: Any, where: str) -> None:
    kept = keep({"box": value}, ["box"])
    assert kept.names == []
    why = f"holds a secret (at box{where}): never kept" if where else "a secret: never kept"
    assert kept.left == {"box": why}


def test_a_token_inside_a_deque_is_not_written_to_a_snapshot(tmp_path: Path) -> None:
    path = path_for(tmp_path / "work.ipynb")
    namespace = {"queue": collections.deque([TOKEN]), "rows": collections.deque([1, 2])}
    saved = save(path, namespace, ["queue", "rows"])
    assert saved.names == ("rows",)
    assert saved.left == {"queue": "holds a secret (at queue[0]): never kept"}
    assert TOKEN.encode() not in path.read_bytes()


def test_ordinary_values_with_secret_sounding_words_inside_are_kept() -> None:
    settings = {"max_tokens": 512, "use_auth": False, "model": "gpt-4o", "session": None}
    frame = pd.DataFrame({"token_count": [1, 2], "text": ["hello", "world"]})
    kept = keep({"settings": settings, "frame": frame}, ["settings", "frame"])
    assert kept.names == ["frame", "settings"], kept.left
