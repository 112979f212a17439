"""The proxy's server-side runs (`tool_execution: "auto"`) spend the same budget as a
notebook's turns: past the cap the upstream is not asked, and the client reads why."""

from __future__ import annotations

import openai
import pytest

from copilot_nb.testing import reply
from tests import policy_files
from tests.proxy_fixtures import MODEL, proxy_for

__all__ = ["policy_file", "proxy_for"]

policy_file = policy_files.policy_file


def test_a_server_side_run_past_the_budget_is_not_sent(proxy_for, policy_file, tmp_path):
    policy_file(
        {
            "ledger": str(tmp_path / "ledger"),
            "budgets": [{"scope": "user", "period": "day", "tokens": 5}],
        }
    )
    proxy = proxy_for([reply("Hi."), reply("never")], allow_execution=True)
    ask = {"model": MODEL, "messages": [{"role": "user", "content": "hi"}]}
    auto = {"tool_execution": "auto"}
    assert proxy.openai().chat.completions.create(**ask, extra_body=auto).choices
    with pytest.raises(openai.APIError) as stopped:
        proxy.openai(max_retries=0).chat.completions.create(**ask, extra_body=auto)
    assert "Budget reached: user:" in str(stopped.value)
    assert len(proxy.upstream.requests) == 1
