"""Prompt assembly through the scripted server, byte for byte: our system prompt, then the user's
instruction files in their stated order, and the turn's context block before its request."""

from __future__ import annotations

import subprocess

import nbformat

from copilot_nb.agent.prompt.instructions import MAX_FILE_CHARS
from copilot_nb.agent.prompt.system import notebook_prompt
from copilot_nb.testing import reply
from copilot_nb.tools.context_block import BUDGET
from tests.helpers import events_of, session_in

HEAD = (
    "The user's instruction files follow, most general first; where they disagree, the later "
    "one wins. Follow them unless the request says otherwise."
)


def sent(server, index: int = 0) -> list[dict]:
    return server.requests[index].messages


async def test_instruction_files_follow_the_system_prompt_in_their_order(
    serve, root, monkeypatch, tmp_path
):
    config = tmp_path / "config"
    config.mkdir()
    monkeypatch.setenv("COPILOT_NB_CONFIG_DIR", str(config))
    (config / "instructions.md").write_text("Answer in British English.\n")
    (root / "AGENTS.md").write_text("Run `make test` before you finish.\n")
    (root / ".github").mkdir()
    (root / ".github" / "copilot-instructions.md").write_text("Use type hints.\n")
    (root / "CLAUDE.md").write_text("Keep functions short.\n")
    for folder, text in (("analysis", "Plots use seaborn.\n"), ("other", "Not for this one.\n")):
        (root / folder).mkdir()
        (root / folder / "AGENTS.md").write_text(text)
    server = serve([reply("ok")])
    session = session_in(root, server, monkeypatch, __session__="analysis/study.ipynb")
    await events_of(session, "hi")

    expected = (
        "\n".join(
            [
                notebook_prompt(str(root)).rstrip(),
                "",
                HEAD,
                "",
                f"## {config / 'instructions.md'}",
                "",
                "Answer in British English.",
                "",
                "## AGENTS.md",
                "",
                "Run `make test` before you finish.",
                "",
                "## .github/copilot-instructions.md",
                "",
                "Use type hints.",
                "",
                "## CLAUDE.md",
                "",
                "Keep functions short.",
                "",
                "## analysis/AGENTS.md",
                "",
                "Plots use seaborn.",
            ]
        )
        + "\n"
    )
    assert sent(server)[0] == {"role": "system", "content": expected}


async def test_an_instruction_file_is_cut_at_its_limit_and_read_again_each_turn(
    serve, root, monkeypatch
):
    (root / "AGENTS.md").write_text("x" * (MAX_FILE_CHARS + 500))
    server = serve([reply("one"), reply("two")])
    session = session_in(root, server, monkeypatch)
    await events_of(session, "first")
    system = sent(server, 0)[0]["content"]
    assert "x" * MAX_FILE_CHARS + "\n… [500 more characters]" in system
    (root / "AGENTS.md").write_text("Be brief.\n")
    await events_of(session, "second")
    assert sent(server, 1)[0]["content"].endswith("## AGENTS.md\n\nBe brief.\n")


def notebook_with_a_failure(path):
    nb = nbformat.v4.new_notebook()
    ok = nbformat.v4.new_code_cell("import pandas as pd\ndf = pd.read_csv('sales.csv')")
    bad = nbformat.v4.new_code_cell("df.plot(x='month')")
    bad.outputs = [
        nbformat.v4.new_output("error", ename="KeyError", evalue="'month'", traceback=[])
    ]
    note = nbformat.v4.new_markdown_cell("# Sales by month")
    ok.id, bad.id, note.id = "load", "plot", "title"
    nb.cells = [note, ok, bad]
    nbformat.write(nb, path)


async def test_the_context_block_goes_before_the_request_fresh_each_turn(serve, root, monkeypatch):
    notebook_with_a_failure(root / "sales.ipynb")
    (root / "sales.csv").write_text("date,total\n")
    (root / "src").mkdir()
    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@e",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@e",
        "HOME": str(root),
    }
    for args in (["init", "-q", "-b", "main"], ["add", "sales.csv"], ["commit", "-qm", "data"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True)  # noqa: ASYNC221 (setup)
    (root / "sales.csv").write_text("date,total\n2026-01,3\n")
    server = serve([reply("one"), reply("two")])
    session = session_in(root, server, monkeypatch, __session__="sales.ipynb", rows=[1, 2, 3])
    await events_of(session, "why did the plot fail?")

    block = "\n".join(
        [
            "<context>",
            "Notebook sales.ipynb (3 cells, file):",
            "#1 markdown id=title | # Sales by month",
            "#2 code id=load | import pandas as pd",
            "#3 code id=plot | df.plot(x='month') FAILED: KeyError: 'month'",
            "Variables: rows: list len 3",
            f"Workspace {root}: sales.csv, sales.ipynb, src/",
            "Git: branch main; changed: sales.csv, sales.ipynb",
            "</context>",
        ]
    )
    assert sent(server, 0)[-1] == {"role": "user", "content": f"{block}\n\nwhy did the plot fail?"}

    session.shell.user_ns["total"] = 42
    await events_of(session, "and now?")
    history, latest = sent(server, 1)[1], sent(server, 1)[-1]
    assert history == sent(server, 0)[-1], "sent again as first sent: a provider cached it"
    assert "Variables: rows: list len 3, total: int" in latest["content"]


async def test_the_block_keeps_to_its_budget_with_500_cells_and_1000_variables(
    serve, root, monkeypatch
):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"step_{i} = {i}") for i in range(500)]
    nbformat.write(nb, root / "big.ipynb")
    variables = {f"v{i:04d}": i for i in range(1000)}
    server = serve([reply("ok")])
    session = session_in(root, server, monkeypatch, __session__="big.ipynb", **variables)
    await events_of(session, "hi")
    block = sent(server)[-1]["content"].split("\n\nhi")[0]
    assert len(block) <= BUDGET + 100
    assert "more cells; list_cells shows all)" in block
    assert "more; list_variables shows all)" in block


async def test_references_attach_a_file_a_cell_and_a_variable(serve, root, monkeypatch):
    from copilot_nb.tools.kernel_toolsets import kernel_toolsets

    notebook_with_a_failure(root / "sales.ipynb")
    (root / "src").mkdir()
    (root / "src" / "clean.py").write_text("def clean(df):\n    return df.dropna()\n")
    server = serve([reply("seen")])
    session = session_in(root, server, monkeypatch, __session__="sales.ipynb", rows=[1, 2, 3])
    session.toolset_factories.append(
        lambda ws: [t for ts in kernel_toolsets(session.shell, ws) for t in ts]
    )
    asked = "Use @src/clean.py on the data of @cell:#2 and fix @cell:plot; see @var:rows. `@not`"
    await events_of(session, asked)
    content = sent(server)[-1]["content"].split("</context>\n\n", 1)[-1]
    request, attachments = content.split("\n\n<attachments>\n")
    assert request == asked
    assert attachments.count("<attachment ref=") == 4
    assert '<attachment ref="@src/clean.py">' in attachments and "dropna" in attachments
    assert '<attachment ref="@cell:#2">' in attachments and "pd.read_csv" in attachments
    assert '<attachment ref="@cell:plot">' in attachments and "KeyError" in attachments
    assert '<attachment ref="@var:rows">' in attachments and "rows: list" in attachments


async def test_a_reference_that_does_not_resolve_fails_before_anything_is_sent(
    serve, root, monkeypatch
):
    from copilot_nb.events import Failed

    (root / ".env").write_text("API_KEY=sk-secret\n")
    server = serve([reply("never")])
    session = session_in(root, server, monkeypatch)
    missing = await events_of(session, "read @docs/missing.md please")
    secret = await events_of(session, "what is in @.env?")
    prose = await events_of(session, "add @dataclass to Point, mail me at me@example.com")
    assert (
        isinstance(missing[-1], Failed)
        and "@docs/missing.md cannot be attached" in missing[-1].error
    )
    assert isinstance(secret[-1], Failed) and "@.env may hold secrets" in secret[-1].error
    assert len(server.requests) == 1, "only the request without references was sent"
    assert sent(server)[-1]["content"].endswith(
        "add @dataclass to Point, mail me at me@example.com"
    )
    assert not isinstance(prose[-1], Failed)
