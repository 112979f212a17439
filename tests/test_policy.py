"""The administrator's policy: every key limits the one place its choice is made, users' own
settings cannot loosen it, and a policy that cannot be read refuses everything it could limit."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import jupyter_core.paths
import pytest

from copilot_nb import Agent
from copilot_nb.agent.approvals.policy import ApprovalPolicy, decide_call, policy_refusal
from copilot_nb.agent.conversations.store import ConversationFile
from copilot_nb.agent.model_strings import resolve_model
from copilot_nb.errors import PolicyError
from copilot_nb.events import ApprovalNeeded, Done
from copilot_nb.messages import UserMessage
from copilot_nb.models.anthropic.chat import AnthropicChat
from copilot_nb.models.cassettes.cassette import Cassette
from copilot_nb.policy import (
    EXTRA_VARIABLE,
    check_cassette_writing,
    check_model,
    completions_allowed,
    conversations_allowed,
    describe,
    load_policy,
    tightened,
)
from copilot_nb.policy.loading import fixed_folders
from copilot_nb.policy.rules import PolicyFormatError, normal_url, parse_rules
from copilot_nb.serve.server import ProxyServer
from copilot_nb.testing import call, reply
from copilot_nb.tools.mcp.config import load_config
from tests import policy_files

policy_file = policy_files.policy_file

# --- models: providers, models, base_urls --------------------------------------------------


def test_no_policy_file_limits_nothing(policy_file):
    check_model("anthropic", "claude-sonnet-4-5", "https://anywhere.test/v1")
    assert completions_allowed() and conversations_allowed() is None
    assert describe()[0].startswith("no administrator's policy (looked for ")


def test_providers_refuses_a_provider_naming_the_file_and_rule(policy_file):
    path = policy_file({"providers": ["openai", "ollama"]})
    with pytest.raises(PolicyError) as refused:
        resolve_model("anthropic:claude-sonnet-4-5")
    assert str(refused.value) == (
        "provider 'anthropic' is not allowed by the administrator's policy "
        f'({path}: providers = ["openai", "ollama"])'
    )
    assert resolve_model("openai:gpt-4o").name == "gpt-4o"
    assert type(resolve_model("offline")).__name__ == "OfflineModel"  # it sends nothing


def test_models_patterns_match_provider_and_model(policy_file):
    path = policy_file({"models": ["openai:gpt-4o*", "ollama:*"]})
    resolve_model("openai:gpt-4o-mini")
    resolve_model("ollama:qwen3")
    with pytest.raises(PolicyError, match=rf"model 'openai:o3' .*{path}: models = "):
        resolve_model("openai:o3")


async def test_base_urls_refuse_an_endpoint_before_a_byte_is_sent(policy_file, serve):
    server = serve([reply("never sent")])
    path = policy_file({"base_urls": ["https://llm.corp.test/*"]})
    with pytest.raises(PolicyError) as refused:
        await server.model().complete([UserMessage(content="hi")])
    assert f"endpoint '{server.url}' is not allowed" in str(refused.value)
    assert f'{path}: base_urls = ["https://llm.corp.test/*"]' in str(refused.value)
    assert server.requests == []  # the policy answered, not the server


async def test_base_urls_let_a_listed_endpoint_answer(policy_file, serve):
    server = serve([reply("hello")])
    policy_file({"base_urls": ["http://127.0.0.1:*/v1"], "providers": ["openai"]})
    answer = await server.model().complete([UserMessage(content="hi")])
    assert answer.text == "hello"


async def test_base_urls_hold_for_the_anthropic_wire_too(policy_file, serve):
    server = serve([reply("never sent")])
    policy_file({"base_urls": ["https://api.anthropic.com/*"]})
    model = AnthropicChat("claude-test", base_url=server.base_url, api_key="k")
    with pytest.raises(PolicyError, match=r"endpoint 'http://127\.0\.0\.1"):
        await model.complete([UserMessage(content="hi")])
    assert server.requests == []


def test_urls_are_compared_without_user_query_or_case():
    assert (
        normal_url("https://api.example.com@Evil.TEST:8443/v1/?x=1") == "https://evil.test:8443/v1"
    )
    assert normal_url("HTTPS://API.Example.com/v1/") == "https://api.example.com/v1"


def test_the_environment_cannot_move_a_model_past_the_policy(policy_file, monkeypatch, serve):
    server = serve([reply("never sent")])
    policy_file({"base_urls": ["https://api.openai.com/*"]})
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)  # the user's own variable
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    model = resolve_model("openai:gpt-4o")
    with pytest.raises(PolicyError, match="base_urls"):
        asyncio.run(model.complete([UserMessage(content="hi")]))


async def test_a_base_url_moved_after_the_model_was_built_is_checked_too(
    policy_file, monkeypatch, serve
):
    """A model reads `OPENAI_BASE_URL` at each request (a fix needs no restart): the policy
    checks the address the request goes to, not the one the model was built with."""
    allowed, elsewhere = serve([reply("allowed")]), serve([reply("never sent")])
    policy_file({"base_urls": [f"{allowed.url}/*", allowed.url]})
    monkeypatch.setenv("OPENAI_BASE_URL", allowed.url)
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    model = resolve_model("openai:gpt-4o")
    assert (await model.complete([UserMessage(content="hi")])).text == "allowed"
    monkeypatch.setenv("OPENAI_BASE_URL", elsewhere.url)
    with pytest.raises(PolicyError, match="base_urls"):
        await model.complete([UserMessage(content="hi")])
    assert elsewhere.requests == []


# --- approval_floors ----------------------------------------------------------------------


class _Tool:
    trust = None

    def __init__(self, category: str) -> None:
        self.category = category

    def category_for(self, arguments: object) -> str:
        return self.category


@pytest.mark.parametrize(
    ("floor", "setting", "supported", "expected"),
    [
        ("ask", "allow", ("allow", "ask", "deny"), "ask"),
        ("ask", "review", ("allow", "review", "ask", "deny"), "ask"),  # review applies unseen
        ("review", "allow", ("allow", "review", "ask", "deny"), "review"),
        ("review", "allow", ("allow", "ask", "deny"), "ask"),  # no review here: next stricter
        ("review", "ask", ("allow", "review", "ask", "deny"), "ask"),  # stricter stays
        ("ask", "deny", ("allow", "ask", "deny"), "deny"),
        ("deny", "ask", ("allow", "ask", "deny"), "deny"),
        ("allow", "ask", ("allow", "ask", "deny"), "ask"),  # a floor never loosens
    ],
)
def test_a_floor_raises_a_looser_decision_and_keeps_a_stricter_one(
    policy_file, floor, setting, supported, expected
):
    policy_file({"approval_floors": {"execute": floor}})
    assert tightened("execute", setting, supported) == expected
    assert tightened("edit", setting, supported) == setting  # other categories are the user's


def test_yes_and_allow_settings_cannot_go_below_the_floor(policy_file):
    path = policy_file({"approval_floors": {"execute": "ask", "external": "deny"}})
    loosest = ApprovalPolicy.allow_all().approve_changes()
    assert decide_call(loosest, "run_code", _Tool("execute"), {}) == ("execute", "ask")
    assert decide_call(loosest, "git__log", _Tool("external"), {}) == ("external", "deny")
    assert decide_call(loosest, "write_file", _Tool("edit"), {}) == ("edit", "allow")
    assert policy_refusal("git__log", "external") == (
        f'git__log: denied by the administrator\'s policy ({path}: approval_floors.external = "deny")'
    )


async def test_an_agent_told_to_allow_edits_asks_under_an_edit_floor(policy_file, serve, tmp_path):
    policy_file({"approval_floors": {"edit": "ask"}})
    server = serve([reply("", call("write_file", path="a.txt", content="x")), reply("done")])
    agent = Agent(model=server.model(), workspace=tmp_path, approvals=ApprovalPolicy.allow_all())
    events = []
    async for event in agent.run("write"):
        events.append(event)
        if isinstance(event, ApprovalNeeded):
            event.approve()
    assert [e.name for e in events if isinstance(e, ApprovalNeeded)] == ["write_file"]
    assert isinstance(events[-1], Done) and (tmp_path / "a.txt").read_text() == "x"


# --- mcp_commands, mcp_urls ------------------------------------------------------------------


def test_mcp_servers_not_listed_are_refused_the_workspace_file_included(policy_file, tmp_path):
    path = policy_file(
        {"mcp_commands": ["uvx mcp-server-git *"], "mcp_urls": ["https://mcp.corp.test/*"]}
    )
    root, user = tmp_path / "work", tmp_path / "user"
    root.mkdir()
    user.mkdir()
    (user / "mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "git": {"command": "uvx", "args": ["mcp-server-git", "--repository", "."]},
                    "corp": {"url": "https://mcp.corp.test/mcp"},
                    "other": {"url": "https://mcp.elsewhere.test/mcp"},
                }
            }
        )
    )
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"evil": {"command": "sh"}}}))
    config = load_config(root, user, {})
    assert sorted(config.servers) == ["corp", "git"]
    refused = {p.name: (p.source, p.message) for p in config.problems}
    assert refused["evil"] == (
        ".mcp.json",
        f"the MCP server command 'sh' is not allowed by the administrator's policy "
        f'({path}: mcp_commands = ["uvx mcp-server-git *"])',
    )
    assert (
        "mcp_urls = " in refused["other"][1]
        and "https://mcp.elsewhere.test/mcp" in (refused["other"][1])
    )


def test_one_mcp_key_refuses_every_server_of_the_other_kind(policy_file, tmp_path):
    policy_file({"mcp_commands": ["*"]})
    (tmp_path / "mcp.json").write_text(
        json.dumps({"mcpServers": {"web": {"url": "https://x.test/mcp"}, "sh": {"command": "sh"}}})
    )
    config = load_config(tmp_path, tmp_path, {})
    assert list(config.servers) == ["sh"]
    assert "mcp_urls = []" in config.problems[0].message


# --- serve, serve_hosts ------------------------------------------------------------------


class _NoBackend:
    pass


async def test_serve_false_refuses_the_proxy_before_it_listens(policy_file):
    path = policy_file({"serve": False})
    server = ProxyServer(backend=_NoBackend())  # type: ignore[arg-type]
    with pytest.raises(PolicyError, match=rf"starting the proxy .*\({path}: serve = false\)"):
        await server.start()
    assert not server.running


async def test_serve_hosts_limit_where_the_proxy_may_listen(policy_file):
    policy_file({"serve_hosts": ["127.0.0.1", "::1"]})
    server = ProxyServer(backend=_NoBackend(), host="0.0.0.0")  # type: ignore[arg-type]
    with pytest.raises(PolicyError, match=r"listening on '0.0.0.0'.*serve_hosts = "):
        await server.start()


# --- cassettes, conversations, completions --------------------------------------------------


def test_cassettes_false_refuses_recording_but_not_a_replay(policy_file, tmp_path):
    recorded = tmp_path / "old.copilot.jsonl"
    Cassette(recorded, "record")  # before the policy: a cassette exists
    path = policy_file({"cassettes": False})
    with pytest.raises(PolicyError, match=rf"recording a cassette .*{path}: cassettes = false"):
        Cassette(tmp_path / "new.copilot.jsonl", "record")
    with pytest.raises(PolicyError):
        Cassette(tmp_path / "auto.copilot.jsonl", "auto")
    assert not (tmp_path / "new.copilot.jsonl").exists()
    assert Cassette(recorded, "replay").mode == "replay"


def test_conversations_false_writes_no_conversation_file(policy_file, tmp_path):
    policy_file({"conversations": False})
    saved = ConversationFile(tmp_path / "nb.copilot-chat.jsonl")
    with pytest.raises(PolicyError, match="saving conversations is not allowed"):
        saved.append([{"type": "message", "role": "user", "content": "hi"}])
    assert not saved.path.exists()


def test_conversations_and_completions_switches(policy_file):
    path = policy_file({"conversations": False, "completions": False})
    assert conversations_allowed() == (
        f"saving conversations is not allowed by the administrator's policy "
        f"({path}: conversations = false)"
    )
    assert completions_allowed() is False
    policy_file({"completions": True})
    assert completions_allowed() is True and conversations_allowed() is None


# --- where the policy comes from, and failing closed ------------------------------------------


def test_every_file_found_applies_and_a_choice_must_pass_each(policy_file, tmp_path, monkeypatch):
    system = policy_file({"providers": ["openai", "anthropic"]})
    env = policy_file({"providers": ["anthropic", "ollama"]}, folder="env")
    resolve_model("anthropic:claude-x")
    with pytest.raises(PolicyError, match=str(system)):
        resolve_model("ollama:qwen3")
    with pytest.raises(PolicyError, match=str(env)):
        resolve_model("openai:gpt-4o")
    extra = tmp_path / "mine.json"  # the user's own file can only add limits
    extra.write_text(json.dumps({"providers": ["openai", "anthropic", "ollama", "copilot"]}))
    monkeypatch.setenv(EXTRA_VARIABLE, str(extra))
    with pytest.raises(PolicyError):
        resolve_model("copilot:gpt-4o")
    assert [r.source for r in load_policy().rules] == [str(env), str(system), str(extra)]


def test_the_users_own_jupyter_config_is_not_a_policy(policy_file, tmp_path, monkeypatch):
    mine = tmp_path / "my-jupyter"
    mine.mkdir()
    (mine / "copilot_nb_policy.json").write_text(json.dumps({"providers": []}))
    monkeypatch.setenv("JUPYTER_CONFIG_DIR", str(mine))
    monkeypatch.setenv("JUPYTER_CONFIG_PATH", str(mine))
    resolve_model("openai:gpt-4o")
    assert load_policy().rules == ()


def test_two_variables_cannot_take_the_system_folders_out_of_the_search(tmp_path):
    """JUPYTER_PLATFORM_DIRS=1 with XDG_CONFIG_DIRS at the user's folder (a kernelspec's `env`
    may set both) moves jupyter_core's system folders; the administrator's stay searched, and
    the user's folder is only added."""
    mine = tmp_path / "mine"
    env = {**os.environ, "JUPYTER_PLATFORM_DIRS": "1", "XDG_CONFIG_DIRS": str(mine)}
    env.pop(EXTRA_VARIABLE, None)
    script = (
        "import json, jupyter_core.paths as p; from copilot_nb.policy import policy_paths; "
        "print(json.dumps([p.SYSTEM_CONFIG_PATH, [str(x) for x in policy_paths()]]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    jupyters, searched = json.loads(done.stdout)
    assert jupyters == [str(mine / "jupyter")]  # what jupyter_core makes of the two variables
    for folder in ("/usr/local/etc/jupyter", "/etc/jupyter", str(mine / "jupyter")):
        assert f"{folder}/copilot_nb_policy.json" in searched
    assert f"{sys.prefix}/etc/jupyter/copilot_nb_policy.json" in searched


def test_a_fixed_folder_keeps_refusing_whatever_jupyter_core_computes(
    policy_file, tmp_path, monkeypatch
):
    path = policy_file({"providers": ["anthropic"]})
    mine = tmp_path / "mine"
    mine.mkdir()
    monkeypatch.setattr(jupyter_core.paths, "SYSTEM_CONFIG_PATH", [str(mine)])
    monkeypatch.setattr(jupyter_core.paths, "ENV_CONFIG_PATH", [str(mine)])
    with pytest.raises(PolicyError, match=str(path)):
        resolve_model("ollama:qwen3")


@pytest.mark.parametrize(
    ("os_name", "platform", "expected"),
    [
        (
            "posix",
            "linux",
            ("/env/etc/jupyter", "/usr/local/etc/jupyter", "/etc/jupyter", "/etc/xdg/jupyter"),
        ),
        (
            "posix",
            "darwin",
            (
                "/env/etc/jupyter",
                "/usr/local/etc/jupyter",
                "/etc/jupyter",
                "/Library/Application Support/jupyter",
            ),
        ),
        ("nt", "win32", ("/env/etc/jupyter",)),
    ],
)
def test_the_fixed_folders_are_jupyters_defaults_without_variables(os_name, platform, expected):
    assert fixed_folders(os_name, platform, "/env") == expected


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("{not json", "it is not valid JSON"),
        ("[]", "it must be a JSON object of rules"),
        ('{"provider": ["openai"]}', "unknown key provider; the keys are providers, "),
        ('{"providers": "openai"}', "providers must be a list of strings"),
        ('{"serve": "no"}', "serve must be true or false"),
        ('{"approval_floors": {"execute": "maybe"}}', "approval_floors.execute is 'maybe'"),
        ('{"approval_floors": {"run": "ask"}}', "approval_floors names 'run'"),
    ],
)
def test_a_malformed_policy_fails_closed_naming_the_file_and_the_problem(
    policy_file, text, problem, tmp_path
):
    path = policy_file(text)
    with pytest.raises(PolicyError) as refused:
        resolve_model("openai:gpt-4o")
    message = str(refused.value)
    assert f"the administrator's policy {path} cannot be read ({problem}" in message
    assert "until the file is fixed" in message
    with pytest.raises(PolicyError):
        check_cassette_writing()
    assert conversations_allowed() and not completions_allowed()
    assert tightened("edit", "allow", ("allow", "ask", "deny")) == "deny"
    assert tightened("read", "allow", ("allow", "ask", "deny")) == "allow"
    assert load_config(tmp_path, tmp_path, {}).servers == {}
    assert describe()[0].startswith(f"{path}: cannot be read")
    resolve_model("offline")  # the demo still runs: it sends nothing anywhere


def test_describe_shows_each_file_and_its_rules(policy_file):
    path = policy_file({"providers": ["openai"], "approval_floors": {"execute": "ask"}})
    assert describe() == [
        f"{path}:",
        '  providers = ["openai"]',
        '  approval_floors = {"execute": "ask"}',
    ]


def test_the_parser_names_the_key_it_cannot_use():
    with pytest.raises(PolicyFormatError, match="mcp_urls must be a list of strings"):
        parse_rules('{"mcp_urls": [1]}', "p.json")
    rules = parse_rules('{"approval_floors": {"read_secret": "deny"}}', "p.json")
    assert rules.floor("read-secret") == "deny"


def test_a_policy_file_changed_on_disk_applies_at_once(policy_file):
    policy_file({"providers": ["openai"]})
    with pytest.raises(PolicyError):
        resolve_model("ollama:qwen3")
    policy_file({"providers": ["openai", "ollama", "x" * 40]})  # another size: a new stamp
    resolve_model("ollama:qwen3")
