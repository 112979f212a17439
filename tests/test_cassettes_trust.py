"""Whose answers a replay may give: a recorded approval stands in for the user only for exactly the
call it was given to, only when the user recorded it (their key signed it) or chose to trust the
cassette, and never makes an MCP server trusted for later."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from copilot_nb.agent.approvals.cassette import CassetteApprover
from copilot_nb.agent.approvals.policy import answer_of
from copilot_nb.agent.cassette_calls import recorded_calls
from copilot_nb.events import APPROVED_ONCE, ApprovalNeeded
from copilot_nb.models.cassettes.cassette import Cassette, using
from copilot_nb.models.cassettes.signing import key_path
from copilot_nb.testing import ScriptedServer, call, reply
from copilot_nb.tools.mcp.trust import ServerPins, ServerTrust
from tests.helpers import Headless, callbacks_ran, model_for, run_agent

CODE = {"code": "open('made.txt', 'w').write('x')"}
SWAPPED = {"code": "open('pwned.txt', 'w').write('x')"}


def approval(arguments: Any, name: str = "run_code", category: str = "execute") -> ApprovalNeeded:
    future: asyncio.Future[tuple[bool, str]] = asyncio.get_running_loop().create_future()
    return ApprovalNeeded(
        call_id="c1",
        name=name,
        arguments=arguments,
        summary="run",
        category=category,
        decision=future,
    )


def ask(cassette: Cassette, user: Headless, arguments: Any, name: str = "run_code") -> Any:
    async def go() -> tuple[bool, str]:
        request = approval(arguments, name)
        CassetteApprover(user, cassette).answer(request)
        result = await request.decision
        await callbacks_ran(request.decision)  # the recording one among them
        return result

    return asyncio.run(go())


def recorded(tape: Path, arguments: Any = CODE, name: str = "run_code") -> None:
    """The user approves one call while recording."""
    assert ask(Cassette(tape, "record"), Headless(approved=True), arguments, name)[0]


def test_a_recorded_approval_answers_exactly_the_recorded_call(tmp_path):
    tape = tmp_path / "t.copilot.jsonl"
    recorded(tape)
    entry = json.loads(tape.read_text().splitlines()[1])
    assert entry["arguments"] == CODE and entry["sig"]
    assert key_path().is_file() and (key_path().stat().st_mode & 0o777) == 0o600

    nobody = Headless()
    assert ask(Cassette(tape, "replay"), nobody, CODE) == (True, APPROVED_ONCE)
    assert nobody.asked == []
    # The same tool with other code: the user is asked (here nobody can answer: denied).
    assert ask(Cassette(tape, "replay"), nobody, SWAPPED)[0] is False
    assert nobody.asked == [SWAPPED]
    # Arguments sent as JSON text are the same call.
    assert ask(Cassette(tape, "replay"), Headless(), json.dumps(CODE))[0] is True


def test_a_cassette_changed_by_hand_or_from_elsewhere_answers_nothing_unless_trusted(tmp_path):
    tape = tmp_path / "t.copilot.jsonl"
    recorded(tape)
    assert Cassette(tape, "replay").signed
    # The code swapped in the answer too: the signature no longer holds.
    tape.write_text(tape.read_text().replace("made.txt", "pwned.txt"))
    forged = Cassette(tape, "replay")
    assert not forged.signed
    nobody = Headless()
    assert ask(forged, nobody, SWAPPED)[0] is False and nobody.asked == [SWAPPED]

    # Another user's key (a cassette someone sent): unsigned for this user.
    other = tmp_path / "o.copilot.jsonl"
    recorded(other)
    key_path().unlink()
    foreign = Cassette(other, "replay")
    assert not foreign.signed
    assert ask(foreign, Headless(), CODE)[0] is False
    # Trusted on purpose (`%copilot replay --trust`): still only the exact call.
    trusted = Cassette(other, "replay")
    trusted.trusted = True
    assert ask(trusted, Headless(), CODE) == (True, APPROVED_ONCE)
    trusted = Cassette(other, "replay")
    trusted.trusted = True
    assert ask(trusted, Headless(), SWAPPED)[0] is False


def test_a_replayed_approval_of_an_mcp_call_does_not_pin_the_server(tmp_path):
    tape = tmp_path / "t.copilot.jsonl"
    arguments = {"q": "x"}
    recorded(tape, arguments, "files__search")
    pins = ServerPins(tmp_path / "mcp-approved.json")
    trust = ServerTrust(pins, "ws:files", "digest", "files")

    async def replayed(cassette: Cassette) -> str:
        request = approval(arguments, "files__search", "external")
        CassetteApprover(Headless(), cassette).answer(request)
        return await answer_of(request, trust)

    assert asyncio.run(replayed(Cassette(tape, "replay"))) == ""  # approved, once
    assert not trust.granted() and not (tmp_path / "mcp-approved.json").exists()
    key_path().unlink()  # a cassette from elsewhere: denied headless, nothing pinned
    refusal = asyncio.run(replayed(Cassette(tape, "replay")))
    assert "denied" in refusal and not trust.granted()


def test_the_calls_a_replay_makes_are_read_from_the_recorded_replies(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    tape = tmp_path / "t.copilot.jsonl"
    script = [
        reply("", call("write_file", path="a.txt", content="x")),
        reply("", call("run_code", code="print(1)")),
        reply("done"),
    ]
    for wire in ("openai", "responses", "anthropic"):
        with ScriptedServer(script) as server, using(Cassette(tape, "record")):
            run_agent(model_for(wire, server.url), "go", tmp_path)
        calls = recorded_calls(Cassette(tape, "replay"))
        assert [(c.name, c.arguments) for c in calls] == [
            ("write_file", {"path": "a.txt", "content": "x"}),
            ("run_code", {"code": "print(1)"}),
        ], wire
    assert os.getcwd() == str(tmp_path)
