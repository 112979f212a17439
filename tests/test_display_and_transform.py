"""Pure parts of the surfaces: the cell transformer, the throttled renderer, the public surface."""

from __future__ import annotations

import ast

import copilot_nb
from copilot_nb.events import (
    Done,
    Failed,
    FileChanged,
    Notice,
    ReasoningDelta,
    TextDelta,
    ToolFinished,
    ToolStarted,
    UsageReported,
)
from copilot_nb.jupyter.cell_transform import transform_copilot_cell
from copilot_nb.jupyter.cell_view import GROWTH, STALE, STALE_PACE, CellRenderer
from copilot_nb.jupyter.safe_html import DIFF_STYLES
from copilot_nb.messages import Usage


class FakeHandle:
    """Stands in for a DisplayHandle: records what each update would show (HTML and text)."""

    def __init__(self) -> None:
        self.shown: list[str] = []
        self.html: list[str] = []

    def update(self, obj: object) -> None:
        bundle = obj._repr_mimebundle_()  # type: ignore[attr-defined]
        assert set(bundle) == {"text/html", "text/plain"}, "never Markdown: it may carry raw HTML"
        self.shown.append(bundle["text/plain"])
        self.html.append(bundle["text/html"])


def make_renderer(interval: float = 0.25):
    now = [0.0]
    handle = FakeHandle()
    renderer = CellRenderer(
        display=lambda obj, display_id: handle, interval=interval, clock=lambda: now[0]
    )
    return renderer, handle, now


def test_a_copilot_cell_becomes_an_awaited_coroutine_call():
    lines = ["%%copilot --new\n", "Change \"a\" to 'b'\n", "and {braces} too\n"]
    (code,) = transform_copilot_cell(lines)
    tree = ast.parse(code)
    assert isinstance(tree.body[0].value, ast.Await)  # type: ignore[attr-defined]
    call = tree.body[0].value.value  # type: ignore[attr-defined]
    assert [ast.literal_eval(a) for a in call.args] == [
        "--new",
        "Change \"a\" to 'b'\nand {braces} too\n",
    ]


def test_other_cells_and_help_are_left_alone():
    for lines in (["print(1)\n"], ["%%copilotx\n", "x\n"], ["%%copilot?\n"], []):
        assert transform_copilot_cell(list(lines)) == list(lines)


def test_streaming_is_throttled_and_the_final_flush_is_complete():
    renderer, handle, now = make_renderer()
    for index in range(1000):
        now[0] = index * 0.001  # 1000 deltas in one second
        renderer.handle(TextDelta(text="x"))
    renderer.handle(Done(text="x" * 1000))
    renderer.flush()
    assert 3 <= len(handle.shown) <= 6
    assert handle.shown[-1] == "x" * 1000
    assert handle.html[-1] == f"<p>{'x' * 1000}</p>\n"


def test_the_first_words_show_at_once():
    renderer, handle, now = make_renderer()
    now[0] = 0.001  # the model's first words, a moment after the cell started
    renderer.handle(TextDelta(text="Hello"))
    assert handle.shown[-1] == "Hello"


def test_updates_thin_out_as_the_answer_grows_so_bytes_stay_a_multiple_of_it():
    """40,000 characters over ten seconds: each update resends the whole answer, so updates
    four times a second would send 820,000; here they come as it grows by an eighth."""
    renderer, handle, now = make_renderer()
    for index in range(10_000):
        now[0] = index * 0.001
        renderer.handle(TextDelta(text="abc "))
    renderer.handle(Done(text=""))
    renderer.flush()
    assert handle.shown[-1] == "abc " * 10_000
    sent = sum(len(text) for text in handle.shown)
    assert sent <= (GROWTH + 2) * 40_000, sent
    assert len(handle.shown) >= 10, "still updates as it grows"


def test_a_slow_answer_still_shows_its_new_words_every_few_seconds():
    renderer, handle, now = make_renderer()
    renderer.handle(TextDelta(text="x" * 10_000))  # a long answer so far, shown at once
    for second in range(1, 11):  # then one word a second
        now[0] = float(second)
        renderer.handle(TextDelta(text=" word"))
    wait = int(STALE + 10_000 / STALE_PACE)  # seconds, for an answer of 10,000 characters
    assert wait < 10 and len(handle.shown) - 1 == 1, "the new words after a few seconds"
    assert handle.shown[-1].endswith("x" + " word" * wait)


def _bytes_at_a_slow_pace(tokens: int) -> int:
    renderer, handle, now = make_renderer()
    for index in range(tokens):  # 50 tokens of 4 characters a second
        now[0] = index / 50
        renderer.handle(TextDelta(text="abc "))
    return sum(len(text) for text in handle.shown)


def test_a_slow_answer_twice_as_long_costs_about_twice_the_bytes_not_four_times():
    short, long = _bytes_at_a_slow_pace(5_000), _bytes_at_a_slow_pace(10_000)
    assert long < 2.3 * short, (short, long)  # n log n: squares would make it 4x


def test_a_retry_notice_shows_while_it_waits_and_takes_the_broken_attempt_with_it():
    renderer, handle, _ = make_renderer(interval=0)
    renderer.handle(ToolStarted(call_id="1", name="read_file", arguments={}, summary="a.py"))
    renderer.handle(
        ToolFinished(call_id="1", name="read_file", ok=True, summary="1 line", content="x")
    )
    renderer.handle(ReasoningDelta(text="hmm"))
    renderer.handle(TextDelta(text="The answ"))
    renderer.handle(Notice(text="the stream broke — asking again", retry=True))
    assert handle.shown[-1] == "✓ read_file a.py — 1 line\n\n⚠ the stream broke — asking again"
    renderer.handle(Notice(text="HTTP 429 — retrying in 0.5 s (1/2)", retry=True))
    assert "asking again" not in handle.shown[-1] and "429" in handle.shown[-1]
    renderer.handle(TextDelta(text="The answer."))
    renderer.handle(Notice(text="compacted the conversation"))  # not a retry: it stays
    renderer.handle(Done(text="The answer."))
    renderer.flush()
    assert handle.shown[-1] == (
        "✓ read_file a.py — 1 line\n\nThe answer.\n\n⚠ compacted the conversation"
    )


def test_tool_calls_show_as_one_line_each_with_their_diff():
    renderer, handle, _ = make_renderer(interval=0)
    renderer.handle(ReasoningDelta(text="thinking about it"))
    renderer.handle(TextDelta(text="Editing."))
    renderer.handle(ToolStarted(call_id="1", name="edit_file", arguments={}, summary="a.py"))
    renderer.handle(FileChanged(path="a.py", diff="-old\n+new\n"))
    renderer.handle(
        ToolFinished(call_id="1", name="edit_file", ok=True, summary="a.py +1 −1", content="")
    )
    renderer.handle(ToolStarted(call_id="2", name="read_file", arguments={}, summary="b.py"))
    renderer.handle(
        ToolFinished(call_id="2", name="read_file", ok=False, summary="no such file", content="")
    )
    renderer.handle(UsageReported(usage=Usage(input_tokens=1200, output_tokens=34)))
    renderer.handle(Failed(error="model unavailable"))
    html = handle.html[-1]
    assert "<details><summary>Thinking</summary><p>thinking about it</p>" in html
    assert "<div>✓ <strong>edit_file</strong> <code>a.py</code> — a.py +1 −1</div>" in html
    removed, added = (f'<span style="{DIFF_STYLES[kind]}">' for kind in ("del", "add"))
    assert (
        f"<details><summary>diff</summary><pre><code>{removed}-old</span>\n{added}+new</span>"
        "</code></pre></details>"
    ) in html
    assert "<div>✗ <strong>read_file</strong> <code>b.py</code> — no such file</div>" in html
    assert html.endswith("<strong>Error:</strong> model unavailable</p>")
    text = handle.shown[-1]
    assert "✓ edit_file a.py — a.py +1 −1\n\n-old\n+new" in text
    assert "✗ read_file b.py — no such file" in text
    assert text.endswith("Error: model unavailable")


def test_model_html_in_the_answer_is_shown_as_text():
    renderer, handle, _ = make_renderer(interval=0)
    renderer.handle(TextDelta(text='Look: <img src=x onerror="alert(1)"> **bold**'))
    renderer.handle(Done(text=""))
    renderer.flush()
    assert handle.html[-1] == (
        "<p>Look: &lt;img src=x onerror=&quot;alert(1)&quot;&gt; <strong>bold</strong></p>\n"
    )


def test_public_names_are_pinned():
    assert copilot_nb.__all__ == sorted(copilot_nb.__all__)
    assert set(copilot_nb.__all__) == {
        "Agent",
        "AgentError",
        "AnthropicChat",
        "ApprovalPolicy",
        "AssistantMessage",
        "AuthError",
        "ConfigError",
        "ContextBudgetError",
        "ContextLengthError",
        "CopilotChat",
        "CopilotError",
        "ModelConnectionError",
        "ModelError",
        "ModelHTTPError",
        "OpenAIChat",
        "OpenAIResponses",
        "RunSettings",
        "SandboxError",
        "ScriptError",
        "StreamError",
        "Tool",
        "ToolCall",
        "ToolError",
        "ToolOutput",
        "ToolResult",
        "ToolSet",
        "ToolSpec",
        "Usage",
        "Workspace",
        "chat",
        "load_ipython_extension",
        "resolve_model",
        "tool",
        "unload_ipython_extension",
    }
    for name in copilot_nb.__all__:
        assert getattr(copilot_nb, name) is not None


LOAD_EXT_PROBE = """
import json, sys, threading
from IPython.core.interactiveshell import InteractiveShell

shell = InteractiveShell.instance()
loaded = []


def heard(event, args):
    if event == "import" and threading.current_thread() is threading.main_thread():
        loaded.append(args[0])


sys.addaudithook(heard)
shell.run_line_magic("load_ext", "copilot_nb")
on_load = sorted(set(loaded))
from copilot_nb.jupyter.extension import WARM_UP

for thread in threading.enumerate():
    if thread.name == WARM_UP:
        thread.join()
print(json.dumps({"on_load": on_load, "warmed": sorted(sys.modules)}))
"""
"""`%load_ext copilot_nb` in a fresh shell: the modules the kernel's own thread imported while
it ran, then every module once the warm-up thread is done."""


def test_load_ext_leaves_the_agent_to_the_warm_up_thread(tmp_path):
    """`%load_ext` must stay fast: the agent, its tools and httpx load in the warm-up thread
    while the user types, SDKs, data libraries and schema validators on first use."""
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "COPILOT_NB_CONFIG_DIR": str(tmp_path), "COPILOT_NB_MODEL": "offline"}
    shown = subprocess.check_output(
        [sys.executable, "-c", LOAD_EXT_PROBE], text=True, cwd=tmp_path, env=env
    )
    modules = json.loads(shown.splitlines()[-1])
    on_load = set(modules["on_load"])
    assert "copilot_nb.jupyter.extension" in on_load, "the probe heard the load path"
    heavy = {"openai", "anthropic", "pandas", "numpy", "jsonschema", "nbformat", "ipywidgets"}
    heavy |= {"markdown_it"}  # the safe renderer parses Markdown on first render
    heavy |= {"mcp", "mcp_types", "anyio", "pydantic", "starlette", "uvicorn"}  # MCP servers
    assert not heavy & set(modules["warmed"])
    agent = {
        "copilot_nb.agent.loop.rounds",
        "copilot_nb.agent.session",
        "copilot_nb.tools",
        "httpx",
    }
    assert not agent & on_load, "the agent loads in the warm-up thread, off the load path"
    later = {"copilot_nb.agent.conversations.recorder", "copilot_nb.models.cassettes.cassette"}
    later |= {"copilot_nb.workspace.workspace"}
    assert not later & on_load, "with nothing saved yet, the writer waits for the first turn"
    assert agent <= set(modules["warmed"]), "the warm-up thread loads the agent"


def test_a_turn_without_mcp_servers_does_not_import_the_sdk(tmp_path):
    """The `mcp` extra loads when a configured server starts, not for every turn."""
    import os
    import subprocess
    import sys

    probe = (
        "import asyncio, sys\n"
        "from copilot_nb.agent.session import CopilotSession\n"
        "session = CopilotSession()\n"
        "session.model_spec = 'offline'\n"
        "async def main():\n"
        "    return [e async for e in session.turn('hello', approver=None)]\n"
        "asyncio.run(main())\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('mcp', 'mcp_types')))\n"
    )
    env = {**os.environ, "COPILOT_NB_CONFIG_DIR": str(tmp_path)}
    shown = subprocess.check_output([sys.executable, "-c", probe], text=True, cwd=tmp_path, env=env)
    assert shown.strip() == "[]"
