"""What a recording never keeps: a key split across a stream's pieces, the contents of a secret
file the user approved reading, and copilot_nb's own proxy token (which the model never reads
either)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import nbformat
import pytest

from copilot_nb import Agent
from copilot_nb.agent.approvals.cassette import CassetteApprover
from copilot_nb.events import ApprovalNeeded, Done, Failed
from copilot_nb.models.anthropic.stream import MessagesStreamDecoder
from copilot_nb.models.cassettes.cassette import Cassette, using
from copilot_nb.models.cassettes.entries import Scrubber, recorded_response
from copilot_nb.models.openai.chat_stream import ChatCompletionsDecoder
from copilot_nb.models.openai.responses_stream import ResponsesDecoder
from copilot_nb.models.recording_scrub import REDACTED, WITHHELD
from copilot_nb.serve.http.security import new_token
from copilot_nb.testing import ScriptedServer, call, reply
from copilot_nb.text import SECRET_VALUE
from copilot_nb.tools.redaction.masking import redact_text
from tests.helpers import Headless, model_for
from tests.notebook_samples import sample_tools

KEY = "sk-proj-" + "Qw7" * 12
HEAD, TAIL = KEY[:10], KEY[10:]


def sse(*events: Any) -> bytes:
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events)


def chat() -> tuple[bytes, Any]:
    def delta(d: dict[str, Any]) -> dict[str, Any]:
        return {"choices": [{"index": 0, "delta": d}]}

    def args(text: str) -> dict[str, Any]:
        return delta({"tool_calls": [{"index": 0, "function": {"arguments": text}}]})

    first = {"index": 0, "id": "c1", "type": "function", "function": {"name": "f", "arguments": ""}}
    body = (
        sse(
            delta({"content": f"the key is {HEAD}"}),
            delta({"content": f"{TAIL}, done"}),
            delta({"tool_calls": [first]}),
            args('{"k": "' + HEAD[:6]),
            args(HEAD[6:] + TAIL + '"}'),
        )
        + b"data: [DONE]\n\n"
    )
    return body, ChatCompletionsDecoder()


def anthropic() -> tuple[bytes, Any]:
    def block(index: int, delta: dict[str, Any]) -> dict[str, Any]:
        return {"type": "content_block_delta", "index": index, "delta": delta}

    tool = {"type": "tool_use", "id": "t1", "name": "f", "input": {}}
    body = sse(
        {"type": "message_start", "message": {"id": "m", "model": "x", "usage": {}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        block(0, {"type": "text_delta", "text": f"the key is {HEAD}"}),
        block(0, {"type": "text_delta", "text": f"{TAIL}, done"}),
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": tool},
        block(1, {"type": "input_json_delta", "partial_json": '{"k": "' + HEAD}),
        block(1, {"type": "input_json_delta", "partial_json": TAIL + '"}'}),
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "tool_use"}, "usage": {}},
        {"type": "message_stop"},
    )
    return body, MessagesStreamDecoder()


def responses() -> tuple[bytes, Any]:
    item = {"type": "function_call", "id": "fc", "call_id": "c1", "name": "f", "arguments": ""}
    done = {**item, "arguments": '{"k": "' + KEY + '"}'}
    body = sse(
        {
            "type": "response.output_item.added",
            "output_index": 0,
            "item": {"type": "message", "id": "m", "role": "assistant", "content": []},
        },
        {
            "type": "response.output_text.delta",
            "output_index": 0,
            "content_index": 0,
            "delta": f"the key is {HEAD}",
        },
        {
            "type": "response.output_text.delta",
            "output_index": 0,
            "content_index": 0,
            "delta": f"{TAIL}, done",
        },
        {"type": "response.output_item.added", "output_index": 1, "item": item},
        {
            "type": "response.function_call_arguments.delta",
            "output_index": 1,
            "delta": '{"k": "' + HEAD,
        },
        {"type": "response.function_call_arguments.delta", "output_index": 1, "delta": TAIL + '"}'},
        {"type": "response.output_item.done", "output_index": 1, "item": done},
        {"type": "response.completed", "response": {"status": "completed", "usage": {}}},
    )
    return body, ResponsesDecoder()


@pytest.mark.parametrize("wire", [chat, anthropic, responses], ids=lambda w: w.__name__)
def test_a_key_split_across_stream_pieces_is_redacted_and_still_replays(wire):
    body, decoder = wire()
    kept = recorded_response(200, {}, body, Scrubber((), ())).body
    text = kept.decode()
    assert HEAD not in text and TAIL not in text  # no piece of it, anywhere
    decoder.feed(kept)
    message = decoder.close()  # the same decoders read it back
    assert message.text == f"the key is {REDACTED}, done"
    assert [c.arguments for c in message.tool_calls] == [{"k": REDACTED}]


def test_approved_secret_contents_are_not_written_and_the_replay_matches(tmp_path, monkeypatch):
    workspace = tmp_path / "ws"
    workspace.mkdir()
    monkeypatch.chdir(workspace)
    (workspace / ".env").write_text("PASSWORD=hunter2-correct-horse\n")
    tape = tmp_path / "t.copilot.jsonl"
    script = [reply("", call("read_file", path=".env")), reply("Read it.")]

    def session(cassette: Cassette, user: Headless, url: str) -> list[Any]:
        agent = Agent(model=model_for("openai", url), workspace=workspace)

        async def go() -> list[Any]:
            events = []
            async for event in agent.run("read .env"):
                events.append(event)
                if isinstance(event, ApprovalNeeded):
                    CassetteApprover(user, cassette).answer(event)
            return events

        with using(cassette):
            return asyncio.run(go())

    with ScriptedServer(script) as server:
        live = session(Cassette(tape, "record"), Headless(approved=True), server.url)
        seen = server.requests[-1].body
    assert isinstance(live[-1], Done)
    assert "hunter2" in json.dumps(seen)  # the model read it, as the user approved
    text = tape.read_text()
    assert "hunter2" not in text and WITHHELD in text
    replayed = session(Cassette(tape, "replay"), Headless(), "")
    assert isinstance(replayed[-1], Done), [e for e in replayed if isinstance(e, Failed)]


def test_the_proxy_token_is_a_secret_format_in_masks_and_recordings(tmp_path):
    token = new_token()
    assert SECRET_VALUE.fullmatch(token)
    assert token not in redact_text(f"export KEY={token}")[0]
    assert Scrubber((), ()).text(f"Bearer token: {token}") == f"Bearer token: {REDACTED}"


async def test_read_cell_masks_the_proxy_token_a_cell_printed(ws):
    token = new_token()
    printed = nbformat.v4.new_output("stream", name="stdout", text=f"token: {token}\n")
    cell = nbformat.v4.new_code_cell("%copilot serve", outputs=[printed])
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), Path(ws.root) / "serve.ipynb")
    out = await sample_tools(ws).call_tool(
        "read_cell", {"cell_id": "#1", "notebook": "serve.ipynb"}
    )
    assert token not in out.content and "token:" in out.content
