"""The smallest ordered set of a notebook's cells that brings given names back. Pure.

After a restart the user wants `df` and `model` again, not the whole notebook re-run (the hour of
training in cell 9 makes a model nobody asked for). Reading the cells backwards from the last one
(`names.py` says what each binds, reads and mutates): a cell is needed when it makes a name
still needed; it then satisfies the names it binds outright, and needs what it reads (a cell
that mutates `df` reads it, so the cell that made `df` is needed too). A cell that reads a name
before it sets it (`df_clean["x"] = ...`, `x += 1`, `df = df.dropna()`) makes that name only
when an earlier cell (or the kernel) has it first: run alone it fails. Names the kernel holds
already need no cell. The chosen cells run in notebook order, which is the order a user
running the notebook top to bottom runs them; a notebook run out of order may need more, and a
cell that does not parse is skipped and said so rather than guessed at.

A name no cell makes may have been made by the agent's own run_code in an earlier turn (its
code is kept: `state.py`). Only then does that code join the plan, as a step of its own placed
after the last cell that makes or changes what it reads (the state it ran on), so cells after
it that use what it made can run; `advise` tells, for each name a restart lost, whether cells, the agent's code, or
nothing brings it back.

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
    """One code cell as the plan reads it: its place, id and source; or the agent's run_code of
    an earlier turn (`agent`), numbered among those runs."""

    index: int
    id: str
    source: str
    agent: bool = False

    @property
    def label(self) -> str:
        """`#3` for the notebook's third cell, `run_code 1` for the agent's first kept run."""
        return f"run_code {self.index + 1}" if self.agent else f"#{self.index + 1}"


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
    """Needed names no cell (nor kept run of the agent's) makes: typed in a console, made by a
    deleted cell, or set by a cell that reads it first with nothing making it before."""
    unreadable: tuple[tuple[Cell, str], ...] = ()
    """Cells skipped because their source does not parse, with why."""

    def describe(self) -> str:
        """`#2 (makes df; reads files: read_csv), #4 (makes df)`; which steps are the agent's
        code, what is missing and what was skipped."""
        parts = []
        for step in self.steps:
            what = f"makes {', '.join(step.makes)}"
            if step.io:
                what += f"; {step.reaches()}"
            parts.append(f"{step.cell.label} ({what})")
        lines = ["runs " + ", ".join(parts) if parts else "runs no cell"]
        agents = [step.cell.label for step in self.steps if step.cell.agent]
        if agents:
            lines.append(f"{', '.join(agents)}: the agent's run_code of earlier turns, not cells")
        if self.missing:
            lines.append(f"no cell makes: {', '.join(self.missing)}")
        for cell, why in self.unreadable:
            lines.append(f"{cell.label} skipped: it does not parse ({why})")
        return "\n".join(lines)


def plan(
    cells: Sequence[Cell],
    names: Iterable[str],
    *,
    present: Iterable[str] = (),
    modules: Mapping[str, str] | None = None,
    runs: Sequence[str] = (),
) -> Plan:
    """The cells that bring `names` back, given the names the kernel holds (`present`), which
    of them are modules (`modules`: name to module name) and the agent's kept run_code
    (`runs`, oldest first), used only for what no cell makes."""
    have, wanted = set(present), list(names)
    found = _plan(cells, wanted, have, modules or {})
    agent = [Cell(index=i, id="", source=code, agent=True) for i, code in enumerate(runs)]
    chosen: list[Cell] = []
    while found.missing:
        missing = set(found.missing)
        more = [r for r in agent if r not in chosen and code_names(r.source).changes & missing]
        if not more:
            break
        chosen += more
        ordered = sorted(chosen, key=lambda run: run.index)
        found = _plan(_placed(cells, ordered), wanted, have, modules or {})
    return found


def _plan(
    cells: Sequence[Cell], names: Iterable[str], have: set[str], modules: Mapping[str, str]
) -> Plan:
    """The backward reading over `cells` (the agent's runs among them, placed)."""
    needed = set(names)
    chosen: list[Step] = []
    unreadable: list[tuple[Cell, str]] = []
    outside = _imported_outside(cells, modules)
    makers = _makers(cells, have)
    for cell, can_make in zip(reversed(cells), reversed(makers), strict=True):
        found = code_names(cell.source)
        if not found.parsed:
            unreadable.append((cell, found.why))
            continue
        makes = can_make & needed
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


def _makers(cells: Sequence[Cell], have: set[str]) -> list[frozenset[str]]:
    """What each cell can make, in order: what it binds before reading, and what it reads
    first (`x += 1`, `df["y"] = ...`) only when the kernel or an earlier cell has it."""
    exists = set(have)
    makers: list[frozenset[str]] = []
    for cell in cells:
        found = code_names(cell.source)
        if not found.parsed:
            makers.append(frozenset())
            continue
        fresh = found.binds - found.reads
        again = found.changes & found.reads & exists
        makers.append(frozenset(fresh | (again - found.deletes)))
        exists |= fresh
    return makers


def _placed(cells: Sequence[Cell], runs: Sequence[Cell]) -> list[Cell]:
    """The cells with the agent's runs among them: each run after the last cell that makes or
    changes a name it reads (the state it ran on), and after the earlier runs it reads from."""
    changed_at: dict[str, int] = {}
    for position, cell in enumerate(cells):
        for name in code_names(cell.source).changes:
            changed_at[name] = position
    after: dict[int, list[Cell]] = {}
    made_at: dict[str, int] = {}
    for run in runs:
        found = code_names(run.source)
        inputs = [changed_at.get(n, -1) for n in found.reads]
        inputs += [made_at.get(n, -1) for n in found.reads]
        position = max([-1, *inputs])
        after.setdefault(position, []).append(run)
        for name in found.changes:
            made_at[name] = max(made_at.get(name, -1), position)
    merged = list(after.get(-1, []))
    for position, cell in enumerate(cells):
        merged += [cell, *after.get(position, [])]
    return merged


@dataclass(frozen=True, kw_only=True)
class Way:
    """How one lost name comes back: the steps of its plan that make it, whether that plan
    runs the agent's earlier code, and what it cannot make (nothing: it can come back)."""

    name: str
    makers: tuple[Cell, ...] = ()
    """Its plan's steps that make it, in order."""
    agent: bool = False
    """Its plan runs the agent's earlier code."""
    by_agent: bool = False
    """That code makes the name itself (no cell does)."""
    missing: tuple[str, ...] = ()
    unplanned: bool = False
    """Not planned at all (past a caller's limit): nothing is said of it but its name."""

    @property
    def possible(self) -> bool:
        """Whether its plan makes it and everything that needs."""
        return not self.missing and not self.unplanned

    @property
    def labels(self) -> tuple[str, ...]:
        """`("#2", "#4")`, `("run_code 1", "#5")`."""
        return tuple(cell.label for cell in self.makers)

    def why_not(self) -> str:
        """Why no plan makes it: `no cell makes it`, `needs train, which no cell makes`."""
        others = [name for name in self.missing if name != self.name]
        return f"needs {', '.join(others)}, which no cell makes" if others else "no cell makes it"


def advise(
    cells: Sequence[Cell],
    names: Iterable[str],
    *,
    present: Iterable[str] = (),
    modules: Mapping[str, str] | None = None,
    runs: Sequence[str] = (),
) -> list[Way]:
    """For each name, its own plan's answer: so a rebuild is suggested only for a name a plan
    makes, and a name only the agent's code makes is said so."""
    have = list(present)
    ways = []
    for name in names:
        found = plan(cells, [name], present=have, modules=modules, runs=runs)
        makers = [step for step in found.steps if name in step.makes]
        ways.append(
            Way(
                name=name,
                makers=tuple(step.cell for step in makers),
                agent=any(step.cell.agent for step in found.steps),
                by_agent=any(step.cell.agent for step in makers),
                missing=found.missing,
            )
        )
    return ways


def _imported_outside(cells: Sequence[Cell], modules: Mapping[str, str]) -> dict[str, Effect]:
    """Names that reach outside when a cell uses them: what other cells imported under them
    (`sp (subprocess, imported in #1)`), and modules the kernel holds under them."""
    found: dict[str, Effect] = {}
    for name, module in modules.items():
        for effect in of_import(module)[:1]:
            found[name] = Effect(kind=effect.kind, what=f"{name} ({module}, in the kernel)")
    for cell in cells:
        for name, effect in code_names(cell.source).imports:
            what = f"{name} ({effect.what}, imported in {cell.label})"
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
