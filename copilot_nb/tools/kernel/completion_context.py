"""What a completion at the cursor is told: the cells above and what only the kernel knows.

Built on every keystroke that asks, so it must be quick (under 10 ms on a 500-cell notebook with
1,000 variables, `make bench`): it describes only the variables the cell names, never walks
the namespace, and reads the cells above only until its budget is spent.

- The cells above, nearest first until `cells_budget` characters, shown in notebook order; a
  cell with anything secret-looking in it (a token format, a literal given to a secret name) is
  left out whole.
- The kernel: modules the notebook imported (`import pandas as pd`); for each variable the cell
  names, its type and shape, a DataFrame's columns with their dtypes, a dict's keys; and the
  public attributes of the object before a `.` at the cursor (a DataFrame's columns first). A
  variable whose name or value says it is a secret, `os.environ` and its copies, and secret-named
  keys, columns or attributes are left out.
- The cell's own text goes to the model with secret-looking literals masked (`redact_text`).

The context is comment lines (`# df: pandas.DataFrame (3, 2) ...`), so a fill-in-the-middle
model reads it as the top of the file it completes.
"""

from __future__ import annotations

import functools
import inspect
import re
import types
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any

from ..masking import is_code, is_secret_name, is_secret_value, redact_text
from .lookup import is_internal
from .variables import package_of, size_of, type_name

CELLS_BUDGET = 6000
"""Characters of the cells above (about 1,500 tokens)."""
KERNEL_BUDGET = 2500
"""Characters of what the kernel says (modules, variables, attributes)."""
MAX_VARIABLES = 20
MAX_COLUMNS = 40
MAX_KEYS = 20
MAX_ATTRIBUTES = 40

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_BEFORE_DOT = re.compile(r"([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\.([A-Za-z_0-9]*)$")


@dataclass(frozen=True, kw_only=True)
class CompletionContext:
    """The prompt's parts: the cell's text (masked) and the context pieces as `(name, text)`."""

    prefix: str
    suffix: str
    pieces: tuple[tuple[str, str], ...]
    cells_left_out: int = 0
    """Cells above left out because they looked secret."""


def build_context(
    *,
    prefix: str,
    suffix: str,
    cells_above: Sequence[str],
    namespace: Mapping[str, Any],
    hidden: Mapping[str, Any] | None = None,
    cells_budget: int = CELLS_BUDGET,
    kernel_budget: int = KERNEL_BUDGET,
) -> CompletionContext:
    """The context for one completion; `cells_above` nearest first, as the front end sends them."""
    hidden = hidden or {}
    cells, left_out = _cells(cells_above, cells_budget)
    kernel = _kernel(prefix, suffix, namespace, hidden, kernel_budget)
    pieces = tuple(
        (name, text) for name, text in (("cells above", cells), ("kernel", kernel)) if text
    )
    return CompletionContext(
        prefix=redact_text(prefix)[0],
        suffix=redact_text(suffix)[0],
        pieces=pieces,
        cells_left_out=left_out,
    )


def _cells(cells_above: Sequence[str], budget: int) -> tuple[str, int]:
    """The cells within the budget, nearest first; each is checked alone only when the lot
    holds something secret (one pass over the text in the common case)."""
    within: list[str] = []
    used = 0
    for source in cells_above:
        if not isinstance(source, str) or not source.strip():
            continue
        if used + len(source) > budget:
            break
        within.append(source.rstrip())
        used += len(source) + 2
    kept = within
    if redact_text("\n\n".join(within))[1]:
        kept = [source for source in within if not redact_text(source)[1]]
    return "\n\n".join(reversed(kept)), len(within) - len(kept)


def _kernel(
    prefix: str, suffix: str, namespace: Mapping[str, Any], hidden: Mapping[str, Any], budget: int
) -> str:
    lines: list[str] = []
    left = budget

    def add(line: str) -> bool:
        nonlocal left
        if len(line) + 1 > left:
            return False
        lines.append(line)
        left -= len(line) + 1
        return True

    modules = _modules(namespace)
    if modules:
        add("# Imported: " + "; ".join(modules))
    target = _BEFORE_DOT.search(prefix)
    offers = ""
    if target is not None:  # kept room for: it is what the cursor is at
        attributes = _attributes(target.group(1), target.group(2), namespace, hidden)
        if attributes:
            offers = f"# {target.group(1)}. offers: " + ", ".join(attributes)
            left -= len(offers) + 1
    used = _names_used(prefix, suffix, namespace, hidden)
    if used and add("# Variables in the kernel:"):
        for name in used:  # nearest the cursor first, until the budget is spent
            if not all(add(line) for line in _describe(name, namespace[name])):
                break
    if offers:
        lines.append(offers)
    return "\n".join(lines)


def _modules(namespace: Mapping[str, Any]) -> list[str]:
    found = []
    for name, value in namespace.items():
        if isinstance(value, types.ModuleType) and not name.startswith("_"):
            real = value.__name__
            found.append(f"import {real}" if real == name else f"import {real} as {name}")
            if len(found) >= MAX_VARIABLES:
                break
    return sorted(found)


def _names_used(
    prefix: str, suffix: str, namespace: Mapping[str, Any], hidden: Mapping[str, Any]
) -> list[str]:
    """Variables the cell names, in the order it first names them (nearest the cursor first)."""
    seen: dict[str, None] = {}
    words = [*reversed(_NAME.findall(prefix)), *_NAME.findall(suffix)]
    for word in words:
        if word in seen or word not in namespace:
            continue
        value = namespace[word]
        if is_internal(word, value, hidden) or isinstance(value, types.ModuleType):
            continue
        if is_secret_value(word, value):
            continue
        seen[word] = None
        if len(seen) >= MAX_VARIABLES:
            break
    return list(seen)


def _describe(name: str, value: Any) -> list[str]:
    size = size_of(value)
    head = f"# {name}: {type_name(value)}" + (f" {size}" if size else "")
    package = package_of(value)
    try:
        if package == "pandas" and hasattr(value, "columns") and hasattr(value, "dtypes"):
            return [head, "#   columns: " + _columns(value)]
        if package == "pandas" and hasattr(value, "dtype") and hasattr(value, "name"):
            return [f"{head}, name {value.name!r}, dtype {value.dtype}"]
        if package == "numpy" and hasattr(value, "dtype"):
            return [f"{head}, dtype {value.dtype}"]
        if isinstance(value, Mapping):
            keys = [repr(k) for k in islice(value.keys(), MAX_KEYS) if not _secret_key(k)]
            return [f"{head}, keys: " + ", ".join(keys)] if keys else [head]
        if isinstance(value, (int, float, bool)) and not is_secret_name(name):
            return [f"{head} = {value!r}"]
        if callable(value) and is_code(value):
            return [head + _signature(value)]
    except Exception:  # an exotic object: its type still helps
        pass
    return [head]


def _columns(frame: Any) -> str:
    shown = []
    for column, dtype in islice(zip(frame.columns, frame.dtypes, strict=False), MAX_COLUMNS):
        if _secret_key(column):
            continue
        shown.append(f"{column!s} ({dtype})")
    more = len(frame.columns) - MAX_COLUMNS
    return ", ".join(shown) + (f", … {more} more" if more > 0 else "")


def _secret_key(key: Any) -> bool:
    return isinstance(key, str) and _secret_word(key)


@functools.lru_cache(maxsize=8192)
def _secret_word(name: str) -> bool:
    """`is_secret_name`, remembered: the same column and attribute names come on every key."""
    return is_secret_name(name)


def _signature(value: Any) -> str:
    try:
        return f"{inspect.signature(value)}"
    except (TypeError, ValueError):
        return ""


def _attributes(
    path: str, typed: str, namespace: Mapping[str, Any], hidden: Mapping[str, Any]
) -> list[str]:
    """Public attributes of the object `path` names, those starting with `typed` first."""
    first, *rest = path.split(".")
    if first not in namespace or is_internal(first, namespace[first], hidden):
        return []
    value = namespace[first]
    if is_secret_value(first, value):
        return []
    for step in rest:
        if step.startswith("_") or is_secret_name(step):
            return []
        try:
            value = _static_attribute(value, step)
        except AttributeError:
            return []
    columns = getattr(value, "columns", None) if _is_frame(value) else None
    listed = [str(c) for c in islice(columns, MAX_ATTRIBUTES)] if columns is not None else []
    public = [n for n in _public_names(value) if n not in listed]
    chosen = [n for n in listed + public if n.startswith(typed) and not _secret_word(n)]
    return chosen[:MAX_ATTRIBUTES]


_TYPE_NAMES: dict[type, list[str]] = {}
"""Each type's public names, listed once: `dir()` of a DataFrame takes milliseconds."""


def _public_names(value: Any) -> list[str]:
    """The type's public names and the instance's own, sorted (a module: its own names)."""
    kind = type(value)
    if isinstance(value, types.ModuleType):
        return sorted(n for n in vars(value) if not n.startswith("_"))
    names = _TYPE_NAMES.get(kind)
    if names is None:
        if len(_TYPE_NAMES) > 1000:  # classes made on the fly: do not keep them all
            _TYPE_NAMES.clear()
        try:
            names = _TYPE_NAMES[kind] = [n for n in dir(kind) if not n.startswith("_")]
        except Exception:
            names = []
    own = getattr(value, "__dict__", None)
    if isinstance(own, dict):
        extra = [n for n in own if isinstance(n, str) and not n.startswith("_") and n not in names]
        if extra:
            return sorted([*names, *extra])
    return names


def _is_frame(value: Any) -> bool:
    return package_of(value) == "pandas" and hasattr(value, "dtypes")


def _static_attribute(value: Any, name: str) -> Any:
    """An attribute as stored, without running a property (which could run user code) unless it
    is a module's or a plain instance's data."""
    found = inspect.getattr_static(value, name)
    if isinstance(found, (property, types.MemberDescriptorType, types.GetSetDescriptorType)):
        raise AttributeError(name)
    if isinstance(found, (staticmethod, classmethod)):
        return found.__func__
    return found
