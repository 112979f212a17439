"""A bounded walk over what a value holds, reaching what a deep copy (or a pickle) reaches,
whatever its container's type: the items of any dict, list, tuple, set or deque (a subclass's
through the base type's own C code, so an overridden `__iter__` or `items` hides nothing), the
attributes in an object's `__dict__` and slots, the elements of a numpy array of objects or
strings (its strings as one block, read at C speed), a pandas object's labels and values. An
object of a C extension's type, whose state the walk cannot see, is read through its buffer or
its `nbytes` when it has one, else (only where a copy is about to be made: `reduce=True`)
through `__reduce_ex__`, which the copy calls anyway.

Each object is met once (met again, it is marked a repeat and not gone into), at most
`MAX_ITEMS` objects and `MAX_DEPTH` levels; past them the walk says it is not `complete`, and
how many objects it knows it left (`unseen`). `contents.py` reads sizes, secrets and digests
from it.
"""

from __future__ import annotations

import array as array_module
import collections
import types
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any

from ...text import is_secret_name
from ..redaction.masking import is_environment, looks_secret
from ..views.static_view import (
    class_dict,
    class_module,
    class_name,
    inherits,
    instance_dict,
    is_one_of,
    lookup_type,
    mro,
    trusted_kind,
)

MAX_ITEMS = 100_000
"""Objects one walk visits at most (a list of 100,000 numbers takes about 0.2 s)."""
MAX_DEPTH = 64
"""Levels of nesting one walk goes down at most."""
HEAPTYPE = 1 << 9
ATOMS = (str, bytes, bytearray, int, float, complex, bool, type(None), range, slice)
CODE = (
    type,
    types.FunctionType,
    types.BuiltinFunctionType,
    types.MethodType,
    types.ModuleType,
    types.MethodWrapperType,
    types.WrapperDescriptorType,
    types.MethodDescriptorType,
)
"""What a deep copy keeps as it is and a pickle saves by name: not walked, counted as 0."""
SEQUENCES: tuple[type, ...] = (list, tuple, set, frozenset, collections.deque)
_EXACT_ATOMS = frozenset(ATOMS)
_BASE: Any = type.__dict__["__base__"]
_BASICSIZE: Any = type.__dict__["__basicsize__"]
_FLAGS: Any = type.__dict__["__flags__"]


@dataclass(frozen=True, kw_only=True, eq=False)
class Strings:
    """The strings of an array, walked as one block: their text, and where each one is."""

    texts: list[str]
    indices: array_module.array[int] | None = None
    """Where each string is in the array (None: the array holds only strings, in order)."""

    def index(self, position: int) -> int:
        """Where the string at `position` of the block is in its array."""
        return position if self.indices is None else self.indices[position]

    def joined(self) -> str:
        """All the strings as one text, searched at once."""
        return "\n".join(self.texts)


@dataclass(eq=False, slots=True)
class Node:
    """One object the walk met, and how it was reached."""

    value: Any
    parent: Node | None = None
    label: tuple[str, Any] | None = None
    """How the parent reaches it: ("item", key), ("attr", name), ("key", key); None inside."""
    depth: int = 0
    named: bool = False
    """Reached under a secret-sounding name (`['password']`, `.token`, an item of one)."""
    sized: bool = True
    """Whether its bytes count (not inside a pandas object: its memory usage counted them)."""
    repeat: int | None = None
    """For an object met before: when it was first met (the walk does not go into it again)."""

    def under(self, value: Any, label: tuple[str, Any] | None, *, named: bool = False) -> Node:
        """A node this one holds."""
        return Node(value, self, label, self.depth + 1, named, self.sized)

    def where(self) -> str:
        """`[0]['x'].value`: how the walk reached it from the top."""
        parts = []
        node: Node | None = self
        while node is not None:
            if node.label is not None:
                parts.append(shown(*node.label))
            node = node.parent
        return "".join(reversed(parts))


class Walk:
    """A bounded depth-first walk that visits each object once."""

    def __init__(self, *, max_items: int, reduce: bool) -> None:
        self.max_items = max_items
        self.reduce = reduce
        self.visited = 0
        self.unseen = 0
        """Objects known to be left when the walk stopped (what cut containers still held)."""
        self.complete = True
        self._seen: dict[int, int] = {}
        self._alive: list[Any] = []
        """What the walk made (a column's array, a reduce's tuple): kept so no id is reused."""

    def nodes(self, value: Any) -> Iterator[Node]:
        """`value` and what it holds, depth first; an object met again comes as a repeat."""
        stack: list[tuple[Iterator[Node], list[int]]] = [(iter([Node(value)]), [1])]
        while stack:
            children, left = stack[-1]
            node = next(children, None)
            if node is None:
                stack.pop()
                continue
            left[0] -= 1
            if self.visited >= self.max_items:
                self.complete = False
                self.unseen = 1 + sum(max(count[0], 0) for _, count in stack)
                return
            self.visited += 1
            node.repeat = self._seen.get(id(node.value))
            if node.repeat is not None:
                yield node
                continue
            self._seen[id(node.value)] = self.visited
            yield node
            found = self._children(node)
            if found is None:
                continue
            if node.depth >= MAX_DEPTH:
                self.complete = False
                continue
            items, count = found
            stack.append((iter(items), [count]))

    def _children(self, node: Node) -> tuple[Iterable[Node], int] | None:
        """The nodes `node` holds, and how many of them count bytes (None for a leaf)."""
        value, kind = node.value, type(node.value)
        if kind is Strings or is_atom(kind) or inherits(value, *ATOMS) or is_code(value):
            return None
        if is_environment(value):
            return None
        package = trusted_kind(value)
        if package == "numpy":
            return self._array(node)
        if class_module(kind).split(".")[0] == "numpy":  # a numpy scalar or dtype
            return None
        if package == "pandas":
            return self._pandas(node), 0
        if inherits(value, dict):
            return _chain(_attributes(node), _mapping(node)), dict.__len__(value)
        for base in SEQUENCES:
            if inherits(value, base):
                count: int = base.__len__(value)  # type: ignore[attr-defined]
                return _chain(_attributes(node), _sequence(node, base)), count
        if solid_base(kind) is object:
            return _attributes(node), 0
        return self._opaque(node)

    def _array(self, node: Node) -> tuple[Iterable[Node], int] | None:
        """A numpy array of objects or strings: its strings as one block (read at C speed),
        then its other objects; None for an array of numbers (its bytes are its content)."""
        array = node.value
        kind = array.dtype.kind
        if kind not in "OUS":
            return None
        items = array.flat[:MAX_ITEMS].tolist()  # the stored objects, or strings made now
        self._alive.append(items)
        if kind != "O":  # the strings' bytes are the array's own
            node = Node(array, node.parent, node.label, node.depth, node.named, sized=False)
        others: Iterator[Node] = iter(())
        if list(map(type, items)).count(str) == len(items):  # all strings (a text column)
            block = Strings(texts=items)
        else:
            texts = [(i, item) for i, item in enumerate(items) if type(item) is str]
            indices = array_module.array("q", [i for i, _ in texts])
            block = Strings(texts=[text for _, text in texts], indices=indices)
            others = (
                node.under(item, ("item", i))
                for i, item in enumerate(items)
                if type(item) is not str
            )
        count = len(items) - len(block.texts) if node.sized else 0
        return _chain([node.under(block, None)], others), count + 1

    def _pandas(self, node: Node) -> Iterator[Node]:
        """A pandas object's labels and values, their bytes counted with the object's own."""
        value = node.value
        inside = Node(value, node.parent, node.label, node.depth, node.named, sized=False)
        if hasattr(value, "columns"):  # a DataFrame
            for position, label in enumerate(value.columns):
                if type(label) is not str:
                    yield inside.under(label, ("key", label))
                named = type(label) is str and is_secret_name(label)
                column = value.iloc[:, position].to_numpy()
                yield self._made(inside, column, ("item", label), named=named)
        elif hasattr(value, "index"):  # a Series
            name = value.name
            named = node.named or (type(name) is str and is_secret_name(name))
            yield self._made(inside, value.to_numpy(), None, named=named)
        index = value.index if hasattr(value, "index") else value
        yield self._made(inside, index.to_numpy(), None, named=False)

    def _made(self, node: Node, value: Any, label: tuple[str, Any] | None, *, named: bool) -> Node:
        """A node for an object the walk made (kept alive until the walk ends)."""
        self._alive.append(value)
        return node.under(value, label, named=named)

    def _opaque(self, node: Node) -> tuple[Iterable[Node], int] | None:
        """A C extension's object: its attributes, and the state a copy would read."""
        own = list(_attributes(node))
        if not self.reduce or buffer_size(node.value) is not None:
            return (own, len(own)) if own else None
        try:
            reduced = node.value.__reduce_ex__(4)
        except Exception:  # what cannot be reduced cannot be copied or pickled either
            reduced = None
        if type(reduced) is not tuple:
            return (own, len(own)) if own else None
        state = [_materialized(part) for part in reduced[1:]]
        self._alive.append(state)
        inner = [Node(part, node, None, node.depth + 1, node.named, node.sized) for part in state]
        return own + inner, len(own) + len(inner)


def _mapping(node: Node) -> Iterator[Node]:
    """A dict's keys (those that are not plain names) and values, read as the dict stores them."""
    for key, item in dict.items(node.value):
        if type(key) is not str or looks_secret(key):
            yield node.under(key, ("key", key))
        yield node.under(item, ("item", key), named=type(key) is str and is_secret_name(key))


def _sequence(node: Node, base: Any) -> Iterator[Node]:
    """A list's, tuple's, set's or deque's items, read through the base type's own iterator;
    an item of one under a secret name is under it too."""
    keyed = not issubclass(base, (set, frozenset))
    for index, item in enumerate(base.__iter__(node.value)):
        yield node.under(item, ("item", index) if keyed else ("key", None), named=node.named)


def _attributes(node: Node) -> Iterator[Node]:
    """An object's attributes as stored: its `__dict__` and its slots."""
    own = instance_dict(node.value)
    for name, item in list(own.items()) if own is not None else []:
        yield node.under(item, ("attr", name), named=type(name) is str and is_secret_name(name))
    for name, item in _slots(node.value):
        yield node.under(item, ("attr", name), named=is_secret_name(name))


def _slots(value: Any) -> Iterator[tuple[str, Any]]:
    """(name, value) of each slot set on `value`, read through the slot's own descriptor."""
    for base in mro(type(value)):
        names = class_dict(base).get("__slots__", ())
        for name in [names] if type(names) is str else names:
            if type(name) is not str or name in ("__dict__", "__weakref__"):
                continue
            stored = f"_{class_name(base).lstrip('_')}{name}" if name.startswith("__") else name
            descriptor = class_dict(base).get(stored)
            if type(descriptor) is not types.MemberDescriptorType:
                continue
            try:
                yield name, descriptor.__get__(value)
            except AttributeError:  # a slot never set
                continue


def _chain(*parts: Iterable[Node]) -> Iterator[Node]:
    for part in parts:
        yield from part


def _materialized(part: Any) -> Any:
    """A reduce's part as data: an iterator of its items (a list's, a dict's) read, bounded."""
    if lookup_type(type(part), "__next__") is not None:
        return list(islice(part, MAX_ITEMS))
    return part


def solid_base(kind: type) -> type:
    """The first class in the MRO whose instances hold more than a Python class adds (a
    `__dict__`, slots): `object` for a plain Python class, `array.array` for an array."""
    for base in mro(kind):
        if base is object:
            return object
        own = class_dict(base)
        python = _FLAGS.__get__(base) & HEAPTYPE and (
            "__dict__" in own
            or "__slots__" in own
            or _BASICSIZE.__get__(base) == _BASICSIZE.__get__(_BASE.__get__(base))
        )
        if not python:
            return base
    return object


def is_atom(kind: type) -> bool:
    """An exact str, bytes, number, None, range or slice (a metaclass's hash cannot run)."""
    return type(kind) is type and kind in _EXACT_ATOMS


def is_code(value: Any) -> bool:
    return inherits(value, *CODE)


def buffer_size(value: Any) -> int | None:
    """The bytes behind an object of a C extension's type with a buffer (array.array) or an
    integer `nbytes` (a tensor); None for anything else."""
    kind = type(value)
    if is_one_of(kind, ATOMS) or is_code(value) or solid_base(kind) is object:
        return None
    if trusted_kind(value) or class_module(kind).split(".")[0] == "numpy":
        return None
    try:
        with memoryview(value) as view:
            return int(view.nbytes)
    except Exception:  # no buffer
        pass
    if lookup_type(kind, "nbytes") is None:
        return None
    try:
        found = value.nbytes
    except Exception:
        return None
    return found if type(found) is int else None


def shown(kind: str, key: Any) -> str:
    """How a label shows in a path: `.name`, `[3]`, `['x']`; `[…]` for what may not be shown."""
    if kind == "attr":
        return f".{key}"
    if kind == "item" and type(key) is int:
        return f"[{key}]"
    if kind == "item" and type(key) is str and len(key) <= 40 and not looks_secret(key):
        return f"[{key!r}]"
    return "[…]"
