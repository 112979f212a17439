"""What a new user meets in the first minutes, in a real kernel: a fixed key works at once, and
an error or a retry says what to do and then gets out of the way (an interrupt, a stop and not
a crash, is in test_kernel.py)."""

from __future__ import annotations

import socket

import pytest

from copilot_nb.testing import ScriptedRequest, fail, reply
from tests.kernel_session import Execution

pytestmark = pytest.mark.kernel


def shown(run: Execution) -> str:
    """Everything the cell shows at the end, as plain text."""
    return "\n".join(run.final_displays().values())


def needs_key(key: str, answer: str):
    """A server that refuses every key but `key` as OpenAI does, and answers `answer` to it."""

    def respond(request: ScriptedRequest):
        given = {k.lower(): v for k, v in request.headers.items()}.get("authorization")
        if given != f"Bearer {key}":
            return fail(401, "Incorrect API key provided: wrong. You can find your key online.")
        return reply(answer)

    return respond


def test_a_fixed_key_and_base_url_take_effect_on_the_next_cell(serve, kernel_for):
    first = serve([needs_key("right", "Hello with the right key.")] * 2)
    kernel = kernel_for(first, OPENAI_API_KEY="wrong")

    refused = kernel.execute("%%copilot\nhello")
    text = shown(refused)
    assert "HTTP 401" in text
    assert "You can find your key online. Check OPENAI_API_KEY" in text, "one full stop"
    assert ".." not in text

    assert kernel.execute("%env OPENAI_API_KEY=right").status == "ok"
    fixed = kernel.execute("%%copilot\nhello")
    assert "Hello with the right key." in shown(fixed), shown(fixed)

    second = serve([reply("Hello from the other server.")])
    moved = kernel.execute(f"import os; os.environ['OPENAI_BASE_URL'] = {second.url!r}")
    assert moved.status == "ok"
    there = kernel.execute("%%copilot\nhello")
    assert "Hello from the other server." in shown(there), shown(there)
    assert len(first.requests) == 2 and len(second.requests) == 1


def test_a_server_that_is_down_is_one_line_that_names_it_and_what_to_check(serve, kernel_for):
    with socket.socket() as placeholder:  # a port nothing listens on
        placeholder.bind(("127.0.0.1", 0))
        port = placeholder.getsockname()[1]
    down = f"http://127.0.0.1:{port}/v1"
    kernel = kernel_for(serve([]), OPENAI_BASE_URL=down)

    run = kernel.execute("%%copilot\nhello")
    text = shown(run)
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    assert down in lines[0] and "OPENAI_BASE_URL" in lines[0] and "running" in lines[0]
    assert "retrying" not in text and "asking again" not in text


def test_a_broken_stream_asked_again_shows_its_text_once(serve, kernel_for):
    server = serve(
        [
            reply("The answer is forty-two.", chunk_size=4, break_after=4),
            reply("The answer is forty-two."),
        ]
    )
    kernel = kernel_for(server)
    run = kernel.execute("%%copilot\nwhat is the answer?")
    text = shown(run)
    assert text.count("The answer") == 1, text
    assert "The answer is forty-two." in text
    assert "asking again" not in text


def test_a_rate_limit_that_passes_leaves_no_warning_in_the_output(serve, kernel_for):
    server = serve(
        [fail(429, "Rate limit reached", headers={"retry-after": "0.2"}), reply("All good.")]
    )
    kernel = kernel_for(server)
    run = kernel.execute("%%copilot\nhello")
    (html,) = run.final_displays("text/html").values()
    assert "All good." in html
    assert "Rate limit" not in html and "retrying" not in html
    waited = "".join(str(m["content"]["data"]) for m in run.of_type("update_display_data"))
    waited += "".join(str(m["content"]["data"]) for m in run.of_type("display_data"))
    assert "Rate limit" in waited, "the wait was shown while it lasted"
