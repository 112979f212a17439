"""What flows out of a model stream and out of `Agent.run()`: frozen dataclasses, no I/O.

Model events are what a provider's `stream()` yields; it always ends with `ModelResponse`, whose
message is the complete reply (so `complete()` is just "the last event"). Agent events are what
the surfaces (magic, panel, proxy) render; they `match` on these types and never reach into the loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Union

from .kernel_bridge import call_on
from .messages import AssistantMessage, Usage

# --- model events -------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class TextDelta:
    """A piece of the reply's visible text."""

    text: str


@dataclass(frozen=True, kw_only=True)
class ReasoningDelta:
    """A piece of the model's reasoning (thinking), shown apart from the answer."""

    text: str


@dataclass(frozen=True, kw_only=True)
class ToolCallDelta:
    """Part of a tool call being streamed: its position, and whatever arrived in this chunk."""

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""


@dataclass(frozen=True, kw_only=True)
class ModelResponse:
    """The last event of every model stream: the complete, accumulated reply."""

    message: AssistantMessage


@dataclass(frozen=True, kw_only=True)
class Notice:
    """Something the user should know that is neither answer nor error (a retry, a fallback)."""

    text: str
    retry: bool = False
    """A wait before the request is sent again: worth seeing while it lasts, not afterwards.
    What the failed attempt streamed streams again, so a view drops it (and this notice) once
    the request goes on."""


ModelEvent = Union[TextDelta, ReasoningDelta, ToolCallDelta, Notice, ModelResponse]

# --- agent events -------------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class ToolStarted:
    """The agent is about to run a tool call."""

    call_id: str
    name: str
    arguments: Any
    summary: str
    parent: str = ""
    """The call id of the subagent call this one runs under ('' for the agent's own)."""


@dataclass(frozen=True, kw_only=True)
class ToolFinished:
    """A tool call ended; `ok` is False when its result is an error the model will read."""

    call_id: str
    name: str
    ok: bool
    summary: str
    content: str
    parent: str = ""
    outputs: tuple[Mapping[str, Any], ...] = ()
    """What the call showed, as nbformat outputs (run_code's printed text, figures and result),
    masked as `content` is: shown under the call's line, as a notebook shows outputs."""


@dataclass(frozen=True, kw_only=True)
class CallPreview:
    """A call as its approval shows it: `summary` names the target in the user's words
    ("cell #6 of a.ipynb"), `text` is what will happen in full (the code that will run)."""

    summary: str
    text: str
    kind: str = "code"
    """How to show `text`: "code" as it is, "diff" as a diff."""


@dataclass(frozen=True, kw_only=True, eq=False)
class ApprovalNeeded:
    """The agent waits for the user to allow or refuse this call: answer with `approve()`/`deny()`.

    The run stays suspended until one of them is called (from a button, a prompt, a test).
    """

    call_id: str
    name: str
    arguments: Any
    summary: str
    category: str
    decision: asyncio.Future[tuple[bool, str]] = field(repr=False)
    note: str = ""
    """What else approving means (for an MCP tool: that its server becomes trusted)."""
    parent: str = ""
    """The subagent call this request comes from ('' for the agent's own)."""
    preview: CallPreview | None = None
    """What the call will do, as the user reads it, where its arguments do not say it (run_cell's
    `#6` is the code in cell 6): shown instead of the arguments."""

    def approve(self) -> None:
        self._answer(True, "")

    def deny(self, reason: str = "") -> None:
        self._answer(False, reason)

    def revise(self, text: str) -> None:
        """Neither yes nor no: the user's words go back to the model, which plans again (a plan's
        Revise). A surface offers it only for a plan; anywhere else it is a denial with reasons."""
        self._answer(False, REVISE + text)

    def approve_once(self) -> None:
        """Approve this one call and remember nothing: a replayed answer never makes a source
        (an MCP server) trusted for later calls."""
        self._answer(True, APPROVED_ONCE)

    def _answer(self, approved: bool, reason: str) -> None:
        """Resolve on the agent's own loop, whichever thread the answer comes from.

        JupyterLab 4.4+ with ipykernel 7 may deliver widget messages to a kernel subshell: a
        thread with its own loop. Setting the result there would never wake the waiting run.
        """
        call_on(self.decision.get_loop(), _settle, self.decision, (approved, reason))

    @property
    def answered(self) -> bool:
        return self.decision.done()


@dataclass(frozen=True, kw_only=True, eq=False)
class Question(ApprovalNeeded):
    """The model asks the user something in the middle of a turn (`ask_user`, or an MCP
    server's elicitation): answered with `reply(text)`, or refused with `deny(reason)`.

    It is an `ApprovalNeeded` so that it takes the approver's path on every surface: a surface
    that knows questions shows `options` as buttons and a text box; one that does not still
    shows it and answers it, and where nobody can answer it is refused like any request."""

    question: str
    options: tuple[str, ...] = ()
    """Suggested answers, shown as buttons; the user may always type another."""
    asker: str = ""
    """Who asks, as the surfaces name it: '' for the model (`ask_user`), "MCP server 'x'" for a
    server's elicitation (the user should know a server, not the model, wants this)."""

    def reply(self, text: str) -> None:
        """The user's answer (an option, or their own words)."""
        self._answer(True, text)


DECLINED = "the user declined to answer"
"""The reason a question's Decline gives: the user chose not to answer (an MCP server is told
`decline`; any other refusal, such as nobody being there to ask, is a `cancel`)."""

APPROVED_ONCE = "approved for this call only"
"""The reason an `approve_once()` answer carries: nothing is trusted from it."""


REVISE = "the user asks for changes: "
"""How a `revise()` answer's reason starts; the rest is the user's words."""


def revision(reason: str) -> str | None:
    """The user's words when an answer was Revise, else None (an approval or a denial)."""
    return reason[len(REVISE) :] if reason.startswith(REVISE) else None


def _settle(future: asyncio.Future[tuple[bool, str]], result: tuple[bool, str]) -> None:
    if not future.done():
        future.set_result(result)


@dataclass(frozen=True, kw_only=True)
class FileChanged:
    """A tool changed a file in the workspace; `diff` is a unified diff of the change."""

    path: str
    diff: str


@dataclass(frozen=True, kw_only=True)
class CellChanged:
    """A tool changed a notebook cell; `change` is inserted, edited, replaced or deleted."""

    notebook: str
    cell_id: str
    change: str
    diff: str


@dataclass(frozen=True, kw_only=True)
class ToolsUpdated:
    """The tool set changed (an MCP server announced new tools, or stopped): the model is offered
    the new set from its next request on."""

    source: str
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    """Tools whose description or parameters are different now."""
    note: str = ""
    """Why, where it is not a plain change of the list: a server that could not start (the
    note names the server)."""

    @property
    def text(self) -> str:
        """One line for a transcript: `tools of git updated: +git__log, −git__diff`."""
        parts = [
            *(f"+{name}" for name in self.added),
            *(f"−{name}" for name in self.removed),
            *(f"~{name}" for name in self.changed),
        ]
        if not parts and self.note:
            return self.note  # it names its source
        listed = ", ".join(parts[:12]) + (f" and {len(parts) - 12} more" if len(parts) > 12 else "")
        line = f"tools of {self.source} updated" + (f": {listed}" if listed else "")
        return f"{line} ({self.note})" if self.note else line


@dataclass(frozen=True, kw_only=True)
class UsageReported:
    """Token usage of one model request: what a bill counts, so every request yields one."""

    usage: Usage
    estimated: bool = False
    """The server sent no usage: these counts are our estimate of the request and the reply
    (`agent/context/tokens.py`), never to be shown or relayed as the provider's."""
    parent: str = ""
    """The `delegate` call whose subagent made the request; "" for the conversation's own."""


@dataclass(frozen=True, kw_only=True)
class Done:
    """The run finished normally; `text` is the final answer."""

    text: str


@dataclass(frozen=True, kw_only=True)
class Failed:
    """The run ended early; `error` says why in words a user can act on."""

    error: str


AgentEvent = Union[
    TextDelta,
    ReasoningDelta,
    ToolStarted,
    ApprovalNeeded,
    ToolFinished,
    FileChanged,
    CellChanged,
    ToolsUpdated,
    UsageReported,
    Notice,
    Done,
    Failed,
]
