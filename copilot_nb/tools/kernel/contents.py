"""What a value holds, read by walking it as a copy would (`walk.py`): what keeping a copy of it
costs and whether a secret is inside (`measure`), and a digest of it (`fingerprint`).

Sizes: numpy arrays by `nbytes`, pandas objects by their deep memory usage, an object with a
buffer by its bytes, anything else by `sys.getsizeof`, an object whose size cannot be read as
`UNKNOWN_BYTES`; an object held twice counts once, as a copy holds it once. Past the walk's
bound a size is extrapolated from the last objects met, a secret further in is not found, and a
fingerprint covers what was met (each says so: `complete`). A secret is a string (or the first
megabyte of a bytes-like object) in a known secret format, any text under a secret-sounding
name (`['password']`, `.token`), or `os.environ` (`masking.py`'s tests).
"""

from __future__ import annotations

import collections
import hashlib
import sys
from dataclasses import dataclass
from typing import Any

from ..redaction.masking import is_environment, looks_secret
from ..views.static_view import (
    class_module,
    class_name,
    inherits,
    lookup_type,
    sizeof,
    trusted_kind,
)
from .walk import (
    ATOMS,
    MAX_ITEMS,
    SEQUENCES,
    Node,
    Strings,
    Walk,
    buffer_size,
    is_atom,
    is_code,
    shown,
    solid_base,
)

MAX_HASHED = 256 * 1024 * 1024
"""Bytes of arrays and strings one fingerprint hashes at most (sha256: about 0.15 s)."""
UNKNOWN_BYTES = 1024
"""What an object whose size cannot be read counts as."""
_TEXT_BATCH = 1024 * 1024
"""Characters of strings searched for secrets at once (a token is found in the joined text as
in its own string; only a batch that holds one is searched string by string)."""
_BUFFER_TEXT = 1024 * 1024
"""Bytes of a bytes-like value searched for a secret."""


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


def measure(value: Any, *, max_items: int = MAX_ITEMS, reduce: bool = True) -> Measured:
    """What keeping a copy of `value` costs, and where a secret is inside it, if one is."""
    walk = Walk(max_items=max_items, reduce=reduce)
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
        self._batch: list[tuple[Node, str]] = []
        self._chars = 0

    def add(self, node: Node) -> str | None:
        """Count one object; where a secret is when it holds or is one."""
        item = node.value
        if type(item) is Strings:
            self.size += sum(map(sys.getsizeof, item.texts)) if node.sized else 0
            return _secret_in_block(node, item)
        if is_atom(type(item)):  # most of what a big value holds: the fast way
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
    walk = Walk(max_items=max_items, reduce=False)
    digest = hashlib.sha256()
    budget, opaque = MAX_HASHED, False
    for node in walk.nodes(value):
        item = node.value
        label = shown(*node.label) if node.label is not None else ""
        digest.update(f"\0{node.depth}{label}:".encode("utf-8", "replace"))
        if node.repeat is not None:
            digest.update(f"={node.repeat}".encode())
            continue
        kind = type(item)
        if is_atom(kind):  # most of what a big value holds: the fast way
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
    if is_code(value):
        return 0
    buffer = buffer_size(value)
    if buffer is not None:
        return buffer
    found = sizeof(value)
    return found if found is not None else UNKNOWN_BYTES


def _atom_text(value: Any) -> str | None:
    if type(value) is str:
        return value
    if type(value) is bytes or type(value) is bytearray:
        return bytes(value[:_BUFFER_TEXT]).decode("latin-1")
    return None


def _text_of(value: Any) -> str | None:
    """The text a secret could be in: a string's, a bytes-like object's first megabyte."""
    if inherits(value, str):
        return str.__str__(value)
    if inherits(value, bytes, bytearray) or buffer_size(value) is not None:
        try:
            with memoryview(value) as view:
                return bytes(view.cast("B")[:_BUFFER_TEXT]).decode("latin-1")
        except Exception:  # a buffer that is not plain bytes
            return None
    return None


def _secret_in_block(node: Node, block: Strings) -> str | None:
    """Where the first secret of a block of strings is (each string, under a secret name)."""
    if node.named:
        first = next((i for i, text in enumerate(block.texts) if text), None)
    elif looks_secret(block.joined()):
        first = next((i for i, text in enumerate(block.texts) if looks_secret(text)), None)
    else:
        first = None
    return None if first is None else f"{node.where()}[{block.index(first)}]"


def _secret_in(batch: list[tuple[Node, str]]) -> str | None:
    """Where the first secret-looking string of `batch` is (searched all together first)."""
    if not batch or not looks_secret("\n".join(text for _, text in batch)):
        return None
    return next((node.where() for node, text in batch if looks_secret(text)), None)


def _type_key(value: Any) -> str:
    kind = type(value)
    extra = f"{value.dtype.str}{value.shape}" if trusted_kind(value) == "numpy" else ""
    return f"{class_module(kind)}.{class_name(kind)}{extra}"


def _data_of(value: Any, budget: int) -> bytes | memoryview | None:
    """What stands for an object's own content in a fingerprint (b'' for a container, whose
    items are walked; None for an object whose content cannot be read)."""
    kind, budget = type(value), max(budget, 0)
    if kind is Strings:
        where = value.indices.tobytes() if value.indices is not None else b""
        return where + "\0".join(value.texts).encode("utf-8", "surrogatepass")[:budget]
    if inherits(value, str):
        return str.__str__(value).encode("utf-8", "surrogatepass")[:budget]
    if inherits(value, bytes, bytearray):
        return bytes(memoryview(value)[:budget])
    for atom in ATOMS:
        if inherits(value, atom):
            shown: str = atom.__repr__(value)  # type: ignore[call-arg]
            return shown.encode()
    if is_code(value):
        return f"{class_module(kind)}.{getattr(value, '__qualname__', '')}".encode()
    return _stored_data(value, budget)


def _stored_data(value: Any, budget: int) -> bytes | memoryview | None:
    """A numpy array's or scalar's data, a buffer's bytes; b'' for a container."""
    kind, package = type(value), trusted_kind(value)
    if package == "numpy":
        return _array_bytes(value, budget)
    if class_module(kind).split(".")[0] == "numpy" and lookup_type(kind, "tobytes"):
        return bytes(value.tobytes())  # a numpy scalar
    if package == "pandas" or inherits(value, dict, *SEQUENCES) or solid_base(kind) is object:
        return b""
    if buffer_size(value) is None:
        return None
    try:
        with memoryview(value) as view:
            return bytes(view.cast("B")[:budget])
    except (TypeError, ValueError):  # a buffer that is not plain bytes
        return None


def _array_bytes(array: Any, budget: int) -> bytes | memoryview:
    """A numpy array's data (b'' for one of objects, whose items are walked), up to `budget`."""
    if array.dtype.kind in "OUS" or not array.size:
        return b""
    if array.flags.c_contiguous:
        return memoryview(array.reshape(-1).view("uint8"))[:budget]
    return bytes(array.flat[: budget // max(array.itemsize, 1)].tobytes())
