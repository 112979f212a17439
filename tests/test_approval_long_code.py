"""An approval shows the code it asks about with nothing hidden above Approve: a short script
whole, with no box of its own to scroll; a long one its first lines and a "Show N more lines"
control that must be opened before Approve is enabled. The cell's buttons, built in-process
(ipywidgets over a recording comm), the HTML every surface shares, and the fold of the panel
(`cards.js`) and of a code block's Run dialog (`codeFold.ts`) under Node, the cell's own."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import comm
import pytest

import copilot_nb
from copilot_nb.events import ApprovalNeeded
from copilot_nb.jupyter.approval_prompt import (
    HEAD_LINES,
    CellApprover,
    approval_html,
    more_label,
    split_preview,
)
from tests.panel_front import RecordingComm
from tests.typescript_under_node import compile_module, run_cases

MATTERS = "result = df.drop(columns=['id'])"


def script(lines: int) -> str:
    """A script whose last line is the one that matters."""
    body = [f"step_{n} = load({n})" for n in range(lines - 1)]
    return "\n".join([*body, MATTERS]) + "\n"


def run_code(code: str) -> ApprovalNeeded:
    return ApprovalNeeded(
        call_id="c1",
        name="run_code",
        arguments={"code": code},
        summary=code.splitlines()[0],
        category="execute",
        decision=asyncio.get_running_loop().create_future(),
    )


@pytest.fixture(autouse=True)
def recording_comms(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(comm, "create_comm", RecordingComm)


def buttons_of(event: ApprovalNeeded) -> dict[str, Any]:
    """The cell's prompt for `event`: its HTML and buttons by description."""
    shown: list[Any] = []
    CellApprover(SimpleNamespace(), mode="widget", display=shown.append).answer(event)
    (box,) = shown
    found: dict[str, Any] = {}
    for child in box.children:
        for widget in getattr(child, "children", None) or [child]:
            name = getattr(widget, "description", "") or type(widget).__name__
            found[name] = widget
    return found


async def test_a_30_line_script_shows_whole_with_no_box_of_its_own_to_scroll():
    event = run_code(script(30))
    markup = approval_html(event)
    assert MATTERS.replace("'", "&#x27;") in markup
    assert "max-height" not in markup and "overflow" not in markup, "no scroll box above Approve"
    shown = buttons_of(event)
    assert not shown["Approve"].disabled
    assert not any(name.startswith("Show ") for name in shown)


async def test_a_long_script_enables_approve_only_once_the_rest_is_shown():
    event = run_code(script(60))
    shown = buttons_of(event)
    html, approve, more = shown["HTML"], shown["Approve"], shown["Show 20 more lines"]
    assert "step_39 = load(39)" in html.value and "step_40" not in html.value
    assert MATTERS not in html.value.replace("&#x27;", "'")
    assert approve.disabled and "Show 20 more lines" in approve.tooltip
    approve.click()  # a front end that sent the click anyway
    assert not event.decision.done(), "approving what was not shown does nothing"
    more.click()
    assert MATTERS in html.value.replace("&#x27;", "'")
    assert more.layout.display == "none" and not approve.disabled
    approve.click()
    assert await event.decision == (True, "")


def test_the_fold_is_the_same_for_every_surface():
    code = script(60)
    head, rest = split_preview(code)
    assert head.count("\n") == HEAD_LINES and head + rest == code
    assert more_label(rest) == "Show 20 more lines"
    assert more_label("one line") == "Show 1 more line"
    assert more_label("x" * 5000) == "Show 1 more line (5,000 characters)"


CARDS = Path(copilot_nb.__file__).parent / "jupyter" / "panel" / "cards.js"
CARDS_RUN = r"""
const fs = require("fs");
const vm = require("vm");
const context = vm.createContext({});
vm.runInContext(fs.readFileSync(process.argv[1], "utf8") + "\n;globalThis.api = { foldAt, moreLabel };", context);
const texts = JSON.parse(fs.readFileSync(0, "utf8"));
const out = texts.map((t) => { const [head, rest] = context.api.foldAt(t); return [head, rest, rest ? context.api.moreLabel(rest) : ""]; });
process.stdout.write(JSON.stringify(out));
"""
FOLDS = [
    "",
    "x = 1",
    script(30),
    script(40),
    script(41),
    script(60),
    script(2_000),
    "y" * 5_000,
    "z" * 2_990 + "\n" + "w" * 50 + "\n",
    "\n" * 45,
]


def python_folds() -> list[list[str]]:
    folds = []
    for text in FOLDS:
        head, rest = split_preview(text)
        folds.append([head, rest, more_label(rest) if rest else ""])
    return folds


def test_the_panel_folds_and_words_it_as_the_cell_does():
    node = shutil.which("node")
    if node is None:
        pytest.skip("needs node")
    done = subprocess.run(
        [node, "-e", CARDS_RUN, str(CARDS)],
        input=json.dumps(FOLDS),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(done.stdout) == python_folds()


def test_a_code_blocks_run_dialog_folds_and_words_it_as_the_cell_does(tmp_path: Path):
    module = compile_module("codeFold", tmp_path)
    folds = run_cases(module, [["foldAt", [text]] for text in FOLDS])
    labels = run_cases(module, [["moreLabel", [rest]] for _, rest in folds if rest])
    expected = python_folds()
    assert folds == [[head, rest] for head, rest, _ in expected]
    assert labels == [label for _, rest, label in expected if rest]
