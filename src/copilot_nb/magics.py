"""`%%copilot` and `%copilot`: the agent as IPython magics.

A `%%copilot` cell is rewritten by a cleanup input transformer into `await <coroutine>`, so it
runs natively on the kernel's event loop (DESIGN.md facts 3-4): the cell stays busy until the
agent is done, yet the kernel still handles widget messages and an interrupt cancels the run.
The same magic is registered as an ordinary cell magic too (for `%%copilot?` help and for
`run_cell_magic` from code); that synchronous path runs the same coroutine through `nest_asyncio`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine, Iterator
from contextlib import aclosing, contextmanager
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from traitlets import Integer, Unicode

from .agent import DEFAULT_MAX_ROUNDS, Agent
from .display import CellRenderer
from .errors import ConfigError, CopilotError
from .events import Failed
from .providers import Model, default_model_spec, resolve_model
from .providers.offline import OFFLINE_NOTE
from .sandbox import Workspace
from .tools import file_tools

CELL_PREFIX = "%%copilot"


@magics_class
class CopilotMagics(Magics):
    """The `copilot` magics; settings are traits, so `%config CopilotMagics.model = ...` works."""

    model = Unicode(
        "", help="Default model as provider:model (e.g. openai:gpt-4o); empty: COPILOT_NB_MODEL."
    ).tag(config=True)
    max_rounds = Integer(DEFAULT_MAX_ROUNDS, help="Most model rounds in one request.").tag(
        config=True
    )

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell=shell, **kwargs)
        self.agent: Agent | None = None
        self._models: dict[str, Model] = {}

    # --- the magic as IPython sees it ---------------------------------------------------------

    @magic_arguments()
    @argument(
        "--model", "-m", default=None, help="provider:model for this cell, e.g. openai:gpt-4o"
    )
    @argument("--new", action="store_true", help="start a new conversation")
    @argument("--max-rounds", type=int, default=None, help="most model rounds for this request")
    @argument(
        "command",
        nargs="*",
        help="line magic: status (default), reset, model [NAME], models [PROVIDER], login",
    )
    @line_cell_magic
    def copilot(self, line: str = "", cell: str | None = None) -> None:
        """Ask the agent: `%%copilot [--model M] [--new] [--max-rounds N]` then the request.

        As a line magic: `%copilot` shows the model and workspace, `%copilot reset` forgets the
        conversation, `%copilot model NAME` sets the default model, `%copilot models [PROVIDER]`
        lists a provider's models, `%copilot login` signs in to GitHub Copilot.
        """
        if cell is None:
            self._line(line)
            return
        _run_blocking(self.run_cell(line, cell))

    def _line(self, line: str) -> None:
        args = parse_argstring(self.copilot, line)
        command = args.command or ["status"]
        if command[0] == "reset":
            self.agent = None
            print("copilot: conversation cleared")
        elif command[0] == "model":
            if len(command) > 1:
                self.model = command[1]
                self._model(self.model)  # fail now, not at the next cell
            print(f"copilot: model {self._model_spec(None)}")
        elif command[0] == "status":
            rounds = sum(1 for m in self.agent.messages if m.role == "user") if self.agent else 0
            print(
                f"copilot: model {self._model_spec(None)}; workspace {os.getcwd()}; {rounds} request(s)"
            )
        elif command[0] == "login":
            from .copilot_commands import login

            with _as_usage_error("%copilot login"):
                login()
            # models made before the sign-in may hold a Copilot token of another account
            self._models = {k: m for k, m in self._models.items() if not k.startswith("copilot:")}
        elif command[0] == "models":
            from .copilot_commands import show_models

            with _as_usage_error("%copilot models"):
                show_models(command[1] if len(command) > 1 else self._model_spec(None))
        else:
            raise UsageError(
                f"%copilot {command[0]}: unknown command; use status, reset, model NAME, "
                "models [PROVIDER] or login"
            )

    # --- one request ------------------------------------------------------------------------

    async def run_cell(self, line: str, cell: str) -> None:
        """Run one `%%copilot` cell: parse options, stream the agent's turn into the output."""
        args = parse_argstring(self.copilot, line)
        if args.command:
            raise UsageError(
                f"%%copilot takes options only on its first line, not {' '.join(args.command)!r}; "
                "write the request in the cell body"
            )
        prompt = cell.strip()
        if not prompt:
            raise UsageError("%%copilot needs a request in the cell body, e.g. 'explain utils.py'")
        spec = self._model_spec(args.model)
        model = self._model(spec)
        agent = self._agent(model, new=args.new)
        renderer = CellRenderer()
        if getattr(model, "offline", False):
            renderer.notice(OFFLINE_NOTE)
        try:
            async with aclosing(
                agent.run(prompt, max_rounds=args.max_rounds or self.max_rounds)
            ) as events:
                async for event in events:
                    renderer.handle(event)
                    if isinstance(event, Failed):
                        break
        except (asyncio.CancelledError, KeyboardInterrupt):
            renderer.notice("_⏹ interrupted_")
            raise
        finally:
            renderer.flush()

    def _model_spec(self, override: str | None) -> str:
        return override or self.model or default_model_spec()

    def _model(self, spec: str) -> Model:
        if spec not in self._models:
            try:
                self._models[spec] = resolve_model(spec)
            except ConfigError as exc:
                raise UsageError(str(exc)) from None
        return self._models[spec]

    def _agent(self, model: Model, *, new: bool) -> Agent:
        """The kernel's one conversation, moved to the current directory and model."""
        cwd = os.path.realpath(os.getcwd())
        if self.agent is None or new:
            self.agent = Agent(model=model, workspace=cwd, max_rounds=self.max_rounds)
        elif str(self.agent.workspace.root) != cwd:
            workspace = Workspace(cwd)
            self.agent.workspace = workspace
            self.agent.tools = file_tools(workspace)
        self.agent.model = model
        return self.agent


def _run_blocking(coro: Coroutine[Any, Any, None]) -> None:
    """Run a coroutine to the end from synchronous code, even inside the kernel's running loop."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        loop = None
    if loop is None:
        asyncio.new_event_loop().run_until_complete(coro)
        return
    import nest_asyncio

    nest_asyncio.apply(loop)
    loop.run_until_complete(coro)


def transform_copilot_cell(lines: list[str]) -> list[str]:
    """Rewrite a `%%copilot` cell as `await` of its coroutine, so it runs on the kernel's loop."""
    if not lines or not lines[0].startswith(CELL_PREFIX):
        return lines
    first = lines[0][len(CELL_PREFIX) :]
    if first[:1] not in ("", " ", "\t", "\n") or first.strip().endswith("?"):
        return lines  # `%%copilotx`, or `%%copilot?` help: leave it to IPython
    body = "".join(lines[1:])
    return [
        f"await __import__('copilot_nb.magics').magics._run_cell({first.strip()!r}, {body!r})\n"
    ]


async def _run_cell(line: str, cell: str) -> None:
    """What a transformed `%%copilot` cell awaits."""
    from IPython import get_ipython

    shell = get_ipython()
    magics = shell.magics_manager.registry.get("CopilotMagics") if shell else None
    if magics is None:
        raise UsageError("copilot_nb is not loaded; run %load_ext copilot_nb first")
    await magics.run_cell(line, cell)


def load_ipython_extension(shell: Any) -> None:
    """`%load_ext copilot_nb`: register the magics and the cell transformer."""
    shell.register_magics(CopilotMagics)
    if transform_copilot_cell not in shell.input_transformers_cleanup:
        shell.input_transformers_cleanup.append(transform_copilot_cell)


def unload_ipython_extension(shell: Any) -> None:
    """`%unload_ext copilot_nb`: remove the cell transformer (IPython keeps magics registered)."""
    if transform_copilot_cell in shell.input_transformers_cleanup:
        shell.input_transformers_cleanup.remove(transform_copilot_cell)


@contextmanager
def _as_usage_error(what: str) -> Iterator[None]:
    """A sign-in or provider problem is the user's to fix: show it without a traceback."""
    try:
        yield
    except CopilotError as exc:
        raise UsageError(f"{what}: {exc}") from None
