"""The administrator's token budget in a real kernel: the turn that would go past it stops
before its request is sent and says why; nothing the user sets in the kernel lifts it; once the
limit is raised the conversation continues where it stopped, and `%copilot usage` shows what
is left."""

from __future__ import annotations

import json

import pytest

from copilot_nb.messages import Usage
from copilot_nb.testing import reply
from tests.kernel_session import Execution

pytestmark = pytest.mark.kernel


def shown(execution: Execution) -> str:
    parts = [execution.stdout, *execution.final_displays().values()]
    parts += [m["content"]["evalue"] for m in execution.of_type("error")]
    return "\n".join(parts)


def test_a_spent_budget_stops_the_turn_and_the_user_cannot_lift_it(serve, kernel_for, tmp_path):
    ledger = tmp_path / "ledger"
    policy = tmp_path / "admin" / "copilot_nb_policy.json"
    policy.parent.mkdir()
    rules = {"ledger": str(ledger), "budgets": [{"scope": "user", "period": "day", "tokens": 50}]}
    policy.write_text(json.dumps(rules))
    user_config = tmp_path / "user-jupyter"
    user_config.mkdir()
    (user_config / "copilot_nb_policy.json").write_text(json.dumps({"budgets": []}))
    server = serve(
        [
            reply("First answer.", usage=Usage(input_tokens=40, output_tokens=20)),
            reply("Continued.", usage=Usage(input_tokens=70, output_tokens=5)),
        ]
    )
    kernel = kernel_for(
        server,
        COPILOT_NB_POLICY=str(policy),
        JUPYTERHUB_USER="alice",
        JUPYTER_CONFIG_DIR=str(user_config),
    )

    first = shown(kernel.execute("%%copilot\nfirst question"))
    assert "First answer." in first and "Budget: 0 of 50 tokens left this day (user:alice)" in first
    assert json.loads((ledger / "user-alice.json").read_text())["tokens"] == 60

    stopped = shown(kernel.execute("%%copilot\nsecond question"))
    assert "Budget reached: user:alice has used 60 of 50 tokens this day" in stopped
    assert f"administrator's policy ({policy})" in stopped and "resets" in stopped
    assert len(server.requests) == 1

    kernel.execute("%env JUPYTERHUB_USER=bob")
    kernel.execute("%config CopilotMagics.max_rounds = 50")
    again = shown(kernel.execute("%%copilot\nsecond question"))
    assert "Budget reached: user:alice" in again
    assert len(server.requests) == 1
    assert "user:alice: 60 of 50 tokens used this day" in shown(kernel.execute("%copilot usage"))

    rules["budgets"][0]["tokens"] = 1000
    policy.write_text(json.dumps(rules))
    resumed = shown(kernel.execute("%%copilot\nsecond question"))
    assert "Continued." in resumed
    assert "Budget: 865 of 1,000 tokens left this day (user:alice)" in resumed
    sent = [m["content"] for m in server.requests[1].messages if m["role"] != "system"]
    assert "First answer." in sent and any("first question" in str(m) for m in sent)
    assert "user:alice: 135 of 1,000 tokens used this day" in shown(
        kernel.execute("%copilot usage")
    )
