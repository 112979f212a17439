"""What a `%copilot` subcommand is: a name, its own argparse parser and a handler.

The table of them (`table.py`) is the one list of commands: dispatch, `--help`, the
unknown-command message, tab completion and whether a command is awaited on the kernel's loop
all read it. A command's sub-actions (`mcp add`, `serve stop`, `cassette off`) are rows of their
own (`Action`): each is a sub-parser that names the handler it runs, so the parser decides what
runs and no handler reads its action back from the words. A parser never exits the kernel:
`--help` pages the help (as `%magic?` does) and runs nothing, and a mistake is IPython's
`UsageError`, shown without a traceback.
"""

from __future__ import annotations

import argparse
import inspect
import shlex
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, NoReturn

from IPython.core.error import UsageError

Handler = Callable[[Any, argparse.Namespace, Any], "Coroutine[Any, Any, None] | None"]
"""`(session, args, settings)`: a coroutine function when the command waits on the kernel's loop."""
HANDLER = "handler"
"""Where a parser puts the handler it chose (a sub-action's, or one an argument's value names)."""


def _no_arguments(parser: argparse.ArgumentParser) -> None:
    """A command that takes no words still has a parser: `--help`, and extra words are errors."""


class HelpShown(Exception):
    """`--help` was shown: the command does not run."""


class CommandParser(argparse.ArgumentParser):
    """argparse for a magic: help goes to IPython's pager, errors are UsageErrors, and an option
    is never abbreviated (`--for` is not `--force`)."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(**kwargs)

    def error(self, message: str) -> NoReturn:
        usage = " ".join(self.format_usage().split())
        raise UsageError(f"{self.prog}: {message}; {usage} (%{self.prog[1:]} --help explains)")

    def print_help(self, file: Any = None) -> None:
        from IPython.core import page

        page.page(self.format_help())

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        raise HelpShown  # argparse exits only after --help: the help is shown, nothing runs


@dataclass(frozen=True, kw_only=True)
class Action:
    """One sub-action of a command (`mcp add`): what it does in a line, its arguments, and what
    runs when the line names it."""

    name: str
    help: str
    run: Handler
    arguments: Callable[[argparse.ArgumentParser], None] = _no_arguments
    usage: str | None = None


@dataclass(frozen=True, kw_only=True)
class Subcommand:
    """One `%copilot NAME`: what it does in a line, its arguments, its sub-actions, and what
    runs when no sub-action is named."""

    name: str
    help: str
    run: Handler
    arguments: Callable[[argparse.ArgumentParser], None] = _no_arguments
    actions: tuple[Action, ...] = ()
    details: str = ""

    @property
    def awaited(self) -> bool:
        """A coroutine handler runs on the kernel's loop (a cell of just this line is awaited)."""
        handlers = (self.run, *(action.run for action in self.actions))
        return any(inspect.iscoroutinefunction(handler) for handler in handlers)

    def parser(self) -> CommandParser:
        parser = CommandParser(
            prog=f"%copilot {self.name}",
            description=self.help + (f"\n\n{self.details}" if self.details else ""),
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        parser.set_defaults(**{HANDLER: self.run})
        if self.actions:
            chosen = parser.add_subparsers(metavar="ACTION")
            for action in self.actions:
                sub = chosen.add_parser(action.name, help=action.help, usage=action.usage)
                action.arguments(sub)
                sub.set_defaults(**{HANDLER: action.run})
        self.arguments(parser)
        return parser


@dataclass(frozen=True, kw_only=True)
class Parsed:
    """A line read against the table: the command, the handler its parser chose and the
    arguments, not run yet."""

    command: Subcommand
    args: argparse.Namespace = field(default_factory=argparse.Namespace)

    @property
    def handler(self) -> Handler:
        """What runs: the sub-action the line names, else the command's own handler."""
        chosen: Handler = getattr(self.args, HANDLER, self.command.run)
        return chosen

    def call(self, session: Any, settings: Any) -> Coroutine[Any, Any, None] | None:
        """Run the command; an awaited one returns its coroutine for the caller to await."""
        return self.handler(session, self.args, settings)


def split(line: str) -> list[str]:
    """The words of a `%copilot` line, quoted as a shell quotes them."""
    try:
        return shlex.split(line)
    except ValueError as exc:
        raise UsageError(f"%copilot: {exc}") from None


def parse(table: Sequence[Subcommand], line: str) -> Parsed | None:
    """Read `%copilot LINE` (no words: the first command); None when only help was asked for."""
    words = split(line)
    if words[:1] in (["-h"], ["--help"]):
        from IPython.core import page

        page.page(overview(table))
        return None
    name, rest = (words[0], words[1:]) if words else (table[0].name, [])
    command = next((c for c in table if c.name == name), None)
    if command is None:
        raise UsageError(
            f"%copilot {name}: unknown command; use one of {', '.join(c.name for c in table)} "
            "(%copilot --help says what each does)"
        )
    try:
        return Parsed(command=command, args=command.parser().parse_args(rest))
    except HelpShown:
        return None


def overview(table: Sequence[Subcommand]) -> str:
    """`%copilot --help`: every command with its line."""
    width = max(len(c.name) for c in table)
    lines = [f"  {c.name:<{width}}  {c.help}" for c in table]
    return (
        "%copilot [COMMAND] [ARGS]: the copilot's commands (no command: "
        f"{table[0].name}); %copilot COMMAND --help explains one\n\n" + "\n".join(lines)
    )


def complete(table: Sequence[Subcommand], before_cursor: str) -> list[str]:
    """What the word at the cursor of `%copilot ...` can be: a command's name, then its
    sub-actions, the values a positional takes (`serve stop`) and its options."""
    words = before_cursor.split()[1:]  # the magic's own name first
    if before_cursor[-1:].isspace() or not before_cursor:
        words.append("")
    typed = words[-1] if words else ""
    if len(words) <= 1:
        offered = [c.name for c in table]
    elif (command := next((c for c in table if c.name == words[0]), None)) is None:
        return []
    else:
        parser: argparse.ArgumentParser = command.parser()
        for word in words[1:-1]:  # descend into a sub-action (`mcp add`, `tools remove`)
            parser = _actions(parser).get(word, parser)
        offered = [o for a in parser._actions for o in a.option_strings]
        if not typed.startswith("-"):
            values = [
                str(v) for a in parser._actions if not a.option_strings for v in a.choices or ()
            ]
            offered = [*dict.fromkeys([*_actions(parser), *values]), *offered]
    return [word for word in offered if word.startswith(typed)]


def _actions(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """A parser's sub-actions by name (`mcp`'s add, remove, ...), if it has any."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}
