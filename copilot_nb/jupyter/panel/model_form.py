"""The chat panel's model form: a provider, a model and a key, instead of `%env KEY=...` in a cell.

The page sends the key once, in a custom message (`{"kind": "form", "do": "save", ...}`: `wire.Form`), never
in a synced trait: a widget's state can be saved into the notebook. The kernel hands it to the
key store (`models/key_store`) and forgets it; what goes back to the page says whether a key is
saved and where, never a character of it, and every sentence is checked for it. Saving switches
the kernel's model as `%copilot model` does, and the page then keeps the provider and model in
JupyterLab's settings (the extension's `copilot-nb:model`), which new kernels read
(`agent/model_setting`).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable

from ...agent.model_setting import model_setting
from ...agent.model_spec import OFFLINE
from ...agent.model_strings import PROVIDERS, resolve_model, split_spec
from ...agent.session import CopilotSession
from ...errors import CopilotError
from ...models.key_store import KeyStatus, forget_key, key_status, save_key
from ...models.provider import Provider, chat_names
from .wire import ChosenModel, Form, FormMessage, FormView, KeyView, ProviderView, ToPage


def offered() -> tuple[str, ...]:
    """The providers the form offers: every chat provider, packages' too, but the offline demo."""
    return tuple(name for name in chat_names(PROVIDERS) if name not in OFFLINE)


LIST_TIMEOUT = 10.0
"""Seconds a provider's model list may take before the form says to type the name."""
MAX_LISTED = 500
_MODEL = re.compile(r"[^\s\x00-\x1f\x7f]{1,200}")
"""A model name: one word of up to 200 printable characters (`qwen2.5-coder:1.5b` included)."""
REDACTED = "[the key]"


class ModelForm:
    """The kernel's side of one panel's model form: what it shows, Save, Forget and the list."""

    def __init__(
        self,
        session: CopilotSession,
        send: Callable[[ToPage], None],
        chosen: Callable[[str], None],
    ) -> None:
        self.session = session
        self.send = send
        """Sends a custom message to the panel's views."""
        self.chosen = chosen
        """Makes this spec the kernel's model, as `%copilot model` does (the panel's picker
        follows); CopilotError when it cannot be used."""
        self._listing: asyncio.Task[None] | None = None

    # --- messages ---------------------------------------------------------------------------

    def handle(self, message: Form) -> None:
        """One message of the form; never raises, and never lets a key into what it sends. The
        answer names the view that asked, so only that one shows what was said."""
        key, view, provider = message.key, message.view.strip(), message.provider.strip()
        try:
            if message.do == "save":
                said, outcome, chosen = self.save(provider, message.model.strip(), key)
                self._answer(view, said, outcome, chosen)
            elif message.do == "forget":
                self._answer(view, *self.forget(provider))
            elif message.do == "models":
                self.list_models(provider)
            else:  # "state": what the form shows, nothing said
                self._answer(view, "", "")
        except Exception as exc:  # a bug of ours: said in the form, the key left out
            said = f"Something went wrong in the kernel ({type(exc).__name__}: {exc})."
            self._answer(view, _redacted(said, key), "error")

    def _answer(
        self, view: str, said: str, outcome: str, chosen: ChosenModel | None = None
    ) -> None:
        message: FormMessage = {
            "kind": "form",
            "form": self.state(),
            "view": view,
            "said": said,
            "outcome": outcome,
        }
        if chosen is not None:
            message["chosen"] = chosen  # the page keeps it in JupyterLab's settings
        self.send(message)

    # --- what the form shows ----------------------------------------------------------------

    def state(self) -> FormView:
        """Everything the form shows, no key in it: the chat providers with each one's key
        status or sign-in sentence, the model now, and JupyterLab's setting."""
        provider, model = split_spec(self.session.current_model_spec())
        setting = model_setting()
        return {
            "providers": [_provider_state(PROVIDERS[name]) for name in offered()],
            "provider": provider if provider in PROVIDERS else "",
            "model": model if provider in PROVIDERS else "",
            "setting": setting.spec,
            "problem": setting.problem,
        }

    # --- Save, Forget, the list -------------------------------------------------------------

    def save(self, provider: str, model: str, key: str) -> tuple[str, str, ChosenModel | None]:
        """Keep the key (if one was typed) and make `provider:model` the kernel's model."""
        entry = PROVIDERS.get(provider)
        if entry is None or entry.chat is None:
            return f"Choose a provider: {', '.join(offered())}.", "error", None
        if not _MODEL.fullmatch(model):
            return (
                "Name a model (one word, e.g. gpt-4o), or choose one from the list.",
                "error",
                None,
            )
        spec = f"{provider}:{model}"
        said: list[str] = []
        if key.strip():
            if not entry.key_env:
                return f"{provider} takes no key here. {entry.sign_in}", "error", None
            try:
                where = save_key(entry.key_env[0], key)
            except CopilotError as exc:
                return _redacted(str(exc), key), "error", None
            except OSError as exc:
                why = f"The key could not be saved ({exc.strerror or exc}); nothing changed."
                return _redacted(why, key), "error", None
            said.append(f"Key saved in {where}.")
        try:
            self.chosen(spec)  # as `%copilot model SPEC` does: checked now, not at the next turn
        except CopilotError as exc:
            said.append(f"{spec} cannot be used: {exc}")
            return _redacted(" ".join(said), key), "error", None
        said.insert(0, f"{spec} is the model now.")
        said.append(_environment_note(entry))
        return (
            _redacted(" ".join(s for s in said if s), key),
            "ok",
            {
                "provider": provider,
                "model": model,
            },
        )

    def forget(self, provider: str) -> tuple[str, str]:
        """Forget the key saved for `provider`."""
        entry = PROVIDERS.get(provider)
        if entry is None or not entry.key_env:
            return "There is no saved key to forget for this provider.", "error"
        name = entry.key_env[0]
        if not forget_key(name):
            return f"No key was saved for {name}.", "ok"
        still = (
            " It is still set in this kernel's environment, which is used."
            if (key_status(name).in_environment)
            else ""
        )
        return f"The saved key for {name} is forgotten.{still}", "ok"

    def list_models(self, provider: str) -> asyncio.Task[None] | None:
        """Ask the provider for its models in a task (the newest request only); the page gets
        `{"models": {provider, ids, note}}` and offers them, or says to type the name."""
        entry = PROVIDERS.get(provider)
        if entry is None or entry.chat is None:
            return None
        if self._listing is not None:
            self._listing.cancel()
        self._listing = asyncio.get_running_loop().create_task(self._list(entry))
        return self._listing

    async def _list(self, entry: Provider) -> None:
        ids: list[str] = []
        note = ""
        if entry.list_models is None:
            note = f"{entry.name} has no model list here: type the model's name."
        else:
            try:
                model = resolve_model(f"{entry.name}:models")
                try:
                    found = await asyncio.wait_for(entry.list_models(model), LIST_TIMEOUT)
                finally:
                    await model.aclose()
                ids = sorted({str(i) for i in found if _MODEL.fullmatch(str(i))})[:MAX_LISTED]
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # unreachable, refused, not signed in: type the name
                why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                note = (
                    f"The list of {entry.name}'s models could not be read ({why}): type the name."
                )
        self.send({"kind": "models", "provider": entry.name, "ids": ids, "note": note})


def _provider_state(entry: Provider) -> ProviderView:
    """One provider as the form shows it: its key's status (never the key) or how to sign in."""
    key = _key_state(key_status(entry.key_env[0])) if entry.key_env else None
    return {"name": entry.name, "sign_in": entry.sign_in, "key": key}


def _key_state(status: KeyStatus) -> KeyView:
    return {
        "name": status.name,
        "saved": status.saved,
        "where": status.where,
        "environment": status.in_environment,
        "problem": status.problem,
    }


def _environment_note(entry: Provider) -> str:
    """Which key the next request sends, where the form's own does not tell: the environment's
    over the saved one, or none at all."""
    if not entry.key_env:
        return ""
    name = entry.key_env[0]
    status = key_status(name)
    if status.in_environment and status.saved:
        return f"{name} is also set in this kernel's environment, and that one is used."
    if not status.in_environment and not status.saved:
        return f"No key is saved or set for {name}: requests go without one."
    return ""


def _redacted(text: str, key: str) -> str:
    """`text` without the key or any long piece of it (an error may quote what it was given)."""
    key = key.strip()
    if len(key) < 4:
        return text
    text = text.replace(key, REDACTED)
    for size in (16, 8):  # a quoted fragment (`'sk-abc…'` cut short) is left out as well
        for start in range(0, max(1, len(key) - size + 1)):
            piece = key[start : start + size]
            if len(piece) == size and piece in text:
                text = text.replace(piece, REDACTED)
    return text


__all__ = ["ModelForm"]
