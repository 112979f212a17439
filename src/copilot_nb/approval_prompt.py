"""Asking the user in a `%%copilot` cell: Approve/Deny buttons, or a prompt where no widgets run.

The cell awaits the agent on the kernel's loop, so a button click (a comm message) is handled
while the agent waits for the answer (DESIGN.md fact 3). Where nobody can answer (a notebook run
headless by nbclient/nbval: stdin is not allowed), asking denies at once and says how to allow.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from typing import Any, Literal

from .events import ApprovalNeeded

PromptMode = Literal["auto", "widget", "input"]

NOBODY = (
    "nobody could be asked to approve it (this notebook runs without a user at the keyboard); "
    "rerun the cell with --yes to allow changes"
)


def preview(event: ApprovalNeeded, limit: int = 1500) -> str:
    """What the call will do, as plain text: the edit, the content or the code."""
    args = event.arguments if isinstance(event.arguments, dict) else {}
    if event.name in ("edit_file", "edit_cell") and "old_str" in args:
        removed = "".join(f"- {line}\n" for line in str(args["old_str"]).splitlines())
        added = "".join(f"+ {line}\n" for line in str(args.get("new_str", "")).splitlines())
        text = removed + added
    elif "content" in args or "source" in args or "code" in args:
        text = str(args.get("content", args.get("source", args.get("code", ""))))
    else:
        text = json.dumps(args, indent=2, ensure_ascii=False)
    return (
        text
        if len(text) <= limit
        else text[:limit] + f"\n… ({len(text) - limit:,} more characters)"
    )


def nobody_can_answer(shell: Any) -> bool:
    """True in a kernel whose current request does not allow input (headless execution)."""
    kernel = getattr(shell, "kernel", None)
    return kernel is not None and not getattr(kernel, "_allow_stdin", True)


class CellApprover:
    """Answers the agent's approval requests inside one `%%copilot` cell."""

    def __init__(
        self,
        shell: Any,
        *,
        mode: PromptMode = "auto",
        display: Callable[..., Any] | None = None,
        ask: Callable[[str], str] = input,
    ) -> None:
        self.shell = shell
        self.mode = mode
        self._display = display
        self._ask = ask
        self.widgets: list[Any] = []

    def answer(self, event: ApprovalNeeded) -> None:
        """Show the question; the agent resumes when the user (or this method) answers."""
        if nobody_can_answer(self.shell):
            event.deny(NOBODY)
        elif self.mode == "widget" or (self.mode == "auto" and self._widgets_usable()):
            self._show_buttons(event)
        else:
            reply = self._ask(
                f"copilot wants to run {event.name} {event.summary}\n{preview(event)}\nAllow? [y/N] "
            )
            if reply.strip().lower() in ("y", "yes"):
                event.approve()
            else:
                event.deny(reply.strip() if reply.strip().lower() not in ("", "n", "no") else "")

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

        title = f"<b>{html.escape(event.name)}</b> <code>{html.escape(event.summary)}</code>"
        body = f"<pre style='max-height:14em;overflow:auto;margin:4px 0'>{html.escape(preview(event))}</pre>"
        approve = widgets.Button(description="Approve", button_style="success", icon="check")
        deny = widgets.Button(description="Deny", button_style="danger", icon="times")
        status = widgets.HTML(f"{title} wants to run:")
        box = widgets.VBox([status, widgets.HTML(body), widgets.HBox([approve, deny])])

        def decide(approved: bool) -> None:
            (event.approve if approved else event.deny)()
            verdict = "✓ approved" if approved else "✗ denied"
            status.value = f"{title} — {verdict}"
            box.children = (status,)

        approve.on_click(lambda _: decide(True))
        deny.on_click(lambda _: decide(False))
        self.widgets.append(box)
        if self._display is not None:
            self._display(box)
        else:
            from IPython.display import display

            display(box)
