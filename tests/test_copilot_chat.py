"""CopilotChat against a loopback GitHub: token exchange, renewal, headers, models, an agent turn."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest

from copilot_nb import Agent, AuthError, ConfigError, ModelHTTPError
from copilot_nb.agent.model_strings import resolve_model
from copilot_nb.jupyter.commands.login import show_models
from copilot_nb.models.copilot.chat import CopilotChat, initiator, parse_models
from copilot_nb.testing import call, reply
from copilot_nb.testing.github_fake import COPILOT_MODELS, FakeGitHub

HI = [{"role": "user", "content": "hi"}]


pytestmark = pytest.mark.usefixtures("copilot_home")


class Clock:
    """Wall-clock time that a test can move forward."""

    def __init__(self) -> None:
        self.shift = 0.0

    def __call__(self) -> float:
        return time.time() + self.shift


def lower(headers) -> dict[str, str]:
    return {k.lower(): v for k, v in headers.items()}


def exchanges(fake: FakeGitHub) -> list:
    return [r for r in fake.requests if r.path == "/copilot_internal/v2/token"]


# --- the token exchange ---------------------------------------------------------------------


async def test_one_exchange_serves_many_requests_and_sets_the_endpoint(github):
    fake = github([reply("one"), reply("two")])
    model = fake.model()
    assert (await model.complete(HI)).text == "one"
    assert (await model.complete(HI)).text == "two"

    assert fake.exchanges == model.auth.exchanges == 1
    (exchange,) = exchanges(fake)
    assert exchange.headers["Authorization"] == "token gho_fake_preset"
    assert model.base_url == fake.api_url, "the API base comes from endpoints.api"
    assert [r.path for r in fake.chat_requests] == ["/chat/completions"] * 2
    await model.aclose()


async def test_concurrent_requests_share_one_exchange(github):
    fake = github()
    model = fake.model()
    tokens = await asyncio.gather(*(model.copilot_token() for _ in range(8)))
    assert len({t.value for t in tokens}) == 1
    assert fake.exchanges == 1
    await model.aclose()


async def test_the_token_is_renewed_at_refresh_in(github):
    fake = github(token_lifetime=1800, refresh_in=1500)
    clock = Clock()
    model = fake.model(clock=clock)
    first = await model.copilot_token()
    clock.shift = 1490
    assert await model.copilot_token() == first
    clock.shift = 1510
    assert (await model.copilot_token()).value != first.value
    assert fake.exchanges == 2
    await model.aclose()


async def test_the_token_is_renewed_a_minute_before_it_expires(github):
    fake = github(token_lifetime=1800, refresh_in=1800)
    clock = Clock()
    model = fake.model(clock=clock)
    first = await model.copilot_token()
    clock.shift = 1800 - 70
    assert await model.copilot_token() == first
    clock.shift = 1800 - 50
    assert (await model.copilot_token()).value != first.value
    await model.aclose()


async def test_a_refused_token_is_renewed_once_even_when_many_ask_at_once(github):
    fake = github()
    model = fake.model()
    first = await model.copilot_token()
    renewed = await asyncio.gather(*(model.auth.token(refused=first) for _ in range(5)))
    assert {t.value for t in renewed} != {first.value}
    assert len({t.value for t in renewed}) == 1
    assert fake.exchanges == 2
    await model.aclose()


async def test_a_401_from_the_api_renews_the_token_and_repeats_the_request(github):
    fake = github([reply("before"), reply("after")])
    model = fake.model()
    assert (await model.complete(HI)).text == "before"
    fake.revoke_copilot_tokens()
    assert (await model.complete(HI)).text == "after"
    assert fake.exchanges == 2
    first, second = (lower(r.headers)["authorization"] for r in fake.chat_requests)
    assert first != second
    await model.aclose()


async def test_a_token_refused_twice_is_an_auth_error(github):
    fake = github(token_lifetime=0)  # every token the fake issues has already expired
    model = fake.model()
    with pytest.raises(AuthError, match="token expired"):
        await model.complete(HI)
    chats = [r for r in fake.requests if r.path.endswith("/chat/completions")]
    assert len(chats) == 2, "renewed once inside the request, then the refusal is shown"
    await model.aclose()


async def test_the_auth_renews_a_token_that_expires_mid_conversation(github):
    fake = github([reply("one"), reply("two")], token_lifetime=1800, refresh_in=1500)
    clock = Clock()
    model = fake.model(clock=clock)
    assert (await model.complete(HI)).text == "one"
    clock.shift = 1510  # past refresh_in: renewed before the request is sent
    assert (await model.complete(HI)).text == "two"
    first, second = (lower(r.headers)["authorization"] for r in fake.chat_requests)
    assert first != second and fake.exchanges == 2
    await model.aclose()


def test_the_copilot_auth_refuses_a_synchronous_client(github):
    fake = github()
    with httpx.Client() as client, pytest.raises(RuntimeError, match="AsyncClient"):
        client.get(f"{fake.api_url}/models", auth=fake.model().auth)
    assert fake.requests == []


async def test_not_signed_in_says_run_copilot_login(github):
    fake = github()
    model = CopilotChat("gpt-4o", hosts=fake.hosts)
    with pytest.raises(AuthError, match="%copilot login"):
        await model.complete(HI)
    assert fake.requests == [], "nothing is sent without a GitHub token"


async def test_a_rejected_github_token_names_its_source(github, monkeypatch):
    fake = github()
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_personal")
    model = CopilotChat("gpt-4o", hosts=fake.hosts)
    with pytest.raises(AuthError) as caught:
        await model.complete(HI)
    assert "GITHUB_TOKEN" in str(caught.value) and "%copilot login" in str(caught.value)
    assert caught.value.status == 401


async def test_an_account_without_copilot_is_told_so(github):
    fake = github(reject_exchange=404)
    model = fake.model()
    with pytest.raises(AuthError, match="no Copilot access"):
        await model.copilot_token()


# --- what reaches the Copilot API -----------------------------------------------------------


async def test_the_copilot_headers_reach_the_api(github):
    fake = github([reply("", call("list_directory", id="l", path=".")), reply("done")])
    model = fake.model()
    agent = Agent(model=model, workspace=".")
    assert await agent.ask("look around") == "done"

    user_round, tool_round = (lower(r.headers) for r in fake.chat_requests)
    token = next(iter(fake.copilot_tokens))
    assert user_round["authorization"] == f"Bearer {token}"
    assert user_round["copilot-integration-id"] == "vscode-chat"
    assert user_round["editor-version"] == "vscode/1.107.0"
    assert user_round["editor-plugin-version"] == "copilot-chat/0.35.0"
    assert user_round["user-agent"] == "GitHubCopilotChat/0.35.0"
    assert user_round["openai-intent"] == "conversation-panel"
    assert (user_round["x-initiator"], tool_round["x-initiator"]) == ("user", "agent")
    assert user_round["x-request-id"] != tool_round["x-request-id"]
    assert fake.chat_requests[0].body["model"] == "gpt-4o"
    fake.assert_complete()
    await model.aclose()


async def test_the_fake_refuses_requests_without_editor_headers(github):
    fake = github()
    token = (await fake.model().copilot_token()).value
    async with httpx.AsyncClient() as client:
        response = await client.post(
            f"{fake.api_url}/chat/completions",
            json={"model": "gpt-4o", "messages": HI},
            headers={"Authorization": f"Bearer {token}"},
        )
    assert response.status_code == 400
    assert response.text == "bad request: missing Editor-Version header for IDE auth"


def test_initiator_is_user_only_when_the_user_spoke_last():
    assert initiator([]) == "user"
    assert initiator(HI) == "user"
    assert initiator([*HI, {"role": "tool", "tool_call_id": "x", "content": "ok"}]) == "agent"


# --- models ---------------------------------------------------------------------------------


async def test_list_models_reads_limits_tools_and_picker(github):
    fake = github()
    model = fake.model()
    models = {m.id: m for m in await model.list_models()}
    assert list(models) == [m["id"] for m in COPILOT_MODELS]
    gpt = models["gpt-4o"]
    assert (gpt.name, gpt.vendor, gpt.kind) == ("GPT-4o", "Azure OpenAI", "chat")
    assert (gpt.context_window, gpt.max_prompt_tokens, gpt.max_output_tokens) == (
        128000,
        64000,
        4096,
    )
    assert gpt.tool_calls and gpt.streaming and gpt.picker_enabled and gpt.enabled
    assert not models["o3-mini"].picker_enabled
    assert not models["gemini-2.5-pro"].enabled and models["gemini-2.5-pro"].preview
    assert models["text-embedding-3-small"].kind == "embeddings"
    listing = next(r for r in fake.requests if r.path.endswith("/models"))
    assert listing.headers["Copilot-Integration-Id"] == "vscode-chat"
    await model.aclose()


def test_parse_models_tolerates_missing_and_odd_fields():
    payload = {
        "data": [
            {"id": "bare"},
            {"id": "odd", "capabilities": {"limits": {"max_context_window_tokens": True}}},
            {"name": "no id"},
            "junk",
        ]
    }
    bare, odd = parse_models(payload)
    assert (bare.id, bare.name, bare.context_window, bare.tool_calls) == (
        "bare",
        "bare",
        None,
        False,
    )
    assert odd.context_window is None
    assert parse_models({"data": None}) == parse_models([]) == []


# --- as a model string ----------------------------------------------------------------------


async def test_copilot_model_string_runs_an_agent_turn(github, monkeypatch, tmp_path):
    (tmp_path / "a.py").write_text("print(1)\n")
    fake = github([reply("", call("read_file", id="r", path="a.py")), reply("It prints 1.")])
    for name, value in fake.environ.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("COPILOT_NB_GITHUB_TOKEN", fake.add_github_token("gho_from_env"))

    model = resolve_model("copilot:gpt-4o")
    assert isinstance(model, CopilotChat) and model.name == "gpt-4o"
    agent = Agent(model=model, workspace=tmp_path)
    assert await agent.ask("what does a.py do?") == "It prints 1."
    assert fake.chat_requests[1].messages[-1]["content"].endswith("print(1)")
    fake.assert_complete()
    await model.aclose()


def test_unknown_provider_lists_copilot():
    with pytest.raises(ConfigError, match="copilot"):
        resolve_model("nosuch:model")


async def test_an_api_refusal_carries_the_api_message(github):
    fake = github(required_headers=("X-Never-Sent",))
    model = fake.model()
    with pytest.raises(ModelHTTPError) as caught:
        await model.complete(HI)
    assert caught.value.status == 400 and "X-Never-Sent" in str(caught.value)
    await model.aclose()


# --- `%copilot models` outside a kernel -----------------------------------------------------


def test_models_command_shows_copilot_chat_models_as_a_table(github, monkeypatch, capsys):
    fake = github()
    for name, value in {**fake.environ, "COPILOT_NB_GITHUB_TOKEN": fake.add_github_token()}.items():
        monkeypatch.setenv(name, value)
    show_models("copilot")
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "GitHub Copilot: 8 chat models; use one as copilot:<model>"
    assert lines[1].split() == [
        "model",
        "name",
        "vendor",
        "context",
        "max",
        "output",
        "tools",
        "endpoint",
        "premium",
        "notes",
    ]
    assert lines[2].split()[:6] == ["gpt-4o", "GPT-4o", "Azure", "OpenAI", "128k", "4k"]
    assert lines[-1].startswith("o3-mini"), "models outside the editors' picker come last"
    assert "disabled: enable it" in next(line for line in lines if "gemini" in line)
    assert next(line for line in lines if line.startswith("o1-mini")).split()[6] == "—"


def test_models_command_lists_an_openai_compatible_server(serve, monkeypatch, capsys):
    server = serve([], model_name="qwen3:8b")
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    show_models("openai")
    assert capsys.readouterr().out.splitlines() == [
        f"openai models at {server.url}:",
        "  qwen3:8b",
    ]


async def test_the_context_window_is_learnt_from_the_model_list(github):
    from copilot_nb.agent.context.window import model_budget

    fake = github([reply("one")])
    model = fake.model()
    assert model.context_window is None
    await model.complete(HI)
    assert (model.context_window, model.max_prompt_tokens) == (128000, 64000)
    assert model_budget(model).window == 128000
    await model.aclose()
