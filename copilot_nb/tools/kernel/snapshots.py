"""The variables a run is about to change, kept so that Undo can put them back.

Before run_code or run_cell runs, the names its source binds, mutates or deletes (`names.py`)
are kept as they are: a pandas object by a shallow copy where pandas copies on write (pandas 3:
the copy shares its buffers until one side writes, so it costs nothing to take and a run that
changes one column copies that column; counted as 0 bytes against the limit), else by
`copy(deep=True)`; anything else by `copy.deepcopy`, counted at what the copy holds: a list of
arrays at the arrays' bytes (`contents.py` walks what a value holds). A name that did
not exist is kept as absent, so Undo removes what the run made. Nothing else is kept: a name the
code does not touch cannot change (unless the code reaches it indirectly, through a function or
an alias: the review says Undo restores the names it lists, no more).

Never kept, and said so: a secret (by its name or its value: `masking.py`), a value that holds
one anywhere inside (in any container, an object's attributes, an array of objects), a value over the
size limit the user sets (`KernelState.keep_limit`, 256 MB unless changed; 0 keeps nothing), a
value that cannot be copied (a connection, a generator, a module), and a name the user's
namespace hides. Kept values live in the kernel's memory only, for as long as the turn's undo is
reachable (the checkpoints keep the last 20 turns).
"""

from __future__ import annotations

import copy
import sys
import types
import weakref
from collections.abc import Iterable, Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from ...text import human_bytes
from ..redaction.masking import is_secret_label, is_secret_value
from ..views.static_view import inherits
from .contents import Measured, fingerprint, measure

KEEP_LIMIT = 256 * 1024 * 1024
"""Bytes of variables one run may keep (the user changes it with `%copilot state --keep`)."""
_ABSENT = object()


@dataclass(frozen=True, kw_only=True, eq=False)
class Left:
    """What a run left under one name: which object (none when the name was gone), and a
    fingerprint of what it held."""

    present: bool
    ref: Any = None
    """A weak reference to the object, or None when it takes none (then `ident` tells it)."""
    ident: int = 0
    digest: str = ""
    whole: bool = True
    """Whether the fingerprint read all of it: else a different object counts as a change."""

    @classmethod
    def of(cls, namespace: Mapping[str, Any], name: str) -> Left:
        if name not in namespace:
            return cls(present=False)
        value = namespace[name]
        found = fingerprint(value)
        return cls(
            present=True,
            ref=_weak(value),
            ident=id(value),
            digest=found.digest,
            whole=found.complete,
        )

    def holds(self, value: Any) -> bool:
        """Whether `value` is the very object the run left."""
        return self.ref() is value if self.ref is not None else id(value) == self.ident

    def changed(self, namespace: Mapping[str, Any], name: str) -> bool:
        """Whether the name now holds something else than the run left there: other content,
        or (when the fingerprint could not read it all) another object."""
        if name not in namespace or not self.present:
            return self.present or name in namespace
        value = namespace[name]
        if not self.whole and not self.holds(value):
            return True
        return fingerprint(value).digest != self.digest

    def moved(self, value: Any) -> Left:
        """The same record for `value`, a copy of what was there put back in its place."""
        return Left(present=True, ref=_weak(value), ident=id(value), digest=self.digest)


def _weak(value: Any) -> Any:
    try:
        return weakref.ref(value)
    except TypeError:  # a list, a dict, a number: told by id
        return None


@dataclass(kw_only=True, eq=False)
class Kept:
    """The variables one run was about to change, and those it could not keep, with why."""

    label: str
    """What ran: `run_code` or `cell #3`."""
    values: dict[str, Any] = field(default_factory=dict)
    """Each kept name's copy (the absent marker for a name that did not exist)."""
    left: dict[str, str] = field(default_factory=dict)
    """Names not kept, with why."""
    size: int = 0
    after: dict[str, Left] = field(default_factory=dict)
    """What the run left under each kept name (`settle`), to tell a change made since."""
    kept_yours: list[str] = field(default_factory=list)
    """Names a put-back left as they were, because they had changed since the run."""
    taken_back: bool = False
    released: bool = False

    before: dict[str, int] = field(default_factory=dict)
    """The id of each kept name's object before the run (what an earlier run may have left)."""
    turn: Any = None
    """The checkpoint turn the run started in, where its Undo belongs (`Checkpoints.hold`)."""

    def settle(self, namespace: Mapping[str, Any]) -> None:
        """The run is over: record what it left under each kept name."""
        self.after = {name: Left.of(namespace, name) for name in self.values}

    def put_in_place(self, name: str, old: int, value: Any) -> None:
        """A later run's Undo put `value` (a copy) back in place of object `old`: if that is
        what this run left, the copy now stands for it."""
        left = self.after.get(name)
        if left is not None and left.present and left.ident == old:
            self.after[name] = left.moved(value)

    def changed_since(self, namespace: Mapping[str, Any]) -> list[str]:
        """Kept names that hold something else now than the run left (nothing once put back
        or let go: there is nothing left to overwrite)."""
        if self.taken_back or self.released:
            return []
        return sorted(name for name, left in self.after.items() if left.changed(namespace, name))

    def release(self) -> None:
        """Let the copies go (the kernel holds too many): Undo then says it cannot."""
        self.values, self.released, self.size = {}, True, 0

    @property
    def names(self) -> list[str]:
        return sorted(self.values)

    def note(self) -> str:
        """What Undo will and will not restore, for the review and the tool's result."""
        parts = []
        back = [name for name in self.names if self.values[name] is not _ABSENT]
        made = [name for name in self.names if self.values[name] is _ABSENT]
        if back:
            was = "it was" if len(back) == 1 else "they were"
            parts.append(f"Undo puts back {', '.join(back)} as {was} before the run")
        if made:
            them = "it" if len(made) == 1 else "them"
            parts.append(f"Undo removes {', '.join(made)} (the run made {them})")
        if self.left:
            shown = "; ".join(f"{name} ({why})" for name, why in sorted(self.left.items()))
            parts.append(f"Undo cannot put back {shown}")
        return ". ".join(parts)

    def put_back(
        self,
        namespace: MutableMapping[str, Any],
        *,
        force: bool = False,
        earlier: Iterable[Kept] = (),
    ) -> list[str]:
        """Put the kept variables back (once), removing those the run made; a name changed
        since the run is left as it is unless `force`. `earlier` runs' records follow the
        copies put back. The names put back."""
        if self.taken_back or self.released:
            return []
        self.kept_yours = [] if force else self.changed_since(namespace)
        self.taken_back = True
        done = []
        for name, value in self.values.items():
            if name in self.kept_yours:
                continue
            if value is _ABSENT:
                namespace.pop(name, None)
            else:
                namespace[name] = value
                for run in earlier:
                    if name in self.before and run is not self:
                        run.put_in_place(name, self.before[name], value)
            done.append(name)
        return sorted(done)


def keep(
    namespace: MutableMapping[str, Any],
    names: Iterable[str],
    *,
    limit: int = KEEP_LIMIT,
    hidden: Iterable[str] = (),
    label: str = "",
) -> Kept:
    """Copies of `names` as they are in `namespace` now, within `limit` bytes in all."""
    kept = Kept(label=label)
    hidden = set(hidden)
    for name in sorted(set(names)):
        if name.startswith("_") or name in hidden:
            continue
        if name not in namespace:
            kept.values[name] = _ABSENT
            continue
        value = namespace[name]
        if not limit:
            kept.left[name] = not_keepable(name, value) or "keeping variables is off"
            continue
        measured = measure(value)
        why = not_keepable(name, value, measured)
        if why:
            kept.left[name] = why
            continue
        size = 0 if shares_on_write(value) else measured.size
        if kept.size + size > limit:
            kept.left[name] = f"{human_bytes(size)}, over the {human_bytes(limit)} limit"
            continue
        try:
            kept.values[name] = copied(value)
        except Exception as exc:  # a value that refuses to be copied says why
            kept.left[name] = f"cannot be copied: {type(exc).__name__}"
            continue
        kept.before[name] = id(value)
        kept.size += size
    return kept


def copied(value: Any) -> Any:
    """A copy of `value` that a later change to it does not reach."""
    if shares_on_write(value):
        return value.copy(deep=False)
    if type(value).__module__.split(".")[0] == "pandas" and hasattr(value, "copy"):
        return value.copy(deep=True)
    return copy.deepcopy(value)


def shares_on_write(value: Any) -> bool:
    """Whether a shallow copy of `value` is safe and shares its memory until one side writes
    (a pandas object where pandas copies on write: always from pandas 3, an option in 2.x)."""
    pandas = sys.modules.get("pandas")
    if pandas is None or type(value).__module__.split(".")[0] != "pandas":
        return False
    if not hasattr(value, "copy"):
        return False
    if int(str(getattr(pandas, "__version__", "0")).split(".")[0]) >= 3:
        return True
    try:
        return pandas.get_option("mode.copy_on_write") is True
    except Exception:  # an older pandas without the option
        return False


def not_keepable(name: str, value: Any, measured: Measured | None = None) -> str:
    """Why a value is not kept ('' when it may be); `measured` is what `measure` found in it."""
    if is_secret_label(name) or is_secret_value(name, value):
        return "a secret: never kept"
    if inherits(value, types.ModuleType, types.GeneratorType, types.CoroutineType):
        return f"a {type(value).__name__}: cannot be copied"
    found = (measured or measure(value)).secret
    if found == "":
        return "a secret: never kept"
    if found is not None:
        return f"holds a secret (at {name}{found}): never kept"
    return ""
