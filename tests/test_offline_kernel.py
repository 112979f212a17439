"""With no provider, in a real kernel: the built-in offline model acts on what the user named,
reports a refusal as one, and otherwise says it is a demo and how to set a real provider."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import nbformat
import pytest

from copilot_nb.agent.model_spec import NO_PROVIDER
from copilot_nb.offline import DEMO_REPLY
from tests.kernel_session import Execution, KernelSession

pytestmark = pytest.mark.kernel

NO_PROVIDER_ENV = {"COPILOT_NB_MODEL": "", "OPENAI_API_KEY": ""}
README_EXAMPLE = 'Read hello.py and change the greeting to "hello, notebook".'


def shown(run: Execution) -> str:
    return "\n".join(run.final_displays().values())


@pytest.fixture
def offline_kernel(tmp_path: Path) -> Iterator[Callable[..., KernelSession]]:
    """A kernel with no provider whose open notebook is first.ipynb (a cell with a quoted string,
    so an edit of the wrong file would find something to change), beside hello.py."""
    (tmp_path / "hello.py").write_text('print("hello, world")\n')
    cell = nbformat.v4.new_code_cell('print("a notebook greeting")')
    nbformat.write(nbformat.v4.new_notebook(cells=[cell]), tmp_path / "first.ipynb")
    sessions: list[KernelSession] = []

    def start(**env: str) -> KernelSession:
        notebook = str(tmp_path / "first.ipynb")
        kernel = KernelSession(tmp_path, {**NO_PROVIDER_ENV, "JPY_SESSION_NAME": notebook, **env})
        sessions.append(kernel)
        return kernel

    yield start
    for kernel in sessions:
        kernel.close()


def test_load_ext_says_in_one_line_what_to_do_first(offline_kernel):
    loaded = offline_kernel().execute("%load_ext copilot_nb")
    assert loaded.status == "ok"
    assert loaded.stdout == NO_PROVIDER + "\n"

    with_provider = offline_kernel(COPILOT_NB_MODEL="openai:gpt-4o", OPENAI_API_KEY="k")
    assert with_provider.execute("%load_ext copilot_nb").stdout == ""


def test_the_readme_example_edits_the_file_it_names_not_the_open_notebook(offline_kernel, tmp_path):
    kernel = offline_kernel()
    kernel.execute("%load_ext copilot_nb")
    notebook_before = (tmp_path / "first.ipynb").read_text()

    run = kernel.execute(f"%%copilot --yes\n{README_EXAMPLE}")

    assert run.status == "ok", run.reply["content"]
    assert (tmp_path / "hello.py").read_text() == 'print("hello, notebook")\n'
    assert (tmp_path / "first.ipynb").read_text() == notebook_before
    text = shown(run)
    assert "✓ read_file hello.py" in text and "✓ edit_file hello.py" in text
    assert "Done: in hello.py" in text.replace("`", "")
    assert "first.ipynb" not in text


def test_a_refused_edit_is_reported_as_refused(offline_kernel, tmp_path):
    kernel = offline_kernel()
    kernel.execute("%load_ext copilot_nb")

    run = kernel.execute(f"%%copilot --read-only\n{README_EXAMPLE}")

    assert (tmp_path / "hello.py").read_text() == 'print("hello, world")\n'
    text = shown(run)
    assert "was refused, so nothing was changed" in text, text
    assert "Done" not in text


def test_anything_else_is_answered_as_a_demo_with_how_to_set_a_provider(offline_kernel):
    kernel = offline_kernel()
    kernel.execute("%load_ext copilot_nb")

    run = kernel.execute("%%copilot\nwhat does this notebook do?")

    text = shown(run)
    assert "offline demo model, not a real one" in text
    assert "%env OPENAI_API_KEY=sk-..." in text and "%copilot login" in text
    assert "non-empty lines" not in text, "no made-up summary of the open notebook"
    assert "first.ipynb" not in text
    assert DEMO_REPLY.startswith("I am the offline demo model")
