"""Cassettes in one process: what a recording keeps and leaves out, replays through each provider's
real decoders with no server, what a replay says when the agent's request differs, lookups, auto
mode, errors and retries on tape, approval answers, and a scan of every cassette in the repository
for secrets."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from copilot_nb import Agent
from copilot_nb.agent.approvals.cassette import CassetteApprover
from copilot_nb.errors import ModelConnectionError
from copilot_nb.events import ApprovalNeeded, Done, Failed, Notice
from copilot_nb.models.cassettes.cassette import (
    Cassette,
    CassetteMismatch,
    Header,
    active_cassette,
    using,
)
from copilot_nb.models.cassettes.entries import (
    REDACTED,
    WORKSPACE,
    Scrubber,
    recorded_request,
    recorded_response,
)
from copilot_nb.models.openai.chat import OpenAIChat
from copilot_nb.testing import ScriptedServer, call, fail, reply
from copilot_nb.text import SECRET_VALUE
from copilot_nb.tools.wrappers import FilteredToolSet
from tests.helpers import KEY, callbacks_ran, events_of, model_for, run_agent, scripted_session

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Path]:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "data.txt").write_text("42\n")
    before = os.getcwd()
    os.chdir(folder)
    yield folder
    os.chdir(before)


def shown(events: list[Any]) -> list[str]:
    """The events as a user sees them (without ids that differ between two runs)."""
    return [f"{type(e).__name__}:{getattr(e, 'text', getattr(e, 'summary', ''))}" for e in events]


def read_then_answer() -> list[Any]:
    return [reply("", call("read_file", path="data.txt")), reply("The file holds 42.")]


# --- recording and replaying through each wire ------------------------------------------------


@pytest.mark.parametrize("wire", ["openai", "responses", "anthropic"])
def test_a_recording_replays_through_the_same_decoders_with_no_server(wire, workspace, tmp_path):
    tape = tmp_path / "t.copilot.jsonl"
    with ScriptedServer(read_then_answer()) as server, using(Cassette(tape, "record")):
        live = run_agent(model_for(wire, server.url), "What is in data.txt?", workspace)
    assert isinstance(live[-1], Done)
    with using(Cassette(tape, "replay")) as cassette:
        again = run_agent(model_for(wire, ""), "What is in data.txt?", workspace)
    assert shown(again) == shown(live)
    assert cassette.used == [1, 2]
    text = tape.read_text()
    assert KEY not in text and str(workspace) not in text and WORKSPACE in text


def test_a_model_a_script_builds_itself_talks_to_its_server_whatever_is_recorded(
    workspace, tmp_path
):
    tape = tmp_path / "t.copilot.jsonl"
    with ScriptedServer([reply("Hi.")]) as server, using(Cassette(tape, "record")):
        events = run_agent(
            OpenAIChat("scripted", base_url=server.url, api_key="k"), "hi", workspace
        )
        assert len(server.requests) == 1
    assert isinstance(events[-1], Done)
    assert len(tape.read_text().splitlines()) == 1  # the header only


async def test_a_turn_s_cassette_stage_tapes_its_model_for_the_turn_only(tmp_path, monkeypatch):
    tape = tmp_path / "t.copilot.jsonl"
    with ScriptedServer([reply("Hi."), reply("Live.")]) as server:
        session = scripted_session(server, tmp_path, monkeypatch)
        endpoint = session.model().endpoint
        endpoint.tape = None  # no cassette of its own: only the turn's stage chooses one
        with using(Cassette(tape, "record")):
            assert (await events_of(session, "hi"))[-1] == Done(text="Hi.")
        assert endpoint.tape is None, "the turn's tear-down put it back"
        assert (await events_of(session, "again"))[-1] == Done(text="Live.")
        assert len(server.requests) == 2
    assert [json.loads(line).get("n") for line in tape.read_text().splitlines()] == [None, 1]


# --- what differs ------------------------------------------------------------------------------


def recorded(tape: Path, workspace: Path, steps: list[Any] | None = None) -> None:
    with ScriptedServer(steps or read_then_answer()) as server, using(Cassette(tape, "record")):
        run_agent(model_for("openai", server.url), "What is in data.txt?", workspace)


def failure(events: list[Any]) -> str:
    assert isinstance(events[-1], Failed), events[-1]
    return events[-1].error


def test_an_edited_prompt_fails_with_a_diff(workspace, tmp_path):
    tape = tmp_path / "t.copilot.jsonl"
    recorded(tape, workspace)
    with using(Cassette(tape, "replay")) as cassette:
        error = failure(run_agent(model_for("openai", ""), "What is in data.csv?", workspace))
    assert error == cassette.mismatch
    assert "differs from the recording in t.copilot.jsonl: entry 1, the request (or the " in error
    assert "-What is in data.txt?\n+What is in data.csv?" in error


def test_a_changed_tool_result_is_named_as_such(workspace, tmp_path):
    tape = tmp_path / "t.copilot.jsonl"
    recorded(tape, workspace)
    (workspace / "data.txt").write_text("43\n")
    with using(Cassette(tape, "replay")):
        error = failure(run_agent(model_for("openai", ""), "What is in data.txt?", workspace))
    assert "entry 2, a tool result changed at messages[3].content" in error
    assert "-     1\t42" in error and "+     1\t43" in error


def test_a_changed_model_and_a_changed_tool_list_are_named(workspace, tmp_path):
    tape = tmp_path / "t.copilot.jsonl"
    recorded(tape, workspace)
    other = OpenAIChat("gpt-4.1", base_url="http://127.0.0.1:9/v1")
    other.endpoint.tape = active_cassette
    with using(Cassette(tape, "replay")):
        error = failure(run_agent(other, "What is in data.txt?", workspace))
    assert "the model changed (recorded scripted, now gpt-4.1)" in error

    agent = Agent(model=model_for("openai", ""), workspace=workspace)
    agent.tools = FilteredToolSet(agent.tools, excluded=["write_file"])

    async def go() -> list[Any]:
        return [e async for e in agent.run("What is in data.txt?")]

    with using(Cassette(tape, "replay")):
        assert "the tool list changed" in failure(asyncio.run(go()))


def test_one_request_more_than_recorded_fails_in_replay_and_is_recorded_in_auto(
    workspace, tmp_path
):
    tape = tmp_path / "t.copilot.jsonl"
    recorded(tape, workspace)
    with using(Cassette(tape, "replay")):
        run_agent(model_for("openai", ""), "What is in data.txt?", workspace)
        agent_error = failure(run_agent(model_for("openai", ""), "And now?", workspace))
    assert "the recording ends after entry 2" in agent_error

    with ScriptedServer([reply("Still 42.")]) as server, using(Cassette(tape, "auto")) as tape_:
        model = model_for("openai", server.url)
        agent = Agent(model=model, workspace=workspace)

        async def two_turns() -> list[Any]:
            first = [e async for e in agent.run("What is in data.txt?")]
            return first + [e async for e in agent.run("And now?")]

        events = asyncio.run(two_turns())
        assert len(server.requests) == 1  # only the new request reached the server
    assert events[-1] == Done(text="Still 42.")
    assert len(tape_.entries) == 3


# --- lookups, errors, retries --------------------------------------------------------------


def test_auto_mode_records_past_lookups_left_at_the_end_of_the_recording(workspace, tmp_path):
    tape = tmp_path / "t.copilot.jsonl"
    recorded(tape, workspace)
    with ScriptedServer([]) as server, using(Cassette(tape, "auto")) as cassette:
        endpoint = model_for("openai", server.url).endpoint

        async def list_models() -> int:
            return (await endpoint.client().get(f"{server.url}/models")).status_code

        assert asyncio.run(list_models()) == 200  # a lookup after the last model request
    with ScriptedServer([reply("Still 42.")]) as server, using(Cassette(tape, "auto")):
        agent = Agent(model=model_for("openai", server.url), workspace=workspace)

        async def two_turns() -> list[Any]:
            first = [e async for e in agent.run("What is in data.txt?")]
            return first + [e async for e in agent.run("And now?")]

        assert asyncio.run(two_turns())[-1] == Done(text="Still 42.")
    assert len(cassette.entries) == 3


def test_a_lookup_is_answered_as_often_as_it_is_asked(workspace, tmp_path):
    tape = tmp_path / "t.copilot.jsonl"
    with ScriptedServer([]) as server, using(Cassette(tape, "record")):
        model = model_for("openai", server.url)
        endpoint, url = model.endpoint, server.url

        async def models() -> list[int]:
            client = endpoint.client()
            return [(await client.get(f"{url}/models")).status_code for _ in range(3)]

        assert asyncio.run(models()) == [200, 200, 200]
    assert len(tape.read_text().splitlines()) == 2  # the header and one lookup
    with using(Cassette(tape, "replay")):
        replayed = asyncio.run(models())
    assert replayed == [200, 200, 200]


def test_a_rate_limit_and_its_retry_replay_through_the_retry_policy(workspace, tmp_path):
    tape = tmp_path / "t.copilot.jsonl"
    steps = [fail(429, "Slow down", headers={"retry-after": "0"}), reply("Fine.")]
    recorded(tape, workspace, steps)
    lines = [json.loads(line) for line in tape.read_text().splitlines()[1:]]
    assert [line["response"]["status"] for line in lines] == [429, 200]
    with using(Cassette(tape, "replay")):
        events = run_agent(model_for("openai", ""), "What is in data.txt?", workspace)
    assert any(isinstance(e, Notice) and "retrying" in e.text for e in events)
    assert events[-1] == Done(text="Fine.")


def test_a_connection_error_is_recorded_and_replayed(workspace, tmp_path):
    tape = tmp_path / "t.copilot.jsonl"
    model = model_for("openai", "http://127.0.0.1:9/v1")
    model.retry = type(model.retry)(max_retries=0)
    with using(Cassette(tape, "record")):
        live = failure(run_agent(model, "hi", workspace))
    assert "connection to" in live
    with using(Cassette(tape, "replay")):
        again = failure(run_agent(model, "hi", workspace))
    assert "replayed from the cassette" in again
    assert isinstance(ModelConnectionError(again), ModelConnectionError)


# --- the file -----------------------------------------------------------------------------------


def test_a_last_line_cut_short_is_dropped_and_a_bad_line_elsewhere_is_an_error(tmp_path):
    tape = tmp_path / "t.copilot.jsonl"
    Cassette(tape, "record", header=Header(model="openai:x"))
    tape.write_text(tape.read_text() + '{"n": 1, "type": "ht')
    assert Cassette(tape, "auto").entries == []
    assert Cassette(tape, "auto").header.model == "openai:x"
    tape.write_text(tape.read_text() + '{"n": 1}\n{"n": 2, "type": "approval"}\n')
    with pytest.raises(CassetteMismatch, match="line 2: not a cassette entry"):
        Cassette(tape, "replay")
    tape.write_text('{"type": "cassette", "format": "copilot_nb.cassette/9"}\n')
    with pytest.raises(CassetteMismatch, match=r"this copilot_nb reads copilot_nb\.cassette/1"):
        Cassette(tape, "replay")
    with pytest.raises(CassetteMismatch, match="no cassette at"):
        Cassette(tmp_path / "none.copilot.jsonl", "replay")


# --- normalising and redacting ------------------------------------------------------------------


def test_a_recorded_request_keeps_what_is_compared_and_no_secret(workspace):
    scrubber = Scrubber.here({"OPENAI_API_KEY": "plain-secret-value"})
    body = {
        "model": "m",
        "user": "someone",
        "prompt_cache_key": "x",
        "messages": [{"role": "user", "content": f"{workspace}/a.py plain-secret-value {KEY}"}],
    }
    request = recorded_request(
        "post",
        "http://127.0.0.1:5555/v1/chat/completions?x=1",
        {"Authorization": f"Bearer {KEY}", "x-api-key": KEY, "Content-Type": "application/json"},
        json.dumps(body).encode(),
        scrubber,
    )
    assert request.path == "/v1/chat/completions?x=1"
    assert request.headers == {"content-type": "application/json"}
    assert request.body == {
        "model": "m",
        "messages": [{"role": "user", "content": f"{WORKSPACE}/a.py {REDACTED} {REDACTED}"}],
    }


def test_durations_our_tools_report_are_compared_as_placeholders():
    scrubber = Scrubber((), ())
    assert scrubber.text("ran cell ab (#2) of a.ipynb in 0.53 s (live)") == (
        "ran cell ab (#2) of a.ipynb in <seconds> s (live)"
    )
    assert scrubber.text("did not answer within 0.5 s") == "did not answer within 0.5 s"


def test_a_recorded_response_redacts_the_copilot_token_and_keeps_only_read_headers():
    token = {"token": "tid=abc;exp=1", "expires_at": 1, "endpoints": {"api": "http://x"}}
    response = recorded_response(
        200,
        {"Content-Type": "application/json", "Set-Cookie": "s=1", "X-Request-Id": "r"},
        json.dumps(token).encode(),
        Scrubber((), ()),
    )
    assert response.headers == {"content-type": "application/json"}
    assert json.loads(response.body)["token"] == REDACTED


# --- approvals ------------------------------------------------------------------------------


class Answers:
    """An approver that answers every request with `approved`."""

    def __init__(self, approved: bool) -> None:
        self.approved = approved
        self.asked = 0

    def answer(self, request: ApprovalNeeded) -> None:
        self.asked += 1
        request.approve() if self.approved else request.deny("no thanks")


def approval(name: str = "write_file") -> ApprovalNeeded:
    future: asyncio.Future[tuple[bool, str]] = asyncio.get_running_loop().create_future()
    return ApprovalNeeded(
        call_id="c", name=name, arguments={}, summary="notes.txt", category="edit", decision=future
    )


def test_an_answer_is_recorded_then_replayed_without_asking(tmp_path):
    tape = tmp_path / "t.copilot.jsonl"

    async def ask(cassette: Cassette, user: Answers, name: str = "write_file") -> tuple[bool, str]:
        request = approval(name)
        CassetteApprover(user, cassette).answer(request)
        result = await request.decision
        await callbacks_ran(request.decision)  # the recording one among them
        return result

    user = Answers(False)
    assert asyncio.run(ask(Cassette(tape, "record"), user)) == (False, "no thanks")
    entry = json.loads(tape.read_text().splitlines()[1])
    assert entry["type"] == "approval" and entry["approved"] is False

    nobody = Answers(True)
    assert asyncio.run(ask(Cassette(tape, "replay"), nobody)) == (False, "no thanks")
    assert nobody.asked == 0
    approved, reason = asyncio.run(ask(Cassette(tape, "replay"), nobody, "run_code"))
    assert not approved and "has the approval of write_file here" in reason


# --- every cassette in the repository -------------------------------------------------------------


def repository_cassettes() -> list[Path]:
    skip = {".venv", "node_modules", ".git", "build"}
    return [
        path
        for path in ROOT.rglob("*.copilot.jsonl")
        if not skip.intersection(path.relative_to(ROOT).parts)
    ]


def test_no_cassette_in_the_repository_holds_a_secret_or_a_machine_path():
    cassettes = repository_cassettes()
    assert cassettes, "the demo notebooks' cassettes"
    home = os.path.expanduser("~")
    for path in cassettes:
        text = path.read_text("utf-8")
        assert not SECRET_VALUE.search(text), path
        assert home not in text, path
        for line in text.splitlines()[1:]:
            entry = json.loads(line)
            if entry["type"] != "http":
                continue
            headers = {**entry["request"]["headers"], **entry["response"].get("headers", {})}
            for name in headers:
                assert name not in ("authorization", "x-api-key", "cookie", "set-cookie"), path
