"""rebuild_names: bring variables back by running only the notebook cells that make them.

The plan is `kernel/rebuild.py`'s, over the notebook's current code cells (the open notebook's,
unsaved edits included, else the file's). Each chosen cell runs through run_cell, so its outputs
go into the cell, its variables are kept for Undo and its names become the conversation's, as if
the model had called run_cell for each; the approval is the one run_cell has ("execute"), and it
shows the plan, with what each cell does outside the kernel said (runs commands, runs code
from elsewhere, reads files or the network, runs magics). A name no cell makes that the agent's
own run_code made in an earlier turn comes back by that code, run as run_code runs it; the
approval shows that code whole (the user's `%copilot rebuild` asks for it as run_code asks). The
tool is listed only while it is needed (`rebuild_toolset`).
"""

from __future__ import annotations

import types
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from ...errors import ToolError
from ...events import CallPreview
from ...text import counted
from ...workspace.notebook_file import cell_source
from ..context import ToolContext
from ..kernel.effects import KINDS
from ..kernel.rebuild import Cell, Plan, Way, advise, plan
from ..kernel.run_tools import to_the_end
from ..kernel.state import kernel_state
from ..kernel.tools import is_copilot_cell, run_code
from ..registry import ToolOutput, ToolSet, bound_tool
from ..views.static_view import inherits, instance_dict
from .run_cell import MAX_CELL_TIMEOUT, run_cell
from .store import open_notebook

MAX_NAMES = 50
"""Names one rebuild_names call brings back."""
MAX_ADVISED = 60
"""Lost names the context block says how to bring back (each is planned); the rest it counts."""
AgentCode = Callable[[str, float], Awaitable[ToolOutput]]
"""How a plan's step of the agent's earlier code runs: (code, timeout) to its result."""


def rebuild_toolset(ctx: ToolContext) -> ToolSet:
    """rebuild_names bound to a kernel's context: listed in every request while the kernel lacks
    names the conversation used (after a restart, when the context block names them), else
    waiting behind tool_search like the other rarely needed tools."""
    lost = kernel_state(ctx.shell).lost(ctx.namespace())
    return ToolSet(
        [
            bound_tool(
                rebuild_names,
                ctx,
                category="execute",
                describe=rebuild_preview,
                on_request=not lost,
            )
        ]
    )


async def code_cells(ctx: ToolContext, notebook: str | None) -> tuple[str, list[Cell]]:
    """(path, the notebook's code cells as the plan reads them), `%%copilot` cells left out."""
    opened = await open_notebook(ctx, notebook, for_edit=False)
    return opened.path, as_cells(opened.cells)


def as_cells(cells: Sequence[Any]) -> list[Cell]:
    """The code cells among nbformat cells (nodes or plain JSON), as the plan reads them."""
    return [
        Cell(index=index, id=str(cell.get("id", "")), source=cell_source(cell))
        for index, cell in enumerate(cells)
        if isinstance(cell, Mapping)
        and cell.get("cell_type") == "code"
        and not is_copilot_cell(cell_source(cell))
    ]


async def planned(ctx: ToolContext, names: Sequence[str], notebook: str | None) -> tuple[str, Plan]:
    """The notebook's path and the plan that brings `names` back in this kernel."""
    wanted = [name.strip() for name in names if isinstance(name, str) and name.strip()]
    if not wanted or len(wanted) > MAX_NAMES:
        raise ToolError(f"rebuild_names: give from 1 to {MAX_NAMES} variable names, e.g. ['df']")
    path, cells = await code_cells(ctx, notebook)
    namespace = ctx.namespace()
    runs = kernel_state(ctx.shell).runs
    modules = kernel_modules(namespace)
    return path, plan(cells, wanted, present=namespace, modules=modules, runs=runs)


def kernel_modules(namespace: Mapping[str, Any]) -> dict[str, str]:
    """The kernel's names that are modules, with the module each is (`sp`: `subprocess`)."""
    found = {}
    for name, value in list(namespace.items()):
        if type(name) is str and inherits(value, types.ModuleType):
            module = instance_dict(value) or {}
            if type(module.get("__name__")) is str:
                found[name] = module["__name__"]
    return found


async def rebuild_preview(ctx: ToolContext, arguments: Mapping[str, Any]) -> CallPreview | None:
    """What the approval shows: the cells and the agent's earlier code that will run, why each,
    and which read outside."""
    names, notebook = arguments.get("names"), arguments.get("notebook")
    if not isinstance(names, list) or not isinstance(notebook, (str, type(None))):
        return None
    path, found = await planned(ctx, names, notebook)
    outside = [step for step in found.steps if step.io]
    agent = sum(step.cell.agent for step in found.steps)
    summary = f"rebuild {', '.join(names)}: {counted(len(found.steps) - agent, 'cell')} of {path}"
    if agent:
        summary += f" and {counted(agent, 'run')} of the agent's earlier run_code"
    if outside:
        kinds = [kind for kind in KINDS if any(e.kind == kind for s in outside for e in s.io)]
        reach = "reaches" if len(outside) == 1 else "reach"
        summary += f"; {len(outside)} {reach} outside the kernel ({', '.join(kinds)})"
    text = [found.describe(), ""]
    for step in found.steps:
        text += [f"# --- {step.cell.label}", step.cell.source.rstrip(), ""]
    return CallPreview(summary=summary, text="\n".join(text).rstrip())


async def rebuild_names(
    ctx: ToolContext, names: list[str], notebook: str | None = None, timeout: float = 120
) -> ToolOutput:
    """Bring variables back (after a kernel restart, or ones that were deleted) by running only
    the notebook's cells that make them, in notebook order, not the whole notebook. Use it
    before working with a variable the context says a restart lost.

    The cells are found by reading their code (what each defines and reads); each runs as
    run_cell runs it, its outputs going into the cell. A variable no cell makes that your own
    run_code made in an earlier turn comes back by running that code again. It stops at the
    first step that fails.

    Args:
        names: The variables to bring back, e.g. ["df", "model"].
        notebook: A .ipynb path; defaults to this kernel's notebook.
        timeout: Seconds each cell may run (at most 600).
    """
    return await rebuild_plan(ctx, names, notebook=notebook, timeout=timeout)


async def rebuild_plan(
    ctx: ToolContext,
    names: list[str],
    *,
    notebook: str | None = None,
    timeout: float = 120,
    agent_code: AgentCode | None = None,
) -> ToolOutput:
    """Run the plan that brings `names` back: cells through run_cell, the agent's earlier code
    through `agent_code` (else run_code itself, under the approval the rebuild had)."""
    if not 0 < timeout <= MAX_CELL_TIMEOUT:
        raise ToolError(
            f"rebuild_names: timeout must be more than 0 and at most {MAX_CELL_TIMEOUT:g}"
        )
    path, found = await planned(ctx, names, notebook)
    lines = [f"plan for {', '.join(names)} in {path}: {found.describe()}"]
    if not found.steps:
        return ToolOutput(content="\n".join(lines), is_error=True, summary="no cell makes them")
    run_agent = agent_code or (lambda source, seconds: run_code(ctx, source, timeout=seconds))
    for step in found.steps:
        with to_the_end():  # each step ends before the next starts
            if step.cell.agent:
                ran = await run_agent(step.cell.source, timeout)
            else:
                ran = await run_cell(ctx, step.cell.id, timeout=timeout, notebook=notebook)
        lines.append(f"{step.cell.label}: {ran.summary or 'ran'}")
        if ran.is_error:
            lines.append(f"stopped: {step.cell.label} failed\n{ran.content}")
            return ToolOutput(content="\n".join(lines), is_error=True, summary="a step failed")
    namespace = ctx.namespace()
    back = [name for name in names if name in namespace]
    gone = [name for name in names if name not in namespace]
    lines.append(
        f"back: {', '.join(back) or 'none'}"
        + (f"; still missing: {', '.join(gone)}" if gone else "")
    )
    summary = f"ran {counted(len(found.steps), 'step')}; back: {', '.join(back) or 'none'}"
    return ToolOutput(content="\n".join(lines), is_error=bool(gone), summary=summary)


def restart_note(ctx: ToolContext, cells: Sequence[Any]) -> tuple[str, list[str]]:
    """After a restart: the context block's head line and, for each name the conversation used
    that the fresh kernel lacks, what brings it back from the notebook's `cells` (nbformat
    JSON): `df (#2, #4)`, the agent's earlier code, or nothing; ('', []) otherwise."""
    ways = lost_ways(ctx, as_cells(cells), limit=MAX_ADVISED)
    if not ways:
        return "", []
    head = (
        "The kernel is fresh: it restarted since this conversation's earlier turns. Names they "
        "used that no longer exist (do not use one before it exists again, and say so first; "
        "rebuild_names runs only the cells that make them):"
    )
    return head, [way.name if way.unplanned else f"{way.name} ({_how(way)})" for way in ways]


def lost_ways(ctx: ToolContext, cells: Sequence[Cell], *, limit: int | None = None) -> list[Way]:
    """For each name a restart lost, what brings it back (the first `limit` planned; the rest
    `unplanned`, named only); [] without a restart."""
    state = kernel_state(ctx.shell)
    namespace = ctx.namespace()
    lost = state.lost(namespace)
    if not lost:
        return []
    shown = lost if limit is None else lost[:limit]
    ways = advise(
        cells, shown, present=namespace, modules=kernel_modules(namespace), runs=state.runs
    )
    return ways + [Way(name=name, unplanned=True) for name in lost[len(shown) :]]


def _how(way: Way) -> str:
    """What brings one lost name back, as the model reads it."""
    if not way.possible:
        return way.why_not()
    cells = [maker.label for maker in way.makers if not maker.agent]
    if not way.agent:
        return ", ".join(cells)
    again = "rebuild_names runs that code again"
    if way.by_agent:
        then = f", then {', '.join(cells)}" if cells else ""
        return f"your run_code of an earlier turn made it, not a cell{then}; {again}"
    return f"{', '.join(cells)}, after what your run_code of an earlier turn made; {again}"
