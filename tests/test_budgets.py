"""Budgets without a kernel: their periods and parsing (pure), the ledger under concurrent
writers, a request stopped mid-turn before it leaves, and a LiteLLM gateway's budget error
becoming the same pause instead of a retry storm."""

from __future__ import annotations

import threading
from datetime import datetime, timezone

import pytest

from copilot_nb.agent.loop.rounds import Agent
from copilot_nb.events import Done, Failed, Notice, ToolFinished
from copilot_nb.messages import Usage
from copilot_nb.policy import budget_refusal
from copilot_nb.policy.budgets import BudgetFormatError, parse_budgets, period_of
from copilot_nb.policy.ledger import BudgetLedger
from copilot_nb.telemetry.watch import TRACE_HEADER, TurnWatch
from copilot_nb.testing import call, fail, reply
from tests import policy_files

policy_file = policy_files.policy_file


def at(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


@pytest.mark.parametrize(
    ("period", "now", "label", "resets"),
    [
        ("day", "2026-12-07T23:59:59", "2026-12-07", "2026-12-08T00:00:00"),
        ("day", "2026-12-08T00:00:00", "2026-12-08", "2026-12-09T00:00:00"),
        ("week", "2026-12-13T12:00:00", "2026-W50", "2026-12-14T00:00:00"),  # a Sunday
        ("week", "2026-12-14T00:00:00", "2026-W51", "2026-12-21T00:00:00"),
        ("month", "2026-12-31T23:00:00", "2026-12", "2027-01-01T00:00:00"),
        ("month", "2027-02-01T00:00:00", "2027-02", "2027-03-01T00:00:00"),
    ],
)
def test_a_period_is_labelled_and_resets_at_its_utc_boundary(period, now, label, resets):
    assert period_of(period, at(now)) == (label, at(resets))


@pytest.mark.parametrize(
    ("entry", "said"),
    [
        ({"scope": "org", "period": "day", "tokens": 1}, "budgets[0].scope is 'org'"),
        ({"scope": "user", "period": "year", "tokens": 1}, "budgets[0].period is 'year'"),
        ({"scope": "user", "period": "day", "tokens": -1}, "tokens must be a whole number"),
        ({"scope": "user", "period": "day", "tokens": True}, "tokens must be a whole number"),
        ({"scope": "team", "period": "day", "tokens": 1}, "name the team in `team`"),
        ({"scope": "user", "period": "day", "tokens": 1, "usd": 5}, "unknown key usd"),
    ],
)
def test_a_budget_the_policy_cannot_mean_is_refused_by_name(entry, said):
    with pytest.raises(BudgetFormatError, match=said.replace("[", r"\[").replace("]", r"\]")):
        parse_budgets([entry])


def test_a_policy_with_a_broken_budget_refuses_every_request(policy_file):
    path = policy_file({"budgets": [{"scope": "team", "period": "day", "tokens": 5}]})
    refusal = budget_refusal()
    assert refusal is not None and f"policy {path} cannot be read" in refusal


def test_the_ledger_counts_every_writer_and_starts_again_each_period(tmp_path):
    ledger = BudgetLedger(tmp_path / "ledger")

    def spend() -> None:
        for _ in range(25):
            BudgetLedger(ledger.folder).add({"user:ann": "2026-12-07", "team:ds": "2026-W50"}, 3)

    writers = [threading.Thread(target=spend) for _ in range(4)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    assert ledger.used("user:ann", "2026-12-07") == 300
    assert ledger.used("team:ds", "2026-W50") == 300
    ledger.add({"user:ann": "2026-12-08"}, 7)
    assert ledger.used("user:ann", "2026-12-08") == 7
    assert ledger.used("user:ann", "2026-12-07") == 0  # that period is over
    assert sorted(p.name for p in ledger.folder.iterdir()) == [
        ".lock",
        "team-ds.json",
        "user-ann.json",
    ]


async def run(agent: Agent, prompt: str) -> list[object]:
    return [event async for event in agent.run(prompt)]


async def test_the_request_past_a_team_budget_is_not_sent_mid_turn(policy_file, serve, tmp_path):
    policy_file(
        {
            "ledger": str(tmp_path / "ledger"),
            "budgets": [{"scope": "team", "team": "ds", "period": "week", "tokens": 100}],
        }
    )
    (tmp_path / "a.txt").write_text("alpha\n")
    server = serve(
        [
            reply(
                "", call("read_file", path="a.txt"), usage=Usage(input_tokens=90, output_tokens=20)
            ),
            reply("never sent"),
        ]
    )
    model = server.model()
    agent = Agent(model=model, workspace=tmp_path)
    watch = TurnWatch(
        conversation="conv-1",
        trace=None,
        tokens_of=lambda e: {"input": e.usage.input_tokens, "output": e.usage.output_tokens},
    )
    restore = model.endpoint.outgoing_with(watch)
    events = []
    async for event in agent.run("read a.txt"):
        watch.before(event)
        events.append(event)
    restore()
    assert any(isinstance(e, ToolFinished) and e.ok for e in events)
    failed = events[-1]
    assert isinstance(failed, Failed)
    assert "Budget reached: team:ds has used 110 of 100 tokens this week" in failed.error
    assert len(server.requests) == 1
    assert server.requests[0].headers[TRACE_HEADER] == "conv-1"


LITELLM_BUDGET = "Budget has been exceeded! Current cost: 1.2, Max budget: 1.0"


@pytest.mark.parametrize("status", [422, 429, 400])
async def test_a_litellm_budget_error_pauses_without_retrying(serve, tmp_path, status):
    server = serve([fail(status, LITELLM_BUDGET, type="budget_exceeded"), reply("never")])
    events = await run(Agent(model=server.model(), workspace=tmp_path), "hi")
    assert not any(isinstance(e, (Notice, Done)) for e in events)
    failed = events[-1]
    assert isinstance(failed, Failed)
    assert failed.error.startswith("Budget reached: ")
    assert LITELLM_BUDGET in failed.error and "not retried" in failed.error
    assert len(server.requests) == 1


def test_the_policy_summary_names_each_budget_and_the_collector(policy_file):
    from copilot_nb.policy import describe

    policy_file(
        {
            "budgets": [
                {"scope": "user", "period": "day", "tokens": 200000},
                {"scope": "team", "team": "ds", "period": "month", "tokens": 5000000},
            ],
            "telemetry": {"endpoint": "http://collector:4318", "content": False},
        }
    )
    lines = describe()
    assert (
        '  budgets = ["200,000 tokens per day for each user", '
        '"5,000,000 tokens per month for team ds"]' in lines
    )
    assert '  telemetry = {"endpoint": "http://collector:4318", "content": false}' in lines


@pytest.mark.parametrize(
    ("telemetry", "said"),
    [
        ({"endpoint": 4318}, "telemetry.endpoint must be the collector's OTLP/HTTP URL"),
        ({"content": "yes"}, "telemetry.content must be true or false"),
        ({"headers": {}}, "telemetry must be an object with endpoint and content"),
    ],
)
def test_a_telemetry_rule_the_policy_cannot_mean_fails_closed(policy_file, telemetry, said):
    path = policy_file({"telemetry": telemetry})
    refusal = budget_refusal()
    assert refusal is not None and f"policy {path} cannot be read ({said})" in refusal


def test_telemetry_is_off_without_a_collector_and_content_needs_consent(policy_file):
    from copilot_nb.telemetry import TraceSettings, trace_settings

    assert trace_settings({}) is None
    on = {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}
    assert trace_settings(on) == TraceSettings(endpoint="", content=False)
    opted = {**on, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"}
    assert trace_settings(opted) == TraceSettings(endpoint="", content=True)
    policy_file({"telemetry": {"endpoint": "http://team:4318"}})
    assert trace_settings({}) == TraceSettings(endpoint="http://team:4318", content=False)
    policy_file({"telemetry": {"endpoint": "http://team:4318", "content": False}})
    assert trace_settings(opted) == TraceSettings(endpoint="http://team:4318", content=False)


async def test_a_turn_a_budget_stopped_is_traced_as_such(policy_file, serve, tmp_path, monkeypatch):
    from copilot_nb.telemetry import spans
    from tests.helpers import events_of, scripted_session
    from tests.otlp_receiver import OtlpReceiver

    policy_file(
        {
            "ledger": str(tmp_path / "ledger"),
            "budgets": [{"scope": "user", "period": "day", "tokens": 0}],
        }
    )
    server = serve([reply("never")])
    with OtlpReceiver() as receiver:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.url)
        events = await events_of(scripted_session(server, tmp_path, monkeypatch), "hi")
        spans.shutdown()
    assert isinstance(events[-1], Failed) and "Budget reached" in events[-1].error
    (agent,) = receiver.spans
    assert agent.name == "invoke_agent copilot_nb"
    assert agent.attributes["error.type"] == "BudgetExceeded" and agent.status == 2
    assert server.requests == []
