"""A provider: one row that holds every fact of a service copilot_nb talks to, and builds the
endpoint each of its models sends through.

A provider is what a user names in `provider:model`: a service (OpenAI, Anthropic, GitHub
Copilot, DeepSeek) or a kind of local server (Ollama, llama.cpp). Its row says which wires speak
for it, the variables its key and address are read from, what a user does to sign in, where its
models' context windows come from and how its models are listed; the policy's check runs through
it. A wire is a class that speaks one protocol (`OpenAIChat` speaks Chat Completions for
OpenAI, Ollama, vLLM and Copilot alike) through the endpoint it is handed.

`Providers` is a table of rows that a package extends through the `copilot_nb.providers` entry
point (as llm's `register_models` hook): the entry point names a function that is called with
`register`, and registers a `Provider` with it. Those are read only when a name is not among the
table's own, so a kernel that uses a built-in provider never scans the installed packages.
"""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from importlib import import_module
from typing import Any

from ..policy import check_model
from .base import Model
from .endpoint import Endpoint, Key, WindowSource
from .fim import FillModel

HOOK = "copilot_nb.providers"
"""The entry-point group a package adds providers under."""


@dataclass(frozen=True, kw_only=True)
class Provider:
    """One provider: how its models are built, configured, signed in to, listed and sized."""

    name: str
    """The prefix of its model strings: `openai` in `openai:gpt-4o`."""
    sign_in: str
    """What a user does to use it, in one sentence: the key to set, or `%copilot login`; the
    hint of a refused or missing key (`Endpoint.sign_in_hint`)."""
    window: WindowSource
    """Where its models' context windows come from: a local server is asked (`server`,
    `ollama`), the others are not (`OpenAIChat.local_limits`)."""
    chat: Callable[[Endpoint], Model] | None = None
    """Builds its chat model on an endpoint; None: it only fills in the middle."""
    fill: Callable[[Endpoint], FillModel] | None = None
    """Builds its fill-in-the-middle wire; None: completions go through its chat model."""
    keys: tuple[Key, ...] = ()
    """The variables its key is read from at each request, first wins, and the header each is
    sent in."""
    base_url_env: str = ""
    """The variable that points it at another server, read at each request."""
    base_url: str = ""
    """Where it is when that variable is not set."""
    list_models: Callable[[Any], Awaitable[list[str]]] | None = None
    """The model ids it offers (a picker's choices), asked through one of its chat models."""
    catalog: Callable[[Any], Awaitable[Sequence[Any]]] | None = None
    """Its full model list with limits and prices, shown as a table; None: ids only."""
    default_model: str = ""
    """The model a string that names none (`offline`) means; "": it must name one."""
    note: str = ""
    """What every turn of its models says first (the offline demo says what it is)."""

    @property
    def key_env(self) -> tuple[str, ...]:
        """The names of the variables its key is read from, first wins (a form saves a key
        under the first)."""
        return tuple(key.env for key in self.keys)

    def check(self, model: str, base_url: str | None = None) -> None:
        """The administrator's policy for its `model` at `base_url` (PolicyError if refused)."""
        check_model(self.name, model, base_url)

    def endpoint(self, model: str, **given: Any) -> Endpoint:
        """The endpoint of one of its models; `given`: `Endpoint`'s settings given in code."""
        return Endpoint(self, model, **given)

    def build_chat(self, model: str, **given: Any) -> Model:
        """Its chat model for `model`, once the administrator's policy allows it."""
        if self.chat is None:
            raise ValueError(f"{self.name} has no chat model")
        self.check(model)  # the policy, before anything is built
        return self.chat(self.endpoint(model, **given))

    def build_fill(self, model: str, **given: Any) -> FillModel:
        """Its fill-in-the-middle wire for `model`, once the policy allows it."""
        if self.fill is None:
            raise ValueError(f"{self.name} has no fill-in-the-middle wire")
        self.check(model)
        return self.fill(self.endpoint(model, **given))


Registry = Mapping[str, Provider]


def chat_names(registry: Registry) -> tuple[str, ...]:
    """The providers whose models chat, in the table's order."""
    return tuple(name for name, provider in registry.items() if provider.chat is not None)


class Providers(Mapping[str, Provider]):
    """The table: its own rows, in order, then those packages register through `hook` ("":
    none), read the first time a name is not among its own or the whole table is listed."""

    def __init__(self, rows: Sequence[Provider], *, hook: str = HOOK) -> None:
        self._own = {row.name: row for row in rows}
        self._hook = hook
        self._added: dict[str, Provider] | None = None

    def __getitem__(self, name: str) -> Provider:
        if name in self._own:
            return self._own[name]
        return self._registered()[name]

    def __iter__(self) -> Iterator[str]:
        yield from self._own
        yield from self._registered()

    def __len__(self) -> int:
        return len(self._own) + len(self._registered())

    def _registered(self) -> dict[str, Provider]:
        if self._added is None:
            self._added = registered(self._hook, taken=set(self._own)) if self._hook else {}
        return self._added


def registered(group: str, *, taken: set[str]) -> dict[str, Provider]:
    """The providers that installed packages register under `group`, by name: each entry point
    is a function called with `register`. One that fails to load, or registers a name already
    taken, is left out with a warning that says which and why; the others still count."""
    from importlib.metadata import entry_points

    found: dict[str, Provider] = {}
    for point in entry_points(group=group):
        source = f"{point.name} = {point.value} ({group})"

        def register(provider: Provider, source: str = source) -> None:
            if not isinstance(provider, Provider):
                raise TypeError(f"register() takes a Provider, not {type(provider).__name__}")
            if provider.name in taken or provider.name in found:
                warnings.warn(
                    f"copilot_nb: {source} registers provider {provider.name!r}, which is "
                    "already taken; it is left out",
                    stacklevel=2,
                )
                return
            found[provider.name] = provider

        try:
            point.load()(register)
        except Exception as exc:  # a package's bug must not take the other providers down
            warnings.warn(
                f"copilot_nb: the provider entry point {source} failed "
                f"({type(exc).__name__}: {exc}); its providers are left out",
                stacklevel=2,
            )
    return found


def wire(module: str, cls: str, **options: Any) -> Callable[[Endpoint], Any]:
    """A factory of `cls` from `module` (below `models/`, imported on first use: a kernel that
    talks to Ollama never loads the Anthropic or Copilot code) on an endpoint, with `options`."""

    def build(endpoint: Endpoint) -> Any:
        return getattr(import_module(f"{__package__}.{module}"), cls)(
            endpoint.model, endpoint=endpoint, **options
        )

    return build


def later(module: str, function: str) -> Callable[..., Any]:
    """`function` of `module` (below `models/`), imported when it is first called."""

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(import_module(f"{__package__}.{module}"), function)(*args, **kwargs)

    return call


__all__ = [
    "HOOK",
    "Key",
    "Provider",
    "Providers",
    "Registry",
    "WindowSource",
    "chat_names",
    "later",
    "registered",
    "wire",
]
