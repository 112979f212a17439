"""`%%copilot` and `%copilot`: the agent as IPython magics, and the traits that configure it.

A `%%copilot` cell is rewritten into `await <coroutine>` (`cell_transform.py`), so it
runs natively on the kernel's event loop (DESIGN.md facts 3-4): the cell stays busy until the
agent is done, yet the kernel still handles widget messages (Approve/Deny) and an interrupt
cancels the run. The same magic is registered as an ordinary cell magic too (for `%%copilot?`
help and `run_cell_magic` from code); that synchronous path runs the same coroutine through
`kernel_bridge.run_blocking`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from traitlets import Bool, Dict, Enum, Float, Integer, List, Unicode, default, observe

from ..agent.approvals.policy import DECISIONS, EDIT_DECISIONS, ApprovalPolicy
from ..agent.modes.names import MODES
from ..config import DEFAULT_MAX_ROUNDS, DEFAULT_RUN_WAIT, DEFAULT_TOOL_TIMEOUT
from ..errors import ConfigError
from ..kernel_bridge import run_blocking
from .live_channel import live_channel

if TYPE_CHECKING:
    from ..agent.session import CopilotSession
    from .cell_view import CellRenderer

SETTINGS = (
    "model",
    "mode",
    "cassette",
    "max_rounds",
    "tool_timeout",
    "approve_read",
    "approve_read_secret",
    "approve_edit",
    "approve_execute",
    "approve_external",
    "available_tools",
    "excluded_tools",
)
"""Traits that are session settings; `_sync` copies each to the session when it changes."""


@magics_class
class CopilotMagics(Magics):
    """The `copilot` magics; settings are traits, so `%config CopilotMagics.model = ...` works."""

    model = Unicode(
        "", help="Default model as provider:model (e.g. openai:gpt-4o); empty: COPILOT_NB_MODEL."
    ).tag(config=True)
    mode = Enum(
        MODES,
        "agent",
        help="How far a request goes: ask (read and answer only), plan (write a plan, run it "
        "once approved) or agent (do the work). A cell's --mode wins.",
    ).tag(config=True)
    max_rounds = Integer(DEFAULT_MAX_ROUNDS, help="Most model rounds in one request.").tag(
        config=True
    )
    tool_timeout = Float(
        DEFAULT_TOOL_TIMEOUT,
        min=0.0,
        help="Seconds one tool call may run before it is stopped; 0: no limit. run_code keeps "
        "its own timeout when that is longer.",
    ).tag(config=True)
    run_wait = Float(
        DEFAULT_RUN_WAIT,
        min=0.0,
        help="Seconds run_code and run_cell wait before a run still going returns its handle "
        "and goes on in the background (the agent follows it with wait_run); 0: each run "
        "blocks the turn on the kernel's thread until it ends.",
    ).tag(config=True)
    approve_read = Enum(DECISIONS, "allow", help="Reading files, cells, variables.").tag(
        config=True
    )
    approve_read_secret = Enum(
        DECISIONS, "ask", help="Reading secrets: .env, keys, credentials, masked variables."
    ).tag(config=True)
    approve_edit = Enum(
        EDIT_DECISIONS,
        "review",
        help="Changing files and cells. review: in a notebook open in JupyterLab or Notebook 7, "
        "changes apply at once and wait there for Keep or Undo; elsewhere they ask.",
    ).tag(config=True)
    approve_execute = Enum(DECISIONS, "ask", help="Running code in the kernel.").tag(config=True)
    approve_external = Enum(
        DECISIONS,
        "ask",
        help="Calling MCP servers' tools; approving one call trusts its server until the "
        "server's command or tools change.",
    ).tag(config=True)
    approval_prompt = Enum(
        ("auto", "widget", "input"), "auto", help="How to ask: buttons, input(), or auto."
    ).tag(config=True)
    available_tools = List(
        Unicode(), default_value=None, allow_none=True, help="If set, only these tools."
    ).tag(config=True)
    excluded_tools = List(Unicode(), help="Tools the agent may not use.").tag(config=True)
    completion_model = Unicode(
        "",
        help="The model of inline completions as provider:model (a fill-in-the-middle one such "
        "as ollama:qwen2.5-coder:1.5b, mistral:codestral-latest, copilot:copilot-codex); "
        "empty: the kernel's model.",
    ).tag(config=True)
    resume = Bool(
        True,
        help="At %load_ext, take up the notebook's saved conversation (name.copilot-chat.jsonl).",
    ).tag(config=True)
    prices = Dict(
        help="Dollars per million tokens by model, for %copilot usage: "
        "{'gpt-4o': {'input': 2.5, 'output': 10, 'cached': 1.25}}; no price, no cost shown.",
    ).tag(config=True)
    cassette = Enum(
        ("", "record", "replay", "auto"),
        "",
        help="Record or replay every request with the cassette beside the notebook "
        "(name.copilot.jsonl); auto replays what is recorded and records the rest. "
        "Default: COPILOT_NB_CASSETTE.",
    ).tag(config=True)

    @default("cassette")
    def _cassette_default(self) -> str:
        from ..models.cassettes.cassette import mode_from_environment

        return mode_from_environment() or ""

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        self._session: CopilotSession | None = None
        super().__init__(shell=shell, **kwargs)

    @property
    def session(self) -> CopilotSession:
        """The kernel's conversation, built on first use: the agent, its tools and the models
        load then, not at `%load_ext`."""
        if self._session is None:
            from ..agent.session import CopilotSession

            self._session = CopilotSession(self.shell)
            self._session.live = live_channel(self.shell)
            for name in SETTINGS:
                self._sync(name)
            from .run_view import watch_runs

            watch_runs(self.shell)  # a run going on shows in the cell that started it
        return self._session

    @observe("run_wait")
    def _run_wait_changed(self, change: Any) -> None:
        from ..tools.kernel.runs import runs_of  # here: %load_ext stays light

        runs_of(self.shell).wait_seconds = change["new"]

    @observe(*SETTINGS)
    def _settings_changed(self, change: Any) -> None:
        if self._session is not None:
            self._sync(change["name"])

    def _sync(self, name: str) -> None:
        """The one writer of the session's settings: each trait, when it changes, to its own."""
        session = self._session
        assert session is not None
        if name == "model":
            session.model_spec = self.model
        elif name == "mode":
            session.mode = self.mode
        elif name == "cassette":
            session.cassette_mode = self.cassette or None  # type: ignore[assignment]
        elif name == "max_rounds":
            session.max_rounds = self.max_rounds
        elif name == "tool_timeout":
            session.tool_timeout = self.tool_timeout or None
        elif name.startswith("approve_"):
            session.approvals = ApprovalPolicy(
                read=self.approve_read,
                read_secret=self.approve_read_secret,
                edit=self.approve_edit,
                execute=self.approve_execute,
                external=self.approve_external,
            )
        elif name == "available_tools":
            session.available = self.available_tools
        elif name == "excluded_tools":
            session.excluded = list(self.excluded_tools)

    # --- the magic as IPython sees it ---------------------------------------------------------

    @magic_arguments()
    @argument(
        "--model", "-m", default=None, help="provider:model for this cell, e.g. openai:gpt-4o"
    )
    @argument(
        "--mode",
        choices=MODES,
        default=None,
        help="ask: read and answer only; plan: write a plan and wait for approval; "
        "agent: do the work (default: CopilotMagics.mode)",
    )
    @argument("--new", action="store_true", help="start a new conversation")
    @argument("--max-rounds", type=int, default=None, help="most model rounds for this request")
    @argument("--yes", "-y", action="store_true", help="approve every change in this cell")
    @argument("--read-only", action="store_true", help="refuse every change in this cell")
    @argument(
        "--review",
        action="store_true",
        help="apply this cell's edits at once in the open notebook and review them there",
    )
    @argument(
        "--fix",
        nargs="?",
        const="last",
        default=None,
        metavar="CELL",
        help="fix a failing cell: its source and error, read from the kernel and the notebook, "
        "go with the request as data (CELL: its id or #N; none: the last cell that failed)",
    )
    @argument(
        "--skill",
        action="append",
        default=[],
        metavar="NAME",
        help="load this skill into the request up front (repeat for more; %%copilot skills "
        "lists them)",
    )
    @argument(
        "command",
        nargs="*",
        help="line magic: a command and its arguments (%%copilot --help lists the commands, "
        "%%copilot COMMAND --help explains one)",
    )
    @line_cell_magic
    def copilot(self, line: str = "", cell: str | None = None) -> None:
        """Ask the agent: `%%copilot [--model M] [--mode ask|plan|agent] [--new]
        [--yes|--read-only|--review] [--fix [CELL]] [--skill NAME]` then the request.

        As a line magic: `%copilot [COMMAND] [ARGS]`, e.g. `%copilot model openai:gpt-4o`,
        `%copilot undo`, `%copilot mcp add NAME -- COMMAND`; `%copilot --help` lists every
        command and `%copilot COMMAND --help` explains one.
        """
        if cell is None:
            from .commands.table import parse_line

            parsed = parse_line(line)  # before the session: `--help` builds nothing
            pending = parsed.call(self.session, self) if parsed is not None else None
            if pending is not None:  # an awaited command, from code or a longer cell
                run_blocking(pending)
            return
        run_blocking(self.run_cell(line, cell))

    async def run_line(self, line: str) -> None:
        """`%copilot COMMAND ...` awaited on the kernel's loop: what a cell of just that line
        runs when the command waits (`mcp`, `serve`, `context`: `table.awaited`)."""
        from .commands.table import parse_line

        parsed = parse_line(line)
        pending = parsed.call(self.session, self) if parsed is not None else None
        if pending is not None:
            await pending

    # --- one request ------------------------------------------------------------------------

    async def run_cell(self, line: str, cell: str) -> None:
        """Run one `%%copilot` cell: a session turn, shown in the cell, asking through it."""
        args = parse_options(line)
        if args.command:
            raise UsageError(
                f"%%copilot takes options only on its first line, not {' '.join(args.command)!r}; "
                "write the request in the cell body"
            )
        if sum((args.yes, args.read_only, args.review)) > 1:
            raise UsageError(
                "%%copilot: --yes, --read-only and --review contradict each other; pick one"
            )
        prompt = shown = cell.strip()
        if args.fix is not None:  # the failing cell and its error go with the words, as data
            from .commands.fix import fix_prompt

            prompt, shown = await fix_prompt(self.session, args.fix, prompt)
        if not prompt:
            raise UsageError("%%copilot needs a request in the cell body, e.g. 'explain utils.py'")
        from .approval_prompt import CellApprover
        from .cell_view import STOPPED, CellRenderer, render_turn
        from .quiet_stop import TurnStopped, stop_ends_in_error
        from .turn_mirrors import mirrored

        policy = self.session.approvals
        if args.yes or args.read_only:  # this cell only: the session keeps its own
            policy = policy.approve_changes() if args.yes else policy.read_only()
        elif args.review:
            policy = replace(policy, edit="review")
        try:
            turn = self.session.turn(
                prompt,
                approver=CellApprover(
                    self.shell,
                    mode=self.approval_prompt,  # type: ignore[arg-type]
                    widgets_attached=live_channel(self.shell).attached,
                ),
                model=args.model,
                approvals=policy,
                max_rounds=args.max_rounds,
                new=args.new,
                mode=args.mode,
                skills=args.skill,
                stages=(mirrored(self.session, shown),),  # an open panel shows it too
            )
            renderer = CellRenderer(
                cost=_turn_cost(self, args.model), usage=self.session.saved.usage
            )
            stopped = await render_turn(turn, renderer)
        except ConfigError as exc:
            raise UsageError(str(exc)) from None
        finish_cell(self.session, renderer, args.model)
        if stopped and stop_ends_in_error(self.shell):
            raise TurnStopped(STOPPED)  # Run All stops here; IPython shows nothing for it


def _turn_cost(magics: CopilotMagics, model: str | None) -> Any:
    """Dollars for a turn's tokens at the user's price for the model (`prices`), or None."""
    from ..agent.conversations.usage import price_of

    prices = dict(magics.prices)
    name = str(getattr(magics.session.model(model), "name", "")) if prices else ""
    return lambda tokens: price_of(name, tokens, prices) if prices else None


CopilotMagics.copilot.parser.allow_abbrev = False
"""`--mo` is not `--model`: argparse would read a prefix of one option as that option, so a
mistyped `--mode plan` would silently ask a model named "plan"."""


def parse_options(line: str) -> Any:
    """The options of a `%%copilot` line; an unknown or shortened option is a UsageError that
    names the options there are."""
    try:
        return parse_argstring(CopilotMagics.copilot, line)
    except UsageError as exc:
        message = str(exc)
        if "unrecognized arguments" in message:
            known = (
                "--model, --mode, --new, --max-rounds, --yes, --read-only, --review, --fix, --skill"
            )
            raise UsageError(
                f"%%copilot: {message}; the options are {known} (written in full: options "
                "are never abbreviated)"
            ) from None
        raise UsageError(f"%%copilot: {message}") from None


def finish_cell(session: CopilotSession, renderer: CellRenderer, model: str | None) -> None:
    """Put the turn's provenance on the cell's output; a replay that diverged fails the cell."""
    from ..models.cassettes.cassette import active_cassette

    chosen = session.model(model)
    record: dict[str, Any] = {
        "model": chosen.name,
        "provider": chosen.provider,
    }
    cassette = active_cassette()
    if cassette is not None:
        record["cassette"] = {"file": cassette.path.name, "entries": list(cassette.used)}
    renderer.finish(record)
    if cassette is not None and cassette.mismatch:
        raise UsageError(cassette.mismatch)
