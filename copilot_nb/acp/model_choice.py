"""The model as an ACP config option: the session's model first, then what its provider lists
(best effort, bounded: a provider that does not answer leaves the one model offered)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence

from acp.schema import SessionConfigOptionSelect, SessionConfigSelectOption

from ..agent.model_strings import PROVIDERS, resolve_model, split_spec

MODEL = "model"
LIST_WAIT = 5.0
"""Seconds a provider has to list its models before the picker offers only the current one."""

_log = logging.getLogger(__name__)


def model_option(current: str, choices: Sequence[str] = ()) -> SessionConfigOptionSelect:
    """The picker: `current` selected, each choice once, in the provider's order."""
    values = list(dict.fromkeys([current, *choices]))
    return SessionConfigOptionSelect(
        type="select",
        id=MODEL,
        name="Model",
        category="model",
        description="provider:model, as %copilot model takes it",
        current_value=current,
        options=[SessionConfigSelectOption(value=v, name=v) for v in values],
    )


async def listed(spec: str) -> list[str]:
    """Model strings the provider of `spec` lists (`openai:gpt-4o`, ...), or [] if it cannot."""
    entry = PROVIDERS.get(split_spec(spec)[0])
    if entry is None or entry.list_models is None:
        return []
    provider = spec.partition(":")[0]
    try:
        model = resolve_model(spec)
        try:
            ids = await asyncio.wait_for(entry.list_models(model), LIST_WAIT)
        finally:
            await model.aclose()
    except Exception as exc:  # a provider's refusal or silence: the picker offers what it has
        _log.info("the models of %s could not be listed: %s", provider, exc)
        return []
    return [f"{provider}:{model_id}" for model_id in ids]
