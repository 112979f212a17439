"""The smallest ordered set of a notebook's cells that brings given names back. Pure.

After a restart the user wants `df` and `model` again, not the whole notebook re-run (the hour of
training in cell 9 makes a model nobody asked for). Reading the cells backwards from the last one
(`names.py` says what each binds, reads and mutates): a cell is needed when it binds or mutates a
name still needed; it then satisfies the names it binds outright, and needs what it reads (a
cell that mutates `df` reads it, so the cell that made `df` is needed too). Names the kernel
holds already need no cell. The chosen cells run in notebook order, which is the order a user
running the notebook top to bottom runs them; a notebook run out of order may need more, and a
cell that does not parse is skipped and said so rather than guessed at.

Each chosen cell says what it does outside the kernel (`effects.py`): runs commands, runs code
from elsewhere, reads files or the network, runs magics. A name it uses that another cell
imported (`sp` after `import subprocess as sp` in #1), or that is such a module in the kernel,
counts as its own use.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .effects import KINDS, Effect, of_import
from .names import CodeNames, code_names


@dataclass(frozen=True, kw_only=True)
class Cell:
    """One code cell as the plan reads it: its place, id and source."""

    index: int
    id: str
    source: str


@dataclass(frozen=True, kw_only=True)
class Step:
    """A cell the plan runs, and why: the needed names it makes, and what it reads outside."""

    cell: Cell
    makes: tuple[str, ...]
    io: tuple[Effect, ...] = ()
    """What it does outside the kernel."""

    def reaches(self) -> str:
        """`runs commands: !curl; reads files or the network: read_csv` ('' for none)."""
        kinds = {kind: [str(e) for e in self.io if e.kind == kind] for kind in KINDS}
        return "; ".join(f"{kind}: {', '.join(whats)}" for kind, whats in kinds.items() if whats)


@dataclass(frozen=True, kw_only=True)
class Plan:
    """The cells to run, in order; names no cell makes; cells that could not be read."""

    steps: tuple[Step, ...] = ()
    missing: tuple[str, ...] = ()
    """Needed names no cell makes (typed in a console, made by a deleted cell)."""
    unreadable: tuple[tuple[Cell, str], ...] = ()
    """Cells skipped because their source does not parse, with why."""

    def describe(self) -> str:
        """`#2 (makes df; reads files: read_csv), #4 (makes df)`; what is missing and skipped."""
        parts = []
        for step in self.steps:
            what = f"makes {', '.join(step.makes)}"
            if step.io:
                what += f"; {step.reaches()}"
            parts.append(f"#{step.cell.index + 1} ({what})")
        lines = ["runs " + ", ".join(parts) if parts else "runs no cell"]
        if self.missing:
            lines.append(f"no cell makes: {', '.join(self.missing)}")
        for cell, why in self.unreadable:
            lines.append(f"#{cell.index + 1} skipped: it does not parse ({why})")
        return "\n".join(lines)


def plan(
    cells: Sequence[Cell],
    names: Iterable[str],
    *,
    present: Iterable[str] = (),
    modules: Mapping[str, str] | None = None,
) -> Plan:
    """The cells that bring `names` back, given the names the kernel holds (`present`) and
    which of them are modules (`modules`: name to module name)."""
    have = set(present)
    needed = set(names)
    chosen: list[Step] = []
    unreadable: list[tuple[Cell, str]] = []
    outside = _imported_outside(cells, modules or {})
    for cell in reversed(cells):
        found = code_names(cell.source)
        if not found.parsed:
            unreadable.append((cell, found.why))
            continue
        makes = (found.binds | found.mutates) & needed
        if not makes:
            continue
        io = found.io + _used(found, outside)
        chosen.append(Step(cell=cell, makes=tuple(sorted(makes)), io=io))
        needed = (needed - found.binds) | _needs(found, have)
    return Plan(
        steps=tuple(reversed(chosen)),
        missing=tuple(sorted(needed - have)),
        unreadable=tuple(reversed(unreadable)),
    )


def _imported_outside(cells: Sequence[Cell], modules: Mapping[str, str]) -> dict[str, Effect]:
    """Names that reach outside when a cell uses them: what other cells imported under them
    (`sp (subprocess, imported in #1)`), and modules the kernel holds under them."""
    found: dict[str, Effect] = {}
    for name, module in modules.items():
        for effect in of_import(module)[:1]:
            found[name] = Effect(kind=effect.kind, what=f"{name} ({module}, in the kernel)")
    for cell in cells:
        for name, effect in code_names(cell.source).imports:
            what = f"{name} ({effect.what}, imported in #{cell.index + 1})"
            found[name] = Effect(kind=effect.kind, what=what)
    return found


def _used(found: CodeNames, outside: Mapping[str, Effect]) -> tuple[Effect, ...]:
    """What a cell reaches through names another cell imported (its own imports are said)."""
    own = {name for name, _ in found.imports} | {str(effect) for effect in found.io}
    return tuple(
        outside[name] for name in sorted(found.reads) if name in outside and name not in own
    )


def _needs(found: CodeNames, have: set[str]) -> set[str]:
    """What a chosen cell reads that the kernel does not hold (a mutated name is read)."""
    return {name for name in found.reads | found.mutates if name not in have}
