"""What the administrator's policy costs each time a choice is checked.

The policy is checked at every request, every tool call's approval and every line a saved
conversation writes, and it is read again whenever a policy file changes, so a check must cost
next to nothing beside the work it guards: a file-status look at each policy place, then the
rules. Measured with a policy that sets every key, the machine's own system folders searched too.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from copilot_nb import policy  # noqa: E402
from copilot_nb.policy import loading  # noqa: E402

RULES = {
    "providers": ["openai", "anthropic", "copilot"],
    "models": ["openai:gpt-4o*", "anthropic:*", "copilot:*"],
    "base_urls": ["https://llm.example.com/*", "http://127.0.0.1:*"],
    "approval_floors": {"execute": "ask", "external": "ask", "edit": "review"},
    "mcp_commands": ["uvx mcp-server-git *", "npx -y @modelcontextprotocol/server-*"],
    "mcp_urls": ["https://mcp.example.com/*"],
    "serve": True,
    "serve_hosts": ["127.0.0.1"],
    "cassettes": True,
    "conversations": True,
    "completions": True,
}
TARGET_CHECK_US = 50.0
"""A check, the policy unchanged: under 50 µs (a loopback request costs about 1 ms)."""
TARGET_RELOAD_US = 1000.0
"""Reading and parsing a changed policy file: under 1 ms."""


def per_call(work: Callable[[], object], repeats: int = 20_000) -> float:
    """Median-free mean over many calls, in µs (each call is short and steady)."""
    began = time.perf_counter()
    for _ in range(repeats):
        work()
    return (time.perf_counter() - began) / repeats * 1e6


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "copilot_nb_policy.json"
        path.write_text(json.dumps(RULES))
        os.environ[loading.EXTRA_VARIABLE] = str(path)
        try:
            rows = [
                (
                    "model, provider and endpoint",
                    per_call(
                        lambda: policy.check_model("openai", "gpt-4o", "http://127.0.0.1:8000/v1")
                    ),
                    TARGET_CHECK_US,
                ),
                (
                    "an approval's floor",
                    per_call(
                        lambda: policy.tightened("execute", "allow", ("allow", "ask", "deny"))
                    ),
                    TARGET_CHECK_US,
                ),
                (
                    "an MCP server",
                    per_call(lambda: policy.mcp_refusal("uvx mcp-server-git --repository .", "")),
                    TARGET_CHECK_US,
                ),
                ("a conversation line", per_call(policy.conversations_allowed), TARGET_CHECK_US),
            ]

            def reload() -> None:
                loading._cache = None
                loading.load_policy()

            rows.append(("reading a changed file", per_call(reload, 2_000), TARGET_RELOAD_US))
        finally:
            del os.environ[loading.EXTRA_VARIABLE]
    print("\nthe administrator's policy: one check (mean µs; every key set)")
    print(f"{'check':<32}{'µs':>10}{'target':>10}")
    for name, figure, target in rows:
        mark = "" if figure <= target else "  over target"
        print(f"{name:<32}{figure:>10.1f}{'< ' + format(target, 'g'):>10}{mark}")


if __name__ == "__main__":
    main()
