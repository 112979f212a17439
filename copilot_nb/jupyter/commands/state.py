"""`%copilot state` and `%copilot rebuild`: the kernel's state as the agent sees it, and the cells
that bring lost variables back.

`state` lists the user's variables (name, type, size), the names the conversation used that a
restart lost, and how much a run may keep for Undo (`--keep 512MB` changes it; `--keep 0` keeps
nothing). `rebuild df model` shows the plan (which cells, why, which read files or the network)
and runs it as the agent's `rebuild_names` does; `--plan` only shows it. `snapshot df model`
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
from ...kernel_bridge import hidden_names, user_namespace
from ...text import human_bytes
from ...tools.context import ToolContext
from ...tools.kernel.guard import let_go_note
from ...tools.kernel.saved_vars import load, path_for, save
from ...tools.kernel.state import kernel_state
from ...tools.kernel.variables import memory_of, size_of, type_name, user_variables
from ...tools.notebook.rebuild_cells import planned, rebuild_names
from ...workspace.notebook_file import current_notebook_path
from .dispatch import as_usage_error

_SIZE = re.compile(r"(\d+(?:\.\d+)?)\s*([KMG]?)B?", re.IGNORECASE)


def state_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--keep", metavar="SIZE", help="how much a run may keep for Undo: 512MB, 1GB, 0 (none)"
    )


def state(session: CopilotSession, args: argparse.Namespace, settings: Any = None) -> None:
    """Print the variables as the agent sees them, what a restart lost, and the keep limit."""
    kernel = kernel_state(session.shell)
    let_go = kernel.set_keep_limit(parse_size(args.keep)) if args.keep is not None else []
    namespace = user_namespace(session.shell)
    lines = state_lines(namespace, kernel, session.shell)
    if let_go:
        lines.append(f"copilot: {let_go_note(let_go, kernel.held_limit)}")
    print("\n".join(lines))


def state_lines(namespace: dict[str, Any], kernel: Any, shell: Any = None) -> list[str]:
    """The lines `%copilot state` prints."""
    found = user_variables(namespace, hidden_names(shell))
    lines = [f"copilot: {len(found)} variable(s) in the kernel"]
    for name, value in found:
        facts = [type_name(value), size_of(value), human_bytes(memory_of(value))]
        lines.append(f"  {name}: {', '.join(f for f in facts if f)}")
    lost = kernel.lost(namespace)
    if kernel.restarted:
        shown = ", ".join(lost) if lost else "none"
        lines.append(
            f"copilot: the kernel restarted since the conversation's last turn; lost: {shown}"
        )
        if lost:
            lines.append(
                f"copilot: %copilot rebuild {' '.join(lost)} runs the cells that make them"
            )
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
    """Show the plan that brings the names back, then run it (unless `--plan`)."""
    ctx = _context(session)
    with as_usage_error("%copilot rebuild"):
        path, found = await planned(ctx, args.names, args.notebook)
    print(f"copilot: to bring back {', '.join(args.names)} from {path}: {found.describe()}")
    if args.plan or not found.steps:
        return
    with as_usage_error("%copilot rebuild"):
        result = await rebuild_names(ctx, args.names, notebook=args.notebook)
    print("copilot: " + result.content.split("\n", 1)[-1].replace("\n", "\ncopilot: "))


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
