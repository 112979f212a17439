"""A model's key and base URL: given in code, else read from the environment at each use."""

from __future__ import annotations

import pytest

from copilot_nb.models.anthropic.chat import AnthropicChat
from copilot_nb.models.env_settings import FromEnv
from copilot_nb.models.openai.chat import OPENAI_BASE_URL, OpenAIChat
from copilot_nb.models.openai.ollama import OllamaChat
from copilot_nb.models.transport import sentence


class Holder:
    key = FromEnv("FIRST_KEY", "SECOND_KEY", default=None)
    url = FromEnv("SOME_URL", default="http://default/v1", url=True)


def test_the_environment_is_read_at_each_use_until_code_gives_a_value(monkeypatch):
    monkeypatch.delenv("FIRST_KEY", raising=False)
    monkeypatch.delenv("SECOND_KEY", raising=False)
    holder = Holder()
    assert holder.key is None
    monkeypatch.setenv("SECOND_KEY", "second")
    assert holder.key == "second"
    monkeypatch.setenv("FIRST_KEY", "")  # set but empty: not a value
    assert holder.key == "second"
    monkeypatch.setenv("FIRST_KEY", "first")
    assert holder.key == "first"
    holder.key = "given"
    assert holder.key == "given"
    holder.key = ""  # an empty value given in code is a value: no key
    assert holder.key == ""
    holder.key = None  # back to the environment
    assert holder.key == "first"


def test_a_url_drops_its_trailing_slash_and_falls_back_to_its_default(monkeypatch):
    monkeypatch.delenv("SOME_URL", raising=False)
    holder = Holder()
    assert holder.url == "http://default/v1"
    monkeypatch.setenv("SOME_URL", "http://elsewhere/v1/")
    assert holder.url == "http://elsewhere/v1"
    assert isinstance(Holder.url, FromEnv) and not Holder.url.given(holder)


@pytest.mark.parametrize(
    ("model", "key", "url"),
    [
        (lambda: OpenAIChat("m"), "OPENAI_API_KEY", "OPENAI_BASE_URL"),
        (lambda: AnthropicChat("m"), "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
        (lambda: OllamaChat("m"), None, "OLLAMA_BASE_URL"),
    ],
    ids=["openai", "anthropic", "ollama"],
)
def test_each_provider_reads_its_own_variables_after_it_was_built(monkeypatch, model, key, url):
    if key:
        monkeypatch.setenv(key, "old")
    monkeypatch.setenv(url, "http://old.test/v1")
    built = model()
    if key:
        monkeypatch.setenv(key, "new")
    monkeypatch.setenv(url, "http://new.test/v1/")
    assert built.base_url.removesuffix("/v1") == "http://new.test"
    assert built.endpoint.api_key == ("new" if key else None)
    assert url in built.endpoint.reach_hint()


def test_a_base_url_given_in_code_stays_and_names_no_variable(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://env.test/v1")
    model = OpenAIChat("m", base_url="http://given.test/v1/")
    assert model.base_url == "http://given.test/v1"
    assert "OPENAI_BASE_URL" not in model.endpoint.reach_hint()
    monkeypatch.delenv("OPENAI_BASE_URL")
    assert OpenAIChat("m").base_url == OPENAI_BASE_URL


@pytest.mark.parametrize(
    ("said", "written"),
    [
        ("Incorrect API key.", "Incorrect API key."),
        ("Incorrect API key", "Incorrect API key."),
        ("Incorrect API key...  ", "Incorrect API key."),
        ("Who are you?", "Who are you?"),
    ],
)
def test_an_error_sentence_ends_in_one_full_stop(said, written):
    assert sentence(said) == written
