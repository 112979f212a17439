"""The chat panel's mode picker, question box and plan card in a real JupyterLab (headless
Chromium): the model asks through `ask_user` and the user's click is the next request's tool
result; a plan turn's question, revised and then approved in the panel, goes on in agent mode,
and the picker with it. A question's text is shown as text, never as HTML; a box's placeholder
reads whole, at sidebar width too; the approved plan's card has nothing to unfold."""

from __future__ import annotations

from typing import Any

import pytest

from copilot_nb.testing import call, reply
from tests.browser_lab import LONG, ask, open_notebook, shot

pytestmark = pytest.mark.browser

SNEAKY = 'Which colour? <img src=x onerror="window.__xss=1">'


def offered(request: Any) -> set[str]:
    return {tool["function"]["name"] for tool in request.body.get("tools", [])}


def placeholder_room(box: Any) -> float:
    """Pixels to spare around a text box's placeholder (below 0: it is cut)."""
    return float(
        box.evaluate(
            """el => {
              const s = getComputedStyle(el);
              const ctx = document.createElement('canvas').getContext('2d');
              ctx.font = s.font;
              const inner = el.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
              return inner - ctx.measureText(el.placeholder).width;
            }"""
        )
    )


def at_width(panel: Any, width: str) -> None:
    panel.evaluate("(el, width) => { el.style.width = width; }", width)


def test_a_question_an_approved_plan_and_the_mode_picker(page, lab, replies):
    seen: dict[str, Any] = {}

    def after_answer(request: Any) -> Any:
        seen["answer"] = list(request.tool_results.values())[-1]
        return reply("Blue it is.")

    def plan(request: Any) -> Any:
        seen["plan tools"] = offered(request)
        return reply("1. Write notes.txt\n2. Say so")

    def revised(request: Any) -> Any:
        seen["revision"] = request.body["messages"][-1]["content"]
        return reply("1. Write notes.md\n2. Say so")

    def carry_out(request: Any) -> Any:
        seen["agent tools"] = offered(request)
        seen["agent request"] = request.body["messages"][-1]["content"]
        return reply("Carried out the plan.")

    replies.queue.extend(
        [
            reply("", call("ask_user", question=SNEAKY, options=["red", "blue"])),
            after_answer,
            plan,
            revised,
            carry_out,
        ]
    )
    open_notebook(page, lab, "modes.ipynb", "import copilot_nb\ncopilot_nb.chat(sidebar=False)")
    panel = page.locator(".jp-Notebook .jp-OutputArea .cnb-root")
    panel.wait_for(timeout=LONG)
    picker = panel.locator("select.cnb-mode")
    assert picker.input_value() == "agent", "the session's mode"
    assert picker.locator("option").all_inner_texts() == ["Ask", "Plan", "Agent"]

    ask(panel, "Paint the fence")
    question = panel.locator(".cnb-approve-q")
    question.wait_for()
    assert question.inner_text() == SNEAKY
    assert panel.locator("img").count() == 0, "the question is text, no element made of it"
    assert placeholder_room(panel.locator("input.cnb-reply")) >= 0
    shot(panel, "panel-modes-1-question.png")
    panel.locator(".cnb-option-btn", has_text="blue").click()
    panel.get_by_text("Blue it is.").wait_for()
    assert seen["answer"] == "The user answered: blue"

    picker.select_option("plan")
    ask(panel, "Write some notes")
    panel.locator(".cnb-approve-q", has_text="Carry out this plan?").wait_for()
    assert "write_file" not in seen["plan tools"], "plan mode offers reading tools only"
    assert panel.inner_text().count("Write notes.txt") == 1, "the plan is shown once"
    shot(panel, "panel-modes-2-plan.png")
    shot(panel, "screenshots/plan-card.png")
    changes = panel.locator("input.cnb-reply")
    assert changes.get_attribute("placeholder") == "What to change in the plan"
    assert placeholder_room(changes) >= 0
    at_width(panel, "250px")  # the narrowest sidebar
    assert placeholder_room(changes) >= 0, "the placeholder reads whole at sidebar width"
    changes.scroll_into_view_if_needed()
    shot(panel, "screenshots/plan-card-250px.png")
    at_width(panel, "")
    changes.fill("make it notes.md")
    panel.locator(".cnb-option-btn", has_text="Revise").click()
    panel.locator(".cnb-tool-outcome", has_text="revising: make it notes.md").wait_for()
    approve = panel.locator(".cnb-approve-btn", has_text="Approve")
    approve.click()
    panel.get_by_text("Carried out the plan.").wait_for()
    assert str(seen["revision"]).endswith("make it notes.md"), "the words go back as the answer"
    assert "write_file" in seen["agent tools"], "the approved plan runs in agent mode"
    assert "1. Write notes.md" in str(seen["agent request"])
    assert panel.locator(".cnb-tool-outcome", has_text="approved").count() == 1
    assert "run this plan" not in panel.inner_text().lower()
    assert picker.input_value() == "agent", "the approved plan ran in agent mode: the picker too"
    plan_card = panel.locator(".cnb-tool:has(.cnb-tool-name:text-is('plan'))")
    plan_card.last.locator("details").evaluate("d => { d.open = true; }")  # unfolded
    assert plan_card.last.locator(".cnb-tool-body").is_hidden(), "no empty box unfolds"
    shot(panel, "screenshots/plan-card-approved.png")
    assert page.evaluate("window.__xss") is None
    assert not replies.queue
