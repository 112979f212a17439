"""`%copilot record`, `%copilot replay` and `%copilot cassette`: a notebook's model traffic on tape.

`record [PATH]` starts a new cassette (by default beside the notebook: `name.copilot.jsonl`),
`replay [PATH] [--auto]` plays one back (`--auto` records what comes after its end), and
`cassette [off]` says what is playing or stops it. Replaying switches to the model the cassette
was recorded with, so a notebook replays the same whatever model the reader has configured.
`COPILOT_NB_CASSETTE=record|replay|auto` overrides every cell's mode, and
`COPILOT_NB_CASSETTE_NOTE` is written in a new recording's header (what it was recorded with).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError

from ...agent.session import CopilotSession
from ...errors import ConfigError
from ...kernel_bridge import user_namespace
from ...models.cassettes.cassette import (
    Cassette,
    CassetteMismatch,
    Header,
    Mode,
    activate,
    active_cassette,
    default_path,
    mode_from_environment,
)
from ...workspace.notebook_file import current_notebook_path
from .cassette_notice import replay_notice
from .subcommand import HANDLER, Action


def cassette_path(session: CopilotSession, named: str | None, command: str) -> Path:
    """The cassette a command names, else the one beside the notebook this kernel runs."""
    if named:
        return Path(os.path.abspath(os.path.expanduser(named)))
    notebook = current_notebook_path(user_namespace(session.shell))
    if notebook is None:
        raise UsageError(
            f"%copilot {command}: this kernel does not know its notebook's name; name the "
            f"cassette, e.g. %copilot {command} analysis.copilot.jsonl"
        )
    return default_path(os.path.abspath(notebook))


_switched: dict[Cassette, str] = {}
"""The model setting each replaying cassette replaced, put back when it stops."""


class _PathOrOff(argparse.Action):
    """A cassette's path, or `off`: then the command stops the cassette (`record off`)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        if values == "off":
            setattr(namespace, HANDLER, off)
        setattr(namespace, self.dest, values)


def _path_argument(parser: argparse.ArgumentParser, verb: str) -> None:
    parser.add_argument(
        "path",
        nargs="?",
        action=_PathOrOff,
        help=f"the cassette to {verb} (default: name.copilot.jsonl beside the notebook); off stops",
    )


def record_arguments(parser: argparse.ArgumentParser) -> None:
    _path_argument(parser, "write")


def record(session: CopilotSession, args: argparse.Namespace, settings: Any) -> None:
    start(session, cassette_path(session, args.path, "record"), "record", settings)


def replay_arguments(parser: argparse.ArgumentParser) -> None:
    _path_argument(parser, "play")
    parser.add_argument(
        "--auto", action="store_true", help="record what comes after the cassette's end"
    )
    parser.add_argument(
        "--trust",
        action="store_true",
        help="replay the approvals of a cassette you did not record yourself",
    )


def replay(session: CopilotSession, args: argparse.Namespace, settings: Any) -> None:
    mode: Mode = "auto" if args.auto else "replay"
    path = cassette_path(session, args.path, "replay")
    start(session, path, mode, settings, trust=args.trust)


def start(
    session: CopilotSession, path: Path, mode: Mode, settings: Any, *, trust: bool = False
) -> None:
    """Open the cassette in `mode` (or the environment's), make it the kernel's, say so."""
    mode = mode_from_environment() or mode  # the environment decides for every cell
    if mode == "replay" and not path.exists():
        raise UsageError(f"%copilot replay: no cassette at {path}; record one first")
    header = Header(
        model=session.current_model_spec(), note=os.environ.get("COPILOT_NB_CASSETTE_NOTE", "")
    )
    try:
        cassette = Cassette(path, mode, header=header)
    except (CassetteMismatch, ConfigError) as exc:  # ConfigError: the administrator's policy
        raise UsageError(f"%copilot {mode}: {exc}") from None
    cassette.trusted = trust
    activate(cassette)
    if session.saved.resumed is not None and session.agent is None:
        session.reset()  # the cassette's requests begin a conversation of their own
    if mode == "record":
        print(f"copilot: recording to {path.name}: the model's answers and your approvals")
        return
    recorded = cassette.header.model
    if recorded and recorded != session.current_model_spec():
        _switched[cassette] = settings.model
        settings.model = recorded  # the model it was recorded with, whatever is configured
    lines = [f"copilot: {cassette.describe()}, recorded with {recorded or 'the default model'}"]
    if cassette.header.note:
        lines.append(f"({cassette.header.note})")
    lines += replay_notice(session, cassette, path)
    print("\n".join(lines))


def off(session: CopilotSession, args: argparse.Namespace, settings: Any) -> None:
    """`%copilot cassette off` (and `record off`, `replay off`): the model a replay switched
    from is the model again."""
    previous = activate(None)
    if previous is None:
        print("copilot: no cassette")
        return
    if previous in _switched:
        settings.model = _switched.pop(previous)
    print(f"copilot: stopped {previous.describe()}; model {session.current_model_spec()}")


STATUS_ACTIONS = (Action(name="off", help="stop the cassette", run=off),)
"""`%copilot cassette`'s sub-action; without one, it says which cassette plays."""


def status(session: CopilotSession, args: argparse.Namespace, settings: Any) -> None:
    """`%copilot cassette`: the cassette playing, if any."""
    cassette = active_cassette()
    print(f"copilot: {cassette.describe()}" if cassette else "copilot: no cassette")
