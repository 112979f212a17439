"""Asking the user in a `%%copilot` cell: Approve/Deny buttons, or a prompt where no widgets run.

The cell awaits the agent on the kernel's loop, so a button click (a comm message) is handled
while the agent waits for the answer (DESIGN.md fact 3). Where nobody can answer (a notebook run
headless by nbclient/nbval: stdin is not allowed), asking denies at once and says how to allow.

A prompt shows everything it asks about: the whole edit, content or code (long ones folded
behind an expander, never cut), what kind of action it is (reading a secret, changing files,
running code), and whether the file changed is one that runs code later. Every piece of it is
model-controlled text, escaped (`safe_html`).
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Callable
from typing import Any, Literal

from ..events import ApprovalNeeded
from ..text import first_line
from ..workspace.write_policy import runs_code_later
from .safe_html import escape

PromptMode = Literal["auto", "widget", "input"]

NOBODY = (
    "nobody could be asked to approve it (this notebook runs without a user at the keyboard); "
    "rerun the cell with --yes to allow changes"
)
VERBS = {
    "read": "read",
    "read-secret": "read a secret (a credential file or a masked variable)",
    "edit": "change files",
    "execute": "run code",
}
"""What a call of each approval category does, as the prompt says it (the panel has the same)."""
HEAD_LINES = 40
HEAD_CHARS = 3000
"""A preview longer than this shows its start, and the rest behind "show all"."""
_PATH_KEYS = ("path", "destination", "source")


def question(event: ApprovalNeeded) -> str:
    """One line: which tool wants to do what, to what."""
    verb = VERBS.get(event.category, "run")
    target = first_line(event.summary)
    return f"{event.name} wants to {verb}" + (f": {target}" if target else "")


def warning(event: ApprovalNeeded) -> str:
    """Why approving this edit may run code later (a Makefile, conftest.py, a git hook), or ''."""
    args = event.arguments if isinstance(event.arguments, dict) else {}
    if event.category != "edit":
        return ""
    keys = _PATH_KEYS if "destination" in args else _PATH_KEYS[:2]  # a cell's `source` is code
    notes = []
    for key in keys:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            shown = posixpath.normpath(value.strip().replace("\\", "/"))
            reason = runs_code_later(shown)
            if reason is not None:
                notes.append(f"{shown} runs code later: {reason}")
    return "; ".join(notes)


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
        for key in ("content", "source", "code"):
            if isinstance(arguments.get(key), str):
                return "code", arguments[key]
        if not arguments:
            return "", ""
    try:
        text = json.dumps(arguments, indent=2, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(arguments)
    return "json", text


def preview(event: ApprovalNeeded) -> str:
    """What the call will do, as plain text and in full: the edit, the content or the code."""
    return arguments_preview(event.arguments)[1]


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


def approval_html(event: ApprovalNeeded) -> str:
    """The question, any warning, and the whole preview (the long part folded), as safe HTML."""
    text = preview(event)
    head, rest = split_preview(text)
    count = text.count("\n") + (not text.endswith("\n"))
    parts = [f"<div><b>{escape(question(event))}</b></div>"]
    if note := warning(event):
        parts.append(f"<div style='color:var(--jp-warn-color0,#b45309)'>⚠ {escape(note)}</div>")
    pre = "<pre style='max-height:24em;overflow:auto;margin:4px 0;white-space:pre-wrap'>"
    if text:
        parts.append(f"{pre}{escape(head)}</pre>")
    if rest:
        parts.append(
            f"<details class='cnb-more'><summary>Show all {count:,} lines "
            f"({len(text):,} characters)</summary>{pre}{escape(rest)}</pre></details>"
        )
    return "".join(parts)


def approval_text(event: ApprovalNeeded) -> str:
    """The same as plain text, for the `input()` prompt."""
    note = warning(event)
    return "\n".join(p for p in (f"copilot: {question(event)}", note and f"⚠ {note}") if p) + (
        "\n" + preview(event).rstrip("\n")
    )


def nobody_can_answer(shell: Any) -> bool:
    """True in a kernel whose current request does not allow input (headless execution)."""
    kernel = getattr(shell, "kernel", None)
    return kernel is not None and not getattr(kernel, "_allow_stdin", True)


class CellApprover:
    """The `Approver` of a `%%copilot` cell: buttons, `input()`, or a denial when nobody can answer."""

    def __init__(
        self,
        shell: Any,
        *,
        mode: PromptMode = "auto",
        display: Callable[..., Any] | None = None,
        ask: Callable[[str], str] = input,
        show: Callable[[str], Any] = print,
    ) -> None:
        self.shell = shell
        self.mode = mode
        self._display = display
        self._ask = ask
        self._show = show

    def answer(self, request: ApprovalNeeded) -> None:
        """Show the question; the agent resumes when the user (or this method) answers."""
        if nobody_can_answer(self.shell):
            request.deny(NOBODY)
        elif self.mode == "widget" or (self.mode == "auto" and self._widgets_usable()):
            self._show_buttons(request)
        else:
            self._show(approval_text(request))
            reply = self._ask("Allow? [y/N] ")
            if reply.strip().lower() in ("y", "yes"):
                request.approve()
            else:
                request.deny(reply.strip() if reply.strip().lower() not in ("", "n", "no") else "")

    def _widgets_usable(self) -> bool:
        if getattr(self.shell, "kernel", None) is None:
            return False  # terminal IPython: no front end to draw buttons
        try:
            import ipywidgets  # noqa: F401
        except ImportError:
            return False
        return True

    def _show_buttons(self, event: ApprovalNeeded) -> None:
        import ipywidgets as widgets

        title = f"<b>{escape(event.name)}</b> <code>{escape(first_line(event.summary))}</code>"
        approve = widgets.Button(description="Approve", button_style="success", icon="check")
        deny = widgets.Button(description="Deny", button_style="danger", icon="times")
        status = widgets.HTML(approval_html(event))
        box = widgets.VBox([status, widgets.HBox([approve, deny])])

        def decide(approved: bool) -> None:
            (event.approve if approved else event.deny)()
            verdict = "✓ approved" if approved else "✗ denied"
            status.value = f"{title} — {verdict}"
            box.children = (status,)

        approve.on_click(lambda _: decide(True))
        deny.on_click(lambda _: decide(False))
        if self._display is not None:
            self._display(box)
        else:
            from IPython.display import display

            display(box)
