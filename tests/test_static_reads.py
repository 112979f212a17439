"""Listing the kernel's variables runs none of their code: objects whose every hook records its
call are listed by list_variables, the context block and the completion context, and
inspect_variable runs only the `__repr__` it documents."""

from __future__ import annotations

import os
from typing import Any

import numpy as np
import pandas as pd
import pytest

from copilot_nb.tools.context import ToolContext
from copilot_nb.tools.context_block import context_block
from copilot_nb.tools.kernel.completion_context import build_context
from copilot_nb.tools.kernel.tools import inspect_variable, list_variables
from copilot_nb.tools.views.static_view import type_name

RAN: list[str] = []
"""Every hook of the objects below that ran, in order."""


def record(what: str) -> None:
    RAN.append(what)


class Meta(type):
    """A metaclass that records its hooks: a class's name, `isinstance`, hashing, `dir`."""

    def __getattribute__(cls, name: str) -> Any:
        record(f"Meta.__getattribute__({name})")
        return super().__getattribute__(name)

    def __getattr__(cls, name: str) -> Any:
        record(f"Meta.__getattr__({name})")
        raise AttributeError(name)

    def __instancecheck__(cls, instance: Any) -> bool:
        record("Meta.__instancecheck__")
        return False

    def __subclasscheck__(cls, subclass: Any) -> bool:
        record("Meta.__subclasscheck__")
        return False

    def __eq__(cls, other: object) -> bool:
        record("Meta.__eq__")
        return cls is other

    def __hash__(cls) -> int:
        record("Meta.__hash__")
        return id(cls)

    def __dir__(cls) -> list[str]:
        record("Meta.__dir__")
        return []


class Trap(metaclass=Meta):
    """An object whose shape, dtype, columns, length, size, class and attributes are code."""

    def __init__(self) -> None:
        object.__setattr__(self, "visible", 1)

    def __getattribute__(self, name: str) -> Any:
        record(f"__getattribute__({name})")
        return object.__getattribute__(self, name)

    def __getattr__(self, name: str) -> Any:
        record(f"__getattr__({name})")
        raise AttributeError(name)

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        record("__class__")
        return pd.DataFrame

    @property
    def shape(self) -> tuple[int, int]:
        record("shape")
        return (1, 1)

    @property
    def dtype(self) -> str:
        record("dtype")
        return "int64"

    @property
    def columns(self) -> list[str]:
        record("columns")
        return ["a"]

    @property
    def dtypes(self) -> list[str]:
        record("dtypes")
        return ["int64"]

    def __len__(self) -> int:
        record("__len__")
        return 1

    def __sizeof__(self) -> int:
        record("__sizeof__")
        return 1

    def __dir__(self) -> list[str]:
        record("__dir__")
        return ["shape"]

    def __eq__(self, other: object) -> bool:
        record("__eq__")
        return self is other

    def __hash__(self) -> int:
        record("__hash__")
        return 1

    def __repr__(self) -> str:
        record("__repr__")
        return "Trap()"


class TrapDict(dict):  # type: ignore[type-arg]
    """A dict whose reading methods are code; its stored keys are still its keys."""

    def __len__(self) -> int:
        record("TrapDict.__len__")
        return 0

    def keys(self) -> Any:
        record("TrapDict.keys")
        return []

    def items(self) -> Any:
        record("TrapDict.items")
        return []

    def __iter__(self) -> Any:
        record("TrapDict.__iter__")
        return iter(())

    def __getitem__(self, key: Any) -> Any:
        record("TrapDict.__getitem__")
        raise KeyError(key)

    def __repr__(self) -> str:
        record("__repr__")
        return "TrapDict()"


class Slotted:
    """A class whose `shape` is a property and whose `__len__` is Python."""

    __slots__ = ("rows",)

    def __init__(self) -> None:
        self.rows = 3

    @property
    def shape(self) -> tuple[int]:
        record("Slotted.shape")
        return (3,)

    def __len__(self) -> int:
        record("Slotted.__len__")
        return 3


def trap_namespace() -> dict[str, Any]:
    return {
        "trap": Trap(),
        "made": Trap,
        "traps": TrapDict(city=1, port=2),
        "slotted": Slotted(),
        "df": pd.DataFrame({"city": ["Oslo"]}),
        "grid": np.zeros((2, 3)),
        "env": os.environ,
    }


@pytest.fixture
def namespace() -> dict[str, Any]:
    found = trap_namespace()
    RAN.clear()
    return found


async def test_list_variables_runs_none_of_the_objects_code(namespace: dict[str, Any]) -> None:
    out = await list_variables(ToolContext(namespace=lambda: namespace))
    assert RAN == []
    lines = {line.split()[0]: line for line in out.content.splitlines()[1:]}
    assert "pandas.DataFrame" not in lines["trap"], "the real type, not __class__"
    assert lines["trap"].split()[1] == "tests.Trap"
    assert lines["traps"].split()[1:3] == ["tests.TrapDict", "len"]
    assert lines["df"].split()[1:3] == ["pandas.DataFrame", "(1,"]
    assert lines["env"].split()[-1] == "<masked>"


async def test_the_context_block_runs_none_of_the_objects_code(namespace: dict[str, Any]) -> None:
    block = await context_block(ToolContext(namespace=lambda: namespace))
    assert RAN == []
    assert "trap: tests.Trap" in block
    assert "grid: numpy.ndarray (2, 3)" in block


def test_the_completion_context_runs_none_of_the_objects_code(namespace: dict[str, Any]) -> None:
    for prefix in ("print(trap, made, traps, slotted, df, grid)\ntrap.", "made.", "traps."):
        context = build_context(prefix=prefix, suffix="", cells_above=[], namespace=namespace)
        assert RAN == [], prefix
        kernel = dict(context.pieces)["kernel"]
        if prefix.startswith("print"):
            assert "# trap: tests.Trap\n" in kernel
            assert "# traps: tests.TrapDict len 2, keys: 'city', 'port'" in kernel
            assert "# slotted: tests.Slotted\n" in kernel
            assert "# trap. offers: columns, dtype, dtypes, shape, visible" in kernel
    deeper = build_context(prefix="trap.shape.", suffix="", cells_above=[], namespace=namespace)
    assert RAN == [] and "offers" not in "".join(t for _, t in deeper.pieces)


async def test_inspect_variable_runs_only_the_repr_it_documents(namespace: dict[str, Any]) -> None:
    ctx = ToolContext(namespace=lambda: namespace)
    out = await inspect_variable(ctx, "trap")
    assert out.summary == "trap: tests.Trap"
    assert out.content == "trap: tests.Trap\nTrap()"
    assert RAN == ["__repr__"]
    RAN.clear()
    out = await inspect_variable(ctx, "traps")
    assert out.content.splitlines()[0].startswith("traps: tests.TrapDict, len 2, ")
    assert RAN == ["__repr__"]


def test_a_class_made_where_no_module_name_is_defined_is_still_named() -> None:
    namespace: dict[str, Any] = {}
    exec("made = type('Made', (), {})()", namespace)
    assert type_name(namespace["made"]) == "Made"
