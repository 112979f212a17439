"""How the `copilot` provider's models are listed: the picker's ids and the catalog's table.

Apart from the provider table (`models/providers.py`), which names these without importing the
Copilot code: a kernel that never uses Copilot never loads it.
"""

from __future__ import annotations

from collections.abc import Sequence

from .catalog import CopilotModelInfo, choose_endpoint
from .chat import CopilotChat


async def copilot_catalog(model: CopilotChat) -> Sequence[CopilotModelInfo]:
    """Every model the account may use, with limits and prices (`%copilot models copilot`)."""
    return await model.list_models()


async def copilot_ids(model: CopilotChat) -> list[str]:
    """The chat models of the editors' picker that copilot_nb can ask through some endpoint."""
    return [
        m.id
        for m in await model.list_models()
        if m.kind == "chat" and m.picker_enabled and choose_endpoint(m, spoken=model.spoken)
    ]


__all__ = ["copilot_catalog", "copilot_ids"]
