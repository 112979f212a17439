"""Agent Skills in a real kernel: `%copilot skills` lists a project's skill, `%%copilot --skill`
loads it into the request and the cell shows it as one line, a skill the model loads shows the
same way, and `%copilot context` shows the skills block; a skill's script read and pasted into
run_code or into a cell asks, even under `--yes`."""

from __future__ import annotations

import pytest

from copilot_nb.testing import call, reply
from tests.kernel_session import Execution
from tests.skill_samples import write_skill

pytestmark = pytest.mark.kernel

TIDY = "Tidy a pandas DataFrame into one row per observation."
BODY = "Melt wide columns with df.melt; never drop rows."


def shown(execution: Execution) -> str:
    return "\n".join([execution.stdout, *execution.final_displays().values()])


def test_skills_listed_forced_loaded_and_in_the_context(serve, kernel_for, tmp_path):
    write_skill(tmp_path / ".agents" / "skills", "tidy-data", TIDY, BODY)
    write_skill(tmp_path / ".github" / "skills", "Broken", "Its name is not its folder's.")
    server = serve(
        [
            reply("Tidied with the skill."),
            reply("", call("load_skill", name="tidy-data")),
            reply("Loaded it myself."),
        ]
    )
    home = tmp_path / "home"  # the developer's own skills stay out
    home.mkdir()
    kernel = kernel_for(server, HOME=str(home), JUPYTER_CONFIG_DIR=str(home / ".jupyter"))

    listing = kernel.execute("%copilot skills")
    assert listing.status == "ok", listing.reply["content"]
    text = shown(listing)
    assert (
        "tidy-data" in text
        and "project" in text
        and f"yes; .agents/skills/tidy-data; {TIDY}" in text
    )
    assert "Broken" in text and "no: name 'Broken' must be lowercase" in text

    forced = kernel.execute("%%copilot --skill tidy-data\ntidy the sales table")
    assert forced.status == "ok", forced.reply["content"]
    assert "load_skill tidy-data — skill tidy-data loaded" in shown(forced)
    assert "Tidied with the skill." in shown(forced)
    request = server.requests[0].messages[-1]["content"]
    assert "tidy the sales table\n\nThe user chose this skill for the request:" in request
    assert BODY in request

    chosen = kernel.execute("%%copilot\nclean the data")
    assert chosen.status == "ok", chosen.reply["content"]
    assert "load_skill tidy-data — skill tidy-data loaded" in shown(chosen)

    missing = kernel.execute("%%copilot --skill nope\nhello")
    assert "there is no skill 'nope'; the skills are: tidy-data" in shown(missing) + str(
        missing.of_type("error")
    )
    assert len(server.requests) == 3

    context = kernel.execute("%copilot context")
    assert context.status == "ok", context.reply["content"]
    (plain,) = context.final_displays().values()
    assert "--- Skills block, at the end of the system prompt" in plain
    assert f"- tidy-data: {TIDY}" in plain


RAN = "skill-script-ran"
SCRIPT = (
    "from pathlib import Path\n"
    "\n"
    "def mark_the_folder(folder):\n"
    f"    Path(folder, {RAN!r}).write_text('a skill script ran without asking')\n"
    "\n"
    "mark_the_folder('.')\n"
)


def test_a_skill_script_read_or_pasted_into_a_cell_asks_even_under_yes(serve, kernel_for, tmp_path):
    """A hijacked model reads a skill's script and runs its text, then pastes it into a cell
    and runs the cell: under `--yes`, headless, both are denied as asking, saying why."""
    import nbformat

    write_skill(
        tmp_path / ".agents" / "skills", "tidy-data", TIDY, BODY, {"scripts/mark.py": SCRIPT}
    )
    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell("x = 1")]
    (tmp_path / "work.ipynb").write_text(nbformat.writes(notebook))
    server = serve(
        [
            reply(
                "", call("read_file", id="read", path=".agents/skills/tidy-data/scripts/mark.py")
            ),
            reply("", call("run_code", id="code", code=SCRIPT)),
            reply(
                "",
                call(
                    "insert_cell",
                    id="insert",
                    after_cell_id="#1",
                    cell_type="code",
                    source=SCRIPT,
                ),
            ),
            reply("", call("run_cell", id="cell", cell_id="#2")),
            reply("Done."),
        ]
    )
    home = tmp_path / "home"
    home.mkdir()
    kernel = kernel_for(
        server,
        HOME=str(home),
        JUPYTER_CONFIG_DIR=str(home / ".jupyter"),
        JPY_SESSION_NAME=str(tmp_path / "work.ipynb"),
    )

    run = kernel.execute("%%copilot --yes\ntidy the data")

    assert run.status == "ok", run.reply["content"]
    server.assert_complete()
    results = server.requests[-1].tool_results
    assert "mark_the_folder" in results["read"]
    assert "inserted" in results["insert"].lower(), results["insert"]
    for call_id in ("code", "cell"):
        assert "denied" in results[call_id] and "skill" in results[call_id], results[call_id]
        assert ".agents/skills/tidy-data/scripts/mark.py" in results[call_id], results[call_id]
    why = "denied (it runs text from .agents/skills/tidy-data/scripts/mark.py, a skill's file)"
    assert f"run_code from pathlib import Path — {why}" in shown(run)
    assert f"run_cell #2 — {why}" in shown(run)
    assert not (tmp_path / RAN).exists(), "the skill's script ran unasked"


def test_a_notebook_in_a_subfolder_of_a_clone_lists_and_loads_the_clones_skill(serve, tmp_path):
    """As README says: the example skill copied into the clone's `.agents/skills`, the notebook
    opened in `notebooks/`, where Jupyter starts its kernel."""
    from tests.kernel_session import KernelSession, scripted_env

    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "notebooks").mkdir()
    write_skill(repo / ".agents" / "skills", "tidy-data", TIDY, BODY)
    server = serve([reply("Tidied with the skill.")])
    home = tmp_path / "home"
    home.mkdir()
    env = scripted_env(
        server,
        HOME=str(home),
        JUPYTER_CONFIG_DIR=str(home / ".jupyter"),
        COPILOT_NB_CONFIG_DIR=str(home / ".config"),
        JPY_SESSION_NAME=str(repo / "notebooks" / "sales.ipynb"),
    )
    kernel = KernelSession(repo / "notebooks", env)
    try:
        assert kernel.execute("%load_ext copilot_nb").status == "ok"

        listing = kernel.execute("%copilot skills")
        assert listing.status == "ok", listing.reply["content"]
        text = shown(listing)
        assert f"yes; ../.agents/skills/tidy-data; {TIDY}" in text
        assert f"in {repo / 'notebooks'} and {repo} (the git repository's root)" in text

        forced = kernel.execute("%%copilot --skill tidy-data\ntidy the sales table")
        assert forced.status == "ok", forced.reply["content"]
        assert "load_skill tidy-data — skill tidy-data loaded" in shown(forced)
        assert BODY in server.requests[0].messages[-1]["content"]
    finally:
        kernel.close()
