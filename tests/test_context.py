"""The context budget: every request is measured against the model's window and, when over,
compacted, so a long session keeps working and no request that cannot fit is ever sent."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from copilot_nb import Agent
from copilot_nb.agent.context.compaction import (
    SUMMARY_INSTRUCTIONS,
    SummaryMessage,
    cut_to_tokens,
    elide,
)
from copilot_nb.agent.context.tokens import estimate_tokens, message_tokens, request_tokens
from copilot_nb.agent.context.window import (
    DEFAULT_WINDOW,
    ContextBudget,
    ContextWindow,
    known_window,
    model_budget,
)
from copilot_nb.errors import ConfigError, ContextBudgetError, ModelConnectionError
from copilot_nb.events import Done, Failed, Notice, UsageReported
from copilot_nb.jupyter.reports import render_history
from copilot_nb.messages import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolResult,
    Usage,
    UserMessage,
    as_messages,
    as_tool_spec,
)
from copilot_nb.testing import ScriptedRequest, call, reply
from tests.html_safety import table_rows
from tests.text_samples import PROSE, PYTHON

# --- budgets and windows -------------------------------------------------------------------------


def test_a_budget_keeps_room_for_the_reply_and_for_estimation_error():
    budget = ContextBudget(32_768)
    assert budget.reserved == 4096
    assert budget.input_limit == math.floor((32_768 - 4096) * 0.95)
    assert budget.target < budget.input_limit
    assert ContextBudget(1_000_000).reserved == 16_384
    assert ContextBudget(128_000, max_prompt=64_000).input_limit == math.floor(64_000 * 0.95)
    assert ContextBudget(1000, reserve_output=0, margin=0).input_limit == 1000
    with pytest.raises(ConfigError, match="no room"):
        ContextBudget(1000, reserve_output=1000)


@pytest.mark.parametrize(
    ("name", "window"),
    [
        ("gpt-4o", 128_000),
        ("gpt-4o-mini", 128_000),
        ("gpt-4.1-mini", 1_047_576),
        ("gpt-4-0613", 8_192),
        ("o3-mini", 200_000),
        ("claude-sonnet-4-5", 200_000),
        ("openai/gpt-4o", 128_000),
        ("qwen3:8b", 32_768),
        ("llama3:8b", 8_192),
        ("llama3.1:8b", 32_768),
        ("my-finetune", DEFAULT_WINDOW),
    ],
)
def test_known_model_windows_by_name(name, window):
    assert known_window(name) == window


def test_a_window_the_model_knows_wins_over_the_table_and_an_explicit_budget_over_both():
    model = Summarizer(name="gpt-4o")
    assert model_budget(model).window == 128_000
    model.context_window, model.max_prompt_tokens, model.max_output_tokens = 128_000, 64_000, 4096
    budget = model_budget(model)
    assert (budget.window, budget.max_prompt, budget.reserved) == (128_000, 64_000, 4096)
    assert ContextWindow(50_000).budget_for(model).window == 50_000


# --- compaction ----------------------------------------------------------------------------------


class Summarizer:
    """A model that is only ever asked for summaries: it records them and answers briefly."""

    def __init__(self, name: str = "fake", *, error: Exception | None = None) -> None:
        self.name = name
        self.error = error
        self.calls: list[list[Message]] = []

    async def complete(self, messages: Any, **options: Any) -> AssistantMessage:
        self.calls.append(list(messages))
        if self.error is not None:
            raise self.error
        return AssistantMessage(text="Read the files so far; they define helpers. Nothing is left.")

    def stream(self, messages: Any, **options: Any) -> Any:
        raise AssertionError("fit() only ever asks for a summary")

    async def aclose(self) -> None:
        return None


def code(chars: int, seed: int = 0) -> str:
    lines, size, i = [], 0, 0
    while size < chars:
        line = f"    value_{seed}_{i} = compute({i}, name='item{seed}')  # step {i}"
        lines.append(line)
        size += len(line) + 1
        i += 1
    return "\n".join(lines)


def a_round(number: int, *sizes: int, text: str = "") -> list[Message]:
    calls = tuple(
        call("read_file", id=f"c{number}_{k}", path=f"f{number}_{k}.py") for k in range(len(sizes))
    )
    results: list[Message] = [
        ToolResult(tool_call_id=c.id, name="read_file", content=code(size, number * 10 + k))
        for k, (c, size) in enumerate(zip(calls, sizes, strict=True))
    ]
    return [AssistantMessage(text=text, tool_calls=calls), *results]


SYSTEM = SystemMessage(content="You are a careful coding agent.")
REQUEST = UserMessage(content="Read every file and tell me what they define.")


def conversation(rounds: int, size: int) -> list[Message]:
    messages: list[Message] = [SYSTEM, REQUEST]
    for number in range(rounds):
        messages += a_round(number, size)
    return messages


def exact_budget(tokens: int) -> ContextBudget:
    """A budget whose limit is exactly `tokens` (no reply reserve, no margin)."""
    return ContextBudget(tokens, reserve_output=0, margin=0)


def assert_valid(messages: list[Message]) -> None:
    """What providers demand: calls and results together, no result without its call."""
    open_calls: set[str] = set()
    for position, message in enumerate(messages):
        if isinstance(message, ToolResult):
            assert message.tool_call_id in open_calls, f"orphan tool result at {position}"
            open_calls.discard(message.tool_call_id)
        else:
            assert not open_calls, f"tool calls {open_calls} left without results at {position}"
            if isinstance(message, AssistantMessage):
                open_calls = {c.id for c in message.tool_calls}
    assert not open_calls


async def test_a_conversation_that_fits_is_sent_as_it_is():
    messages = conversation(3, 2000)
    context = ContextWindow(exact_budget(request_tokens(messages)))
    assert await context.fit(messages, Summarizer()) is messages
    assert context.last_compaction is None and context.compactions == []


async def test_exactly_at_the_budget_fits_and_one_token_over_compacts():
    messages = conversation(4, 4000)
    size = request_tokens(messages)
    at = ContextWindow(exact_budget(size))
    assert await at.fit(messages, Summarizer()) is messages
    over = ContextWindow(exact_budget(size - 1))
    fitted = await over.fit(messages, Summarizer())
    assert fitted is not messages and fitted[:2] == messages[:2]
    assert request_tokens(fitted) <= size - 1
    assert over.last_compaction is not None and over.last_compaction.before == size
    assert over.last_compaction.after == request_tokens(fitted)
    assert_valid(fitted)


async def test_old_tool_results_shrink_first_and_the_newest_rounds_stay_whole():
    messages = conversation(6, 8000)
    model = Summarizer()
    context = ContextWindow(exact_budget(request_tokens(messages) * 2 // 3))
    fitted = await context.fit(messages, model)
    assert model.calls == []  # shrinking old results was enough
    assert fitted[-4:] == messages[-4:]  # the two newest rounds, untouched
    first = fitted[3]
    assert isinstance(first, ToolResult) and first.tool_call_id == "c0_0"
    gone = len(messages[3].content) - len(first.content.rsplit("\n", 1)[0])
    assert first.content.endswith(f"[… {gone:,} characters elided; call read_file again if needed]")
    assert first.content.startswith(messages[3].content.split("\n", 1)[0])
    assert context.last_compaction is not None
    assert "tool results shortened" in context.last_compaction.describe()


def test_elision_keeps_the_first_lines_and_counts_what_is_gone_across_elisions():
    text = "\n".join(f"line {i}" for i in range(5000))
    short = elide(text, "read_file")
    head = "\n".join(text.splitlines()[:6])
    assert (
        short
        == f"{head}\n[… {len(text) - len(head):,} characters elided; call read_file again if needed]"
    )
    assert elide(short, "read_file") == short
    cut = cut_to_tokens(text, "read_file", 2000)
    assert estimate_tokens(cut) <= 2000 and cut.startswith("line 0\nline 1\n")
    body = cut.rsplit("\n", 1)[0]
    assert body.endswith(f"line {body.count(chr(10))}")  # cut at a line's end
    again = elide(cut, "read_file")
    assert again.endswith(
        f"[… {len(text) - len(head):,} characters elided; call read_file again if needed]"
    )
    assert cut_to_tokens("short", "x", 100) == "short"


async def test_one_result_too_large_for_the_window_is_cut_to_a_share_of_it():
    messages = [SYSTEM, REQUEST, *a_round(0, 300_000)]
    context = ContextWindow(32_768)
    fitted = await context.fit(messages, Summarizer())
    limit = ContextBudget(32_768).input_limit
    assert request_tokens(fitted) <= limit
    result = fitted[-1]
    assert isinstance(result, ToolResult)
    assert result.content.startswith(messages[-1].content[:1000])
    assert message_tokens(result) <= 0.4 * limit + 1
    assert "characters elided; call read_file again if needed]" in result.content


async def test_older_rounds_are_summarised_by_the_model_when_shrinking_is_not_enough():
    messages = conversation(80, 3000)
    model = Summarizer()
    context = ContextWindow(exact_budget(12_000), keep_rounds=2)
    fitted = await context.fit(messages, model)
    (asked,) = model.calls
    assert asked[0].content == SUMMARY_INSTRUCTIONS and "read_file" in asked[1].content
    assert fitted[0] is SYSTEM and fitted[1] is REQUEST  # never dropped, never summarised
    summary = fitted[2]
    assert isinstance(summary, SummaryMessage) and summary.role == "user"
    assert summary.content.startswith(f"[Summary of {summary.replaced} earlier messages")
    assert summary.replaced == len(messages) - 2 - 4
    assert fitted[3] is messages[-4] and fitted[-2:] == messages[-2:]  # the kept rounds
    assert request_tokens(fitted) <= context.budget_for(model).target
    assert context.last_compaction is not None and context.last_compaction.summarized > 0
    assert_valid(fitted)


async def test_a_summary_of_earlier_turns_comes_before_the_latest_request():
    earlier = [*conversation(40, 3000)[1:], AssistantMessage(text="They define helpers.")]
    latest = UserMessage(content="Now rename compute to evaluate.")
    messages = [SYSTEM, *earlier, latest]
    context = ContextWindow(exact_budget(9_000), keep_rounds=1)
    fitted = await context.fit(messages, Summarizer())
    assert fitted[0] is SYSTEM and fitted[-1] is latest
    assert isinstance(fitted[1], SummaryMessage)
    assert fitted[-2].text == "They define helpers."  # type: ignore[union-attr]
    assert_valid(fitted)


async def test_a_system_prompt_alone_over_budget_is_a_clear_error_and_no_model_is_asked():
    model = Summarizer()
    messages: list[Message] = [SystemMessage(content=PROSE * 40), REQUEST]
    with pytest.raises(ContextBudgetError, match="system prompt and tool definitions alone"):
        await ContextWindow(exact_budget(2000)).fit(messages, model)
    assert model.calls == []


async def test_a_request_alone_over_budget_is_a_clear_error_and_no_model_is_asked():
    model = Summarizer()
    messages: list[Message] = [SYSTEM, *conversation(5, 3000)[1:], UserMessage(content=PROSE * 40)]
    with pytest.raises(ContextBudgetError, match=r"the request is about [\d,]+ tokens"):
        await ContextWindow(exact_budget(3000)).fit(messages, model)
    assert model.calls == []


async def test_an_agent_never_sends_a_request_that_cannot_fit(serve, tmp_path):
    server = serve([reply("never sent")])
    agent = Agent(model=server.model(), workspace=tmp_path, context=ContextWindow(8_000))
    events = [e async for e in agent.run(PYTHON * 100)]
    assert isinstance(events[-1], Failed)
    assert "the request is about" in events[-1].error and "8,000-token window" in events[-1].error
    assert server.requests == []


async def test_when_summarising_fails_results_are_cut_instead_or_the_error_says_why():
    model = Summarizer(error=ModelConnectionError("the provider could not be reached"))
    messages = conversation(30, 3000)
    context = ContextWindow(exact_budget(8_000))
    fitted = await context.fit(messages, model)
    assert request_tokens(fitted) <= 8_000 and len(model.calls) == 1
    assert context.last_compaction is not None
    assert "summarising failed" in context.last_compaction.note
    chatty = [SYSTEM, REQUEST]
    for number in range(30):
        chatty += a_round(number, 100, text=PROSE)
    with pytest.raises(ContextBudgetError, match="summarising failed: the provider could not"):
        await ContextWindow(exact_budget(6_000)).fit(chatty, model)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    turns=st.lists(
        st.tuples(
            st.integers(1, 400),  # the user's request, in words
            st.lists(st.lists(st.integers(0, 30_000), min_size=1, max_size=3), max_size=8),
            st.booleans(),  # the turn ended with an answer
        ),
        min_size=1,
        max_size=5,
    ),
    window=st.integers(1_500, 40_000),
    keep_rounds=st.integers(0, 3),
)
def test_any_conversation_either_fits_and_stays_valid_or_fails_clearly(turns, window, keep_rounds):
    messages: list[Message] = [SYSTEM]
    number = 0
    for words, rounds, answered in turns:
        messages.append(UserMessage(content="please " * words))
        for sizes in rounds:
            messages += a_round(number, *sizes, text="Looking." if number % 2 else "")
            number += 1
        if answered:
            messages.append(AssistantMessage(text="Done: " + "ok " * words))
    request = max(i for i, m in enumerate(messages) if type(m) is UserMessage)
    context = ContextWindow(exact_budget(window), keep_rounds=keep_rounds)
    try:
        fitted = asyncio.run(context.fit(messages, Summarizer()))
    except ContextBudgetError as exc:
        assert "input budget" in str(exc)
        return
    assert request_tokens(fitted) <= window
    assert fitted[0] is SYSTEM and messages[request] in fitted
    assert_valid(fitted)
    non_system = [m for m in fitted if not isinstance(m, SystemMessage)]
    assert not isinstance(non_system[0], (ToolResult, AssistantMessage))


# --- calibration by provider-reported usage ------------------------------------------------------


async def test_provider_reported_usage_is_the_measure_plus_an_estimate_of_what_was_added():
    context = ContextWindow(exact_budget(100_000))
    messages = conversation(2, 2000)
    estimate = request_tokens(messages)
    assert context.measure(messages) == estimate
    await context.fit(messages, Summarizer())
    context.observe(Usage(input_tokens=2 * estimate))
    assert context.calibration.ratio == 2.0
    added = a_round(7, 1000)
    grown = [*messages, *added]
    assert context.measure(grown) == 2 * estimate + math.ceil(2 * sum(map(message_tokens, added)))
    assert context.measure(grown[1:]) == math.ceil(2 * request_tokens(grown[1:]))  # not a prefix
    await context.fit(grown, Summarizer())
    context.observe(Usage(input_tokens=10))  # a server that does not count: ignored
    assert context.calibration.ratio == 2.0
    assert context.measure(grown) == math.ceil(2 * request_tokens(grown))


async def test_an_agent_compacts_sooner_for_a_provider_that_counts_more_tokens(serve, tmp_path):
    (tmp_path / "a.py").write_text(code(40_000))

    def provider(factor: float) -> Any:
        def respond(request: ScriptedRequest) -> Any:
            counted = math.ceil(factor * body_estimate(request))
            usage = Usage(input_tokens=counted, output_tokens=5)
            if len([m for m in request.messages if m["role"] == "tool"]) < 2:
                return reply("", call("read_file", path="a.py"), usage=usage)
            return reply("Read it twice.", usage=usage)

        return respond

    sizes = {}
    for factor in (1.0, 1.4):
        server = serve(responder=provider(factor))
        model = server.model()
        model.context_window = 40_000
        agent = Agent(model=model, workspace=tmp_path)
        events = [e async for e in agent.run("Read a.py twice.")]
        assert isinstance(events[-1], Done)
        assert agent.context.calibration.ratio == pytest.approx(factor, rel=0.01)
        sizes[factor] = [body_estimate(r) for r in server.requests]
        limit = model_budget(model).input_limit
        assert all(factor * size <= limit for size in sizes[factor])  # by the provider's count
    assert sizes[1.0][-1] > sizes[1.4][-1]  # it compacted harder to fit the provider's count


def body_estimate(request: ScriptedRequest) -> int:
    """Our estimate of a request as it arrived on the wire."""
    tools = [as_tool_spec(t) for t in request.body.get("tools", [])]
    return request_tokens(as_messages(request.messages), tools)


# --- the measure: a long session that reads big files ------------------------------------


@pytest.mark.parametrize("factor", [None, 1.3], ids=["no-usage", "provider-counts-30pct-more"])
async def test_fifty_rounds_reading_200_kb_files_stay_under_a_32k_window(serve, tmp_path, factor):
    for i in range(50):
        lines = [
            f"def handler_{i:02d}_{j:04d}(request, *, retries={j % 7}):  "
            f"# file {i:02d} line {j:04d}: validate, route and answer the request"
            for j in range(2000)
        ]
        (tmp_path / f"file_{i:02d}.py").write_text("\n".join(lines) + "\n")
        assert (tmp_path / f"file_{i:02d}.py").stat().st_size >= 200_000
    summaries: list[ScriptedRequest] = []
    reads = iter(range(50))

    def respond(request: ScriptedRequest) -> Any:
        usage = (
            None
            if factor is None
            else Usage(input_tokens=math.ceil(factor * body_estimate(request)))
        )
        if request.messages[0]["content"] == SUMMARY_INSTRUCTIONS:
            summaries.append(request)
            return reply(
                f"Read {len(summaries)} batches of handler files; all define handlers.", usage=usage
            )
        number = next(reads, None)
        if number is None:
            return reply("Read all 50 files: each defines 2,000 request handlers.", usage=usage)
        return reply("", call("read_file", path=f"file_{number:02d}.py"), usage=usage)

    server = serve(responder=respond)
    model = server.model()
    model.context_window = 32_768
    agent = Agent(model=model, workspace=tmp_path, max_rounds=60)
    events = [e async for e in agent.run("Read every file_NN.py and tell me what they define.")]

    assert isinstance(events[-1], Done) and "all 50 files" in events[-1].text
    chats = [r for r in server.requests if r not in summaries]
    assert len(chats) == 51 and summaries
    limit = model_budget(model).input_limit
    estimates = [body_estimate(r) for r in server.requests]
    raw = [int(r.headers["Content-Length"]) for r in server.requests]
    assert max(estimates) * (factor or 1) <= limit < 32_768
    assert max(raw) / 4 <= 32_768
    for number, request in enumerate(chats[1:]):
        newest = request.messages[-1]
        assert newest["role"] == "tool" and f"file_{number:02d}.py" in newest["content"]
        assert f"def handler_{number:02d}_0000(" in newest["content"]  # the model sees the read
        assert request.messages[1]["content"].startswith("Read every file_NN.py")
        assert_valid(as_messages(request.messages))
    notices = [e.text for e in events if isinstance(e, Notice)]
    assert notices and all(n.startswith("compacted the conversation: ") for n in notices)
    counted = [e for e in events if isinstance(e, UsageReported)]
    assert len(counted) == len(server.requests), "each request is billed: summaries counted too"
    print(
        f"\n50 rounds ({factor=}): {len(summaries)} summaries, {len(notices)} compactions; "
        f"largest request: {max(estimates):,} estimated tokens (limit {limit:,}), "
        f"{max(raw):,} bytes (/4 = {max(raw) // 4:,})"
    )


def test_history_shows_the_meter_and_what_each_message_costs(tmp_path):
    agent = Agent(model=Summarizer(name="gpt-4o"), workspace=tmp_path)
    agent.messages += [
        REQUEST,
        SummaryMessage(content="[Summary of 3 earlier messages]\n\nRead a.py.", replaced=3),
        *a_round(1, 5000),
    ]
    report = render_history(agent)
    assert report.html.startswith("<p><strong>gpt-4o</strong> · ")
    assert "of 106,400 input tokens" in report.text
    rows = table_rows(report.html)
    assert rows[0] == ["#", "role", "tokens", "message"]
    assert rows[3][:2] == ["3", "summary"] and rows[4][:2] == ["4", "assistant"]
    assert "read_file(path='f1_0.py')" in rows[4][3]
    assert rows[5][:2] == ["5", "tool"]


def test_history_marks_shortened_results_and_counts_compactions(tmp_path):
    agent = Agent(model=Summarizer(name="gpt-4o"), workspace=tmp_path)
    agent.messages += [REQUEST, *a_round(1, 50_000)]
    agent.messages = asyncio.run(agent.context.fit(agent.messages, ShrinkingModel(), []))
    text = render_history(agent).text
    assert "tool (shortened)" in text and "1 compaction: 1 tool results shortened" in text


class ShrinkingModel(Summarizer):
    context_window = 12_000
