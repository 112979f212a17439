"""The administrator's policy in a real kernel: `%copilot` says which policy is in force, a
refused model shows in the cell naming the file and rule, and a policy that keeps
conversations unsaved says so once and writes nothing beside the notebook."""

from __future__ import annotations

import json

import pytest

from copilot_nb.testing import reply
from tests.kernel_session import Execution

pytestmark = pytest.mark.kernel

NOTEBOOK = "team.ipynb"


def shown(execution: Execution) -> str:
    """Everything the cell showed: streams, displays (their last state) and errors."""
    parts = [execution.stdout, *execution.final_displays().values()]
    parts += [m["content"]["evalue"] for m in execution.of_type("error")]
    return "\n".join(parts)


def test_the_policy_shows_refuses_and_keeps_conversations_unsaved(serve, kernel_for, tmp_path):
    (tmp_path / NOTEBOOK).write_text("{}")
    policy = tmp_path / "admin" / "copilot_nb_policy.json"
    policy.parent.mkdir()
    policy.write_text(
        json.dumps(
            {
                "base_urls": ["https://llm.corp.test/*"],
                "conversations": False,
                "approval_floors": {"execute": "ask"},
            }
        )
    )
    server = serve([reply("Allowed now.")])
    kernel = kernel_for(
        server, COPILOT_NB_POLICY=str(policy), JPY_SESSION_NAME=str(tmp_path / NOTEBOOK)
    )

    status = kernel.execute("%copilot")
    assert f"copilot: policy in force from {policy} (%copilot policy shows it)" in status.stdout
    rules = kernel.execute("%copilot policy").stdout
    assert f"  {policy}:" in rules and '    base_urls = ["https://llm.corp.test/*"]' in rules
    assert '    approval_floors = {"execute": "ask"}' in rules

    refused = shown(kernel.execute("%%copilot\nhello"))
    assert f"endpoint '{server.url}' is not allowed by the administrator's policy" in refused
    assert f'({policy}: base_urls = ["https://llm.corp.test/*"])' in refused
    assert server.requests == []

    policy.write_text(json.dumps({"base_urls": ["http://127.0.0.1:*"], "conversations": False}))
    allowed = kernel.execute("%%copilot\nhello again")
    assert allowed.status == "ok"
    text = shown(allowed)
    assert "Allowed now." in text
    assert (
        "copilot: the conversation is no longer saved to team.copilot-chat.jsonl: "
        "saving conversations is not allowed by the administrator's policy "
        f"({policy}: conversations = false)"
    ) in text
    assert not (tmp_path / "team.copilot-chat.jsonl").exists()


def test_a_malformed_policy_refuses_in_the_cell_and_in_the_status(serve, kernel_for, tmp_path):
    policy = tmp_path / "copilot_nb_policy.json"
    policy.write_text('{"providers": ["openai"],}')
    server = serve([reply("never")])
    kernel = kernel_for(server, COPILOT_NB_POLICY=str(policy))
    assert f"copilot: policy {policy} cannot be read" in kernel.execute("%copilot").stdout
    refused = shown(kernel.execute("%%copilot\nhello"))
    assert f"the administrator's policy {policy} cannot be read (it is not valid JSON" in refused
    assert server.requests == []
