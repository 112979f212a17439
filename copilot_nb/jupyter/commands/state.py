"""`%copilot state` and `%copilot rebuild`: the kernel's state as the agent sees it, and the cells
that bring lost variables back.

`state` lists the user's variables (name, type, size), the names the conversation used that a
restart lost with what brings each back (a rebuild is suggested only for names a plan makes,
and a name only the agent's run_code made is said so), and how much a run may keep for Undo
(`--keep 512MB` changes it; `--keep 0` keeps nothing). `rebuild df model` shows the plan (which
cells, why, which read files or the network, the agent's earlier code whole) and runs it as
the agent's `rebuild_names` does, except that the agent's code asks first, as run_code asks
(`block_runs.run_block`); `--plan` only shows it. `snapshot df model`
saves variables beside the notebook, `snapshot --load` loads them back (`saved_vars.py`: only
a file this user saved).
"""

from __future__ import annotations

import argparse
import re
from typing import Any

from IPython.core.error import UsageError

from ...agent.prompt.assembly import block_context
from ...agent.session import CopilotSession
from ...errors import CopilotError
from ...kernel_bridge import hidden_names, user_namespace
from ...text import counted, human_bytes
from ...tools.context import ToolContext
from ...tools.kernel.guard import let_go_note
from ...tools.kernel.rebuild import Cell, Way
from ...tools.kernel.saved_vars import load, path_for, save
from ...tools.kernel.state import KernelState, kernel_state
from ...tools.kernel.variables import memory_of, size_of, type_name, user_variables
from ...tools.notebook.rebuild_cells import (
    AgentCode,
    code_cells,
    lost_ways,
    planned,
    rebuild_plan,
)
from ...tools.registry import ToolOutput
from ...workspace.notebook_file import current_notebook_path
from .dispatch import as_usage_error

_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([KMG]?)B?", re.IGNORECASE)


def state_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--keep", metavar="SIZE", help="how much a run may keep for Undo: 512MB, 1GB, 0 (none)"
    )


async def state(session: CopilotSession, args: argparse.Namespace, settings: Any = None) -> None:
    """Print the variables as the agent sees them, what a restart lost (and what brings each
    back), and the keep limit."""
    kernel = kernel_state(session.shell)
    let_go = kernel.set_keep_limit(parse_size(args.keep)) if args.keep is not None else []
    namespace = user_namespace(session.shell)
    ctx = _context(session)
    cells: list[Cell] = []
    if kernel.lost(namespace):
        try:
            cells = (await code_cells(ctx, None))[1]
        except (CopilotError, OSError, ValueError):  # no notebook here: no cell makes them
            cells = []
    lines = state_lines(namespace, kernel, session.shell, lost_ways(ctx, cells))
    if let_go:
        lines.append(f"copilot: {let_go_note(let_go, kernel.held_limit)}")
    print("\n".join(lines))


def state_lines(
    namespace: dict[str, Any], kernel: KernelState, shell: Any = None, ways: list[Way] | None = None
) -> list[str]:
    """The lines `%copilot state` prints; `ways` says what brings each lost name back."""
    found = user_variables(namespace, hidden_names(shell))
    lines = [f"copilot: {counted(len(found), 'variable')} in the kernel"]
    for name, value in found:
        facts = [type_name(value), size_of(value), human_bytes(memory_of(value))]
        lines.append(f"  {name}: {', '.join(f for f in facts if f)}")
    lost = kernel.lost(namespace)
    if kernel.restarted:
        shown = ", ".join(lost) if lost else "none"
        lines.append(
            f"copilot: the kernel restarted since the conversation's last turn; lost: {shown}"
        )
        lines += rebuild_lines(ways or [])
    limit = kernel.keep_limit
    kept = f"up to {human_bytes(limit)}" if limit else "nothing (off)"
    held = sum(k.size for k in kernel.held)
    across = (
        f"; {human_bytes(held)} held across runs, at most {human_bytes(kernel.held_limit)} "
        "(the oldest are let go first)"
        if limit
        else ""
    )
    lines.append(f"copilot: a run keeps {kept} of the variables it changes, for Undo{across}")
    return lines


def rebuild_lines(ways: list[Way]) -> list[str]:
    """What to run to bring lost names back: only names a plan makes; the agent's code said
    as such (it asks first); what nothing makes, with why."""
    lines = []
    cells = [way.name for way in ways if way.possible and not way.agent]
    if cells:
        lines.append(f"copilot: %copilot rebuild {' '.join(cells)} runs the cells that make them")
    made = [way.name for way in ways if way.possible and way.by_agent]
    needing = [way.name for way in ways if way.possible and way.agent and not way.by_agent]
    if made or needing:
        parts = []
        if made:
            verb = "was" if len(made) == 1 else "were"
            parts.append(f"{', '.join(made)} {verb} made by the agent's run_code, not by a cell")
        if needing:
            verb = "needs" if len(needing) == 1 else "need"
            parts.append(f"{', '.join(needing)} {verb} what the agent's run_code made")
        lines.append(
            f"copilot: {'; '.join(parts)}: %copilot rebuild {' '.join(made + needing)} shows "
            "its code and asks before running it"
        )
    cannot = [way for way in ways if not way.possible and not way.unplanned]
    if cannot:
        said = ", ".join(f"{way.name} ({way.why_not()})" for way in cannot)
        lines.append(f"copilot: no rebuild brings back {said}: set them again yourself")
    return lines


def parse_size(text: str) -> int:
    """`512MB`, `1.5G`, `0` as bytes; UsageError for anything else."""
    match = _SIZE.fullmatch(text.strip())
    if match is None:
        raise UsageError(f"%copilot state --keep: {text!r} is not a size (e.g. 512MB, 1GB, 0)")
    scale = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}[match.group(2).upper()]
    return int(float(match.group(1)) * scale)


def rebuild_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("names", nargs="+", metavar="NAME", help="a variable to bring back")
    parser.add_argument("--plan", action="store_true", help="show the cells, run none")
    parser.add_argument("--notebook", help="the .ipynb to read (default: this kernel's)")


async def rebuild(session: CopilotSession, args: argparse.Namespace, settings: Any = None) -> None:
    """Show the plan that brings the names back, then run it (unless `--plan`); the agent's
    earlier code in it asks first, as run_code does."""
    ctx = _context(session)
    with as_usage_error("%copilot rebuild"):
        path, found = await planned(ctx, args.names, args.notebook)
    described = found.describe().replace("\n", "\ncopilot: ")
    print(f"copilot: to bring back {', '.join(args.names)} from {path}: {described}")
    for step in found.steps:
        if step.cell.agent:
            code = step.cell.source.rstrip().replace("\n", "\n    ")
            print(f"copilot: {step.cell.label}, the agent's code:\n    {code}")
    if args.plan or not found.steps:
        return
    with as_usage_error("%copilot rebuild"):
        result = await rebuild_plan(
            ctx, args.names, notebook=args.notebook, agent_code=_asking(session)
        )
    ran = result.content.splitlines()[found.describe().count("\n") + 1 :]  # after the plan
    print("\n".join(f"copilot: {line}" for line in ran))


def _asking(session: CopilotSession) -> AgentCode:
    """How the agent's earlier code runs for the user's command: as a code block's Run, the
    model's own run_code under the approval policy run_code has (asking in this cell), with
    the session's tool timeout."""
    from IPython.display import display

    from ...events import ToolFinished
    from ..approval_prompt import CellApprover
    from ..block_runs import block_call_id, run_block
    from ..live_channel import live_channel

    async def run(code: str, timeout: float) -> ToolOutput:
        shell = session.shell
        approver = CellApprover(
            shell, display=display, widgets_attached=live_channel(shell).attached
        )
        finished = None
        async for event in run_block(session, code, approver, call_id=block_call_id()):
            if isinstance(event, ToolFinished):
                finished = event
        if finished is None:  # pragma: no cover - a Run always ends with its result
            return ToolOutput(content="run_code: it did not run", is_error=True)
        summary = finished.summary if finished.ok else f"not run: {finished.content}"
        return ToolOutput(content=finished.content, is_error=not finished.ok, summary=summary)

    return run


def snapshot_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("names", nargs="*", metavar="NAME", help="a variable to save")
    parser.add_argument(
        "--load", action="store_true", help="load the saved variables (only a file you saved)"
    )


def snapshot(session: CopilotSession, args: argparse.Namespace, settings: Any = None) -> None:
    """Save variables beside the notebook, or load them back (`--load`)."""
    namespace = user_namespace(session.shell)
    notebook = current_notebook_path(namespace)
    if notebook is None:
        raise UsageError("%copilot snapshot: no notebook is known here to save beside")
    path = path_for(notebook)
    if args.load:
        with as_usage_error("%copilot snapshot --load"):
            try:
                found, values = load(path)
            except FileNotFoundError:
                raise UsageError(f"%copilot snapshot: no {path.name} beside the notebook") from None
        chosen = args.names or list(values)
        namespace.update({name: values[name] for name in chosen if name in values})
        back = [name for name in chosen if name in values]
        print(f"copilot: loaded {', '.join(back) or 'nothing'} from {path.name} ({found.at})")
        return
    if not args.names:
        raise UsageError("%copilot snapshot NAME [NAME...] saves; --load loads them back")
    with as_usage_error("%copilot snapshot"):
        saved = save(path, namespace, args.names)
    left = "; ".join(f"{name}: {why}" for name, why in saved.left.items())
    print(
        f"copilot: saved {', '.join(saved.names) or 'nothing'} to {path.name} (only you can "
        "load it)" + (f"; not saved: {left}" if left else "")
    )


def _context(session: CopilotSession) -> ToolContext:
    return block_context(session.workspace(), session.shell, session.live)
