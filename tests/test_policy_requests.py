"""No request of any kind leaves before the administrator's policy allows it: a chat request,
Ollama's `/api/show`, its fill-in-the-middle `/api/generate`, a model list for `%copilot models`
and Copilot's token exchange all take their client where the policy is checked, so a refused
endpoint's server counts zero requests received."""

from __future__ import annotations

import re

import pytest

from copilot_nb.errors import PolicyError
from copilot_nb.jupyter.commands.login import show_models
from copilot_nb.messages import UserMessage
from copilot_nb.models.fim import FillRequest
from copilot_nb.models.openai.ollama_generate import OllamaFill
from copilot_nb.testing import reply
from copilot_nb.testing.ollama_fake import OllamaServer
from tests import policy_files

policy_file = policy_files.policy_file

REFUSING = {"base_urls": ["https://llm.corp.test/*"]}


@pytest.fixture
def ollama():
    server = OllamaServer([reply("never sent")]).start()
    yield server
    server.stop()


async def test_ollama_is_not_asked_what_it_can_do_before_the_policy_refuses_it(policy_file, ollama):
    path = policy_file(REFUSING)
    model = ollama.model()
    with pytest.raises(
        PolicyError,
        match=rf"endpoint '{re.escape(ollama.url)}' .*{re.escape(str(path))}: base_urls",
    ):
        await model.complete([UserMessage(content="hi")])
    with pytest.raises(PolicyError):
        await model.show()
    assert ollama.received == []  # not /api/show, not the chat: the policy answered
    assert ollama.shows == []


async def test_ollamas_fill_wire_sends_nothing_to_a_refused_endpoint(policy_file, ollama):
    policy_file(REFUSING)
    model = OllamaFill(ollama.model_name, base_url=ollama.url)
    with pytest.raises(PolicyError):
        async for _ in model.fill(FillRequest(prefix="def f(", suffix=")")):
            pass
    assert ollama.received == []


async def test_a_listed_ollama_is_asked_as_before(policy_file, ollama):
    policy_file({"base_urls": ["http://127.0.0.1:*/v1"]})
    answer = await ollama.model().complete([UserMessage(content="hi")])
    assert answer.text == "never sent"
    assert [line.split()[1] for line in ollama.received] == ["/api/show", "/v1/chat/completions"]


def test_the_models_command_lists_nothing_from_a_refused_endpoint(policy_file, ollama, monkeypatch):
    policy_file(REFUSING)
    monkeypatch.setenv("OLLAMA_BASE_URL", ollama.url)
    with pytest.raises(PolicyError, match="base_urls"):
        show_models("ollama")
    assert ollama.received == []


def test_the_models_command_still_lists_an_allowed_server(policy_file, ollama, monkeypatch, capsys):
    policy_file({"base_urls": ["http://127.0.0.1:*/v1"]})
    monkeypatch.setenv("OLLAMA_BASE_URL", ollama.url)
    show_models("ollama")
    assert f"  {ollama.model_name}" in capsys.readouterr().out.splitlines()
    assert ollama.received == ["GET /v1/models"]


async def test_copilot_exchanges_no_token_and_lists_no_models_for_a_refused_endpoint(
    policy_file, github, tmp_path, monkeypatch
):
    monkeypatch.setenv("COPILOT_NB_CONFIG_DIR", str(tmp_path / "config"))
    policy_file(REFUSING)
    fake = github()
    model = fake.model()
    with pytest.raises(PolicyError, match=re.escape("endpoint 'https://api.githubcopilot.com'")):
        await model.list_models()
    with pytest.raises(PolicyError):
        await model.complete([UserMessage(content="hi")])
    assert fake.received == []  # no token exchange, no model list, no chat
    assert model.auth.exchanges == 0
