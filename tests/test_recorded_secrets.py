"""Secrets that must not reach a saved file by a side door: an environment key under a name no
list foresaw, printed by code the user let run; a key the model repeats in a Responses reasoning
summary; and a password with no recognisable format that an approved read of `.env` returned and
the model then repeats in its own words (in text, in a tool call's arguments, in its reasoning).
Each is checked in the cassette and in the saved conversation alike."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from copilot_nb.agent.conversations.format import SUFFIX
from copilot_nb.models.cassettes.cassette import Cassette, using
from copilot_nb.models.recording_scrub import (
    MIN_WITHHELD_VALUE,
    REDACTED,
    WITHHELD,
    WORKSPACE,
    Scrubber,
    withheld_values,
)
from copilot_nb.testing import ScriptedServer, call, reply
from tests.helpers import events_of, kernel_in, notebook_session
from tests.saved_scan import scan_saved

AWS = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY"
AZURE = "3f8a1c9e0b7d4e2fa6c5b8d9e1f0a2b4"
PASSWORD = "correct-horse-battery-staple"
KEY = "sk-proj-" + "R3a" * 14


def test_every_secret_named_environment_variable_is_redacted_and_short_values_are_not() -> None:
    notebook = os.path.join(os.getcwd(), "analysis.ipynb")
    scrubber = Scrubber.here(
        {
            "AWS_SECRET_ACCESS_KEY": AWS,
            "AZURE_OPENAI_API_KEY": AZURE,
            "XDG_SESSION_ID": "3",
            "EDITOR": "vim-with-plugins",
            "JPY_SESSION_NAME": notebook,  # a path names a place, not a secret
        }
    )
    text = scrubber.text(f"aws={AWS} azure={AZURE} session 3 editor vim-with-plugins {notebook}")
    assert text == (
        f"aws={REDACTED} azure={REDACTED} session 3 editor vim-with-plugins "
        f"{WORKSPACE}/analysis.ipynb"
    )


def test_the_values_of_a_secret_file_are_its_lines_values_from_the_minimum_length() -> None:
    content = (
        f"     1\tDB_PASSWORD={PASSWORD}\n"
        '     2\texport TOKEN="quoted value 12345"\n'
        "     3\tHOST=localhost\n"
        "     4\tDEBUG=true\n"
        "     5\tSALT=a1b2c3d4e5f6  # rotated monthly\n"
        '     6\t  "auth": "dXNlcjpwYXNzd29yZA==",\n'
        "     7\tAAAAB3NzaC1yc2EAAAADAQABAAABAQ\n"
        "     8\tDATA_DIR=/srv/data/sales\n"
    )
    assert withheld_values(content) == {
        PASSWORD,
        "quoted value 12345",
        "a1b2c3d4e5f6",
        "dXNlcjpwYXNzd29yZA==",
        "AAAAB3NzaC1yc2EAAAADAQABAAABAQ",
    }
    assert len("localhost") < MIN_WITHHELD_VALUE


async def saved_text(session, prompt: str, tmp_path: Path, where: str) -> str:
    """Run one turn and return what it saved: the cassette it recorded, or (with no cassette:
    a cassette is then the notebook's only record) the saved conversation."""
    if where == "cassette":
        tape = tmp_path / "analysis.copilot.jsonl"
        with using(Cassette(tape, "record")):
            await events_of(session, prompt)
        return tape.read_text()
    await events_of(session, prompt)
    assert scan_saved([tmp_path])
    return (tmp_path / ("analysis" + SUFFIX)).read_text()


@pytest.mark.parametrize("where", ["cassette", "conversation"])
async def test_a_value_an_approved_env_read_returned_is_redacted_wherever_the_model_repeats_it(
    serve, tmp_path, monkeypatch, where
):
    """No format matches `correct-horse-battery-staple`: it is redacted because the session
    withheld it, in the reply, a later call's arguments and its result, and the reasoning."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text(f"DB_PASSWORD={PASSWORD}\nDB_HOST=localhost\n")
    server = serve(
        [
            reply("", call("read_file", path=".env")),
            reply("", call("read_file", path=f"{PASSWORD}.txt"), reasoning=f"it is {PASSWORD}"),
            reply(f"The password is {PASSWORD}, the host localhost."),
        ]
    )
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    session = notebook_session(tmp_path, server)
    session.model_spec = "openai-responses:o3"  # a reasoning model: its summary is kept
    text = await saved_text(session, "read .env", tmp_path, where)
    assert PASSWORD in json.dumps(server.requests[-1].body)  # the model read it: it was approved
    assert PASSWORD not in text
    assert WITHHELD in text and REDACTED in text
    assert "localhost" in text  # shorter than the minimum: left readable


@pytest.mark.parametrize("where", ["cassette", "conversation"])
async def test_a_key_in_a_responses_reasoning_summary_is_redacted(
    serve, tmp_path, monkeypatch, where
):
    """The reasoning item goes back to the provider as it came, and is saved for a resume: its
    summary is the model's words in plain text, so a key there is redacted; only the encrypted
    content is kept byte for byte."""
    monkeypatch.chdir(tmp_path)
    server = serve([reply("Done.", reasoning=f"the user's key is {KEY}, noted")])
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    session = notebook_session(tmp_path, server)
    session.model_spec = "openai-responses:o3"
    text = await saved_text(session, "think", tmp_path, where)
    assert KEY not in text and f"the user's key is {REDACTED}, noted" in text
    if where == "conversation":
        records = [json.loads(line) for line in text.splitlines()]
        items = [i for r in records for i in r.get("message", {}).get("reasoning_items", [])]
        assert items and items[0]["encrypted_content"]  # kept: the provider decrypts it
        assert items[0]["summary"][0]["text"] == f"the user's key is {REDACTED}, noted"


@pytest.mark.kernel
def test_keys_an_approved_run_code_prints_under_unlisted_names_reach_no_saved_file(tmp_path):
    """`AWS_SECRET_ACCESS_KEY` and `AZURE_OPENAI_API_KEY` have no format a scan knows: they are
    redacted because their names say they are secrets, as the kernel's masking says."""
    code = (
        "import os; print(os.environ['AWS_SECRET_ACCESS_KEY'], os.environ['AZURE_OPENAI_API_KEY'])"
    )
    script = [reply("", call("run_code", code=code)), reply("Printed them.")] * 2
    with ScriptedServer(script) as server:
        env = {
            "COPILOT_NB_MODEL": "openai:scripted",
            "OPENAI_BASE_URL": server.url,
            "OPENAI_API_KEY": KEY,
            "AWS_SECRET_ACCESS_KEY": AWS,
            "AZURE_OPENAI_API_KEY": AZURE,
        }
        kernel = kernel_in(tmp_path, env)
        try:
            kernel.execute("%copilot record run.copilot.jsonl")
            recorded = kernel.execute("%%copilot --yes\nPrint my cloud keys.")
            kernel.execute("%copilot cassette off")  # now the conversation is saved instead
            saved = kernel.execute("%%copilot --yes --new\nPrint my cloud keys.")
        finally:
            kernel.close()
        assert server.requests, (recorded.messages, saved.messages)
        sent = json.dumps(server.requests[-1].body)
    assert recorded.status == saved.status == "ok", (recorded.messages, saved.messages)
    assert AWS in sent and AZURE in sent  # the approved code printed them for the model
    files = [tmp_path / "run.copilot.jsonl", *tmp_path.rglob("*" + SUFFIX)]
    assert len(files) == 2, files
    for path in files:
        text = path.read_text()
        assert AWS not in text and AZURE not in text, path.name
        assert REDACTED in text, path.name
