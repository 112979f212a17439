"""The chat panel's model form with a fake front end: the key comes once in a message, goes to the
key store, and never comes back; Save switches the model as `%copilot model` does."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import comm
import pytest

from copilot_nb.agent.session import CopilotSession
from copilot_nb.jupyter.panel.widget import ChatPanel
from copilot_nb.models.key_store import key_status, keys_path, save_key
from copilot_nb.testing import fail, reply
from tests.panel_front import Front, RecordingComm

KEY = "sk-typed-in-the-form-9f8e7d6c5b4a"


@pytest.fixture(autouse=True)
def recording_comms(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(comm, "create_comm", RecordingComm)


@pytest.fixture
def provider(serve: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Any:
    """A loopback OpenAI-compatible provider that answers only the form's key; no key in the
    environment, copilot_nb's config folder empty."""

    def respond(request: Any) -> Any:
        if request.headers.get("Authorization") != f"Bearer {KEY}":
            return fail(401, "Incorrect API key provided.")
        return reply("Hello from the saved key.")

    server = serve(responder=respond)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("COPILOT_NB_CONFIG_DIR", str(tmp_path / "copilot_nb"))
    monkeypatch.chdir(tmp_path)
    return server


@pytest.fixture
def panel() -> ChatPanel:
    return ChatPanel(CopilotSession())


def answers(front: Front) -> list[dict[str, Any]]:
    return [m for m in front.custom() if m["kind"] == "form"]


def everything_sent(panel: ChatPanel, front: Front) -> str:
    """Every message and every trait the views were sent, as one text."""
    return json.dumps([front.comm.published, panel.widget.get_state()], default=str)


async def test_the_form_saves_the_key_switches_the_model_and_the_turn_uses_it(provider, panel):
    front = Front(panel)
    front.say(kind="form", do="state", view="v1")
    shown = answers(front)[-1]["form"]
    openai = next(p for p in shown["providers"] if p["name"] == "openai")
    assert openai["key"] == {
        "name": "OPENAI_API_KEY",
        "saved": False,
        "where": "",
        "environment": False,
        "problem": "",
    }
    assert {"copilot", "ollama", "anthropic"} <= {p["name"] for p in shown["providers"]}

    front.say(kind="form", do="save", provider="openai", model="scripted", key=KEY, view="v1")
    said = answers(front)[-1]
    assert said["outcome"] == "ok", said["said"]
    assert said["view"] == "v1" and said["chosen"] == {"provider": "openai", "model": "scripted"}
    assert said["said"].startswith("openai:scripted is the model now. Key saved in ")
    assert key_status("OPENAI_API_KEY").saved
    assert panel.session.current_model_spec() == "openai:scripted"
    assert panel.widget.model == "openai:scripted"

    task = panel.send("hi")
    assert task is not None
    await panel.wait()
    assert front.text() == "Hello from the saved key."
    assert provider.requests[-1].headers["Authorization"] == f"Bearer {KEY}"
    assert KEY not in everything_sent(panel, front)
    for piece in (KEY[:12], KEY[-12:]):
        assert piece not in everything_sent(panel, front)


def test_the_form_says_when_the_environment_wins(provider, panel, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-the-environment-0000")
    front = Front(panel)
    front.say(kind="form", do="save", provider="openai", model="scripted", key=KEY, view="v")
    said = answers(front)[-1]["said"]
    assert "OPENAI_API_KEY is also set in this kernel's environment, and that one is used" in said
    openai = next(p for p in answers(front)[-1]["form"]["providers"] if p["name"] == "openai")
    assert openai["key"]["saved"] and openai["key"]["environment"]


def test_saving_a_model_with_no_key_anywhere_says_so(provider, panel):
    front = Front(panel)
    front.say(kind="form", do="save", provider="openai", model="scripted", key="", view="v")
    said = answers(front)[-1]
    assert said["outcome"] == "ok"
    assert said["said"] == (
        "openai:scripted is the model now. "
        "No key is saved or set for OPENAI_API_KEY: requests go without one."
    )


def test_a_key_that_cannot_be_saved_is_refused_without_repeating_it(provider, panel):
    front = Front(panel)
    bad = "sk-has a space-0123456789"
    front.say(kind="form", do="save", provider="openai", model="scripted", key=bad, view="v")
    said = answers(front)[-1]
    assert said["outcome"] == "error" and "not one line of printable characters" in said["said"]
    assert "sk-has" not in everything_sent(panel, front)
    assert not keys_path().exists()
    assert panel.session.current_model_spec() != "openai:scripted", "nothing changed"


@pytest.mark.parametrize(
    ("provider_name", "model", "says"),
    [
        ("nowhere", "m", "Choose a provider"),
        ("openai", "two words", "Name a model"),
        ("ollama", "qwen3", "ollama takes no key here"),
    ],
)
def test_a_choice_that_cannot_work_says_what_to_do(provider, panel, provider_name, model, says):
    front = Front(panel)
    front.say(kind="form", do="save", provider=provider_name, model=model, key=KEY, view="v")
    said = answers(front)[-1]
    assert said["outcome"] == "error" and says in said["said"]
    assert KEY not in everything_sent(panel, front)


def test_forget_deletes_the_saved_key(provider, panel):
    save_key("OPENAI_API_KEY", KEY, keyring=False)
    front = Front(panel)
    front.say(kind="form", do="forget", provider="openai", view="v")
    said = answers(front)[-1]
    assert said["said"] == "The saved key for OPENAI_API_KEY is forgotten."
    assert not key_status("OPENAI_API_KEY").saved


async def test_the_model_list_comes_from_the_provider_with_the_saved_key(provider, panel):
    save_key("OPENAI_API_KEY", KEY, keyring=False)
    task = panel.form.list_models("openai")
    assert task is not None
    await task
    listed = [m for m in Front(panel).custom() if m["kind"] == "models"]
    assert listed == [{"kind": "models", "provider": "openai", "ids": ["scripted"], "note": ""}]


async def test_a_provider_without_a_list_says_to_type_the_name(provider, panel):
    task = panel.form.list_models("anthropic")
    assert task is not None
    await task
    listed = [m for m in Front(panel).custom() if m["kind"] == "models"]
    assert listed[0]["ids"] == [] and "type the model's name" in listed[0]["note"]
