"""What a turn costs (issue 39, cases 3 and 4): requests a provider can cache, cached tokens read
from each wire's usage block, and the cost shown.

Each provider is asked over loopback in its real wire format; the request bodies are checked
against the official SDKs' request types."""

from __future__ import annotations

import json
from typing import Any

from anthropic.types.message_create_params import MessageCreateParamsStreaming
from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming
from openai.types.responses.response_create_params import ResponseCreateParamsStreaming
from pydantic import TypeAdapter

from copilot_nb import Agent, tool
from copilot_nb.agent.conversations.usage import price_of, tokens_of
from copilot_nb.agent.loop.run_settings import RunSettings
from copilot_nb.events import Done, UsageReported
from copilot_nb.jupyter.cell_view import CellRenderer
from copilot_nb.jupyter.panel.saved import usage_note
from copilot_nb.messages import AssistantMessage, SystemMessage, ToolCall, ToolResult, Usage
from copilot_nb.messages import UserMessage as User
from copilot_nb.models.anthropic.cache import MAX_BREAKPOINTS
from copilot_nb.models.anthropic.chat import AnthropicChat
from copilot_nb.models.openai.chat import OpenAIChat
from copilot_nb.models.openai.responses import OpenAIResponses
from copilot_nb.testing import call, reply
from copilot_nb.tools import ToolSet
from evals.harness import Result, table

SYSTEM = "You are a notebook agent. " * 200


@tool
def row_count(table: str) -> int:
    """Count a table's rows.

    Args:
        table: its name.
    """
    return 1234


def _marks(value: Any, path: str = "") -> list[str]:
    """Where a body carries `cache_control`, as paths (`messages.0.content.-1`)."""
    if isinstance(value, dict):
        here = [path] if "cache_control" in value else []
        return here + [m for k, v in value.items() for m in _marks(v, f"{path}.{k}")]
    if isinstance(value, list):
        return [m for i, v in enumerate(value) for m in _marks(v, f"{path}.{i}")]
    return []


def _prefix_share(before: str, after: str) -> float:
    same = next(
        (i for i, (x, y) in enumerate(zip(before, after, strict=False)) if x != y), len(before)
    )
    return same / len(after)


# --- Anthropic: cache_control breakpoints --------------------------------------------------------


async def test_anthropic_marks_the_tools_system_and_last_messages_and_repeats_them(serve) -> None:
    """The second request of a turn sends the first one's body again, breakpoints and all, as
    its prefix: what Anthropic's cache reads back at a tenth of the price."""
    server = serve([reply("", call("row_count", table="sales")), reply("1,234 rows.")])
    model = AnthropicChat("claude-sonnet-4-5", api_key="k", base_url=server.base_url)
    agent = Agent(model=model, tools=ToolSet([row_count]), system_prompt=SYSTEM)
    assert await agent.ask("how many rows?") == "1,234 rows."

    first, second = (r.body for r in server.requests)
    for body in (first, second):
        TypeAdapter(MessageCreateParamsStreaming).validate_python(body)
        assert len(_marks(body)) <= MAX_BREAKPOINTS
    assert set(_marks(first)) == {".tools.0", ".system.0", ".messages.0.content.0"}
    assert set(_marks(second)) == {
        ".tools.0",
        ".system.0",
        ".messages.0.content.0",
        ".messages.2.content.0",
    }, "the previous request's end and this one's"
    assert second["messages"][0] == first["messages"][0]
    assert json.dumps(second["messages"][:1]) == json.dumps(first["messages"])
    assert second["system"] == first["system"] and second["tools"] == first["tools"]


async def test_a_long_conversation_never_has_more_than_four_breakpoints(serve) -> None:
    history: list[Any] = [SystemMessage(content=SYSTEM)]
    for n in range(6):
        history += [
            User(content=f"question {n}"),
            AssistantMessage(
                tool_calls=(ToolCall.from_raw(id=f"c{n}", name="row_count", raw_arguments="{}"),)
            ),
            ToolResult(tool_call_id=f"c{n}", name="row_count", content="1234"),
            AssistantMessage(text=f"answer {n}"),
        ]
    history.append(User(content="and now?"))
    server = serve([reply("ok")])
    model = AnthropicChat("claude-sonnet-4-5", api_key="k", base_url=server.base_url)
    await model.complete(history, tools=[row_count.spec])
    (request,) = server.requests
    TypeAdapter(MessageCreateParamsStreaming).validate_python(request.body)
    assert len(_marks(request.body)) == MAX_BREAKPOINTS
    assert set(_marks(request.body)) == {
        ".tools.0",
        ".system.0",
        ".messages.22.content.0",
        ".messages.24.content.0",
    }, "the last two user turns: the previous request's end and this one's"


async def test_a_gateway_that_refuses_cache_control_can_turn_it_off(serve) -> None:
    server = serve([reply("ok")])
    model = AnthropicChat("claude-sonnet-4-5", api_key="k", base_url=server.base_url)
    model.cache_prompt = False
    await model.complete([SystemMessage(content=SYSTEM), User(content="hi")])
    assert _marks(server.requests[0].body) == []
    assert server.requests[0].body["system"] == SYSTEM


async def test_the_next_turn_sends_the_last_turns_requests_as_they_were_sent(serve) -> None:
    """Each turn's context block goes with that turn's request, in every later request too: the
    next turn's prompt starts with the whole of the last one, which a provider has cached."""
    server = serve([reply("", call("row_count", table="a")), reply("first"), reply("second")])
    agent = Agent(model=server.model(), tools=ToolSet([row_count]), system_prompt=SYSTEM)
    turns = iter(["<context>\nvariables: a\n</context>", "<context>\nvariables: a, b\n</context>"])

    async def block() -> str:
        return next(turns)

    for prompt in ("count a", "and b?"):
        async for _ in agent.run(prompt, settings=RunSettings(context_block=block)):
            pass
    first_turn_last, second_turn = (r.body["messages"] for r in server.requests[1:])
    assert second_turn[: len(first_turn_last)] == first_turn_last
    assert second_turn[1]["content"].startswith("<context>\nvariables: a\n</context>")
    assert second_turn[-1]["content"].startswith("<context>\nvariables: a, b\n</context>")
    assert [m.content for m in agent.messages if isinstance(m, User)] == ["count a", "and b?"]
    share = _prefix_share(json.dumps(first_turn_last), json.dumps(second_turn))
    assert share > 0.9, share


# --- OpenAI: prompt_cache_key --------------------------------------------------------------------


async def test_openai_requests_name_their_prefix_with_prompt_cache_key(serve) -> None:
    server = serve([reply("a"), reply("b"), reply("c"), reply("d")])
    chat = OpenAIChat("gpt-4o", api_key="k", base_url=server.url)
    responses = OpenAIResponses("gpt-5", api_key="k", base_url=server.url)
    for model in (chat, responses):
        model.sends_cache_key = True
        await model.complete([SystemMessage(content=SYSTEM), User(content="one")])
        await model.complete(
            [
                SystemMessage(content=SYSTEM),
                User(content="one"),
                AssistantMessage(text="a"),
                User(content="two"),
            ]
        )
    bodies = [r.body for r in server.requests]
    for body in bodies[:2]:
        TypeAdapter(CompletionCreateParamsStreaming).validate_python(body)
    for body in bodies[2:]:
        TypeAdapter(ResponseCreateParamsStreaming).validate_python(body)
    keys = {b["prompt_cache_key"] for b in bodies}
    assert len(keys) == 1 and next(iter(keys)).startswith("copilot-nb-"), keys
    assert _prefix_share(json.dumps(bodies[0]), json.dumps(bodies[1])) > 0.9


async def test_a_server_that_is_not_openai_gets_no_prompt_cache_key(serve) -> None:
    """llama.cpp, vLLM or Ollama behind the same wire may refuse a field they do not know."""
    server = serve([reply("ok")])
    await OpenAIChat("qwen3", api_key="k", base_url=server.url).complete([User(content="hi")])
    assert "prompt_cache_key" not in server.requests[0].body


# --- cached tokens, read from each wire ----------------------------------------------------------


async def test_cached_tokens_are_read_from_each_wires_usage_block(serve) -> None:
    openai = Usage(
        input_tokens=5000, output_tokens=50, raw={"prompt_tokens_details": {"cached_tokens": 4096}}
    )
    responses = Usage(
        input_tokens=5000, output_tokens=50, raw={"input_tokens_details": {"cached_tokens": 4096}}
    )
    anthropic = Usage(
        input_tokens=104,
        output_tokens=50,
        raw={"cache_read_input_tokens": 4096, "cache_creation_input_tokens": 800},
    )
    server = serve([reply("a", usage=openai), reply("b", usage=responses)])
    second = serve([reply("c", usage=anthropic)])
    got = [
        await OpenAIChat("gpt-4o", api_key="k", base_url=server.url).complete([User(content="q")]),
        await OpenAIResponses("gpt-5", api_key="k", base_url=server.url).complete(
            [User(content="q")]
        ),
        await AnthropicChat("claude-sonnet-4-5", api_key="k", base_url=second.base_url).complete(
            [User(content="q")]
        ),
    ]
    counted = [tokens_of(m.usage) for m in got if m.usage is not None]
    assert [(t["input"], t["cached"]) for t in counted] == [(5000, 4096)] * 3
    assert counted[2]["cache_write"] == 800, "Anthropic counts the prompt in three parts"
    price = {"claude-sonnet-4-5": {"input": 3.0, "cached": 0.3, "cache_write": 3.75, "output": 15}}
    dollars = price_of("claude-sonnet-4-5", counted[2], price)
    assert dollars is not None
    assert round(dollars * 1e6, 1) == round(104 * 3 + 4096 * 0.3 + 800 * 3.75 + 50 * 15, 1)


# --- the cost, shown -----------------------------------------------------------------------------


class _Display:
    """Keeps what the cell shows last, as a front end would."""

    text = ""

    def __call__(self, rendered: Any, **_: Any) -> _Display:
        self.text = rendered.text
        return self

    def update(self, rendered: Any, **_: Any) -> None:
        self.text = rendered.text


def test_the_cells_footer_shows_cached_input_and_money_where_a_price_is_set() -> None:
    shown = _Display()
    prices = {"claude-sonnet-4-5": {"input": 3.0, "cached": 0.3, "output": 15.0}}
    view = CellRenderer(
        display=shown, interval=0, cost=lambda t: price_of("claude-sonnet-4-5", t, prices)
    )
    for read in (0, 9000):
        usage = Usage(input_tokens=1000, output_tokens=100, raw={"cache_read_input_tokens": read})
        view.handle(UsageReported(usage=usage))
    view.handle(Done(text="ok"))
    view.flush()
    assert "tokens: 11,000 in (9,000 cached) · 200 out · $0.0117" in shown.text
    assert view.provenance()["usage"] == {
        "input_tokens": 11_000,
        "output_tokens": 200,
        "cached_tokens": 9000,
    }
    unpriced = _Display()
    other = CellRenderer(display=unpriced, interval=0)
    other.handle(UsageReported(usage=Usage(input_tokens=10, output_tokens=1)))
    other.handle(Done(text="ok"))
    other.flush()
    assert "tokens: 10 in · 1 out" in unpriced.text and "$" not in unpriced.text


def test_the_panels_meter_says_how_much_input_was_cached_and_what_it_cost() -> None:
    turns = [
        {"model": "gpt-4o", "tokens": {"input": 9000, "cached": 8192, "output": 100}},
        {"model": "gpt-4o", "tokens": {"input": 1000, "cached": 0, "output": 50}},
    ]
    prices = {"gpt-4o": {"input": 2.5, "cached": 1.25, "output": 10.0}}
    assert usage_note(turns, prices) == "8,192 input tokens cached · $0.0163"  # 1,808 fresh


def test_the_evals_table_has_a_cached_column() -> None:
    row = Result(
        task="t",
        kind="plot",
        ok=True,
        reason="",
        rounds=2,
        tokens_in=9000,
        tokens_out=10,
        tokens_cached=8192,
        premium=0,
        seconds=1,
    )
    head, _, line, total = table([row]).splitlines()
    assert "| tokens in | cached | tokens out |" in head
    assert "| 9,000 | 8,192 | 10 |" in line and "| 9,000 | 8,192 | 10 |" in total
