"""The chat panel's messages both ways, as named fields: one definition per direction.

The kernel sends the page `ToPage` messages: a batch of transcript `Op`s, a replay of the whole
transcript for a view that opened later, a pong, `@` completions, the model form's state and a
provider's models. Each is a JSON object with a `kind`, each op an object with an `op`. The page
sends `FromPage` messages, read here (`read_message`) into frozen dataclasses that the panel
matches on: a kind this kernel does not know, a missing field or a field of the wrong type is
refused with a `WireError` that says which (never with a field's value: a form message may carry
a key). `wire.d.ts` declares the same messages for the page's JavaScript, which TypeScript checks
against it; `tests/test_panel_wire.py` keeps the two files in step.

No `from __future__ import annotations` here: a TypedDict reads `NotRequired` as the class is made,
and the reader below resolves each field's type at run time.
"""

import sys
from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar, Literal, Union, get_args, get_origin, get_type_hints

if sys.version_info >= (3, 11):
    from typing import NotRequired, TypedDict
else:  # pragma: no cover
    from typing_extensions import NotRequired, TypedDict

# --- ops: what the transcript shows, one change each (see feed.py) ---------------------------


class UserOp(TypedDict):
    """The user's request."""

    op: Literal["user"]
    text: str


class TextOp(TypedDict):
    """Words of the answer (consecutive ones are joined)."""

    op: Literal["text"]
    text: str


class ReasoningOp(TypedDict):
    """Words of the model's reasoning (consecutive ones are joined)."""

    op: Literal["reasoning"]
    text: str


class ToolOp(TypedDict):
    """A tool call's card: what it is called on and its arguments (`format`: diff, code, json
    or empty)."""

    op: Literal["tool"]
    id: str
    name: str
    target: str
    format: str
    preview: str


class AskOp(TypedDict):
    """A call waits for Approve or Deny; `preview`, where given, is what will happen, in place
    of the card's arguments (with its `format` and `target`)."""

    op: Literal["ask"]
    id: str
    category: str
    warning: str
    format: NotRequired[str]
    preview: NotRequired[str]
    target: NotRequired[str]


class QuestionOp(TypedDict):
    """The model (or an MCP server) asks the user: a text box, and a button per option."""

    op: Literal["question"]
    id: str
    question: str
    options: list[str]


class AskedOp(TypedDict):
    """An approval or question was answered: the card's state and what it says, where not the
    plain approved / denied."""

    op: Literal["asked"]
    id: str
    approved: bool
    outcome: NotRequired[str]
    state: NotRequired[str]


class DiffOp(TypedDict):
    """A file or cell the last card's call changed."""

    op: Literal["diff"]
    path: str
    diff: str


class DoneOp(TypedDict):
    """A call finished; `output` is what a run showed, as safe HTML (`output_html.py`)."""

    op: Literal["done"]
    id: str
    ok: bool
    summary: str
    result: str
    output: NotRequired[str]


class UndoableOp(TypedDict):
    """A code block's Run can be taken back: what Undo puts back."""

    op: Literal["undoable"]
    id: str
    note: str


class UndoneOp(TypedDict):
    """A Run's Undo happened, or why not."""

    op: Literal["undone"]
    id: str
    ok: bool
    text: str


class NoteOp(TypedDict):
    """A notice (Markdown)."""

    op: Literal["note"]
    text: str


class RetryOp(TypedDict):
    """A retry's wait: takes back the failed attempt's words, lasts until the next op."""

    op: Literal["retry"]
    text: str


class ErrorOp(TypedDict):
    """Something failed: a line to read, and details (a traceback) to open."""

    op: Literal["error"]
    message: str
    detail: str


class EndOp(TypedDict):
    """The turn is over: done, failed or stopped."""

    op: Literal["end"]
    status: str


class ClearOp(TypedDict):
    """A new chat: the views empty their transcript."""

    op: Literal["clear"]


Op = Union[
    UserOp,
    TextOp,
    ReasoningOp,
    ToolOp,
    AskOp,
    QuestionOp,
    AskedOp,
    DiffOp,
    DoneOp,
    UndoableOp,
    UndoneOp,
    NoteOp,
    RetryOp,
    ErrorOp,
    EndOp,
    ClearOp,
]

# --- kernel to page ----------------------------------------------------------------------------


class OpsMessage(TypedDict):
    """A batch of ops for every open view."""

    kind: Literal["ops"]
    ops: list[Op]


class ReplayMessage(TypedDict):
    """The whole transcript, for the one view that just opened."""

    kind: Literal["replay"]
    view: str
    ops: list[Op]


class PongMessage(TypedDict):
    """The kernel still answers (link.js)."""

    kind: Literal["pong"]
    seq: int


class CompletionItem(TypedDict):
    """One `@` candidate: what is inserted, its kind (file, cell, variable) and a detail."""

    text: str
    kind: str
    detail: str


class CompletionsMessage(TypedDict):
    """The answer to a view's `@` query `seq`; `error` where finding candidates failed."""

    kind: Literal["completions"]
    seq: int
    view: str
    items: list[CompletionItem]
    error: NotRequired[str]


class KeyView(TypedDict):
    """What the form may say of a provider's key: never any character of it."""

    name: str
    saved: bool
    where: str
    environment: bool
    problem: str


class ProviderView(TypedDict):
    """A provider in the form: its key's status, or how it signs in (`key` None)."""

    name: str
    sign_in: str
    key: KeyView | None


class FormView(TypedDict):
    """Everything the model form shows: providers, the model now, JupyterLab's setting."""

    providers: list[ProviderView]
    provider: str
    model: str
    setting: str
    problem: str


class ChosenModel(TypedDict):
    """The model a Save chose, for the page to keep in JupyterLab's settings."""

    provider: str
    model: str


class FormMessage(TypedDict):
    """The form's state, and what a view's action came to (`said`, for `view` only)."""

    kind: Literal["form"]
    form: FormView
    view: str
    said: str
    outcome: str
    chosen: NotRequired[ChosenModel]


class ModelsMessage(TypedDict):
    """A provider's models for the form's list, or a `note` saying to type the name."""

    kind: Literal["models"]
    provider: str
    ids: list[str]
    note: str


class RunRow(TypedDict):
    """One run the panel lists: its state line (handle, what runs, elapsed or how it ended) and
    the last line it printed."""

    handle: str
    state: str
    tail: str
    running: bool


class RunsMessage(TypedDict):
    """The agent's runs going on (and those that ended since the last prompt), all of them."""

    kind: Literal["runs"]
    runs: list[RunRow]


ToPage = Union[
    OpsMessage,
    ReplayMessage,
    PongMessage,
    CompletionsMessage,
    FormMessage,
    ModelsMessage,
    RunsMessage,
]

# --- page to kernel ----------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class Prompt:
    """Send: a request from the input box."""

    KIND: ClassVar[str] = "prompt"
    text: str


@dataclass(frozen=True, kw_only=True)
class Stop:
    """Stop the running turn."""

    KIND: ClassVar[str] = "stop"


@dataclass(frozen=True, kw_only=True)
class Approve:
    """Approve the call `id` waits for."""

    KIND: ClassVar[str] = "approve"
    id: str


@dataclass(frozen=True, kw_only=True)
class Deny:
    """Deny the call `id`, or decline its question."""

    KIND: ClassVar[str] = "deny"
    id: str


@dataclass(frozen=True, kw_only=True)
class Answer:
    """The user's answer to the question `id`."""

    KIND: ClassVar[str] = "answer"
    id: str
    text: str


@dataclass(frozen=True, kw_only=True)
class Revise:
    """What to change in the plan `id`."""

    KIND: ClassVar[str] = "revise"
    id: str
    text: str


@dataclass(frozen=True, kw_only=True)
class NewChat:
    """New chat: forget the conversation."""

    KIND: ClassVar[str] = "new"


@dataclass(frozen=True, kw_only=True)
class Ready:
    """A view opened: it wants the transcript so far."""

    KIND: ClassVar[str] = "ready"
    view: str


@dataclass(frozen=True, kw_only=True)
class Complete:
    """A view's `@` query, numbered so that it shows only the answer to its latest."""

    KIND: ClassVar[str] = "complete"
    query: str
    seq: int
    view: str


@dataclass(frozen=True, kw_only=True)
class Ping:
    """Whether the kernel still answers (after the comm's life changed)."""

    KIND: ClassVar[str] = "ping"
    seq: int


@dataclass(frozen=True, kw_only=True)
class Run:
    """A code block's Run."""

    KIND: ClassVar[str] = "run"
    code: str


@dataclass(frozen=True, kw_only=True)
class Undo:
    """A Run's Undo, by its card's id."""

    KIND: ClassVar[str] = "undo"
    id: str


@dataclass(frozen=True, kw_only=True)
class Fix:
    """Fix with Copilot: only the failing cell's id (empty: the last that failed)."""

    KIND: ClassVar[str] = "fix"
    cell: str


@dataclass(frozen=True, kw_only=True)
class StopRun:
    """Stop one listed run alone (the turn's Stop leaves runs going)."""

    KIND: ClassVar[str] = "stop_run"
    handle: str


FormAction = Literal["state", "models", "save", "forget"]


@dataclass(frozen=True, kw_only=True)
class Form:
    """An action of the model form; `key` only with a Save, and never shown (`repr=False`)."""

    KIND: ClassVar[str] = "form"
    do: FormAction
    view: str
    provider: str = ""
    model: str = ""
    key: str = field(default="", repr=False)


FromPage = Union[
    Prompt,
    Stop,
    Approve,
    Deny,
    Answer,
    Revise,
    NewChat,
    Ready,
    Complete,
    Ping,
    Run,
    Undo,
    Fix,
    StopRun,
    Form,
]
FROM_PAGE: dict[str, type[Any]] = {cls.KIND: cls for cls in get_args(FromPage)}
"""Each kind the page may send, and what it is read into."""


class WireError(ValueError):
    """A message from the page that this kernel cannot read (the page runs another version)."""


def read_message(content: Any) -> FromPage:
    """A message from the page, read into its dataclass: every field present with its type
    (fields the kernel does not know are left out)."""
    kind = content.get("kind") if isinstance(content, dict) else None
    cls = FROM_PAGE.get(kind) if isinstance(kind, str) else None
    if cls is None:
        what = f"of kind {kind[:40]!r}" if isinstance(kind, str) else "without a kind"
        raise WireError(f"a message {what}; this kernel reads {', '.join(FROM_PAGE)}")
    hints = get_type_hints(cls)
    values: dict[str, Any] = {}
    for item in fields(cls):
        if item.name not in content:
            if item.default is MISSING:
                raise WireError(f"a {kind!r} message without its field {item.name!r}")
            continue
        value = content[item.name]
        if not _fits(value, hints[item.name]):
            raise WireError(
                f"a {kind!r} message whose {item.name!r} is not {_named(hints[item.name])}"
            )
        values[item.name] = value
    message: FromPage = cls(**values)
    return message


def _fits(value: Any, hint: Any) -> bool:
    if get_origin(hint) is Literal:
        return isinstance(value, str) and value in get_args(hint)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, hint)


def _named(hint: Any) -> str:
    if get_origin(hint) is Literal:
        return "one of " + ", ".join(get_args(hint))
    return {str: "text", int: "a whole number"}.get(hint, hint.__name__)
