"""Modes the user controls (ask, plan, agent) and `ask_user`, through the session's one turn."""

from __future__ import annotations

from types import SimpleNamespace

from copilot_nb.agent.session import CopilotSession
from copilot_nb.events import ApprovalNeeded, Done, Question, ToolFinished
from copilot_nb.testing import call, reply


class Answering:
    """An approver that approves plans, answers questions, and records what it was asked."""

    def __init__(self, *, approve: bool = True, answer: str | None = "the small one") -> None:
        self.approve = approve
        self.answer_text = answer
        self.asked: list[ApprovalNeeded] = []

    def answer(self, request: ApprovalNeeded) -> None:
        self.asked.append(request)
        if isinstance(request, Question):
            if self.answer_text is None:
                request.deny("nobody can answer questions here")
            else:
                request.reply(self.answer_text)
        elif self.approve:
            request.approve()
        else:
            request.deny()


def scripted_session(server, tmp_path, monkeypatch) -> CopilotSession:
    monkeypatch.chdir(tmp_path)
    session = CopilotSession(SimpleNamespace(user_ns={}), resolve=lambda s: server.model())
    session.toolset_factories = session.toolset_factories[:1]  # files only: no kernel here
    return session


async def events_of(session: CopilotSession, prompt: str, approver, **options) -> list:
    return [event async for event in session.turn(prompt, approver=approver, **options)]


def offered(request) -> list[str]:
    return [t["function"]["name"] for t in request.body.get("tools", [])]


def system(request) -> str:
    return request.body["messages"][0]["content"]


async def test_ask_mode_offers_only_reading_tools_and_says_so(serve, tmp_path, monkeypatch):
    server = serve([reply("utils.py defines two functions")])
    session = scripted_session(server, tmp_path, monkeypatch)
    events = await events_of(session, "what is in utils.py?", Answering(), mode="ask")
    tools = offered(server.requests[0])
    assert "read_file" in tools and "ask_user" in tools
    assert not {"write_file", "edit_file", "delete_path", "move_path", "delegate"} & set(tools)
    assert "Mode: ask" in system(server.requests[0])
    assert isinstance(events[-1], Done)


async def test_a_write_called_in_ask_mode_is_an_unknown_tool(serve, tmp_path, monkeypatch):
    server = serve(
        [reply("", call("write_file", id="w", path="a.txt", content="x")), reply("sorry")]
    )
    session = scripted_session(server, tmp_path, monkeypatch)
    events = await events_of(session, "write a", Answering(), mode="ask")
    finished = [e for e in events if isinstance(e, ToolFinished)]
    assert finished and not finished[0].ok and not (tmp_path / "a.txt").exists()


async def test_an_approved_plan_runs_in_agent_mode_with_the_plan(serve, tmp_path, monkeypatch):
    plan = "1. write a.txt\n2. check it"
    server = serve(
        [
            reply(plan),
            reply("", call("write_file", id="w", path="a.txt", content="a\n")),
            reply("done: a.txt written"),
        ]
    )
    session = scripted_session(server, tmp_path, monkeypatch)
    session.approvals = session.approvals.approve_changes()
    approver = Answering(approve=True)
    events = await events_of(session, "make a.txt", approver, mode="plan")
    first, then = server.requests[0], server.requests[1]
    assert "Mode: plan" in system(first) and "write_file" not in offered(first)
    assert "Mode: plan" not in system(then) and "write_file" in offered(then)
    assert plan in then.body["messages"][-1]["content"]
    assert [r.category for r in approver.asked] == ["plan"]
    assert (tmp_path / "a.txt").read_text() == "a\n"
    assert isinstance(events[-1], Done) and events[-1].text == "done: a.txt written"
    assert [e for e in events if isinstance(e, Done)] == [events[-1]], "one Done per turn"


async def test_a_plan_not_approved_ends_with_the_plan(serve, tmp_path, monkeypatch):
    server = serve([reply("1. write a.txt")])
    session = scripted_session(server, tmp_path, monkeypatch)
    events = await events_of(session, "make a.txt", Answering(approve=False), mode="plan")
    assert isinstance(events[-1], Done) and events[-1].text == "1. write a.txt"
    assert len(server.requests) == 1 and not (tmp_path / "a.txt").exists()
    assert not session.busy


async def test_the_sessions_mode_is_the_default_and_a_turns_mode_wins(serve, tmp_path, monkeypatch):
    server = serve([reply("answer"), reply("work")])
    session = scripted_session(server, tmp_path, monkeypatch)
    session.mode = "ask"
    await events_of(session, "q", Answering())
    await events_of(session, "do", Answering(), mode="agent")
    assert "write_file" not in offered(server.requests[0])
    assert "write_file" in offered(server.requests[1])


async def test_ask_user_asks_and_the_model_reads_the_answer(serve, tmp_path, monkeypatch):
    server = serve(
        [
            reply("", call("ask_user", id="q", question="Which model?", options=["small", "big"])),
            reply("using the small one"),
        ]
    )
    session = scripted_session(server, tmp_path, monkeypatch)
    approver = Answering(answer="small")
    await events_of(session, "fit a model", approver)
    (question,) = approver.asked
    assert isinstance(question, Question) and question.options == ("small", "big")
    result = server.requests[1].body["messages"][-1]
    assert result["role"] == "tool" and result["content"] == "The user answered: small"


async def test_ask_user_where_nobody_can_answer_tells_the_model_to_decide(
    serve, tmp_path, monkeypatch
):
    server = serve([reply("", call("ask_user", id="q", question="Which?")), reply("assumed")])
    session = scripted_session(server, tmp_path, monkeypatch)
    await events_of(session, "do it", Answering(answer=None))
    result = server.requests[1].body["messages"][-1]["content"]
    assert "did not answer" in result and "Decide yourself" in result


class Revising(Answering):
    """Revises the first plan with its words, then approves the next."""

    def __init__(self, words: str) -> None:
        super().__init__(approve=True)
        self.words = words

    def answer(self, request: ApprovalNeeded) -> None:
        self.asked.append(request)
        if len(self.asked) == 1:
            request.revise(self.words)
        else:
            request.approve()


async def test_a_revised_plan_goes_back_to_the_model_which_plans_again(
    serve, tmp_path, monkeypatch
):
    server = serve(
        [
            reply("1. write a.txt"),
            reply("1. write b.txt"),
            reply("", call("write_file", id="w", path="b.txt", content="b\n")),
            reply("done: b.txt written"),
        ]
    )
    session = scripted_session(server, tmp_path, monkeypatch)
    session.approvals = session.approvals.approve_changes()
    approver = Revising("call it b.txt instead")
    events = await events_of(session, "make a file", approver, mode="plan")
    again = server.requests[1]
    assert "Mode: plan" in system(again) and "write_file" not in offered(again)
    asked = [m["content"] for m in again.body["messages"] if m["role"] == "user"]
    assert asked[-1].endswith("call it b.txt instead")
    assert "1. write a.txt" in str(again.body["messages"]), "the first plan is in the history"
    assert [r.call_id for r in approver.asked] == ["plan-1", "plan-2"]
    assert "1. write b.txt" in server.requests[2].body["messages"][-1]["content"]
    assert (tmp_path / "b.txt").read_text() == "b\n" and not (tmp_path / "a.txt").exists()
    assert [e for e in events if isinstance(e, Done)] == [events[-1]]


async def test_an_approved_plans_changes_are_titled_with_the_users_request(
    serve, tmp_path, monkeypatch
):
    from copilot_nb.jupyter.reports import render_diff

    server = serve(
        [
            reply("1. write a.txt"),
            reply("", call("write_file", id="w", path="a.txt", content="a\n")),
            reply("done"),
        ]
    )
    session = scripted_session(server, tmp_path, monkeypatch)
    session.approvals = session.approvals.approve_changes()
    await events_of(session, "make a.txt", Answering(approve=True), mode="plan")

    label, diff = session.workspace().checkpoints.last_diff()
    shown = render_diff(diff, label=label).text
    assert shown.startswith("Changes of the turn “make a.txt”:"), shown.splitlines()[0]
    assert "approved your plan" not in shown and "+++ b/a.txt" in shown
