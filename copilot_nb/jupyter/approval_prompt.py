"""Asking the user in a `%%copilot` cell: Approve/Deny buttons, or a prompt where no widgets run.

The cell awaits the agent on the kernel's loop, so a button click (a comm message) is handled
while the agent waits for the answer (DESIGN.md fact 3). Buttons are shown only where a front
end draws them (the request came from a notebook, or a live notebook view is attached): in
`jupyter console` they would never appear and the cell would wait forever, so it asks with
`input()` there. Where nobody can answer (a notebook run headless by nbclient/nbval: stdin is
not allowed), asking denies at once and says how to allow.

A prompt shows everything it asks about: the whole edit, content or code, what kind of action it
is (reading a secret, changing files, running code), and whether the file changed runs code
later, runs in CI or instructs future agents (`later_effects.py`). Nothing of it hides in a box
of its own to scroll above Approve: a long one shows its first lines and a "Show N more lines"
button, and Approve is enabled once the rest is shown (the panel's card and a code block's Run
dialog fold it the same way). Every piece of it is model-controlled text, escaped (`safe_html`).
"""

from __future__ import annotations

import builtins
import json
import sys
import warnings
from collections.abc import Callable
from typing import Any, Literal

if sys.version_info >= (3, 11):
    from typing import assert_never
else:  # pragma: no cover
    from typing_extensions import assert_never

from ..agent.approvals.edit_targets import edit_targets
from ..events import DECLINED, ApprovalNeeded, Question
from ..text import first_line
from ..tools.files.patch import is_patch
from ..workspace.later_effects import later_effect
from .safe_html import escape

PromptMode = Literal["auto", "widget", "input"]
Choice = Literal["widget", "input", "deny"]
NOTEBOOK_KEYS = ("cellId", "deletedCells", "recordTiming")
"""Execute-request metadata only a notebook front end sends (JupyterLab, Notebook 7, VS Code)."""

NOBODY = (
    "nobody could be asked to approve it (this notebook runs without a user at the keyboard); "
    "rerun the cell with --yes to allow changes"
)
NOBODY_ALWAYS = (
    "nobody could be asked to approve it (this notebook runs without a user at the keyboard), "
    "and --yes does not approve it: {note}"
)
NOBODY_QUESTION = (
    "nobody can answer questions here (this notebook runs without a user at the keyboard)"
)
NOBODY_START = (
    "nobody could be asked to approve it (this notebook runs without a user at the keyboard); "
    "approve it once with %copilot mcp trust NAME in a notebook or console"
)
VERBS = {
    "read": "read",
    "read-secret": "read a secret (a credential file or a masked variable)",
    "edit": "change files",
    "execute": "run code",
    "external": "call an MCP server's tool (it runs outside copilot_nb's sandbox)",
    "mcp-server": "start (a program or URL this workspace's MCP config names)",
    "plan": "carry out this plan in agent mode",
}
"""What a call of each approval category does, as the prompt says it (the panel has the same)."""
PLAN_QUESTION = "Carry out this plan? (each change still asks as your settings say)"
"""A plan's question: the plan itself is the answer just shown above it, never repeated."""
REVISE_HINT = " [y/N, or type what to change] "
"""How a plan's `input()` question ends: other words than yes or no revise the plan."""
ALLOW = ". Allow? [y/N] "
"""How an approval asked with `input()` ends (after `question(event)`): a console's user, or a
program driving the kernel (the evaluation harness), tells it from a question by this."""
HEAD_LINES = 40
HEAD_CHARS = 3000
"""A preview longer than this shows its start, and the rest once asked for ("Show N more lines");
the panel (`cards.js`) and a code block's Run dialog (`blockRuns.ts`) fold at the same place."""
LONG_LINE = 100
"""Characters a line of the rest holds on average beyond which its label counts characters too."""
SEE_ALL_FIRST = "{more} first: approve only what you have seen"
"""Approve's tooltip while the rest of a long preview is not shown yet."""
PRE_STYLE = "margin:4px 0;white-space:pre-wrap"


def question(event: ApprovalNeeded) -> str:
    """One line: which tool wants to do what, to what."""
    if isinstance(event, Question):
        return f"{event.asker or 'The agent'} asks: {first_line(event.question)}"
    if event.category == "plan":
        return PLAN_QUESTION
    verb = VERBS.get(event.category, "run")
    target = first_line(event.preview.summary if event.preview else event.summary)
    return f"{event.name} wants to {verb}" + (f": {target}" if target else "")


def warning(event: ApprovalNeeded) -> str:
    """What approving this call leads to, or '': an edit's later effect (code that runs, a
    Makefile, `.bashrc`; a CI workflow; instructions future agents obey, `AGENTS.md`), the MCP
    server an approval trusts, the skill whose code a run would run."""
    if event.category in ("external", "mcp-server", "execute"):
        return event.note
    if event.category != "edit":
        return ""
    effects = ((path, later_effect(path)) for path in edit_targets(event.arguments))
    return "; ".join(f"{path} {effect}" for path, effect in effects if effect is not None)


def arguments_preview(arguments: Any) -> tuple[str, str]:
    """What a call will do, in full, and how to show it: an edit as a diff (`diff`), content or
    code as it is (`code`), anything else as JSON (`json`); `("", "")` for no arguments.

    The cell's approval prompt and the panel's tool cards both show this."""
    if isinstance(arguments, dict):
        old, new = arguments.get("old_str"), arguments.get("new_str")
        if isinstance(old, str) and isinstance(new, str):
            lines = [f"-{line}" for line in old.splitlines()]
            lines += [f"+{line}" for line in new.splitlines()]
            return "diff", "\n".join(lines)
        if is_patch(arguments.get("input")):  # apply_patch: the whole patch, as the diff it is
            return "diff", arguments["input"]
        for key in ("content", "source", "code", "plan", "question"):
            if isinstance(arguments.get(key), str):
                return "code", arguments[key]
        if not arguments:
            return "", ""
    try:
        text = json.dumps(arguments, indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(arguments)
    return "json", text


def event_preview(event: ApprovalNeeded) -> tuple[str, str]:
    """What an approval shows of its call, and how: the tool's own preview where it has one
    (run_cell: the code that will run), else its arguments; nothing for a plan, which is the
    answer just shown above its question."""
    if event.category == "plan":
        return "", ""
    if event.preview is not None:
        return event.preview.kind, event.preview.text
    return arguments_preview(event.arguments)


def preview(event: ApprovalNeeded) -> str:
    """What the call will do, as plain text and in full: the edit, the content or the code."""
    return event_preview(event)[1]


def split_preview(text: str, lines: int = HEAD_LINES, chars: int = HEAD_CHARS) -> tuple[str, str]:
    """The start shown at once and the rest behind an expander; together they are all the text."""
    cut = 0
    for _ in range(lines):
        newline = text.find("\n", cut)
        if newline < 0:
            cut = len(text)
            break
        cut = newline + 1
    cut = min(cut, chars)
    return text[:cut], text[cut:]


def more_label(rest: str) -> str:
    """What the button that shows the rest of a long preview says: `Show 20 more lines`."""
    lines = rest.count("\n") + (not rest.endswith("\n"))
    label = f"Show {lines:,} more line{'' if lines == 1 else 's'}"
    return label + (f" ({len(rest):,} characters)" if len(rest) > LONG_LINE * lines else "")


def approval_html(event: ApprovalNeeded, *, folded: bool = False) -> str:
    """The question, any warning and the preview as safe HTML: all of it, or (`folded`) only
    the start of a long one, the rest being the prompt's "Show N more lines"."""
    text = preview(event)
    shown = split_preview(text)[0] if folded else text
    parts = [f"<div><b>{escape(question(event))}</b></div>"]
    if note := warning(event):
        parts.append(f"<div style='color:var(--jp-warn-color0,#b45309)'>⚠ {escape(note)}</div>")
    if shown:
        parts.append(f"<pre style='{PRE_STYLE}'>{escape(shown)}</pre>")
    return "".join(parts)


def approval_text(event: ApprovalNeeded) -> str:
    """The same as plain text, for the `input()` prompt."""
    note = warning(event)
    shown = preview(event).rstrip("\n")
    lines = (f"copilot: {question(event)}", note and f"⚠ {note}", shown)
    return "\n".join(p for p in lines if p)


def nobody_can_answer(shell: Any) -> bool:
    """True in a kernel whose current request does not allow input (headless execution)."""
    kernel = getattr(shell, "kernel", None)
    return kernel is not None and not getattr(kernel, "_allow_stdin", True)


def current_request(kernel: Any) -> dict[str, Any]:
    """The message of the request the kernel runs now, or {}: ipykernel 7 keeps it per task
    (`get_parent()`), 6 per channel (`get_parent("shell")`), older ones in `_parent_header`."""
    get_parent = getattr(kernel, "get_parent", None)
    if callable(get_parent):
        for args in ((), ("shell",)):
            try:
                parent = get_parent(*args)
            except TypeError:  # a signature that wants the channel, or takes none
                continue
            if isinstance(parent, dict) and parent:
                return parent
    with warnings.catch_warnings():  # ipykernel 6+ deprecates it; only older kernels get here
        warnings.simplefilter("ignore", DeprecationWarning)
        parent = getattr(kernel, "_parent_header", None)
    return parent if isinstance(parent, dict) else {}


def from_notebook(kernel: Any) -> bool:
    """True when the running request comes from a notebook front end, which draws widgets.

    JupyterLab, Notebook 7 and VS Code put the cell's id in the execute request's metadata;
    `jupyter console`, nbclient and `jupyter_client.execute` send none, and cannot draw buttons."""
    metadata = current_request(kernel).get("metadata")
    return isinstance(metadata, dict) and any(key in metadata for key in NOTEBOOK_KEYS)


def choose_prompt(
    mode: PromptMode,
    *,
    in_kernel: bool,
    stdin_allowed: bool,
    widgets_drawn: bool,
    widgets_installed: bool,
) -> Choice:
    """How to ask: buttons only where a front end draws them (else the cell waits forever),
    `input()` where the front end answers it, and a denial where nobody can answer at all."""
    if in_kernel and not stdin_allowed:
        return "deny"
    if mode != "auto":
        return mode
    return "widget" if in_kernel and widgets_drawn and widgets_installed else "input"


def widgets_installed() -> bool:
    """Whether ipywidgets imports: without it no buttons can be made, whoever could draw them."""
    try:
        import ipywidgets  # noqa: F401
    except ImportError:
        return False
    return True


def ask_input(prompt: str) -> str:
    """`input()` looked up when asked: ipykernel swaps in its stdin-forwarding one per request."""
    return builtins.input(prompt)


class CellApprover:
    """The `Approver` of a `%%copilot` cell: buttons, `input()`, or a denial when nobody can answer.

    `widgets_attached` says a live notebook view is attached to the kernel (so buttons are seen)
    even when the running request does not say it comes from a notebook."""

    def __init__(
        self,
        shell: Any,
        *,
        mode: PromptMode = "auto",
        display: Callable[..., Any] | None = None,
        ask: Callable[[str], str] = ask_input,
        show: Callable[[str], Any] = print,
        widgets_attached: Callable[[], bool] | None = None,
    ) -> None:
        self.shell = shell
        self.mode = mode
        self._display = display
        self._ask = ask
        self._show = show
        self._widgets_attached = widgets_attached

    def answer(self, request: ApprovalNeeded) -> None:
        """Show the question; the agent resumes when the user (or this method) answers."""
        kernel = getattr(self.shell, "kernel", None)
        choice = choose_prompt(
            self.mode,
            in_kernel=kernel is not None,
            stdin_allowed=not nobody_can_answer(self.shell),
            widgets_drawn=self.mode == "auto" and self._widgets_drawn(kernel),
            widgets_installed=self.mode == "auto" and widgets_installed(),
        )
        if choice == "deny":
            if isinstance(request, Question):
                request.deny(NOBODY_QUESTION)
            elif request.category == "mcp-server":
                request.deny(NOBODY_START)
            elif request.category == "execute" and request.note:  # asks whatever --yes says
                request.deny(NOBODY_ALWAYS.format(note=request.note))
            else:
                request.deny(NOBODY)
        elif choice == "widget":
            self._show_buttons(request)
        elif choice == "input":
            self._ask_input(request)
        else:
            assert_never(choice)

    def _widgets_drawn(self, kernel: Any) -> bool:
        """A live notebook view is attached, or the running request came from a notebook."""
        if self._widgets_attached is not None and self._widgets_attached():
            return True
        return kernel is not None and from_notebook(kernel)

    def _ask_input(self, request: ApprovalNeeded) -> None:
        """Print the whole request, then ask with its question in the prompt itself (a console
        may show the prompt apart from the output); anything but yes denies."""
        self._show(approval_text(request))
        if isinstance(request, Question):
            ask_question_input(request, self._ask, self._show)
            return
        plan = request.category == "plan"
        try:
            reply = self._ask(question(request) + (REVISE_HINT if plan else ALLOW)).strip()
        except EOFError:  # Ctrl-D at the prompt
            reply = ""
        if reply.lower() in ("y", "yes"):
            request.approve()
        elif plan and reply.lower() not in ("", "n", "no"):
            request.revise(reply)
        else:
            request.deny(reply if reply.lower() not in ("", "n", "no") else "")

    def _show_buttons(self, event: ApprovalNeeded) -> None:
        import ipywidgets as widgets

        if isinstance(event, Question):
            self._display_box(question_box(event))
            return

        approve = widgets.Button(description="Approve", button_style="success", icon="check")
        deny = widgets.Button(description="Deny", button_style="danger", icon="times")
        buttons = [approve, deny]
        changes = widgets.Text(placeholder="What to change in the plan")
        if event.category == "plan":
            revise = widgets.Button(description="Revise", icon="pencil")
            revise.on_click(
                lambda _: event.revise(changes.value) if changes.value.strip() else None
            )
            buttons += [changes, revise]
        shown = prompt_widgets(event, approve)
        box = widgets.VBox([*shown, widgets.HBox(buttons)])

        def answered(_: object) -> None:  # the outcome shows in the transcript, where it asked
            box.children = ()
            box.layout.display = "none"

        event.decision.add_done_callback(answered)
        approve.on_click(lambda _: None if approve.disabled else event.approve())
        deny.on_click(lambda _: event.deny())
        self._display_box(box)

    def _display_box(self, box: Any) -> None:
        if self._display is not None:
            self._display(box)
        else:
            from IPython.display import display

            display(box)


def prompt_widgets(event: ApprovalNeeded, approve: Any) -> list[Any]:
    """The prompt above the buttons: its HTML, and for a long preview only its start and the
    "Show N more lines" button that shows the rest and enables `approve`."""
    import ipywidgets as widgets

    rest = split_preview(preview(event))[1]
    shown = widgets.HTML(approval_html(event, folded=bool(rest)))
    if not rest:
        return [shown]
    more = widgets.Button(description=more_label(rest), layout=widgets.Layout(width="auto"))
    approve.disabled, approve.tooltip = True, SEE_ALL_FIRST.format(more=more.description)

    def show_all(_: object) -> None:
        shown.value = approval_html(event)
        more.layout.display = "none"
        approve.disabled, approve.tooltip = False, ""

    more.on_click(show_all)
    return [shown, more]


def ask_question_input(
    request: Question, ask: Callable[[str], str], show: Callable[[str], Any] = print
) -> None:
    """A question in a console: its options numbered; a number picks one, other text is the
    answer, an empty line or Ctrl-D declines."""
    for number, option in enumerate(request.options, 1):
        show(f"  {number}. {option}")
    try:
        reply = ask("Your answer (a number, or type it; empty to decline): ").strip()
    except EOFError:
        reply = ""
    if not reply:
        request.deny(DECLINED)
    elif reply.isdigit() and 1 <= int(reply) <= len(request.options):
        request.reply(request.options[int(reply) - 1])
    else:
        request.reply(reply)


def question_box(event: Question) -> Any:
    """A question in the cell: its options as buttons, a text box and Send, and Decline."""
    import ipywidgets as widgets

    status = widgets.HTML(approval_html(event))
    text = widgets.Text(placeholder="Type an answer")
    send = widgets.Button(description="Send", button_style="primary")
    decline = widgets.Button(description="Decline", icon="times")
    options = [widgets.Button(description=option[:40], tooltip=option) for option in event.options]
    box = widgets.VBox([status, widgets.HBox(options), widgets.HBox([text, send, decline])])

    def done(answer: str | None) -> None:
        if answer is None:
            event.deny(DECLINED)
        else:
            event.reply(answer)
        shown = "declined" if answer is None else f"answered: {answer}"
        status.value = f"<b>{escape(question(event))}</b> — {escape(shown)}"
        box.children = (status,)

    for button, option in zip(options, event.options, strict=True):
        button.on_click(lambda _, chosen=option: done(chosen))
    send.on_click(lambda _: done(text.value) if text.value.strip() else None)
    decline.on_click(lambda _: done(None))
    return box
