"""`%copilot context`: exactly what the next request carries besides the conversation.

The system prompt (ours, then each instruction file, in the order they are sent, then the
skills block, also shown alone) and the context block the request would start with, built now.
Shown as text in a safe HTML page: both are sent to the model as they are, so they are shown as
they are.
"""

from __future__ import annotations

import argparse
from typing import Any

from ...agent.prompt.assembly import preview
from ...agent.prompt.families import family_for, listed_family
from ...agent.session import CopilotSession
from ...errors import CopilotError
from ..safe_html import Rendered, escape


async def context(
    session: CopilotSession, args: argparse.Namespace | None = None, settings: Any = None
) -> None:
    """Show the system prompt and the context block the next request carries, built now."""
    from IPython.display import display

    spec = session.current_model_spec()
    model = spec.partition(":")[2] or spec
    mode = session.mode
    try:  # the family Copilot's model list gives, once it was read (never asked for here)
        listed = listed_family(session.model(spec))
    except CopilotError:
        listed = ""
    prompt = await preview(
        session.workspace(), session.shell, session.live, mode=mode, model=model, listed=listed
    )
    family = family_for(model, listed)
    own = ", ".join(t.name for t in family.own_tools(session.workspace())) or "none"
    files = ", ".join(f.shown + (" (cut)" if f.clipped else "") for f in prompt.files)
    head = f"instruction files, in order: {files}" if files else "no instruction files"
    block = prompt.block or "(nothing to say: no notebook, variables, files or git here)"
    sections = [
        (
            f"Model {spec}: the {family.name} family",
            f"mode: {mode}\nfamily instructions: {'yes' if family.instructions else 'none'}\n"
            f"family tools: {own}\ntool_search past {family.defer_threshold} tools",
        ),
        (f"System prompt ({len(prompt.system):,} characters; {head})", prompt.system),
        (
            f"Skills block, at the end of the system prompt ({len(prompt.skills):,} characters)",
            prompt.skills or "(no skills offered: %copilot skills lists what was found)",
        ),
        (f"Context block, before the next request ({len(prompt.block):,} characters)", block),
    ]
    html = "".join(
        f"<details open><summary>{escape(title)}</summary><pre>{escape(text)}</pre></details>"
        for title, text in sections
    )
    plain = "\n\n".join(f"--- {title}\n{text}" for title, text in sections)
    display(Rendered(html, plain))
