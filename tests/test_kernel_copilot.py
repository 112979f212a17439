"""`%copilot login`, `%copilot models` and a `copilot:` cell in a real kernel, against FakeGitHub."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from copilot_nb.testing import call, reply
from copilot_nb.testing.github_fake import FakeGitHub
from tests.html_safety import table_rows
from tests.kernel_session import KernelSession

pytestmark = pytest.mark.kernel


@pytest.fixture
def signed_out(tmp_path: Path) -> Iterator[tuple[FakeGitHub, KernelSession, Path]]:
    """A kernel whose GitHub is a fake and whose config folders are empty temp folders."""
    fake = FakeGitHub([reply("Hello from **Copilot**.")], polls=["authorization_pending"] * 2)
    fake.start()
    token_file = tmp_path / "config" / "github_token.json"
    env = {
        **fake.environ,
        "COPILOT_NB_CONFIG_DIR": str(token_file.parent),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
    }
    kernel = KernelSession(tmp_path, env)
    assert kernel.execute("%load_ext copilot_nb").status == "ok"
    yield fake, kernel, token_file
    kernel.close()
    fake.stop()


def test_login_then_a_copilot_cell_and_the_model_list(signed_out):
    fake, kernel, token_file = signed_out
    login = kernel.execute("%copilot login")

    assert login.status == "ok", login.reply["content"]
    (shown,) = login.of_type("display_data")
    assert "FAKE-0001" in shown["content"]["data"]["text/plain"]
    link = f'<a href="{fake.url}/login/device"'
    assert link in shown["content"]["data"]["text/html"], "a clickable link in the notebook"
    assert "signed in to 127.0.0.1" in login.stdout and "as octocat" in login.stdout
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    (entry,) = json.loads(token_file.read_text())["hosts"].values()
    assert entry["oauth_token"] in fake.github_tokens

    run = kernel.execute("%%copilot --model copilot:gpt-4o\nsay hello")
    assert run.status == "ok", run.reply["content"]
    assert "Hello from **Copilot**." in "".join(run.final_displays().values())
    (request,) = fake.chat_requests
    headers = {k.lower(): v for k, v in request.headers.items()}
    assert headers["authorization"] == f"Bearer {next(iter(fake.copilot_tokens))}"
    assert headers["copilot-integration-id"] == "vscode-chat"
    assert request.body["model"] == "gpt-4o"

    models = kernel.execute("%copilot models copilot")
    assert models.status == "ok", models.reply["content"]
    (table,) = models.of_type("display_data")
    markup = table["content"]["data"]["text/html"]
    rows = table_rows(markup)
    assert ["gpt-4o", "GPT-4o", "Azure OpenAI", "128k", "4k", "✓"] in [r[:6] for r in rows]
    assert "text-embedding" not in markup, "only chat models"
    fake.assert_complete()


def test_an_interrupt_cancels_the_sign_in(signed_out):
    fake, kernel, token_file = signed_out
    fake.polls = ["authorization_pending"] * 100_000
    fake.interval = 0.05
    msg_id = kernel.send("%copilot login")
    kernel.wait_for(msg_id, "display_data", timeout=30)
    kernel.manager.interrupt_kernel()
    interrupted = kernel.collect(msg_id, timeout=30)

    assert interrupted.status == "error"
    assert interrupted.reply["content"]["ename"] == "KeyboardInterrupt"
    assert "sign-in cancelled" in interrupted.stdout
    assert not token_file.exists()
    assert kernel.execute("1 + 1").status == "ok"


def test_a_denied_sign_in_is_a_usage_error(signed_out):
    fake, kernel, token_file = signed_out
    fake.polls = ["access_denied"]
    run = kernel.execute("%copilot login")
    assert run.status == "error"
    assert run.reply["content"]["ename"] == "UsageError"
    assert "denied" in run.reply["content"]["evalue"]
    assert not token_file.exists()


@pytest.mark.parametrize(
    ("model", "endpoint"),
    [
        ("gpt-5.3-codex", "/responses"),
        ("claude-sonnet-4", "/v1/messages"),
        ("gpt-4o", "/chat/completions"),
    ],
)
def test_a_copilot_cell_calls_a_tool_through_the_models_endpoint(tmp_path, model, endpoint):
    """Each model is asked through the endpoint Copilot lists for it, tool round included."""
    (tmp_path / "data.csv").write_text("a,b\n1,2\n")
    steps = [reply("", call("list_directory", id="l1", path=".")), reply("There is **data.csv**.")]
    with FakeGitHub(steps) as fake:
        env = {
            **fake.environ,
            "COPILOT_NB_GITHUB_TOKEN": fake.add_github_token(),
            "COPILOT_NB_CONFIG_DIR": str(tmp_path / "config"),
            "XDG_CONFIG_HOME": str(tmp_path / "xdg"),
        }
        kernel = KernelSession(tmp_path, env)
        try:
            assert kernel.execute("%load_ext copilot_nb").status == "ok"
            run = kernel.execute(f"%%copilot --model copilot:{model}\nwhat files are here?")
        finally:
            kernel.close()
        assert run.status == "ok", run.reply["content"]
        assert "There is **data.csv**." in "".join(run.final_displays().values())
        assert [r.path for r in fake.chat_requests] == [endpoint] * 2
        first, second = ({k.lower(): v for k, v in r.headers.items()} for r in fake.chat_requests)
        assert (first["x-initiator"], second["x-initiator"]) == ("user", "agent")
        assert first["editor-version"] == "vscode/1.107.0"
        assert "data.csv" in json.dumps(fake.chat_requests[1].body)
        fake.assert_complete()
