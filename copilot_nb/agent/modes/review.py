"""Review mode for one turn: whether its edits apply at once and wait for review, or ask.

`approve_edit = "review"` (the default in a kernel) reviews where a person can: in a notebook
open in JupyterLab or Notebook 7 with copilot_nb's extension attached, the agent's changes apply
at once, every one visible and reversible in place (`tools/review.py`). Where no live notebook is
attached (a file on disk, VS Code, nbclient and nbval, a console) nothing could show a review, so
the turn asks instead, and says so where a person may be watching.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from pathlib import Path
from typing import Any

from ...errors import ToolError
from ...events import CellChanged, FileChanged
from ...kernel_bridge import user_namespace
from ...policy import approval_floor
from ...tools.context import LiveNotebooks
from ...workspace.notebook_file import current_notebook_path
from ...workspace.workspace import Workspace
from ..approvals.policy import ApprovalPolicy

FALLBACK_NOTE = (
    "Review mode needs the notebook open in JupyterLab or Notebook 7 with copilot_nb's "
    "extension; none is attached, so edits ask first in this turn."
)
NO_EXTENSION_NOTE = (
    "Review mode needs copilot_nb's extension in the environment Jupyter runs from; this page "
    "has none (`pip install copilot_nb` there, then reload the page), so edits ask first in "
    "this turn."
)

_log = logging.getLogger(__name__)


def resolved(policy: ApprovalPolicy, live: LiveNotebooks | None) -> tuple[ApprovalPolicy, bool]:
    """The turn's policy with `review` made `allow` (a live notebook is attached: the turn
    reviews) or `ask` (none is); and whether the turn reviews. An administrator's `review`
    floor makes `allow` review."""
    if edit_setting(policy) != "review":
        return policy, False
    if live is not None and live.attached():
        return replace(policy, edit="allow", reviewing=True), True
    return replace(policy, edit="ask"), False


def edit_setting(policy: ApprovalPolicy) -> str:
    """The edit setting with the administrator's floor: `allow` under a `review` floor reviews
    (stricter floors apply per call, in `decide_call`)."""
    if policy.edit == "allow" and approval_floor("edit") == "review":
        return "review"
    return policy.edit


def fallback_said(policy: ApprovalPolicy, live: LiveNotebooks | None, shell: Any) -> bool:
    """Whether to tell the user that review fell back to asking: where a notebook front end
    may be showing this turn (a Jupyter server or VS Code started the kernel), not in a console
    or a headless run, where nothing could review anyway."""
    if edit_setting(policy) != "review" or (live is not None and live.attached()):
        return False
    namespace = user_namespace(shell)
    return bool((live is not None and live.fallback_note()) or namespace.get("__vsc_ipynb_file__"))


def fallback_note(live: LiveNotebooks | None) -> str:
    """What the user is told when review falls back to asking: why no page reviews."""
    return NO_EXTENSION_NOTE if live is not None and live.extension_missing() else FALLBACK_NOTE


def edits_line(policy: ApprovalPolicy, live: LiveNotebooks | None) -> str:
    """What `%copilot` says about edits: `review` here and now, or why it asks instead."""
    if edit_setting(policy) != "review":
        return f"copilot: edits {policy.edit}"
    if live is not None and live.attached():
        return "copilot: edits review: applied at once in the open notebook, Keep or Undo there"
    return (
        "copilot: edits review, which asks here: no notebook open in JupyterLab or Notebook 7 "
        "is attached"
    )


async def list_file(
    live: LiveNotebooks | None,
    shell: Any,
    workspace: Workspace,
    change: FileChanged | CellChanged,
) -> None:
    """A file the reviewing turn changed, listed in the notebook's review (`review_files`):
    a file, or a notebook the cell tools changed on disk (one not open in a front end); the
    file is written and checkpointed already, so a front end that cannot list it loses
    nothing (`%copilot undo` still takes it back)."""
    if live is None:
        return
    path = change.path if isinstance(change, FileChanged) else change.notebook
    entry = live.review.list_file(
        path=path,
        diff=change.diff,
        checkpoints=workspace.checkpoints,
        root=workspace.root,
    )
    if entry is None:
        return
    notebook = live.current_path()
    if notebook is None:
        named = current_notebook_path(user_namespace(shell))
        notebook = _absolute(Path(named)) if named else None
    view = await live.find(notebook) if notebook is not None else None
    if view is None:
        return
    try:
        await view.request("review_files", files=[entry.wire()])
    except ToolError:
        _log.debug("the open notebook did not list %s for review", path, exc_info=True)


def _absolute(path: Path) -> Path:
    """A notebook path the kernel's session gave, relative to its working folder."""
    return path if path.is_absolute() else Path.cwd() / path
