"""`%copilot record`, `%copilot replay` and `%copilot cassette`: a notebook's model traffic on tape.

`record [PATH]` starts a new cassette (by default beside the notebook: `name.copilot.jsonl`),
`replay [PATH] [--auto]` plays one back (`--auto` records what comes after its end), and
`cassette [off]` says what is playing or stops it. Replaying switches to the model the cassette
was recorded with, so a notebook replays the same whatever model the reader has configured.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from IPython.core.error import UsageError

from ..agent.session import CopilotSession
from ..models.cassette import (
    Cassette,
    CassetteMismatch,
    Header,
    Mode,
    activate,
    active_cassette,
    default_path,
)
from ..workspace.notebook_file import current_notebook_path


def cassette_path(session: CopilotSession, words: list[str], command: str) -> Path:
    """The cassette a command names, else the one beside the notebook this kernel runs."""
    if words:
        return Path(os.path.abspath(os.path.expanduser(words[0])))
    notebook = current_notebook_path(getattr(session.shell, "user_ns", None) or {})
    if notebook is None:
        raise UsageError(
            f"%copilot {command}: this kernel does not know its notebook's name; name the "
            f"cassette, e.g. %copilot {command} analysis.copilot.jsonl"
        )
    return default_path(os.path.abspath(notebook))


def record(session: CopilotSession, words: list[str], settings: Any) -> None:
    if words[:1] == ["off"]:
        stop(session, [], settings)
        return
    path = cassette_path(session, words, "record")
    cassette = Cassette(path, "record", header=Header(model=session.current_model_spec()))
    activate(cassette)
    print(f"copilot: recording to {path.name}: the model's answers and your approvals")


def replay(session: CopilotSession, words: list[str], settings: Any) -> None:
    mode: Mode = "auto" if "--auto" in words else "replay"
    rest = [w for w in words if w != "--auto"]
    if rest[:1] == ["off"]:
        stop(session, [], settings)
        return
    path = cassette_path(session, rest, "replay")
    if mode == "replay" and not path.exists():
        raise UsageError(f"%copilot replay: no cassette at {path}; record one first")
    try:
        cassette = Cassette(path, mode)
    except CassetteMismatch as exc:
        raise UsageError(f"%copilot replay: {exc}") from None
    activate(cassette)
    recorded = cassette.header.model
    if recorded and recorded != session.current_model_spec():
        settings.model = recorded
    lines = [f"copilot: {cassette.describe()}, recorded with {recorded or 'the default model'}"]
    if cassette.header.note:
        lines.append(f"  ({cassette.header.note})")
    print("\n".join(lines))


def stop(session: CopilotSession, words: list[str], settings: Any) -> None:
    """`%copilot cassette off`."""
    previous = activate(None)
    print(f"copilot: stopped {previous.describe()}" if previous else "copilot: no cassette")


def status(session: CopilotSession, words: list[str], settings: Any) -> None:
    """`%copilot cassette [off]`."""
    if words[:1] == ["off"]:
        stop(session, words[1:], settings)
        return
    if words:
        raise UsageError("%copilot cassette: use `%copilot cassette` or `%copilot cassette off`")
    cassette = active_cassette()
    print(f"copilot: {cassette.describe()}" if cassette else "copilot: no cassette")
