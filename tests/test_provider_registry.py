"""The providers are one table of rows: each row builds its wires on an endpoint that holds what
the row says (its key variables, its address, its sign-in sentence, its window source, its
listing, the policy), lists models against a loopback fake, and a provider with a key of its own
is one more row, in a copy of the table or registered by an installed package's entry point."""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

import copilot_nb
from copilot_nb import ConfigError
from copilot_nb.agent.ghost_text.model_choice import resolve_fill
from copilot_nb.agent.model_strings import PROVIDERS, resolve_model, turn_note
from copilot_nb.agent.session import CopilotSession
from copilot_nb.errors import AuthError, PolicyError
from copilot_nb.events import Done
from copilot_nb.jupyter.commands.login import model_choices, show_models
from copilot_nb.models.endpoint import Endpoint, Key
from copilot_nb.models.openai.chat import OpenAIChat
from copilot_nb.models.openai.fim_completions import OpenAICompletions
from copilot_nb.models.provider import HOOK, Provider, Providers, chat_names
from copilot_nb.models.providers import BUILT_IN, OPENAI_CHAT, OPENAI_FILL, server_ids
from copilot_nb.offline import OFFLINE_NOTE
from copilot_nb.testing import ScriptedRequest, fail, reply
from copilot_nb.testing.github_fake import FakeGitHub
from copilot_nb.testing.ollama_fake import OllamaServer
from copilot_nb.testing.server import ScriptedServer
from tests import policy_files
from tests.helpers import Answering

policy_file = policy_files.policy_file


@pytest.fixture(autouse=True)
def private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No real sign-in or saved key of the developer's can leak into a test."""
    monkeypatch.setenv("COPILOT_NB_CONFIG_DIR", str(tmp_path / "config"))


def built(provider: Provider) -> list[Any]:
    """Every wire the provider builds: its chat model and its fill-in-the-middle wire."""
    wires: list[Any] = []
    if provider.chat is not None:
        wires.append(resolve_model(f"{provider.name}:some-model"))
    if provider.fill is not None:
        wires.append(provider.build_fill("some-codex"))
    return wires


ROWS = [row for row in PROVIDERS.values() if row.name != "offline"]


@pytest.mark.parametrize("provider", ROWS, ids=[row.name for row in ROWS])
def test_each_provider_builds_wires_on_an_endpoint_that_reads_what_its_row_says(
    provider: Provider, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key in provider.keys:
        monkeypatch.delenv(key.env, raising=False)
    if provider.base_url_env:
        monkeypatch.delenv(provider.base_url_env, raising=False)
    wires = built(provider)
    assert wires, f"{provider.name} builds neither a chat model nor a fill wire"
    for wire in wires:
        endpoint = wire.endpoint
        assert endpoint.provider is provider and wire.provider == provider.name
        assert endpoint.base_url == provider.base_url.rstrip("/")
        assert endpoint.auth_headers() == {}
        assert endpoint.sign_in_hint().endswith(provider.sign_in)
        if provider.base_url_env:
            monkeypatch.setenv(provider.base_url_env, "http://elsewhere.test/v1/")
            assert endpoint.base_url == "http://elsewhere.test/v1", "read at each request"
            assert provider.base_url_env in endpoint.reach_hint()
            monkeypatch.delenv(provider.base_url_env)
        for key in reversed(provider.keys):  # the first that is set wins
            monkeypatch.setenv(key.env, f"key-of-{key.env}")
        if provider.keys:
            first = provider.keys[0]
            assert endpoint.auth_headers() == first.headers(f"key-of-{first.env}")
            assert f"Check {first.env}" in endpoint.sign_in_hint()
        for key in provider.keys:
            monkeypatch.delenv(key.env)


@pytest.mark.parametrize("provider", ROWS, ids=[row.name for row in ROWS])
def test_where_a_window_comes_from_decides_whether_a_server_is_asked(provider: Provider) -> None:
    for wire in built(provider):
        asks_server = getattr(wire, "local_limits", False)  # only the OpenAI-style wires ask
        assert asks_server == (provider.window in ("server", "ollama"))


def test_unknown_providers_are_listed_from_the_table() -> None:
    with pytest.raises(ConfigError) as caught:
        resolve_model("nosuch:model")
    assert str(caught.value).endswith(f"use one of: {', '.join(chat_names(PROVIDERS))}")
    assert chat_names(PROVIDERS) == (
        "openai",
        "openai-responses",
        "ollama",
        "anthropic",
        "copilot",
        "offline",
    )


def test_the_offline_demo_is_a_row_that_names_its_model_and_its_note() -> None:
    for spec in ("offline", "demo", "OFFLINE"):
        model = resolve_model(spec)
        assert (model.provider, model.name) == ("offline", PROVIDERS["offline"].default_model)
        assert model.endpoint is None, "a cassette never records the demo"
        assert turn_note(model) == OFFLINE_NOTE
    assert turn_note(resolve_model("openai:gpt-4o")) == ""


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


# --- a provider with a key of its own is one row ----------------------------------------------


def acme_row(url: str) -> Provider:
    """An OpenAI-compatible service with a key of its own: one row, no code."""
    return Provider(
        name="acme",
        chat=OPENAI_CHAT,
        fill=OPENAI_FILL,
        keys=(Key("ACME_API_KEY"),),
        base_url_env="ACME_BASE_URL",
        base_url=url,
        sign_in="Set ACME_API_KEY to a key from the Acme console.",
        list_models=server_ids,
        window="name",
    )


def acme_registry(url: str) -> Providers:
    """The table as it is, plus the acme row."""
    return Providers((*PROVIDERS.values(), acme_row(url)), hook="")


def needs_key(key: str, answer: str) -> Any:
    """A script step that answers only a request carrying `Bearer <key>`."""

    def respond(request: ScriptedRequest) -> Any:
        given = {k.lower(): v for k, v in request.headers.items()}.get("authorization")
        return reply(answer) if given == f"Bearer {key}" else fail(401, "Incorrect API key.")

    return respond


async def test_a_turn_runs_through_a_provider_added_as_one_row_with_its_own_key(
    serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = serve([needs_key("acme-key", "Hello from Acme.")] * 2)  # refused, then answered
    registry = acme_registry(server.url)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("ACME_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "not-acme's")
    session = CopilotSession(
        SimpleNamespace(user_ns={}), resolve=lambda spec: resolve_model(spec, registry=registry)
    )
    session.toolset_factories = session.toolset_factories[:1]  # files only: no kernel here

    refused = [e async for e in session.turn("hi", approver=Answering(), model="acme:big")]
    assert "Set ACME_API_KEY to a key from the Acme console." in refused[-1].error

    monkeypatch.setenv("ACME_API_KEY", "acme-key")  # the next request reads it
    events = [e async for e in session.turn("hi", approver=Answering(), model="acme:big")]
    assert events[-1] == Done(text="Hello from Acme.")
    model = session.model("acme:big")
    assert (model.provider, model.name, model.endpoint.base_url) == ("acme", "big", server.url)
    fill = resolve_fill("acme:coder", resolve_model, registry=registry)
    assert isinstance(fill, OpenAICompletions) and (fill.provider, fill.name) == ("acme", "coder")
    with pytest.raises(ConfigError, match="unknown provider 'acme'"):  # the real table is as it was
        resolve_model("acme:big")
    await model.aclose()


def test_a_provider_added_as_a_row_is_under_the_policy(policy_file) -> None:
    policy_file({"providers": ["openai"]})
    registry = acme_registry("http://127.0.0.1:9/v1")
    with pytest.raises(PolicyError, match="acme"):
        resolve_model("acme:big-model", registry=registry)
    with pytest.raises(PolicyError, match="acme"):
        resolve_fill("acme:coder", resolve_model, registry=registry)


def test_a_provider_added_as_a_row_lists_its_models(serve, capsys) -> None:
    server = serve([], model_name="acme-large")
    show_models("acme", registry=acme_registry(server.url))
    assert capsys.readouterr().out.splitlines() == [
        f"acme models at {server.url}:",
        "  acme-large",
    ]


async def test_a_key_the_server_refuses_names_the_row_s_variable(
    serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = serve([needs_key("right", "never")])
    monkeypatch.setenv("ACME_API_KEY", "wrong")
    model = acme_row(server.url).build_chat("big")
    with pytest.raises(AuthError, match=r"Check ACME_API_KEY: the key was refused\. Set ACME"):
        await model.complete([{"role": "user", "content": "hi"}])
    await model.aclose()


# --- a provider an installed package registers --------------------------------------------------


PLUGIN = """
from copilot_nb.models.endpoint import Key
from copilot_nb.models.provider import Provider
from copilot_nb.models.providers import OPENAI_CHAT


def register_providers(register):
    register(Provider(name="plugged", chat=OPENAI_CHAT, keys=(Key("PLUGGED_API_KEY"),),
                      base_url="{url}", sign_in="Set PLUGGED_API_KEY.", window="name"))
    register(Provider(name="openai", chat=OPENAI_CHAT, sign_in="an impostor", window="name"))
"""


def installed(folder: Path, url: str) -> Path:
    """A distribution in `folder` as pip leaves one: the module, and a dist-info whose
    `entry_points.txt` names its function under the providers' group."""
    folder.mkdir()
    (folder / "plugged_provider.py").write_text(PLUGIN.replace("{url}", url))
    info = folder / "plugged_provider-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plugged-provider\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        f"[{HOOK}]\nplugged = plugged_provider:register_providers\n"
    )
    return folder


async def test_an_installed_package_adds_a_provider_through_its_entry_point(
    serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = serve([needs_key("plug-key", "Hello from a plugin.")])
    monkeypatch.syspath_prepend(str(installed(tmp_path / "site", server.url)))
    monkeypatch.setenv("PLUGGED_API_KEY", "plug-key")
    table = Providers(list(PROVIDERS.values()))
    table["openai"]  # a built-in name: the installed packages are not read for it
    assert table._added is None
    with pytest.warns(UserWarning, match="registers provider 'openai', which is already taken"):
        names = list(table)
    assert names[-1] == "plugged" and table["openai"] is PROVIDERS["openai"]
    model = resolve_model("plugged:tiny", registry=table)
    assert (model.provider, model.endpoint.base_url) == ("plugged", server.url)
    assert (
        await model.complete([{"role": "user", "content": "hi"}])
    ).text == "Hello from a plugin."
    await model.aclose()
    sys.modules.pop("plugged_provider", None)


def test_a_package_whose_entry_point_fails_leaves_out_only_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = installed(tmp_path / "site", "http://127.0.0.1:9/v1")
    (site / "plugged_provider.py").write_text("raise ImportError('no such wheel')\n")
    monkeypatch.syspath_prepend(str(site))
    table = Providers(list(BUILT_IN.values()))
    with pytest.warns(UserWarning, match=r"plugged = plugged_provider.*ImportError: no such wheel"):
        assert "plugged" not in table
    assert list(table) == list(BUILT_IN)
    sys.modules.pop("plugged_provider", None)


# --- one holder of each fact ----------------------------------------------------------------------


def test_no_code_asks_a_model_for_its_provider_its_offline_flag_or_its_connections() -> None:
    asked = []
    for path in Path(copilot_nb.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "getattr"
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and node.args[1].value in ("provider", "offline", "_http")
            ):
                asked.append(f"{path.name}:{node.lineno}")
    assert asked == [], "a Model declares its provider and endpoint"


def test_an_endpoint_built_for_another_model_keeps_what_code_gave() -> None:
    endpoint = BUILT_IN["openai"].endpoint("a", api_key="k", base_url="http://x.test/v1/")
    other = endpoint.for_model("b")
    assert isinstance(other, Endpoint) and other is not endpoint
    assert (other.model, other.api_key, other.base_url) == ("b", "k", "http://x.test/v1")
    assert OpenAIChat("m", endpoint=other).endpoint is other
