"""`%%copilot?` is the magic's help: its usage and options, never a file of the package."""

from __future__ import annotations

import re

import pytest


@pytest.fixture
def shell():
    """The shared test shell with copilot_nb loaded, unloaded again after."""
    from IPython.testing.globalipapp import get_ipython

    from copilot_nb.jupyter.extension import load_ipython_extension, unload_ipython_extension

    ip = get_ipython()
    load_ipython_extension(ip)
    yield ip
    unload_ipython_extension(ip)


@pytest.mark.parametrize("asked", ["%%copilot", "%copilot"])
def test_the_magics_help_shows_its_usage_and_options_and_no_source_file(shell, asked):
    shown = shell.object_inspect_mime(asked)

    for text in (shown["text/plain"], shown["text/html"]):
        assert "%copilot [--model MODEL] [--mode {ask,plan,agent}]" in text
        assert "--skill NAME" in text and "--yes, -y" in text
        assert "File:" not in text and "File</h1>" not in text
        assert not re.search(r"[\w/]+\.py\b", text), re.search(r"[\w/]+\.py\b", text)


def test_other_magics_keep_ipythons_help(shell):
    shown = shell.object_inspect_mime("%%timeit")["text/plain"]
    assert "File:" in shown and "Time execution" in shown


def test_unloading_takes_the_help_back(shell):
    from copilot_nb.jupyter.extension import unload_ipython_extension

    unload_ipython_extension(shell)
    assert "File:" in shell.object_inspect_mime("%%copilot")["text/plain"]
