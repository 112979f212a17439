"""The smallest ordered set of a notebook's cells that brings given names back. Pure.

After a restart the user wants `df` and `model` again, not the whole notebook re-run (the hour of
training in cell 9 makes a model nobody asked for). Reading the cells backwards from the last one
(`names.py` says what each binds, reads and mutates): a cell is needed when it binds or mutates a
name still needed; it then satisfies the names it binds outright, and needs what it reads (a
cell that mutates `df` reads it, so the cell that made `df` is needed too). Names the kernel
holds already need no cell. The chosen cells run in notebook order, which is the order a user
running the notebook top to bottom runs them; a notebook run out of order may need more, and a
cell that does not parse is skipped and said so rather than guessed at.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

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
    io: tuple[str, ...] = ()


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
                what += f"; reads files or the network: {', '.join(step.io)}"
            parts.append(f"#{step.cell.index + 1} ({what})")
        lines = ["runs " + ", ".join(parts) if parts else "runs no cell"]
        if self.missing:
            lines.append(f"no cell makes: {', '.join(self.missing)}")
        for cell, why in self.unreadable:
            lines.append(f"#{cell.index + 1} skipped: it does not parse ({why})")
        return "\n".join(lines)


def plan(cells: Sequence[Cell], names: Iterable[str], *, present: Iterable[str] = ()) -> Plan:
    """The cells that bring `names` back, given the names the kernel holds (`present`)."""
    have = set(present)
    needed = set(names)
    chosen: list[Step] = []
    unreadable: list[tuple[Cell, str]] = []
    for cell in reversed(cells):
        found = code_names(cell.source)
        if not found.parsed:
            unreadable.append((cell, found.why))
            continue
        makes = (found.binds | found.mutates) & needed
        if not makes:
            continue
        chosen.append(Step(cell=cell, makes=tuple(sorted(makes)), io=found.io))
        needed = (needed - found.binds) | _needs(found, have)
    return Plan(
        steps=tuple(reversed(chosen)),
        missing=tuple(sorted(needed - have)),
        unreadable=tuple(reversed(unreadable)),
    )


def _needs(found: CodeNames, have: set[str]) -> set[str]:
    """What a chosen cell reads that the kernel does not hold (a mutated name is read)."""
    return {name for name in found.reads | found.mutates if name not in have}
