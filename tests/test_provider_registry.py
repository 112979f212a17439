"""The providers are one table: each entry in `models/providers.py` builds its models, says the
settings they read, signs in, lists models against a loopback fake, and a provider added to a
copy of the table is reachable through model strings, completions and `%copilot models` with no
other edit."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from copilot_nb import ConfigError
from copilot_nb.agent.ghost_text.model_choice import resolve_fill
from copilot_nb.agent.model_strings import resolve_model
from copilot_nb.errors import PolicyError
from copilot_nb.jupyter.commands.login import model_choices, show_models
from copilot_nb.models.env_settings import FromEnv
from copilot_nb.models.openai.chat import OpenAIChat
from copilot_nb.models.openai.fim_completions import OpenAICompletions
from copilot_nb.models.providers import PROVIDERS, Provider, chat_names
from copilot_nb.testing.github_fake import FakeGitHub
from copilot_nb.testing.ollama_fake import OllamaServer
from copilot_nb.testing.server import ScriptedServer
from tests import policy_files

policy_file = policy_files.policy_file


@pytest.fixture(autouse=True)
def private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No real sign-in of the developer's can leak into a test."""
    monkeypatch.setenv("COPILOT_NB_CONFIG_DIR", str(tmp_path / "config"))


def built(provider: Provider) -> list[Any]:
    """Every wire the provider builds: its chat model and its fill-in-the-middle wire."""
    wires: list[Any] = []
    if provider.chat is not None:
        wires.append(resolve_model(f"{provider.name}:some-model"))
    if provider.fill is not None:
        wires.append(provider.fill("some-codex"))
    return wires


def env_settings(wire: Any) -> dict[str, FromEnv[Any]]:
    """The wire's settings that are read from the environment now (not given in code)."""
    return {
        name: setting
        for name in dir(type(wire))
        if isinstance(setting := getattr(type(wire), name), FromEnv) and not setting.given(wire)
    }


@pytest.mark.parametrize("provider", PROVIDERS.values(), ids=list(PROVIDERS))
def test_each_provider_builds_wires_that_read_the_settings_it_lists(provider: Provider) -> None:
    wires = built(provider)
    assert wires, f"{provider.name} builds neither a chat model nor a fill wire"
    for wire in wires:
        assert wire.provider == provider.name
        settings = env_settings(wire)
        base = settings.pop("base_url", None)
        keys = tuple(name for setting in settings.values() for name in setting.names)
        assert sorted(keys) == sorted(provider.key_env)
        if provider.base_url_env:
            assert base is not None and base.names == (provider.base_url_env,)
            assert base.default == provider.base_url
        else:
            assert base is None, "its address is given in code, not read from a variable"


@pytest.mark.parametrize("provider", PROVIDERS.values(), ids=list(PROVIDERS))
def test_each_provider_says_how_to_sign_in_and_where_its_window_comes_from(
    provider: Provider,
) -> None:
    named = (*provider.key_env, provider.base_url_env, "%copilot login", "llama-server")
    assert any(word and word in provider.sign_in for word in named), provider.sign_in
    for wire in built(provider):
        hint = wire.sign_in_hint()  # one form on every wire: a method
        assert isinstance(hint, str) and hint
        asks_server = getattr(wire, "local_limits", False)
        assert asks_server == (provider.window in ("server", "ollama"))


def test_unknown_providers_are_listed_from_the_table() -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_model("nosuch:model")
    assert str(caught.value).endswith(f"use one of: {', '.join(chat_names(PROVIDERS))}, offline")
    assert chat_names(PROVIDERS) == ("openai", "openai-responses", "ollama", "anthropic", "copilot")


@pytest.fixture
def listing_server(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    """The provider's loopback fake, with the environment pointing its models at it; yields the
    model id the fake lists."""
    name = request.param
    if name == "copilot":
        fake = FakeGitHub().start()
        for variable, value in {
            **fake.environ,
            "COPILOT_NB_GITHUB_TOKEN": fake.add_github_token(),
        }.items():
            monkeypatch.setenv(variable, value)
        yield "gpt-4o"
    elif name == "ollama":
        fake = OllamaServer()
        fake.start()
        monkeypatch.setenv("OLLAMA_BASE_URL", fake.url)
        yield fake.model_name
    else:
        fake = ScriptedServer(model_name="qwen3:8b").start()
        monkeypatch.setenv("OPENAI_BASE_URL", fake.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
        yield fake.model_name
    fake.stop()


LISTING = [name for name, provider in PROVIDERS.items() if provider.list_models is not None]


@pytest.mark.parametrize("listing_server", LISTING, indirect=True, ids=LISTING)
async def test_each_listing_provider_lists_models_from_its_server(
    listing_server: str, request: pytest.FixtureRequest
) -> None:
    name = request.node.callspec.params["listing_server"]
    model = resolve_model(f"{name}:models")
    try:
        choices = await model_choices(f"{name}:models", model)
    finally:
        await model.aclose()
    assert f"{name}:{listing_server}" in choices


def test_the_listing_providers_are_the_servers_and_copilot() -> None:
    assert LISTING == ["openai", "openai-responses", "ollama", "copilot"]


# --- a provider added to a copy of the table ------------------------------------------------------


def acme_registry(url: str) -> dict[str, Provider]:
    """The table as it is, plus one provider: its chat and fill wires at `url`."""
    acme = Provider(
        name="acme",
        chat=lambda name: OpenAIChat(name, base_url=url, api_key="k", provider="acme"),
        fill=lambda name: OpenAICompletions(name, base_url=url, api_key="k", provider="acme"),
        key_env=("ACME_API_KEY",),
        sign_in="Set ACME_API_KEY.",
        list_models=lambda model: model.model_ids(),
        window="server",
    )
    return {**PROVIDERS, "acme": acme}


def test_a_provider_added_to_the_table_is_reached_through_model_strings_and_completions() -> None:
    registry = acme_registry("http://127.0.0.1:9/v1")
    model = resolve_model("acme:big-model", registry=registry)
    assert isinstance(model, OpenAIChat) and (model.provider, model.name) == ("acme", "big-model")
    fill = resolve_fill("acme:coder", resolve_model, registry=registry)
    assert isinstance(fill, OpenAICompletions) and fill.name == "coder"
    with pytest.raises(ConfigError, match="acme"):  # it is named among the choices
        resolve_model("nosuch:model", registry=registry)
    with pytest.raises(ConfigError, match="unknown provider 'acme'"):  # the real table is as it was
        resolve_model("acme:big-model")


def test_a_provider_added_to_the_table_is_under_the_policy(policy_file) -> None:
    policy_file({"providers": ["openai"]})
    with pytest.raises(PolicyError, match="acme"):
        resolve_model("acme:big-model", registry=acme_registry("http://127.0.0.1:9/v1"))


def test_a_provider_added_to_the_table_lists_its_models(serve, capsys) -> None:
    server = serve([], model_name="acme-large")
    show_models("acme", registry=acme_registry(server.url))
    assert capsys.readouterr().out.splitlines() == [
        f"acme models at {server.url}:",
        "  acme-large",
    ]
