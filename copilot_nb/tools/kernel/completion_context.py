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
  variable whose name or value says it is a secret, `os.environ` and its copies, and keys,
  columns, Series names, attributes and modules whose name is secret-sounding or a secret
  itself (`is_secret_label`: the test values get) are left out. All of it is read statically
  (`static_view.py`): no property, `__getattr__`, `__len__` or metaclass hook of the user's runs.
- The cell's own text goes to the model with secret-looking literals masked (`redact_cell`:
  literals Python joins are tested joined, also across the cursor).

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

from ...text import shorten
from ..redaction.masking import is_secret_label, is_secret_value, redact_cell, redact_text
from ..views.static_view import (
    MISSING,
    class_public_names,
    inherits,
    instance_dict,
    is_frame,
    is_one_of,
    is_series,
    lookup_type,
    mapping_keys,
    public_names,
    size_of,
    static_attribute,
    trusted_kind,
    type_name,
)
from .lookup import is_internal

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
    prefix, suffix, _ = redact_cell(prefix, suffix)
    return CompletionContext(
        prefix=prefix,
        suffix=suffix,
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
    for name, value in namespace.items():  # issubclass on the real type: no __class__ is read
        if issubclass(type(value), types.ModuleType) and not name.startswith("_"):
            real = (instance_dict(value) or {}).get("__name__")
            if type(real) is not str or _hidden_label(real) or _hidden_label(name):
                continue
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
        if is_internal(word, value, hidden) or inherits(value, types.ModuleType):
            continue
        if is_secret_value(word, value) or _hidden_label(word):
            continue
        seen[word] = None
        if len(seen) >= MAX_VARIABLES:
            break
    return list(seen)


def _describe(name: str, value: Any) -> list[str]:
    """A variable's lines, read statically; none when its type's name is itself a secret."""
    kind = type_name(value)
    if _hidden_label(kind):
        return []
    size = size_of(value)
    head = f"# {name}: {kind}" + (f" {size}" if size else "")
    if is_frame(value):
        return [head, "#   columns: " + _columns(value)]
    if is_series(value):
        label = "" if _hidden_label(value.name) else f", name {value.name!r}"
        return [f"{head}{label}, dtype {_dtype(value.dtype)}"]
    if trusted_kind(value) == "numpy":
        return [f"{head}, dtype {_dtype(value.dtype)}"]
    keys = mapping_keys(value, MAX_KEYS)
    if keys is not None:
        shown = [repr(k) for k in keys if not _hidden_label(k)]
        return [f"{head}, keys: " + ", ".join(shown)] if shown else [head]
    if is_one_of(type(value), (int, float, bool)) and not _hidden_label(name):
        return [f"{head} = {value!r}"]
    if inherits(value, types.FunctionType):
        return [head + _signature(value)]
    return [head]


@functools.lru_cache(maxsize=1024)
def _dtype(dtype: Any) -> str:
    """A dtype (numpy's or pandas', only) as text, unless it names a secret (a structured
    array's field names); remembered: formatting a dtype is slow, and the same come each time."""
    text = str(dtype)
    return "?" if _hidden_label(text) else text


def _columns(frame: Any) -> str:
    shown = []
    for column, dtype in islice(zip(frame.columns, frame.dtypes, strict=False), MAX_COLUMNS):
        if _hidden_label(column):
            continue
        shown.append(f"{column!s} ({_dtype(dtype)})")
    more = len(frame.columns) - MAX_COLUMNS
    return ", ".join(shown) + (f", … {more} more" if more > 0 else "")


def _hidden_label(label: Any) -> bool:
    """`is_secret_label`, remembered for strings: the same names come on every keystroke."""
    return _secret_word(label) if type(label) is str else is_secret_label(label)


@functools.lru_cache(maxsize=8192)
def _secret_word(name: str) -> bool:
    return is_secret_label(name)


def _signature(function: types.FunctionType) -> str:
    """`(a, b=1, *rest, key=None, **more)` from the code object: `inspect.signature` would read
    `__wrapped__` and `__signature__` and call the defaults' `__repr__`; annotations are left
    out, and a default that is not plain data shows as `...`."""
    code = function.__code__
    names = code.co_varnames
    positional = code.co_argcount
    keyword = code.co_kwonlyargcount
    defaults = function.__defaults__ or ()
    given = dict(zip(names[positional - len(defaults) : positional], defaults, strict=True))
    given.update(function.__kwdefaults__ or {})
    shown = [_parameter(n, given) for n in names[:positional]]
    if code.co_posonlyargcount:
        shown.insert(code.co_posonlyargcount, "/")
    rest = positional + keyword
    if code.co_flags & inspect.CO_VARARGS:
        shown.append("*" + names[rest])
        rest += 1
    elif keyword:
        shown.append("*")
    shown += [_parameter(n, given) for n in names[positional : positional + keyword]]
    if code.co_flags & inspect.CO_VARKEYWORDS:
        shown.append("**" + names[rest])
    return "(" + ", ".join(shown) + ")"


def _parameter(name: str, defaults: Mapping[str, Any]) -> str:
    if name not in defaults:
        return name
    value = defaults[name]
    plain = value is None or is_one_of(type(value), (bool, int, float, str))
    return f"{name}={shorten(repr(value), 30) if plain else '...'}"


def _attributes(
    path: str, typed: str, namespace: Mapping[str, Any], hidden: Mapping[str, Any]
) -> list[str]:
    """Public attributes of the object `path` names, those starting with `typed` first."""
    first, *rest = path.split(".")
    if first not in namespace or is_internal(first, namespace[first], hidden):
        return []
    value = namespace[first]
    if is_secret_value(first, value) or _hidden_label(first):
        return []
    for step in rest:
        if step.startswith("_") or _hidden_label(step):
            return []
        try:
            value = _static_attribute(value, step)
        except AttributeError:
            return []
    columns = value.columns if is_frame(value) else ()
    listed = [str(c) for c in islice(columns, MAX_ATTRIBUTES) if not _hidden_label(c)]
    public = [n for n in _public_names(value) if n not in listed]
    chosen = [n for n in listed + public if n.startswith(typed) and not _hidden_label(n)]
    return chosen[:MAX_ATTRIBUTES]


_TYPE_NAMES: dict[int, tuple[type, list[str]]] = {}
"""Each type's public names, listed once (keyed by the class's id: hashing a class would call its
metaclass's `__hash__`)."""


def _public_names(value: Any) -> list[str]:
    """The type's public names and the instance's own, sorted (a module: its own names)."""
    kind = type(value)
    if inherits(value, types.ModuleType, type):
        return public_names(value)
    cached = _TYPE_NAMES.get(id(kind))
    if cached is not None and cached[0] is kind:
        names = cached[1]
    else:
        if len(_TYPE_NAMES) > 1000:  # classes made on the fly: do not keep them all
            _TYPE_NAMES.clear()
        names = class_public_names(kind)
        _TYPE_NAMES[id(kind)] = (kind, names)
    own = instance_dict(value)
    if own:
        extra = [n for n in own if type(n) is str and not n.startswith("_") and n not in names]
        if extra:
            return sorted([*names, *extra])
    return names


def _static_attribute(value: Any, name: str) -> Any:
    """An attribute as stored, without running a property (which could run user code) unless it
    is a module's or a plain instance's data."""
    found = static_attribute(value, name)
    if found is MISSING:
        raise AttributeError(name)
    if is_one_of(type(found), (staticmethod, classmethod)):
        return found.__func__
    if lookup_type(type(found), "__get__") is not None and not inherits(found, types.FunctionType):
        raise AttributeError(name)  # a property or another descriptor: reading it runs code
    return found
