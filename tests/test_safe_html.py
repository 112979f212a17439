"""Model-controlled text is data, never markup: every payload of the XSS corpus through every
renderer of every surface (cell output, `%copilot` reports, approval prompts, model lists) yields
HTML with nothing that runs or loads by itself, checked by parsing it (tests/html_safety.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest

from copilot_nb.agent.loop.rounds import Agent
from copilot_nb.events import (
    ApprovalNeeded,
    CellChanged,
    Failed,
    FileChanged,
    Notice,
    ReasoningDelta,
    TextDelta,
    ToolFinished,
    ToolStarted,
)
from copilot_nb.jupyter.approval_prompt import (
    approval_html,
    approval_text,
    more_label,
    split_preview,
)
from copilot_nb.jupyter.cell_view import CellRenderer
from copilot_nb.jupyter.commands.dispatch import render_tools
from copilot_nb.jupyter.commands.login import copilot_table, model_list
from copilot_nb.jupyter.reports import render_diff, render_history, render_undo
from copilot_nb.jupyter.safe_html import inline_html, link_html, markdown_html, safe_url
from copilot_nb.messages import AssistantMessage, ToolCall, ToolResult, UserMessage
from copilot_nb.models.copilot.chat import CopilotModelInfo
from copilot_nb.testing import ScriptedModel
from copilot_nb.workspace.restore import RestoredPath
from tests.html_safety import payloads, table_rows, violations

PAYLOADS = payloads()
IDS = [p["id"] for p in PAYLOADS]


def transcript(*events: object, notice: str = "") -> str:
    shown: list[object] = []
    handle = SimpleNamespace(update=shown.append)
    renderer = CellRenderer(display=lambda obj, display_id: handle, interval=0)
    if notice:
        renderer.notice(notice)
    for event in events:
        renderer.handle(event)  # type: ignore[arg-type]
    renderer.flush()
    return renderer.transcript.rendered().html


def file_diff(text: str, name: str = "notes.md") -> str:
    lines = text.split("\n")
    return f"--- a/{name}\n+++ b/{name}\n@@ -1 +1,{len(lines)} @@\n-old\n" + "".join(
        f"+{line}\n" for line in lines
    )


def asking(name: str, summary: str, arguments: object, category: str = "edit") -> ApprovalNeeded:
    loop = asyncio.new_event_loop()
    try:
        return ApprovalNeeded(
            call_id="c1",
            name=name,
            arguments=arguments,
            summary=summary,
            category=category,
            decision=loop.create_future(),
        )
    finally:
        loop.close()


def history(payload: str, tmp_path: Path) -> str:
    agent = Agent(model=ScriptedModel(name=payload), workspace=tmp_path)
    call = ToolCall(id="t1", name="read_file", arguments={"path": payload})
    agent.messages += [
        UserMessage(content=payload),
        AssistantMessage(text=payload, tool_calls=(call,)),
        ToolResult(tool_call_id="t1", name="read_file", content=payload, is_error=True),
        AssistantMessage(text=payload[::-1]),
    ]
    return render_history(agent).html


SURFACES: dict[str, Callable[[str, Path], str]] = {
    "answer": lambda p, _: transcript(TextDelta(text=f"Here you go:\n\n{p}\n\nand more")),
    "answer-inline": lambda p, _: transcript(TextDelta(text=f"see {p} here")),
    "tool-name": lambda p, _: transcript(
        ToolStarted(call_id="1", name=p, arguments={}, summary="x")
    ),
    "tool-target": lambda p, _: transcript(
        ToolStarted(call_id="1", name="read_file", arguments={"path": p}, summary=p)
    ),
    "tool-outcome": lambda p, _: transcript(
        ToolStarted(call_id="1", name="search_text", arguments={"regex": p}, summary=p),
        ToolFinished(call_id="1", name="search_text", ok=False, summary=p, content=p),
    ),
    "run-output": lambda p, _: transcript(
        ToolStarted(call_id="1", name="run_code", arguments={"code": p}, summary=p),
        ToolFinished(
            call_id="1",
            name="run_code",
            ok=True,
            summary=p,
            content=p,
            outputs=(
                {"output_type": "stream", "name": "stdout", "text": p},
                {"output_type": "display_data", "data": {"text/html": p, "text/plain": p}},
                {"output_type": "display_data", "data": {"text/markdown": p}},
                {"output_type": "error", "ename": p, "evalue": p, "traceback": [p]},
            ),
        ),
    ),
    "error": lambda p, _: transcript(Failed(error=p)),
    "file-diff": lambda p, _: transcript(
        ToolStarted(call_id="1", name="write_file", arguments={}, summary="notes.md"),
        FileChanged(path=p, diff=file_diff(p)),
        ToolFinished(call_id="1", name="write_file", ok=True, summary=p, content=""),
    ),
    "cell-diff": lambda p, _: transcript(
        ToolStarted(call_id="1", name="edit_cell", arguments={}, summary="nb.ipynb"),
        CellChanged(notebook=p, cell_id=p, change="edited", diff=file_diff(p, "nb.ipynb")),
    ),
    "reasoning": lambda p, _: transcript(ReasoningDelta(text=p)),
    "notice": lambda p, _: transcript(Notice(text=p)),
    "footer-note": lambda p, _: transcript(TextDelta(text="ok"), notice=p),
    "history": history,
    "diff-report": lambda p, _: render_diff(file_diff(p, name=p), label=p).html,
    "undo-report": lambda p, _: (
        render_undo([RestoredPath(path=p, action="not restored", detail=p, turn=p)]).html
    ),
    "tools-table": lambda p, _: (
        render_tools(
            [SimpleNamespace(name=p, category="read", description=f"{p}\nmore")]  # type: ignore[list-item]
        ).html
    ),
    "approval-content": lambda p, _: approval_html(
        asking("write_file", p, {"path": p, "content": f"{p}\n" * 50})
    ),
    "approval-edit": lambda p, _: approval_html(
        asking("edit_file", p, {"path": "Makefile", "old_str": p, "new_str": p})
    ),
    "approval-arguments": lambda p, _: approval_html(
        asking(p, p, {"path": p, p: [p]}, category="read-secret")
    ),
    "copilot-models": lambda p, _: copilot_table(
        [CopilotModelInfo(id=p, name=p, vendor=p, tool_calls=True)]
    )["text/html"],
    "openai-models": lambda p, _: model_list(p, p, [p])["text/html"],
    "inline-markdown": lambda p, _: inline_html(p),
}


@pytest.mark.parametrize("surface", SURFACES)
@pytest.mark.parametrize("payload", PAYLOADS, ids=IDS)
def test_no_payload_becomes_live_html_on_any_surface(surface, payload, tmp_path):
    markup = SURFACES[surface](payload["payload"], tmp_path)
    assert markup.strip()
    assert violations(markup) == [], f"{payload['id']} on {surface}:\n{markup}"


def test_the_checks_catch_what_an_unsafe_renderer_lets_through():
    """The checker bites: Markdown with raw HTML on and every link allowed fails it widely."""
    from markdown_it import MarkdownIt

    unsafe = MarkdownIt("commonmark", {"html": True}).enable("table")
    unsafe.validateLink = lambda url: True
    caught = [p["id"] for p in PAYLOADS if violations(unsafe.render(p["payload"]))]
    assert len(caught) >= 50, set(IDS) - set(caught)
    assert len(PAYLOADS) >= 40


def test_model_markdown_keeps_its_formatting_and_safe_links():
    markup = markdown_html(
        "**bold** and `code`\n\n- one\n- two\n\n```python\nprint('<hi>')\n```\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n"
        "[docs](https://example.org/a?b=1&c=2) [mail](mailto:a@example.org) [here](#top) "
        "[file](docs/a.md)"
    )
    assert "<strong>bold</strong>" in markup and "<code>code</code>" in markup
    assert "<li>one</li>" in markup and "&lt;hi&gt;" in markup
    assert table_rows(markup) == [["a", "b"], ["1", "2"]]
    assert '<a href="https://example.org/a?b=1&amp;c=2" target="_blank"' in markup
    assert '<a href="mailto:a@example.org"' in markup
    assert '<a href="#top">here</a>' in markup and '<a href="docs/a.md">file</a>' in markup


def test_images_become_links_that_load_nothing():
    markup = markdown_html("![chart](https://example.org/c.png?q=secret)")
    assert "<img" not in markup
    assert '<a href="https://example.org/c.png?q=secret"' in markup and "🖼 chart" in markup


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        "&#106;avascript:alert(1)",
        "java\tscript:alert(1)",
        " \x01javascript:alert(1)",
        "java\u200bscript:x",
        "javascript%3Ax",
        "data:text/html,x",
        "vbscript:x",
        "file:///etc/passwd",
    ],
)
def test_unsafe_link_targets_are_refused(url):
    assert not safe_url(url)


@pytest.mark.parametrize(
    "url", ["https://a.org", "http://a.org/x", "mailto:a@b.org", "#x", "a/b.md", "/files/x", ""]
)
def test_safe_link_targets_are_kept(url):
    assert safe_url(url)


def test_a_fence_breakout_in_a_diff_stays_inside_the_diff():
    breakout = "```\n</code></pre><b>bold</b>\n````````\n~~~"
    for markup in (
        transcript(
            ToolStarted(call_id="1", name="write_file", arguments={}, summary="x.md"),
            FileChanged(path="x.md", diff=file_diff(breakout)),
        ),
        render_diff(file_diff(breakout)).html,
    ):
        assert "<b>" not in markup and "+&lt;/code&gt;&lt;/pre&gt;&lt;b&gt;bold" in markup
        assert markup.count("<pre>") == markup.count("</pre>") == 1


def test_the_approval_prompt_shows_all_of_a_long_body():
    body = "".join(f"line {n}: {'x' * 40}\n" for n in range(250))  # about 12,000 characters
    event = asking("write_file", "big.py", {"path": "big.py", "content": body})
    head, rest = split_preview(body)
    assert head + rest == body and head.count("\n") == 40
    markup = approval_html(event)
    assert "line 249: " in markup, "all of it, once the rest is shown"
    folded = approval_html(event, folded=True)
    assert "line 39: " in folded and "line 40: " not in folded
    assert more_label(rest) == "Show 210 more lines"
    assert approval_text(event).endswith("line 249: " + "x" * 40)


def test_the_approval_prompt_names_the_action_and_files_that_run_code_later():
    make = asking("write_file", "Makefile", {"path": "./Makefile", "content": "all:\n\ttrue\n"})
    assert "write_file wants to change files: Makefile" in approval_html(make)
    assert "Makefile runs code later: make runs its recipes" in approval_html(make)
    plain = asking("write_file", "a.py", {"path": "a.py", "content": "x = 1\n"})
    assert "runs code later" not in approval_html(plain)
    secret = asking("read_file", ".env", {"path": ".env"}, category="read-secret")
    assert (
        "read_file wants to read a secret (a credential file or a masked variable): .env"
        in approval_html(secret)
    )
    code = asking("run_code", "print(1)", {"code": "print(1)"}, category="execute")
    assert "wants to run code" in approval_text(code)


def test_a_link_we_build_to_an_unsafe_target_is_only_text():
    assert link_html("javascript:alert(1)", "<sign in>") == "&lt;sign in&gt;"
    assert link_html("https://github.com/login/device", "go") == (
        '<a href="https://github.com/login/device" target="_blank" '
        'rel="noopener noreferrer nofollow">go</a>'
    )


async def test_without_widgets_the_prompt_prints_everything_then_asks():
    from copilot_nb.jupyter.approval_prompt import CellApprover

    body = "".join(f"line {n}\n" for n in range(500))
    shown: list[str] = []
    asked: list[str] = []
    approver = CellApprover(
        SimpleNamespace(), mode="input", ask=lambda q: asked.append(q) or "y", show=shown.append
    )
    event = ApprovalNeeded(
        call_id="c1",
        name="write_file",
        arguments={"path": "setup.py", "content": body},
        summary="setup.py",
        category="edit",
        decision=asyncio.get_running_loop().create_future(),
    )
    approver.answer(event)
    (text,) = shown
    assert text.startswith("copilot: write_file wants to change files: setup.py\n⚠ setup.py runs")
    assert text.endswith("line 499")
    assert asked == ["write_file wants to change files: setup.py. Allow? [y/N] "]
    assert await event.decision == (True, "")


def test_a_markdown_table_reads_left_aligned_unless_its_columns_say_otherwise():
    """JupyterLab's output styles right-align table cells; the model's table reads as the
    panel shows it, and a column the Markdown aligns keeps its alignment."""
    markup = markdown_html("| name | n |\n|---|--:|\n| alpha | 1 |\n| beta | 22 |\n")
    assert '<th style="text-align:left">name</th>' in markup
    assert '<td style="text-align:left">alpha</td>' in markup
    assert '<th style="text-align:right">n</th>' in markup
    assert '<td style="text-align:right">22</td>' in markup
