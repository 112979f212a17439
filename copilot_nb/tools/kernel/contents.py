"""What a value holds, read by walking it as a copy would: what keeping a copy of it costs, whether
a secret is inside (`measure`), and a digest of it (`fingerprint`).

A deep copy (or a pickle) reaches everything a value holds, whatever its container's type, so
the walk does too: the items of any dict, list, tuple, set or deque (a subclass's through the
base type's own C code, so an overridden `__iter__` or `items` hides nothing), the attributes
in an object's `__dict__` and slots, the elements of a numpy array of objects or strings, a
pandas object's labels and values. An object of a C extension's type, whose state the walk
cannot see, is read through its buffer or its `nbytes` when it has one, else (only where a copy
is about to be made: `reduce=True`) through `__reduce_ex__`, which the copy calls anyway. Sizes:
numpy arrays by `nbytes`, pandas objects by their deep memory usage, anything else by
`sys.getsizeof`, an object whose size cannot be read as `UNKNOWN_BYTES`; an object held twice
counts once, as a copy holds it once.

The walk is bounded: `MAX_ITEMS` objects, `MAX_DEPTH` levels. Past the bound a size is
extrapolated from what was seen, a secret further in is not found, and a fingerprint covers
what was seen (each says so: `complete`).
"""

from __future__ import annotations

import array as array_module
import collections
import hashlib
import sys
import types
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from itertools import islice
from typing import Any

from ...text import is_secret_name
from ..masking import is_environment, looks_secret
from ..static_view import (
    class_dict,
    class_module,
    class_name,
    inherits,
    instance_dict,
    is_one_of,
    lookup_type,
    mro,
    sizeof,
    trusted_kind,
)

MAX_ITEMS = 100_000
"""Objects one walk visits at most (a list of 100,000 numbers takes about 0.2 s)."""
MAX_DEPTH = 64
"""Levels of nesting one walk goes down at most."""
MAX_HASHED = 256 * 1024 * 1024
"""Bytes of arrays and strings one fingerprint hashes at most (sha256: about 0.15 s)."""
UNKNOWN_BYTES = 1024
"""What an object whose size cannot be read counts as."""
_TEXT_BATCH = 1024 * 1024
"""Characters of strings searched for secrets at once (a token is found in the joined text as
in its own string; only a batch that holds one is searched string by string)."""
_BUFFER_TEXT = 1024 * 1024
"""Bytes of a bytes-like value searched for a secret."""
_HEAPTYPE = 1 << 9
_ATOMS = (str, bytes, bytearray, int, float, complex, bool, type(None), range, slice)
_CODE = (
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
_SEQUENCES: tuple[type, ...] = (list, tuple, set, frozenset, collections.deque)
_EXACT_ATOMS = frozenset(_ATOMS)
_BASE: Any = type.__dict__["__base__"]
_BASICSIZE: Any = type.__dict__["__basicsize__"]
_FLAGS: Any = type.__dict__["__flags__"]


@dataclass(frozen=True, kw_only=True)
class Measured:
    """What keeping a copy of a value costs, and where a secret is inside it."""

    size: int
    secret: str | None = None
    """Where the first secret found is (`['api_key']`, `.client.token`; '' for the value
    itself), None when none was found."""
    complete: bool = True
    """False when the walk stopped at its bound (the size is then an estimate)."""


@dataclass(frozen=True, kw_only=True)
class Fingerprint:
    """A digest of what a value holds, to tell later whether it changed."""

    digest: str
    complete: bool = True
    """False when part of the value was not read: past the walk's bounds, or an object of a C
    extension's type without a buffer (it stands in the digest by its type alone)."""


@dataclass(frozen=True, kw_only=True, eq=False)
class _Strings:
    """The strings of an array, walked as one block: their text, and where each one is."""

    texts: list[str]
    indices: array_module.array[int] | None = None
    """Where each string is in the array (None: the array holds only strings, in order)."""

    def index(self, position: int) -> int:
        return position if self.indices is None else self.indices[position]

    def joined(self) -> str:
        return "\n".join(self.texts)


@dataclass(eq=False, slots=True)
class _Node:
    value: Any
    parent: _Node | None = None
    label: tuple[str, Any] | None = None
    """How the parent reaches it: ("item", key), ("attr", name), ("key", key); None inside."""
    depth: int = 0
    named: bool = False
    """Reached under a secret-sounding name (`['password']`, `.token`, an item of one)."""
    sized: bool = True
    """Whether its bytes count (not inside a pandas object: its memory usage counted them)."""
    repeat: int | None = None
    """For an object met before: when it was first met (the walk does not go into it again)."""

    def under(self, value: Any, label: tuple[str, Any] | None, *, named: bool = False) -> _Node:
        """A node this one holds."""
        return _Node(value, self, label, self.depth + 1, named, self.sized)

    def where(self) -> str:
        """`[0]['x'].value`: how the walk reached it from the top."""
        parts = []
        node: _Node | None = self
        while node is not None:
            if node.label is not None:
                parts.append(_shown(*node.label))
            node = node.parent
        return "".join(reversed(parts))


def measure(value: Any, *, max_items: int = MAX_ITEMS, reduce: bool = True) -> Measured:
    """What keeping a copy of `value` costs, and where a secret is inside it, if one is."""
    walk = _Walk(max_items=max_items, reduce=reduce)
    tally = _Tally()
    for node in walk.nodes(value):
        found = tally.add(node) if node.repeat is None else None
        if found is not None:
            return Measured(size=tally.size, secret=found, complete=walk.complete)
    found = tally.flush()
    if found is not None:
        return Measured(size=tally.size, secret=found, complete=walk.complete)
    size = tally.size
    if not walk.complete and tally.recent:  # the rest is taken to be like the last ones met
        size += walk.unseen * sum(tally.recent) // len(tally.recent)
    return Measured(size=size, complete=walk.complete)


class _Tally:
    """What `measure` adds up as the walk goes: bytes, and strings searched in batches."""

    def __init__(self) -> None:
        self.size = 0
        self.recent: collections.deque[int] = collections.deque(maxlen=1024)
        self._batch: list[tuple[_Node, str]] = []
        self._chars = 0

    def add(self, node: _Node) -> str | None:
        """Count one object; where a secret is when it holds or is one."""
        item = node.value
        if type(item) is _Strings:
            self.size += sum(map(sys.getsizeof, item.texts)) if node.sized else 0
            return _secret_in_block(node, item)
        if _is_atom(type(item)):  # most of what a big value holds: the fast way
            cost, text = sys.getsizeof(item), _atom_text(item)
        else:
            cost, text = own_bytes(item), _text_of(item)
            if text is None and is_environment(item):
                return node.where()
        cost = cost if node.sized else 0
        self.size += cost
        self.recent.append(cost)
        if text is None:
            return None
        if node.named and text:
            return node.where()
        self._batch.append((node, text))
        self._chars += len(text)
        return self.flush() if self._chars >= _TEXT_BATCH else None

    def flush(self) -> str | None:
        """Search the strings met since the last search."""
        found = _secret_in(self._batch)
        self._batch, self._chars = [], 0
        return found


def fingerprint(value: Any, *, max_items: int = MAX_ITEMS) -> Fingerprint:
    """A digest of what `value` holds (types, labels and data), within the walk's bounds; an
    object whose content cannot be read stands in it by its type."""
    walk = _Walk(max_items=max_items, reduce=False)
    digest = hashlib.sha256()
    budget, opaque = MAX_HASHED, False
    for node in walk.nodes(value):
        item = node.value
        label = _shown(*node.label) if node.label is not None else ""
        digest.update(f"\0{node.depth}{label}:".encode("utf-8", "replace"))
        if node.repeat is not None:
            digest.update(f"={node.repeat}".encode())
            continue
        kind = type(item)
        if _is_atom(kind):  # most of what a big value holds: the fast way
            digest.update(kind.__name__.encode())
            data: bytes | memoryview | None = (
                item.encode("utf-8", "surrogatepass")[:budget]
                if kind is str
                else bytes(item[:budget])
                if kind is bytes or kind is bytearray
                else repr(item).encode()
            )
        else:
            digest.update(_type_key(item).encode("utf-8", "replace"))
            data = _data_of(item, budget)
        if data is None:
            opaque = True
            continue
        budget -= len(data)
        digest.update(data)
    complete = walk.complete and budget > 0 and not opaque
    return Fingerprint(digest=digest.hexdigest(), complete=complete)


def own_bytes(value: Any) -> int:
    """The bytes one object holds itself (a container's items count as they are walked)."""
    package = trusted_kind(value)
    try:
        if package == "numpy":
            return int(value.nbytes)
        if package == "pandas":
            usage = value.memory_usage(deep=True)
            return int(usage.sum()) if hasattr(usage, "sum") else int(usage)
    except Exception:  # a broken pandas object counts as an unknown one
        return UNKNOWN_BYTES
    if _is_code(value):
        return 0
    buffer = _buffer_size(value)
    if buffer is not None:
        return buffer
    found = sizeof(value)
    return found if found is not None else UNKNOWN_BYTES


class _Walk:
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

    def nodes(self, value: Any) -> Iterator[_Node]:
        stack: list[tuple[Iterator[_Node], list[int]]] = [(iter([_Node(value)]), [1])]
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

    def _children(self, node: _Node) -> tuple[Iterable[_Node], int] | None:
        """The nodes `node` holds, and how many of them count bytes (None for a leaf)."""
        value, kind = node.value, type(node.value)
        if kind is _Strings or _is_atom(kind) or inherits(value, *_ATOMS) or _is_code(value):
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
        for base in _SEQUENCES:
            if inherits(value, base):
                count: int = base.__len__(value)  # type: ignore[attr-defined]
                return _chain(_attributes(node), _sequence(node, base)), count
        if _solid_base(kind) is object:
            return _attributes(node), 0
        return self._opaque(node)

    def _array(self, node: _Node) -> tuple[Iterable[_Node], int] | None:
        """A numpy array of objects or strings: its strings as one block (read at C speed),
        then its other objects; None for an array of numbers (its bytes are its content)."""
        array = node.value
        kind = array.dtype.kind
        if kind not in "OUS":
            return None
        items = array.flat[:MAX_ITEMS].tolist()  # the stored objects, or strings made now
        self._alive.append(items)
        if kind != "O":  # the strings' bytes are the array's own
            node = _Node(array, node.parent, node.label, node.depth, node.named, sized=False)
        others: Iterator[_Node] = iter(())
        if list(map(type, items)).count(str) == len(items):  # all strings (a text column)
            block = _Strings(texts=items)
        else:
            texts = [(i, item) for i, item in enumerate(items) if type(item) is str]
            indices = array_module.array("q", [i for i, _ in texts])
            block = _Strings(texts=[text for _, text in texts], indices=indices)
            others = (
                node.under(item, ("item", i))
                for i, item in enumerate(items)
                if type(item) is not str
            )
        count = len(items) - len(block.texts) if node.sized else 0
        return _chain([node.under(block, None)], others), count + 1

    def _pandas(self, node: _Node) -> Iterator[_Node]:
        """A pandas object's labels and values, their bytes counted with the object's own."""
        value = node.value
        inside = _Node(value, node.parent, node.label, node.depth, node.named, sized=False)
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

    def _made(
        self, node: _Node, value: Any, label: tuple[str, Any] | None, *, named: bool
    ) -> _Node:
        """A node for an object the walk made (kept alive until the walk ends)."""
        self._alive.append(value)
        return node.under(value, label, named=named)

    def _opaque(self, node: _Node) -> tuple[Iterable[_Node], int] | None:
        """A C extension's object: its attributes, and the state a copy would read."""
        own = list(_attributes(node))
        if not self.reduce or _buffer_size(node.value) is not None:
            return (own, len(own)) if own else None
        try:
            reduced = node.value.__reduce_ex__(4)
        except Exception:  # what cannot be reduced cannot be copied or pickled either
            reduced = None
        if type(reduced) is not tuple:
            return (own, len(own)) if own else None
        state = [_materialized(part) for part in reduced[1:]]
        self._alive.append(state)
        inner = [_Node(part, node, None, node.depth + 1, node.named, node.sized) for part in state]
        return own + inner, len(own) + len(inner)


def _mapping(node: _Node) -> Iterator[_Node]:
    """A dict's keys (those that are not plain names) and values, read as the dict stores them."""
    for key, item in dict.items(node.value):
        if type(key) is not str or looks_secret(key):
            yield node.under(key, ("key", key))
        yield node.under(item, ("item", key), named=type(key) is str and is_secret_name(key))


def _sequence(node: _Node, base: Any) -> Iterator[_Node]:
    """A list's, tuple's, set's or deque's items, read through the base type's own iterator;
    an item of one under a secret name is under it too."""
    keyed = not issubclass(base, (set, frozenset))
    for index, item in enumerate(base.__iter__(node.value)):
        yield node.under(item, ("item", index) if keyed else ("key", None), named=node.named)


def _attributes(node: _Node) -> Iterator[_Node]:
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


def _chain(*parts: Iterable[_Node]) -> Iterator[_Node]:
    for part in parts:
        yield from part


def _materialized(part: Any) -> Any:
    """A reduce's part as data: an iterator of its items (a list's, a dict's) read, bounded."""
    if lookup_type(type(part), "__next__") is not None:
        return list(islice(part, MAX_ITEMS))
    return part


def _solid_base(kind: type) -> type:
    """The first class in the MRO whose instances hold more than a Python class adds (a
    `__dict__`, slots): `object` for a plain Python class, `array.array` for an array."""
    for base in mro(kind):
        if base is object:
            return object
        own = class_dict(base)
        python = _FLAGS.__get__(base) & _HEAPTYPE and (
            "__dict__" in own
            or "__slots__" in own
            or _BASICSIZE.__get__(base) == _BASICSIZE.__get__(_BASE.__get__(base))
        )
        if not python:
            return base
    return object


def _is_atom(kind: type) -> bool:
    """An exact str, bytes, number, None, range or slice (a metaclass's hash cannot run)."""
    return type(kind) is type and kind in _EXACT_ATOMS


def _atom_text(value: Any) -> str | None:
    if type(value) is str:
        return value
    if type(value) is bytes or type(value) is bytearray:
        return bytes(value[:_BUFFER_TEXT]).decode("latin-1")
    return None


def _is_code(value: Any) -> bool:
    return inherits(value, *_CODE)


def _buffer_size(value: Any) -> int | None:
    """The bytes behind an object of a C extension's type with a buffer (array.array) or an
    integer `nbytes` (a tensor); None for anything else."""
    kind = type(value)
    if is_one_of(kind, _ATOMS) or _is_code(value) or _solid_base(kind) is object:
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


def _text_of(value: Any) -> str | None:
    """The text a secret could be in: a string's, a bytes-like object's first megabyte."""
    if inherits(value, str):
        return str.__str__(value)
    if inherits(value, bytes, bytearray) or _buffer_size(value) is not None:
        try:
            with memoryview(value) as view:
                return bytes(view.cast("B")[:_BUFFER_TEXT]).decode("latin-1")
        except Exception:  # a buffer that is not plain bytes
            return None
    return None


def _secret_in_block(node: _Node, block: _Strings) -> str | None:
    """Where the first secret of a block of strings is (each string, under a secret name)."""
    if node.named:
        first = next((i for i, text in enumerate(block.texts) if text), None)
    elif looks_secret(block.joined()):
        first = next((i for i, text in enumerate(block.texts) if looks_secret(text)), None)
    else:
        first = None
    return None if first is None else f"{node.where()}[{block.index(first)}]"


def _secret_in(batch: list[tuple[_Node, str]]) -> str | None:
    """Where the first secret-looking string of `batch` is (searched all together first)."""
    if not batch or not looks_secret("\n".join(text for _, text in batch)):
        return None
    return next((node.where() for node, text in batch if looks_secret(text)), None)


def _shown(kind: str, key: Any) -> str:
    """How a label shows in a path: `.name`, `[3]`, `['x']`; `[…]` for what may not be shown."""
    if kind == "attr":
        return f".{key}"
    if kind == "item" and type(key) is int:
        return f"[{key}]"
    if kind == "item" and type(key) is str and len(key) <= 40 and not looks_secret(key):
        return f"[{key!r}]"
    return "[…]"


def _type_key(value: Any) -> str:
    kind = type(value)
    extra = f"{value.dtype.str}{value.shape}" if trusted_kind(value) == "numpy" else ""
    return f"{class_module(kind)}.{class_name(kind)}{extra}"


def _data_of(value: Any, budget: int) -> bytes | memoryview | None:
    """What stands for an object's own content in a fingerprint (b'' for a container, whose
    items are walked; None for an object whose content cannot be read)."""
    kind, budget = type(value), max(budget, 0)
    if kind is _Strings:
        where = value.indices.tobytes() if value.indices is not None else b""
        return where + "\0".join(value.texts).encode("utf-8", "surrogatepass")[:budget]
    if inherits(value, str):
        return str.__str__(value).encode("utf-8", "surrogatepass")[:budget]
    if inherits(value, bytes, bytearray):
        return bytes(memoryview(value)[:budget])
    for atom in _ATOMS:
        if inherits(value, atom):
            shown: str = atom.__repr__(value)  # type: ignore[call-arg]
            return shown.encode()
    if _is_code(value):
        return f"{class_module(kind)}.{getattr(value, '__qualname__', '')}".encode()
    package = trusted_kind(value)
    if package == "numpy":
        return _array_bytes(value, budget)
    if class_module(kind).split(".")[0] == "numpy" and lookup_type(kind, "tobytes"):
        return bytes(value.tobytes())  # a numpy scalar
    if package == "pandas" or inherits(value, dict, *_SEQUENCES) or _solid_base(kind) is object:
        return b""
    if _buffer_size(value) is not None:
        try:
            with memoryview(value) as view:
                return bytes(view.cast("B")[:budget])
        except (TypeError, ValueError):  # a buffer that is not plain bytes
            return None
    return None


def _array_bytes(array: Any, budget: int) -> bytes | memoryview:
    """A numpy array's data (b'' for one of objects, whose items are walked), up to `budget`."""
    if array.dtype.kind in "OUS" or not array.size:
        return b""
    if array.flags.c_contiguous:
        return memoryview(array.reshape(-1).view("uint8"))[:budget]
    return bytes(array.flat[: budget // max(array.itemsize, 1)].tobytes())
