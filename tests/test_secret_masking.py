"""Secrets in the kernel stay masked unless the user approves: names, looks, lookups, the reveal flow."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from copilot_nb import Agent
from copilot_nb.agent.approvals.policy import ApprovalPolicy
from copilot_nb.events import ApprovalNeeded, Done
from copilot_nb.testing import call, reply
from copilot_nb.tools import ToolSet
from copilot_nb.tools.kernel.tools import kernel_tools
from copilot_nb.tools.redaction.masking import (
    is_secret_name,
    looks_secret,
    redact_and_cut,
    redact_text,
)
from copilot_nb.tools.views.outputs import clip_output
from tests.secret_namespace import GITHUB_TOKEN, OPENAI_KEY, SECRETS, SETUP, TABLE, Row, check


@pytest.fixture(scope="module")
def namespace() -> dict[str, Any]:
    ns: dict[str, Any] = {"__name__": "__main__"}
    exec(SETUP, ns)
    ns.update(In=["", SETUP], Out={}, _="", get_ipython=lambda: None, exit=None)
    return ns


@pytest.fixture
def tools(namespace: dict[str, Any]) -> ToolSet:
    return kernel_tools(lambda: namespace)


# --- what counts as a secret -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("api_key", True),
        ("OPENAI_API_KEY", True),
        ("db_password", True),
        ("github_token", True),
        ("githubToken", True),
        ("apikey", True),
        ("accessToken", True),
        ("client_secret", True),
        ("passwd", True),
        ("aws_credentials", True),
        ("auth_header", True),
        ("session_cookie", True),
        ("private_key_pem", True),
        ("secrets", True),
        ("keys", False),
        ("tokenizer", False),
        ("author", False),
        ("monkey", False),
        ("df", False),
        ("total_sales", False),
    ],
)
def test_names_that_say_they_hold_a_secret(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


@pytest.mark.parametrize(
    "text",
    [
        OPENAI_KEY,
        "sk-ant-api03-" + "x" * 30,
        GITHUB_TOKEN,
        "gho_" + "a" * 36,
        "ghu_" + "a" * 36,
        "github_pat_" + "11ABCDE" * 5,
        "AKIAIOSFODNN7EXAMPLE",
        "xoxb-1234-5678-abcdefghij",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0",
        "postgres://admin:correct-horse@db.local/app",
    ],
)
def test_strings_that_look_like_secrets_whatever_their_name(text: str) -> None:
    assert looks_secret(text)
    redacted, count = redact_text(f"value = {text!r}")
    assert count >= 1 and "<masked: " in redacted
    assert "correct-horse" not in redacted and text not in redacted


def test_plain_strings_do_not_look_secret() -> None:
    for text in ("hello world", "sk-learn", "task-1234", "https://example.com/a/b", "df.head()"):
        assert not looks_secret(text)


def test_history_redacts_secret_literals_and_assignments_to_secret_names() -> None:
    source = (
        f'api_key = "{OPENAI_KEY}"\n'
        "db_password: str = 'hunter2-pw'\n"
        'os.environ["OPENAI_API_KEY"] = "plain-but-named"\n'
        'login(user="ann", password="s3cr3t-value")\n'
        'cfg = {"token": "tok-987654", "host": "db.local"}\n'
        "%env GITHUB_TOKEN=nested-pw-123\n"
        f"notes = 'use {GITHUB_TOKEN}'\n"
        "total = 75\n"
    )
    redacted, count = redact_text(source)
    for secret in SECRETS:
        assert secret not in redacted
    assert count == 7
    assert 'api_key = "<masked: 56 chars>"' in redacted
    assert "%env GITHUB_TOKEN=<masked: 13 chars>" in redacted
    assert 'user="ann"' in redacted and '"host": "db.local"' in redacted
    assert "total = 75" in redacted


def test_history_masks_a_key_split_over_literals_python_joins() -> None:
    source = (
        f'note = "{GITHUB_TOKEN[:10]}" "{GITHUB_TOKEN[10:]}"\n'
        'password = ("hunter2"  # the rest below\n    "-pw")\n'
        'greeting = "hello" " world"\n'
    )
    redacted, count = redact_text(source)
    assert count == 2
    assert 'note = "<masked: 40 chars>"' in redacted and "-pw" not in redacted
    assert 'greeting = "hello" " world"' in redacted


@pytest.mark.parametrize("size", [1_500, 6_000, 100_000], ids=["short", "medium", "long"])
def test_a_long_output_is_cut_as_any_output_is_and_a_secret_at_the_cut_stays_masked(
    size: int,
) -> None:
    plain = "".join(f"line {i}\n" for i in range(size // 7))
    assert redact_and_cut(plain, 600) == (clip_output(plain, 600), 0)
    key = f" {OPENAI_KEY} "
    at_cut = plain[: 400 - 20] + key + plain[400 - 20 :]
    at_tail = plain[: len(plain) - 200 - 20] + key + plain[len(plain) - 200 - 20 :]
    for text in (at_cut, at_tail):
        shown, count = redact_and_cut(text, 600)
        assert count == 1 and OPENAI_KEY[:12] not in shown and "characters cut] …" in shown


# --- the lookup table, in-process --------------------------------------------------------------


@pytest.mark.parametrize("row", TABLE, ids=[row.path for row in TABLE])
async def test_a_variable_lookup(tools: ToolSet, row: Row) -> None:
    out = await tools.call_tool("inspect_variable", {"name": row.path})
    check(row, out.is_error, out.content, dict(os.environ))


async def test_reveal_never_opens_a_way_through_a_module_or_a_dunder(tools: ToolSet) -> None:
    for path in ("np.os.environ", "helper.__globals__", "In"):
        out = await tools.call_tool("inspect_variable", {"name": path, "reveal": True})
        assert out.is_error, path


async def test_list_variables_masks_the_same_values(tools: ToolSet) -> None:
    out = await tools.call_tool("list_variables", {})
    rows = {line.split()[0]: line for line in out.content.splitlines()[2:]}
    for name in ("api_key", "OPENAI_API_KEY", "db_password", "env", "env_copy", "notes"):
        assert rows[name].endswith("<masked>"), rows[name]
    assert "<masked>" not in rows["df"] and "<masked>" not in rows["cfg"]
    assert "reveal=True" in out.content
    for secret in SECRETS:
        assert secret not in out.content


async def test_get_history_and_run_code_output_mask_secrets(tools: ToolSet) -> None:
    history = await tools.call_tool("get_history", {"n": 5})
    assert "api_key = " in history.content and "<masked: " in history.content
    ran = await tools.call_tool("run_code", {"code": "print(cfg)\nnotes"})
    assert "'host': 'db.local'" in ran.content
    for secret in SECRETS:
        assert secret not in history.content and secret not in ran.content


# --- revealing is a read-secret call the user approves -----------------------------------------


async def test_reveal_asks_the_user_as_read_secret_and_shows_only_when_approved(
    serve: Any, tmp_path: Path, namespace: dict[str, Any]
) -> None:
    server = serve(
        [
            reply("", call("inspect_variable", id="masked", name="api_key")),
            reply("", call("inspect_variable", id="denied", name="api_key", reveal=True)),
            reply("", call("inspect_variable", id="approved", name="api_key", reveal=True)),
            reply("Your key starts with sk-proj."),
        ]
    )
    agent = Agent(
        model=server.model(),
        workspace=tmp_path,
        tools=kernel_tools(lambda: namespace),
        approvals=ApprovalPolicy(),
    )
    asked: list[ApprovalNeeded] = []
    events = []
    async for event in agent.run("What is my API key?"):
        events.append(event)
        if isinstance(event, ApprovalNeeded):
            asked.append(event)
            if len(asked) == 1:
                event.deny("not now")
            else:
                event.approve()
    assert isinstance(events[-1], Done)
    assert [(e.name, e.category, e.summary) for e in asked] == [
        ("inspect_variable", "read-secret", "api_key"),
        ("inspect_variable", "read-secret", "api_key"),
    ], "a plain inspect does not ask; each reveal does"
    results = {
        m["tool_call_id"]: m["content"] for m in server.requests[-1].messages if m["role"] == "tool"
    }
    assert "<masked: str of 56 chars; ask to reveal>" in results["masked"]
    assert results["denied"].startswith("inspect_variable: the user denied this call: not now")
    assert OPENAI_KEY in results["approved"]
    for request in server.requests[:3]:
        assert OPENAI_KEY not in str(request.body), "the key reached the model only once approved"


async def test_a_script_agent_denies_reveals_nobody_approved(
    serve: Any, tmp_path: Path, namespace: dict[str, Any]
) -> None:
    server = serve(
        [reply("", call("inspect_variable", id="r", name="db_password", reveal=True)), reply("ok")]
    )
    agent = Agent(model=server.model(), workspace=tmp_path, tools=kernel_tools(lambda: namespace))
    assert await agent.ask("show the password") == "ok"
    assert "hunter2-pw" not in str(server.requests[-1].body)
    assert "denied" in str(server.requests[-1].body)
