"""The model chosen in JupyterLab's settings (the Settings Editor or the panel's form), as a new
kernel reads it: after `COPILOT_NB_MODEL`, before the OpenAI-key guess; a file others can write
chooses nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from copilot_nb.agent.model_setting import (
    SETTINGS_FILE,
    json_with_comments,
    model_setting,
)
from copilot_nb.agent.model_spec import default_model_spec
from copilot_nb.models.key_store import save_key
from copilot_nb.models.providers import PROVIDERS, chat_names

SCHEMA = Path(__file__).parent.parent / "copilot_nb/jupyter/frontend/schema/model.json"

AS_JUPYTERLAB_WRITES = """{
    // copilot_nb: model
    // copilot-nb:model
    // The provider and model that new kernels with copilot_nb use (// not a comment in here).
    // *****************************************************************************************

    // Model
    // The model's name at that provider, e.g. gpt-4o, claude-sonnet-4-5, qwen3.
    "model": "claude-sonnet-4-5",

    // Provider
    /* Who answers. */
    "provider": "anthropic"
}"""


@pytest.fixture
def lab_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """JupyterLab's user-settings folder for this test; the file the model setting lives in."""
    folder = tmp_path / "user-settings"
    monkeypatch.setenv("JUPYTERLAB_SETTINGS_DIR", str(folder))
    monkeypatch.setenv("COPILOT_NB_CONFIG_DIR", str(tmp_path / "copilot_nb"))
    path = folder / SETTINGS_FILE
    path.parent.mkdir(parents=True)
    return path


def test_a_new_kernel_starts_with_the_model_in_jupyterlabs_settings(lab_settings: Path):
    assert default_model_spec() == "offline"
    lab_settings.write_text(AS_JUPYTERLAB_WRITES)
    assert default_model_spec() == "anthropic:claude-sonnet-4-5"


def test_the_environments_model_wins_over_the_setting(lab_settings: Path, monkeypatch):
    lab_settings.write_text(AS_JUPYTERLAB_WRITES)
    monkeypatch.setenv("COPILOT_NB_MODEL", "ollama:qwen3")
    assert default_model_spec() == "ollama:qwen3"


def test_a_saved_openai_key_alone_chooses_openai_as_the_environments_would(lab_settings):
    save_key("OPENAI_API_KEY", "sk-saved-0000000000", keyring=False)
    assert default_model_spec() == "openai:gpt-4o"


@pytest.mark.skipif(os.name == "nt", reason="mode bits are POSIX's")
def test_a_settings_file_others_can_write_chooses_nothing_and_says_why(lab_settings: Path):
    lab_settings.write_text(AS_JUPYTERLAB_WRITES)
    lab_settings.chmod(0o666)
    assert default_model_spec() == "offline"
    assert "can be written by other users (mode 0666)" in model_setting().problem
    lab_settings.chmod(0o644)  # as JupyterLab writes it: readable by all, fine (no secret)
    assert default_model_spec() == "anthropic:claude-sonnet-4-5"


@pytest.mark.parametrize(
    "text",
    ['{"provider": "openai"}', '{"provider": "openai", "model": 4}'],
    ids=["no model", "model not text"],
)
def test_half_a_choice_is_no_choice(lab_settings: Path, text: str):
    lab_settings.write_text(text)
    assert model_setting().spec == "" and default_model_spec() == "offline"


def test_a_broken_settings_file_is_no_choice_and_says_why(lab_settings: Path):
    lab_settings.write_text('{"provider": "openai", "model": ')
    assert default_model_spec() == "offline"
    assert "could not be read" in model_setting().problem


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": "// kept", "b": "/* kept */"}', {"a": "// kept", "b": "/* kept */"}),
        ('{"a": "quote \\" // kept"} // gone', {"a": 'quote " // kept'}),
        ('{\n  "a": [1, 2,],\n  "b": 3,\n}', {"a": [1, 2], "b": 3}),
        ('/* head */ {"a": /* inline */ 1}', {"a": 1}),
        ('{"a": "1,}"}', {"a": "1,}"}),
    ],
)
def test_json_with_comments_reads_what_jupyterlab_writes(text: str, value: object):
    assert json_with_comments(text) == value


def test_an_unclosed_comment_is_an_error():
    with pytest.raises(ValueError, match="not closed"):
        json_with_comments('{"a": 1 /* }')


def test_the_settings_schema_offers_exactly_the_chat_providers():
    """The Settings Editor's choice of provider is the provider table's (one fact in one row:
    this test says when the schema must follow a new provider)."""
    schema = json.loads(SCHEMA.read_text())
    assert schema["properties"]["provider"]["enum"] == ["", *chat_names(PROVIDERS)]
    assert set(schema["properties"]) == {"provider", "model"}, "never a key: not owner-only"
    assert "Model form" in schema["description"], "the settings page points to the key's form"
