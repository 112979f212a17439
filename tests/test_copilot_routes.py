"""Copilot as it is today: each model through an endpoint it lists, headers the API accepts.

Against the loopback fake of GitHub, which answers as the real API does (the samples in
tests/data/conformance/responses/copilot/): the model list names the endpoints per model, a
model asked on the wrong endpoint is refused with `unsupported_api_for_model`, and an
`Editor-Version` that is missing or names no known editor is refused in plain text.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest

from copilot_nb import Agent, CopilotChat, ModelError, ModelHTTPError
from copilot_nb.events import ModelResponse, Notice
from copilot_nb.jupyter.commands.login import copilot_table, model_choices
from copilot_nb.models.copilot.catalog import (
    CHAT,
    MESSAGES,
    PREFERENCE,
    RESPONSES,
    choose_endpoint,
    endpoint_label,
    parse_models,
)
from copilot_nb.models.copilot.headers import EditorHeaders
from copilot_nb.testing import call, reply
from copilot_nb.testing.github_fake import COPILOT_MODELS

SAMPLES = Path(__file__).parent / "data" / "conformance" / "responses" / "copilot"
HI = [{"role": "user", "content": "hi"}]


@pytest.fixture(autouse=True)
def private_home(copilot_home: None, monkeypatch: pytest.MonkeyPatch) -> None:
    """An Anthropic key of the developer's is never at hand either."""
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(name, raising=False)


def sample(name: str) -> dict:
    return json.loads((SAMPLES / name).read_text())


def lower(headers) -> dict[str, str]:
    return {k.lower(): v for k, v in headers.items()}


def posts(fake) -> list[str]:
    """The paths of the inference requests that reached the Copilot API, refused or not."""
    return [r.path.removeprefix("/copilot-api") for r in fake.requests if r.method == "POST"]


def listings(fake) -> int:
    return sum(r.path.endswith("/models") for r in fake.requests)


def with_endpoints(model_id: str, endpoints: list[str]) -> list[dict]:
    """The fake's model list, with `model_id` served through `endpoints`."""
    models = json.loads(json.dumps(COPILOT_MODELS))
    for entry in models:
        if entry["id"] == model_id:
            entry["supported_endpoints"] = endpoints
    return models


# --- the routing table (pure, on the real model list) ---------------------------------------


def test_the_real_model_list_routes_each_model_through_an_endpoint_it_lists():
    models = {m.id: m for m in parse_models(sample("models.json"))}
    route = {name: choose_endpoint(models[name]) for name in models}
    assert route["claude-sonnet-4.5"] == route["claude-opus-4.6"] == MESSAGES
    assert route["gpt-5.3-codex"] == route["gpt-5.1-codex-max"] == RESPONSES
    assert route["gpt-5.1"] == RESPONSES, "listed for both: Responses keeps reasoning items"
    assert route["gemini-3.1-pro-preview"] == CHAT
    assert route["gpt-4o"] == route["gpt-4.1"] == CHAT, "no endpoints listed: Chat Completions"
    assert models["gpt-5.3-codex"].endpoints == ("/responses", "ws:/responses")
    assert models["gpt-4o"].endpoints == ()
    multipliers = {name: models[name].premium_multiplier for name in ("gpt-4o", "gpt-5.4-mini")}
    assert multipliers == {"gpt-4o": 0.0, "gpt-5.4-mini": 0.33}
    assert models["claude-opus-4.6"].premium_multiplier == 3


def test_the_fakes_model_list_has_the_real_lists_shape():
    real = sample("models.json")["data"]
    keys = set().union(*(entry.keys() for entry in real))
    capability_keys = set().union(*(entry["capabilities"].keys() for entry in real))
    for entry in COPILOT_MODELS:
        assert set(entry) <= keys, entry["id"]
        assert set(entry["capabilities"]) <= capability_keys, entry["id"]
        assert set(entry["billing"]) <= {"is_premium", "multiplier", "restricted_to"}
    assert len(parse_models(sample("models.json"))) == len(real) == 41


def test_without_the_responses_api_a_responses_only_model_has_no_route():
    (codex,) = [m for m in parse_models(sample("models.json")) if m.id == "gpt-5.3-codex"]
    chat_and_messages = (MESSAGES, CHAT)
    assert choose_endpoint(codex, spoken=chat_and_messages) is None
    assert endpoint_label(codex, chat_and_messages) == "none we speak (/responses, ws:/responses)"
    assert endpoint_label(codex, PREFERENCE) == "responses"


def test_a_refused_endpoint_is_not_chosen_again():
    (claude,) = [m for m in parse_models(sample("models.json")) if m.id == "claude-sonnet-4"]
    assert choose_endpoint(claude, refused=[MESSAGES]) == CHAT
    assert choose_endpoint(claude, refused=[MESSAGES, CHAT]) is None
    assert choose_endpoint(None) == CHAT, "a model missing from the list speaks Chat Completions"


# --- each model through its endpoint, over loopback -----------------------------------------


async def test_a_chat_only_model_goes_to_chat_completions(github):
    fake = github([reply("", call("list_directory", id="l", path=".")), reply("done")])
    model = fake.model("gpt-4o")
    assert await Agent(model=model, workspace=".").ask("look") == "done"
    assert posts(fake) == ["/chat/completions"] * 2
    user_round, tool_round = (lower(r.headers) for r in fake.chat_requests)
    assert (user_round["x-initiator"], tool_round["x-initiator"]) == ("user", "agent")
    fake.assert_complete()
    await model.aclose()


async def test_claude_goes_to_messages_with_copilot_auth_and_headers(github):
    fake = github([reply("", call("list_directory", id="l", path=".")), reply("done")])
    model = fake.model("claude-sonnet-4")
    assert await Agent(model=model, workspace=".").ask("look") == "done"

    assert posts(fake) == ["/v1/messages"] * 2
    first, second = fake.chat_requests
    assert first.body["model"] == "claude-sonnet-4" and first.body["stream"] is True
    assert first.body["messages"][-1] == {
        "role": "user",
        "content": [{"type": "text", "text": "look", "cache_control": {"type": "ephemeral"}}],
    }, "Copilot's Messages API is Anthropic's: its prompt cache is marked too"
    assert second.body["messages"][-1]["content"][0]["type"] == "tool_result"
    headers, follow_up = lower(first.headers), lower(second.headers)
    assert headers["authorization"] == f"Bearer {next(iter(fake.copilot_tokens))}"
    assert headers["anthropic-version"] == "2023-06-01"
    assert "x-api-key" not in headers, "an Anthropic key is never sent to Copilot"
    assert headers["editor-version"] == "vscode/1.107.0"
    assert headers["copilot-integration-id"] == "vscode-chat"
    assert (headers["x-initiator"], follow_up["x-initiator"]) == ("user", "agent")
    fake.assert_complete()
    await model.aclose()


async def test_a_responses_only_model_goes_to_responses(github):
    fake = github([reply("", call("list_directory", id="l", path=".")), reply("done")])
    model = fake.model("gpt-5.3-codex")
    assert await Agent(model=model, workspace=".").ask("look") == "done"

    assert posts(fake) == ["/responses"] * 2
    first, second = fake.chat_requests
    assert first.body["model"] == "gpt-5.3-codex" and first.body["stream"] is True
    assert any(item.get("type") == "function_call_output" for item in second.body["input"])
    headers, follow_up = lower(first.headers), lower(second.headers)
    assert headers["authorization"] == f"Bearer {next(iter(fake.copilot_tokens))}"
    assert headers["editor-version"] == "vscode/1.107.0"
    assert (headers["x-initiator"], follow_up["x-initiator"]) == ("user", "agent")
    fake.assert_complete()
    await model.aclose()


async def test_an_anthropic_key_in_the_environment_stays_home(github, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-not-for-copilot")
    fake = github([reply("hi")])
    model = fake.model("claude-sonnet-4")
    assert (await model.complete(HI)).text == "hi"
    assert "x-api-key" not in lower(fake.chat_requests[0].headers)
    await model.aclose()


async def test_a_model_served_through_nothing_we_speak_fails_clearly(github):
    fake = github()
    model = fake.model("gpt-5.4-mini")
    with pytest.raises(ModelError, match="served only through ws:/responses") as caught:
        await model.complete(HI)
    assert "%copilot models copilot" in str(caught.value)
    assert posts(fake) == [], "nothing was sent that would be refused"
    await model.aclose()


# --- unsupported_api_for_model: one new route from a fresh list -------------------------------


async def test_the_fake_answers_the_wrong_endpoint_with_the_real_body(github):
    fake = github()
    token = (await fake.model().copilot_token()).value
    headers = {**EditorHeaders().as_headers(), "Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient() as client:
        response = await client.post(
            f"{fake.api_url}/chat/completions",
            json={"model": "gpt-5.3-codex", "messages": HI},
            headers=headers,
        )
    real = sample("error_unsupported_api_for_model.json")
    assert response.status_code == real["http_status"] == 400
    assert response.content == real["body_text"].encode() + b"\n"


async def test_a_model_that_moved_is_asked_again_through_its_new_endpoint(github):
    fake = github([reply("moved")], models=with_endpoints("claude-sonnet-4", [CHAT]))
    model = fake.model("claude-sonnet-4")
    await model.list_models()  # the list as it was
    fake.models = with_endpoints("claude-sonnet-4", [MESSAGES])  # the model moved since

    events = [event async for event in model.stream(HI)]
    assert isinstance(events[-1], ModelResponse) and events[-1].message.text == "moved"
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert notices == [
        "copilot: claude-sonnet-4 is not served on /chat/completions; asking through /v1/messages"
    ]
    assert posts(fake) == ["/chat/completions", "/v1/messages"]
    assert listings(fake) == 2, "the list was read again after the refusal"
    assert model.route() == MESSAGES
    await model.aclose()


async def test_a_codex_model_refused_on_chat_is_asked_through_responses(github):
    fake = github([reply("codex")], models=with_endpoints("gpt-5.3-codex", [CHAT]))
    model = fake.model("gpt-5.3-codex")
    await model.list_models()
    fake.models = with_endpoints("gpt-5.3-codex", [RESPONSES, "ws:/responses"])
    assert (await model.complete(HI)).text == "codex"
    assert posts(fake) == ["/chat/completions", "/responses"]
    await model.aclose()


async def test_the_new_route_is_tried_once(github):
    fake = github(serves={"claude-sonnet-4": []})
    model = fake.model("claude-sonnet-4")
    with pytest.raises(ModelHTTPError, match="not accessible via the /chat/completions") as caught:
        await model.complete(HI)
    assert caught.value.body["error"]["code"] == "unsupported_api_for_model"
    assert posts(fake) == ["/v1/messages", "/chat/completions"]
    assert listings(fake) == 2
    await model.aclose()


async def test_a_refusal_with_no_other_endpoint_says_so(github):
    fake = github(serves={"gemini-2.5-pro": []})
    model = fake.model("gemini-2.5-pro")
    with pytest.raises(ModelError, match=r"does not serve gemini-2\.5-pro through /chat/comp"):
        await model.complete(HI)
    assert posts(fake) == ["/chat/completions"]
    await model.aclose()


# --- editor headers ---------------------------------------------------------------------------


async def test_a_refused_editor_version_names_the_setting_to_change(github):
    fake = github()
    model = fake.model(editor_version="copilot_nb/0.1")
    with pytest.raises(ModelHTTPError) as caught:
        await model.complete(HI)
    message = str(caught.value)
    assert caught.value.status == 400
    assert "does not recognise Editor-Version 'copilot_nb/0.1'" in message
    assert "COPILOT_NB_EDITOR_VERSION" in message and "editor_version=" in message
    real = sample("error_editor_version.json")["cases"][1]["body_text"]
    assert caught.value.body == real, "the API's own words, plain text"
    assert real in message
    await model.aclose()


async def test_a_missing_editor_version_names_the_setting_too(github):
    fake = github()
    model = fake.model(headers={"Editor-Version": ""})
    with pytest.raises(ModelHTTPError, match="found no Editor-Version header") as caught:
        await model.list_models()
    assert "COPILOT_NB_EDITOR_VERSION" in str(caught.value)
    assert caught.value.body == sample("error_editor_version.json")["cases"][0]["body_text"]
    await model.aclose()


async def test_editor_headers_come_from_the_environment(github, monkeypatch):
    monkeypatch.setenv("COPILOT_NB_EDITOR_VERSION", "vscode/1.200.0")
    monkeypatch.setenv("COPILOT_NB_EDITOR_PLUGIN_VERSION", "copilot-chat/0.40.0")
    monkeypatch.setenv("COPILOT_NB_USER_AGENT", "GitHubCopilotChat/0.40.0")
    monkeypatch.setenv("COPILOT_NB_INTEGRATION_ID", "vscode-chat")
    fake = github([reply("ok")])
    model = fake.model()
    assert (await model.complete(HI)).text == "ok"
    (exchange,) = [r for r in fake.requests if r.path == "/copilot_internal/v2/token"]
    for recorded in (fake.chat_requests[0].headers, exchange.headers):
        headers = lower(recorded)
        assert headers["editor-version"] == "vscode/1.200.0"
        assert headers["editor-plugin-version"] == "copilot-chat/0.40.0"
        assert headers["user-agent"] == "GitHubCopilotChat/0.40.0"
    await model.aclose()


async def test_editor_arguments_win_over_the_environment(github, monkeypatch):
    monkeypatch.setenv("COPILOT_NB_EDITOR_VERSION", "vscode/1.200.0")
    monkeypatch.setenv("COPILOT_NB_INTEGRATION_ID", "from-env")
    fake = github([reply("ok")], known_editors=("Neovim/",), required_headers=())
    model = fake.model(editor_version="Neovim/0.11.0", integration_id="copilot-nb-test")
    assert isinstance(model, CopilotChat)
    assert (await model.complete(HI)).text == "ok"
    headers = lower(fake.chat_requests[0].headers)
    assert headers["editor-version"] == "Neovim/0.11.0"
    assert headers["copilot-integration-id"] == "copilot-nb-test"
    assert headers["editor-plugin-version"] == "copilot-chat/0.35.0", "the default stays"
    await model.aclose()


# --- `%copilot models copilot` ----------------------------------------------------------------


def test_the_model_table_shows_each_endpoint_and_premium_multiplier():
    table = copilot_table(parse_models({"data": COPILOT_MODELS}))
    rows = {line.split()[0]: line for line in table["text/plain"].splitlines()[2:]}
    assert "messages" in rows["claude-sonnet-4"] and " 1x" in rows["claude-sonnet-4"]
    assert " chat " in rows["gpt-4o"] and " 0x" in rows["gpt-4o"]
    assert " responses " in rows["gpt-5.3-codex"]
    assert "none we speak (ws:/responses)" in rows["gpt-5.4-mini"]
    assert "0.33x" in rows["gpt-5.4-mini"]
    assert ">endpoint</th>" in table["text/html"] and "<th" in table["text/html"]


async def test_the_panels_model_picker_leaves_out_models_we_cannot_ask(github):
    fake = github()
    model = fake.model()
    choices = await model_choices("copilot:gpt-4o", model)
    assert "copilot:gpt-5.3-codex" in choices and "copilot:claude-sonnet-4" in choices
    assert "copilot:gpt-5.4-mini" not in choices
    await model.aclose()


async def test_a_model_the_list_says_cannot_call_tools_is_asked_without_them(github):
    fake = github([reply("I can only answer in text.")])
    model = fake.model("o1-mini")
    tool = {
        "type": "function",
        "function": {
            "name": "t",
            "description": "d",
            "parameters": {"type": "object", "properties": {}},
        },
    }
    events = [event async for event in model.stream(HI, tools=[tool])]
    (note,) = [e for e in events if isinstance(e, Notice)]
    assert "o1-mini cannot call tools" in note.text
    (sent,) = fake.chat_requests
    assert "tools" not in sent.body and "tool_choice" not in sent.body
    assert isinstance(events[-1], ModelResponse)
    await model.aclose()
