"""`%copilot` subcommands come from one table: each has its own parser, `--help` that runs
nothing, unknown flags that are errors, and tab completion of what the table holds."""

from __future__ import annotations

import inspect
import re

import pytest
from IPython.core.error import UsageError

from copilot_nb.jupyter.cell_transform import COPILOT_LINE_CALL, transform_copilot_cell
from copilot_nb.jupyter.commands.table import TABLE, awaited, completions, parse_line
from copilot_nb.testing import call, reply

NAMES = [command.name for command in TABLE]


@pytest.mark.parametrize("name", NAMES)
def test_every_commands_help_shows_its_usage_and_runs_nothing(name: str, capsys) -> None:
    assert parse_line(f"{name} --help") is None
    assert parse_line(f"{name} -h") is None
    shown = capsys.readouterr().out
    assert f"usage: %copilot {name}" in shown


@pytest.mark.parametrize("name", NAMES)
def test_an_unknown_flag_is_a_usage_error_naming_the_command(name: str) -> None:
    with pytest.raises(UsageError, match=rf"^%copilot {name}: .*--help explains"):
        parse_line(f"{name} x y --bogus")


def test_flags_are_never_abbreviated() -> None:
    with pytest.raises(UsageError, match="unrecognized arguments: --for"):
        parse_line("undo --for")
    assert parse_line("undo --force").args.force is True  # type: ignore[union-attr]


def test_the_unknown_command_message_lists_every_command_of_the_table() -> None:
    with pytest.raises(UsageError) as caught:
        parse_line("frobnicate")
    listed = str(caught.value).partition("use one of ")[2].partition(" (")[0]
    assert listed.split(", ") == NAMES
    assert {"mcp", "serve", "context"} <= set(listed.split(", "))


def test_the_overview_lists_every_command_with_its_line(capsys) -> None:
    assert parse_line("--help") is None
    shown = capsys.readouterr().out
    for command in TABLE:
        assert f"  {command.name}" in shown and command.help in shown


def test_a_bare_line_is_the_first_command_of_the_table() -> None:
    parsed = parse_line("")
    assert parsed is not None and parsed.command is TABLE[0]


def test_completion_offers_the_tables_names_then_each_commands_words() -> None:
    assert completions("%copilot ") == NAMES
    assert completions("%copilot mo") == ["model", "models"]
    assert completions("%copilot mcp ")[:6] == [
        "list",
        "add",
        "remove",
        "restart",
        "trust",
        "forget",
    ]
    assert completions("%copilot mcp add srv --u") == ["--user"]
    assert completions("%copilot serve ")[0] == "stop"
    assert completions("%copilot undo --") == ["--help", "--force"]
    assert completions("%copilot nosuch ") == []


def test_awaited_commands_are_the_coroutine_ones_and_a_cell_of_one_is_awaited() -> None:
    assert [c.name for c in TABLE if c.awaited] == [
        "fix",
        "context",
        "state",
        "rebuild",
        "mcp",
        "serve",
    ]
    assert awaited("mcp") and not awaited("undo") and not awaited("nosuch")
    assert transform_copilot_cell(["%copilot serve --help\n"]) == [
        f"await {COPILOT_LINE_CALL}('serve --help')\n"
    ]
    assert transform_copilot_cell(["%copilot undo\n"]) == ["%copilot undo\n"]
    assert transform_copilot_cell(["%copilot fix #4\n"]) == [
        f"await {COPILOT_LINE_CALL}('fix #4')\n"
    ], "a fix shows its turn in its cell, as a %%copilot cell does"


def test_mcp_add_takes_a_command_after_the_double_dash_with_its_own_flags() -> None:
    parsed = parse_line("mcp add srv --user -- python -m server --flag")
    assert parsed is not None
    args = parsed.args
    assert (args.name, args.user) == ("srv", True)
    assert args.target == ["python", "-m", "server", "--flag"]


def test_a_sub_action_is_chosen_by_the_tables_parser_and_runs_its_own_handler() -> None:
    """`mcp add`, `tools remove`, `serve stop`, `cassette off`: the parser names what runs, so
    no handler reads its action back from the words."""
    from copilot_nb.jupyter.commands import cassette, dispatch, mcp, serve

    for line, handler in (
        ("mcp", mcp.list_servers),
        ("mcp list", mcp.list_servers),
        ("mcp add srv -- python -m server", mcp.add),
        ("mcp remove srv --user", mcp.remove),
        ("mcp restart srv", mcp.restart),
        ("mcp trust srv", mcp.trust_server),
        ("mcp forget srv", mcp.forget),
        ("tools", dispatch.list_tools),
        ("tools add greet", dispatch.add_tools),
        ("tools remove greet", dispatch.remove_tools),
        ("serve", serve.start),
        ("serve --port 8123 --allow-execution", serve.start),
        ("serve stop", serve.stop),
        ("cassette", cassette.status),
        ("cassette off", cassette.off),
        ("record", cassette.record),
        ("record off", cassette.off),
        ("replay tape.copilot.jsonl --auto", cassette.replay),
        ("replay off", cassette.off),
    ):
        parsed = parse_line(line)
        assert parsed is not None and parsed.handler is handler, line


@pytest.mark.parametrize(
    "line", [f"{c.name} {a.name}" for c in TABLE for a in c.actions], ids=lambda line: line
)
def test_every_sub_actions_help_shows_its_usage_and_runs_nothing(line: str, capsys) -> None:
    assert parse_line(f"{line} --help") is None
    assert f"usage: %copilot {line}" in capsys.readouterr().out


def test_a_commands_sub_actions_all_wait_on_the_kernels_loop_or_none_does() -> None:
    """A cell of just `%copilot mcp add ...` is awaited as one of `%copilot mcp` is."""
    for command in TABLE:
        waits = {a.name: inspect.iscoroutinefunction(a.run) for a in command.actions}
        assert set(waits.values()) <= {command.awaited}, (command.name, waits)


# --- in a real kernel ---------------------------------------------------------------------


def pager_text(run) -> str:
    return "".join(p["data"]["text/plain"] for p in run.reply["content"].get("payload", []))


@pytest.mark.kernel
def test_in_a_kernel_help_pages_and_changes_nothing_and_flags_are_errors(
    serve, kernel_for, tmp_path
):
    (tmp_path / "hello.py").write_text('print("hello, world")\n')
    server = serve(
        [
            reply("", call("edit_file", path="hello.py", old_str="world", new_str="notebook")),
            reply("Done."),
        ]
    )
    kernel = kernel_for(server)
    for name in NAMES:
        run = kernel.execute(f"%copilot {name} --help")
        assert run.status == "ok", (name, run.reply["content"])
        assert f"usage: %copilot {name}" in pager_text(run), name

    model = kernel.execute("%copilot model --help")
    assert "show or set the default model" in pager_text(model)
    assert kernel.execute("%copilot model").stdout == "copilot: model openai:scripted\n"

    assert kernel.execute("%%copilot --yes\nchange world to notebook").status == "ok"
    assert (tmp_path / "hello.py").read_text() == 'print("hello, notebook")\n'
    assert kernel.execute("%copilot undo --help").status == "ok"
    assert (tmp_path / "hello.py").read_text() == 'print("hello, notebook")\n'

    wrong = kernel.execute("%copilot undo --now")
    assert wrong.reply["content"]["ename"] == "UsageError"
    assert "unrecognized arguments: --now" in wrong.reply["content"]["evalue"]
    assert (tmp_path / "hello.py").read_text() == 'print("hello, notebook")\n'
    assert kernel.execute("%copilot undo").status == "ok"
    assert (tmp_path / "hello.py").read_text() == 'print("hello, world")\n'

    unknown = kernel.execute("%copilot frobnicate")
    assert unknown.reply["content"]["ename"] == "UsageError"
    assert all(name in unknown.reply["content"]["evalue"] for name in NAMES)


@pytest.mark.kernel
def test_in_a_kernel_the_tab_completes_commands_and_their_options(serve, kernel_for):
    kernel = kernel_for(serve([]))
    for code, expected in (
        ("%copilot ", set(NAMES)),
        ("%copilot mo", {"model", "models"}),
        ("%copilot mcp re", {"remove", "restart"}),
        ("%copilot serve --p", {"--port"}),
    ):
        msg_id = kernel.client.complete(code, len(code))
        answer = kernel.client.get_shell_msg(timeout=30)
        while answer["parent_header"].get("msg_id") != msg_id:
            answer = kernel.client.get_shell_msg(timeout=30)
        assert set(answer["content"]["matches"]) >= expected, code


# --- the reports' tables --------------------------------------------------------------------


def alignments(markup: str) -> list[list[str]]:
    """Each row's cells as their text-align (JupyterLab right-aligns a cell that says none)."""
    rows = re.findall(r"<tr>(.*?)</tr>", markup)
    return [re.findall(r"<t[dh](?: style=\"text-align:(\w+)\")?>", row) for row in rows]


def test_history_and_tools_tables_left_align_text_and_right_align_numbers(tmp_path) -> None:
    from copilot_nb import Agent
    from copilot_nb.jupyter.commands.dispatch import render_tools
    from copilot_nb.jupyter.reports import render_history
    from copilot_nb.messages import UserMessage
    from copilot_nb.testing import ScriptedModel
    from copilot_nb.tools import tool

    def greet(name: str) -> str:
        """Say hello."""
        return f"hello {name}"

    assert alignments(render_tools([tool(greet)]).html) == [["left", "left", "left"]] * 2
    agent = Agent(model=ScriptedModel(name="m"), workspace=tmp_path)
    agent.messages.append(UserMessage(content="hi"))
    rows = alignments(render_history(agent).html)
    assert len(rows) > 1 and all(row == ["right", "left", "right", "left"] for row in rows)
