"""Where the proxy was started, so each refusal tells the user a step they can take there.

A notebook user restarts it with `%copilot serve ...` and approves calls with buttons; a shell
user runs `copilot-nb serve ...` and has no one to ask. One frozen value, passed to the backend
and the gate, words every refusal for its surface.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Surface:
    """The command that started the server and what it can do about a call that asks."""

    command: str
    """How the user starts the server here: `%copilot serve` or `copilot-nb serve`."""
    unapproved: str
    """What to do about a call nobody could approve."""

    def restart_with(self, flag: str) -> str:
        """Words asking the user to start the server again with `flag`."""
        return f"start it again with {self.command} {flag}"

    @property
    def token_hint(self) -> str:
        """Where the user finds the token the gate asks for."""
        return f"use the token printed when the server started ({self.command} prints it)"


NOTEBOOK = Surface(
    command="%copilot serve",
    unapproved="start it with %copilot serve in a notebook to approve each call, or allow the "
    "category in the approval settings",
)
SHELL = Surface(
    command="copilot-nb serve",
    unapproved="start it again with copilot-nb serve --yes to allow edits, or run %copilot serve "
    "in a notebook to approve each call",
)
