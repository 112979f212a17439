"""Objects read without running their code: their type, names, shape, length, keys, attributes.

Any read of a notebook's object can run its code: a `shape` property, `__getattr__`,
`__getattribute__`, a `__class__` property (which `isinstance` consults when the real type does
not match), `__len__`, `__sizeof__`, `__dir__`, and on its class a metaclass's
`__getattribute__`, `__eq__`, `__hash__` or `__instancecheck__`. The listings (list_variables,
the context block, the completion context) run on every request with nobody asking, so they
read only what is stored: `type(obj)` and its real MRO, the classes' own dictionaries,
`inspect.getattr_static`, and what trusted types do (builtins, and numpy's and pandas' own
classes, matched by identity with the class in its imported module, never by duck typing).
Classes are compared with `is` only: `==`, `in` and hashing would call a metaclass's hooks.
"""

from __future__ import annotations

import collections
import os
import sys
import types
from collections.abc import Iterable, Mapping
from itertools import islice
from typing import Any

_MRO: Any = type.__dict__["__mro__"]
_TYPE_DICT: Any = type.__dict__["__dict__"]
_QUALNAME: Any = type.__dict__["__qualname__"]
_MODULE: Any = type.__dict__["__module__"]
_MODULE_DICT: Any = vars(types.ModuleType)["__dict__"]
_SLOTS = (types.WrapperDescriptorType, types.MethodDescriptorType)
"""How a builtin (C) type's method is stored: calling one runs no Python code."""
_SIZED = (str, bytes, bytearray, list, tuple, dict, set, frozenset, range, collections.deque)
_PANDAS = ("DataFrame", "Series", "Index", "RangeIndex", "MultiIndex", "DatetimeIndex")


def mro(kind: type) -> tuple[type, ...]:
    """A class's real method resolution order (no metaclass `__mro__` property runs)."""
    found = _MRO.__get__(kind)
    return found if type(found) is tuple else (kind,)


def class_dict(kind: type) -> Mapping[str, Any]:
    """A class's own namespace, as stored."""
    found: Mapping[str, Any] = _TYPE_DICT.__get__(kind)
    return found


def lookup_type(kind: type, name: str, default: Any = None) -> Any:
    """What `name` is on the class, found as Python finds it (through the MRO), or `default`."""
    for base in mro(kind):
        found = class_dict(base).get(name, MISSING)
        if found is not MISSING:
            return found
    return default


MISSING = object()
"""What `lookup_type` and `static_attribute` find where there is nothing."""


def static_attribute(value: Any, name: str) -> Any:
    """An attribute as stored, found where Python would look, without running it: a property
    or another descriptor comes back as itself. `inspect.getattr_static` before Python 3.12
    reads a class's `__dict__` through its metaclass, which can run code."""
    if inherits(value, type):
        found = lookup_type(value, name)  # a class's attribute: its own MRO, then its metaclass's
        return found if found is not None else lookup_type(type(value), name, MISSING)
    on_type = lookup_type(type(value), name, MISSING)
    data = on_type is not MISSING and lookup_type(type(on_type), "__set__") is not None
    own = instance_dict(value)
    if not data and own is not None and name in own:
        return own[name]
    return on_type


def inherits(value: Any, *bases: type) -> bool:
    """Whether the value's real type has one of `bases` in its MRO (an `isinstance` that reads
    no `__class__` and runs no `__instancecheck__`)."""
    kind = type(value)
    for wanted in bases:
        if type(wanted) is type:  # issubclass against a plain class is C's own MRO check
            if issubclass(kind, wanted):
                return True
        elif any(base is wanted for base in mro(kind)):  # an ABC's __subclasscheck__ is code
            return True
    return False


def is_one_of(kind: type, kinds: Iterable[type]) -> bool:
    """`kind in kinds` by identity."""
    return any(kind is other for other in kinds)


def class_name(kind: type) -> str:
    """A class's `__qualname__` as stored."""
    name = _QUALNAME.__get__(kind)
    return name if type(name) is str else "?"


def class_module(kind: type) -> str:
    """A class's `__module__` as stored ("" when it is not a plain string)."""
    try:
        module = _MODULE.__get__(kind)
    except AttributeError:  # a class made where no `__name__` was defined has none
        return ""
    return module if type(module) is str else ""


def type_name(value: Any) -> str:
    """`int`, `pandas.DataFrame`, `numpy.ndarray`: the type as a user would write it."""
    kind = type(value)
    module = class_module(kind)
    if module in ("builtins", "__main__", ""):
        return class_name(kind)
    return f"{module.split('.')[0]}.{class_name(kind)}"


def trusted_kind(value: Any) -> str:
    """`"numpy"` or `"pandas"` when the value's type is numpy's ndarray or one of pandas' own
    classes, from the module already imported; else ""."""
    kind = type(value)
    numpy = sys.modules.get("numpy")
    if numpy is not None and kind is getattr(numpy, "ndarray", None):
        return "numpy"
    pandas = sys.modules.get("pandas")
    if pandas is not None and any(kind is getattr(pandas, name, None) for name in _PANDAS):
        return "pandas"
    return ""


def is_frame(value: Any) -> bool:
    """pandas' own DataFrame (not a subclass)."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and type(value) is getattr(pandas, "DataFrame", None)


def is_series(value: Any) -> bool:
    """pandas' own Series (not a subclass)."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and type(value) is getattr(pandas, "Series", None)


def length(value: Any) -> int | None:
    """`len(value)` when it runs no Python code: a trusted type, or one whose `__len__` is a
    builtin type's (a `dict` subclass that does not override it)."""
    kind = type(value)
    if is_one_of(kind, _SIZED) or trusted_kind(value) or kind is os._Environ:
        return len(value)
    if inherits(value, dict):
        return dict.__len__(value)
    if isinstance(lookup_type(kind, "__len__"), _SLOTS):
        try:
            return len(value)
        except Exception:
            return None
    return None


def shape(value: Any) -> tuple[int, ...] | None:
    """The shape of numpy's array or a pandas object, else `None` (no `shape` property runs)."""
    if not trusted_kind(value):
        return None
    found = value.shape
    return found if type(found) is tuple else None


def size_of(value: Any) -> str:
    """`(3, 2)` for things with a shape, `len 5` for sized things, else ""."""
    if inherits(value, type):
        return ""
    found = shape(value)
    if found is not None:
        return str(found)
    count = length(value)
    return f"len {count}" if count is not None else ""


def mapping_keys(value: Any, limit: int) -> list[Any] | None:
    """The first keys a dict (or a subclass of one) stores, read by `dict.keys` itself, so an
    overridden `keys` or `__iter__` does not run; `None` for anything else."""
    if not inherits(value, dict):
        return None
    return list(islice(dict.keys(value), limit))


def mapping_items(value: Any, limit: int) -> list[tuple[Any, Any]] | None:
    """The first items a dict (or a subclass of one) stores, read as `mapping_keys` reads."""
    if not inherits(value, dict):
        return None
    return list(islice(dict.items(value), limit))


def instance_dict(value: Any) -> dict[str, Any] | None:
    """An object's own attribute dictionary, read through the descriptor Python made for it
    (a `__dict__` property is not run)."""
    if inherits(value, types.ModuleType):
        found = _MODULE_DICT.__get__(value)
        return found if type(found) is dict else None
    descriptor = lookup_type(type(value), "__dict__")
    if not is_one_of(type(descriptor), (types.GetSetDescriptorType, types.MemberDescriptorType)):
        return None
    try:
        found = descriptor.__get__(value)
    except (AttributeError, TypeError):
        return None
    return found if type(found) is dict else None


def class_public_names(kind: type) -> list[str]:
    """The public names a class has through its MRO, sorted (what `dir` lists, without a
    metaclass's `__dir__`)."""
    names: set[str] = set()
    for base in mro(kind):
        names.update(n for n in class_dict(base) if type(n) is str and not n.startswith("_"))
    return sorted(names)


def public_names(value: Any) -> list[str]:
    """The public attribute names of a value, sorted: a module's or an instance's own, a
    class's through its MRO, and an instance's type's; no `__dir__` runs."""
    if inherits(value, type):
        return class_public_names(value)
    own = instance_dict(value) or {}
    names = {n for n in own if type(n) is str and not n.startswith("_")}
    if not inherits(value, types.ModuleType):
        names.update(class_public_names(type(value)))
    return sorted(names)


def sizeof(value: Any) -> int | None:
    """`sys.getsizeof` (shallow) when the type's `__sizeof__` is a builtin's."""
    if not isinstance(lookup_type(type(value), "__sizeof__"), _SLOTS):
        return None
    try:
        return sys.getsizeof(value)
    except Exception:
        return None


def is_plain(value: Any) -> bool:
    """None, a bool, number, string or bytes, or a tuple of them: data whose repr is its own."""
    kind = type(value)
    if kind is tuple:
        return all(is_plain(item) for item in value)
    return value is None or is_one_of(kind, (bool, int, float, complex, str, bytes))
