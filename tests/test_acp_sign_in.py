"""Signing in over ACP: the methods offered, each checked, and a session whose model has no
key refused with what to set."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

acp = pytest.importorskip("acp")

from copilot_nb.acp.sign_in import COPILOT, methods, missing_provider, signed_in  # noqa: E402


@pytest.fixture(autouse=True)
def no_saved_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COPILOT_NB_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def test_each_keyed_provider_is_an_env_var_method_and_copilot_signs_in_in_a_terminal() -> None:
    offered = {m.id: m for m in methods()}
    assert offered["openai-api-key"].vars[0].name == "OPENAI_API_KEY"
    assert offered["anthropic-api-key"].vars[0].name == "ANTHROPIC_API_KEY"
    assert offered[COPILOT].type == "terminal"
    assert offered[COPILOT].args == ["acp", "--sign-in"]


def test_a_method_is_signed_in_when_its_key_is_set_and_says_what_to_set_when_not() -> None:
    assert signed_in("openai-api-key", {"OPENAI_API_KEY": "sk-1"}) == ""
    assert "OPENAI_API_KEY" in signed_in("openai-api-key", {})
    assert "copilot-nb acp --sign-in" in signed_in(COPILOT, {})
    assert signed_in(COPILOT, {"COPILOT_NB_GITHUB_TOKEN": "gho_x"}) == ""


def test_a_model_without_its_key_is_named_with_the_variable_and_a_local_server_needs_none() -> None:
    assert "ANTHROPIC_API_KEY" in missing_provider("anthropic:claude-sonnet-4", {})
    assert missing_provider("openai:gpt-4o", {"OPENAI_API_KEY": "k"}) == ""
    assert missing_provider("openai:local", {"OPENAI_BASE_URL": "http://127.0.0.1:8080/v1"}) == ""
    assert missing_provider("offline", {}) == ""


async def test_a_session_whose_model_has_no_key_is_refused_naming_it(tmp_path: Path) -> None:
    from tests.acp_client import Editor

    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC", "COPILOT_NB"))}
    env.update(COPILOT_NB_MODEL="anthropic:claude-sonnet-4", HOME=str(tmp_path))
    env["COPILOT_NB_CONFIG_DIR"] = str(tmp_path / "config")
    async with acp.spawn_agent_process(
        Editor(), sys.executable, "-m", "copilot_nb", "acp", env=env, cwd=str(tmp_path)
    ) as (conn, _process):
        init = await conn.initialize(protocol_version=1)
        assert any(m.id == "anthropic-api-key" for m in init.auth_methods)
        with pytest.raises(acp.RequestError) as refused:
            await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        assert refused.value.code == -32000
        assert "ANTHROPIC_API_KEY" in str(refused.value.data)
        with pytest.raises(acp.RequestError):
            await conn.authenticate(method_id="anthropic-api-key")
