"""Signing in to GitHub: the device flow against a loopback fake, and where the token is kept."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path

import httpx
import pytest

from copilot_nb import AuthError, ConfigError, ModelConnectionError
from copilot_nb.config import config_dir
from copilot_nb.models.copilot import github_sign_in as github_auth
from copilot_nb.models.copilot import github_tokens
from copilot_nb.models.copilot.github_sign_in import DEFAULT_CLIENT_ID, DeviceFlow, login
from copilot_nb.models.copilot.github_tokens import (
    GitHubHosts,
    editor_token,
    find_github_token,
    save_github_token,
    stored_token,
    write_private,
)
from copilot_nb.testing.github_fake import FakeGitHub
from tests.helpers import Sleeps


@pytest.fixture(autouse=True)
def private_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Our config dir, the editors' config dir and HOME all point into tmp_path."""
    monkeypatch.setenv("COPILOT_NB_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path


def polls(fake: FakeGitHub) -> list[dict]:
    return [r.body for r in fake.requests if r.path == "/login/oauth/access_token"]


# --- the device flow ------------------------------------------------------------------------


async def test_device_flow_shows_a_code_and_returns_the_token_once_approved(github):
    fake = github(polls=["authorization_pending", "authorization_pending"], interval=5)
    sleeps = Sleeps()
    flow = DeviceFlow(fake.hosts, sleep=sleeps)
    code = await flow.start()
    assert code.user_code.startswith("FAKE-")
    assert code.verification_uri == f"{fake.url}/login/device"
    token = await flow.wait(code)

    assert token in fake.github_tokens
    assert sleeps.waits == [5, 5, 5], "one interval before every poll"
    start = fake.requests[0]
    assert start.path == "/login/device/code"
    assert start.body == {"client_id": DEFAULT_CLIENT_ID, "scope": "read:user"}
    assert start.headers["Accept"] == "application/json"
    assert [p["grant_type"] for p in polls(fake)] == [github_auth.DEVICE_GRANT] * 3
    assert {p["device_code"] for p in polls(fake)} == {code.device_code}


async def test_slow_down_adds_five_seconds_to_every_later_poll(github):
    fake = github(polls=["authorization_pending", "slow_down", "authorization_pending"], interval=5)
    sleeps = Sleeps()
    flow = DeviceFlow(fake.hosts, sleep=sleeps)
    await flow.wait(await flow.start())
    assert sleeps.waits == [5, 5, 10, 10]


@pytest.mark.parametrize(
    ("outcome", "words"),
    [
        ("expired_token", "expired before it was approved"),
        ("access_denied", "denied"),
        ("no_such_thing", "refused the sign-in"),
    ],
)
async def test_a_sign_in_that_cannot_finish_says_why_and_what_to_do(github, outcome, words):
    fake = github(polls=["authorization_pending", outcome])
    flow = DeviceFlow(fake.hosts, sleep=Sleeps())
    code = await flow.start()
    with pytest.raises(AuthError) as caught:
        await flow.wait(code)
    assert words in str(caught.value)
    assert "%copilot login" in str(caught.value)
    assert len(polls(fake)) == 2, "no polling after a final answer"


async def test_the_code_expires_locally_when_github_never_answers(github):
    fake = github(polls=["authorization_pending"] * 100, interval=300)
    sleeps = Sleeps()
    flow = DeviceFlow(fake.hosts, sleep=sleeps, clock=sleeps.clock)
    code = await flow.start()  # expires_in is 900 s: three polls fit, the fourth is too late
    with pytest.raises(AuthError, match="expired"):
        await flow.wait(code)
    assert len(polls(fake)) == 3


async def test_a_network_blip_while_polling_is_retried_but_a_dead_network_is_not():
    answers = iter(["drop", "authorization_pending", "drop", "grant"])
    dead = False

    def github(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/login/device/code":
            return httpx.Response(200, json={"device_code": "d", "user_code": "U", "interval": 1})
        answer = "drop" if dead else next(answers)
        if answer == "drop":
            raise httpx.ConnectError("network unreachable", request=request)
        if answer == "grant":  # form-encoded, as GitHub answers a client that forgot Accept
            return httpx.Response(200, text="access_token=gho_after_blips&token_type=bearer")
        return httpx.Response(200, json={"error": answer})

    async with httpx.AsyncClient(transport=httpx.MockTransport(github)) as client:
        flow = DeviceFlow(GitHubHosts(), http_client=client, sleep=Sleeps())
        assert await flow.wait(await flow.start()) == "gho_after_blips"
        dead = True
        with pytest.raises(ModelConnectionError, match="could not reach"):
            await flow.wait(await flow.start())


async def test_an_oauth_app_github_does_not_know_is_a_config_error(github, monkeypatch):
    fake = github()
    monkeypatch.setenv("COPILOT_NB_GITHUB_CLIENT_ID", "Iv1.not-a-copilot-app")
    flow = DeviceFlow(fake.hosts)
    assert flow.client_id == "Iv1.not-a-copilot-app"
    with pytest.raises(ConfigError, match="COPILOT_NB_GITHUB_CLIENT_ID"):
        await flow.start()


async def test_cancelling_the_wait_stops_polling_and_stores_nothing(github):
    fake = github(polls=["authorization_pending"] * 10_000, interval=0.01)
    polling = asyncio.Event()
    waits = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)
        if len(waits) > 2:
            polling.set()  # two polls answered "pending", a third wait has begun
        await asyncio.sleep(seconds)

    task = asyncio.create_task(login(show=print, hosts=fake.hosts, sleep=sleep))
    await asyncio.wait_for(polling.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 5)
    assert not github_tokens.token_path().exists()


async def test_login_stores_the_token_privately_and_knows_who_signed_in(github):
    fake = github(polls=["authorization_pending"], user="hubot")
    shown = []
    token = await login(show=shown.append, hosts=fake.hosts, sleep=Sleeps())

    assert [c.user_code for c in shown] == ["FAKE-0001"]
    assert token.user == "hubot"
    assert Path(token.source) == github_tokens.token_path()
    saved = read_private(Path(token.source))
    assert saved["hosts"][fake.hosts.host]["oauth_token"] == token.value
    assert saved["hosts"][fake.hosts.host]["client_id"] == DEFAULT_CLIENT_ID
    assert find_github_token(fake.hosts) == token


def read_private(path: Path) -> dict:
    """The JSON in a file that only its owner may read or write."""
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    return json.loads(path.read_text())


# --- where the token is kept ----------------------------------------------------------------


def test_the_token_file_is_replaced_atomically(tmp_path, monkeypatch):
    path = tmp_path / "config" / "github_token.json"
    write_private(path, "old\n")
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600

    def broken_replace(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError, match="disk full"):
        write_private(path, "new\n")
    assert path.read_text() == "old\n"
    assert [p.name for p in path.parent.iterdir()] == ["github_token.json"], "no temp file left"


def test_tokens_are_kept_per_host_and_a_broken_file_reads_as_none(tmp_path):
    dotcom = GitHubHosts()
    enterprise = GitHubHosts(github_url="https://acme.ghe.com", api_url="https://api.acme.ghe.com")
    github_tokens.token_path().parent.mkdir(parents=True)
    github_tokens.token_path().write_text("{not json")
    assert stored_token(dotcom) is None

    save_github_token("gho_dotcom", hosts=dotcom, user="me")
    save_github_token("gho_acme", hosts=enterprise)
    assert stored_token(dotcom).value == "gho_dotcom"
    assert stored_token(dotcom).user == "me"
    assert stored_token(enterprise).value == "gho_acme"


def write_editor_file(root: Path, name: str, content: dict) -> Path:
    folder = root / "xdg" / "github-copilot"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(json.dumps(content))
    return folder / name


def test_precedence_explicit_then_ours_then_editors_then_gh_and_github_token(private_home):
    env = dict(os.environ)
    assert find_github_token(environ=env) is None

    env["GITHUB_TOKEN"] = "ghp_shell"
    assert find_github_token(environ=env).source == "GITHUB_TOKEN"
    env["GH_TOKEN"] = "gho_gh"
    assert find_github_token(environ=env).source == "GH_TOKEN"

    hosts_file = write_editor_file(
        private_home, "hosts.json", {"github.com": {"user": "vim", "oauth_token": "ghu_hosts"}}
    )
    assert find_github_token(environ=env).source == str(hosts_file)
    apps_file = write_editor_file(
        private_home,
        "apps.json",
        {
            "acme.ghe.com:Iv1.b507a08c87ecfe98": {"oauth_token": "ghu_other_host"},
            "github.com:Iv1.b507a08c87ecfe98": {"user": "vs", "oauth_token": "ghu_apps"},
        },
    )
    found = find_github_token(environ=env)
    assert (found.value, found.source, found.user) == ("ghu_apps", str(apps_file), "vs")

    save_github_token("gho_ours", environ=env)
    assert find_github_token(environ=env).value == "gho_ours"

    env["COPILOT_NB_GITHUB_TOKEN"] = "gho_explicit"
    assert find_github_token(environ=env).source == "COPILOT_NB_GITHUB_TOKEN"


def test_editor_sign_in_is_found_under_home_config_without_xdg(private_home):
    env = {"HOME": str(private_home / "home")}
    folder = private_home / "home" / ".config" / "github-copilot"
    folder.mkdir(parents=True)
    (folder / "hosts.json").write_text(json.dumps({"github.com": {"oauth_token": "ghu_home"}}))
    assert editor_token(GitHubHosts(), environ=env).value == "ghu_home"


def test_config_dir_precedence(tmp_path):
    home = os.path.expanduser("~")
    assert config_dir({}) == Path(home) / ".config" / "copilot_nb"
    assert config_dir({"XDG_CONFIG_HOME": "/x"}) == Path("/x/copilot_nb")
    both = {"XDG_CONFIG_HOME": "/x", "COPILOT_NB_CONFIG_DIR": str(tmp_path)}
    assert config_dir(both) == tmp_path


def test_hosts_default_to_github_com_and_follow_an_enterprise_host():
    assert GitHubHosts.from_env({}) == GitHubHosts(
        github_url="https://github.com", api_url="https://api.github.com"
    )
    assert GitHubHosts.from_env({}).host == "github.com"
    ghe = GitHubHosts.from_env({"COPILOT_NB_GITHUB_URL": "https://acme.ghe.com/"})
    assert ghe.api_url == "https://api.acme.ghe.com"
    server = GitHubHosts.from_env({"COPILOT_NB_GITHUB_URL": "https://git.example.org"})
    assert server.api_url == "https://git.example.org/api/v3"
    explicit = GitHubHosts.from_env(
        {"COPILOT_NB_GITHUB_URL": "http://127.0.0.1:9", "COPILOT_NB_GITHUB_API_URL": "http://x/"}
    )
    assert (explicit.host, explicit.api_url) == ("127.0.0.1:9", "http://x")


def test_a_token_never_shows_in_its_repr():
    token = find_github_token(environ={"GH_TOKEN": "gho_secret"})
    assert "gho_secret" not in repr(token)
