"""Saved conversations in real kernels: two turns, a restart, and the third request carries the
first two; a kernel killed mid-stream resumes with the turn it cut short; two kernels on one
notebook both keep every line; an export is a readable, inert transcript; a conversation's tokens
are one number in the last cell's footer, `%copilot usage` and `%copilot conversations`."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from pathlib import Path

import pytest

from copilot_nb.messages import Usage
from copilot_nb.testing import call, reply

pytestmark = pytest.mark.kernel

NOTEBOOK = "story.ipynb"
SAVED = "story.copilot-chat.jsonl"


def users(request) -> list[str]:
    return [m["content"].split("\n")[-1] for m in request.messages if m["role"] == "user"]


def test_a_restart_resumes_the_conversation_and_the_next_request_carries_it(
    serve, kernel_for, tmp_path
):
    (tmp_path / NOTEBOOK).write_text("{}")
    server = serve([reply("One."), reply("Two."), reply("Three.")])
    kernel = kernel_for(server, JPY_SESSION_NAME=str(tmp_path / NOTEBOOK))
    assert kernel.execute("%%copilot\nfirst question").status == "ok"
    assert kernel.execute("%%copilot\nsecond question").status == "ok"
    said = kernel.restart()
    assert "resumed conversation" in said and "2 turns" in said
    history = kernel.execute("%copilot history")
    assert history.status == "ok"
    # a chat panel opened now shows the two turns, and its meter their tokens
    shown = kernel.execute(
        "import copilot_nb\npanel = copilot_nb.chat()\n"
        "print([op['text'] for op in panel.outbox.history if op['op'] in ('user', 'text')], "
        "panel.widget.tokens_in > 0)"
    )
    assert shown.status == "ok", shown.reply
    assert "['first question', 'One.', 'second question', 'Two.'] True" in shown.stdout
    assert kernel.execute("%%copilot\nthird question").status == "ok"
    assert users(server.requests[-1])[-3:] == [
        "first question",
        "second question",
        "third question",
    ]
    # off: a restart starts afresh
    kernel.manager.restart_kernel(now=True)
    kernel.client.wait_for_ready(timeout=60)
    quiet = kernel.execute("%config CopilotMagics.resume = False\n%load_ext copilot_nb")
    assert "resumed" not in quiet.stdout


def test_a_kernel_killed_mid_stream_resumes_with_the_turn_it_cut_short(serve, kernel_for, tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    server = serve(
        [
            reply("", call("read_file", path="a.py")),
            reply("A long answer " * 400, chunk_size=4, delay=0.02),
            reply("Picked up again."),
        ]
    )
    kernel = kernel_for(server, JPY_SESSION_NAME=str(tmp_path / NOTEBOOK))
    msg_id = kernel.send("%%copilot\nread a.py and explain")
    saved = tmp_path / SAVED
    deadline = time.monotonic() + 30
    while '"role":"tool"' not in (saved.read_text() if saved.exists() else ""):
        kernel.wait_for(
            msg_id, "update_display_data", timeout=max(0.1, deadline - time.monotonic())
        )
    kernel.wait_for(msg_id, "update_display_data", timeout=30)  # the answer is streaming
    os.kill(kernel.manager.provisioner.pid, signal.SIGKILL)  # type: ignore[union-attr]
    said = kernel.restart()
    assert "resumed conversation" in said and "cut short" in said, said
    assert kernel.execute("%%copilot\nand now?").status == "ok"
    sent = server.requests[-1].messages
    assert [m["role"] for m in sent][-4:] == ["user", "assistant", "tool", "user"]
    assert "x = 1" in sent[-2]["content"]


def test_two_kernels_on_one_notebook_keep_every_line(serve, kernel_for, tmp_path):
    server = serve([reply("Answer " * 300, chunk_size=6) for _ in range(6)])
    env = {"JPY_SESSION_NAME": str(tmp_path / NOTEBOOK)}
    kernels = [kernel_for(server, **env), kernel_for(server, **env)]
    for _ in range(3):
        sent = [k.send("%%copilot\nquestion " + str(n)) for n, k in enumerate(kernels)]
        for kernel, msg_id in zip(kernels, sent, strict=True):
            assert kernel.collect(msg_id).status == "ok"
    lines = (tmp_path / SAVED).read_text().splitlines()
    records = [json.loads(line) for line in lines[1:]]
    conversations = {r["conversation"] for r in records}
    assert len(conversations) == 2
    for conversation in conversations:
        kinds = [r["kind"] for r in records if r["conversation"] == conversation]
        assert kinds == ["start"] + ["message", "message", "turn"] * 3
    listed = kernels[0].execute("%copilot conversations")
    assert listed.status == "ok" and "question 0" in listed.final_displays()["0"]


def test_export_writes_an_inert_readable_transcript(serve, kernel_for, tmp_path):
    server = serve([reply("Here: <script>alert(1)</script> ![x](http://evil.example/p.png)")])
    kernel = kernel_for(server, JPY_SESSION_NAME=str(tmp_path / NOTEBOOK))
    assert kernel.execute("%%copilot\nsay something").status == "ok"
    done = kernel.execute("%copilot export --markdown out.md")
    assert done.status == "ok" and "wrote 1 turn of conversation" in done.stdout
    text = Path(tmp_path / "out.md").read_text()
    assert "## Request" in text and "say something" in text
    assert "<script>" not in text and "&lt;script&gt;" in text and "![x]" not in text
    usage = kernel.execute("%copilot usage")
    assert usage.status == "ok"
    assert "no price set for scripted" in usage.final_displays()["0"]


def _number(pattern: str, text: str) -> str:
    found = re.search(pattern, text)
    assert found is not None, f"{pattern!r} not in:\n{text}"
    return found.group(1)


def test_the_last_footer_usage_and_conversations_give_one_number(serve, kernel_for, tmp_path):
    """Every request's whole prompt, summed, is the conversation's input in all three places;
    once a server sends no usage, all three mark the figure as our estimate."""
    cached = {"prompt_tokens_details": {"cached_tokens": 1024}}
    server = serve(
        [
            reply("One.", usage=Usage(input_tokens=1500, output_tokens=20, raw=cached)),
            reply("Two.", usage=Usage(input_tokens=1700, output_tokens=30, raw=cached)),
            reply("Three."),
        ]
    )
    kernel = kernel_for(server, JPY_SESSION_NAME=str(tmp_path / NOTEBOOK))
    assert kernel.execute("%%copilot\nfirst question").status == "ok"

    def three_places() -> tuple[str, str, str]:
        cell = kernel.execute(f"%%copilot\nquestion {len(server.requests) + 1}")
        assert cell.status == "ok", cell.reply
        (footer,) = cell.final_displays().values()
        usage = kernel.execute("%copilot usage")
        listed = kernel.execute("%copilot conversations")
        assert usage.status == listed.status == "ok"
        (usage_text,) = usage.final_displays().values()
        (listed_text,) = listed.final_displays().values()
        assert "premium" not in usage_text, "no premium requests for a model outside Copilot"
        return (
            _number(r"conversation: (~?[\d,]+) in", footer),
            _number(r"(?m)^by conversation:\nconversation .*\n\S+\s+\d+\s+(~?[\d,]+)", usage_text),
            _number(r"(~?[\d,]+) in", listed_text),
        )

    assert three_places() == ("3,200", "3,200", "3,200")
    server.sends_usage = False  # the third reply comes without usage: estimated, and marked
    footer, usage, listed = three_places()
    assert footer == usage == listed and footer.startswith("~"), (footer, usage, listed)
    assert int(footer[1:].replace(",", "")) > 3200
