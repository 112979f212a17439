"""What the model is told stays small and says the notebook's rules; each family gets its own."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from copilot_nb.agent.approvals.ask_user import ask_user_tool
from copilot_nb.agent.context.tokens import estimate_tokens
from copilot_nb.agent.modes.names import MODES
from copilot_nb.agent.prompt.families import (
    CLAUDE,
    CODEX,
    GENERIC,
    GPT,
    SMALL,
    family_for,
    family_of,
)
from copilot_nb.agent.prompt.system import WORKSPACE_LINE, notebook_prompt
from copilot_nb.agent.session import CopilotSession
from copilot_nb.workspace.workspace import Workspace

PROMPT_BUDGET = 700
"""Tokens for the instructions with the longest mode and family added."""
DESCRIPTION_BUDGET = 120
"""Tokens for one tool's description."""


def test_the_prompt_teaches_the_live_notebook_within_its_budget() -> None:
    text = notebook_prompt("<workspace>")
    for rule in ("live", "read_cell", "run_cell", "install", "restart", "context block"):
        assert rule in text, rule
    for mode in MODES:
        for family in (GENERIC, CLAUDE, GPT, CODEX, SMALL):
            size = estimate_tokens(notebook_prompt("<workspace>", mode=mode, family=family))
            assert size <= PROMPT_BUDGET, (mode, family.name, size)


def test_every_tool_description_says_enough_within_its_budget(tmp_path) -> None:
    from IPython.testing.globalipapp import get_ipython  # the one shell tests share

    session = CopilotSession(get_ipython())
    agent = SimpleNamespace(workspace=Workspace(tmp_path), current_call_id="", emit=print)
    every = session.tools_for(Workspace(tmp_path))  # the listed ones and those that wait
    specs = [*(t.spec for t in every), ask_user_tool(agent).spec]
    assert len(specs) > 15
    for spec in specs:
        assert len(spec.description) >= 40, spec.name
        assert estimate_tokens(spec.description) <= DESCRIPTION_BUDGET, spec.name


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("claude-sonnet-4", CLAUDE),
        ("anthropic/claude-3.5-haiku", CLAUDE),
        ("gpt-4o", GPT),
        ("GPT-5", GPT),
        ("gpt-5-codex", CODEX),
        ("gpt-5.1-codex-mini", CODEX),
        ("o3-mini", GPT),
        ("llama3.2", SMALL),
        ("qwen2.5-coder:7b", SMALL),
        ("scripted", GENERIC),
        ("", GENERIC),
    ],
)
def test_a_model_gets_its_family_by_name(name: str, family) -> None:
    assert family_for(name) is family


def test_a_family_adds_its_words_and_a_mode_adds_its_own() -> None:
    plain = notebook_prompt("<workspace>")
    claude = notebook_prompt("<workspace>", family=CLAUDE)
    shared = plain.removesuffix(WORKSPACE_LINE.format(root="<workspace>"))
    assert claude.startswith(shared) and CLAUDE.instructions in claude
    assert "Mode: plan" in notebook_prompt("<workspace>", mode="plan")
    assert "Mode:" not in plain


@pytest.mark.parametrize(
    ("name", "listed", "family"),
    [
        ("oswe-vscode-prime", "gpt-5-mini", GPT),
        ("opaque-preview", "claude-sonnet-4.5", CLAUDE),
        ("gpt-4o", "gpt-5-codex", CODEX),
        ("claude-sonnet-4", "a-family-we-do-not-know", CLAUDE),
        ("scripted", "", GENERIC),
    ],
)
def test_the_family_a_provider_lists_comes_before_the_name(name: str, listed: str, family) -> None:
    assert family_for(name, listed) is family
    model = SimpleNamespace(name=name, info=SimpleNamespace(family=listed) if listed else None)
    assert family_of(model) is family


def test_a_copilot_model_whose_list_names_its_family_gets_that_familys_words(
    tmp_path, monkeypatch
) -> None:
    from copilot_nb.agent.prompt.assembly import prepare
    from copilot_nb.models.copilot.catalog import parse_models
    from copilot_nb.testing import ScriptedModel

    monkeypatch.chdir(tmp_path)
    model = ScriptedModel(name="oswe-vscode-prime")
    session = CopilotSession(SimpleNamespace(user_ns={}), resolve=lambda spec: model)
    agent = session.agent_for(model)
    prompt = prepare(agent.workspace, model).system_prompt
    assert CLAUDE.instructions not in prompt, "by name: the generic family"

    listing = {"data": [{"id": "oswe-vscode-prime", "capabilities": {"family": "claude-opus-4"}}]}
    (model.info,) = parse_models(listing)  # as CopilotChat keeps its entry once listed
    prompt = prepare(agent.workspace, model).system_prompt
    assert CLAUDE.instructions in prompt
    assert session.tools_for(agent.workspace, agent=agent).threshold == CLAUDE.defer_threshold
