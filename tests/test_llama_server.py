"""copilot_nb against llama.cpp's real llama-server running a real small model (SmolLM2-135M).

What is asserted does not depend on what a 135M model chooses to say: the wire, the accounting,
the errors, and the loop's behaviour when a reply is cut off or a request is over the window.
The server is built on first use (see tests/llama_server.py) and started once for the module.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from copilot_nb import Agent, OpenAIChat
from copilot_nb.agent.loop.run_settings import RunSettings
from copilot_nb.errors import ContextLengthError, ModelHTTPError
from copilot_nb.events import Done, Failed, Notice, ToolStarted
from copilot_nb.messages import AssistantMessage, ToolCall, ToolResult, UserMessage
from copilot_nb.models.fim import FillRequest
from copilot_nb.models.openai.llama_infill import LlamaCppFill
from copilot_nb.models.server_props import window_from_props
from copilot_nb.models.transport import RetryPolicy
from tests.kernel_session import KernelSession
from tests.llama_server import ALIAS, LlamaServer, start

pytestmark = pytest.mark.external

CONTEXT = 8192
"""The server's window: room for copilot_nb's system prompt and tools (~4,300 tokens)."""
KERNEL_WINDOW = 2560
"""The kernel's setting: above the system prompt and tools (~1,600 tokens), below the server's."""
CUT_AT = 24
"""Output tokens: fewer than the model's answer takes, so the limit stops it."""
QUICK = RetryPolicy(max_retries=2, initial_delay=0.05, max_delay=0.1)
SAY = [UserMessage(content="Say hello.")]
WRITE_TOOL = {
    "name": "write_note",
    "description": "Write a note to a file.",
    "parameters": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "text": {"type": "string"}},
        "required": ["path", "text"],
    },
}


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    server = start(tmp_path_factory.mktemp("llama"), context=CONTEXT)
    yield server
    server.stop()


def model_of(llama: LlamaServer, **options: object) -> OpenAIChat:
    model = OpenAIChat(ALIAS, base_url=llama.url, api_key="none", **options)  # type: ignore[arg-type]
    model.retry = QUICK
    return model


def test_props_gives_the_window_the_server_runs_with(llama):
    props = httpx.get(f"{llama.root}/props", timeout=10).json()
    assert window_from_props(props) == CONTEXT


async def test_the_server_says_its_window_and_requests_carry_a_reply_limit(llama):
    model = model_of(llama)
    assert model.context_window is None
    await model.learn_limits()
    assert model.context_window == CONTEXT
    assert model.output_limit() == CONTEXT // 8
    await model.aclose()


async def test_a_streamed_reply_is_accounted_and_stops_at_its_limit(llama):
    model = model_of(llama)
    message = await model.complete(SAY, max_tokens=5, temperature=0, seed=1)
    assert message.finish_reason == "length"
    assert message.usage is not None
    assert message.usage.output_tokens == 5 and message.usage.input_tokens > 5
    await model.aclose()


async def test_a_reply_cut_off_by_its_limit_ends_the_turn_cleanly(llama, tmp_path: Path):
    """SmolLM2 answers in text here (it writes no call even with `tool_choice: required`), so
    the half call itself is test_cut_off.py's, over loopback; this is the real server's side:
    the limit sent, the reply stopped by it, and a turn that ends without an error."""
    sent: list[dict] = []

    async def record(request: httpx.Request) -> None:
        if request.method == "POST":
            sent.append(json.loads(request.content))

    client = httpx.AsyncClient(timeout=120, event_hooks={"request": [record]})
    agent = Agent(model=model_of(llama, http_client=client), workspace=tmp_path, max_rounds=2)
    settings = RunSettings(request_options={"max_tokens": CUT_AT, "temperature": 0})
    events = [e async for e in agent.run("List the files in the project.", settings=settings)]

    assert isinstance(events[-1], Done), events[-1]
    assert sent and all(body["max_tokens"] == CUT_AT for body in sent)
    last = agent.messages[-1]
    assert isinstance(last, AssistantMessage) and last.finish_reason == "length"
    if last.tool_calls or any(isinstance(e, ToolStarted) for e in events):
        raise AssertionError("a reply stopped by its limit kept or ran a call")
    await client.aclose()


async def test_a_tool_round_with_empty_assistant_content_is_accepted(llama):
    call = ToolCall.from_raw(
        id="call_1", name="write_note", raw_arguments='{"path": "a", "text": "b"}'
    )
    conversation = [
        *SAY,
        AssistantMessage(text="", tool_calls=(call,)),
        ToolResult(tool_call_id="call_1", name="write_note", content="written"),
    ]
    model = model_of(llama)
    message = await model.complete(conversation, tools=[WRITE_TOOL], max_tokens=8, temperature=0)
    assert message.finish_reason in ("length", "stop", "tool_calls")
    await model.aclose()


async def test_a_request_over_the_window_is_a_context_length_error_not_retried(llama):
    model = model_of(llama)
    huge = [UserMessage(content="word " * (CONTEXT * 2))]
    notices = []
    with pytest.raises(ContextLengthError, match="too long for this model's context window"):
        async for event in model.stream(huge, max_tokens=4):
            notices.append(event)
    assert not [e for e in notices if isinstance(e, Notice)], "retried"
    await model.aclose()


async def test_over_the_window_the_agent_fails_clearly_before_sending(llama, tmp_path: Path):
    agent = Agent(model=model_of(llama), workspace=tmp_path)
    events = [e async for e in agent.run("word " * (CONTEXT * 2))]
    assert isinstance(events[-1], Failed)
    assert f"{CONTEXT:,}" in events[-1].error or "window" in events[-1].error, events[-1].error
    assert "answered HTTP" not in events[-1].error, "the oversize request was sent"
    await agent.model.aclose()


async def test_infill_without_fill_tokens_is_a_501_asked_once(llama):
    fill = LlamaCppFill(ALIAS, base_url=llama.root)
    fill.retry = QUICK
    events = []
    with pytest.raises(ModelHTTPError) as info:
        async for event in fill.fill(FillRequest(prefix="def add(a, b):\n    ", suffix="")):
            events.append(event)
    assert info.value.status == 501
    assert not [e for e in events if isinstance(e, Notice)], "a 501 was retried"
    await fill.aclose()


def test_a_copilot_cell_in_a_real_kernel_runs_a_turn(llama, tmp_path: Path):
    env = {
        "COPILOT_NB_MODEL": f"openai:{ALIAS}",
        "OPENAI_BASE_URL": llama.url,
        "OPENAI_API_KEY": "none",
        "COPILOT_NB_CONTEXT_WINDOW": str(KERNEL_WINDOW),  # max_tokens 320: a short reply on CPU
    }
    kernel = KernelSession(tmp_path, env)
    try:
        assert kernel.execute("%load_ext copilot_nb").status == "ok"
        run = kernel.execute("%%copilot --yes --max-rounds 1\nSay hello.", timeout=300)
        assert run.status == "ok", run.reply
        shown = "\n".join(kernel_texts(run))
        assert "answered HTTP" not in shown and "Traceback" not in shown, shown[-2000:]
        history = kernel.execute("%copilot history")
        shown = json.dumps([m["content"] for m in history.of_type("display_data")])
        assert f"window {KERNEL_WINDOW:,}" in shown, shown[-2000:]  # the user's setting wins
    finally:
        kernel.close()


def kernel_texts(run) -> list[str]:
    texts = list(run.final_displays().values())
    texts += [m["content"].get("text", "") for m in run.of_type("stream", "error")]
    texts += ["\n".join(m["content"].get("traceback", [])) for m in run.of_type("error")]
    return texts
