"""Every `%copilot` subcommand, in one table: adding a command is adding a row here.

Dispatch, each command's `--help`, `%copilot --help`, the unknown-command message, tab
completion and which commands are awaited on the kernel's loop (their handler is a coroutine
function) all read `TABLE`; the first row is what a bare `%copilot` runs. A command's
sub-actions (`mcp add`, `serve stop`) are rows of its own `actions`: the parser chooses their
handler.
"""

from __future__ import annotations

from . import cassette, context, conversations, dispatch, fix, mcp, policy, serve, state
from .skills import show_skills
from .subcommand import Parsed, Subcommand, complete, parse

TABLE: tuple[Subcommand, ...] = (
    Subcommand(
        name="status", help="the model, the workspace and what is in force", run=dispatch.status
    ),
    Subcommand(
        name="reset",
        help="start a new conversation (the earlier ones stay saved)",
        run=dispatch.reset,
    ),
    Subcommand(
        name="model",
        help="show or set the default model",
        run=dispatch.model,
        arguments=dispatch.model_arguments,
    ),
    Subcommand(
        name="models",
        help="the models a provider offers",
        run=dispatch.models,
        arguments=dispatch.models_arguments,
    ),
    Subcommand(name="login", help="sign in to GitHub Copilot", run=dispatch.login),
    Subcommand(
        name="tools",
        help="the agent's tools; add or remove kernel functions as tools",
        run=dispatch.list_tools,
        actions=dispatch.TOOLS_ACTIONS,
    ),
    Subcommand(
        name="undo",
        help="restore the files, cells and variables the last request changed (repeat: earlier)",
        run=dispatch.undo,
        arguments=dispatch.undo_arguments,
    ),
    Subcommand(name="diff", help="the files and cells the last request changed", run=dispatch.diff),
    Subcommand(
        name="fix",
        help="ask the agent to fix the cell that failed last (or one named: fix #4)",
        run=fix.fix,
        arguments=fix.arguments,
    ),
    Subcommand(
        name="history",
        help="the conversation, message by message, and its token budget",
        run=dispatch.history,
    ),
    Subcommand(
        name="context",
        help="the system prompt, instruction files and context block the next request carries",
        run=context.context,
    ),
    Subcommand(
        name="state",
        help="the kernel's variables as the agent sees them, what a restart lost",
        run=state.state,
        arguments=state.state_arguments,
    ),
    Subcommand(
        name="rebuild",
        help="run only the cells that bring variables back: rebuild df model",
        run=state.rebuild,
        arguments=state.rebuild_arguments,
    ),
    Subcommand(
        name="snapshot",
        help="save variables beside the notebook; --load brings them back",
        run=state.snapshot,
        arguments=state.snapshot_arguments,
    ),
    Subcommand(name="agents", help="the subagents delegate can start", run=dispatch.agents),
    Subcommand(
        name="skills",
        help="the skills found, where each came from, and whether the model is offered it",
        run=show_skills,
    ),
    Subcommand(
        name="mcp",
        help="the MCP servers: list, add, remove, restart, trust, forget",
        run=mcp.list_servers,
        arguments=mcp.arguments,
        actions=mcp.ACTIONS,
    ),
    Subcommand(
        name="serve",
        help="serve the kernel's model and tools: the OpenAI API under /v1, MCP at /mcp",
        run=serve.start,
        arguments=serve.arguments,
        actions=serve.ACTIONS,
    ),
    Subcommand(
        name="record",
        help="record the model's answers and your approvals to a cassette",
        run=cassette.record,
        arguments=cassette.record_arguments,
    ),
    Subcommand(
        name="replay",
        help="answer from a cassette, offline",
        run=cassette.replay,
        arguments=cassette.replay_arguments,
    ),
    Subcommand(
        name="cassette",
        help="the cassette playing, or off to stop it",
        run=cassette.status,
        actions=cassette.STATUS_ACTIONS,
    ),
    Subcommand(
        name="conversations",
        help="the notebook's saved conversations",
        run=conversations.conversations,
    ),
    Subcommand(
        name="resume",
        help="take a saved conversation up again",
        run=conversations.resume,
        arguments=conversations.resume_arguments,
    ),
    Subcommand(
        name="export",
        help="write a conversation as a readable Markdown transcript",
        run=conversations.export,
        arguments=conversations.export_arguments,
    ),
    Subcommand(
        name="usage",
        help="tokens, Copilot's premium requests and cost, per conversation and per day",
        run=conversations.usage,
    ),
    Subcommand(
        name="policy", help="the administrator's policy in force, file by file", run=policy.show
    ),
)


def parse_line(line: str) -> Parsed | None:
    """`%copilot LINE` read against the table (None: only help was shown)."""
    return parse(TABLE, line)


def awaited(name: str) -> bool:
    """Whether `%copilot NAME` waits on the kernel's loop (so a cell of just it is awaited)."""
    return any(c.name == name and c.awaited for c in TABLE)


def completions(before_cursor: str) -> list[str]:
    """What the tab offers after `%copilot ...`."""
    return complete(TABLE, before_cursor)
