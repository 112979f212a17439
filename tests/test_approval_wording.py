"""Approvals say what will happen, in the user's words: the code run_cell will run (not its
`cell_id`), a plan asked once as "Carry out this plan?", and each answer shown where it asked."""

from __future__ import annotations

import asyncio
from typing import Any

from copilot_nb.agent.modes.run import plan_question
from copilot_nb.events import ApprovalNeeded, CallPreview, ToolStarted, revision
from copilot_nb.jupyter.approval_prompt import approval_html, approval_text, question
from copilot_nb.jupyter.cell_view import CellRenderer
from copilot_nb.jupyter.panel.feed import event_ops, tool_op
from tests.helpers import callbacks_ran

PLAN = "1. read data.csv\n2. plot the monthly totals"
SOURCE = "df.groupby('month').sum().plot()"


def run_cell_request(preview: CallPreview | None) -> ApprovalNeeded:
    return ApprovalNeeded(
        call_id="r",
        name="run_cell",
        arguments={"cell_id": "#6"},
        summary="#6",
        category="execute",
        decision=asyncio.get_running_loop().create_future(),
        preview=preview,
    )


class Shown:
    """A display that keeps what the cell shows last, as a front end would."""

    def __init__(self) -> None:
        self.text = ""

    def __call__(self, rendered: Any, **_: Any) -> Shown:
        self.text = rendered.text
        return self

    def update(self, rendered: Any, **_: Any) -> None:
        self.text = rendered.text


async def test_run_cells_approval_shows_the_code_it_will_run_and_the_cells_number() -> None:
    request = run_cell_request(CallPreview(summary="cell 6 of 7 in a.ipynb", text=SOURCE))
    assert question(request) == "run_cell wants to run code: cell 6 of 7 in a.ipynb"
    assert SOURCE.replace("'", "&#x27;") in approval_html(request)
    assert "cell_id" not in approval_html(request) and "cell_id" not in approval_text(request)
    (op,) = event_ops(request)
    assert op == {
        "op": "ask",
        "id": "r",
        "category": "execute",
        "warning": "",
        "format": "code",
        "preview": SOURCE,
        "target": "cell 6 of 7 in a.ipynb",
    }


async def test_without_a_preview_the_arguments_are_shown_as_before() -> None:
    request = run_cell_request(None)
    assert '"cell_id": "#6"' in approval_text(request)
    assert event_ops(request) == [{"op": "ask", "id": "r", "category": "execute", "warning": ""}]


async def test_a_plan_is_asked_once_in_words_and_not_shown_again() -> None:
    request = plan_question(PLAN)
    assert question(request).startswith("Carry out this plan?")
    assert "1. read data.csv" not in approval_html(request) + approval_text(request)
    card, ask = event_ops(request)
    assert card == tool_op(request.call_id, "plan", "", "", "") and ask["op"] == "ask"


async def test_revise_is_neither_approval_nor_denial_and_carries_the_words() -> None:
    request = plan_question(PLAN)
    request.revise("use a bar chart")
    approved, reason = await request.decision
    assert not approved and revision(reason) == "use a bar chart"
    assert revision("") is None and revision("too risky") is None


async def test_the_answer_replaces_the_question_where_it_was_asked_above_the_footer() -> None:
    shown = Shown()
    view = CellRenderer(display=shown, interval=0)
    view.handle(ToolStarted(call_id="r", name="run_cell", arguments={}, summary="#6"))
    assert "⏳" not in shown.text and shown.text.startswith("… run_cell #6")
    request = run_cell_request(CallPreview(summary="cell 6 of 7 in a.ipynb", text=SOURCE))
    view.handle(request)
    assert "waiting for your approval below" in shown.text
    request.approve()
    await callbacks_ran(request.decision)
    assert shown.text == "… run_cell #6 — approved"


async def test_a_plans_outcome_replaces_its_question() -> None:
    shown = Shown()
    view = CellRenderer(display=shown, interval=0)
    view.handle(plan_question(PLAN))
    assert "Carry out this plan?" in shown.text
    request = plan_question(PLAN, 2)
    view.handle(request)
    request.approve()
    await callbacks_ran(request.decision)
    assert shown.text.endswith("✓ plan — approved") and "run this plan" not in shown.text


class Updates:
    """A display that keeps every update with its metadata, as the saved notebook gets them."""

    def __init__(self) -> None:
        self.metadata: list[Any] = []

    def __call__(self, rendered: Any, **_: Any) -> Updates:
        return self

    def update(self, rendered: Any, metadata: Any = None) -> None:
        self.metadata.append(metadata)


async def test_a_question_the_turns_end_denies_keeps_the_outputs_provenance() -> None:
    # Headless, a question nobody answered is denied when the turn ends, after the cell's last
    # update: an update for that answer would replace the output and drop its provenance.
    updates = Updates()
    view = CellRenderer(display=updates, interval=0)
    view.handle(ToolStarted(call_id="r", name="run_cell", arguments={}, summary="#6"))
    request = run_cell_request(None)
    view.handle(request)
    view.finish({"model": "m"})
    request.deny("nobody could be asked")
    await callbacks_ran(request.decision)
    assert updates.metadata[-1]["copilot_nb"]["model"] == "m"


PROFILE = (
    '"""A one-call profile of a DataFrame: per column its dtype, missing values and distinct\n'
    'values, and the number of duplicate rows."""\n'
    "\n"
    "import pandas as pd\n"
    "\n"
    "def profile(frame):\n"
    "    return pd.DataFrame({'missing': frame.isna().sum(), 'distinct': frame.nunique()})\n"
)


async def test_a_skills_script_is_asked_about_as_the_skills_script_not_by_its_docstring(
    serve, root, monkeypatch
):
    from copilot_nb.agent.approvals.policy import ApprovalPolicy
    from copilot_nb.testing import call, reply
    from copilot_nb.tools import tool
    from tests.helpers import Answering, events_of, session_in
    from tests.skill_samples import write_skill

    monkeypatch.setenv("HOME", str(root.parent / "home"))
    write_skill(
        root / ".agents" / "skills", "tidy-data", "Tidy.", "", {"scripts/profile.py": PROFILE}
    )

    @tool(name="run_code", category="execute")
    def run_code(code: str) -> str:
        """Run Python code in the kernel (a stand-in: the question is what is tested)."""
        return "ran"

    server = serve([reply("", call("run_code", code=PROFILE + "\nprofile(df)\n")), reply("ok")])
    session = session_in(root, server, monkeypatch)
    session.add_tool(run_code)
    approver = Answering(approve=False)

    events = await events_of(
        session, "profile it", approver=approver, approvals=ApprovalPolicy(execute="allow")
    )

    (asked,) = approver.asked
    assert question(asked) == (
        "run_code wants to run code: the skill's script .agents/skills/tidy-data/scripts/profile.py"
    )
    assert "A one-call profile" not in question(asked)
    assert PROFILE in approval_text(asked), "the code itself is still shown in full"
    started = next(e for e in events if isinstance(e, ToolStarted))
    assert started.summary == "import pandas as pd", "the line names code, not its docstring"
