"""`%copilot <command>`: the line magic's own subcommands, one small function each.

Each takes the session, its parsed arguments (`table.py` holds every command's parser) and the
settings (the magics' traits, the one writer of the session's settings) and prints or displays
its answer; user mistakes raise IPython's UsageError, so they show without a traceback.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from IPython.core.error import UsageError

from ...agent.session import CopilotSession
from ...errors import CopilotError
from ...kernel_bridge import user_namespace
from ...text import counted, first_line
from ...tools import Tool, tool
from ...workspace.restore import Action
from ..safe_html import Rendered, table_html
from . import subcommand


class Settings(Protocol):
    """Where a command changes a setting: the `CopilotMagics` traits, which update the session."""

    model: str


@contextmanager
def as_usage_error(what: str) -> Iterator[None]:
    """A sign-in or provider problem is the user's to fix: show it without a traceback."""
    try:
        yield
    except CopilotError as exc:
        raise UsageError(f"{what}: {exc}") from None


def status(session: CopilotSession, args: argparse.Namespace, settings: Settings) -> None:
    agent = session.agent
    requests = sum(1 for m in agent.messages if m.role == "user") if agent else 0
    print(
        f"copilot: model {session.current_model_spec()}; workspace {os.getcwd()}; "
        f"{counted(requests, 'request')} in this conversation"
    )
    from ...agent.modes.review import edits_line
    from .policy import status_line
    from .serve import running

    print(edits_line(session.approvals, session.live))
    print(status_line())
    if (server := running(session)) is not None:
        print(f"copilot: serving at {server.url} (%copilot serve stop stops it)")


def reset(session: CopilotSession, args: argparse.Namespace, settings: Settings) -> None:
    session.reset()
    print(
        "copilot: new conversation; the earlier ones stay saved "
        "(%copilot conversations lists them, %copilot resume ID takes one up again)"
    )


def model_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "name", nargs="?", help="provider:model, e.g. openai:gpt-4o (none: show the model)"
    )


def model(session: CopilotSession, args: argparse.Namespace, settings: Settings) -> None:
    if args.name:
        with as_usage_error("%copilot model"):
            use_model(session, settings, args.name)
    print(f"copilot: model {session.current_model_spec()}")


def use_model(session: CopilotSession, settings: Settings, spec: str) -> None:
    """Make `spec` the kernel's model: what `%copilot model SPEC` and the panel's model form
    both do. CopilotError when it cannot be used (checked now, not at the next request)."""
    session.model(spec)
    settings.model = spec


def login(session: CopilotSession, args: argparse.Namespace, settings: Settings) -> None:
    from .login import login as run_login

    with as_usage_error("%copilot login"):
        run_login()
    session.forget_models("copilot:")  # they may hold a token of another account


def models_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "provider", nargs="?", help="e.g. copilot, openai, ollama (default: the model's provider)"
    )


def models(session: CopilotSession, args: argparse.Namespace, settings: Settings) -> None:
    from .login import show_models

    with as_usage_error("%copilot models"):
        show_models(args.provider or session.current_model_spec())


def _names(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("names", nargs="+", metavar="NAME", help="a function in this kernel")


def list_tools(session: CopilotSession, args: argparse.Namespace, settings: Settings) -> None:
    """`%copilot tools [list]`: the agent's tools, as a table."""
    from IPython.display import display

    from ...workspace.workspace import Workspace

    listing = session.tool_listing(Workspace(os.getcwd()))
    display(render_tools(listing.tools, found=listing.found, waiting=listing.waiting))


def add_tools(session: CopilotSession, args: argparse.Namespace, settings: Settings) -> None:
    """`%copilot tools add NAME [NAME...]`: kernel functions become the agent's tools."""
    namespace = user_namespace(session.shell)
    for name in args.names:
        if name not in namespace:
            raise UsageError(f"%copilot tools add: no variable {name!r} in this kernel")
        value = namespace[name]
        with as_usage_error(f"%copilot tools add {name}"):
            session.add_tool(value if isinstance(value, Tool) else tool(value))
        print(f"copilot: tool {name!r} added")


def remove_tools(session: CopilotSession, args: argparse.Namespace, settings: Settings) -> None:
    """`%copilot tools remove NAME [NAME...]`: take back tools added with add."""
    for name in args.names:
        if not session.remove_tool(name):
            raise UsageError(f"%copilot tools remove: {name!r} was not added")
    print(f"copilot: removed {', '.join(args.names)}")


TOOLS_ACTIONS = (
    subcommand.Action(name="list", help="the agent's tools (the default)", run=list_tools),
    subcommand.Action(
        name="add",
        help="make kernel functions tools of the agent",
        run=add_tools,
        arguments=_names,
    ),
    subcommand.Action(
        name="remove", help="take back tools added with add", run=remove_tools, arguments=_names
    ),
)
"""`%copilot tools`' sub-actions."""


FOUND = "found through tool_search: listed for this conversation"
WAITING = "listed once tool_search finds it"


def render_tools(
    toolset: Iterable[Tool], *, found: Iterable[str] = (), waiting: Iterable[str] = ()
) -> Rendered:
    """`%copilot tools`: name, approval category and first line of each tool, as a safe table;
    where some tools wait for `tool_search`, a column says when each is listed."""
    found, waiting = set(found), set(waiting)
    rows: list[tuple[str, ...]] = [
        (item.name, item.category, first_line(item.description or "")) for item in toolset
    ]
    head: tuple[str, ...] = ("tool", "approval", "what it does")
    if found or waiting:
        head += ("listed",)
        when = {**dict.fromkeys(found, FOUND), **dict.fromkeys(waiting, WAITING)}
        rows = [(*row, when.get(row[0], "always")) for row in rows]
    plain = "\n".join(f"{row[0]:<18} {row[1]:<11} {'  '.join(row[2:])}" for row in rows)
    return Rendered(table_html(head, rows), plain)


def undo_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--force", action="store_true", help="restore even what was changed since the turn"
    )


def undo(session: CopilotSession, args: argparse.Namespace, settings: Settings) -> None:
    from IPython.display import display

    from ..live_channel import live_channel
    from ..reports import render_undo

    workspace = session.workspace()
    channel = live_channel(session.shell) if session.shell is not None else None

    def in_open_notebook(notebook: str, changes: list[dict[str, Any]]) -> tuple[Action, str]:
        assert channel is not None
        return channel.take_back(workspace.root / notebook, changes)

    with as_usage_error("%copilot undo"):
        restored = workspace.undo(force=args.force, cells=in_open_notebook if channel else None)
    display(render_undo(restored))


def diff(session: CopilotSession, args: argparse.Namespace, settings: Settings) -> None:
    from IPython.display import display

    from ..reports import render_diff

    label, changes = session.workspace().checkpoints.last_diff()
    display(render_diff(changes, label=label))


def history(session: CopilotSession, args: argparse.Namespace, settings: Settings) -> None:
    from IPython.display import display

    from ..reports import render_history

    if session.agent is None and session.saved.pending is not None:
        with as_usage_error("%copilot history"):
            session.agent_for(session.model())  # the resumed conversation, as it will be sent
    if session.agent is None:
        print("copilot: no conversation yet")
        return
    display(render_history(session.agent))


def agents(session: CopilotSession, args: argparse.Namespace, settings: Settings) -> None:
    """`%copilot agents`: the subagents `delegate` can start (built in, and the workspace's)."""
    from IPython.display import display

    from ...agent.subagents import AGENTS_DIR, agent_definitions
    from ..safe_html import table_html

    found = agent_definitions(session.workspace())
    rows = [
        (
            d.name,
            d.source,
            ", ".join(d.tools) if d.tools is not None else "read-only tools",
            d.model or "the conversation's",
            first_line(d.description),
        )
        for d in found.values()
    ]
    head = ("agent", "from", "tools", "model", "what it is for")
    plain = "\n".join(f"{r[0]:<12} {r[1]:<28} {r[2]}; model: {r[3]}; {r[4]}" for r in rows)
    note = f"add your own as {AGENTS_DIR}/NAME.md (front matter: description, tools, model)"
    display(Rendered(table_html(head, rows) + f"<p>{note}</p>", f"{plain}\n{note}"))
