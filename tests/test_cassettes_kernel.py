"""Cassettes in a real kernel: a session recorded against each loopback provider, then replayed in
a fresh kernel with no provider, no key and no network, gives the same cell outputs; the user's
approval is replayed without asking; a changed prompt fails the cell with a diff; no secret is
written; each output says where it came from."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from copilot_nb.testing import ScriptedServer, call, reply
from copilot_nb.testing.github_fake import FakeGitHub
from copilot_nb.text import SECRET_VALUE
from tests.helpers import input_request, kernel_in
from tests.kernel_session import Execution

pytestmark = pytest.mark.kernel

OPENAI_KEY = "sk-proj-" + "K3y" * 12
ANTHROPIC_KEY = "sk-ant-api03-" + "s3cr" * 10
GITHUB_TOKEN = "ghu_" + "T0k" * 12
WRITE = "%%copilot\nWrite notes.txt saying hello."
ASK = "%%copilot\nWhat did you write?"
PROVIDERS = ("openai", "openai-responses", "anthropic", "copilot")


def script() -> list[Any]:
    return [
        reply("", call("write_file", path="notes.txt", content="hello\n")),
        reply("I wrote **notes.txt**."),
        reply("`notes.txt` says hello."),
    ]


@pytest.fixture
def provider_env(request: pytest.FixtureRequest) -> Iterator[tuple[str, dict[str, str]]]:
    """A loopback server speaking one provider's wire format, and a kernel environment for it."""
    provider = request.param
    if provider == "copilot":
        fake = FakeGitHub(script()).start()
        token = fake.add_github_token(GITHUB_TOKEN)
        env = {
            **fake.environ,
            "COPILOT_NB_MODEL": f"copilot:{fake.model_name}",
            "COPILOT_NB_GITHUB_TOKEN": token,
        }
        yield provider, env
        fake.stop()
        return
    server = ScriptedServer(script()).start()
    env = {
        "COPILOT_NB_MODEL": f"{provider}:scripted",
        "OPENAI_BASE_URL": server.url,
        "OPENAI_API_KEY": OPENAI_KEY,
        "ANTHROPIC_BASE_URL": server.base_url,
        "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
    }
    yield provider, env
    server.stop()


def outputs(run: Execution) -> list[str]:
    return list(run.final_displays().values())


def provenance(run: Execution) -> dict[str, Any]:
    updates = run.of_type("update_display_data")
    return updates[-1]["content"]["metadata"]["copilot_nb"]


def record_session(folder: Path, env: dict[str, str]) -> tuple[list[str], list[str], dict]:
    kernel = kernel_in(folder, env)
    try:
        started = kernel.execute("%copilot record session.copilot.jsonl")
        assert "recording to session.copilot.jsonl" in started.stdout
        msg_id = kernel.send(WRITE, allow_stdin=True)  # a console: the approval asks input()
        input_request(kernel, msg_id)
        kernel.client.input("y")
        first = kernel.collect(msg_id, timeout=60)
        assert first.status == "ok", first.messages
        second = kernel.execute(ASK)
        assert second.status == "ok"
        return outputs(first), outputs(second), provenance(first)
    finally:
        kernel.close()


@pytest.mark.parametrize("provider_env", PROVIDERS, indirect=True)
def test_a_recorded_session_replays_offline_with_the_same_outputs(provider_env, tmp_path):
    provider, env = provider_env
    recorded = record_session(tmp_path / "recorded", env)
    cassette = tmp_path / "recorded" / "session.copilot.jsonl"
    assert (tmp_path / "recorded" / "notes.txt").read_text() == "hello\n"

    text = cassette.read_text()
    for secret in (OPENAI_KEY, ANTHROPIC_KEY, GITHUB_TOKEN, str(tmp_path)):
        assert secret not in text
    assert not SECRET_VALUE.search(text)
    assert "authorization" not in text.lower() and "x-api-key" not in text.lower()
    lines = [json.loads(line) for line in text.splitlines()]
    assert lines[0]["model"] == env["COPILOT_NB_MODEL"]
    assert [line["type"] for line in lines[1:]].count("approval") == 1

    # A fresh kernel elsewhere, with another model configured, no key and nothing listening.
    elsewhere = tmp_path / "replayed"
    elsewhere.mkdir()
    shutil.copy(cassette, elsewhere)
    offline = {"COPILOT_NB_MODEL": "openai:gpt-4o", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    kernel = kernel_in(elsewhere, offline, config=tmp_path / "recorded" / ".config")  # same user
    try:
        started = kernel.execute("%copilot replay session.copilot.jsonl")
        assert f"recorded with {env['COPILOT_NB_MODEL']}" in started.stdout
        assert "Recorded by you (signed with your key)" in started.stdout
        assert "write_file (edit): notes.txt" in started.stdout
        first = kernel.execute(WRITE)  # no stdin: the recorded answer approves
        second = kernel.execute(ASK)
        stopped = kernel.execute("%copilot cassette off")
    finally:
        kernel.close()
    assert first.status == second.status == "ok"
    assert "stopped replaying session.copilot.jsonl" in stopped.stdout
    assert stopped.stdout.rstrip().endswith("model openai:gpt-4o")  # the reader's own again
    assert (outputs(first), outputs(second)) == recorded[:2]
    assert (elsewhere / "notes.txt").read_text() == "hello\n"

    replayed = provenance(first)
    assert replayed == recorded[2]
    assert replayed["provider"] == provider
    assert [call["tool"] for call in replayed["tool_calls"]] == ["write_file"]
    assert replayed["cassette"]["file"] == "session.copilot.jsonl"
    assert replayed["usage"]["output_tokens"] > 0


@pytest.mark.parametrize("provider_env", ["openai"], indirect=True)
def test_a_replay_that_differs_fails_the_cell_with_what_differed(provider_env, tmp_path):
    _, env = provider_env
    record_session(tmp_path, env)
    (tmp_path / "notes.txt").unlink()
    kernel = kernel_in(tmp_path, {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    try:
        kernel.execute("%copilot replay session.copilot.jsonl")
        run = kernel.execute("%%copilot\nWrite notes.txt saying goodbye.")
    finally:
        kernel.close()
    assert run.status == "error"
    shown = "\n".join(outputs(run)) + run.stdout + json.dumps(run.reply["content"])
    assert "differs from the recording in session.copilot.jsonl" in shown
    assert "the request (or the context sent with it) changed" in shown
    assert "-Write notes.txt saying hello." in shown
    assert "+Write notes.txt saying goodbye." in shown
    assert not (tmp_path / "notes.txt").exists()


@pytest.mark.parametrize("provider_env", ["openai"], indirect=True)
def test_auto_mode_from_the_environment_records_then_replays(provider_env, tmp_path):
    _, env = provider_env
    notebook = tmp_path / "analysis.ipynb"
    notebook.write_text("{}")
    auto = {**env, "COPILOT_NB_CASSETTE": "auto", "JPY_SESSION_NAME": str(notebook)}
    kernel = kernel_in(tmp_path, auto)
    try:
        first = kernel.execute("%%copilot --yes\nWrite notes.txt saying hello.")
    finally:
        kernel.close()
    assert first.status == "ok"
    cassette = tmp_path / "analysis.copilot.jsonl"
    assert cassette.exists()
    (tmp_path / "notes.txt").unlink()
    quiet = {**auto, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    kernel = kernel_in(tmp_path, quiet)
    try:
        again = kernel.execute("%%copilot --yes\nWrite notes.txt saying hello.")
        status = kernel.execute("%copilot cassette")
    finally:
        kernel.close()
    assert again.status == "ok"
    assert outputs(again) == outputs(first)
    assert "replaying/recording analysis.copilot.jsonl" in status.stdout


def test_a_cell_the_agent_adds_names_its_model_provider_and_cassette_entry(tmp_path):
    import nbformat

    cells = [nbformat.v4.new_code_cell("x = 1")]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), tmp_path / "a.ipynb")
    add = call(
        "insert_cell", after_cell_id="#1", cell_type="code", source="print(x)", notebook="a.ipynb"
    )
    with ScriptedServer([reply("", add), reply("Added.")]) as server:
        env = {
            "COPILOT_NB_MODEL": "anthropic:scripted",
            "ANTHROPIC_BASE_URL": server.base_url,
            "ANTHROPIC_API_KEY": ANTHROPIC_KEY,
        }
        kernel = kernel_in(tmp_path, env)
        try:
            kernel.execute("%copilot record cells.copilot.jsonl")
            run = kernel.execute("%%copilot --yes\nAdd a cell printing x to a.ipynb.")
        finally:
            kernel.close()
    assert run.status == "ok", run.messages
    assert "✓ insert_cell" in "\n".join(outputs(run)), outputs(run)
    stamp = nbformat.read(tmp_path / "a.ipynb", as_version=4).cells[1].metadata["copilot_nb"]
    assert stamp["change"] == "inserted"
    assert (stamp["model"], stamp["provider"]) == ("scripted", "anthropic")
    assert stamp["cassette"] == "cells.copilot.jsonl#1"


RUN = "%%copilot\nMake made.txt."
MADE = "open('made.txt', 'w').write('x')"


def test_a_cassette_whose_code_was_swapped_asks_and_headless_runs_nothing(tmp_path):
    """A recording of approved code, then the code swapped in the file: the replay lists the
    swapped call, says the cassette is no longer the user's own, and, with nobody to ask, denies
    it; the swapped code never runs."""
    script = [reply("", call("run_code", code=MADE)), reply("Made it.")]
    with ScriptedServer(script) as server:
        env = {"COPILOT_NB_MODEL": "openai:scripted", "OPENAI_BASE_URL": server.url}
        env["OPENAI_API_KEY"] = OPENAI_KEY
        kernel = kernel_in(tmp_path, env)
        try:
            kernel.execute("%copilot record run.copilot.jsonl")
            msg_id = kernel.send(RUN, allow_stdin=True)
            input_request(kernel, msg_id)
            kernel.client.input("y")
            assert kernel.collect(msg_id, timeout=60).status == "ok"
        finally:
            kernel.close()
    assert (tmp_path / "made.txt").exists()
    tape = tmp_path / "run.copilot.jsonl"
    tape.write_text(tape.read_text().replace("made.txt", "pwned.txt"))  # code and answer alike

    quiet = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    kernel = kernel_in(tmp_path, quiet)  # the same user, the same key
    try:
        started = kernel.execute("%copilot replay run.copilot.jsonl")
        run = kernel.execute(RUN)  # headless: nobody can answer
    finally:
        kernel.close()
    assert "Not signed by you" in started.stdout
    assert "run_code (execute): open('pwned.txt', 'w').write('x')" in started.stdout
    assert not (tmp_path / "pwned.txt").exists()
    assert "differs from the recording" in json.dumps(run.messages, default=str)
