"""Inline completions in the kernel: the live channel's `complete` and `cancel_complete`
requests handed to the kernel's one `CompletionService` (`agent/ghost_text/service.py`).

Loaded at the first request, not at `%load_ext`. The model is the request's (`model`), else
`CopilotMagics.completion_model`, else the kernel's model (`%copilot model`); completions use
models of their own, apart from the conversation's: a fill wire's requests go into the notebook's
cassette only while it records, as lookups (`models/fim.py`), and a chat model's fallback never
does, since its requests would enter the turns' strict order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..kernel_bridge import hidden_names

if TYPE_CHECKING:
    from ..agent.ghost_text.service import CompletionService


def handle_request(view: Any, data: Mapping[str, Any]) -> None:
    """A request from an open document's comm (`view`: its `LiveView`), on the loop that got it."""
    completion_service().handle(data, view.comm.send, view)


def completion_service(shell: Any = None) -> CompletionService:
    """The kernel's completion service (one per shell), made on first use."""
    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
    service = getattr(shell, "_copilot_nb_completions", None)
    if service is None:
        service = shell._copilot_nb_completions = _make(shell)
    return service


def _make(shell: Any) -> CompletionService:
    from ..agent.ghost_text.service import CompletionService
    from ..agent.model_strings import default_model_spec, resolve_model

    def magics() -> Any:
        return shell.magics_manager.registry.get("CopilotMagics")

    def model_spec(requested: str | None) -> str:
        settings = magics()
        chosen = getattr(settings, "completion_model", "") if settings is not None else ""
        kernel = getattr(settings, "model", "") if settings is not None else ""
        return requested or chosen or kernel or default_model_spec()

    def namespace() -> tuple[Mapping[str, Any], Mapping[str, Any]]:
        return shell.user_ns, hidden_names(shell)

    return CompletionService(namespace=namespace, model_spec=model_spec, chat_model=resolve_model)


def usage_lines(shell: Any) -> list[str]:
    """What `%copilot usage` shows about completions ([] before the first one)."""
    service = getattr(shell, "_copilot_nb_completions", None)
    return service.usage.lines() if service is not None else []
