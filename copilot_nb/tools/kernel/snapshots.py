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
from collections.abc import Iterable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from ...text import human_bytes
from ..masking import is_secret_label, is_secret_value
from ..static_view import inherits
from .contents import Measured, measure

KEEP_LIMIT = 256 * 1024 * 1024
"""Bytes of variables one run may keep (the user changes it with `%copilot state --keep`)."""
_ABSENT = object()


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
    taken_back: bool = False
    released: bool = False

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

    def put_back(self, namespace: MutableMapping[str, Any]) -> list[str]:
        """Put the kept variables back (once), removing those the run made; the names done."""
        if self.taken_back or self.released:
            return []
        self.taken_back = True
        for name, value in self.values.items():
            if value is _ABSENT:
                namespace.pop(name, None)
            else:
                namespace[name] = value
        return self.names


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
