"""An MCP server asks the user in the middle of its tool call (`elicitation/create`): the question
takes `ask_user`'s path, and the answer (or the refusal) reaches the server and its result."""

from __future__ import annotations

import pytest

from copilot_nb.events import DECLINED, ApprovalNeeded, Question
from copilot_nb.testing import call, reply
from copilot_nb.tools.mcp.elicitation import (
    USE_DEFAULTS,
    Field,
    fields_of,
    parse_answer,
    question_text,
)
from tests.helpers import behaviours, events_of, results, session_for, write_config

pytestmark = pytest.mark.external  # each test starts MCP server processes


class Replying:
    """Approves every call and answers each question with the next of `answers` (None:
    declines)."""

    def __init__(self, *answers: str | None) -> None:
        self.answers = list(answers)
        self.questions: list[Question] = []

    def answer(self, request: ApprovalNeeded) -> None:
        if not isinstance(request, Question):
            request.approve()
            return
        self.questions.append(request)
        answer = self.answers.pop(0)
        if answer is None:
            request.deny(DECLINED)
        else:
            request.reply(answer)


@pytest.fixture
def eliciting(workspace):
    write_config(workspace, b=behaviours(env={"BEHAVIOURS_ELICIT": "1"}))
    return workspace


async def test_a_servers_question_is_put_to_the_user_and_the_answer_reaches_the_server(
    serve, eliciting, monkeypatch, stop_servers
):
    server = serve([reply("", call("b__pick_city")), reply("off to Oslo")])
    session = session_for(server, eliciting, monkeypatch, stop_servers)
    approver = Replying("oslo")

    await events_of(session, "plan a trip", approver=approver)

    (asked,) = approver.questions
    assert asked.asker == "MCP server 'b'"
    assert asked.question == "Which city should the trip go to?"
    assert asked.options == ("Paris", "Oslo", "Lima")
    assert results(server.requests[1])[-1] == "accept: Oslo"
    assert session.mcp.asker is None, "between turns nobody is asked"


async def test_a_form_of_several_fields_is_one_question_and_a_misfit_is_asked_again(
    serve, eliciting, monkeypatch, stop_servers
):
    server = serve([reply("", call("b__sign_up")), reply("signed up")])
    session = session_for(server, eliciting, monkeypatch, stop_servers)
    approver = Replying("name: Ada\nage: old", '{"name": "Ada", "age": 36, "newsletter": "yes"}')

    await events_of(session, "sign me up", approver=approver)

    first, second = approver.questions
    assert "- age (integer, required)" in first.question
    assert "age must be an integer" in second.question
    assert results(server.requests[1])[-1] == "accept: Ada, 36, newsletter=True"


async def test_a_forms_defaults_are_shown_and_accepting_them_sends_every_one(
    serve, eliciting, monkeypatch, stop_servers
):
    """The MCP conformance suite's form (SEP-1034): five optional fields, each with a default."""
    server = serve(
        [
            reply("", call("b__profile")),
            reply("kept the defaults"),
            reply("", call("b__profile")),
            reply("changed the age"),
        ]
    )
    session = session_for(server, eliciting, monkeypatch, stop_servers)
    approver = Replying(USE_DEFAULTS, "age: 41")

    await events_of(session, "fill in my profile", approver=approver)
    await events_of(session, "again, older", approver=approver)

    asked = approver.questions[0]
    assert USE_DEFAULTS in asked.options
    for shown in [
        "- name (string, optional, default John Doe)",
        "- age (integer, optional, default 30)",
        "- score (number, optional, default 95.5)",
        "- status (one of active, inactive, pending, optional, default active)",
        "- verified (boolean, optional, default yes)",
    ]:
        assert shown in asked.question
    defaults = '"age": 30, "name": "John Doe", "score": 95.5, "status": "active", "verified": true'
    assert results(server.requests[1])[-1] == f"accept: {{{defaults}}}"
    assert results(server.requests[3])[-1] == "accept: " + (
        '{"age": 41, "name": "John Doe", "score": 95.5, "status": "active", "verified": true}'
    )


async def test_a_decline_is_declined_and_nobody_to_ask_is_a_cancel(
    serve, eliciting, monkeypatch, stop_servers
):
    server = serve(
        [
            reply("", call("b__pick_city")),
            reply("no trip"),
            reply("", call("b__pick_city")),
            reply("still no trip"),
        ]
    )
    session = session_for(server, eliciting, monkeypatch, stop_servers)

    await events_of(session, "plan a trip", approver=Replying(None))
    assert results(server.requests[1])[-1] == "decline"

    allowed = session.approvals.approve_changes()  # the call runs; its question cannot be asked
    events = await events_of(session, "plan a trip", approver=None, approvals=allowed)
    assert results(server.requests[3])[-1] == "cancel"
    assert any(isinstance(e, Question) for e in events), "shown, then refused as headless"


def test_fields_of_a_schema_and_answers_that_fit_them():
    schema = {
        "type": "object",
        "properties": {
            "colour": {"type": "string", "enum": ["red", "blue"]},
            "count": {"type": "integer", "title": "How many"},
            "ok": {"type": "boolean"},
            "ratio": {"type": "number"},
        },
        "required": ["colour", "count"],
    }
    fields = fields_of(schema)
    assert [f.name for f in fields] == ["colour", "count", "ok", "ratio"]
    assert fields[0].choices == ("red", "blue") and fields[1].title == "How many"
    text, options = question_text("s", "Pick", fields)
    assert options == () and "- count (integer, required): How many" in text
    assert parse_answer(fields, "colour: Blue\ncount: 3\nok: no\nratio: 0.5") == {
        "colour": "blue",
        "count": 3,
        "ok": False,
        "ratio": 0.5,
    }
    assert parse_answer(fields, '{"colour": "red", "count": 2}') == {"colour": "red", "count": 2}
    for bad, why in [
        ("colour: green\ncount: 1", "colour must be one of red, blue"),
        ("colour: red", "count is required"),
        ("colour: red\ncount: 1\nok: maybe", "ok must be yes or no"),
        ("just words", "field: value"),
    ]:
        with pytest.raises(ValueError, match=why):
            parse_answer(fields, bad)
    one = [Field(name="ok", kind="boolean", required=True)]
    assert question_text("s", "Sure?", one) == ("Sure?", ("yes", "no"))
    assert parse_answer(one, "Yes") == {"ok": True}
    assert question_text("s", "", []) == ("MCP server 's' asks for input", ("OK",))


def test_defaults_fill_what_the_answer_leaves_out_and_one_that_does_not_fit_is_dropped():
    schema = {
        "type": "object",
        "properties": {
            "colour": {"type": "string", "enum": ["red", "blue"], "default": "blue"},
            "count": {"type": "integer", "default": 2},
            "note": {"type": "string"},
            "size": {"type": "integer", "default": "large"},  # not an integer: no default
            "ok": {"type": "boolean", "default": False},
        },
        "required": ["colour", "count", "size"],
    }
    fields = fields_of(schema)
    assert [f.default for f in fields] == ["blue", 2, None, None, False]
    text, options = question_text("s", "Set up", fields)
    assert "- colour (one of red, blue, required, default blue)" in text
    assert "- ok (boolean, optional, default no)" in text
    assert "left out takes its default" in text
    assert options == (), "size has no default, so the defaults alone are no answer"
    assert parse_answer(fields, "size: 3") == {"colour": "blue", "count": 2, "size": 3, "ok": False}
    assert parse_answer(fields, '{"size": 3, "count": ""}')["count"] == 2
    with pytest.raises(ValueError, match="size is required"):
        parse_answer(fields, USE_DEFAULTS)

    complete = [f for f in fields if f.name != "size"]
    assert question_text("s", "Set up", complete)[1] == (USE_DEFAULTS,)
    assert parse_answer(complete, USE_DEFAULTS) == {"colour": "blue", "count": 2, "ok": False}
    assert parse_answer(complete, "") == {"colour": "blue", "count": 2, "ok": False}


def test_a_single_fields_default_is_named_and_offered():
    (city,) = fields_of(
        {"properties": {"city": {"type": "string", "default": "Oslo"}}, "required": ["city"]}
    )
    assert question_text("s", "Where to?", [city]) == ("Where to?\n\nDefault: Oslo", ("Oslo",))
    assert parse_answer([city], "") == {"city": "Oslo"}
    assert parse_answer([city], "Lima") == {"city": "Lima"}

    (pick,) = fields_of({"properties": {"c": {"enum": ["a", "b"], "default": "b"}}})
    assert question_text("s", "Which?", [pick]) == ("Which?\n\nDefault: b", ("a", "b"))
    (sure,) = fields_of({"properties": {"ok": {"type": "boolean", "default": True}}})
    assert question_text("s", "Sure?", [sure]) == ("Sure?\n\nDefault: yes", ("yes", "no"))
